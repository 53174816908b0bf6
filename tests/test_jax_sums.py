"""Sums of products over a counted loop's iterations, on the JAX backend.

A counted loop that accumulates products of values of each iteration (the weights'
gradients in a backward loop: ``dW = dW + x_i.T @ d_i``) stacks their operands and adds one
product of the stacks after the loop (`myia.compile.jax_sums`). The results are the NumPy
backend's, the gradients finite differences'.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import rnn_gradient_as_numpy

from benchmarks.rnn import rnn_loss
from myia import myia
from myia.testing import check_grad

jax = pytest.importorskip("jax")

import myia.compile.jax_sums as sums  # noqa: E402


@pytest.fixture(autouse=True)
def as_on_a_gpu(monkeypatch):
    """The sums are made after the loop as on a GPU (on XLA's CPU, not by default)."""
    monkeypatch.setattr(sums, "ON_CPU", True)


@pytest.fixture
def found(monkeypatch):
    """The kinds of the sums found in each counted loop traced."""
    seen: list = []
    find = sums.find

    def spy(*args):
        out = find(*args)
        seen.append(sorted(s.kind for s in out))
        return out

    monkeypatch.setattr(sums, "find", spy)
    return seen


def products(a, b):
    acc = np.zeros((a.shape[1], b.shape[2]))
    for i in range(a.shape[0]):
        acc = acc + a[i] @ b[i]
    return acc


def transposed_products(a, b):
    acc = np.zeros((a.shape[2], b.shape[2]))
    for i in range(a.shape[0]):
        acc = acc + a[i].T @ b[i]
    return acc


def outers(u, v):
    acc = np.zeros((u.shape[1], v.shape[1]))
    for i in range(u.shape[0]):
        acc = acc + np.outer(u[i], v[i])
    return acc


def invariant(w, v):
    acc = np.zeros(w.shape[0])
    for i in range(v.shape[0]):
        acc = acc + w @ v[i]
    return acc


def tensor_loss(x, W, b):
    """A loop over a batch of 3-D inputs: the weights' gradient contracts two axes a step."""
    h = np.zeros((x.shape[1], x.shape[2], W.shape[1]))
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ W + h * 0.5 + b)
    return np.sum(h * h)


def _rng_arrays(*shapes):
    rng = np.random.default_rng(0)
    return [rng.normal(size=s) for s in shapes]


@pytest.mark.parametrize(
    ("fn", "shapes"),
    [
        (products, [(7, 3, 4), (7, 4, 5)]),
        (transposed_products, [(7, 4, 3), (7, 4, 5)]),
        (outers, [(6, 3), (6, 4)]),
    ],
)
def test_sums_of_products_are_computed_after_the_loop(found, fn, shapes):
    args = _rng_arrays(*shapes)
    got = myia(fn, backend="jax")(*args)
    np.testing.assert_allclose(got, myia(fn, backend="numpy")(*args), rtol=1e-12, atol=1e-12)
    assert ["dot"] in found


def test_a_loop_invariant_operand_is_not_stacked(found):
    w, v = _rng_arrays((3, 4), (6, 4))
    got = myia(invariant, backend="jax")(w, v)
    np.testing.assert_allclose(got, myia(invariant, backend="numpy")(w, v), rtol=1e-12)
    assert found and all(kinds == [] for kinds in found)


def test_rnn_gradient_sums_its_weights_gradients_after_the_backward_loop(found):
    rnn_gradient_as_numpy()
    assert ["dot", "dot", "sum"] in found  # dWx, dWh and db


def test_on_the_cpu_the_products_stay_in_the_loop(found, monkeypatch):
    # `sums.ON_CPU`: on XLA's CPU, rnn's gradient ran faster with its products in the loop.
    monkeypatch.setattr(sums, "ON_CPU", False)
    rnn_gradient_as_numpy()
    assert found == []  # no loop's sums looked for


def test_rnn_gradient_checks():
    x, Wx, Wh = _rng_arrays((6, 3, 2), (2, 4), (4, 4))
    check_grad(rnn_loss, x, Wx, Wh, np.zeros(4), wrt=("Wx", "Wh", "b"), backend="jax")


def test_gradient_contracting_two_axes_a_step_checks(found):
    x, W = _rng_arrays((5, 2, 3, 4), (4, 3))
    b = np.linspace(-0.2, 0.2, 3)
    check_grad(tensor_loss, x, W, b, wrt=("W", "b"), backend="jax")
    assert any("dot" in kinds for kinds in found)


def test_second_order_rnn_gradient_checks():
    x, Wx, Wh = _rng_arrays((4, 2, 2), (2, 3), (3, 3))
    check_grad(rnn_loss, x, Wx, Wh, np.zeros(3), wrt=("Wh",), order=2, backend="jax")

"""A loop's carried value stacked before and after each iteration, on the JAX backend.

The forward loop of ``h = f(h)`` pushes both the ``h`` an iteration starts from and the one
it ends with: the first buffer's rows are the second's one row down, so the loop writes only
the second, and popping reads the first from it (`myia.compile.jax_lags`). Every gradient
here is the NumPy backend's, to rounding, and finite differences'; loops where the rows are
not one row apart (the value changed again, pushed under a branch, two values swapped) keep
both buffers.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import rnn_gradient_as_numpy

from myia import grad
from myia.compile import jax_lags
from myia.testing import check_grad

jax = pytest.importorskip("jax")


@pytest.fixture
def linked(monkeypatch):
    """For each loop traced to its end: how many buffers it left unwritten."""
    seen: list = []
    lagging = jax_lags.lagging

    def spy(before, after, links, sources):
        seen.append(len(links))
        return lagging(before, after, links, sources)

    monkeypatch.setattr(jax_lags, "lagging", spy)
    return seen


def two_states(x, W, U):
    """Two carried values (``h`` and ``c``), each read before and after the iteration."""
    h = np.zeros((x.shape[1], U.shape[0]))
    c = np.full((x.shape[1], U.shape[0]), 0.1)
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ W + h @ U + c)
        c = np.tanh(c * h)
    return np.sum(h * h) + np.sum(c)


def swapped(x, n):
    """Two values swapped each iteration: each pushed row is the other's previous one."""
    a, b = x, x * 0.5
    for _ in range(n):
        a, b = b, np.tanh(a * b + 0.1)
    return np.sum(a * b)


def changed_again(x, n):
    """The value pushed after the iteration is not the one carried on."""
    for _ in range(n):
        y = np.tanh(x)
        x = y * y + 0.5 * x
    return np.sum(x)


def until(x, w):
    """A loop whose trip count depends on values (a ``while_loop``)."""
    while np.sum(x * x) < 50.0:
        x = np.tanh(x * w) * 3.0 + x
    return np.sum(np.sin(x))


def branching(x, n):
    """The push under a branch taken in some iterations only."""
    for i in range(n):
        if i % 2 == 0:
            x = np.tanh(x * 1.5)
        else:
            x = np.sin(x) + x
    return np.sum(x)


def shifted_reads(x, W):
    """Rows read at the counter, one ahead and one behind (``x[-1]`` first: the last row)."""
    h = np.zeros((x.shape[1], W.shape[1]))
    for t in range(x.shape[0] - 1):
        h = np.tanh(x[t] @ W + x[t + 1] @ W * 0.5 + x[t - 1] * h)
    return np.sum(h * h)


def strided(x, W):
    """Rows read every other step: the stack grows by one as the counter by two."""
    h = np.zeros((x.shape[1], W.shape[1]))
    for t in range(1, x.shape[0], 2):
        h = np.tanh(x[t] @ W + h)
    return np.sum(h * h)


def from_k(x, W, k):
    """A counter starting where an argument says."""
    h = np.zeros((x.shape[1], W.shape[1]))
    for t in range(k, x.shape[0]):
        h = np.tanh(x[t] @ W + h)
    return np.sum(h * h)


def computed_in_the_body(x, W):
    """Rows read at the counter from an array the body computes: pushed, not read from it."""
    h = np.zeros((x.shape[1], W.shape[1]))
    for t in range(x.shape[0]):
        y = np.sin(x) * 2.0
        h = np.tanh(y[t] @ W + h)
    return np.sum(h * h)


def _same_as_numpy(fn, args, wrt):
    got = grad(fn, *wrt, backend="jax")(*args)
    want = grad(fn, *wrt, backend="numpy")(*args)
    for g, w in zip(got if len(wrt) > 1 else [got], want if len(wrt) > 1 else [want]):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-12)


def _states_buffers(g, args, shape):
    """The most buffers of `shape` (stacks' rows) that one loop of XLA's program carries."""
    text = g.specialization(*args).executable.compiled_text(args)
    loops = [line for line in text.splitlines() if re.search(r"\bwhile\(", line)]
    return max(line.split("while(")[0].count(shape) for line in loops)


def test_rnn_forward_loop_writes_one_buffer_of_its_states(linked):
    g, args = rnn_gradient_as_numpy()
    assert 2 in linked  # the states before each step, and the inputs' rows
    # Before: the loops carried the states before and after each step, two buffers, and a
    # buffer of the inputs' rows x[t].
    assert _states_buffers(g, args, "f64[64,4,5]") == 1
    assert _states_buffers(g, args, "f64[64,4,3]") == 0


@pytest.mark.parametrize("fn", [shifted_reads, strided, computed_in_the_body])
def test_rows_read_at_the_counter(fn):
    rng = np.random.default_rng(4)
    x, W = rng.normal(size=(7, 2, 3)), rng.normal(size=(3, 3))
    _same_as_numpy(fn, (x, W), ("x", "W"))
    check_grad(fn, x, W, backend="jax")
    assert grad(fn, "x", "W", backend="jax").specialization(x, W).executable.jitted


@pytest.mark.parametrize("k", [0, 2, 6])
def test_rows_from_a_counter_starting_at_an_argument(k):
    rng = np.random.default_rng(5)
    x, W = rng.normal(size=(6, 2, 3)), rng.normal(size=(3, 3))
    _same_as_numpy(from_k, (x, W, k), ("x", "W"))
    check_grad(from_k, x, W, k, wrt=("x", "W"), backend="jax")


def test_two_carried_values_each_one_buffer(linked):
    rng = np.random.default_rng(2)
    x, W, U = rng.normal(size=(6, 2, 3)), rng.normal(size=(3, 4)), rng.normal(size=(4, 4))
    _same_as_numpy(two_states, (x, W, U), ("W", "U"))
    assert max(linked) == 3  # h and c before each step, and the inputs' rows
    check_grad(two_states, x, W, U, wrt=("W", "U"), backend="jax")


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_swapped_values(n):
    x = np.linspace(-0.5, 0.7, 3)
    _same_as_numpy(swapped, (x, n), ("x",))
    check_grad(swapped, x, n, wrt="x", backend="jax")


@pytest.mark.parametrize("n", [0, 1, 4])
def test_a_value_changed_after_its_push(n):
    x = np.linspace(-0.5, 0.7, 3)
    _same_as_numpy(changed_again, (x, n), ("x",))
    check_grad(changed_again, x, n, wrt="x", backend="jax")


def test_a_loop_of_unknown_trip_count():
    for w in (0.5, 1.5):
        x = np.array([0.3, -0.2, 0.5])
        _same_as_numpy(until, (x, w), ("x", "w"))
    check_grad(until, np.array([0.3, -0.2, 0.5]), 1.5, backend="jax")


@pytest.mark.parametrize("n", [1, 4])
def test_pushes_under_a_branch(n):
    x = np.linspace(-0.5, 0.7, 3)
    _same_as_numpy(branching, (x, n), ("x",))
    check_grad(branching, x, n, wrt="x", backend="jax")


def test_second_order_through_the_loop():
    rng = np.random.default_rng(3)
    x, W, U = rng.normal(size=(4, 2, 3)), rng.normal(size=(3, 4)), rng.normal(size=(4, 4))
    check_grad(two_states, x, W, U, wrt="U", order=2, backend="jax")

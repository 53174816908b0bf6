"""A counted loop's product of its inputs' rows, computed over all the rows, on the JAX backend.

``x[t] @ W`` for ``t`` in ``range(1, T)`` is computed before the loop (`jax_hoist`) over
all of ``x`` (a bitcast of it), not over a slice ``x[1:]`` (a copy in XLA): the loop reads
the product's rows at the offset (`myia.compile.jax_rows`'s windows). The results are the
NumPy backend's, to rounding, and the gradients finite differences'.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import rnn_gradient_as_numpy

from myia import grad, myia
from myia.compile import jax_rows, jax_sums
from myia.testing import check_grad

jax = pytest.importorskip("jax")


def next_row(x, W):
    h = np.zeros((x.shape[1], W.shape[1]))
    for t in range(x.shape[0] - 1):
        h = np.tanh(x[t + 1] @ W + h)
    return np.sum(h * h)


def previous_row(x, W):
    h = np.zeros((x.shape[1], W.shape[1]))
    for t in range(1, x.shape[0]):
        h = np.tanh(x[t - 1] @ W + h)
    return np.sum(h * h)


def from_one(x, W):
    h = np.zeros((x.shape[1], W.shape[1]))
    for t in range(1, x.shape[0]):
        h = np.tanh(x[t] @ W + h)
    return np.sum(h * h)


def while_from_one(x, W):
    h = np.zeros((x.shape[1], W.shape[1]))
    t = 1
    while t < x.shape[0]:
        h = np.tanh(x[t] @ W + h)
        t = t + 1
    return np.sum(h * h)


def stepped(x, W):
    h = np.zeros((x.shape[1], W.shape[1]))
    t = 1
    while t < x.shape[0]:
        h = np.tanh(x[t] @ W + h)
        t = t + 2
    return np.sum(h * h)


def two_offsets(x, W):
    """Two windows of one input, at offsets 0 and 1: each product cut to its rows to add."""
    h = np.zeros((x.shape[1], W.shape[1]))
    for t in range(x.shape[0] - 1):
        h = np.tanh(x[t] @ W + x[t + 1] @ W * 0.5 + h)
    return np.sum(h * h)


def two_offsets_summed(x, W):
    """The rows of two windows added before the product."""
    h = np.zeros((x.shape[1], W.shape[1]))
    for t in range(1, x.shape[0]):
        h = np.tanh((x[t] + x[t - 1]) @ W + h)
    return np.sum(h * h)


def with_the_counter(x, W):
    """The product's window times the counter's values, computed at the window's rows."""
    h = np.zeros((x.shape[1], W.shape[1]))
    for t in range(1, x.shape[0]):
        h = np.tanh(x[t] @ W * (0.1 * t) + h)
    return np.sum(h * h)


def accumulated(x, W):
    """A window's product read in the loop, and a sum of products of its rows made after it."""
    h = np.zeros((x.shape[1], W.shape[1]))
    acc = np.zeros((x.shape[2], W.shape[1]))
    for t in range(1, x.shape[0]):
        h = np.tanh(x[t] @ W + h)
        acc = acc + x[t].T @ h
    return np.sum(h * h) + np.sum(acc * acc)


def _args(rows=9):
    rng = np.random.default_rng(7)
    return rng.normal(size=(rows, 2, 3)), rng.normal(size=(3, 4))


def _text(f, args):
    f(*args)
    return f.specialization(*args).executable.compiled_text(args)


def _shapes(text):
    """The shapes of the f64 values XLA's program computes (not those it reinterprets)."""
    return {
        shape
        for shape, op in re.findall(r"= f64\[([\d,]*)\]\S* ([\w-]+)\(", text)
        if op != "bitcast"
    }


def _same_as_numpy(fn, args):
    got = myia(fn, backend="jax")(*args)
    assert got == pytest.approx(myia(fn, backend="numpy")(*args), rel=1e-11)
    got = grad(fn, "x", "W", backend="jax")(*args)
    want = grad(fn, "x", "W", backend="numpy")(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-12)


def test_rnn_gradient_reads_the_inputs_rows_in_place():
    g, args = rnn_gradient_as_numpy()  # x: 9 steps, batch 4, 3 inputs; hidden 5
    text = g.specialization(*args).executable.compiled_text(args)
    shapes = _shapes(text)
    # Before: the forward loop (its first iteration taken out, t = 1 .. 8) multiplied a
    # copy of x[1:], f64[8,4,3] (as f64[32,3]), by Wx before the loop.
    assert not {"8,4,3", "32,3"} & shapes
    assert re.search(r"= f64\[36,5\]\S* \w+\(", text)  # all of x @ Wx: 9 rows of 4


@pytest.mark.parametrize(
    "fn", [next_row, previous_row, from_one, while_from_one, with_the_counter]
)
def test_a_product_over_all_rows_read_at_an_offset(fn):
    args = _args()
    _same_as_numpy(fn, args)
    check_grad(fn, *args, backend="jax")
    for f in (myia(fn, backend="jax"), grad(fn, "x", "W", backend="jax")):
        text = _text(f, args)
        assert re.search(r"= f64\[18,4\]\S* \w+\(", text)  # x @ W over its 9 rows of 2
        # No copy of the 7 or 8 rows the loop reads (the gradient's loop runs from t = 2).
        assert not {"8,2,3", "16,3", "7,2,3", "14,3"} & _shapes(text)


@pytest.mark.parametrize("fn", [stepped, two_offsets, two_offsets_summed])
def test_rows_of_windows_that_meet(fn):
    args = _args()
    _same_as_numpy(fn, args)
    check_grad(fn, *args, backend="jax")


def test_a_window_with_sums_made_after_the_loop(monkeypatch):
    """As on a GPU: the loop stacks `h` for the sum, and reads its product at the offset.

    The sum's other operand is the 8 rows of `x` the loop reads, a slice: a product of all
    of `x` with `h`'s rows and zeros would be NaN where an unread row of `x` is infinite.
    """
    monkeypatch.setattr(jax_sums, "ON_CPU", True)
    args = _args()
    _same_as_numpy(accumulated, args)
    check_grad(accumulated, *args, backend="jax")
    assert "18,4" in _shapes(_text(myia(accumulated, backend="jax"), args))


@pytest.mark.parametrize("fn,on_cpu", [(from_one, False), (accumulated, True)])
def test_a_row_the_loop_does_not_read_is_not_read(monkeypatch, fn, on_cpu):
    """Infinite values in the rows before a window's iterations stay out of the results."""
    monkeypatch.setattr(jax_sums, "ON_CPU", on_cpu)
    x, W = _args()
    x[0] = np.inf
    _same_as_numpy(fn, (x, W))
    assert np.isfinite(myia(fn, backend="jax")(x, W))


def test_few_rows_of_a_long_input_are_a_slice():
    """A window of 20 rows for 3 iterations would compute 17 rows for nothing."""

    def few(x, W):
        h = np.zeros((x.shape[1], W.shape[1]))
        for t in range(1, 4):
            h = np.tanh(x[t] @ W + h)
        return np.sum(h * h)

    args = _args(20)
    _same_as_numpy(few, args)
    shapes = _shapes(_text(myia(few, backend="jax"), args))
    assert "40,4" not in shapes and "6,4" in shapes  # x[1:4] @ W: 3 rows of 2


@pytest.mark.parametrize("dtype", ["int64", "uint8"])
def test_counter_values_at_a_windows_rows(dtype):
    """``x[t + 2] @ W * t`` for ``t`` from 0: the counter at the rows before the iterations is
    negative, which an unsigned counter cannot hold: its products are cut to the iterations'."""
    x, W = _args()
    n = 7

    def body(x, W, t):
        return (jax.lax.dynamic_index_in_dim(x, t + 2, 0, False) @ W) * t.astype(x.dtype)

    with jax.enable_x64(True):
        closed = jax.make_jaxpr(body)(x, W, np.zeros((), dtype))
        leaves = [x, W, None]
        ((rows, offset),) = jax_rows.windows(closed.jaxpr, closed.consts, leaves, {2: (0, 1)}, n)
    assert (offset, rows.shape[0]) == ((2, 9) if dtype == "int64" else (0, n))
    want = np.stack([x[t + 2] @ W * t for t in range(n)])
    np.testing.assert_allclose(np.asarray(rows)[offset : offset + n], want, rtol=1e-13)

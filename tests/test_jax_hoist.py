"""Products of a counted loop's counters computed before the loop, on the JAX backend.

A counted loop's products that depend only on its counters and on what it does not change
(``x[t] @ Wx`` in ``rnn``) are computed for every iteration at once before the loop; the
operands of the sums of a backward loop that depend only on its counters (the rows it pops)
are read after it, not stacked (`myia.compile.jax_hoist`). The results are the NumPy
backend's, the gradients finite differences'.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import rnn_gradient_as_numpy

from myia import myia
from myia.testing import check_grad

jax = pytest.importorskip("jax")

import myia.compile.jax_hoist as hoist  # noqa: E402
import myia.compile.jax_sums as jax_sums  # noqa: E402


@pytest.fixture
def hoisted(monkeypatch):
    """For each counted loop traced: how many values `jax_hoist.split` computes before it."""
    seen: list = []
    split = hoist.split

    def spy(closed, n, known):
        out = split(closed, n, known)
        seen.append(0 if out is None else len(out[0].jaxpr.invars) - len(closed.jaxpr.invars))
        return out

    monkeypatch.setattr(hoist, "split", spy)
    return seen


@pytest.fixture
def read_after(monkeypatch):
    """For each counted loop with sums: how many operands `jax_hoist.outside` reads after it."""
    seen: list = []
    outside = hoist.outside

    def spy(closed, n, known, wanted):
        values, fn, descending = outside(closed, n, known, wanted)
        seen.append(len(values))
        return values, fn, descending

    monkeypatch.setattr(hoist, "outside", spy)
    return seen


def recurrence(x, W, U):
    h = np.zeros((x.shape[1], U.shape[0]))
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ W + h @ U)
    return h


def stepped(x, W):
    acc = np.zeros((x.shape[1], W.shape[1]))
    t = 1
    while t < x.shape[0]:
        acc = np.sin(acc) + x[t] @ W
        t = t + 2
    return acc


def recurrence_loss(x, W, U):
    return np.sum(recurrence(x, W, U) ** 2)


def stepped_loss(x, W):
    return np.sum(stepped(x, W) ** 2)


def past_the_end(x, W):
    acc = np.zeros((x.shape[1], W.shape[1]))
    for t in range(x.shape[0]):
        acc = np.cos(acc) + x[t + 1] @ W
    return acc


def state_only(h, U):
    for _ in range(5):
        h = np.tanh(h @ U)
    return h


def _rng_arrays(*shapes):
    rng = np.random.default_rng(0)
    return [rng.normal(size=s) for s in shapes]


def _same(fn, *args):
    got = myia(fn, backend="jax")(*args)
    np.testing.assert_allclose(got, myia(fn, backend="numpy")(*args), rtol=1e-12, atol=1e-12)


def test_a_product_of_the_counter_is_computed_before_the_loop(hoisted):
    _same(recurrence, *_rng_arrays((7, 3, 4), (4, 5), (5, 5)))
    assert 1 in hoisted  # x[t] @ W; h @ U stays in the loop


def test_a_counter_of_step_two(hoisted):
    _same(stepped, *_rng_arrays((8, 2, 3), (3, 4)))
    assert 1 in hoisted


def test_a_product_of_the_state_stays_in_the_loop(hoisted):
    _same(state_only, *_rng_arrays((3, 4), (4, 4)))
    assert hoisted and all(k == 0 for k in hoisted)


def test_an_index_past_the_end_still_raises():
    x, W = _rng_arrays((4, 2, 3), (3, 2))
    with pytest.raises(IndexError):
        myia(past_the_end, backend="numpy")(x, W)
    with pytest.raises(IndexError):
        myia(past_the_end, backend="jax")(x, W)


def test_rnn_gradient_reads_popped_rows_after_the_backward_loop(hoisted, read_after, monkeypatch):
    monkeypatch.setattr(jax_sums, "ON_CPU", True)  # the weights' sums after the loop, as on a GPU
    g, args = rnn_gradient_as_numpy()
    assert 1 in hoisted  # the forward loop's x[t] @ Wx
    assert 2 in read_after  # the backward loop's x[t] and h[t - 1], popped
    # Popped last first, the rows are read in order, one slice of each stack's buffer: the
    # backward loop stacks its own operands last iteration first too, and nothing is
    # gathered nor reversed.
    text = g.specialization(*args).executable.compiled_text(args)
    assert " gather(" not in text and " reverse(" not in text


def test_recurrence_gradient_checks():
    x, W, U = _rng_arrays((6, 3, 2), (2, 4), (4, 4))
    check_grad(recurrence_loss, x, W, U, wrt=("W", "U"), backend="jax")


def test_stepped_gradient_checks():
    x, W = _rng_arrays((7, 2, 3), (3, 2))
    check_grad(stepped_loss, x, W, wrt=("x", "W"), backend="jax")


def previous_row(x, W):
    acc = np.zeros((x.shape[1], W.shape[1]))
    for t in range(x.shape[0]):
        acc = np.sin(acc) + x[t - 1] @ W  # x[-1] first: the last row
    return acc


def column_steps(x, W):
    acc = np.zeros((x.shape[0], W.shape[1]))
    for t in range(x.shape[1]):
        acc = np.cos(acc) + x[:, t, :] @ W
    return acc


def _gathers(fn, *args):
    import re

    text = myia(fn, backend="jax").lowered_text(*args)
    return len(re.findall(r"stablehlo\.gather\b", text))


def test_rows_read_at_the_counter_are_one_slice_not_a_gather(hoisted):
    args = _rng_arrays((7, 3, 4), (4, 5), (5, 5))
    _same(recurrence, *args)
    assert 1 in hoisted
    assert _gathers(recurrence, *args) == 0


def test_rows_read_every_second_iteration_are_a_strided_slice(hoisted):
    args = _rng_arrays((8, 2, 3), (3, 4))
    _same(stepped, *args)
    assert _gathers(stepped, *args) == 0


def test_a_row_read_before_the_start_wraps_as_in_python(hoisted):
    """x[t - 1] at t = 0 reads the last row: no slice covers it, the rows are gathered."""
    _same(previous_row, *_rng_arrays((5, 2, 3), (3, 4)))
    assert 1 in hoisted


def test_a_column_read_at_the_counter(hoisted):
    args = _rng_arrays((3, 6, 4), (4, 2))
    _same(column_steps, *args)
    assert 1 in hoisted
    assert _gathers(column_steps, *args) == 0


def test_previous_row_gradient_checks():
    x, W = _rng_arrays((5, 2, 3), (3, 2))
    check_grad(lambda x, W: np.sum(previous_row(x, W) ** 2), x, W, wrt=("x", "W"), backend="jax")

"""Boolean masks as indices (``x[x > 0]``), and vmap of results whose shape varies per example.

A boolean mask was refused ("indexing with a boolean array gives a shape known only at run
time"). It is NumPy's indexing now: the result has as many elements as the mask has true
values, an axis known at run time only (``f64 x ?``), and it is differentiable.

vmap ran a primitive without a batching rule once per example and put each result into a
row of the first example's shape: a result of another shape was broadcast into it, a silent
wrong answer (``np.sum(x[x > 0] ** 3)`` counted an example's one selected element twice where
the first example had two; ``vmap(lambda x, n: x[:n])`` gave ``[[0, 1], [3, 3]]`` for
``n = [2, 1]``). Such a primitive now makes the whole function run once per
example, and results of different shapes are an error, never broadcast.
"""

from __future__ import annotations

import numpy as np
import pytest

from myia import jvp, myia, vmap
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]


def _backend(name):
    if name == "jax":
        pytest.importorskip("jax")
    return name


def positive_cubes(x):
    return np.sum(x[x > 0] ** 3)


def selected_rows(X, m):
    return np.sum(X[m] * 2.0)


def mean_above(X):
    return np.mean(X[X > 0.5])


def rows_then_columns(X):
    Y = X[X[:, 0] > 0]
    return np.sum(Y[:, 1:] ** 2)


def positives_per_row(X):
    s = 0.0
    for i in range(X.shape[0]):
        row = X[i]
        s = s + np.sum(np.sin(row[row > 0]))
    return s


def selected(x):
    return x[x > 0]


def head(x, n):
    return x[:n]


def vmapped_heads(xs, ns):
    return vmap(head)(xs, ns)


def vmapped_cubes(xs):
    return vmap(positive_cubes)(xs)


def vmapped_selection(xs):
    return vmap(selected)(xs)


def tangent_of_cubes(x, t):
    return jvp(positive_cubes, (x,), (t,))


_rng = np.random.default_rng(46)
X = _rng.normal(size=(5, 3))
x = np.array([1.0, -2.0, 3.0, -0.5, 0.7])
m = np.array([True, False, True, True, False])

CASES = [
    (positive_cubes, (x,)),
    (selected_rows, (X, m)),
    (mean_above, (X,)),
    (rows_then_columns, (X,)),
    (positives_per_row, (X,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_masks_index_as_in_numpy_and_are_differentiable(fn, args, backend):
    backend = _backend(backend)
    assert myia(fn, backend=backend)(*args) == pytest.approx(fn(*args), rel=1e-12)
    check_grad(fn, *args, wrt=(0,), backend=backend)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_second_order_and_forward_mode_through_a_mask(backend):
    backend = _backend(backend)
    check_grad(positive_cubes, x, order=2, backend=backend)
    value, tangent = myia(tangent_of_cubes, backend=backend)(x, np.ones(5))
    assert value == pytest.approx(positive_cubes(x))
    assert tangent == pytest.approx(np.sum(3 * x[x > 0] ** 2))


def test_a_selection_of_known_length_keeps_its_shape():
    # ``x[x > 0]`` has an axis known at run time only; a mask of one true value per row of
    # the identity selects exactly the diagonal (the values show the run-time length).
    assert myia(selected)(np.array([-1.0, 2.0, 0.0, 4.0])).tolist() == [2.0, 4.0]
    assert myia(selected)(np.array([-1.0, -2.0])).shape == (0,)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_a_mask_reduced_is_each_examples_value(backend):
    backend = _backend(backend)
    # The first example selects 2 elements, the last 1: it was broadcast into a row of 2.
    xs = np.array([[1.0, -1.0, 2.0], [-1.0, 5.0, -2.0], [3.0, 3.0, 3.0], [-1.0, -1.0, 7.0]])
    expected = [positive_cubes(r) for r in xs]
    assert myia(vmapped_cubes, backend=backend)(xs) == pytest.approx(expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_selections_of_different_lengths_is_an_error(backend):
    backend = _backend(backend)
    same = np.array([[1.0, -1.0, 2.0], [-1.0, 5.0, 2.0]])
    assert myia(vmapped_selection, backend=backend)(same).tolist() == [[1.0, 2.0], [5.0, 2.0]]
    ragged = np.array([[1.0, -1.0, 2.0], [-1.0, 5.0, -2.0]])
    with pytest.raises(ValueError, match="vmap: the examples' results have different shapes"):
        myia(vmapped_selection, backend=backend)(ragged)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_slices_of_lengths_per_example(backend):
    backend = _backend(backend)
    xs = np.arange(6.0).reshape(2, 3)
    assert myia(vmapped_heads, backend=backend)(xs, np.array([2, 2])).tolist() == [
        [0.0, 1.0],
        [3.0, 4.0],
    ]
    with pytest.raises(ValueError, match="vmap: the examples' results have different shapes"):
        myia(vmapped_heads, backend=backend)(xs, np.array([2, 1]))

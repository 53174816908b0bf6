"""Defects users met: NumPy's dtypes of lists mixing NumPy and Python numbers, and gradients.

A list holding NumPy numbers and Python numbers (``l = [x32, 0.1]``) had the NumPy number's
dtype, as NumPy's arithmetic promotes them: ``np.array(l)`` was float32 where NumPy's is
float64, ``l[1]`` was ``0.1`` rounded to float32, and ``[np.uint8(200), -1]`` raised an
`OverflowError`. Its elements are now of the dtype holding them all (NumPy's ``np.array`` of
the list), Python numbers still in arithmetic.

After ``if b: x = x.T`` (no ``else``), ``x + y`` was a `MyiaShapeError` at compile time when
it fit on one path only (``y`` of ``x.T``'s shape, ``b`` known at run time only): the path the
program takes runs, and the other raises the `MyiaShapeError` at run time.
"""

from __future__ import annotations

import numpy as np
import pytest

from myia import MyiaShapeError, grad, myia
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]


def _backend(name):
    if name == "jax":
        pytest.importorskip("jax")
    return name


# Lists mixing NumPy numbers and Python numbers -------------------------------------------------


def held_in_a_list(a, b, i):
    lst = [a, b]
    t = (a, b)
    return np.array(lst), np.stack(lst), lst[1], t[i]


def literals_beside_an_element(v):
    lst = [v[0], 0.1]
    return np.sum(np.asarray(lst)) + lst[1], lst[0] * v


#: A NumPy number and a Python number (either first), and two NumPy numbers.
PAIRS = [
    (np.float32(2.5), 0.1),
    (1.1, np.float32(2.5)),
    (np.float32(2.5), 3),
    (np.int8(-2), 3),
    (-1, np.uint8(200)),
    (np.uint8(200), True),
    (np.bool_(True), 1.1),
    (np.int32(7), np.float32(2.5)),
    (np.int8(-2), np.uint8(200)),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_list_of_numpy_and_python_numbers_holds_them_as_numpy_does(backend):
    backend = _backend(backend)
    f = myia(held_in_a_list, backend=backend)
    for a, b in PAIRS:
        for i in (0, 1):
            got, want = f(a, b, i), held_in_a_list(a, b, i)
            for g, w in zip(got[:2], want[:2]):
                assert g.dtype == w.dtype, (a, b, g, w)
                np.testing.assert_array_equal(g, w)
            # The values themselves, exactly (0.1 was rounded to float32, -1 wrapped around).
            assert got[2] == b and got[3] == want[3], (a, b, got, want)
    for dtype in (np.float32, np.int8, np.uint8):
        v = np.array([3, 2, 1], dtype)
        (total, scaled), (want_total, want_scaled) = (
            myia(literals_beside_an_element, backend=backend)(v),
            literals_beside_an_element(v),
        )
        assert total == want_total and np.asarray(total).dtype == np.asarray(want_total).dtype
        np.testing.assert_array_equal(scaled, want_scaled)
    # An element (float64, a Python float) times a float32 array is a float32 array.
    v = np.array([3, 2, 1], np.float32)
    assert myia(literals_beside_an_element, backend=backend)(v)[1].dtype == np.float32


# The gradient of an index by a literal list of literal lists -------------------------------------


def pick_rows(a):
    return np.sum(a[[[0, 1], [2, 2]]] ** 2)


def pick_rows_and_columns(a):
    return np.sum(np.sin(a[[[0, 1], [2, 2]], 1:]) * a[[[3, 3]]][0, :, :2])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_an_index_by_a_nested_literal_list(backend):
    # Refused ("invalid array index [[i64]]" in J(array_getitem)): the forward pass of the
    # gradient converted the inner lists to the outer list's element type, forgetting their
    # values.
    backend = _backend(backend)
    a = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    check_grad(pick_rows, a, backend=backend)
    check_grad(pick_rows_and_columns, a, backend=backend)
    # Row 2 is picked twice: its gradient is twice that of a row picked once.
    got = myia(grad(pick_rows), backend=backend)(a)
    np.testing.assert_allclose(got, np.array([2.0, 2.0, 4.0, 0.0])[:, None] * a, rtol=1e-12)


# A shape error on a path a branch may not take --------------------------------------------------


def transpose_in_a_branch(x, y, b):
    if b:
        x = x.T
    return np.sum(np.tanh(x + y) * y)


def product(x, y):
    return x @ y


def transpose_then_a_call(x, y, b):
    if b:
        x = x.T
    return np.sum(product(x, y) ** 2)


def wrong_on_every_path(x, y, b):
    if b:
        x = x * 2.0
    return x + y


def wrong_in_a_call_in_a_branch(x, y, b):
    z = product(x, x.T)
    if b:
        z = z + product(x, y)  # on no path (product fits elsewhere, with other shapes)
    return z


def wrong_in_a_branch(x, y, n):
    for _ in range(n):
        x = x + y  # on no path: the loop's exit fits, its body never does
    if n > 2:
        return x @ y
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shape_that_fits_on_the_path_taken_runs(backend):
    # ``x + y`` after ``if b: x = x.T`` was a MyiaShapeError at compile time for the path not
    # taken (b known at run time only); it is NumPy's result on the path the program takes.
    backend = _backend(backend)
    r = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    y = np.linspace(0.5, 1.0, 6).reshape(3, 2)
    f = myia(transpose_in_a_branch, backend=backend)
    assert f(r, y, True) == pytest.approx(transpose_in_a_branch(r, y, True), rel=1e-12)
    assert f(r, r, False) == pytest.approx(transpose_in_a_branch(r, r, False), rel=1e-12)
    g = myia(transpose_then_a_call, backend=backend)
    assert g(r, r, True) == pytest.approx(transpose_then_a_call(r, r, True), rel=1e-12)
    assert g(r, y, False) == pytest.approx(transpose_then_a_call(r, y, False), rel=1e-12)
    check_grad(transpose_in_a_branch, r, y, True, backend=backend)
    check_grad(transpose_in_a_branch, r, r, False, backend=backend)
    check_grad(transpose_then_a_call, r, r, True, backend=backend)
    # The path that does not fit raises at run time, with the user's line in the message.
    with pytest.raises(MyiaShapeError, match=r"(?s)\(2, 3\) and \(3, 2\).*x \+ y"):
        f(r, y, False)
    # Wrong on every path: a MyiaShapeError at compile time, at the user's line.
    with pytest.raises(MyiaShapeError) as info:
        myia(wrong_on_every_path, backend=backend)(r, y, True)
    assert info.value.location.filename == __file__
    assert "return x + y" in str(info.value)
    with pytest.raises(MyiaShapeError) as info:
        myia(wrong_in_a_branch, backend=backend)(r, np.ones((4, 5)), 0)
    assert info.value.location.filename == __file__
    with pytest.raises(MyiaShapeError, match="z = z"):
        myia(wrong_in_a_call_in_a_branch, backend=backend)(r, r, False)


# A literal list among arrays ------------------------------------------------------------------


def arrays_and_literal_lists(a, v):
    rows = np.array([a, [1.0, 2.0, 3.0]])
    both = np.stack([a, [1, 2, 3]]) + np.concatenate([v, [[0.5, 0.25, 2.0]]], axis=0)
    stacked = np.vstack([a, [0.1, 0.2, 0.3]]), np.column_stack([a, [1, 2, 3]])
    return rows, both, np.concatenate([a, [0.1], []]), np.hstack([a, [0.5]]), *stacked


def rows_loss(a):
    return np.sum(np.array([a, [1.0, 2.0, 3.0]]) ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_literal_list_among_arrays_is_numpys_array(backend):
    # np.array([a, [1.0, 2.0, 3.0]]) (np.stack, np.concatenate, np.vstack...) was refused:
    # "stack expects an array, not (f64, f64, f64)"; the list is NumPy's array of it, promoted
    # with `a`.
    backend = _backend(backend)
    a, v = np.array([1.5, -2.0, 0.25], np.float32), np.ones((1, 3), np.float32)
    got = myia(arrays_and_literal_lists, backend=backend)(a, v)
    want = arrays_and_literal_lists(a, v)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)
    check_grad(rows_loss, a.astype(np.float64), backend=backend)

"""Regression tests: NumPy's semantics that a differential sweep of Myia against NumPy found.

Each result is compared with NumPy's own: its type (a NumPy scalar, not a Python number), its
dtype, its shape and its values, or the class of the exception NumPy raises.

- ``np.diff`` summed binomial terms: ``np.diff(x, 3)`` of large floats cancelled (-4.0 for
  NumPy's -8.0), and of unsigned integers it raised ``OverflowError`` (``uint8 * -1``). It is
  now NumPy's repeated difference, wrapping around in the dtype.
- ``divmod(array, 0.0)`` raised Python's ``ZeroDivisionError``; it is NumPy's (inf, nan), and
  ``np.divmod`` (refused) is ``(np.floor_divide, np.remainder)``.
- ``np.where(c, 1.5, 2)`` gave a Python float where NumPy gives a ``np.float64``.
- ``initial=`` and ``where=`` of ``np.sum``/``prod``/``max``/``min`` (``where=`` of
  ``np.mean``), ``np.clip``'s NumPy 2 keywords ``min=``/``max=``, ``reshape``/``ravel``'s
  ``order="F"`` and ``np.quantile``'s methods other than "linear" (a ``NotImplementedError``)
  were refused; ``out=`` of the reductions is refused at the user's line.
- ``np.einsum(..., optimize=True)``, ``np.dstack``, ``np.matrix_transpose`` and
  ``np.linalg.multi_dot`` were refused.
"""

from __future__ import annotations

import numpy as np
import pytest

from myia import MyiaTypeError, myia
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (as NumPy warns)


def _backend(name):
    if name == "jax":
        pytest.importorskip("jax")
    return name


def _expect(fn, *args):
    with np.errstate(all="ignore"):
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 (the class is compared)
            return exc


def _check(compiled, fn, *args):
    """`compiled(*args)` is NumPy's `fn(*args)`: the same kind, dtype and values, or error."""
    expected = _expect(fn, *args)
    if isinstance(expected, Exception):
        with pytest.raises(type(expected)):
            compiled(*args)
        return
    _same(compiled(*args), expected, args)


def _same(got, expected, args):
    if isinstance(expected, tuple):
        assert type(got) is tuple and len(got) == len(expected), (args, got, expected)
        for g, e in zip(got, expected):
            _same(g, e, args)
        return
    if isinstance(expected, np.ndarray) and expected.ndim == 0:
        expected = expected[()]  # (Myia's results are scalars, never 0-d arrays)
    assert type(got) is type(expected), (args, got, expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype, (args, got, expected)
    assert np.shape(got) == np.shape(expected), (args, got, expected)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, equal_nan=True, err_msg=args)


# np.diff: NumPy's repeated differences ----------------------------------------------------------


def differences(x):
    return np.diff(x), np.diff(x, 2, axis=0), np.diff(x, n=3), np.diff(x, prepend=0)


def tenth_differences(x):
    return np.diff(x, 10)


DIFF_INPUTS = [
    np.array([[3, 200, 7, 0, 255], [1, 9, 100, 17, 4], [90, 3, 5, 250, 1]], np.uint8),
    np.array([[3, -100, 7, 0, 127], [1, 9, -128, 17, 4], [90, 3, 5, -50, 1]], np.int8),
    np.array([[1e16, 1e16 + 2, 1e16 + 6, 1e16 + 4, 1e16 + 14]] * 3),
    np.array([[True, False, False, True, True]] * 3),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_diff_is_numpys_repeated_difference(backend):
    backend = _backend(backend)
    f = myia(differences, backend=backend)
    for x in DIFF_INPUTS:
        _check(f, differences, x)
    # C(10, 5) = 252 is out of int8's range: NumPy's differences wrap around.
    x = np.array([3, -100, 7, 0, 127, 1, 9, -128, 17, 4, 90, 3], np.int8)
    _check(myia(tenth_differences, backend=backend), tenth_differences, x)
    check_grad(lambda x: np.sum(np.sin(np.diff(x, 2, axis=-1))), DIFF_INPUTS[3][:, :4] * 1e-16,
               backend=backend)  # fmt: skip


# divmod and np.divmod ---------------------------------------------------------------------------


def builtin_divmod(x, y):
    return divmod(x, y)


def numpy_divmod(x, y):
    return np.divmod(x, y)


DIVMOD_PAIRS = [
    (np.array([1.0, -2.0, 0.0]), 0.0),  # (ZeroDivisionError: NumPy's inf and nan)
    (1.0, np.float32(0.0)),
    (np.array([7, -7, 0], np.int8), np.int8(-2)),
    (np.array([5, 6], np.uint8), np.array([0, 4], np.uint8)),
    (np.array([[-7], [7]]), np.array([2.5, -3.0])),
    (7.5, -2),
    (1.0, 0.0),  # (Python numbers: Python's ZeroDivisionError, with both)
    (1, 0),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_divmod_of_arrays_and_numpy_numbers_is_numpys(backend):
    backend = _backend(backend)
    b, n = myia(builtin_divmod, backend=backend), myia(numpy_divmod, backend=backend)
    for x, y in DIVMOD_PAIRS:
        _check(b, builtin_divmod, x, y)
        _check(n, numpy_divmod, x, y)
    check_grad(lambda x: np.sum(np.divmod(x, 0.7)[1] ** 2), np.linspace(-2.0, 2.0, 7) + 0.05,
               backend=backend)  # fmt: skip


# np.where of Python numbers ---------------------------------------------------------------------


def where_of_numbers(c, x, y):
    return np.where(c, x, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_where_of_python_numbers_is_a_numpy_scalar(backend):
    backend = _backend(backend)
    f = myia(where_of_numbers, backend=backend)
    for c, x, y in [
        (True, 1.5, 2), (False, 1, 2), (True, True, False), (np.bool_(True), 1, 2.5),
        (True, np.float32(1.5), 2), (True, 1.5, np.int8(2)), (2.0, 3, 4),
        (np.array([True, False]), 1, 2.0),
    ]:  # fmt: skip
        _check(f, where_of_numbers, c, x, y)


# Reductions: initial, where, out ----------------------------------------------------------------


def sums(x):
    return (
        np.sum(x, initial=1.5),
        np.sum(x, axis=0, initial=2),
        np.sum(x, where=x > 0),
        x.sum(axis=-1, where=x > 0, keepdims=True),
        np.prod(x, axis=0, initial=3),
        np.prod(x, where=x > 0),
        np.sum(x, 0, None, None, True),
    )


def means(x):
    return np.mean(x, where=x > 0), np.mean(x, axis=0, where=x > 0, keepdims=True)


def extrema(x):
    return (
        np.max(x, initial=1),
        x.max(axis=0, initial=0.5),
        np.max(x, axis=-1, where=x < 1, initial=-9),
        np.min(x, where=x > 0, initial=9),
        np.amin(x, axis=(0, 1), initial=0, keepdims=True),
        np.max(x[:, :0], axis=1, initial=-1),
        np.min(x[:0], initial=4),
    )


def max_masked_without_initial(x):
    return np.max(x, where=x > 0)


def sum_into(x, y):
    return np.sum(x, axis=0, out=y)


def max_into(x, y):
    return x.max(0, y)


def reductions_loss(x):
    total = np.sum(np.sin(x), axis=0, where=x > 0, initial=0.5).sum()
    masked = np.mean(x**2, where=x < 1) + np.prod(x, axis=0, where=x > -0.5).sum()
    return total + masked + np.sum(np.max(x, axis=1, initial=0.3, where=x < 1.2))


@pytest.mark.parametrize("backend", BACKENDS)
def test_reductions_take_initial_and_where(backend):
    backend = _backend(backend)
    fs = [myia(fn, backend=backend) for fn in (sums, means, extrema, max_masked_without_initial)]
    for dt in (np.float32, np.int8, np.uint8, np.bool_):
        x = np.array([[1, -2, 3], [0, 5, -1], [2, 2, 0]]).astype(dt)
        for f, fn in zip(fs, (sums, means, extrema, max_masked_without_initial)):
            _check(f, fn, x)  # (uint8 with initial=-9: NumPy's OverflowError; no where's
            # initial: its ValueError)
    for fn in (sum_into, max_into):
        with pytest.raises(MyiaTypeError, match="out argument") as info:
            myia(fn, backend=backend)(np.ones((2, 3)), np.zeros(3))
        assert info.value.location.filename == __file__
    check_grad(reductions_loss, np.linspace(-1.5, 1.5, 12).reshape(4, 3), backend=backend)


# np.clip's keywords and reshape's order ---------------------------------------------------------


def clips(x):
    return (
        np.clip(x, min=0),
        x.clip(max=1),
        np.clip(x, min=-1, max=1.5),
        np.clip(x),
        x.clip(0, max=1),
    )


def clip_both_ways(x):
    return np.clip(x, 0, 2, min=1)


def in_fortran_order(x):
    return (
        np.reshape(x, (-1,), order="F"),
        np.reshape(x, (2, -1), order="F"),
        x.reshape(x.shape[-1], -1, order="F"),
        x.reshape((x.shape[-1], -1), order="F"),
        np.ravel(x, order="F"),
        x.ravel("F"),
        x.flatten(order="F"),
        x.reshape(-1, order="C"),
    )


def in_any_order(x):
    return x.reshape(-1, order="A")


@pytest.mark.parametrize("backend", BACKENDS)
def test_clip_keywords_and_fortran_order(backend):
    backend = _backend(backend)
    f, g = myia(clips, backend=backend), myia(clip_both_ways, backend=backend)
    for x in (np.array([1.0, 5.0, -3.0, np.nan]), np.array([1, 5, -3], np.int8), np.int64(3)):
        _check(f, clips, x)
        _check(g, clip_both_ways, x)
    h = myia(in_fortran_order, backend=backend)
    for shape in ((2, 3), (4, 3, 2)):
        _check(h, in_fortran_order, np.arange(np.prod(shape), dtype=float).reshape(shape))
    check_grad(lambda x: np.sum(np.sin(in_fortran_order(x)[0]) * np.arange(6.0)),
               np.linspace(-1.0, 1.0, 6).reshape(3, 2), backend=backend)  # fmt: skip
    with pytest.raises(MyiaTypeError, match="'C' or 'F'"):
        myia(in_any_order, backend=backend)(np.ones((2, 3)))


# np.quantile's methods --------------------------------------------------------------------------


def quantiles_of_every_method(x, q):
    return (
        np.quantile(x, q, method="lower"),
        np.quantile(x, q, method="higher"),
        np.quantile(x, q, axis=-1, method="nearest"),
        np.quantile(x, q, method="midpoint"),
        np.quantile(x, q, method="inverted_cdf"),
        np.quantile(x, q, method="averaged_inverted_cdf"),
        np.quantile(x, q, method="closest_observation"),
        np.quantile(x, q, method="interpolated_inverted_cdf"),
        np.quantile(x, q, axis=0, method="hazen"),
        np.quantile(x, q, method="weibull"),
        np.quantile(x, q, method="median_unbiased"),
        np.quantile(x, q, method="normal_unbiased"),
        np.quantile(x, 0.3, axis=0, method="midpoint", keepdims=True),
        np.percentile(x, q * 100, axis=-1, method="lower"),
    )


def quantile_of_no_method(x):
    return np.quantile(x, 0.5, method="no such method")


@pytest.mark.parametrize("backend", BACKENDS)
def test_quantile_methods_are_numpys(backend):
    backend = _backend(backend)
    # (XLA rounds q * 100 / 100 otherwise than NumPy: 2 / 3 is 2 / 3 to the last bit there, a
    # discrete method's index then NumPy's next one: no such quantile here.)
    q = np.array([0.0, 0.1, 0.25, 0.5, 0.625, 0.875, 1.0])
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal((4, 4)), [[1.0, np.nan, 3.0, 2.0]]])
    ints = rng.integers(-5, 5, (4, 5)).astype(np.int32)
    f = myia(quantiles_of_every_method, backend=backend)
    _check(f, quantiles_of_every_method, x, q)
    _check(f, quantiles_of_every_method, ints, q)
    with pytest.raises(ValueError):
        myia(quantile_of_no_method, backend=backend)(ints)
    check_grad(lambda x: np.sum(np.quantile(x, q, axis=0, method="hazen") ** 2), x[:4],
               backend=backend)  # fmt: skip


# einsum(optimize=...), dstack, matrix_transpose, multi_dot ---------------------------------------


def joins_and_products(x, y):
    return (
        np.einsum("ij,kj->ik", x, y, optimize=True),
        np.einsum("ij,ij->", x, y, optimize="greedy"),
        np.dstack([x, y]),
        np.dstack((x[0], y[0])),
        np.matrix_transpose(np.stack([x, y])),
        np.linalg.matrix_transpose(x),
        np.linalg.multi_dot([x, y.T, x]),
        np.linalg.multi_dot((x[0], y.T, x, y[0])),
    )


def transpose_of_a_vector(x):
    return np.matrix_transpose(x[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_einsum_optimize_dstack_matrix_transpose_multi_dot(backend):
    backend = _backend(backend)
    x, y = np.linspace(-1.0, 1.0, 12).reshape(3, 4), np.linspace(0.5, 2.0, 12).reshape(3, 4)
    _check(myia(joins_and_products, backend=backend), joins_and_products, x, y)
    _check(myia(transpose_of_a_vector, backend=backend), transpose_of_a_vector, x)
    check_grad(lambda x, y: sum(np.sum(np.sin(r)) for r in joins_and_products(x, y)), x, y,
               backend=backend)  # fmt: skip

"""Regression tests: NumPy's values at the edges of integer ranges, of dtypes and of counts.

Each case is one that a differential fuzzing of Myia against NumPy found wrong (a silent wrong
value, dtype or kind, or a program NumPy rejects that Myia ran). Every result is compared
with NumPy's: its type, dtype, shape and value (a signed zero keeps its sign), or the class
of the exception NumPy raises, on every backend.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from myia import myia
from myia.errors import MyiaShapeError
from myia.testing import check_grad

try:
    import jax
except ImportError:  # pragma: no cover
    jax = None

try:
    import numba
except ImportError:  # pragma: no cover
    numba = None

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (as NumPy warns)

BACKENDS = (
    ["numpy", "debug"] + (["jax"] if jax is not None else []) + (["native"] if numba else [])
)


def _expect(fn, *args):
    with np.errstate(all="ignore"):
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 (the class is compared)
            return exc


def _check(compiled, fn, *args):
    """`compiled(*args)` is NumPy's `fn(*args)`: the same kind, dtype and value, or error."""
    expected = _expect(fn, *args)
    if isinstance(expected, Exception):
        with pytest.raises(type(expected)):
            compiled(*args)
        return
    _same(compiled(*args), expected, args)


def _same(got, expected, args):
    assert type(got) is type(expected), (args, got, expected)
    if isinstance(expected, tuple):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _same(g, e, args)
        return
    assert np.asarray(got).dtype == np.asarray(expected).dtype, (args, got, expected)
    assert np.shape(got) == np.shape(expected), (args, got, expected)
    assert np.array_equal(got, expected, equal_nan=True), (args, got, expected)
    if np.asarray(expected).dtype.kind == "f":
        zeros = np.asarray(expected) == 0
        assert np.array_equal(np.signbit(got) & zeros, np.signbit(expected) & zeros), args


# np.fmod: the remainder with the dividend's sign ------------------------------------------


def fmod(x, y):
    return np.fmod(x, y)


FMOD_PAIRS = [
    (np.int32(-(2**31)), np.int32(3)), (np.int32(64), np.int32(-(2**31))),
    (np.int32(-(2**31)), np.int32(-1)), (np.int32(2**31 - 1), np.int32(-(2**31))),
    (np.int8(-128), 3), (7, -2), (-7, 0), (np.int8(-128), 2.5), (np.int8(-128), np.float32(-3.5)),
    (np.bool_(True), np.bool_(True)), (True, np.float32(-3.5)), (-0.0, 2.5), (2.5, -0.0),
    (float("inf"), 2.0), (np.uint8(250), np.uint8(7)),
    (np.array([-(2**63), 2**63 - 1, 3, -3, 0, -1]), np.array([3, -(2**63), -1, 2, 5, 7])),
    (np.array([-128, 127, 0, -1, 5, -5], np.int8), np.int8(-128)),
    (np.array([True, False, True]), np.array([True, True, False])),
]  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
def test_fmod_of_the_most_negative_integers_and_booleans(backend):
    # |x| of the most negative integer overflows: fmod(-2**31, 3) was -1, fmod(64,
    # -2**31) was -2**31 + 64; of booleans, NumPy's is int8; |int8(-128)| overflowed before
    # the int8 was made a float.
    f = myia(fmod, backend=backend)
    for x, y in FMOD_PAIRS:
        _check(f, fmod, x, y)


def test_fmod_gradient_of_floats():
    def loss(x, y):
        return np.sum(np.fmod(x, y) ** 2) + np.fmod(x[0], -1.5)

    check_grad(loss, np.array([-3.7, 2.2, 5.1]), np.array([1.5, -0.8, 2.0]))


# Cumulative sums and products --------------------------------------------------------------


def cumsums(a):
    return (
        np.cumsum(a * 50, axis=0, dtype=np.uint8),
        np.cumsum(a, dtype=np.int32),
        a.cumsum(axis=1, dtype=np.int8),
        np.cumsum(a, axis=-1, dtype=bool),
        np.cumsum(a, dtype=np.float32),
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64])
def test_cumsum_sums_in_the_dtype_asked(backend, dtype):
    # np.cumsum(x, dtype=np.uint8) was uint64 (300 where NumPy wraps to 44), dtype=np.int32
    # int64, dtype=bool counted.
    a = (np.arange(12).reshape(4, 3) % 5).astype(dtype)
    _check(myia(cumsums, backend=backend), cumsums, a)


def cumprod_axis_out_of_bounds(a):
    return np.cumprod(a, axis=-3)


def cumprod_axis_tuple(a):
    return np.cumprod(a, axis=(0, 1))


def cumsum_axis_tuple(a):
    return np.cumsum(a, axis=(0, 1))


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_cumprod_checks_its_axis(backend):
    # np.cumprod(a, axis=-3) of a matrix ran (NumPy raises AxisError).
    a = np.arange(6.0).reshape(3, 2)
    with pytest.raises(MyiaShapeError, match="axis -3 is out of bounds"):
        myia(cumprod_axis_out_of_bounds, backend=backend)(a)
    for fn in (cumprod_axis_tuple, cumsum_axis_tuple):
        with pytest.raises(TypeError, match="'tuple' object cannot be interpreted"):
            myia(fn, backend=backend)(a)


# Variance with ddof past the count ---------------------------------------------------------


def variances(x, ddof):
    return np.var(x, ddof=ddof), np.std(x, axis=0, ddof=ddof), x.var(axis=1, ddof=ddof)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ddof", [0, 1, 2, 3, 7])
def test_var_std_divide_by_zero_past_the_count(backend, ddof):
    # With ddof > n, NumPy divides by max(n - ddof, 0): inf (nan for 0 / 0), never a negative
    # variance (np.var(x, ddof=3) of 2 values was -0.5).
    x = np.array([[1.0, 2.0], [4.0, 4.0]])
    _check(myia(variances, backend=backend), variances, x, ddof)


def test_var_gradient_with_ddof():
    def loss(x):
        return np.var(x, ddof=1) + np.std(x[0], ddof=1)

    check_grad(loss, np.array([[1.0, 2.5, -0.5], [4.0, 3.0, 0.25]]))


# np.heaviside: NumPy's float for the pair ---------------------------------------------------


def heaviside(x, h):
    return np.heaviside(x, h)


@pytest.mark.parametrize("backend", BACKENDS)
def test_heaviside_dtype_and_nan(backend):
    # heaviside(uint8 array, 1) was float64 (NumPy's float16), of two NumPy scalars a Python
    # float, heaviside(nan, 0.5) 0.5 (NumPy's nan), heaviside(uint8, -2) 254 at zero.
    f = myia(heaviside, backend=backend)
    pairs = [
        (np.array([-1, 0, 2], np.int8), 0.5), (np.array([0, 1, 2], np.uint8), -2),
        (np.array([-1.0, 0.0, np.nan]), 0.5), (np.array([-1.0, 0.0, np.nan], np.float32), 0.25),
        (np.array([True, False]), True), (np.array([-1, 0, 2], np.int16), np.float32(0.25)),
        (np.int8(0), 0.5), (np.float32(0.0), np.int64(3)), (0, 0.5), (math.nan, 0.5),
    ]  # fmt: skip
    for x, h in pairs:
        _check(f, heaviside, x, h)


# NumPy's integer types called on Python numbers ---------------------------------------------


def to_uint8(x):
    return np.uint8(x)


def to_int8(x):
    return np.int8(x)


def to_int32(x):
    return np.int32(x)


def to_uint16(x):
    return np.uint16(x)


def to_float32(x):
    return np.float32(x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [to_uint8, to_int8, to_int32, to_uint16, to_float32])
def test_numpy_integer_of_a_python_number_is_checked(backend, fn):
    # np.uint8(-3) of a Python int raises OverflowError in NumPy 2 (was 253), np.int8(300.5)
    # too (truncated first), np.int32(nan) ValueError; a NumPy number or an array wraps.
    f = myia(fn, backend=backend)
    for x in [-3, 300, 255, 127, -128, 2**40, True, -3.5, 300.5, -0.5, 255.9, float("nan"),
              float("inf"), 1e20, np.int64(-3), np.int64(300), np.array([-3, 300])]:  # fmt: skip
        _check(f, fn, x)


# math.fmod and np.isclose --------------------------------------------------------------------


def math_fmod(x, y):
    return math.fmod(x, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_math_fmod_raises_as_python(backend):
    # math.fmod(1.0, 0.0) raised ZeroDivisionError (Python's ValueError: math domain error),
    # math.fmod(inf, 2.0) returned nan (Python raises).
    f = myia(math_fmod, backend=backend)
    pairs = [
        (1.0, 0.0), (1.0, -0.0), (math.nan, 0.0), (math.inf, 2.0), (-math.inf, math.nan),
        (-7.5, 2.0), (2.5, math.inf), (7, -2), (0, 3), (np.float32(-1.5), 1.0),
    ]  # fmt: skip
    for x, y in pairs:
        _check(f, math_fmod, x, y)


def closeness(x, y):
    return (
        np.isclose(x, y),
        np.allclose(x, y),
        np.isclose(x, y, equal_nan=True),
        np.allclose(x, y, 0.1, 0.0, True),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_isclose_of_infinities_nans_and_scalars(backend):
    # np.isclose(inf, inf) was False (inf - inf is nan; NumPy's True), of two numbers a
    # Python bool (NumPy's np.bool_); equal_nan was refused; of booleans it raised.
    f = myia(closeness, backend=backend)
    inf = np.array([1.0, np.inf, np.nan, -np.inf])
    pairs = [
        (math.inf, math.inf), (math.inf, -math.inf), (math.nan, math.nan), (1.0, 1.0 + 1e-9),
        (3, True), (np.float32(1.0), 1.0), (inf, inf), (inf[::-1], inf),
        (inf.astype(np.float32), 1.0), (np.array([1, 0, 3]), np.array([True, False, True])),
    ]  # fmt: skip
    for x, y in pairs:
        _check(f, closeness, x, y)


# Empty lists as arrays, math.trunc of a bool -------------------------------------------------


def empty_arrays(x):
    return (
        np.array([]),
        np.array([], dtype=np.int32),
        np.array([[], []], dtype=np.uint8),
        x[np.array([], dtype=np.int64)],
        x[np.array([], dtype=np.int64), None],
    )


def truncations(x):
    return math.trunc(x), math.floor(x), math.ceil(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_lists_and_truncated_bools(backend):
    # np.array([]) was refused ("tuple index 0 out of range for ()"), so was indexing with an
    # empty index array; math.trunc(True) was True (Python's 1).
    _check(myia(empty_arrays, backend=backend), empty_arrays, np.arange(6.0).reshape(3, 2))
    f = myia(truncations, backend=backend)
    for x in [True, False, 3, -2.5]:
        _check(f, truncations, x)


# min and max of NumPy numbers ----------------------------------------------------------------


def extrema(x, y):
    return min(x, y), max(x, y), min(y, x), max(y, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_min_max_of_numpy_numbers_compare_as_python(backend):
    # min(np.float64(0.0), np.float64(nan)) was nan (np.minimum's): Python's min keeps the
    # first argument unless the second is smaller, so a NaN second is skipped.
    f = myia(extrema, backend=backend)
    nan = np.float64(np.nan)
    for x, y in [(np.float64(0.0), nan), (np.float32(1.5), np.float32(np.nan)), (nan, 2.0),
                 (np.float64(-0.0), np.float64(0.0)), (np.int32(-7), np.int32(3))]:  # fmt: skip
        got, expected = f(x, y), extrema(x, y)
        for g, e in zip(got, expected):
            assert np.asarray(g).dtype == np.result_type(x, y), (x, y, got)
            assert np.array_equal(g, e, equal_nan=True), (x, y, got, expected)
            assert np.signbit(g) == np.signbit(e), (x, y, got, expected)


def test_min_max_of_numpy_numbers_gradient():
    def loss(x, y):
        return max(x, y) * 2.0 + min(x, y) * 3.0 + max(np.float64(0.5), x * y)

    check_grad(loss, np.float64(1.5), np.float64(-0.5))
    check_grad(loss, np.float64(-1.5), np.float64(0.7))


# The median of an empty axis -----------------------------------------------------------------


def medians(x):
    return np.median(x), np.median(x, axis=0), np.median(x, axis=-1, keepdims=True)


def quantile_of_rows(x):
    return np.quantile(x, 0.5, axis=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_median_of_an_empty_axis_is_nan(backend):
    # np.median of an empty axis crashed in the generated code (IndexError: cannot do a
    # non-empty take from an empty axes); NumPy's is NaN, in the dtype of the mean.
    f = myia(medians, backend=backend)
    for x in [np.zeros((0, 3)), np.zeros((2, 0), np.uint8), np.zeros((0, 2), np.float32)]:
        _check(f, medians, x)
    _check(myia(quantile_of_rows, backend=backend), quantile_of_rows, np.zeros((0, 3)))


# np.nan_to_num of integers, float16 and Python numbers ---------------------------------------


def nan_to_num(x):
    return np.nan_to_num(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nan_to_num_keeps_the_dtype(backend):
    # Of an int32 array it was float64 (NumPy's: the array unchanged), of float16 infinities
    # inf (float16's largest is 65504), of a Python float a Python float (NumPy's float64).
    f = myia(nan_to_num, backend=backend)
    for x in [np.array([-3, 0, 7], np.int32), np.array([True, False]), 3, math.inf,
              np.array([np.nan, np.inf, -np.inf, 1.5], np.float16),
              np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)]:  # fmt: skip
        _check(f, nan_to_num, x)

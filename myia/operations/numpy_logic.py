"""NumPy's tests, comparisons, logic and bit operations, written in Myia's Python subset.

The named comparison ufuncs (``np.less``...) and bitwise ones (``np.bitwise_and``,
``np.left_shift``, ``np.invert``...) are the primitives of the operators ``< & << ~``;
``np.any``/``np.all``, ``np.array_equal`` and ``np.array_equiv`` reduce tests to a truth value
(shapes compared at compile time); ``np.isnan``, ``np.isinf``, ``np.isfinite``,
``np.signbit``, ``np.isclose`` test values elementwise, and ``np.nan_to_num`` and
``np.heaviside`` replace special values. None has a derivative (a boolean or a step) but
``np.fabs`` and ``np.nan_to_num``. `MAPPING` says what the NumPy names mean; `mapping.py`
merges it (through `scalar_forms.numpy_ufunc` for the ufuncs: of Python numbers, NumPy scalars, as
NumPy computes them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..primitives import P
from . import lib
from .ops import StaticOperation
from .scalar_forms import numpy_scalar

# Reductions to a truth value ------------------------------------------------------------------


def np_any(a, axis=None, keepdims=False):
    """``np.any`` and ``a.any``."""
    return P.reduce_sum(a != 0, axis, keepdims, None) > 0


def np_all(a, axis=None, keepdims=False):
    """``np.all`` and ``a.all``."""
    return P.reduce_sum(a == 0, axis, keepdims, None) == 0


def np_array_equal(a1, a2, equal_nan=False):
    """``np.array_equal``: the same shape and the same elements, a Python bool.

    Shapes are known at compile time: of different shapes, the constant False (the elements
    are not compared). With `equal_nan`, NaNs at the same places are equal. As NumPy makes
    them arrays, Python numbers are NumPy's (``array_equal(np.float32(1), 1 + 2**-52)`` is
    False: compared in float64).
    """
    a1 = numpy_scalar(a1)
    a2 = numpy_scalar(a2)
    if not same_shape(P.shape(a1), P.shape(a2)):
        return False
    eq = a1 == a2
    if equal_nan:
        eq = eq | ((a1 != a1) & (a2 != a2))
    return bool(np_all(eq))


def np_array_equiv(a1, a2):
    """``np.array_equiv``: shapes that broadcast together and equal elements, a Python bool.

    Shapes are known at compile time: where they do not broadcast, the constant False.
    """
    a1 = numpy_scalar(a1)
    a2 = numpy_scalar(a2)
    if not broadcast_together(P.shape(a1), P.shape(a2)):
        return False
    return bool(np_all(a1 == a2))


def _broadcast_together(s1: Any, s2: Any) -> Any:
    """Whether shapes `s1` and `s2` (constants) broadcast together, a constant."""
    try:
        np.broadcast_shapes(s1, s2)
    except (ValueError, TypeError):
        return lib.false_2
    return lib.true_2


def _same_shape(s1: Any, s2: Any) -> Any:
    """Whether shapes `s1` and `s2` (constants) are the same, a constant."""
    return lib.true_2 if tuple(s1) == tuple(s2) else lib.false_2


broadcast_together = StaticOperation("broadcast_together", _broadcast_together, static=(0, 1))
same_shape = StaticOperation("same_shape", _same_shape, static=(0, 1))


# Elementwise tests ----------------------------------------------------------------------------


def np_isnan(x):
    """``np.isnan``."""
    return P.ne(x, x)


def np_isinf(x):
    """``np.isinf``."""
    return P.abs_(x) == np.inf


def np_isfinite(x):
    """``np.isfinite``."""
    return P.abs_(x) < np.inf


def np_signbit(x):
    """``np.signbit``: whether the sign bit is set, of ``-0.0`` and of a negative NaN too.

    ``copysign(1, x)`` carries `x`'s sign bit; integers and booleans are compared in NumPy's
    float for them (float16 for int8 and bool), where the sign is the integer's.
    """
    return P.copysign(1.0, x) < 0


def np_logical_xor(x1, x2):
    """``np.logical_xor``: whether exactly one of the operands is true (not zero)."""
    return P.logical_not(x1) != P.logical_not(x2)


def np_fabs(x):
    """``np.fabs``: the absolute value in NumPy's float for `x` (float16 for int8 and bool)."""
    return P.abs_(P.astype(x, P.dtype_of(P.sqrt(x))))


_INF = float("inf")


def np_isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``np.isclose``, as NumPy 2's: equal infinities are close, NaN only with `equal_nan`.

    `b` is made a float (``y * 1.0``: booleans and integers as float64); a NumPy bool of
    numbers, as NumPy's comparisons give (never a Python bool).
    """
    y = b * 1.0
    close = (P.abs_(a - y) <= atol + rtol * P.abs_(y)) & (P.abs_(y) < _INF) | (a == y)
    if equal_nan:
        close = close | ((a != a) & (y != y))
    if isinstance(close, bool):
        return P.astype(close, "bool")
    return close


def np_allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``np.allclose``: whether every pair is close (`np_isclose`), a Python bool."""
    return bool(np_all(np_isclose(a, b, rtol, atol, equal_nan)))


# Special values replaced ----------------------------------------------------------------------


def np_nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``np.nan_to_num``: nan and infinities replaced (by the dtype's largest finite values).

    Integers and booleans are unchanged; a Python number is made NumPy's first, as NumPy does.
    """
    x = numpy_scalar(x)
    if not np.issubdtype(P.dtype_of(x), np.inexact):
        return x + P.zeros((), P.dtype_of(x))
    one = P.ones((), P.dtype_of(x))
    f32 = P.where(one + 1e-4 == one, 65504.0, 3.4028234663852886e38)  # float16's or float32's
    big = P.where(one + 1e-10 == one, f32, 1.7976931348623157e308)
    hi = big if posinf is None else posinf
    lo = -big if neginf is None else neginf
    return P.where(x != x, nan, P.where(x == np.inf, hi, P.where(x == -np.inf, lo, x)))


def np_heaviside(x1, x2):
    """``np.heaviside``: 0 below zero, `x2` at zero, 1 above, NaN at NaN (no derivative in `x1`).

    In NumPy's float for the pair, as its other math functions (float16 for int8 and bool).
    """
    dt = P.dtype_of(P.atan2(x1, x2))
    x1 = P.astype(x1, dt)  # (NumPy casts both, a Python int too: ``heaviside(uint8, -2)``)
    x2 = P.astype(x2, dt)
    return P.astype(P.where(x1 < 0, 0.0, P.where(x1 > 0, 1.0, P.where(x1 != x1, x1, x2))), dt)


MAPPING: dict[Any, Any] = {
    np.any: np_any,
    np.all: np_all,
    np.array_equal: np_array_equal,
    np.array_equiv: np_array_equiv,
    np.isnan: np_isnan,
    np.isinf: np_isinf,
    np.isfinite: np_isfinite,
    np.signbit: np_signbit,
    np.isclose: np_isclose,
    np.allclose: np_allclose,
    np.nan_to_num: np_nan_to_num,
    np.heaviside: np_heaviside,
    np.fabs: np_fabs,
    np.logical_xor: np_logical_xor,
    np.less: P.lt,
    np.less_equal: P.le,
    np.greater: P.gt,
    np.greater_equal: P.ge,
    np.equal: P.eq,
    np.not_equal: P.ne,
    np.bitwise_and: P.bitwise_and,
    np.bitwise_or: P.bitwise_or,
    np.bitwise_xor: P.bitwise_xor,
    np.invert: P.invert,  # (np.bitwise_not is np.invert)
    np.left_shift: P.left_shift,
    np.right_shift: P.right_shift,
}

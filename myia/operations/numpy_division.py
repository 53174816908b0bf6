"""NumPy's remainders, reciprocals and NaN-aware extrema, written in Myia's Python subset.

``np.remainder`` (``np.mod``) and ``np.floor_divide`` are Python's ``%`` and ``//`` (the
primitives; ``np.divmod`` both), ``np.reciprocal`` is ``1 / x`` (of integers, NumPy's integer
division), ``np.fmod`` the remainder with the sign of the dividend (C's), ``np.fmax`` and
``np.fmin`` the extrema that ignore a NaN operand, ``np.count_nonzero`` a sum of a test.
`MAPPING` says what the NumPy names mean; `mapping.py` merges it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..primitives import P


def np_remainder(x1, x2):
    """``np.remainder`` and ``np.mod``: the remainder with the sign of the divisor."""
    return P.mod(x1, x2)


def np_floor_divide(x1, x2):
    """``np.floor_divide``: the quotient rounded towards minus infinity."""
    return P.floordiv(x1, x2)


def np_divmod(x1, x2):
    """``np.divmod``: ``(np.floor_divide(x1, x2), np.remainder(x1, x2))``."""
    return P.floordiv(x1, x2), P.mod(x1, x2)


def np_reciprocal(x):
    """``np.reciprocal``: ``1 / x`` of floats; of integers, NumPy's integer division.

    ``np.reciprocal(2)`` is 0 and ``np.reciprocal(-1)`` is -1, in the integer's dtype (int8 for
    booleans), as NumPy's C division of 1 by each element truncates; 0 at 0 (NumPy's value
    there is undefined, with a warning).
    """
    if np.issubdtype(P.dtype_of(x), np.inexact):
        return 1.0 / x
    a = P.astype(x, np.int8) if P.dtype_of(x) == np.bool_ else x
    one = P.ones((), P.dtype_of(a))
    return P.where(a == 1, one, P.where(a == -1, -one, one - one))


def np_fmod(x1, x2):
    """``np.fmod``: the remainder with the sign of the dividend, exact (as C's ``fmod``).

    Of floats, ``|x1| % |x2|`` is exact (Python's and NumPy's remainder of positive numbers
    is C's), and takes `x1`'s sign, a zero too (``x1 * 0``: ``fmod(-0.0, 3.0)`` is ``-0.0``).
    Of integers (and booleans, as int8), the absolute value of the most negative integer
    overflows, so the remainder is Python's (the divisor's sign, never overflowing), less
    the divisor where it is not zero and the signs differ: ``fmod(-2**31, 3)`` is -2.
    """
    dt = P.dtype_of(x1 + x2)
    if np.issubdtype(dt, np.inexact):
        x1 = P.astype(x1, dt)  # (before abs: that of an integer may overflow)
        x2 = P.astype(x2, dt)
        r = P.mod(P.abs_(x1), P.abs_(x2))
        return P.where(r == 0, x1 * 0, P.where(x1 < 0, -r, r))
    if dt == np.bool_:
        x1 = P.astype(x1, np.int8)
        x2 = P.astype(x2, np.int8)
    r = P.mod(x1, x2)
    return P.where(r == 0, r, P.where((x1 < 0) == (x2 < 0), r, r - x2))


def np_fmax(x1, x2):
    """``np.fmax``: the larger, or the operand that is not NaN (NaN only where both are)."""
    return P.where(x2 != x2, x1, P.where(x1 != x1, x2, P.maximum(x1, x2)))


def np_fmin(x1, x2):
    """``np.fmin``: the smaller, or the operand that is not NaN (NaN only where both are)."""
    return P.where(x2 != x2, x1, P.where(x1 != x1, x2, P.minimum(x1, x2)))


def np_count_nonzero(a, axis=None, keepdims=False):
    """``np.count_nonzero``: how many elements are not zero (along `axis`)."""
    return P.reduce_sum(a != 0, axis, keepdims, None)


MAPPING: dict[Any, Any] = {
    np.remainder: np_remainder,
    np.floor_divide: np_floor_divide,
    np.divmod: np_divmod,
    np.fmod: np_fmod,
    np.reciprocal: np_reciprocal,
    np.fmax: np_fmax,
    np.fmin: np_fmin,
    np.count_nonzero: np_count_nonzero,
}

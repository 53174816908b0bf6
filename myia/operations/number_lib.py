"""Python's functions of numbers, written in Myia's Python subset: ``math``'s, ``divmod``, ``pow``.

``math``'s functions convert their arguments to Python floats first (`math_float`), as
``math`` does, and raise Python's errors ("math domain error"); ``pow(a, b, mod)`` of ints is
Python's modular power. `mapping.py` says which Python function each one is.
"""

from __future__ import annotations

import numpy as np

from ..primitives import P


def divmod_(a, b):
    """``divmod(a, b)``: ``(a // b, a % b)``, with Python's error for a float divisor 0.

    Of an array or a NumPy number, NumPy's ``np.divmod``: ``inf`` and ``nan`` there.
    """
    if _python_number(a) and _python_number(b):
        if (isinstance(a, float) or isinstance(b, float)) and b == 0:
            raise ZeroDivisionError("float divmod()")
    return a // b, a % b


def _python_number(x):
    return isinstance(x, (bool, int, float)) and not isinstance(x, (np.generic, np.ndarray))


def pow_no_modulus(base, exp, mod):
    """``pow(base, exp, None)``: ``base ** exp``."""
    return base**exp


def pow_mod(base, exp, mod):
    """``pow(base, exp, mod)`` of ints: Python's, by squaring (a loop over `exp`'s bits).

    The result has `mod`'s sign (or is 0), as ``%``; a negative `exp` takes the inverse of
    `base` modulo `mod` first (Python's ValueError where there is none), and `mod` 0 raises
    Python's ValueError.
    """
    if mod == 0:
        raise ValueError("pow() 3rd argument cannot be 0")
    m = abs(mod)
    b = base % m
    if exp < 0:
        b = _inverse_mod(b, m)
        exp = -exp
    r = 1 % m
    while exp > 0:
        if exp % 2 == 1:
            r = r * b % m
        b = b * b % m
        exp = exp // 2
    if mod < 0 and r != 0:
        return r - m
    return r


def _inverse_mod(a, m):
    """The inverse of `a` (in [0, m)) modulo `m` > 0, by Euclid's extended algorithm."""
    r0, r1 = m, a
    s0, s1 = 0, 1
    while r1 != 0:
        q = r0 // r1
        r0, r1 = r1, r0 - q * r1
        s0, s1 = s1, s0 - q * s1
    if r0 != 1:
        raise ValueError("base is not invertible for the given modulus")
    return s0 % m


def math_float(x):
    """The argument of a ``math`` function: a Python float, as ``math`` converts it.

    ``math.sin(np.float32(2.0))`` computes in double precision and returns a float. A Python
    float is used as it is; an array is converted as Python converts it (``math.sin`` of an
    array of several elements is Python's TypeError, at compile time).
    """
    if isinstance(x, float) and not isinstance(x, np.generic):
        return x
    return P.to_float(x)


def math_function(prim):
    """``math``'s function computing `prim` on floats (its result is a Python float)."""

    def math_fn(x):
        return prim(math_float(x))

    return math_fn


def math_function2(prim):
    """``math``'s function of two floats computing `prim` (``math.atan2``, ``math.pow``)."""

    def math_fn(x, y):
        return prim(math_float(x), math_float(y))

    return math_fn


def math_pow(x, y):
    """``math.pow``: ``x ** y`` of floats.

    Python's ``ValueError`` (math domain error) where ``**`` would give a complex number (a
    finite negative base to a finite fractional power) or divide by zero (zero to a finite
    negative power).
    """
    x = math_float(x)
    y = math_float(y)
    if abs(y) < _INF and ((x == 0.0 and y < 0.0) or (-_INF < x < 0.0 and y % 1.0 != 0.0)):
        raise ValueError("math domain error")
    return P.pow_(x, y)


def math_log(x, base=None):
    """``math.log(x)``, and ``math.log(x, base)``: ``log(x) / log(base)``, as Python's."""
    if base is None:
        return P.log(math_float(x))
    return P.log(math_float(x)) / P.log(math_float(base))


def math_fmod(x, y):
    """``math.fmod``: C's remainder of two floats (NaN where either is NaN).

    Python's ``ValueError`` (math domain error) for a zero divisor or an infinite dividend.
    """
    x = math_float(x)
    y = math_float(y)
    if x != x or y != y:
        return x + y
    if y == 0.0 or abs(x) == _INF:
        raise ValueError("math domain error")
    return _fmod_of_floats(x, y)


def _fmod_of_floats(x, y):
    """C's ``fmod`` of two finite floats, `y` not zero (`numpy_division.np_fmod`'s)."""
    r = P.mod(P.abs_(x), P.abs_(y))
    return P.where(r == 0, x * 0, P.where(x < 0, -r, r))


def math_isnan(x):
    x = math_float(x)
    return x != x


def math_isinf(x):
    return abs(math_float(x)) == _INF


def math_isfinite(x):
    return abs(math_float(x)) < _INF


_INF = float("inf")


def math_floor(x):
    """``math.floor``: an int; a Python int (or bool) is itself, exactly (not through a float)."""
    if isinstance(x, np.integer):  # as Python's: through a float (NumPy's has no __floor__)
        return P.to_int(P.floor(P.to_float(x)))
    if isinstance(x, int):
        return P.to_int(x)
    return P.to_int(P.floor(x))


def math_ceil(x):
    """``math.ceil``: an int; a Python int (or bool) is itself, exactly (not through a float)."""
    if isinstance(x, np.integer):  # as Python's: through a float (NumPy's has no __ceil__)
        return P.to_int(P.ceil(P.to_float(x)))
    if isinstance(x, int):
        return P.to_int(x)
    return P.to_int(P.ceil(x))


def math_trunc(x):
    """``math.trunc``: the integer towards zero (an int: ``math.trunc(True)`` is 1)."""
    if isinstance(x, bool):
        return P.to_int(x)
    if isinstance(x, int):
        return x
    return P.to_int(P.where(x < 0, P.ceil(x), P.floor(x)))


# ``hypot`` correctly rounded -------------------------------------------------------------------

_SPLIT = 134217729.0  # 2 ** 27 + 1: Veltkamp's splitting of a float64 into two halves


def _two_product(a, b):
    """``a * b`` and its rounding error, exactly (Dekker's product, without an FMA)."""
    p = a * b
    c = _SPLIT * a
    ah = c - (c - a)
    al = a - ah
    c = _SPLIT * b
    bh = c - (c - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def hypot_float64(x, y):
    """``sqrt(x * x + y * y)`` of float64s (or arrays), correctly rounded, as Python's ``hypot``.

    Scaled by a power of two (exactly) so that the squares neither overflow nor underflow;
    the sum of the squares is computed exactly (double-double), its square root corrected
    by one Newton step on that exact sum. ``inf`` where either is infinite (even with a NaN),
    NaN where either is NaN, as C and Python. (``m * sqrt(1 + (n / m) ** 2)`` was off by
    one ulp on a third of the inputs, and ``hypot(1.0, nan)`` was ``sqrt(2)``.)
    """
    ax = P.abs_(x)
    ay = P.abs_(y)
    finite = (ax < _INF) & (ay < _INF)
    # (Infinities and NaNs are computed on zeros: ``inf - inf`` would warn.)
    hi = P.where(finite, P.where(ax >= ay, ax, ay), 0.0)
    lo = P.where(finite, P.where(ax >= ay, ay, ax), 0.0)
    scale = P.where(hi > 2.0**500, 2.0**-600, P.where(hi < 2.0**-450, 2.0**600, 1.0))
    a = hi * scale
    b = lo * scale
    p1, e1 = _two_product(a, a)
    p2, e2 = _two_product(b, b)
    s = p1 + p2  # the exact sum: s + t
    bv = s - p1
    t = ((p1 - (s - bv)) + (p2 - bv)) + (e1 + e2)
    h = P.sqrt(s + t)
    hh, he = _two_product(h, h)
    safe = P.where(h > 0.0, h, 1.0)
    h = P.where(h > 0.0, h + (((s - hh) - he) + t) / (2.0 * safe), h)
    # Not finite: ``inf`` where either is infinite (even with a NaN), else the NaN.
    nan = P.where(ax == ax, ay, ax)
    return P.where(finite, h / scale, P.where((ax == _INF) | (ay == _INF), _INF, nan))

"""``math``'s exact functions, written in Myia's Python subset, computing as CPython does.

``math.frexp`` and ``math.ldexp`` (CPython's own, the primitives of
`myia.primitives.float_parts`), ``math.modf``, ``math.fsum`` (Shewchuk's exactly rounded sum,
CPython's algorithm and errors), ``math.isqrt`` (Newton's method on ints) and ``math.dist``
(the square root of an exact sum of squares, correctly rounded). Each takes its arguments as
``math`` does (`number_lib.math_float`) and raises Python's errors with Python's messages.
`mapping.py` says which Python function each one is.
"""

from __future__ import annotations

from ..primitives import P
from .number_lib import _INF, _two_product, math_float


def _integer(n):
    if isinstance(n, float):
        raise TypeError("'float' object cannot be interpreted as an integer")
    return n


def math_frexp(x):
    """``math.frexp``: ``(m, e)`` with ``x == m * 2 ** e`` and ``0.5 <= abs(m) < 1``."""
    return P.frexp(math_float(x))


def math_ldexp(x, i):
    """``math.ldexp``: ``x * 2 ** i`` (Python's OverflowError "math range error" past floats)."""
    if isinstance(i, float):
        raise TypeError("Expected an int as second argument to ldexp.")
    return P.ldexp(math_float(x), int(i))


def math_modf(x):
    """``math.modf``: ``(fractional part, integer part)``, both with the sign of `x`."""
    x = math_float(x)
    if abs(x) == _INF:
        return P.copysign(0.0, x), x
    if x != x:
        return x, x
    if x < 0.0:
        whole = P.ceil(x)
    else:
        whole = P.floor(x)
    return P.copysign(x - whole, x), P.copysign(whole, x)  # (-0.3: -0.0, as C's)


def _finite(x):
    return abs(x) < _INF


def math_fsum(xs):
    """``math.fsum``: the exactly rounded sum of the floats of `xs`, as CPython computes it.

    The partial sums are kept exactly as a list of floats that do not overlap (Shewchuk's
    algorithm); infinities and NaNs are summed apart, and a finite sum that overflows on the
    way is Python's ``OverflowError``, ``inf + -inf`` its ``ValueError``.
    """
    partials = []
    special = 0.0
    inf_sum = 0.0
    for v in xs:
        x = math_float(v)
        xsave = x
        kept = []
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo != 0.0:
                kept = kept + [lo]
            x = hi
        if x != 0.0:
            if _finite(x):
                kept = kept + [x]
            else:
                if _finite(xsave):
                    raise OverflowError("intermediate overflow in fsum")
                if abs(xsave) == _INF:
                    inf_sum = inf_sum + xsave
                special = special + xsave
                kept = []
        partials = kept
    if special != 0.0 or special != special:
        if inf_sum != inf_sum:
            raise ValueError("-inf + inf in fsum")
        return special
    return _sum_partials(partials)


def _sum_partials(partials):
    """The float nearest the exact sum of `partials` (increasing, not overlapping)."""
    n = len(partials)
    hi = 0.0
    lo = 0.0
    if n > 0:
        n = n - 1
        hi = partials[n]
        while n > 0:
            x = hi
            n = n - 1
            y = partials[n]
            hi = x + y
            lo = y - (hi - x)
            if lo != 0.0:
                break
        # Half-way cases: round as the partials left below would tip it.
        if n > 0 and (
            (lo < 0.0 and partials[n - 1] < 0.0) or (lo > 0.0 and partials[n - 1] > 0.0)
        ):
            y = lo * 2.0
            x = hi + y
            if y == x - hi:
                hi = x
    return hi


def math_isqrt(n):
    """``math.isqrt``: the largest int whose square is at most `n` (Python's errors)."""
    n = _integer(n)
    if n < 0:
        raise ValueError("isqrt() argument must be nonnegative")
    if n == 0:
        return 0 * n
    x = n + 0
    y = (x + 1) // 2
    while y < x:
        x = y
        y = (x + n // x) // 2
    return x


def math_dist(p, q):
    """``math.dist``: the Euclidean distance between points `p` and `q` (sequences of floats).

    Scaled by a power of two (exactly) so that the squares neither overflow nor underflow,
    their sum is computed exactly (a double-double), its square root corrected by a Newton
    step on that sum: correctly rounded, as CPython's. ``inf`` where a coordinate differs
    by an infinity (even with a NaN), NaN where one is NaN.
    """
    if len(p) != len(q):
        raise ValueError("both points must have the same number of dimensions")
    diffs = [abs(math_float(a) - math_float(b)) for a, b in zip(p, q)]
    top = 0.0
    nan = False
    for d in diffs:
        if d != d:
            nan = True
        elif d > top:
            top = d
    if top == _INF:
        return _INF
    if nan:
        return top * float("nan")
    if top == 0.0 or len(diffs) <= 1:
        return top
    if top > 2.0**500:
        scale = 2.0**-600
    elif top < 2.0**-450:
        scale = 2.0**600
    else:
        scale = 1.0
    s = 0.0
    t = 0.0
    for d in diffs:
        a = d * scale
        sq, err = _two_product(a, a)
        total = s + sq
        bv = total - s
        t = t + (((s - (total - bv)) + (sq - bv)) + err)
        s = total
    h = P.sqrt(s + t)
    hh, he = _two_product(h, h)
    h = h + (((s - hh) - he) + t) / (2.0 * h)
    return h / scale

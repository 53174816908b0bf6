"""Everyday Python in Myia's subset: ``append``, ``* n``, ``math.gcd``, ``sorted``...

``xs.append(v)`` on a list being built, ``tuple * n`` and ``list * n``, ``math.isclose``,
``math.factorial``, ``math.comb``, ``math.perm``, ``math.gcd``, ``math.lcm``, ``math.prod``,
``math.degrees``, ``math.radians``, ``sorted`` and ``slice(...)``.

`mapping.py` says which Python function each one is; ``xs.append(v)`` is rewritten by the
frontend (`myia.frontend.appends`) into a call of `list_append` (through `ops.list_append`).
"""

from __future__ import annotations

from ..primitives import P
from .lib import DictKeys
from .number_lib import _INF, math_float
from .ops import MUL_SEQUENCES, refuse


def slice1(stop):
    """``slice(stop)``."""
    return P.make_slice(None, stop, None)


def slice2(start, stop):
    """``slice(start, stop)``."""
    return P.make_slice(start, stop, None)


def slice3(start, stop, step):
    """``slice(start, stop, step)``."""
    return P.make_slice(start, stop, step)


def list_append(lst, value):
    """The list `lst` and then `value` (``lst.append(value)``, `lst` rebound to it)."""
    return P.list_concat(lst, [value])


def tuple_repeat(t, n):
    """``t * n`` of a tuple and an int known at compile time (empty where ``n <= 0``)."""
    if not P.known(n):
        refuse(
            "tuple * n: n must be known at compile time (a tuple's length is); "
            "for a length known at run time, use a list: [x] * n"
        )
    out = ()
    for _ in P.range_tuple(0, n, 1):  # a tuple of constants: the loop over it is unrolled
        out = out + t
    return out


def tuple_repeat_r(n, t):
    """``n * t`` of an int known at compile time and a tuple."""
    return tuple_repeat(t, n)


def list_repeat(xs, n):
    """``xs * n`` of a list and an int: a loop (`n` may be known at run time only)."""
    out = xs[:0]
    for _ in range(n):
        out = out + xs
    return out


def list_repeat_r(n, xs):
    """``n * xs`` of an int and a list."""
    return list_repeat(xs, n)


def math_isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0):
    """``math.isclose``: Python's test, on floats."""
    a = math_float(a)
    b = math_float(b)
    if rel_tol < 0.0 or abs_tol < 0.0:
        raise ValueError("tolerances must be non-negative")
    if a == b:
        return True
    if abs(a) == _INF or abs(b) == _INF:
        return False
    diff = abs(b - a)
    return diff <= abs(rel_tol * b) or diff <= abs(rel_tol * a) or diff <= abs_tol


def _integer(n):
    if isinstance(n, float):
        raise TypeError("'float' object cannot be interpreted as an integer")
    return n


def math_factorial(n):
    """``math.factorial`` of an int: Python's errors, and Python's unbounded ints (25! too)."""
    n = _integer(n)
    if n < 0:
        raise ValueError("factorial() not defined for negative values")
    r = 1
    for i in range(2, n + 1):
        r = r * i
    return r


def _non_negative(n, name):
    n = _integer(n)
    if n < 0:
        raise ValueError(name + " must be a non-negative integer")
    return n


def math_comb(n, k):
    """``math.comb``: the number of ways to choose `k` of `n` items (0 where ``k > n``).

    Each partial product ``C(n - k + i, i)`` is an integer, so the floor divisions are exact.
    """
    n = _non_negative(n, "n")
    k = _non_negative(k, "k")
    if k > n:
        return 0
    k = min(k, n - k)
    r = 1
    for i in range(1, k + 1):
        r = r * (n - k + i) // i
    return r


def math_perm(n, k=None):
    """``math.perm``: the number of ordered choices of `k` of `n` items (``n!`` for no `k`)."""
    n = _non_negative(n, "n")
    if k is None:
        return math_factorial(n)
    k = _non_negative(k, "k")
    if k > n:
        return 0
    r = 1
    for i in range(n - k + 1, n + 1):
        r = r * i
    return r


def math_gcd(*integers):
    """``math.gcd`` of any number of ints (0 for none), by Euclid's algorithm."""
    g = 0
    for k in integers:
        a = abs(g)
        b = abs(_integer(k))
        while b != 0:
            a, b = b, a % b
        g = a
    return g


def math_lcm(*integers):
    """``math.lcm`` of any number of ints (1 for none; 0 if one is 0), always nonnegative."""
    m = 1
    for k in integers:
        b = abs(_integer(k))
        if m == 0 or b == 0:
            m = 0
        else:
            m = m // math_gcd(m, b) * b
    return m


def math_prod(xs, *, start=1):
    """``math.prod``: ``start`` times each element of `xs` in turn (an int for ints)."""
    r = start
    for x in xs:
        r = r * x
    return r


_RAD_TO_DEG = 180.0 / 3.141592653589793  # (CPython's constants: the same products)
_DEG_TO_RAD = 3.141592653589793 / 180.0


def math_degrees(x):
    """``math.degrees``: radians to degrees, as CPython computes it."""
    return math_float(x) * _RAD_TO_DEG


def math_radians(x):
    """``math.radians``: degrees to radians, as CPython computes it."""
    return math_float(x) * _DEG_TO_RAD


def sorted_(xs, *, key=None, reverse=False):
    """``sorted``: a new list, by insertion (stable, as Python's; `reverse` keeps it stable).

    Strings known at compile time (a dict's keys: ``sorted(d)``, ``sorted(d.keys())``) are
    sorted at compile time, into a list a loop reads as constants (``d[k]`` for each).
    """
    if key is None:
        known = P.sorted_constants(_strings(xs), reverse)
        if known is not None:
            return known
    out = []
    for x in xs:
        out = _insert(out, x, key, reverse)
    return out


def _strings(xs):
    """What ``sorted`` sorts of `xs`: a dict's keys (of the dict or of its ``keys()``)."""
    if isinstance(xs, dict):
        return P.dict_keys(xs)
    if isinstance(xs, DictKeys):
        return xs.items
    return xs


def _key(key, x):
    if key is None:
        return x
    return key(x)


def _insert(out, x, key, reverse):
    kx = _key(key, x)
    k = 0
    n = len(out)
    while k < n and not _before(kx, _key(key, out[k]), reverse):
        k = k + 1
    return out[:k] + [x] + out[k:]


def _before(a, b, reverse):
    if reverse:
        return a > b
    return a < b


MUL_SEQUENCES.update(
    {
        (tuple, int): tuple_repeat,
        (int, tuple): tuple_repeat_r,
        (list, int): list_repeat,
        (int, list): list_repeat_r,
    }
)

"""Builtins and NumPy scalar types with several forms, written in Myia's Python subset.

``max(a, b)`` and ``min(a, b)`` of numbers (exact with NumPy integers and Python ints),
``max(*xs)``, NumPy's scalar types called on numbers (``np.float32(x)``, checked as NumPy
checks them) and NumPy's ufuncs of numbers. `mapping.py` says which Python function each
one is.
"""

from __future__ import annotations

import numpy as np

from ..primitives import P
from .lib import max_iter, min_iter
from .ops import myia_hasnext, myia_iter, myia_next, refuse


def max2(a, b):
    """Python's ``max(a, b)`` of NumPy numbers: `b` if ``b > a``, else `a` (NaN first stays)."""
    return P.where(b > a, b, a)


def min2(a, b):
    """Python's ``min(a, b)`` of NumPy numbers: `b` if ``b < a``, else `a` (NaN first stays)."""
    return P.where(b < a, b, a)


def max2_int64(a, b):
    """``max(a, b)`` of a NumPy integer narrower than int64 and a Python int, as int64s.

    Python compares them exactly and returns one of them: the Python int is not wrapped
    around into the NumPy dtype (``max(np.uint8(3), 300)`` is 300, ``min(np.uint8(3), -1)``
    is -1).
    """
    return max2(P.astype(a, "int64"), P.astype(b, "int64"))


def min2_int64(a, b):
    """``min(a, b)`` of a NumPy integer narrower than int64 and a Python int (`max2_int64`)."""
    return min2(P.astype(a, "int64"), P.astype(b, "int64"))


def max2_uint64(a, b):
    """``max(a, b)`` of a ``np.uint64`` and a Python int: compared exactly, a uint64.

    No dtype holds both: a negative Python int that wins is Python's answer, which Myia
    refuses (NumPy's ``OverflowError``), rather than wrapping it around.
    """
    if b > a:
        return _uint64(b)
    return _uint64(a)


def min2_uint64(a, b):
    """``min(a, b)`` of a ``np.uint64`` and a Python int (`max2_uint64`)."""
    if b < a:
        return _uint64(b)
    return _uint64(a)


def _uint64(x):
    if x < 0:
        raise OverflowError(f"Python integer {x} out of bounds for uint64")
    return P.astype(x, "uint64")


class _NoDefault:
    """The `default` of ``max`` and ``min`` not given (None is a default)."""


def max_n(*xs, key=None, default=_NoDefault):
    """``max(a, b, ...)``, and ``max(xs, key=f, default=d)`` (a keyword makes two arguments)."""
    if len(xs) == 1:
        return _fold(xs[0], key, default, True)
    if default is not _NoDefault:
        raise TypeError("Cannot specify a default for max() with multiple positional arguments")
    if key is None:
        return max_iter(xs)
    return _fold(xs, key, default, True)


def min_n(*xs, key=None, default=_NoDefault):
    """``min(a, b, ...)``, and ``min(xs, key=f, default=d)`` (`max_n`)."""
    if len(xs) == 1:
        return _fold(xs[0], key, default, False)
    if default is not _NoDefault:
        raise TypeError("Cannot specify a default for min() with multiple positional arguments")
    if key is None:
        return min_iter(xs)
    return _fold(xs, key, default, False)


def _fold(xs, key, default, largest):
    """The first element of `xs` whose key no later one beats (Python's ``max``, ``min``)."""
    it = myia_iter(xs)
    if not myia_hasnext(it):
        if default is _NoDefault:
            if largest:
                raise ValueError("max() arg is an empty sequence")
            raise ValueError("min() arg is an empty sequence")
        return default
    best, it = myia_next(it)
    best_key = best if key is None else key(best)
    while myia_hasnext(it):
        x, it = myia_next(it)
        k = x if key is None else key(x)
        if (k > best_key) if largest else (k < best_key):
            best = x
            best_key = k
    return best


def numpy_cast(dtype):
    """``np.float32(x)``... for the dtype named `dtype`.

    A Python number made a NumPy integer is checked as NumPy checks it: ``np.uint8(-3)`` and
    ``np.int8(300.5)`` raise ``OverflowError`` (a float is truncated first, and NaN raises
    ``ValueError``), where a NumPy number or an array is cast (wrapping around).
    """
    integral = np.issubdtype(np.dtype(dtype), np.integer)

    def cast(x):
        if integral and _python_number(x) and not isinstance(x, bool):
            if isinstance(x, float):
                x = int(x)
            return P.zeros((), dtype) + x  # (NumPy's promotion of a Python int raises)
        return P.astype(x, dtype)

    return cast


def numpy_scalar(x):
    """A Python number as the NumPy scalar NumPy makes of it (``bool_``, ``int64``, ``float64``).

    NumPy's functions compute on NumPy scalars: ``np.log(0.0)`` is ``-inf`` (a ``float64``)
    where ``math.log(0.0)`` raises, and ``np.power(-1.0, 0.5)`` is ``nan``, not a complex.
    Other values are returned as they are.
    """
    if isinstance(x, np.generic) or isinstance(x, np.ndarray):
        return x
    if isinstance(x, bool):
        return P.astype(x, "bool")
    if isinstance(x, int):
        return P.astype(x, "int64")
    if isinstance(x, float):
        return P.astype(x, "float64")
    return x


def _python_number(x):
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


#: Why a ufunc's ``out`` (its argument after the inputs: ``np.arctan(y, x)``) is refused.
OUT_REFUSED = (
    "NumPy's out argument is not supported in Myia (arrays are immutable): use the result; "
    "a ufunc's argument after its inputs is its out (np.arctan(y, x) is not np.arctan2(y, x))"
)


def numpy_ufunc(fn, nin):
    """NumPy's ufunc computing `fn` (of `nin` arguments), on Python numbers too.

    Where every argument is a Python number, they are made NumPy scalars first (as NumPy
    does); otherwise NumPy's promotion treats the Python numbers as weak, as `fn` does.
    An ``out`` argument (positional after the inputs, or by keyword) is refused at the
    user's line.
    """
    if nin == 1:

        def ufunc1(x, out=None):
            if out is not None:
                refuse(OUT_REFUSED)
            return fn(numpy_scalar(x))

        return ufunc1

    def ufunc2(x, y, out=None):
        if out is not None:
            refuse(OUT_REFUSED)
        if _python_number(x) and _python_number(y):
            return fn(numpy_scalar(x), numpy_scalar(y))
        return fn(x, y)

    return ufunc2

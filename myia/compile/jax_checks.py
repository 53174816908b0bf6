"""Python's errors in the JAX backend's generated code: conditions flagged, not raised.

XLA computes ``inf`` where Python raises ``ZeroDivisionError``, wraps an int around where
Python's grows, and clamps an index where Python raises ``IndexError``. Each ``check_*`` here
returns the result XLA computed and records (`myia.compile.jax_runtime.check`) the condition
under which Python would raise or compute otherwise: the call then runs again on the host, and
the user gets Python's error at their line (`myia.compile.jax_codegen.flagged` says which
operations are checked).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import jax_lags as lags
from .jax_runtime import _jnp, check, tests

# Python's errors ------------------------------------------------------------------------------


def _finite(x: Any) -> Any:
    return _jnp().isfinite(x)


def check_float(result: Any, *inputs: Any) -> Any:
    """`result` of a Python-float operation, flagged where Python may raise instead.

    Python raises (ZeroDivisionError, ValueError: math domain error, OverflowError) where
    XLA returns ``inf`` or ``nan``. Any result that is not finite is flagged (one test): the
    host runs the call again, and raises Python's error, or returns the same ``inf`` or
    ``nan`` where Python does (``math.exp(math.inf)``).
    """
    return check(~_finite(result), result)


def check_divide(result: Any, a: Any, b: Any) -> Any:
    """`result` of ``a / b`` on Python numbers, flagged where Python raises: `b` is 0.

    Elsewhere Python and XLA compute the same ``inf`` or ``nan`` (an overflow, a ``nan``
    operand). The test reads the operand only: XLA need not compute the quotient twice.
    """
    return check(tests(b).asarray(b) == 0, result)


def check_bounded(result: Any, x: Any) -> Any:
    """`result` of ``math.sin(x)`` or ``math.cos(x)``, flagged where `x` is not finite.

    Python raises on an infinite `x` only; a finite `x` gives a finite result. The test reads
    `x`, not the result: XLA need not compute the function twice.
    """
    return check(~_finite(x), result)


def check_to_int(result: Any, x: Any) -> Any:
    """`result` of ``int(x)`` of a float, flagged where Python's int is not XLA's int64.

    Python raises for ``nan`` and ``inf`` (ValueError, OverflowError), and gives an int past
    int64 for ``abs(x) >= 2 ** 63``; XLA's cast is undefined there. The test reads `x` only.
    """
    jnp = _jnp()
    x = jnp.asarray(x)
    if float(jnp.finfo(x.dtype).max) < 2.0**63:  # float16: 2 ** 63 is no float16
        return check(~_finite(x), result)
    return check(~(jnp.abs(x) < 2.0**63), result)


def check_divisor(result: Any, divisor: Any, dividend: Any = None) -> Any:
    """`result` of an integer division or modulo, flagged where the divisor is 0.

    Where `dividend` is given, also where it is int64's least and the divisor -1: Python's
    quotient ``2 ** 63`` is past int64 (XLA's wraps around).
    """
    xp = tests(divisor, dividend)
    divisor = xp.asarray(divisor)
    flag = divisor == 0
    if dividend is not None:
        flag = flag | ((divisor == -1) & (xp.asarray(dividend) == np.iinfo(np.int64).min))
    return check(flag, result)


def check_exact(result: Any, n: Any) -> Any:
    """`result` of comparing Python int `n` with a float, flagged where `n` is past 2 ** 53.

    Python compares an int and a float exactly; XLA rounds the int to a float first, which
    changes nothing where ``|n| <= 2 ** 53`` (every such int is a float).
    """
    n = tests(n).asarray(n)
    return check((n > 2**53) | (n < -(2**53)), result)


def check_step(result: Any, x: Any, lo: int | None, hi: int | None) -> Any:
    """`result` of ``x + c`` (or ``x - c``, ``c - x``) on Python ints, flagged past int64.

    XLA's int64 wraps around where Python's int goes on: the result fits where
    ``lo <= x <= hi`` (None: a bound int64 always meets). The test reads the operand, one
    comparison, which a loop counter's step has after the loop instead of in each iteration
    (`jax_counted.deferred_flags`).
    """
    xp = tests(x)
    x = xp.asarray(x)
    if hi is not None:
        result = check(xp.greater(x, np.int64(hi)), result)
    if lo is not None:
        result = check(xp.less(x, np.int64(lo)), result)
    return result


def check_power(result: Any, exponent: Any) -> Any:
    """`result` of ``a ** exponent`` of NumPy integers, flagged where NumPy's may differ.

    NumPy raises ``ValueError`` for a negative exponent. XLA's power of integers by an
    exponent it does not know when compiling multiplies six squares (any base but -1, 0 and
    1 overflows by then), where NumPy's wraps around ``a ** 64`` and past: the host runs a
    call with an exponent of 64 or more again.
    """
    xp = tests(exponent)
    e = xp.asarray(exponent)
    if e.dtype.kind == "u":
        return check(xp.any(e >= 64), result)
    return check(xp.any((e < 0) | (e >= 64)), result)


#: Products of at least this size, computed in float64, may be past int64 (`check_int`):
#: the float product errs by less than 2 ** 12 there.
_PRODUCT_BOUND = float(2**63 - 2**13)


def check_int(name: str, result: Any, a: Any, b: Any = None) -> Any:
    """`result` of ``a + b``, ``a - b``, ``a * b``, ``-a``, ``abs(a)`` on Python ints, checked.

    Flagged where Python's result is past int64 (XLA's wraps around there). A sum or
    difference overflowed where its sign differs from both operands' (from `a`'s and not
    `b`'s); a product may have where its float64 value is near 2 ** 63 or past it (a few
    products just below are flagged too: the host computes the same value); ``-a`` and
    ``abs(a)`` where `a` is int64's least.
    """
    xp = tests(a, b)
    with np.errstate(over="ignore"):  # int64 wraps around, as XLA's does
        a = xp.asarray(a, dtype=np.int64)
        if name in ("neg", "abs"):
            return check(a == _INT64_MIN, result)
        b = xp.asarray(b, dtype=np.int64)
        if xp is np:  # known operands: the result computed now, as XLA does
            r = a + b if name == "add" else a - b
        else:
            r = xp.asarray(result, dtype=np.int64)
        if name == "add":
            flag = ((a ^ r) & (b ^ r)) < 0
        elif name == "sub":
            flag = ((a ^ b) & (a ^ r)) < 0
        else:
            product = a.astype(np.float64) * b.astype(np.float64)
            flag = xp.abs(product) >= _PRODUCT_BOUND
    return check(flag, result)


_INT64_MIN = np.iinfo(np.int64).min


def check_index(a: Any, index: Any) -> Any:
    """``a[index]``, flagged where an integer index is out of bounds (Python raises).

    A NumPy array known when tracing (a constant, such as the basis of `jacfwd`) indexed
    by a traced integer (a loop's counter) is read as a JAX array: NumPy's indexing would
    ask the traced integer for its value.
    """
    index = jax_index(index)
    check_bounds(a, index)
    if isinstance(a, np.ndarray) and not _known_index(index):
        a = _jnp().asarray(a)
    return lags.read(a[index], a, index)


def jax_index(index: Any) -> Any:
    """`index` as JAX takes it: a list of indices (``a[[0, 2]]``) as an array, as NumPy does."""
    return np.asarray(index) if type(index) is list else index


def _known_index(index: Any) -> bool:
    """Whether NumPy can index with `index` when tracing (no part of it is traced)."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(
        p is None or p is Ellipsis or isinstance(p, (int, np.integer, np.ndarray, slice))
        for p in parts
    )


def check_take(a: Any, indices: Any, axis: Any, along: bool = False) -> Any:
    """``np.take(a, indices, axis)`` (``np.take_along_axis`` where `along`), flagged.

    Flagged where an index is out of bounds: NumPy raises where XLA's gather clamps.
    """
    jnp = _jnp()
    n = int(np.prod(np.shape(a))) if axis is None else np.shape(a)[axis]
    xp = np if isinstance(indices, (int, np.integer, np.ndarray)) else jnp  # known: NumPy
    i = xp.asarray(indices)
    check(xp.any((i < -n) | (i >= n)), None)
    i = xp.where(i < 0, i + n, i)
    return (jnp.take_along_axis if along else jnp.take)(a, i, axis=axis, mode="clip")


def check_bounds(a: Any, index: Any) -> None:
    """Flag an integer index of `a` out of bounds (XLA clamps it where Python raises)."""
    jnp = _jnp()
    parts = index if isinstance(index, tuple) else (index,)
    # None adds an axis and reads none of `a`'s; ... stands for the axes no index reads.
    axes = [p for p in parts if p is not None]
    dots = [k for k, p in enumerate(axes) if p is Ellipsis]
    if dots:
        k = dots[0]
        axes[k : k + 1] = [slice(None)] * (len(a.shape) - len(axes) + 1)
    for k, i in enumerate(axes):
        if isinstance(i, slice):
            continue
        n = a.shape[k]
        if isinstance(i, (int, np.integer)):
            # A constant index of the source is checked by inference, but not one that the
            # optimizer made constant (``x[t + 1]`` of a loop's first iteration, peeled, at
            # ``t = 0``): flagged here, known when tracing (no status read back if in bounds).
            if not -n <= int(i) < n:
                check(True, None)
            continue
        i = jnp.asarray(i)
        check(jnp.any((i < -n) | (i >= n)), None)

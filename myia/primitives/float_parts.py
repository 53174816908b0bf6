"""A Python float's mantissa and exponent: ``frexp`` and ``ldexp`` (``math``'s).

They are CPython's own functions on Python floats: exact everywhere, subnormal numbers and
``ldexp``'s ``OverflowError`` ("math range error") included, which scaling by powers of two
in XLA (whose arithmetic flushes subnormal numbers to zero on CPUs) would not be. The `jax`
backend runs a program calling them on the host.

Derivatives, written with these primitives so that every order is exact: the mantissa
``m = x * 2 ** -e`` of ``(m, e) = frexp(x)`` has the slope ``2 ** -e`` (``e`` is constant
between powers of two), ``ldexp(x, i) = x * 2 ** i`` the slope ``2 ** i`` in ``x``; the
exponents are ints (no derivative).
"""

from __future__ import annotations

import math

from ..abstract.data import AbstractScalar, AbstractTuple
from ..errors import MyiaTypeError
from ..grad.registry import bprop
from ..infer.registry import infer_rule
from .core import primitive


@primitive
def frexp(x):
    """``math.frexp`` of a Python float: ``(m, e)``, ``x == m * 2 ** e``, ``0.5 <= |m| < 1``."""
    return math.frexp(x)


@primitive
def ldexp(x, i):
    """``math.ldexp`` of a Python float and int: ``x * 2 ** i``, exactly rounded once."""
    return math.ldexp(x, i)


_F64 = AbstractScalar("float64", True)
_I64 = AbstractScalar("int64", True)


def _python_float(x: object, what: str) -> None:
    if not (isinstance(x, AbstractScalar) and x.dtype == "float64" and x.weak):
        raise MyiaTypeError(f"{what} takes a Python float, not {x}")


@infer_rule(frexp)
def _infer_frexp(x):
    _python_float(x, "frexp")
    return AbstractTuple((_F64, _I64))


@infer_rule(ldexp)
def _infer_ldexp(x, i):
    _python_float(x, "ldexp")
    if not (isinstance(i, AbstractScalar) and i.dtype == "int64" and i.weak):
        raise MyiaTypeError(f"ldexp's exponent is a Python int, not {i}")
    return _F64


@bprop(frexp)
def bprop_frexp(x, out, dout):
    return (ldexp(dout[0], -out[1]),)


@bprop(ldexp)
def bprop_ldexp(x, i, out, dout):
    return (ldexp(dout, i), gzeros(i))


from .grad import gzeros  # noqa: E402

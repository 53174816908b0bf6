"""The tangent rules (forward mode, `myia.grad.forward`) of the elementwise primitives.

They mirror the backpropagators that `scalar.py` declares beside each primitive (that module is
near its size limit). The non-differentiable ones are declared there.
"""

from __future__ import annotations

import numpy as np

from ..grad.registry import jvp, linear
from .grad import gzeros
from .scalar import (
    _LN2,
    _LN10,
    _sign_agreement,
    abs_,
    acos,
    acosh,
    add,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    copysign,
    cos,
    cosh,
    exp,
    expm1,
    floor,
    log,
    log1p,
    log2,
    log10,
    log_ieee,
    maximum,
    minimum,
    mod,
    mul,
    neg,
    pow_,
    pow_ieee,
    sign,
    sin,
    sinh,
    sqrt,
    sub,
    tan,
    tanh,
    to_float,
    truediv,
    where,
)

linear(add)
linear(sub)
linear(neg)
linear(to_float)


@jvp(mul)
def jvp_mul(x, y, out, dx, dy):
    return dx * y + x * dy


@jvp(truediv)
def jvp_truediv(x, y, out, dx, dy):
    return (dx - out * dy) / y


@jvp(pow_, pow_ieee)
def jvp_pow(x, y, out, dx, dy):
    if isinstance(y, (int, np.integer)):
        if y == 0:
            return gzeros(out)
        return dx * y * pow_ieee(x, y - 1)
    return dx * y * pow_ieee(x, y - (y != 0)) + dy * out * log_ieee(x + (x == 0))


@jvp(pow_, pow_ieee, zero=1)
def jvp_pow_constant_exponent(x, y, out, dx, dy):
    """``x ** c``: no ``log(x)`` term, which is NaN (or a ValueError) where ``x < 0``."""
    if isinstance(y, (int, np.integer)) and y == 0:
        return gzeros(out)
    return dx * y * pow_ieee(x, y - (y != 0))


@jvp(mul, zero=1)
def jvp_mul_constant_right(x, y, out, dx, dy):
    """``x * c``: no ``x * 0`` term, which is NaN where ``x`` is infinite."""
    return dx * y


@jvp(mul, zero=0)
def jvp_mul_constant_left(x, y, out, dx, dy):
    """``c * y``: no ``0 * y`` term, which is NaN where ``y`` is infinite."""
    return x * dy


@jvp(truediv, zero=1)
def jvp_truediv_constant_divisor(x, y, out, dx, dy):
    """``x / c``: no ``out * 0`` term, which is NaN where ``out`` is infinite."""
    return dx / y


@jvp(mod)
def jvp_mod(x, y, out, dx, dy):
    return dx - dy * floor(x / y)


@jvp(abs_)
def jvp_abs(x, out, dx):
    return dx * sign(x)


@jvp(exp)
def jvp_exp(x, out, dx):
    return dx * out


@jvp(log, log_ieee)
def jvp_log(x, out, dx):
    return dx / x


@jvp(log1p)
def jvp_log1p(x, out, dx):
    return dx / (1 + x)


@jvp(log2)
def jvp_log2(x, out, dx):
    return dx / (x * _LN2)


@jvp(log10)
def jvp_log10(x, out, dx):
    return dx / (x * _LN10)


@jvp(expm1)
def jvp_expm1(x, out, dx):
    return dx * (out + 1)


@jvp(sqrt)
def jvp_sqrt(x, out, dx):
    return dx / (2 * out)


@jvp(sin)
def jvp_sin(x, out, dx):
    return dx * cos(x)


@jvp(cos)
def jvp_cos(x, out, dx):
    return -dx * sin(x)


@jvp(tan)
def jvp_tan(x, out, dx):
    return dx * (1 + out * out)


@jvp(asin)
def jvp_asin(x, out, dx):
    return dx / sqrt(1 - x * x)


@jvp(acos)
def jvp_acos(x, out, dx):
    return -dx / sqrt(1 - x * x)


@jvp(atan)
def jvp_atan(x, out, dx):
    return dx / (1 + x * x)


@jvp(sinh)
def jvp_sinh(x, out, dx):
    return dx * cosh(x)


@jvp(cosh)
def jvp_cosh(x, out, dx):
    return dx * sinh(x)


@jvp(tanh)
def jvp_tanh(x, out, dx):
    return dx * (1 - out * out)


@jvp(atan2)
def jvp_atan2(y, x, out, dy, dx):
    return (dy * x - dx * y) / (x * x + y * y)


@jvp(asinh)
def jvp_asinh(x, out, dx):
    return dx / sqrt(x * x + 1)


@jvp(acosh)
def jvp_acosh(x, out, dx):
    return dx / sqrt((x - 1) * (x + 1))


@jvp(atanh)
def jvp_atanh(x, out, dx):
    return dx / ((1 - x) * (1 + x))


@jvp(copysign)
def jvp_copysign(x, y, out, dx, dy):
    return dx * _sign_agreement(x, y)


def _choice(dx, dy, x_wins, y_wins, tie):
    """The tangent of a choice between two values: split at a tie, as the gradient is."""
    return dx * x_wins + dy * y_wins + (dx + dy) * 0.5 * tie


@jvp(maximum)
def jvp_maximum(x, y, out, dx, dy):
    return _choice(dx, dy, x > y, x < y, x == y)


@jvp(minimum)
def jvp_minimum(x, y, out, dx, dy):
    return _choice(dx, dy, x < y, x > y, x == y)


@jvp(where)
def jvp_where(condition, x, y, out, dc, dx, dy):
    return where(condition, dx, dy)

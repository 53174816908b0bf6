"""Elementwise primitives: arithmetic, comparisons, logic, math functions, `where` and `clip`.

They follow NumPy's semantics and broadcasting, and work the same on Python scalars, NumPy
scalars and arrays, so that one primitive serves scalar and array code alike. On Python
scalars they compute with Python's own operators and `math`, so that a float stays a float.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..abstract.data import AbstractArray, AbstractConstant, AbstractScalar
from ..abstract.lattice import promote
from ..errors import MyiaTypeError
from ..grad.registry import bprop, nondifferentiable
from ..infer.registry import infer_rule
from ..infer.rulelib import broadcast_shapes, elementwise, is_none, numeric
from .core import primitive

_PY_SCALARS = (bool, int, float)


def _is_py(*xs: Any) -> bool:
    return all(type(x) in _PY_SCALARS for x in xs)


def _py_result(r: Any, *inputs: Any) -> Any:
    """Return a 0-d `r` as a Python scalar if every input is one, else as a NumPy scalar."""
    if np.ndim(r) == 0 and all(type(x) in _PY_SCALARS or x is None for x in inputs):
        return r.item()
    return r[()] if type(r) is np.ndarray and r.ndim == 0 else r


def _weak(a: Any) -> bool:
    return isinstance(a, AbstractScalar) and a.weak


# Binary arithmetic ---------------------------------------------------------------------------


@primitive
def add(x, y):
    """Elementwise ``x + y``."""
    return x + y


@primitive
def sub(x, y):
    """Elementwise ``x - y``."""
    return x - y


@primitive
def mul(x, y):
    """Elementwise ``x * y``."""
    return x * y


@primitive
def truediv(x, y):
    """Elementwise ``x / y``."""
    if _is_py(x, y):
        return x / y
    return np.true_divide(x, y)


@primitive
def floordiv(x, y):
    """Elementwise ``x // y`` (rounding towards minus infinity)."""
    return x // y


@primitive
def mod(x, y):
    """Elementwise ``x % y`` (the sign of the divisor, as in Python and NumPy)."""
    return x % y


@primitive
def pow_(x, y):
    """Elementwise ``x ** y``."""
    return x**y


@primitive
def pow_ieee(x, y):
    """Elementwise ``x ** y`` with NumPy's IEEE semantics on Python floats too.

    ``0.0 ** -0.5`` is ``inf`` (Python raises). The derivatives of ``**`` use it: the slope of
    ``x ** 0.5`` at 0 is ``inf``, as in NumPy and JAX, and not an error.
    """
    if type(x) is float and _is_py(y):
        with np.errstate(all="ignore"):
            return float(np.power(x, y))
    return x**y


# Comparisons and logic -----------------------------------------------------------------------


@primitive
def eq(x, y):
    """Elementwise ``x == y``."""
    return x == y


@primitive
def ne(x, y):
    """Elementwise ``x != y``."""
    return x != y


@primitive
def lt(x, y):
    """Elementwise ``x < y``."""
    return x < y


@primitive
def le(x, y):
    """Elementwise ``x <= y``."""
    return x <= y


@primitive
def gt(x, y):
    """Elementwise ``x > y``."""
    return x > y


@primitive
def ge(x, y):
    """Elementwise ``x >= y``."""
    return x >= y


@primitive
def logical_not(x):
    """Elementwise logical negation."""
    if _is_py(x):
        return not x
    return np.logical_not(x)


@primitive
def logical_and(x, y):
    """Elementwise logical and (both operands evaluated)."""
    if _is_py(x, y):
        return bool(x) and bool(y)
    return np.logical_and(x, y)


@primitive
def logical_or(x, y):
    """Elementwise logical or (both operands evaluated)."""
    if _is_py(x, y):
        return bool(x) or bool(y)
    return np.logical_or(x, y)


# Bitwise operators (integers and booleans) ----------------------------------------------------


@primitive
def bitwise_and(x, y):
    """Elementwise ``x & y``."""
    return x & y


@primitive
def bitwise_or(x, y):
    """Elementwise ``x | y``."""
    return x | y


@primitive
def bitwise_xor(x, y):
    """Elementwise ``x ^ y``."""
    return x ^ y


@primitive
def left_shift(x, y):
    """Elementwise ``x << y``."""
    return x << y


@primitive
def right_shift(x, y):
    """Elementwise ``x >> y``."""
    return x >> y


@primitive
def invert(x):
    """Elementwise ``~x``: bitwise negation (of a Python bool, as an int: ``~True == -2``)."""
    if type(x) is bool:
        return -1 - x
    return ~x


# Unary math ---------------------------------------------------------------------------------


@primitive
def neg(x):
    """Elementwise ``-x``."""
    return -x


@primitive
def abs_(x):
    """Elementwise absolute value."""
    return abs(x)


def _unary(name: str, mathfn: Any, npfn: Any, doc: str) -> Any:
    def impl(x):
        if _is_py(x):
            return mathfn(x)
        return npfn(x)

    impl.__name__ = name
    impl.__doc__ = doc
    return primitive(impl, name=name)


@primitive
def log_ieee(x):
    """Elementwise natural logarithm with NumPy's IEEE semantics on Python floats too.

    ``log(-2.0)`` is ``nan`` and ``log(0.0)`` is ``-inf`` (Python raises). The derivative of
    ``x ** y`` in ``y`` uses it: that of ``(-2.0) ** y`` is ``nan``, as in NumPy and JAX, and
    not an error.
    """
    if _is_py(x):
        with np.errstate(all="ignore"):
            return float(np.log(float(x)))
    with np.errstate(all="ignore"):
        return np.log(x)


def _sign(x: Any) -> Any:
    return type(x)((x > 0) - (x < 0))


#: ``log(2)`` and ``log(10)``: the derivatives of `log2` and `log10` divide by them.
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

exp = _unary("exp", math.exp, np.exp, "Elementwise exponential.")
log = _unary("log", math.log, np.log, "Elementwise natural logarithm.")
log1p = _unary("log1p", math.log1p, np.log1p, "Elementwise ``log(1 + x)``.")
log2 = _unary("log2", math.log2, np.log2, "Elementwise base-2 logarithm (exact at 2**k).")
log10 = _unary("log10", math.log10, np.log10, "Elementwise base-10 logarithm (exact at 10**k).")
expm1 = _unary("expm1", math.expm1, np.expm1, "Elementwise ``exp(x) - 1``.")
sqrt = _unary("sqrt", math.sqrt, np.sqrt, "Elementwise square root.")
sin = _unary("sin", math.sin, np.sin, "Elementwise sine.")
cos = _unary("cos", math.cos, np.cos, "Elementwise cosine.")
tan = _unary("tan", math.tan, np.tan, "Elementwise tangent.")
asin = _unary("asin", math.asin, np.arcsin, "Elementwise arcsine.")
acos = _unary("acos", math.acos, np.arccos, "Elementwise arccosine.")
atan = _unary("atan", math.atan, np.arctan, "Elementwise arctangent.")
sinh = _unary("sinh", math.sinh, np.sinh, "Elementwise hyperbolic sine.")
cosh = _unary("cosh", math.cosh, np.cosh, "Elementwise hyperbolic cosine.")
tanh = _unary("tanh", math.tanh, np.tanh, "Elementwise hyperbolic tangent.")
asinh = _unary("asinh", math.asinh, np.arcsinh, "Elementwise inverse hyperbolic sine.")
acosh = _unary("acosh", math.acosh, np.arccosh, "Elementwise inverse hyperbolic cosine.")
atanh = _unary("atanh", math.atanh, np.arctanh, "Elementwise inverse hyperbolic tangent.")
floor = _unary("floor", lambda x: float(math.floor(x)), np.floor, "Elementwise floor (a float).")
ceil = _unary("ceil", lambda x: float(math.ceil(x)), np.ceil, "Elementwise ceiling (a float).")
sign = _unary("sign", _sign, np.sign, "Elementwise sign (-1, 0 or 1).")


@primitive
def atan2(y, x):
    """Elementwise ``atan2(y, x)``."""
    if _is_py(x, y):
        return math.atan2(y, x)
    return np.arctan2(y, x)


@primitive
def copysign(x, y):
    """Elementwise ``copysign(x, y)``: the magnitude of `x` with the sign bit of `y`.

    The sign bit, not the sign: ``copysign(1.0, -0.0)`` is ``-1.0``, as in Python and NumPy.
    """
    if _is_py(x, y):
        return math.copysign(x, y)
    return np.copysign(x, y)


@primitive
def maximum(x, y):
    """Elementwise maximum."""
    if _is_py(x, y):
        return max(x, y)
    return np.maximum(x, y)


@primitive
def minimum(x, y):
    """Elementwise minimum."""
    if _is_py(x, y):
        return min(x, y)
    return np.minimum(x, y)


# Elementwise selection ------------------------------------------------------------------------


@primitive
def where(condition, x, y):
    """``np.where(condition, x, y)``: elementwise ``x if condition else y``."""
    return _py_result(np.where(condition, x, y), x, y)


@primitive
def clip(a, a_min, a_max):
    """``np.clip(a, a_min, a_max)`` (either bound may be None)."""
    return _py_result(np.clip(a, a_min, a_max), a, a_min, a_max)


def _select(what, shaped, typed):
    """Return the elementwise result of dtype promoted from `typed`, broadcasting `shaped`."""
    nums = [numeric(a, what) for a in shaped]
    dt, weak = promote(*((a.dtype, _weak(a)) for a in typed))
    arrays = [a.shape for a in nums if isinstance(a, AbstractArray)]
    if not arrays:
        return AbstractScalar(dt, weak)
    return AbstractArray(dt, broadcast_shapes(what, *arrays))


@infer_rule(where)
def _infer_where(condition, x, y):
    return _select("where", (condition, x, y), (x, y))


@infer_rule(clip)
def _infer_clip(a, a_min, a_max):
    args = [b for b in (a, a_min, a_max) if not is_none(b)]
    if len(args) == 1:
        raise MyiaTypeError("clip needs at least one of a_min and a_max")
    return _select("clip", args, args)


# Conversions --------------------------------------------------------------------------------


@primitive
def to_float(x):
    """Python's ``float(x)``."""
    return float(x)


@primitive
def to_int(x):
    """Python's ``int(x)`` (truncation towards zero)."""
    return int(x)


@primitive
def to_bool(x):
    """Python's ``bool(x)`` on a scalar or a one-element array."""
    return bool(x)


@primitive
def round_decimal(x, ndigits):
    """Python's ``round(x, ndigits)`` of a Python float, exactly.

    The float nearest to the decimal that is the exact value of `x` rounded to `ndigits`
    digits, halves to even (``round(2.675, 2)`` is 2.67: 2.675 is 2.67499999...). Computed by
    Python's own ``round`` (correctly rounded ``dtoa``), on the host: ``x * 10 ** ndigits``
    rounded is not exact. Of arrays (a batch, `myia.grad.batch_rules`), elementwise, each
    element as a Python float.
    """
    if type(x) is float and np.ndim(ndigits) == 0:
        return round(x, int(ndigits))
    out = np.asarray(_ROUND_DECIMAL(np.asarray(x, np.float64), ndigits), np.float64)
    return out[()] if out.ndim == 0 else out


#: Python's ``round`` of each element of arrays, which NumPy passes as Python objects: the
#: float64 elements converted first (NumPy's scalars round as ``np.round``).
_ROUND_DECIMAL = np.frompyfunc(lambda x, n: round(float(x), int(n)), 2, 1)


# Type and shape rules -----------------------------------------------------------------------


def _python_int(r: Any) -> Any:
    """A Python bool's arithmetic result is a Python int: ``True + True`` is 2, ``-True`` -1.

    (NumPy's booleans stay booleans: ``np.True_ + np.True_`` is ``np.True_``.)
    """
    if isinstance(r, AbstractScalar) and r.weak and r.dtype == "bool":
        return AbstractScalar("int64", True)
    return r


@infer_rule(add, sub, mul, floordiv, mod, pow_, pow_ieee)
def _infer_arith(x, y):
    return _python_int(elementwise("an arithmetic operation", x, y))


@infer_rule(maximum, minimum)
def _infer_extremum(x, y):
    return elementwise("an arithmetic operation", x, y)  # max(True, False) is True


@infer_rule(truediv)
def _infer_div(x, y):
    return elementwise("a division", x, y, float_=True)


@infer_rule(atan2, copysign)
def _infer_atan2(y, x):
    return elementwise("a math function", y, x, float_=True, math=True)


@infer_rule(eq, ne, lt, le, gt, ge, logical_and, logical_or)
def _infer_compare(x, y):
    return elementwise("a comparison", x, y, dtype="bool")


def _integers(what: str, r: Any, *args: Any) -> Any:
    for a in args:
        if not a.dtype.startswith(("int", "uint", "bool")):
            raise MyiaTypeError(f"{what} needs integers or booleans, not {a}")
    return r


@infer_rule(bitwise_and, bitwise_or, bitwise_xor)
def _infer_bitwise(x, y):
    return _integers("a bitwise operator", elementwise("a bitwise operator", x, y), x, y)


@infer_rule(left_shift, right_shift)
def _infer_shift(x, y):
    r = _integers("a shift", elementwise("a shift", x, y), x, y)
    if r.dtype == "bool":  # True << 1 is 2; of NumPy's booleans, an int8 (NumPy's loop)
        if isinstance(r, AbstractScalar) and r.weak:
            return AbstractScalar("int64", True)
        return elementwise("a shift", x, y, dtype="int8")
    return r


@infer_rule(invert)
def _infer_invert(x):
    r = _integers("~", elementwise("~", x), x)
    if isinstance(r, AbstractScalar) and r.weak and r.dtype == "bool":
        return AbstractScalar("int64", True)
    return r


@infer_rule(logical_not)
def _infer_not(x):
    return elementwise("not", x, dtype="bool")


@infer_rule(neg, abs_)
def _infer_same(x):
    return _python_int(elementwise("a unary operation", x))


@infer_rule(sign)
def _infer_sign(x):
    return elementwise("a unary operation", x)


@infer_rule(exp, log, log_ieee, log1p, log2, log10, expm1, sqrt, sin, cos, tan, asin, acos, atan)
@infer_rule(sinh, cosh, tanh, asinh, acosh, atanh)
def _infer_float_unary(x):
    return elementwise("a math function", x, float_=True, math=True)


@infer_rule(floor, ceil)
def _infer_rounding(x):
    if isinstance(x, AbstractScalar) and x.weak:
        return elementwise("a rounding function", x, float_=True)
    r = elementwise("a rounding function", x)
    dtype = np.floor(np.zeros(1, r.dtype)).dtype.name  # integers stay integers in NumPy 2
    if isinstance(r, AbstractScalar):
        return AbstractScalar(dtype)
    return AbstractArray(dtype, r.shape)


def _scalar_conversion(name, dtype):
    def rule(x):
        if dtype == "float64" and isinstance(x, AbstractConstant) and isinstance(x.value, str):
            try:
                float(x.value)  # float("inf"), float("nan"), float("1.5")
            except ValueError:
                raise MyiaTypeError(f"could not convert string to float: {x.value!r}") from None
            return AbstractScalar(dtype, True)
        if isinstance(x, AbstractScalar) or (
            isinstance(x, AbstractArray) and x.shape in ((), (1,))
        ):
            return AbstractScalar(dtype, True)
        if isinstance(x, AbstractArray) and name != "bool":
            raise MyiaTypeError(
                f"only arrays of one element can be converted to Python scalars ({name}() or "
                f"a math function of a value of type {x})"
            )
        if isinstance(x, AbstractArray) and None not in x.shape and np.prod(x.shape) > 1:
            # (A test of an array in ``if``, ``while``, ``max(a, b)``... as NumPy's ValueError.)
            raise MyiaTypeError(
                f"the truth value of an array with more than one element is ambiguous "
                f"({name}() of a value of type {x}): use a.any() or a.all(), or np.maximum / "
                "np.minimum for the elementwise max(a, b) / min(a, b)"
            )
        raise MyiaTypeError(f"{name}() of a value of type {x} is not supported")

    return rule


infer_rule(to_float)(_scalar_conversion("float", "float64"))
infer_rule(to_int)(_scalar_conversion("int", "int64"))
infer_rule(to_bool)(_scalar_conversion("bool", "bool"))


@infer_rule(round_decimal)
def _infer_round_decimal(x, ndigits):
    # Python floats; float64 arrays of them in a batch (`vmap`).
    r = elementwise("round_decimal", x, ndigits)
    if x.dtype != "float64" or not ndigits.dtype.startswith(("int", "uint", "bool")):
        raise MyiaTypeError(f"round_decimal takes Python floats and ints, not {x} and {ndigits}")
    if isinstance(r, AbstractScalar) and isinstance(x, AbstractScalar) and x.weak:
        return AbstractScalar("float64", True)  # a Python float, whatever int `ndigits` is
    return r


# Backpropagators ------------------------------------------------------------------------------


@bprop(add)
def bprop_add(x, y, out, dout):
    return (unbroadcast(dout, x), unbroadcast(dout, y))


@bprop(sub)
def bprop_sub(x, y, out, dout):
    return (unbroadcast(dout, x), unbroadcast(-dout, y))


@bprop(mul)
def bprop_mul(x, y, out, dout):
    return (unbroadcast(dout * y, x), unbroadcast(dout * x, y))


@bprop(truediv)
def bprop_truediv(x, y, out, dout):
    return (unbroadcast(dout / y, x), unbroadcast(-dout * out / y, y))


@bprop(pow_, pow_ieee)
def bprop_pow(x, y, out, dout):
    if isinstance(y, (int, np.integer)):
        # An integer exponent has no sensitivity, and the derivatives of x ** n are exact at
        # every order: that of x ** 0 is zero (not 0 * x ** -1, an error at 0).
        if y == 0:
            return (gzeros(x), gzeros(y))
        return (unbroadcast(dout * y * pow_ieee(x, y - 1), x), gzeros(y))
    # d x ** y / d x = y * x ** (y - 1), and 0 where y = 0 (x ** 0 is 1), not 0 * x ** -1, which
    # is NaN at x = 0; as in JAX. The exponent y - (y != 0) is y - 1, or 0 where y is 0.
    dx = unbroadcast(dout * y * pow_ieee(x, y - (y != 0)), x)
    # d x ** y / d y = x ** y * log(x), and 0 at x = 0 (where x ** y is 0 or 1), as in JAX.
    return (dx, unbroadcast(dout * out * log_ieee(x + (x == 0)), y))


@bprop(mod)
def bprop_mod(x, y, out, dout):
    return (unbroadcast(dout, x), unbroadcast(-dout * floor(x / y), y))


@bprop(neg)
def bprop_neg(x, out, dout):
    return (-dout,)


@bprop(abs_)
def bprop_abs(x, out, dout):
    # abs(x) is maximum(x, -x): at 0, a tie, the halves cancel and the slope is sign(0) = 0
    # (JAX gives 1). See docs/gradients.md.
    return (unbroadcast(dout * sign(x), x),)


@bprop(exp)
def bprop_exp(x, out, dout):
    return (dout * out,)


@bprop(log, log_ieee)
def bprop_log(x, out, dout):
    return (unbroadcast(dout / x, x),)


@bprop(log1p)
def bprop_log1p(x, out, dout):
    return (unbroadcast(dout / (1 + x), x),)


@bprop(log2)
def bprop_log2(x, out, dout):
    return (unbroadcast(dout / (x * _LN2), x),)


@bprop(log10)
def bprop_log10(x, out, dout):
    return (unbroadcast(dout / (x * _LN10), x),)


@bprop(expm1)
def bprop_expm1(x, out, dout):
    return (dout * (out + 1),)


@bprop(sqrt)
def bprop_sqrt(x, out, dout):
    return (dout / (2 * out),)


@bprop(sin)
def bprop_sin(x, out, dout):
    return (unbroadcast(dout * cos(x), x),)


@bprop(cos)
def bprop_cos(x, out, dout):
    return (unbroadcast(-dout * sin(x), x),)


@bprop(tan)
def bprop_tan(x, out, dout):
    return (unbroadcast(dout * (1 + out * out), x),)


@bprop(asin)
def bprop_asin(x, out, dout):
    return (unbroadcast(dout / sqrt(1 - x * x), x),)


@bprop(acos)
def bprop_acos(x, out, dout):
    return (unbroadcast(-dout / sqrt(1 - x * x), x),)


@bprop(atan)
def bprop_atan(x, out, dout):
    return (unbroadcast(dout / (1 + x * x), x),)


@bprop(sinh)
def bprop_sinh(x, out, dout):
    return (unbroadcast(dout * cosh(x), x),)


@bprop(cosh)
def bprop_cosh(x, out, dout):
    return (unbroadcast(dout * sinh(x), x),)


@bprop(tanh)
def bprop_tanh(x, out, dout):
    return (unbroadcast(dout * (1 - out * out), x),)


@bprop(atan2)
def bprop_atan2(y, x, out, dout):
    d = dout / (x * x + y * y)
    return (unbroadcast(d * x, y), unbroadcast(-d * y, x))


@bprop(asinh)
def bprop_asinh(x, out, dout):
    return (unbroadcast(dout / sqrt(x * x + 1), x),)


@bprop(acosh)
def bprop_acosh(x, out, dout):
    return (unbroadcast(dout / sqrt((x - 1) * (x + 1)), x),)


@bprop(atanh)
def bprop_atanh(x, out, dout):
    return (unbroadcast(dout / ((1 - x) * (1 + x)), x),)


@bprop(copysign)
def bprop_copysign(x, y, out, dout):
    # |x| with the sign of y: the slope in x is +1 where the sign bits of x and y agree, -1
    # where they differ (at x = +-0.0 too, one-sided); none in y (a sign bit).
    return (unbroadcast(dout * _sign_agreement(x, y), x), gzeros(y))


def _sign_agreement(x, y):
    """``1.0`` where the sign bits of `x` and `y` agree, ``-1.0`` where they differ."""
    return copysign(1.0, x) * copysign(1.0, y)


def split_ties(dout, x_wins, y_wins, tie):
    """The sensitivities of the two arguments of a choice (`maximum`, `minimum`, `clip`).

    All goes to the one chosen, and half to each at a tie, as in JAX: the mean of the two
    one-sided derivatives.

    ``dout * 0.5`` keeps the dtype of `dout` (a float32 gradient stays float32).
    """
    half = dout * 0.5
    return (dout * x_wins + half * tie, dout * y_wins + half * tie)


@bprop(maximum)
def bprop_maximum(x, y, out, dout):
    dx, dy = split_ties(dout, x > y, x < y, x == y)
    return (unbroadcast(dx, x), unbroadcast(dy, y))


@bprop(minimum)
def bprop_minimum(x, y, out, dout):
    dx, dy = split_ties(dout, x < y, x > y, x == y)
    return (unbroadcast(dx, x), unbroadcast(dy, y))


@bprop(where)
def bprop_where(condition, x, y, out, dout):
    dx = unbroadcast(where(condition, dout, 0.0), x)
    return (gzeros(condition), dx, unbroadcast(where(condition, 0.0, dout), y))


@bprop(clip)
def bprop_clip(a, a_min, a_max, out, dout):
    # clip(a, lo, hi) = minimum(maximum(a, lo), hi), either bound possibly None; ties are
    # split as `maximum` and `minimum` split them (at a = lo = hi: 1/4, 1/4, 1/2, as in JAX).
    m = a if a_min is None else maximum(a, a_min)
    dm, dhi = (dout, None) if a_max is None else split_ties(dout, m < a_max, m > a_max, m == a_max)
    da, dlo = (dm, None) if a_min is None else split_ties(dm, a > a_min, a < a_min, a == a_min)
    dlo = None if a_min is None else unbroadcast(dlo, a_min)
    dhi = None if a_max is None else unbroadcast(dhi, a_max)
    return (unbroadcast(da, a), dlo, dhi)


@bprop(to_float)
def bprop_to_float(x, out, dout):
    return (unbroadcast(dout, x),)


nondifferentiable(floordiv, eq, ne, lt, le, gt, ge, logical_not, logical_and, logical_or)
nondifferentiable(floor, ceil, sign, to_int, to_bool, round_decimal)
nondifferentiable(bitwise_and, bitwise_or, bitwise_xor, left_shift, right_shift, invert)

from .grad import gzeros, unbroadcast  # noqa: E402

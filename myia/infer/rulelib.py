"""Helpers for writing type and shape rules: broadcasting, promotion, checks."""

from __future__ import annotations

from typing import Any

from ..abstract.data import (
    ANYTHING,
    AbstractArray,
    AbstractConstant,
    AbstractScalar,
    AbstractTuple,
    AbstractValue,
    show,
)
from ..abstract.lattice import promote
from ..errors import MyiaShapeError, MyiaTypeError


def shape_str(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def broadcast_shapes(what: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's broadcasting of `shapes`; raise `MyiaShapeError` naming operation `what`."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        dims = {s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0}
        dims.discard(1)
        if len(dims) > 1:
            shown = " and ".join(shape_str(s) for s in shapes)
            raise MyiaShapeError(f"Incompatible shapes in {what}: {shown}")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def numeric(a: AbstractValue, what: str) -> AbstractScalar | AbstractArray:
    """Check that `a` is a scalar or an array."""
    if isinstance(a, (AbstractScalar, AbstractArray)):
        return a
    raise MyiaTypeError(f"{what} expects numbers or arrays, not {show(a)}")


def elementwise(what: str, *args: AbstractValue, dtype: str | None = None, float_: bool = False):
    """The result of an elementwise operation with NumPy's broadcasting and promotion.

    `dtype` forces the result's dtype (``"bool"`` for comparisons); `float_` makes integer
    and boolean inputs give floats (true division, ``exp``...).
    """
    nums = [numeric(a, what) for a in args]
    dt, weak = promote(*((a.dtype, isinstance(a, AbstractScalar) and a.weak) for a in nums))
    if float_ and not dt.startswith("float"):
        dt = promote((dt, weak), ("float64", True))[0] if weak else "float64"
        if dt.startswith(("int", "uint", "bool")):
            dt = "float64"
    if dtype is not None:
        dt = dtype
    arrays = [a for a in nums if isinstance(a, AbstractArray)]
    if not arrays:
        return AbstractScalar(dt, weak)
    shape = broadcast_shapes(what, *(a.shape for a in arrays))
    return AbstractArray(dt, shape)


def const_value(a: AbstractValue, what: str, types: Any = object) -> Any:
    """The value of `a`, which must be known at compile time (and of `types`)."""
    if isinstance(a, (AbstractScalar, AbstractConstant)):
        v = a.value
    elif isinstance(a, AbstractTuple):
        v = tuple(const_value(e, what) for e in a.elements)
    else:
        v = ANYTHING
    if v is ANYTHING or not isinstance(v, types):
        raise MyiaTypeError(f"{what} must be known at compile time, got {show(a)}")
    return v


def int_scalar(a: AbstractValue, what: str) -> AbstractScalar:
    """Check that `a` is an integer (or boolean) scalar."""
    if isinstance(a, AbstractScalar) and a.dtype.startswith(("int", "uint", "bool")):
        return a
    raise MyiaTypeError(f"{what} must be an integer, not {show(a)}")


def i64(value: Any = ANYTHING) -> AbstractScalar:
    """A Python int."""
    return AbstractScalar("int64", True, value)


def py_bool(value: Any = ANYTHING) -> AbstractScalar:
    """A Python bool."""
    return AbstractScalar("bool", True, value)

"""Helpers for writing type and shape rules: broadcasting, promotion, checks."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import (
    ANYTHING,
    AbstractArray,
    AbstractConstant,
    AbstractFunction,
    AbstractList,
    AbstractScalar,
    AbstractTuple,
    AbstractValue,
    show,
)
from ..abstract.lattice import promote
from ..errors import MyiaShapeError, MyiaTypeError


def shape_str(shape: tuple[int | None, ...]) -> str:
    """Show a shape as NumPy prints it: ``(3, 4)``, ``(3,)``, ``()``; ``?`` if unknown."""
    dims = ["?" if d is None else str(d) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(shape) == 1 else "") + ")"


def broadcast_shapes(what: str, *shapes: tuple[int | None, ...]) -> tuple[int | None, ...]:
    """NumPy's broadcasting of `shapes`; raise `MyiaShapeError` naming operation `what`.

    A dimension known only at run time (None) broadcasts with 1 to itself and with a known
    size ``n > 1`` to ``n`` (NumPy raises at run time unless it is 1 or ``n``).
    """
    ndim = max((len(s) for s in shapes), default=0)
    out: list[int | None] = []
    for i in range(ndim):
        dims = {s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0}
        dims.discard(1)
        unknown = None in dims
        dims.discard(None)
        if len(dims) > 1:
            shown = " and ".join(shape_str(s) for s in shapes)
            raise MyiaShapeError(f"Incompatible shapes in {what}: {shown}")
        out.append(dims.pop() if dims else None if unknown else 1)
    return tuple(out)


def probe_shape(
    fn: Any, *shapes: tuple[int | None, ...]
) -> tuple[int | None, ...] | list[tuple[int | None, ...]]:
    """The result shape(s) of ``fn(*shapes)``, a function of known shapes, with unknown dims.

    ``fn`` is called with every unknown dimension replaced by sizes standing for any size
    (two large ones, then 1 and 0 where ``fn`` accepts them); a dimension of the result that
    differs between them is unknown (None). Errors of the first call propagate.
    """
    if all(None not in s for s in shapes):
        return fn(*shapes)
    results = []
    for k, size in enumerate((7919, 7907, 1, 0)):
        subst = [tuple(size if d is None else d for d in s) for s in shapes]
        try:
            results.append(fn(*subst))
        except Exception:
            if k < 2:
                raise
    first = results[0]
    many = isinstance(first, list)
    outs = [r if many else [r] for r in results]
    merged = []
    for j, s in enumerate(outs[0]):
        dims = list(s)
        for other in outs[1:]:
            if j >= len(other) or len(other[j]) != len(s):
                continue
            dims = [d if d == e else None for d, e in zip(dims, other[j])]
        merged.append(tuple(dims))
    return merged if many else merged[0]


def numeric(a: AbstractValue, what: str) -> AbstractScalar | AbstractArray:
    """Check that `a` is a scalar or an array."""
    if isinstance(a, (AbstractScalar, AbstractArray)):
        return a
    raise MyiaTypeError(f"{what} expects numbers or arrays, not {show(a)}")


def _weak(a: AbstractValue) -> bool:
    return isinstance(a, AbstractScalar) and a.weak


def elementwise(
    what: str,
    *args: AbstractValue,
    dtype: str | None = None,
    float_: bool = False,
    math: bool = False,
):
    """The result of an elementwise operation with NumPy's broadcasting and promotion.

    `dtype` forces the result's dtype (``"bool"`` for comparisons); `float_` makes integer
    and boolean inputs give floats: float64 (true division, SciPy's special functions), or
    with `math` the smallest float that holds them, as NumPy's math functions (``np.sqrt``,
    ``np.exp``, ``np.arctan2``...) do: float16 for int8, uint8 and bool, float32 for 16-bit
    integers.
    """
    nums = [numeric(a, what) for a in args]
    dt, weak = promote(*((a.dtype, isinstance(a, AbstractScalar) and a.weak) for a in nums))
    if float_ and not dt.startswith("float"):
        if weak:
            dt = promote((dt, weak), ("float64", True))[0]
        elif math and dt.startswith(("int", "uint", "bool")):
            # The first of NumPy's float loops to which each operand casts safely (a Python
            # number as the promoted dtype: int64 with a bool).
            floats = [np.result_type(dt if _weak(a) else a.dtype, np.float16) for a in nums]
            dt = np.result_type(*floats).name
        else:
            dt = "float64"
        if dt.startswith(("int", "uint", "bool")):
            dt = "float64"
    if dtype is not None:
        dt = dtype
    arrays = [a for a in nums if isinstance(a, AbstractArray)]
    if not arrays:
        return AbstractScalar(dt, weak)
    shape = broadcast_shapes(what, *(a.shape for a in arrays))
    # As NumPy's ufuncs: an elementwise result of shape () is a NumPy scalar, even of 0-d arrays.
    return array_result(dt, shape)


def const_value(a: AbstractValue, what: str, types: Any = object) -> Any:
    """The value of `a`, which must be known at compile time (and of `types`)."""
    if isinstance(a, (AbstractScalar, AbstractConstant)):
        v = a.value
    elif isinstance(a, AbstractTuple):
        v = tuple(const_value(e, what) for e in a.elements)
    elif isinstance(a, AbstractList) and a.value is not ANYTHING:
        v = a.value  # a list known at compile time stands for the tuple of its elements
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


# Arrays -------------------------------------------------------------------------------------


def as_array(a: AbstractValue, what: str) -> AbstractArray:
    """Return `a` as an array: a scalar is a 0-d array of its dtype."""
    if isinstance(a, AbstractArray):
        return a
    if isinstance(a, AbstractScalar):
        return AbstractArray(a.dtype, ())
    raise MyiaTypeError(f"{what} expects an array, not {show(a)}")


def array_result(dtype: str, shape: tuple[int, ...]) -> AbstractScalar | AbstractArray:
    """Return an array of `dtype` and `shape`, or a NumPy scalar when `shape` is ``()``."""
    return AbstractScalar(dtype) if shape == () else AbstractArray(dtype, tuple(shape))


def is_none(a: AbstractValue) -> bool:
    """Whether `a` is the constant None."""
    return isinstance(a, AbstractConstant) and a.value is None


def normalize_axis(axis: Any, ndim: int, shape: tuple[int, ...] | None = None) -> int:
    """`axis` (possibly negative) as an index in ``range(ndim)``; raise `MyiaShapeError`."""
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise MyiaTypeError(f"an axis must be an integer, not {axis!r}")
    if not -ndim <= axis < ndim:
        of = f"an array of shape {shape_str(shape)}" if shape is not None else f"{ndim} dims"
        raise MyiaShapeError(f"axis {axis} is out of bounds for {of}")
    return axis % ndim


def axes_arg(axis: AbstractValue, ndim: int, what: str, shape: Any = None) -> tuple[int, ...]:
    """Return the axes an ``axis`` argument (None, an int or ints) designates, sorted."""
    if is_none(axis):
        return tuple(range(ndim))
    ax = const_value(axis, f"the axis of {what}")
    ax = ax if isinstance(ax, tuple) else (ax,)
    out = tuple(sorted(normalize_axis(a, ndim, shape) for a in ax))
    if len(set(out)) != len(out):
        raise MyiaShapeError(f"repeated axis in {what}: {ax}")
    return out


def as_dtype(value: Any) -> np.dtype | None:
    """Return the NumPy dtype a ``dtype=`` argument stands for (None stays None).

    Accepts NumPy dtypes and scalar types (``np.float32``), names (``"float32"``) and the
    builtin classes ``float``, ``int`` and ``bool`` (which Myia code sees as operations).
    """
    if value is None:
        return None
    from ..operations.mapping import python_class

    value = python_class(value)
    try:
        return np.dtype(value)
    except TypeError:
        raise MyiaTypeError(f"{value!r} is not a dtype") from None


def join_axis(axis: AbstractValue, what: str) -> Any:
    """The axis of `what` (``np.concatenate``, ``np.stack``), known at compile time.

    An array there is most likely the second of the arrays joined, passed apart
    (``np.concatenate(a, b)``): the message says to pass them as one tuple.
    """
    if isinstance(axis, AbstractArray):
        raise MyiaTypeError(
            f"the axis of {what} must be known at compile time, got {show(axis)}; to join "
            f"arrays, pass them as one tuple: np.{what}((a, b)), not np.{what}(a, b)"
        )
    return const_value(axis, f"the axis of {what}")


def shape_dtype(a: AbstractValue, what: str, example: str) -> str | None:
    """`const_dtype` of the dtype of a creation (``np.zeros(shape, dtype)``) of shape first.

    An integer there is most likely a dimension of the shape, the shape passed as several
    arguments (``np.zeros(2, 3)``): the message says the shape is one tuple (`example`).
    """
    if isinstance(a, AbstractScalar) and a.dtype.startswith(("int", "uint")):
        raise MyiaTypeError(
            f"the dtype of {what} must be known at compile time, got {show(a)}; the shape of "
            f"an array is one tuple: {example}"
        )
    return const_dtype(a, what)


def const_dtype(a: AbstractValue, what: str) -> str | None:
    """Return the name of the dtype a ``dtype`` argument (known at compile time) gives."""
    if isinstance(a, AbstractFunction) and len(a.options) == 1:
        value = a.get_unique()
    elif isinstance(a, AbstractConstant):
        value = a.value
    else:
        raise MyiaTypeError(f"the dtype of {what} must be known at compile time, got {show(a)}")
    dt = as_dtype(value)
    return None if dt is None else dt.name


def shape_value(shape: Any, what: str, negative: bool = False, normalize: Any = None) -> Any:
    """The shape a ``shape`` argument gives: ints, or None where known only at run time.

    `normalize` turns the constant value of the argument into a tuple (``n`` -> ``(n,)``).

    A shape made of ``x.shape`` of an array of unknown dimensions (``np.zeros(x.shape)``)
    has ints known only at run time: those dimensions are unknown.
    """
    if isinstance(shape, AbstractTuple) and len(shape.elements) == 1:
        if isinstance(shape.elements[0], AbstractTuple):
            shape = shape.elements[0]
    if isinstance(shape, AbstractScalar) and shape.value is ANYTHING:
        shape = AbstractTuple((shape,))
    if isinstance(shape, AbstractTuple) and any(
        isinstance(e, AbstractScalar) and e.value is ANYTHING for e in shape.elements
    ):
        dims = []
        for e in shape.elements:
            if not (isinstance(e, AbstractScalar) and e.dtype.startswith(("int", "uint"))):
                raise MyiaTypeError(f"invalid shape for {what}: {show(shape)}")
            dims.append(None if e.value is ANYTHING else e.value)
        s = tuple(dims)
    else:
        s = const_value(shape, f"the shape of {what}")
        s = normalize(s) if normalize is not None else s
    if not (
        isinstance(s, tuple)
        and all(d is None or isinstance(d, int) and (negative or d >= 0) for d in s)
    ):
        raise MyiaTypeError(f"invalid shape for {what}: {s!r}")
    return s

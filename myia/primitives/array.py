"""Array primitives with NumPy semantics (indexing, shapes, linear algebra, reductions)."""

from __future__ import annotations

import numpy as np

from ..abstract.data import AbstractArray, AbstractConstant, AbstractScalar, AbstractTuple, show
from ..abstract.lattice import promote
from ..errors import MyiaShapeError, MyiaTypeError
from ..infer.registry import infer_rule
from ..infer.rulelib import broadcast_shapes, const_value, i64, shape_str
from .core import primitive


@primitive
def matmul(x, y):
    """``x @ y`` with NumPy's rules (vector, matrix and batched)."""
    return np.matmul(x, y)


@primitive
def array_getitem(a, index):
    """``a[index]`` with NumPy's basic and integer-array indexing."""
    return a[index]


@primitive
def shape(a):
    """``a.shape``: a tuple of ints."""
    return np.shape(a)


@primitive
def ndim(a):
    """``a.ndim``."""
    return np.ndim(a)


@primitive
def array_len(a):
    """``len(a)``: the size of the first axis."""
    return len(a)


@primitive
def transpose(a, axes):
    """``np.transpose(a, axes)`` (``axes`` None reverses the axes)."""
    return np.transpose(a, axes)


@primitive
def reshape(a, shape):
    """``np.reshape(a, shape)``."""
    return np.reshape(a, shape)


@primitive
def reduce_sum(a, axis, keepdims):
    """``np.sum(a, axis, keepdims=keepdims)``."""
    return np.sum(a, axis=axis, keepdims=keepdims)


# Type and shape rules -------------------------------------------------------------------------


def _array(a, what):
    if isinstance(a, AbstractArray):
        return a
    if isinstance(a, AbstractScalar):
        return AbstractArray(a.dtype, ())
    raise MyiaTypeError(f"{what} expects an array, not {show(a)}")


def _result(dtype, shape):
    return AbstractScalar(dtype) if shape == () else AbstractArray(dtype, shape)


@infer_rule(matmul)
def _infer_matmul(x, y):
    a, b = _array(x, "matmul"), _array(y, "matmul")
    dtype = promote((a.dtype, False), (b.dtype, False))[0]
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        raise MyiaShapeError("matmul does not accept scalars: use * instead")
    ma = sa if len(sa) > 1 else (1, *sa)
    mb = sb if len(sb) > 1 else (*sb, 1)
    if ma[-1] != mb[-2]:
        raise MyiaShapeError(f"Incompatible shapes in matmul: {shape_str(sa)} and {shape_str(sb)}")
    batch = broadcast_shapes("matmul", ma[:-2], mb[:-2])
    shape = (*batch, ma[-2], mb[-1])
    if len(sa) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(sb) == 1:
        shape = shape[:-1]
    return _result(dtype, shape)


@infer_rule(array_getitem)
def _infer_array_getitem(a, index):
    a = _array(a, "indexing")
    idx = const_value(index, "an array index") if not isinstance(index, AbstractScalar) else None
    probe = np.lib.stride_tricks.as_strided(np.zeros(1), a.shape, [0] * len(a.shape))
    if idx is None:
        if index.dtype.startswith("float"):
            raise MyiaTypeError("array indices must be integers")
        return _result(a.dtype, probe[0].shape)
    try:
        return _result(a.dtype, probe[idx].shape)
    except IndexError as exc:
        raise MyiaShapeError(f"invalid index {idx!r} for an array of shape {a.shape}: {exc}") from None


@infer_rule(shape)
def _infer_shape(a):
    return AbstractTuple(tuple(i64(d) for d in _array(a, "shape").shape))


@infer_rule(ndim)
def _infer_ndim(a):
    return i64(len(_array(a, "ndim").shape))


@infer_rule(array_len)
def _infer_array_len(a):
    a = _array(a, "len")
    if not a.shape:
        raise MyiaTypeError("len() of a 0-d array")
    return i64(a.shape[0])


@infer_rule(transpose)
def _infer_transpose(a, axes):
    a = _array(a, "transpose")
    ax = const_value(axes, "transpose's axes") if not (
        isinstance(axes, AbstractConstant) and axes.value is None
    ) else tuple(reversed(range(len(a.shape))))
    if sorted(ax) != list(range(len(a.shape))):
        raise MyiaShapeError(f"axes {ax} do not match an array of shape {shape_str(a.shape)}")
    return _result(a.dtype, tuple(a.shape[i] for i in ax))


@infer_rule(reshape)
def _infer_reshape(a, shape):
    a = _array(a, "reshape")
    new = const_value(shape, "reshape's shape")
    new = (new,) if isinstance(new, int) else tuple(new)
    size = int(np.prod(a.shape))
    if new.count(-1) == 1:
        rest = int(np.prod([d for d in new if d != -1]))
        if rest and size % rest == 0:
            new = tuple(size // rest if d == -1 else d for d in new)
    if int(np.prod(new)) != size or any(d < 0 for d in new):
        raise MyiaShapeError(f"cannot reshape an array of shape {shape_str(a.shape)} into {new}")
    return _result(a.dtype, new)


@infer_rule(reduce_sum)
def _infer_reduce_sum(a, axis, keepdims):
    a = _array(a, "sum")
    ax = const_value(axis, "the axis") if not (
        isinstance(axis, AbstractConstant) and axis.value is None
    ) else None
    kd = const_value(keepdims, "keepdims")
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, dtype=a.dtype), a.shape, [0] * len(a.shape))
    try:
        out = np.sum(probe, axis=ax, keepdims=kd)
    except (ValueError, np.exceptions.AxisError) as exc:
        raise MyiaShapeError(f"sum over axis {ax} of shape {shape_str(a.shape)}: {exc}") from None
    return _result(np.result_type(out).name, np.shape(out))

"""Array primitives with NumPy semantics: shapes, creation, indexing, joins, reductions.

Each primitive is its NumPy implementation, followed by its type and shape rule. Shapes, axes,
sizes and dtypes are compile-time constants, except dimensions known only at run time (None,
from joins of arrays of different shapes), which NumPy checks when the program runs. A result
of shape ``()`` is a NumPy scalar, never a 0-d array, at run time as in inference. Elementwise
arithmetic and math functions live in `scalar.py`, with `where` and `clip`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..abstract.data import (
    ANYTHING,
    AbstractArray,
    AbstractConstant,
    AbstractList,
    AbstractScalar,
    AbstractTuple,
    show,
)
from ..abstract.lattice import promote
from ..errors import MyiaShapeError, MyiaTypeError
from ..grad.registry import bprop, nondifferentiable
from ..infer.registry import infer_rule
from ..infer.rulelib import (
    array_result,
    as_array,
    as_dtype,
    axes_arg,
    broadcast_shapes,
    const_dtype,
    const_value,
    i64,
    is_none,
    join_axis,
    normalize_axis,
    probe_shape,
    shape_dtype,
    shape_str,
    shape_value,
)
from .core import primitive
from .index_probes import index_probe, plain, probe_twice

_PY_SCALARS = (bool, int, float)


def _scalar(x: Any) -> Any:
    """Return a 0-d array as a NumPy scalar (other values unchanged)."""
    return x[()] if type(x) is np.ndarray and x.ndim == 0 else x


def _shape_arg(shape: Any) -> Any:
    """Normalize a shape or axes argument: ``n`` -> ``(n,)``, ``((3, 4),)`` -> ``(3, 4)``."""
    if isinstance(shape, tuple) and len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return shape


def _probe(shape: tuple[int, ...]) -> np.ndarray:
    """Return an array of `shape` that takes no memory, to compute result shapes with NumPy."""
    return np.broadcast_to(np.empty((), dtype="V0"), shape)


def _strong(*args: Any) -> str:
    """Return the promoted dtype of `args`, Python scalars counting as NumPy arrays."""
    return promote(*((a.dtype, False) for a in args))[0]


# Attributes -----------------------------------------------------------------------------------


@primitive
def shape(a):
    """``a.shape``: a tuple of ints."""
    return np.shape(a)


@primitive
def ndim(a):
    """``a.ndim``."""
    return np.ndim(a)


@primitive
def size(a):
    """``a.size``: the number of elements."""
    return int(np.size(a))


@primitive
def dtype_of(a):
    """``a.dtype``: a NumPy dtype, a compile-time constant."""
    return np.asarray(a).dtype


@primitive
def array_len(a):
    """``len(a)``: the size of the first axis."""
    return len(a)


@infer_rule(shape)
def _infer_shape(a):
    # A dimension known only at run time is an int known only at run time.
    dims = as_array(a, "shape").shape
    return AbstractTuple(tuple(i64(ANYTHING if d is None else d) for d in dims))


@infer_rule(ndim)
def _infer_ndim(a):
    return i64(len(as_array(a, "ndim").shape))


@infer_rule(size)
def _infer_size(a):
    s = as_array(a, "size").shape
    return i64(math.prod(s) if None not in s else ANYTHING)


@infer_rule(dtype_of)
def _infer_dtype_of(a):
    return AbstractConstant(np.dtype(as_array(a, "dtype").dtype))


@infer_rule(array_len)
def _infer_array_len(a):
    a = as_array(a, "len")
    if not a.shape:
        raise MyiaTypeError("len() of a 0-d array")
    return i64(ANYTHING if a.shape[0] is None else a.shape[0])


# Creation and conversion ----------------------------------------------------------------------


@primitive
def zeros(shape, dtype=None):
    """``np.zeros(shape, dtype)`` (float64 by default)."""
    return _scalar(np.zeros(shape, as_dtype(dtype) or np.float64))


@primitive
def ones(shape, dtype=None):
    """``np.ones(shape, dtype)`` (float64 by default)."""
    return _scalar(np.ones(shape, as_dtype(dtype) or np.float64))


@primitive
def full(shape, fill_value, dtype=None):
    """``np.full(shape, fill_value, dtype)`` (the dtype of `fill_value` by default)."""
    return _scalar(np.full(shape, fill_value, as_dtype(dtype)))


@primitive
def zeros_like(a, dtype=None):
    """``np.zeros_like(a, dtype)``."""
    return _scalar(np.zeros_like(a, as_dtype(dtype)))


@primitive
def ones_like(a, dtype=None):
    """``np.ones_like(a, dtype)``."""
    return _scalar(np.ones_like(a, as_dtype(dtype)))


@primitive
def full_like(a, fill_value, dtype=None):
    """``np.full_like(a, fill_value, dtype)``."""
    return _scalar(np.full_like(a, fill_value, as_dtype(dtype)))


@primitive
def arange(start, stop=None, step=None, dtype=None):
    """``np.arange(start, stop, step, dtype)`` (of unknown length if a bound is not constant)."""
    return np.arange(start, stop, step, dtype=as_dtype(dtype))


@primitive
def astype(a, dtype):
    """``a.astype(dtype)``."""
    return _scalar(np.asarray(a).astype(as_dtype(dtype)))


def _const_shape(shape, what, negative=False):
    return shape_value(shape, what, negative, _shape_arg)


@infer_rule(zeros)
def _infer_zeros(shape, dtype, what="zeros"):
    dt = shape_dtype(dtype, what, f"np.{what}((2, 3)), not np.{what}(2, 3)")
    return array_result(dt or "float64", _const_shape(shape, what))


infer_rule(ones)(lambda shape, dtype: _infer_zeros(shape, dtype, "ones"))


@infer_rule(full)
def _infer_full(shape, fill_value, dtype):
    s = _const_shape(shape, "full")
    fill = as_array(fill_value, "full")
    broadcast_shapes("full", s, fill.shape)
    dt = shape_dtype(dtype, "full", "np.full((2, 3), fill_value), not np.full(2, 3, fill_value)")
    return array_result(dt or fill.dtype, s)


@infer_rule(zeros_like, ones_like)
def _infer_zeros_like(a, dtype):
    a = as_array(a, "zeros_like")
    return array_result(const_dtype(dtype, "zeros_like") or a.dtype, a.shape)


@infer_rule(full_like)
def _infer_full_like(a, fill_value, dtype):
    a = as_array(a, "full_like")
    broadcast_shapes("full_like", a.shape, as_array(fill_value, "full_like").shape)
    return array_result(const_dtype(dtype, "full_like") or a.dtype, a.shape)


@infer_rule(arange)
def _infer_arange(start, stop, step, dtype):
    if any(isinstance(b, AbstractScalar) and b.value is ANYTHING for b in (start, stop, step)):
        # A bound known at run time only (``np.arange(x.shape[0])`` of an unknown dimension):
        # a vector of unknown length, whose dtype NumPy gives of bounds of the same types.
        samples = [
            None
            if is_none(b)
            else np.ones((), as_array(b, "arange").dtype)[()]
            if not (isinstance(b, AbstractScalar) and b.weak)
            else {"int64": 1, "float64": 1.0, "bool": True}.get(b.dtype, 1)
            for b in (start, stop, step)
        ]
        dt = as_dtype(const_dtype(dtype, "arange"))
        return AbstractArray(np.arange(*samples, dtype=dt).dtype.name, (None,))
    bounds = [const_value(b, "the bounds of arange") for b in (start, stop, step)]
    try:
        probe = np.arange(*bounds, dtype=as_dtype(const_dtype(dtype, "arange")))
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise MyiaTypeError(f"arange{tuple(bounds)}: {exc}") from None
    return AbstractArray(probe.dtype.name, probe.shape)


@infer_rule(astype)
def _infer_astype(a, dtype):
    dt = const_dtype(dtype, "astype")
    if dt is None:
        raise MyiaTypeError("astype needs a dtype")
    return array_result(dt, as_array(a, "astype").shape)


# Shapes ---------------------------------------------------------------------------------------


@primitive
def reshape(a, shape):
    """``np.reshape(a, shape)``; one dimension may be -1."""
    return _scalar(np.reshape(a, _shape_arg(shape)))


@primitive
def transpose(a, axes=None):
    """``np.transpose(a, axes)`` (``axes`` None or ``()`` reverses the axes)."""
    axes = _shape_arg(axes)
    return _scalar(np.transpose(a, axes or None))  # of a 0-d array: a scalar, as inferred


@primitive
def swapaxes(a, axis1, axis2):
    """``np.swapaxes(a, axis1, axis2)``."""
    return np.swapaxes(a, axis1, axis2)


@primitive
def expand_dims(a, axis):
    """``np.expand_dims(a, axis)`` (``axis`` an int or a tuple)."""
    return np.expand_dims(a, axis)


@primitive
def squeeze(a, axis=None):
    """``np.squeeze(a, axis)``: remove axes of size 1."""
    return _scalar(np.squeeze(a, axis))


@infer_rule(reshape)
def _infer_reshape(a, shape):
    a = as_array(a, "reshape")
    new = _const_shape(shape, "reshape", negative=True)
    if None in a.shape or None in new:
        # Sizes known only at run time: NumPy checks them; a -1 is unknown unless the other
        # dimensions are the same as the array's.
        if new.count(-1) > 1:
            raise MyiaShapeError("can only specify one unknown dimension in reshape")
        if -1 in new:
            known = [d for d in new if d != -1]
            rest = list(a.shape)
            for d in known:
                if d in rest:
                    rest.remove(d)
                else:
                    rest = [None]
                    break
            fill = rest[0] if len(rest) == 1 else math.prod(rest) if None not in rest else None
            new = tuple(fill if d == -1 else d for d in new)
        return array_result(a.dtype, new)
    size = math.prod(a.shape)
    if new.count(-1) == 1:
        rest = math.prod(d for d in new if d != -1)
        if rest and size % rest == 0:
            new = tuple(size // rest if d == -1 else d for d in new)
    if math.prod(new) != size or any(d < 0 for d in new):
        raise MyiaShapeError(
            f"cannot reshape an array of shape {shape_str(a.shape)} into shape {shape_str(new)}"
        )
    return array_result(a.dtype, new)


@infer_rule(transpose)
def _infer_transpose(a, axes):
    a = as_array(a, "transpose")
    n = len(a.shape)
    ax = None if is_none(axes) else _shape_arg(const_value(axes, "the axes of transpose"))
    if not ax:
        ax = tuple(reversed(range(n)))
    if len(ax) != n:
        raise MyiaShapeError(f"axes {ax} do not match an array of shape {shape_str(a.shape)}")
    ax = tuple(normalize_axis(i, n, a.shape) for i in ax)
    if len(set(ax)) != n:
        raise MyiaShapeError(f"repeated axis in transpose: {ax}")
    return array_result(a.dtype, tuple(a.shape[i] for i in ax))


@infer_rule(swapaxes)
def _infer_swapaxes(a, axis1, axis2):
    a = as_array(a, "swapaxes")
    n, s = len(a.shape), list(a.shape)
    i, j = (normalize_axis(const_value(x, "an axis"), n, a.shape) for x in (axis1, axis2))
    s[i], s[j] = s[j], s[i]
    return array_result(a.dtype, tuple(s))


@infer_rule(expand_dims)
def _infer_expand_dims(a, axis):
    a = as_array(a, "expand_dims")
    ax = const_value(axis, "the axis of expand_dims")
    ax = ax if isinstance(ax, tuple) else (ax,)
    n = len(a.shape) + len(ax)
    new = {normalize_axis(i, n) for i in ax}
    if len(new) != len(ax):
        raise MyiaShapeError(f"repeated axis in expand_dims: {ax}")
    dims = iter(a.shape)
    return array_result(a.dtype, tuple(1 if i in new else next(dims) for i in range(n)))


@infer_rule(squeeze)
def _infer_squeeze(a, axis):
    a = as_array(a, "squeeze")
    if is_none(axis):
        if None in a.shape:
            raise MyiaShapeError(
                f"squeeze of an array of shape {shape_str(a.shape)}, some of whose dimensions "
                "are known only at run time: name the axes to remove (axis=...)"
            )
        ax = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        ax = axes_arg(axis, len(a.shape), "squeeze", a.shape)
    for i in ax:
        if a.shape[i] not in (1, None):
            raise MyiaShapeError(
                f"cannot squeeze axis {i} of an array of shape {shape_str(a.shape)}: "
                "its size is not 1"
            )
    return array_result(a.dtype, tuple(d for i, d in enumerate(a.shape) if i not in ax))


# Joining and splitting ------------------------------------------------------------------------


@primitive
def concatenate(arrays, axis=0):
    """``np.concatenate(arrays, axis)`` of a tuple of arrays (``axis`` None flattens them)."""
    return np.concatenate(arrays, axis=axis)


@primitive
def stack(arrays, axis=0):
    """``np.stack(arrays, axis)`` of a tuple of arrays of the same shape."""
    return np.stack(arrays, axis=axis)


@primitive
def split(a, indices_or_sections, axis=0, even=True):
    """``np.split(a, indices_or_sections, axis)``, as a tuple of arrays.

    With ``even`` False, ``np.array_split``: `n` sections of an axis of length `m` need not
    divide it (the first ``m % n`` sections have one more element).
    """
    fn = np.split if even else np.array_split
    return tuple(fn(a, indices_or_sections, axis=axis))


def _array_tuple(arrays, what):
    """Return the arrays of the tuple `arrays` (a list's length is not known statically)."""
    if isinstance(arrays, AbstractList):
        raise MyiaTypeError(
            f"{what} of a list: its length is not known at compile time; "
            f"pass a tuple instead, e.g. np.{what}((a, b))"
        )
    if not isinstance(arrays, AbstractTuple) or not arrays.elements:
        raise MyiaTypeError(f"{what} expects a non-empty tuple of arrays, not {show(arrays)}")
    return [as_array(x, what) for x in arrays.elements]


@infer_rule(concatenate)
def _infer_concatenate(arrays, axis):
    arrs = _array_tuple(arrays, "concatenate")
    ax = None if is_none(axis) else join_axis(axis, "concatenate")  # (an array: a mistake)
    if any(not x.shape for x in arrs):
        raise MyiaShapeError("concatenate: zero-dimensional arrays cannot be concatenated")
    dtype = _strong(*arrs)
    if ax is None:
        sizes = [math.prod(x.shape) if None not in x.shape else None for x in arrs]
        return AbstractArray(dtype, (None if None in sizes else sum(sizes),))
    first = arrs[0].shape
    ax = normalize_axis(ax, len(first), first)
    out = list(first)
    for x in arrs[1:]:
        s = x.shape
        if len(s) != len(first) or any(
            not _same_dim(s[i], first[i]) for i in range(len(s)) if i != ax
        ):
            raise MyiaShapeError(
                f"Incompatible shapes in concatenate along axis {ax}: "
                f"{shape_str(first)} and {shape_str(s)}"
            )
        out = [d if d is not None else e for d, e in zip(out, s)]
    sizes = [x.shape[ax] for x in arrs]
    out[ax] = None if None in sizes else sum(sizes)
    return AbstractArray(dtype, tuple(out))


def _same_dim(a: int | None, b: int | None) -> bool:
    """Whether dimensions `a` and `b` may be equal (None, known at run time only, may be)."""
    return a == b or a is None or b is None


def _same_shape(a: tuple[int | None, ...], b: tuple[int | None, ...]) -> bool:
    return len(a) == len(b) and all(_same_dim(x, y) for x, y in zip(a, b))


@infer_rule(stack)
def _infer_stack(arrays, axis):
    arrs = _array_tuple(arrays, "stack")
    first = arrs[0].shape
    for x in arrs[1:]:
        if not _same_shape(x.shape, first):
            raise MyiaShapeError(
                f"Incompatible shapes in stack: {shape_str(first)} and {shape_str(x.shape)}"
            )
        first = tuple(d if d is not None else e for d, e in zip(first, x.shape))
    ax = normalize_axis(join_axis(axis, "stack"), len(first) + 1)
    return AbstractArray(_strong(*arrs), first[:ax] + (len(arrs),) + first[ax:])


@infer_rule(split)
def _infer_split(a, indices_or_sections, axis, even):
    what = "split" if const_value(even, "split's even") else "array_split"
    a = as_array(a, what)
    how = const_value(indices_or_sections, f"the sections of {what}")
    ax = normalize_axis(const_value(axis, f"the axis of {what}"), len(a.shape), a.shape)
    fn = getattr(np, what)
    try:
        parts = probe_shape(lambda s: [p.shape for p in fn(_probe(s), how, axis=ax)], a.shape)
    except ValueError as exc:
        raise MyiaShapeError(f"{what} of an array of shape {shape_str(a.shape)}: {exc}") from None
    return AbstractTuple(tuple(AbstractArray(a.dtype, p) for p in parts))


# Indexing -------------------------------------------------------------------------------------


@primitive
def array_getitem(a, index):
    """``a[index]``: NumPy's basic indexing (ints, slices, None, ...) and integer arrays."""
    return _scalar(a[index])


@primitive
def take(a, indices, axis=None):
    """``np.take(a, indices, axis)``: gather along `axis` (the flattened array if None)."""
    return _scalar(np.take(a, indices, axis=axis))


def _getitem_shape(a: AbstractArray, idx: Any) -> Any:
    if plain(idx):
        return probe_shape(lambda s: _probe(s)[idx].shape, a.shape)
    whole, empty = probe_twice(idx)
    shape = probe_shape(lambda s: _probe(s)[whole(s)].shape, a.shape)
    other = probe_shape(lambda s: _probe(s)[empty(s)].shape, a.shape)
    return tuple(d if d == e else None for d, e in zip(shape, other))


@infer_rule(array_getitem)
def _infer_array_getitem(a, index):
    a = as_array(a, "indexing")
    idx = index_probe(index)
    try:
        return array_result(a.dtype, _getitem_shape(a, idx))
    except (IndexError, ValueError, TypeError) as exc:  # (a slice's step of zero, or a float)
        if _unknown_int(index) and a.shape and a.shape[0] == 0:
            # ``x[i]`` on an empty first axis (the body of ``for row in x``): it raises
            # whenever it runs, so its type is that of the rows it would read.
            return array_result(a.dtype, a.shape[1:])
        raise MyiaShapeError(
            f"invalid index for an array of shape {shape_str(a.shape)}: {exc}"
        ) from None


def _unknown_int(index) -> bool:
    """Whether `index` is an integer known only at run time."""
    return (
        isinstance(index, AbstractScalar)
        and index.dtype.startswith(("int", "uint"))
        and index.value is ANYTHING
    )


@infer_rule(take)
def _infer_take(a, indices, axis):
    a = as_array(a, "take")
    idx = as_array(indices, "take") if not isinstance(indices, AbstractTuple) else None
    ishape = idx.shape if idx is not None else (len(indices.elements),)
    if idx is not None and not idx.dtype.startswith(("int", "uint")):
        raise MyiaTypeError(f"take's indices must be integers, not {show(indices)}")
    if is_none(axis):
        return array_result(a.dtype, ishape)
    ax = normalize_axis(const_value(axis, "the axis of take"), len(a.shape), a.shape)
    return array_result(a.dtype, a.shape[:ax] + ishape + a.shape[ax + 1 :])


# Linear algebra -------------------------------------------------------------------------------


@primitive
def matmul(x, y):
    """``x @ y`` with NumPy's rules (vector, matrix and batched)."""
    return np.matmul(x, y)


@primitive
def dot(x, y):
    """``np.dot(x, y)``, with NumPy's rules for N-D arrays (unlike matmul's batching).

    The sum is over the last axis of `x` and the second-to-last of `y` (its only axis if 1-D);
    with a scalar, it is a multiplication.
    """
    return _scalar(np.dot(x, y))


@infer_rule(matmul)
def _infer_matmul(x, y):
    a, b = as_array(x, "matmul"), as_array(y, "matmul")
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        raise MyiaShapeError("matmul does not accept scalars: use * instead")
    ma = sa if len(sa) > 1 else (1, *sa)
    mb = sb if len(sb) > 1 else (*sb, 1)
    if not _same_dim(ma[-1], mb[-2]):
        raise MyiaShapeError(f"Incompatible shapes in matmul: {shape_str(sa)} and {shape_str(sb)}")
    batch = broadcast_shapes("matmul", ma[:-2], mb[:-2])
    shape = (*batch, ma[-2], mb[-1])
    if len(sa) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(sb) == 1:
        shape = shape[:-1]
    return array_result(_strong(a, b), shape)


@infer_rule(dot)
def _infer_dot(x, y):
    a, b = as_array(x, "dot"), as_array(y, "dot")
    sa, sb = a.shape, b.shape
    dtype = _strong(a, b)
    if not sa or not sb:
        return array_result(dtype, sa or sb)
    k = sb[-2] if len(sb) > 1 else sb[0]
    if not _same_dim(sa[-1], k):
        raise MyiaShapeError(f"Incompatible shapes in dot: {shape_str(sa)} and {shape_str(sb)}")
    return array_result(dtype, sa[:-1] + sb[:-2] + sb[-1:] if len(sb) > 1 else sa[:-1])


# Backpropagators ------------------------------------------------------------------------------
#
# Static arguments (shapes, axes, dtypes, indices) get `gzeros` of themselves: zero for ints,
# themselves for None, slices and dtypes.


@bprop(astype)
def bprop_astype(a, dtype, out, dout):
    return (unbroadcast(dout, a), gzeros(dtype))


@bprop(full)
def bprop_full(shape_, fill_value, dtype, out, dout):
    return (gzeros(shape_), unbroadcast(dout, fill_value), gzeros(dtype))


@bprop(full_like)
def bprop_full_like(a, fill_value, dtype, out, dout):
    return (gzeros(a), unbroadcast(dout, fill_value), gzeros(dtype))


@bprop(reshape)
def bprop_reshape(a, newshape, out, dout):
    return (unbroadcast(reshape(dout, shape(a)), a), gzeros(newshape))


@bprop(transpose)
def bprop_transpose(a, axes, out, dout):
    return (unbroadcast(transpose(dout, invert_permutation(axes, ndim(a))), a), gzeros(axes))


@bprop(swapaxes)
def bprop_swapaxes(a, axis1, axis2, out, dout):
    return (swapaxes(dout, axis1, axis2), gzeros(axis1), gzeros(axis2))


@bprop(expand_dims, squeeze)
def bprop_expand_dims(a, axis, out, dout):
    return (unbroadcast(reshape(dout, shape(a)), a), gzeros(axis))


@bprop(concatenate)
def bprop_concatenate(arrays, axis, out, dout):
    return (unconcatenate(dout, arrays, axis), gzeros(axis))


@bprop(stack)
def bprop_stack(arrays, axis, out, dout):
    return (unstack(dout, arrays, axis), gzeros(axis))


@bprop(split)
def bprop_split(a, indices_or_sections, axis, even, out, dout):
    da = unbroadcast(concatenate(dout, axis), a)
    return (da, gzeros(indices_or_sections), gzeros(axis), gzeros(even))


@bprop(array_getitem)
def bprop_array_getitem(a, index, out, dout):
    return (array_index_add(gzeros(a), index, dout), gzeros(index))


@bprop(take)
def bprop_take(a, indices, axis, out, dout):
    return (untake(dout, a, indices, axis), gzeros(indices), gzeros(axis))


@bprop(matmul)
def bprop_matmul(x, y, out, dout):
    if ndim(x) == 2:
        if ndim(y) == 1:
            # A matrix times a vector: an outer product, and the vector times the matrix.
            dx = expand_dims(dout, -1) * expand_dims(y, 0)
            return (unbroadcast(dx, x), unbroadcast(matmul(dout, x), y))
    if ndim(x) == 1:
        if ndim(y) == 2:
            dy = expand_dims(x, -1) * expand_dims(dout, 0)
            return (unbroadcast(matmul(y, dout), x), unbroadcast(dy, y))
    # Vectors are made matrices (x: a row, y: a column), then batch axes are summed back.
    x2 = expand_dims(x, 0) if ndim(x) == 1 else x
    y2 = expand_dims(y, -1) if ndim(y) == 1 else y
    d = expand_dims(dout, -1) if ndim(y) == 1 else dout
    d = expand_dims(d, -2) if ndim(x) == 1 else d
    dx = unbroadcast(matmul(d, swapaxes(y2, -1, -2)), x2)
    dy = unbroadcast(matmul(swapaxes(x2, -1, -2), d), y2)
    return (reshape(dx, shape(x)), reshape(dy, shape(y)))


@bprop(dot)
def bprop_dot(x, y, out, dout):
    if ndim(x) == 0 or ndim(y) == 0:
        return (unbroadcast(dout * y, x), unbroadcast(dout * x, y))
    # dot(x, y)[i..., k..., m] = sum_j x[i..., j] y[k..., j, m]: as a product of matrices
    # x (P, J) and y (J, Q), Q running over (k..., m); a vector y is a column.
    y2 = expand_dims(y, -1) if ndim(y) == 1 else y
    j = shape(y2)[-2]
    d = reshape(dout, (-1, size(y2) // j))
    x2 = reshape(x, (-1, j))
    yq = reshape(swapaxes(y2, -1, -2), (-1, j))
    dx = reshape(matmul(d, yq), shape(x))
    dy = swapaxes(reshape(matmul(swapaxes(x2, 0, 1), d), (j, -1, shape(y2)[-1])), 0, 1)
    return (unbroadcast(dx, x), unbroadcast(reshape(dy, shape(y)), y))


# Their values do not depend on their arguments' values (or they are integers).
nondifferentiable(shape, ndim, size, dtype_of, array_len)
nondifferentiable(zeros, ones, zeros_like, ones_like, arange)

from .array_grad import (  # noqa: E402
    invert_permutation,
    unconcatenate,
    unstack,
    untake,
)
from .grad import array_index_add, gzeros, unbroadcast  # noqa: E402

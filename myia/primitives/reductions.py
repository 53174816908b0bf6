"""Reductions with NumPy semantics: sums, products, means, extrema and their indices.

Each primitive is its NumPy implementation, followed by its type and shape rule and its
backpropagator; a result of shape ``()`` is a NumPy scalar, as in `array.py`.
"""

from __future__ import annotations

import numpy as np

from ..errors import MyiaShapeError
from ..grad.registry import bprop, jvp, linear, nondifferentiable
from ..infer.registry import infer_rule
from ..infer.rulelib import (
    array_result,
    as_array,
    as_dtype,
    axes_arg,
    const_dtype,
    const_value,
    is_none,
    shape_str,
)
from .array import _scalar, astype, dtype_of, expand_dims, size
from .core import primitive

# The primitives ----------------------------------------------------------------------------------


@primitive
def reduce_sum(a, axis=None, keepdims=False, dtype=None):
    """``np.sum(a, axis, dtype, keepdims=keepdims)``."""
    return _scalar(np.sum(a, axis=axis, dtype=as_dtype(dtype), keepdims=keepdims))


@primitive
def reduce_prod(a, axis=None, keepdims=False, dtype=None):
    """``np.prod(a, axis, dtype, keepdims=keepdims)``."""
    return _scalar(np.prod(a, axis=axis, dtype=as_dtype(dtype), keepdims=keepdims))


@primitive
def reduce_mean(a, axis=None, keepdims=False, dtype=None):
    """``np.mean(a, axis, dtype, keepdims=keepdims)``."""
    return _scalar(np.mean(a, axis=axis, dtype=as_dtype(dtype), keepdims=keepdims))


@primitive
def reduce_max(a, axis=None, keepdims=False):
    """``np.max(a, axis, keepdims=keepdims)``."""
    return _scalar(np.max(a, axis=axis, keepdims=keepdims))


@primitive
def reduce_min(a, axis=None, keepdims=False):
    """``np.min(a, axis, keepdims=keepdims)``."""
    return _scalar(np.min(a, axis=axis, keepdims=keepdims))


@primitive
def argmax(a, axis=None, keepdims=False):
    """``np.argmax(a, axis, keepdims=keepdims)``: int64 indices."""
    return _scalar(np.argmax(a, axis=axis, keepdims=keepdims))


@primitive
def argmin(a, axis=None, keepdims=False):
    """``np.argmin(a, axis, keepdims=keepdims)``: int64 indices."""
    return _scalar(np.argmin(a, axis=axis, keepdims=keepdims))


def _reduction(a, axis, keepdims, npfn, what, dtype=None, identity=True, single=False):
    a = as_array(a, what)
    if single and not is_none(axis):
        const_value(axis, f"the axis of {what}", int)
    axes = axes_arg(axis, len(a.shape), what, a.shape)
    if not identity and any(a.shape[i] == 0 for i in axes):
        raise MyiaShapeError(
            f"{what} of an empty axis (an array of shape {shape_str(a.shape)}) has no value"
        )
    kd = const_value(keepdims, f"keepdims of {what}", (bool, int))
    dt = npfn(np.ones(1, a.dtype), **({} if dtype is None else {"dtype": dtype})).dtype.name
    out = tuple(1 if i in axes else d for i, d in enumerate(a.shape) if kd or i not in axes)
    return array_result(dt, out)


def _reduction_rule(prim, npfn, **kw):
    def rule(a, axis, keepdims, dtype=None):
        dt = None if dtype is None else const_dtype(dtype, prim.name)
        return _reduction(a, axis, keepdims, npfn, prim.name, dt, **kw)

    infer_rule(prim)(rule)


_reduction_rule(reduce_sum, np.sum)
_reduction_rule(reduce_prod, np.prod)
_reduction_rule(reduce_mean, np.mean)
_reduction_rule(reduce_max, np.max, identity=False)
_reduction_rule(reduce_min, np.min, identity=False)
_reduction_rule(argmax, np.argmax, identity=False, single=True)
_reduction_rule(argmin, np.argmin, identity=False, single=True)


# Backpropagators ---------------------------------------------------------------------------------


def _unreduce(a, axis, keepdims, d):
    """`d`, of the shape of a reduction of `a`, broadcast back to the shape of `a`."""
    if axis is None or keepdims:
        return broadcast_like(d, a)
    return broadcast_like(expand_dims(d, axis), a)


@bprop(reduce_sum)
def bprop_reduce_sum(a, axis, keepdims, dtype, out, dout):
    da = unbroadcast(_unreduce(a, axis, keepdims, dout), a)
    return (da, gzeros(axis), gzeros(keepdims), gzeros(dtype))


@bprop(reduce_mean)
def bprop_reduce_mean(a, axis, keepdims, dtype, out, dout):
    da = unbroadcast(_unreduce(a, axis, keepdims, dout * (size(out) / size(a))), a)
    return (da, gzeros(axis), gzeros(keepdims), gzeros(dtype))


@bprop(reduce_prod)
def bprop_reduce_prod(a, axis, keepdims, dtype, out, dout):
    # The product of the other elements: those before times those after (zeros are fine).
    others = exclusive_cumprod(a, axis, False) * exclusive_cumprod(a, axis, True)
    da = unbroadcast(_unreduce(a, axis, keepdims, dout) * others, a)
    return (da, gzeros(axis), gzeros(keepdims), gzeros(dtype))


@bprop(reduce_max, reduce_min)
def bprop_reduce_max(a, axis, keepdims, out, dout):
    # The sensitivity goes to the extrema, shared equally between ties.
    # Each extremum's share is divided in the reduced shape, then spread back.
    hit = a == _unreduce(a, axis, keepdims, out)
    share = dout / astype(reduce_sum(hit, axis, keepdims), dtype_of(a))
    da = unbroadcast(hit * _unreduce(a, axis, keepdims, share), a)
    return (da, gzeros(axis), gzeros(keepdims))


# Tangents (forward mode) -------------------------------------------------------------------------

linear(reduce_sum, 0)
linear(reduce_mean, 0)


@jvp(reduce_prod)
def jvp_reduce_prod(a, axis, keepdims, dtype, out, da, daxis, dkeepdims, ddtype):
    # The product of the other elements: those before times those after (zeros are fine).
    others = exclusive_cumprod(a, axis, False) * exclusive_cumprod(a, axis, True)
    return reduce_sum(da * others, axis, keepdims, dtype)


@jvp(reduce_max, reduce_min)
def jvp_reduce_max(a, axis, keepdims, out, da, daxis, dkeepdims):
    # The mean of the tangents of the extrema (ties share, as in the gradient).
    hit = a == _unreduce(a, axis, keepdims, out)
    count = astype(reduce_sum(hit, axis, keepdims, None), dtype_of(a))
    return reduce_sum(hit * da, axis, keepdims, None) / count


nondifferentiable(argmax, argmin)

from .array_grad import exclusive_cumprod  # noqa: E402
from .grad import broadcast_like, gzeros, unbroadcast  # noqa: E402

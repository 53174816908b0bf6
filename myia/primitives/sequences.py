"""Tuples whose length is known at compile time, built by a loop: ``tuple(range(3))``.

``tuple(xs)`` is a tuple in Python whatever `xs` is. Myia's tuples have a length known at
compile time, so ``tuple(xs)`` over a range of constant bounds or the rows of an array of
known shape collects the elements in a list (a loop, not unrolled) and makes it a tuple of
that length (`list_to_tuple`); `known` tells the library code (`myia.operations.lib`) which
lengths are known. A range's elements are constants too (`range_tuple`): ``np.sum(x,
axis=tuple(range(1, x.ndim)))``.

A list of arrays of any length joins into one array (`stack_list`, `concatenate_list`: so
``np.stack``, ``np.concatenate`` and ``np.vstack`` of a list built by a loop): the axis the
list makes or lengthens is of a length known at run time (``?`` in its type).
"""

from __future__ import annotations

import numpy as np

from ..abstract.data import (
    ANYTHING,
    BOTTOM,
    AbstractArray,
    AbstractConstant,
    AbstractList,
    AbstractScalar,
    AbstractSlice,
    AbstractTuple,
    show,
)
from ..abstract.lattice import constant_abstract, promote
from ..errors import MyiaShapeError, MyiaTypeError
from ..grad.registry import bprop, linear, nondifferentiable
from ..infer.kinds import static_value
from ..infer.registry import infer_rule
from ..infer.rulelib import as_array, join_axis, normalize_axis, py_bool
from .control import sens_as
from .core import primitive
from .grad import gzeros, sens_type, unbroadcast, unbroadcast_value
from .structure import make_list


@primitive(static=True)
def known(x):
    """Whether the value of scalar ``x`` is known at compile time."""
    return True


@infer_rule(known)
def _infer_known(x):
    return py_bool(isinstance(x, AbstractScalar) and static_value(x) is not ANYTHING)


@primitive
def list_to_tuple(lst, n):
    """The elements of list ``lst`` as a tuple of length ``n``, a constant int."""
    return tuple(lst)


@infer_rule(list_to_tuple)
def _infer_list_to_tuple(lst, n):
    k = static_value(n)
    if not isinstance(lst, AbstractList) or not isinstance(k, int) or k < 0:
        raise MyiaTypeError(f"list_to_tuple on {show(lst)}, {show(n)}")
    return AbstractTuple((lst.element,) * k)


@bprop(list_to_tuple)
def bprop_list_to_tuple(lst, n, out, dout):
    return (sens_as(make_list(*dout), lst), gzeros(n))


@primitive
def range_tuple(start, stop, step):
    """``tuple(range(start, stop, step))`` of bounds known at compile time: constants."""
    return tuple(range(start, stop, step))


@infer_rule(range_tuple)
def _infer_range_tuple(start, stop, step):
    bounds = [static_value(b) for b in (start, stop, step)]
    if not all(isinstance(b, int) for b in bounds):
        raise MyiaTypeError(f"range_tuple of bounds not known at compile time: {bounds}")
    return AbstractTuple(tuple(constant_abstract(i) for i in range(*bounds)))


@primitive
def slice_bounds(s):
    """``(s.start, s.stop, s.step)`` of slice `s` (None where a bound is not given)."""
    return s.start, s.stop, s.step


@infer_rule(slice_bounds)
def _infer_slice_bounds(s):
    if isinstance(s, AbstractSlice):
        return AbstractTuple((s.start, s.stop, s.step))
    v = static_value(s)
    if not isinstance(v, slice):
        raise MyiaTypeError(f"slice_bounds of {show(s)}")
    return AbstractTuple(tuple(constant_abstract(b) for b in (v.start, v.stop, v.step)))


@primitive
def stack_list(lst, axis):
    """``np.stack(lst, axis)`` of a list of arrays of one shape (of any length)."""
    return np.stack(lst, axis=axis)


@primitive
def unstack_list(d, lst, axis):
    """Split `d`, the sensitivity of ``stack_list(lst, axis)``, into the list of its parts'."""
    return [unbroadcast_value(np.take(d, i, axis=axis), a) for i, a in enumerate(lst)]


@primitive
def concatenate_list(lst, axis):
    """``np.concatenate(lst, axis)`` of a list of arrays (``axis`` None flattens them)."""
    return np.concatenate(lst, axis=axis)


@primitive
def unconcatenate_list(d, lst, axis):
    """Split `d`, the sensitivity of ``concatenate_list(lst, axis)``, into its parts'."""
    flat = axis is None
    sizes = [np.size(a) if flat else np.shape(a)[axis] for a in lst]
    parts = np.split(np.ravel(d) if flat else d, np.cumsum(sizes)[:-1], axis=0 if flat else axis)
    return [unbroadcast_value(np.reshape(p, np.shape(a)), a) for p, a in zip(parts, lst)]


@infer_rule(stack_list)
def _infer_stack_list(lst, axis):
    if not isinstance(lst, AbstractList):
        raise MyiaTypeError(f"stack_list expects a list of arrays, not {show(lst)}")
    if lst.element is BOTTOM:
        return BOTTOM  # no element seen yet (a loop's first approximation)
    a = as_array(lst.element, "np.stack of a list")
    ax = normalize_axis(join_axis(axis, "stack"), len(a.shape) + 1)
    n = len(lst.value) if lst.value is not ANYTHING else None
    dtype = promote((a.dtype, False))[0]
    return AbstractArray(dtype, a.shape[:ax] + (n,) + a.shape[ax:])


@infer_rule(concatenate_list)
def _infer_concatenate_list(lst, axis):
    if not isinstance(lst, AbstractList):
        raise MyiaTypeError(f"concatenate_list expects a list of arrays, not {show(lst)}")
    if lst.element is BOTTOM:
        return BOTTOM  # no element seen yet (a loop's first approximation)
    a = as_array(lst.element, "np.concatenate of a list")
    dtype = promote((a.dtype, False))[0]
    if isinstance(axis, AbstractConstant) and axis.value is None:
        return AbstractArray(dtype, (None,))
    if not a.shape:
        raise MyiaShapeError("concatenate: zero-dimensional arrays cannot be concatenated")
    ax = normalize_axis(join_axis(axis, "concatenate"), len(a.shape), a.shape)
    return AbstractArray(dtype, a.shape[:ax] + (None,) + a.shape[ax + 1 :])


@infer_rule(unstack_list, unconcatenate_list)
def _infer_unstack_list(d, lst, axis):
    return sens_type(lst)


@bprop(stack_list)
def bprop_stack_list(lst, axis, out, dout):
    return (unstack_list(dout, lst, axis), gzeros(axis))


@bprop(unstack_list)
def bprop_unstack_list(d, lst, axis, out, dout):
    return (unbroadcast(stack_list(dout, axis), d), gzeros(lst), gzeros(axis))


@bprop(concatenate_list)
def bprop_concatenate_list(lst, axis, out, dout):
    return (unconcatenate_list(dout, lst, axis), gzeros(axis))


@bprop(unconcatenate_list)
def bprop_unconcatenate_list(d, lst, axis, out, dout):
    return (unbroadcast(concatenate_list(dout, axis), d), gzeros(lst), gzeros(axis))


nondifferentiable(known, range_tuple, slice_bounds)
linear(list_to_tuple, 0)

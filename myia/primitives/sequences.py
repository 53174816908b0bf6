"""Tuples whose length is known at compile time, built by a loop: ``tuple(range(3))``.

``tuple(xs)`` is a tuple in Python whatever `xs` is. Myia's tuples have a length known at
compile time, so ``tuple(xs)`` over a range of constant bounds or the rows of an array of
known shape collects the elements in a list (a loop, not unrolled) and makes it a tuple of
that length (`list_to_tuple`); `known` tells the library code (`myia.operations.lib`) which
lengths are known. A range's elements are constants too (`range_tuple`): ``np.sum(x,
axis=tuple(range(1, x.ndim)))``.
"""

from __future__ import annotations

from ..abstract.data import (
    ANYTHING,
    AbstractList,
    AbstractScalar,
    AbstractSlice,
    AbstractTuple,
    show,
)
from ..abstract.lattice import constant_abstract
from ..errors import MyiaTypeError
from ..grad.registry import bprop, linear, nondifferentiable
from ..infer.kinds import static_value
from ..infer.registry import infer_rule
from ..infer.rulelib import py_bool
from .core import primitive
from .grad import gzeros
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
    return (make_list(*dout), gzeros(n))


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


nondifferentiable(known, range_tuple, slice_bounds)
linear(list_to_tuple, 0)

"""Rewrites of what the J transform produces: environments, zeros, sums of sensitivities.

Backpropagators return the sensitivities of free variables in environments (`env_setitem`
under one key per free variable, `env_getitem` with a zero default to read one back), start
from zeros (`gzeros`) and add contributions up with `gadd`. Once the forward and backward
graphs are inlined, these rules resolve every lookup to the value stored, fold the zeros of
scalars into constants, and turn `gadd` into `add` or into the tuples and records of sums it
stands for, so that no environment, zero or tuple is left per operation.

A zero sensitivity carries no sign: ``gadd(x, gzeros(y)) => x`` even where ``x`` is ``-0.0``
(``-0.0 + 0.0`` is ``0.0``). It is the one rewrite that may change the sign of a zero result.

The rules of zeros are in `grad_zeros`, those of environments in `grad_envs`; this module has
the sums, broadcasting and backpropagators of a zero, and `GRAD`, the list of them all.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import (
    ENV,
    AbstractArray,
    AbstractFunction,
    AbstractScalar,
    AbstractTuple,
)
from ..abstract.lattice import FUNCTION, broaden
from ..ir.node import Apply, Node
from ..primitives import P
from ..primitives.grad import zero_of_type
from ..primitives.structure import convert_value
from .grad_envs import _ENV_RULES, env_add_empty, getitem_env, sens_env
from .grad_zeros import (
    _integral,
    _no_integers,
    dict_setitem_gzeros,
    getattr_gzeros,
    getitem_gzeros,
    gzeros_static,
    gzeros_unread_typed,
    is_zero,
    setattr_gzeros,
    setitem_gzeros,
    slice_add_tuples,
    static_zero,
    zero_node,
)
from .matcher import GRAPH_CALL, NO_VALUE, Rewrite, args_of, prim_of, rewrite, value_of
from .sweep import same_type

# Sums of sensitivities ----------------------------------------------------------------------


@rewrite(P.gadd)
def gadd_zero(node: Apply, opt: Any) -> Node | None:
    """Drop a zero from a sum of sensitivities.

    gadd(x, zero) => x;  gadd(zero, x) => x

    And ``gadd(x, y) => x`` for booleans (their sensitivities are all zero).
    """
    a, b = node.inputs[1:]
    if isinstance(node.abstract, AbstractScalar) and node.abstract.dtype == "bool":
        return a
    if is_zero(b):
        return a
    if is_zero(a):
        return b
    return None


@rewrite(P.gadd)
def gadd_tuples(node: Apply, opt: Any) -> Node | None:
    """Add tuples built in place element by element.

    gadd(make_tuple(a0, ..., an), make_tuple(b0, ..., bn)) => make_tuple(gadd(a0, b0), ...)
    """
    xs, ys = args_of(node.inputs[1], P.make_tuple), args_of(node.inputs[2], P.make_tuple)
    if xs is None or ys is None or len(xs) != len(ys):
        return None
    return opt.apply(P.make_tuple, *(_gadd(x, y, node, opt) for x, y in zip(xs, ys)), like=node)


@rewrite(P.gadd)
def gadd_records(node: Apply, opt: Any) -> Node | None:
    """Add records built in place field by field.

    gadd(make_record(C, a0, ...), make_record(C, b0, ...)) => make_record(C, gadd(a0, b0), ...)
    """
    xs, ys = args_of(node.inputs[1], P.make_record), args_of(node.inputs[2], P.make_record)
    if xs is None or ys is None or len(xs) != len(ys) or value_of(xs[0]) is not value_of(ys[0]):
        return None
    fields = (_gadd(x, y, node, opt) for x, y in zip(xs[1:], ys[1:]))
    return opt.apply(P.make_record, xs[0], *fields, like=node)


def _gadd(x: Node, y: Node, node: Apply, opt: Any) -> Node:
    if is_zero(y):
        return x
    if is_zero(x):
        return y
    return opt.apply(P.gadd, x, y, like=node)


@rewrite(P.gadd)
def gadd_index_add(node: Apply, opt: Any) -> Node | None:
    """Add a sensitivity to one element of an array into the other sensitivity directly.

    gadd(a, array_index_add(zero, i, v)) => array_index_add(a, i, v)  (and symmetrically)
    gadd(a, window_add(zero, i, v, axis)) => window_add(a, i, v, axis)  (``x[i:i + k]``)

    The sensitivity of ``x[i]`` is zero but at ``i``: summed into a loop's accumulated
    sensitivity, it costs one copy of ``a``, not a zero array, a copy and a sum.
    """
    for a, b in (node.inputs[1:], node.inputs[2:0:-1]):
        for prim in (P.array_index_add, P.window_add):
            parts = args_of(b, prim)
            if parts is None or not is_zero(parts[0]):
                continue
            if same_type(a.abstract, node.abstract) and same_type(b.abstract, node.abstract):
                return opt.apply(prim, a, *parts[1:], like=node)
    return None


@rewrite(P.array_index_add)
def index_add_everywhere(node: Apply, opt: Any) -> Node | None:
    """Add a sensitivity that covers every element of an array as a reshape of it.

    array_index_add(zero, i, v) => reshape(v, shape(zero))  (``i`` full slices and new axes
                                                              only: ``x[:, None]``)

    The sensitivity of ``x[:, None]`` (or ``x[None]``, ``x[..., None]``) is the incoming one
    with the new axes dropped, not an index-add into a zero array.
    """
    a, index, v = node.inputs[1:]
    idx = value_of(index)
    aa, va = a.abstract, v.abstract
    if idx is NO_VALUE or not is_zero(a) or not _selects_all(idx):
        return None
    if not (isinstance(aa, AbstractArray) and isinstance(va, AbstractArray)):
        return None
    if aa.dtype != va.dtype or not _known(aa.shape) or not _known(va.shape):
        return None
    if np.broadcast_to(np.float64(0.0), aa.shape)[idx].shape != tuple(va.shape):
        return None  # v is broadcast to the elements selected
    return opt.apply(P.reshape, v, tuple(aa.shape), like=node)


def _selects_all(idx: Any) -> bool:
    """Whether ``x[idx]`` is all of ``x``, with axes inserted (full slices, None, ...)."""
    items = idx if type(idx) is tuple else (idx,)
    full = slice(None)
    return all(i is None or i is Ellipsis or (type(i) is slice and i == full) for i in items)


def _known(shape: Any) -> bool:
    return all(type(n) is int for n in shape)


@rewrite(P.gadd)
def gadd_numbers(node: Apply, opt: Any) -> Node | None:
    """Add numbers and arrays with add.

    gadd(x, y) => add(x, y)  (numbers or arrays, not booleans)
    """
    a, b = node.inputs[1:]
    num = (AbstractScalar, AbstractArray)
    if not (isinstance(a.abstract, num) and isinstance(b.abstract, num)):
        return None
    if a.abstract.dtype == "bool" or b.abstract.dtype == "bool":
        return None
    if isinstance(node.abstract, AbstractArray) and (_may_be_zero(a) or _may_be_zero(b)):
        if a.abstract == b.abstract == node.abstract:
            return None  # compiled code skips the shared zero array at run time (lower.py)
    new = opt.apply(P.add, a, b, like=node)
    return new if same_type(new.abstract, node.abstract) else None


#: Primitives that may pass on a value they receive (the shared zero array of a type).
_PASSING = frozenset(
    [
        P.tuple_getitem, P.record_getattr, P.list_getitem, P.env_getitem, P.narrow,
        P.convert, P.identity, P.switch, P.stack_pop, P.gadd,
    ]
)  # fmt: skip


def _may_be_zero(node: Node) -> bool:
    """Whether `node` may be, at run time, the zero array `zero_of_type` shares.

    A parameter, a call of a function, or a value taken out of a tuple may be; what an
    arithmetic primitive computes is not.
    """
    if node.is_parameter:
        return True
    if not node.is_apply:
        return False
    p = prim_of(node)
    return p is None or p in _PASSING


@rewrite(P.gadd)
def gadd_envs(node: Apply, opt: Any) -> Node | None:
    """Add environments with env_add.

    gadd(e1, e2) => env_add(e1, e2)  (environments)
    """
    a, b = node.inputs[1:]
    if a.abstract is ENV and b.abstract is ENV:
        return opt.apply(P.env_add, a, b, like=node)
    return None


# Broadcasting ---------------------------------------------------------------------------------


@rewrite(P.unbroadcast)
def unbroadcast_same(node: Apply, opt: Any) -> Node | None:
    """Drop an unbroadcast that has nothing to sum or cast.

    unbroadcast(d, x) => d  (d of the type and shape of x's sensitivity, x of floats)

    And ``unbroadcast(d, x) => gzeros(x)`` for ``x`` of integers or booleans. An array whose
    dimensions are not all known at compile time (``f64 x ?``, an element of a list of arrays
    of different shapes) may be broadcast to another of the same type: its unbroadcast stays.
    """
    d, x = node.inputs[1:]
    if _integral(x.abstract):
        return opt.apply(P.gzeros, x, like=node)
    if (
        _no_integers(x.abstract)
        and _shape_known(x.abstract)
        and same_type(d.abstract, node.abstract)
    ):
        return d
    return None


def _shape_known(a: Any) -> bool:
    """Whether `a`, if an array, has every dimension known at compile time."""
    return not isinstance(a, AbstractArray) or None not in a.shape


@rewrite(P.broadcast_like)
def broadcast_like_same(node: Apply, opt: Any) -> Node | None:
    """Drop a broadcast that has nothing to broadcast or cast.

    broadcast_like(d, x) => d  (d already of x's type);  broadcast_like(c, x) => c as x's dtype

    The second form is for a constant ``c`` and a scalar ``x`` of floats.
    """
    d, like = node.inputs[1:]
    a = like.abstract
    if not isinstance(a, (AbstractScalar, AbstractArray)) or _integral(a):
        return None
    if same_type(d.abstract, node.abstract) and _shape_known(a):
        return d
    v = value_of(d)
    if isinstance(a, AbstractScalar) and isinstance(v, (int, float)) and type(v) is not bool:
        return opt.const(convert_value(v, broaden(a)), like=node, abstract=node.abstract)
    return None


#: Primitives whose array results are always new arrays (never a view, nor a shared zero).
_FRESH = frozenset(
    getattr(P, name)
    for name in (
        "add sub mul truediv neg pow_ exp log log1p log2 log10 expm1 sqrt sin cos tan tanh sinh "
        "cosh asinh acosh atanh copysign "
        "abs_ maximum minimum matmul dot reduce_sum reduce_mean reduce_max reduce_min "
        "reduce_prod concatenate stack"
    ).split()
    if hasattr(P, name)
)


def _plain(node: Node, depth: int = 0) -> bool:
    """Whether `node` is certainly a plain value: numbers and new arrays, in tuples."""
    p = prim_of(node)
    if p is P.make_tuple:
        return depth < 4 and all(_plain(i, depth + 1) for i in node.inputs[1:])
    if p is P.seq:  # a value computed after a statement
        return depth < 4 and _plain(node.inputs[2], depth + 1)
    a = node.abstract
    if p is None or p in _PASSING or not isinstance(a, (AbstractScalar, AbstractArray)):
        return False
    if p is P.unbroadcast:  # a sum over the axes broadcast, unless there are none
        return node.inputs[1].abstract != a
    return isinstance(a, AbstractScalar) or p in _FRESH


@rewrite(P.gmaterialize)
def materialize_plain(node: Apply, opt: Any) -> Node | None:
    """Drop the materialization of a sensitivity that is already plain data.

    gmaterialize(x) => x  (x numbers and arrays computed afresh, in tuples built in place)

    The sensitivities a gradient returns are usually computed by arithmetic in the end: they
    are neither lazy zeros nor a zero array shared between calls, and walking them costs
    microseconds a call.
    """
    x = node.inputs[1]
    return x if _plain(x) and same_type(x.abstract, node.abstract) else None


# Backpropagators of a zero ---------------------------------------------------------------------


@rewrite(GRAPH_CALL)
def backpropagate_zero(node: Apply, opt: Any) -> Node | None:
    """A backpropagator called on a zero sensitivity gives zeros, without computing anything.

    bprop(zero) => (env_new(), 0, ..., 0)  (bprop a backpropagator: linear in its argument)

    A value computed and not used has a zero sensitivity, which its backpropagator would
    multiply through its derivative: ``0 * inf`` is ``nan`` and ``0 / 0.0`` raises. A
    sensitivity that is zero by construction (not by value) contributes nothing instead. The
    J transform already gives none to what is dropped or never read in one graph; this rule
    does the same across calls, once the zero reaches the call.
    """
    g = node.inputs[0].value  # type: ignore[attr-defined]
    if not g.flags.get("backpropagator") or len(node.inputs) != 2 or not is_zero(node.inputs[1]):
        return None
    return _sens_zero(node.abstract, node, opt)


def _sens_zero(a: Any, node: Apply, opt: Any) -> Node | None:
    """A node for the zero sensitivity of type `a` (known at compile time), or None."""
    if isinstance(a, AbstractFunction) or a is ENV or a == FUNCTION:
        return opt.apply(P.env_new, like=node)
    v = static_zero(a)
    if v is not NO_VALUE:
        return opt.const(v, like=node, abstract=broaden(a))
    if isinstance(a, AbstractArray) and all(type(n) is int for n in a.shape):
        return opt.const(zero_of_type(a), like=node, abstract=broaden(a))
    if isinstance(a, AbstractTuple):
        items = [_sens_zero(e, node, opt) for e in a.elements]
        if any(i is None for i in items):
            return None
        return opt.apply(P.make_tuple, *items, like=node, abstract=a)
    return None


GRAD_CALLS: list[Rewrite] = [backpropagate_zero]

GRAD: list[Rewrite] = [
    gzeros_static,
    gzeros_unread_typed,
    getitem_gzeros,
    getattr_gzeros,
    setitem_gzeros,
    setattr_gzeros,
    dict_setitem_gzeros,
    slice_add_tuples,
    gadd_zero,
    gadd_tuples,
    gadd_records,
    gadd_index_add,
    index_add_everywhere,
    gadd_numbers,
    gadd_envs,
    getitem_env,
    sens_env,
    *_ENV_RULES,
    env_add_empty,
    unbroadcast_same,
    broadcast_like_same,
    materialize_plain,
]

__all__ = ["GRAD", "GRAD_CALLS", "is_zero", "static_zero", "zero_node"]

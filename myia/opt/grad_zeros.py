"""Rewrites of the zeros of sensitivities that the J transform produces.

Backpropagators start from zeros (`gzeros`); these rules give a zero whose type is known at
compile time its value, and read the parts of a zero tuple, record or dictionary as zeros.
`is_zero`, `static_zero` and `zero_node` serve the other gradient rules (`grad_rules`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..abstract.data import (
    ENV,
    AbstractArray,
    AbstractConstant,
    AbstractDict,
    AbstractFunction,
    AbstractList,
    AbstractRecord,
    AbstractScalar,
    AbstractTuple,
    AbstractUnion,
    SelfRef,
)
from ..abstract.lattice import FUNCTION, broaden
from ..ir.node import Apply, Node
from ..primitives import P
from ..primitives.grad import NO_ZERO, EnvInstance, is_shared_zero, no_gradient, zero_of_type
from ..primitives.structure import convert_value
from .matcher import NO_VALUE, args_of, prim_of, rewrite, value_of

# Zeros ----------------------------------------------------------------------------------------


def _integral(a: Any) -> bool:
    return isinstance(a, (AbstractScalar, AbstractArray)) and (
        a.dtype.startswith(("int", "uint")) or a.dtype == "bool"
    )


def _no_integers(a: Any) -> bool:
    """Whether no leaf of type `a` is an integer or a boolean (`unbroadcast` zeroes those)."""
    if isinstance(a, (AbstractScalar, AbstractArray)):
        return not _integral(a)
    if isinstance(a, AbstractTuple):
        return all(_no_integers(e) for e in a.elements)
    if isinstance(a, AbstractRecord):
        return all(_no_integers(e) for e in a.fields if not isinstance(e, SelfRef))
    if isinstance(a, AbstractList):
        return _no_integers(a.element)
    if isinstance(a, AbstractDict):
        return all(_no_integers(v) for v in a.values)
    if isinstance(a, AbstractUnion):
        return all(_no_integers(o) for o in a.options if not isinstance(o, SelfRef))
    return True


def static_zero(a: Any) -> Any:
    """Return the zero sensitivity of type `a` if it is known at compile time, else `NO_VALUE`.

    Scalars, None, strings and tuples of those have one; arrays and records are built at
    run time (`gzeros` stays, one allocation, until an access takes it apart).
    """
    if isinstance(a, AbstractScalar):
        return convert_value(0, broaden(a))
    if isinstance(a, AbstractConstant) and a != FUNCTION:
        v = a.value
        ok = v is None or isinstance(v, (str, slice, type)) or v is Ellipsis
        return v if ok else NO_VALUE
    if isinstance(a, AbstractTuple) and len(a.elements) <= 16:
        items = tuple(static_zero(e) for e in a.elements)
        return NO_VALUE if any(i is NO_VALUE for i in items) else items
    return NO_VALUE


def zero_node(x: Callable[[], Node], a: Any, node: Apply, opt: Any) -> Node:
    """Return a node for the zero sensitivity of a value of type `a`, which `x()` computes."""
    v = static_zero(a)
    if v is not NO_VALUE:
        return opt.const(v, like=node, abstract=broaden(a))
    if isinstance(a, AbstractFunction) or a is ENV or a == FUNCTION:
        return opt.apply(P.env_new, like=node)
    return opt.apply(P.gzeros, x(), like=node)


def _element(t: Node, prim: Any, key: Any, node: Apply, opt: Any) -> Callable[[], Node]:
    return lambda: opt.apply(prim, t, key, like=node)


@rewrite(P.gzeros)
def gzeros_static(node: Apply, opt: Any) -> Node | None:
    """Build the zero of a type known at compile time.

    gzeros(x) => 0 of x's dtype (scalars, tuples of them);  gzeros(f) => env_new() (functions)

    A record whose fields all have such zeros is built: ``gzeros(r) => make_record(C, 0, ...)``.
    """
    a = node.inputs[1].abstract
    v = static_zero(a)
    if v is not NO_VALUE:
        return opt.const(v, like=node, abstract=node.abstract)
    if isinstance(a, AbstractFunction) or a is ENV or a == FUNCTION:
        return opt.apply(P.env_new, like=node)
    if isinstance(a, AbstractRecord) and not any(isinstance(f, SelfRef) for f in a.fields):
        zeros = [static_zero(f) for f in a.fields]
        if all(z is not NO_VALUE for z in zeros):
            consts = [
                opt.const(z, like=node, abstract=broaden(f)) for z, f in zip(zeros, a.fields)
            ]
            return opt.apply(P.make_record, opt.const(a.cls, like=node), *consts, like=node)
    return None


def _stand_in(a: Any) -> Any:
    """What stands for a value of type `a`: None for a list, a zero for others, or `NO_VALUE`.

    None, not a list: the zero of a list is never read, and a program's constants are saved.
    """
    if isinstance(a, AbstractList):
        return None
    if isinstance(a, AbstractTuple):
        items = tuple(_stand_in(e) for e in a.elements)
        return NO_VALUE if any(i is NO_VALUE for i in items) else items
    z = zero_of_type(a)
    return NO_VALUE if z is NO_ZERO else z


@rewrite(P.gzeros_unread)
def gzeros_unread_typed(node: Apply, opt: Any) -> Node | None:
    """The zero nobody reads of a value with no gradient needs its type, not its value.

    gzeros_unread(x) => 0 of x's type  (integers, ranges, tuples of them)
    gzeros_unread(x) => gzeros_unread(v)  (v stands for x: None for a list of indices)

    No backpropagator keeps, and no loop pushes, the value for it; a range passed to a
    loop's body is then passed as its fields (`myia.opt.flatten`).
    """
    x = node.inputs[1]
    if x.is_constant or not no_gradient(x.abstract):
        return None
    z = zero_of_type(x.abstract)
    if z is not NO_ZERO:
        return opt.const(z, like=node, abstract=node.abstract)
    v = _stand_in(x.abstract)
    if v is NO_VALUE:
        return None
    return opt.apply(P.gzeros_unread, opt.const(v, like=node, abstract=x.abstract), like=node)


@rewrite(P.tuple_getitem)
def getitem_gzeros(node: Apply, opt: Any) -> Node | None:
    """Take an element of a zero tuple: a zero.

    tuple_getitem(gzeros(t), i) => gzeros(tuple_getitem(t, i))
    tuple_getitem(gzeros_unread(t), i) => gzeros_unread(tuple_getitem(t, i))
    """
    z, i = node.inputs[1:]
    t, prim = _zero_of(z)
    if t is None or not isinstance(t.abstract, AbstractTuple):
        return None
    elem = opt.apply(P.tuple_getitem, t, i, like=node)
    return _part_zero(prim, elem, node, opt)


@rewrite(P.record_getattr)
def getattr_gzeros(node: Apply, opt: Any) -> Node | None:
    """Take a field of a zero record: a zero.

    record_getattr(gzeros(r), name) => gzeros(record_getattr(r, name))
    record_getattr(gzeros_unread(r), name) => gzeros_unread(record_getattr(r, name))
    """
    z, name = node.inputs[1:]
    r, prim = _zero_of(z)
    if r is None or not isinstance(r.abstract, AbstractRecord):
        return None
    field = opt.apply(P.record_getattr, r, name, like=node)
    return _part_zero(prim, field, node, opt)


def _zero_of(z: Node) -> tuple[Node | None, Any]:
    """``(x, prim)`` if `z` is ``gzeros(x)`` or ``gzeros_unread(x)``, else ``(None, None)``."""
    for prim in (P.gzeros, P.gzeros_unread):
        args = args_of(z, prim)
        if args is not None:
            return args[0], prim
    return None, None


def _part_zero(prim: Any, part: Node, node: Apply, opt: Any) -> Node:
    """The zero of `part`, a part of a value whose zero `prim` makes."""
    if prim is P.gzeros_unread and static_zero(part.abstract) is NO_VALUE:
        return opt.apply(P.gzeros_unread, part, like=node)
    return zero_node(lambda: part, part.abstract, node, opt)


@rewrite(P.tuple_setitem)
def setitem_gzeros(node: Apply, opt: Any) -> Node | None:
    """Update an element of a zero tuple: a tuple of zeros and the element.

    tuple_setitem(gzeros(t), i, v) => make_tuple(zero of t[0], ..., v, ..., zero of t[n])
    """
    z, i, v = node.inputs[1:]
    t = args_of(z, P.gzeros)
    a = t[0].abstract if t is not None else None
    k = value_of(i)
    if not isinstance(a, AbstractTuple) or type(k) is not int:
        return None
    n = len(a.elements)
    if not -n <= k < n:
        return None
    items = [
        v if j == k % n else zero_node(_element(t[0], P.tuple_getitem, j, node, opt), e, node, opt)
        for j, e in enumerate(a.elements)
    ]
    return opt.apply(P.make_tuple, *items, like=node)


@rewrite(P.record_setattr)
def setattr_gzeros(node: Apply, opt: Any) -> Node | None:
    """Update a field of a zero record: a record of zeros and the field.

    record_setattr(gzeros(r), name, v) => make_record(C, zero of each field..., v, ...)
    """
    z, name, v = node.inputs[1:]
    r = args_of(z, P.gzeros)
    a = r[0].abstract if r is not None else None
    key = value_of(name)
    if not isinstance(a, AbstractRecord) or key not in a.names:
        return None
    if any(isinstance(f, (AbstractUnion, SelfRef)) for f in a.fields):
        return None
    fields = [
        v if n == key else zero_node(_element(r[0], P.record_getattr, n, node, opt), f, node, opt)
        for n, f in zip(a.names, a.fields)
    ]
    return opt.apply(P.make_record, opt.const(a.cls, like=node), *fields, like=node)


@rewrite(P.seq_slice_add)
def slice_add_tuples(node: Apply, opt: Any) -> Node | None:
    """Add a tuple into a slice of a tuple built in place, element by element.

    seq_slice_add(make_tuple(x...), s, make_tuple(v...)) => make_tuple(..., gadd(xj, vk), ...)

    For the positions ``j`` selected by the constant slice ``s``; ``t`` may also be a
    ``gzeros`` of a tuple, whose elements are zeros.
    """
    t, s, v = node.inputs[1:]
    a = t.abstract
    sl = value_of(s)
    if not isinstance(a, AbstractTuple) or type(sl) is not slice:
        return None
    vs = _tuple_items(v, opt)
    if vs is None:
        return None
    xs = _tuple_items(t, opt)
    if xs is None:
        z = args_of(t, P.gzeros)
        if z is None:
            return None
        xs = [
            zero_node(_element(z[0], P.tuple_getitem, j, node, opt), e, node, opt)
            for j, e in enumerate(a.elements)
        ]
    items = list(xs)
    for j, x in zip(range(len(items))[sl], vs):
        items[j] = x if is_zero(items[j]) else opt.apply(P.gadd, items[j], x, like=node)
    return opt.apply(P.make_tuple, *items, like=node)


def _tuple_items(node: Node, opt: Any) -> list[Node] | None:
    args = args_of(node, P.make_tuple)
    if args is not None:
        return list(args)
    v = value_of(node)
    if type(v) is tuple and len(v) <= 16:
        return [opt.const(x, like=node) for x in v]
    return None


@rewrite(P.dict_setitem)
def dict_setitem_gzeros(node: Apply, opt: Any) -> Node | None:
    """Update a value of a zero dict: a dict of zeros and the value.

    dict_setitem(gzeros(d), k, v) => make_dict(keys, zero of each value..., v, ...)
    """
    z, k, v = node.inputs[1:]
    d = args_of(z, P.gzeros)
    a = d[0].abstract if d is not None else None
    key = value_of(k)
    if not isinstance(a, AbstractDict) or key not in a.keys:
        return None
    values = [
        v if n == key else zero_node(_element(d[0], P.dict_getitem, n, node, opt), e, node, opt)
        for n, e in zip(a.keys, a.values)
    ]
    return opt.apply(P.make_dict, opt.const(tuple(a.keys), like=node), *values, like=node)


def is_zero(node: Node) -> bool:
    """Whether `node` is a zero sensitivity (`gzeros`, a zero constant, an empty env...)."""
    p = prim_of(node)
    if p is P.gzeros or p is P.env_new:
        return True
    if p is P.make_tuple or p is P.make_record:
        items = node.inputs[1:] if p is P.make_tuple else node.inputs[2:]
        return all(is_zero(i) for i in items)
    v = value_of(node)
    if v is NO_VALUE:
        return False
    return _zero_value(v)


def _zero_value(v: Any) -> bool:
    if v is None:
        return True
    if type(v) is tuple:
        return all(_zero_value(x) for x in v)
    if isinstance(v, EnvInstance):
        return not v.contents
    if isinstance(v, (bool, np.bool_)):
        return False  # gadd of booleans keeps its first argument: see gadd_zero
    if isinstance(v, (int, float, complex, np.number)):
        return bool(v == 0)
    if is_shared_zero(v):
        return True
    if isinstance(v, np.ndarray) and v.size <= 1024:
        return not v.any()
    return False

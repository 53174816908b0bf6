"""Rewrites of what the J transform produces: environments, zeros, sums of sensitivities.

Backpropagators return the sensitivities of free variables in environments (`env_setitem`
under one key per free variable, `env_getitem` with a zero default to read one back), start
from zeros (`gzeros`) and add contributions up with `gadd`. Once the forward and backward
graphs are inlined, these rules resolve every lookup to the value stored, fold the zeros of
scalars into constants, and turn `gadd` into `add` or into the tuples and records of sums it
stands for, so that no environment, zero or tuple is left per operation.

A zero sensitivity carries no sign: ``gadd(x, gzeros(y)) => x`` even where ``x`` is ``-0.0``
(``-0.0 + 0.0`` is ``0.0``). It is the one rewrite that may change the sign of a zero result.
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
from .matcher import GRAPH_CALL, NO_VALUE, Rewrite, args_of, prim_of, rewrite, value_of
from .sweep import same_type

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

    The sensitivity of ``x[i]`` is zero but at ``i``: summed into a loop's accumulated
    sensitivity, it costs one copy of ``a``, not a zero array, a copy and a sum.
    """
    for a, b in (node.inputs[1:], node.inputs[2:0:-1]):
        parts = args_of(b, P.array_index_add)
        if parts is None or not is_zero(parts[0]):
            continue
        if same_type(a.abstract, node.abstract) and same_type(b.abstract, node.abstract):
            return opt.apply(P.array_index_add, a, *parts[1:], like=node)
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


# Environments ---------------------------------------------------------------------------------


def _same_key(a: Node, b: Node) -> bool | None:
    """Whether environment keys `a` and `b` are equal (None: unknown at compile time)."""
    va, vb = value_of(a), value_of(b)
    if va is NO_VALUE or vb is NO_VALUE:
        return None if a is not b else True
    if va is vb:
        return True
    if type(va) is int and type(vb) is int:
        return va == vb
    if type(va) is type(vb) and type(va) in (str,):
        return va == vb
    return False


def _is_empty_env(node: Node) -> bool:
    if prim_of(node) is P.env_new:
        return True
    v = value_of(node)
    return isinstance(v, EnvInstance) and not v.contents


_ENV_GETSENS = getattr(P, "env_getsens", None)
_ENV_DELITEM = getattr(P, "env_delitem", None)


def _lookup(env: Node, key: Node) -> tuple[str, Node]:
    """Follow `env` back to `key`: ``("found", value)``, ``("absent", env)`` or ``("stuck", e)``.

    Settings of other keys (and deletions of other keys) are skipped; `e` is where the search
    stops without an answer (a parameter, a sum of environments...).
    """
    e = env
    while True:
        if _is_empty_env(e):
            return "absent", e
        s = args_of(e, P.env_setitem)
        if s is None and _ENV_DELITEM is not None:
            s = args_of(e, _ENV_DELITEM)
            if s is not None:
                same = _same_key(s[1], key)
                if same is None:
                    return "stuck", e
                if same:
                    return "absent", e
                e = s[0]
                continue
        if s is None:
            return "stuck", e
        same = _same_key(s[1], key)
        if same is None:
            return "stuck", e
        if same:
            return "found", s[2]
        e = s[0]


@rewrite(P.env_getitem)
def getitem_env(node: Apply, opt: Any) -> Node | None:
    """Look a key up in an environment built in place.

    env_getitem(env_setitem(e, k, v), k, d) => v;  env_getitem(env_new(), k, d) => d

    A different key looks further: ``env_getitem(env_setitem(e, j, v), k, d) =>
    env_getitem(e, k, d)``; a sum looks in both: ``env_getitem(env_add(a, b), k, zero) =>
    gadd(env_getitem(a, k, zero), env_getitem(b, k, zero))``.
    """
    env, key, default = node.inputs[1:]
    how, e = _lookup(env, key)
    if how == "found":
        return e
    if how == "absent":
        return default
    if e is not env:
        return opt.apply(P.env_getitem, e, key, default, like=node)
    ab = args_of(e, P.env_add)
    if ab is not None and is_zero(default):
        a = opt.apply(P.env_getitem, ab[0], key, default, like=node)
        b = opt.apply(P.env_getitem, ab[1], key, default, like=node)
        return opt.apply(P.gadd, a, b, like=node)
    return None


@rewrite(P.env_sens)
def sens_env(node: Apply, opt: Any) -> Node | None:
    """Read a sensitivity back from an environment built in place.

    env_sens(env_setitem(e, k, v), k, t) => v
    """
    how, v = _lookup(node.inputs[1], node.inputs[2])
    return v if how == "found" and same_type(v.abstract, node.abstract) else None


def getsens_env(node: Apply, opt: Any) -> Node | None:
    """Look a sensitivity up in an environment built in place.

    env_getsens(env_setitem(e, k, v), k, x) => v;  env_getsens(env_new(), k, x) => gzeros(x)

    Other keys are skipped as for `getitem_env`, and ``env_getsens(env_add(a, b), k, x) =>
    gadd(env_getsens(a, k, x), env_getsens(b, k, x))``.
    """
    env, key, like = node.inputs[1:]
    how, e = _lookup(env, key)
    if how == "found":
        return e
    if how == "absent":
        return zero_node(lambda: like, like.abstract, node, opt)
    if e is not env:
        return opt.apply(_ENV_GETSENS, e, key, like, like=node)
    ab = args_of(e, P.env_add)
    if ab is not None:
        a = opt.apply(_ENV_GETSENS, ab[0], key, like, like=node)
        b = opt.apply(_ENV_GETSENS, ab[1], key, like, like=node)
        return opt.apply(P.gadd, a, b, like=node)
    return None


def delitem_env(node: Apply, opt: Any) -> Node | None:
    """Delete a key from an environment built in place.

    env_delitem(env_setitem(e, k, v), k) => env_delitem(e, k)

    And ``env_delitem(env_new(), k) => env_new()``.

    A setting of another key moves out: ``env_delitem(env_setitem(e, j, v), k) =>
    env_setitem(env_delitem(e, k), j, v)``.
    """
    env, key = node.inputs[1:]
    if _is_empty_env(env):
        return env
    s = args_of(env, P.env_setitem)
    if s is None:
        return None
    same = _same_key(s[1], key)
    if same is None:
        return None
    if same:
        return opt.apply(_ENV_DELITEM, s[0], key, like=node)
    inner = opt.apply(_ENV_DELITEM, s[0], key, like=node)
    return opt.apply(P.env_setitem, inner, s[1], s[2], like=node)


# The loop gradients' environment primitives, where this version of Myia has them.
_ENV_RULES: list[Rewrite] = [
    rewrite(prim)(fn)
    for prim, fn in ((_ENV_GETSENS, getsens_env), (_ENV_DELITEM, delitem_env))
    if prim is not None
]


@rewrite(P.env_add)
def env_add_empty(node: Apply, opt: Any) -> Node | None:
    """Drop an empty environment from a sum.

    env_add(env_new(), e) => e;  env_add(e, env_new()) => e
    """
    a, b = node.inputs[1:]
    if _is_empty_env(a):
        return b
    if _is_empty_env(b):
        return a
    return None


# Broadcasting ---------------------------------------------------------------------------------


@rewrite(P.unbroadcast)
def unbroadcast_same(node: Apply, opt: Any) -> Node | None:
    """Drop an unbroadcast that has nothing to sum or cast.

    unbroadcast(d, x) => d  (d of the type and shape of x's sensitivity, x of floats)

    And ``unbroadcast(d, x) => gzeros(x)`` for ``x`` of integers or booleans.
    """
    d, x = node.inputs[1:]
    if _integral(x.abstract):
        return opt.apply(P.gzeros, x, like=node)
    if _no_integers(x.abstract) and same_type(d.abstract, node.abstract):
        return d
    return None


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
    if same_type(d.abstract, node.abstract):
        return d
    v = value_of(d)
    if isinstance(a, AbstractScalar) and isinstance(v, (int, float)) and type(v) is not bool:
        return opt.const(convert_value(v, broaden(a)), like=node, abstract=node.abstract)
    return None


#: Primitives whose array results are always new arrays (never a view, nor a shared zero).
_FRESH = frozenset(
    getattr(P, name)
    for name in (
        "add sub mul truediv neg pow_ exp log log1p expm1 sqrt sin cos tan tanh sinh cosh "
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

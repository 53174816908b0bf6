"""Rewrites of data structures and control: tuples, records, dicts, lists, switch, seq, partial.

Each rule is named, indexed by the head it rewrites and documented by its ``lhs => rhs``
form (see `myia.opt.matcher`). Indices and keys must be constants; a rule that does not
apply returns None. `DATA` and `CONTROL` list them for the pass list (`myia.opt.passes`).
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import NONE, AbstractDict, AbstractRecord, AbstractTuple, AbstractUnion
from ..ir.node import Apply, Graph, Node
from ..primitives import P, Primitive
from .effects import droppable, droppable_tree
from .matcher import NO_VALUE, Called, Rewrite, args_of, rewrite, value_of
from .sweep import same_type

# Tuples ---------------------------------------------------------------------------------------


def _items(node: Node, opt: Any) -> list[Node] | None:
    """Return the element nodes of `node` if it is ``make_tuple(...)`` or a constant tuple."""
    args = args_of(node, P.make_tuple)
    if args is not None:
        return args
    v = value_of(node)
    if type(v) is tuple and len(v) <= 16:
        return [opt.const(x, like=node) for x in v]
    return None


def _index(node: Node, n: int) -> int | None:
    """Return the constant integer index `node`, normalized for a sequence of length `n`."""
    i = value_of(node)
    if type(i) is not int or not -n <= i < n:
        return None
    return i % n


def _length(node: Node) -> int | None:
    a = node.abstract
    return len(a.elements) if isinstance(a, AbstractTuple) else None


@rewrite(P.tuple_getitem)
def getitem_make_tuple(node: Apply, opt: Any) -> Node | None:
    """Take an element of a tuple built in place.

    tuple_getitem(make_tuple(x0, ..., xn), i) => xi

    A slice ``i`` gives the tuple of the elements it selects.
    """
    t, i = node.inputs[1:]
    items = args_of(t, P.make_tuple)
    if items is None:
        return None
    s = value_of(i)
    if type(s) is slice:
        return opt.apply(P.make_tuple, *items[s], like=node)
    k = _index(i, len(items))
    return items[k] if k is not None else None


@rewrite(P.tuple_getitem)
def getitem_seq(node: Apply, opt: Any) -> Node | None:
    """Take an element of a tuple computed after a statement, after that statement.

    tuple_getitem(seq(before, t), i) => seq(before, tuple_getitem(t, i))

    ``before`` is still computed first; the element is then taken from ``t`` itself, which
    may be a tuple built in place (a backpropagator's result, sequenced after a statement of
    its body that has an effect, such as a random draw).
    """
    t, i = node.inputs[1:]
    parts = args_of(t, P.seq)
    if parts is None:
        return None
    before, inner = parts
    item = opt.apply(P.tuple_getitem, inner, i, like=node)
    return opt.apply(P.seq, before, item, like=node)


@rewrite(P.tuple_getitem)
def getitem_tuple_concat(node: Apply, opt: Any) -> Node | None:
    """Take an element of a concatenation from the tuple that holds it.

    tuple_getitem(tuple_concat(a, b), i) => tuple_getitem(a, i) or tuple_getitem(b, i - len(a))
    """
    t, i = node.inputs[1:]
    ab = args_of(t, P.tuple_concat)
    if ab is None:
        return None
    a, b = ab
    na, n = _length(a), _length(t)
    if na is None or n is None:
        return None
    k = _index(i, n)
    if k is None:
        return None
    if k < na:
        return opt.apply(P.tuple_getitem, a, k, like=node)
    return opt.apply(P.tuple_getitem, b, k - na, like=node)


@rewrite(P.tuple_getitem)
def getitem_tuple_setitem(node: Apply, opt: Any) -> Node | None:
    """Take an element of a tuple updated in place.

    tuple_getitem(tuple_setitem(t, j, v), i) => v if i == j else tuple_getitem(t, i)
    """
    t, i = node.inputs[1:]
    tjv = args_of(t, P.tuple_setitem)
    n = _length(t)
    if tjv is None or n is None:
        return None
    t0, j, v = tjv
    ki, kj = _index(i, n), _index(j, n)
    if ki is None or kj is None:
        return None
    return v if ki == kj else opt.apply(P.tuple_getitem, t0, ki, like=node)


@rewrite(P.tuple_getitem)
def getitem_of_slice(node: Apply, opt: Any) -> Node | None:
    """Take an element of a slice of a tuple from the tuple itself.

    tuple_getitem(tuple_getitem(t, slice), i) => tuple_getitem(t, j)  (j: i's place in t)
    """
    inner, i = node.inputs[1:]
    ts = args_of(inner, P.tuple_getitem)
    n = _length(ts[0]) if ts is not None else None
    if n is None or type(value_of(ts[1])) is not slice:  # type: ignore[index]
        return None
    positions = range(n)[value_of(ts[1])]  # type: ignore[index]
    k = _index(i, len(positions))
    if k is None:
        return None
    return opt.apply(P.tuple_getitem, ts[0], positions[k], like=node)  # type: ignore[index]


@rewrite(P.tuple_concat)
def concat_tuples(node: Apply, opt: Any) -> Node | None:
    """Concatenate tuples built in place into one.

    tuple_concat(make_tuple(a...), make_tuple(b...)) => make_tuple(a..., b...)

    Also with constant tuples, and ``tuple_concat(t, ()) => t``, ``tuple_concat((), t) => t``.
    """
    a, b = node.inputs[1:]
    if _length(a) == 0:
        return b
    if _length(b) == 0:
        return a
    xs, ys = _items(a, opt), _items(b, opt)
    if xs is None or ys is None:
        return None
    return opt.apply(P.make_tuple, *xs, *ys, like=node)


@rewrite(P.tuple_setitem)
def setitem_make_tuple(node: Apply, opt: Any) -> Node | None:
    """Update an element of a tuple built in place.

    tuple_setitem(make_tuple(x0, ..., xn), i, v) => make_tuple(x0, ..., v, ..., xn)
    """
    t, i, v = node.inputs[1:]
    items = _items(t, opt)
    if items is None:
        return None
    k = _index(i, len(items))
    if k is None:
        return None
    items = list(items)
    items[k] = v
    return opt.apply(P.make_tuple, *items, like=node)


@rewrite(P.make_tuple)
def make_tuple_of_getitems(node: Apply, opt: Any) -> Node | None:
    """Rebuild a tuple from all its elements in order: the tuple itself.

    make_tuple(tuple_getitem(t, 0), ..., tuple_getitem(t, n - 1)) => t  (t of length n)
    """
    items = node.inputs[1:]
    if not items:
        return None
    first = args_of(items[0], P.tuple_getitem)
    if first is None:
        return None
    t = first[0]
    if _length(t) != len(items):
        return None
    for k, x in enumerate(items):
        ti = args_of(x, P.tuple_getitem)
        if (
            ti is None
            or ti[0] is not t
            or value_of(ti[1]) != k
            or type(value_of(ti[1])) is not int
        ):
            return None
    return t


# Records --------------------------------------------------------------------------------------


def _fields(node: Node) -> tuple[type, list[Node]] | None:
    args = args_of(node, P.make_record)
    if args is None:
        return None
    cls = value_of(args[0])
    return (cls, args[1:]) if isinstance(cls, type) else None


def _field_index(cls: type, name: Any) -> int | None:
    from ..records import field_names

    names = field_names(cls)
    return names.index(name) if name in names else None


@rewrite(P.record_getattr)
def getattr_make_record(node: Apply, opt: Any) -> Node | None:
    """Take a field of a record built in place.

    record_getattr(make_record(cls, f0, ..., fn), name) => f_name
    """
    r, name = node.inputs[1:]
    cf = _fields(r)
    if cf is None:
        return None
    k = _field_index(cf[0], value_of(name))
    return cf[1][k] if k is not None else None


@rewrite(P.record_getattr)
def getattr_record_setattr(node: Apply, opt: Any) -> Node | None:
    """Take a field of a record updated in place.

    record_getattr(record_setattr(r, a, v), b) => v if a == b else record_getattr(r, b)
    """
    r, name = node.inputs[1:]
    rav = args_of(r, P.record_setattr)
    if rav is None or value_of(rav[1]) is NO_VALUE or value_of(name) is NO_VALUE:
        return None
    if value_of(rav[1]) == value_of(name):
        return rav[2]
    return opt.apply(P.record_getattr, rav[0], name, like=node)


@rewrite(P.record_getattr)
def getattr_from_fields(node: Apply, opt: Any) -> Node | None:
    """Take a field of a record made from a tuple built in place.

    record_getattr(record_from_fields(r, make_tuple(f0, ..., fn)), name) => f_name
    """
    r, name = node.inputs[1:]
    rf = args_of(r, P.record_from_fields)
    if rf is None or not isinstance(r.abstract, AbstractRecord):
        return None
    items = _items(rf[1], opt)
    k = _field_index(r.abstract.cls, value_of(name))
    if items is None or k is None or k >= len(items):
        return None
    return items[k]


@rewrite(P.record_fields)
def fields_of_record(node: Apply, opt: Any) -> Node | None:
    """Take the fields of a record built in place.

    record_fields(make_record(cls, f0, ..., fn)) => make_tuple(f0, ..., fn)

    Also ``record_fields(record_from_fields(r, t)) => t``.
    """
    (r,) = node.inputs[1:]
    rf = args_of(r, P.record_from_fields)
    if rf is not None:
        return rf[1]
    cf = _fields(r)
    if cf is None:
        return None
    return opt.apply(P.make_tuple, *cf[1], like=node)


@rewrite(P.record_from_fields)
def record_from_make_tuple(node: Apply, opt: Any) -> Node | None:
    """Make a record from a tuple built in place directly.

    record_from_fields(r, make_tuple(f0, ..., fn)) => make_record(cls, f0, ..., fn)
    """
    r, t = node.inputs[1:]
    items = _items(t, opt)
    a = node.abstract
    if items is None or not isinstance(a, AbstractRecord) or len(items) != len(a.fields):
        return None
    return opt.apply(P.make_record, opt.const(a.cls, like=node), *items, like=node)


@rewrite(P.record_setattr)
def setattr_make_record(node: Apply, opt: Any) -> Node | None:
    """Update a field of a record built in place.

    record_setattr(make_record(cls, f0, ..., fn), name, v) => make_record(cls, ..., v, ...)
    """
    r, name, v = node.inputs[1:]
    cf = _fields(r)
    if cf is None:
        return None
    k = _field_index(cf[0], value_of(name))
    if k is None:
        return None
    fields = list(cf[1])
    fields[k] = v
    return opt.apply(P.make_record, r.inputs[1], *fields, like=node)


@rewrite(P.make_record)
def make_record_of_getattrs(node: Apply, opt: Any) -> Node | None:
    """Rebuild a record from all its fields in order: the record itself.

    make_record(cls, record_getattr(r, f0), ..., record_getattr(r, fn)) => r  (r a cls)
    """
    cls = value_of(node.inputs[1])
    fields = node.inputs[2:]
    if not isinstance(cls, type) or not fields:
        return None
    first = args_of(fields[0], P.record_getattr)
    if first is None:
        return None
    r = first[0]
    if not (isinstance(r.abstract, AbstractRecord) and r.abstract.cls is cls):
        return None
    if len(r.abstract.fields) != len(fields):
        return None
    for name, f in zip(r.abstract.names, fields):
        ra = args_of(f, P.record_getattr)
        if ra is None or ra[0] is not r or value_of(ra[1]) != name:
            return None
    return r


# Dicts and lists ------------------------------------------------------------------------------


@rewrite(P.dict_getitem)
def getitem_make_dict(node: Apply, opt: Any) -> Node | None:
    """Take a value of a dict built in place.

    dict_getitem(make_dict(keys, v0, ..., vn), k) => v_k
    """
    d, k = node.inputs[1:]
    args = args_of(d, P.make_dict)
    if args is None:
        return None
    keys, key = value_of(args[0]), value_of(k)
    if type(keys) is not tuple or key not in keys:
        return None
    return args[1 + keys.index(key)]


@rewrite(P.dict_values)
def values_of_make_dict(node: Apply, opt: Any) -> Node | None:
    """Take the values of a dict built in place.

    dict_values(make_dict(keys, v0, ..., vn)) => make_tuple(v0, ..., vn)
    """
    args = args_of(node.inputs[1], P.make_dict)
    if args is None:
        return None
    return opt.apply(P.make_tuple, *args[1:], like=node)


@rewrite(P.dict_setitem)
def setitem_make_dict(node: Apply, opt: Any) -> Node | None:
    """Update a value of a dict built in place.

    dict_setitem(make_dict(keys, v0, ..., vn), k, v) => make_dict(keys, ..., v, ...)
    """
    d, k, v = node.inputs[1:]
    args = args_of(d, P.make_dict)
    if args is None:
        return None
    keys, key = value_of(args[0]), value_of(k)
    if type(keys) is not tuple or key not in keys:
        return None
    values = list(args[1:])
    values[keys.index(key)] = v
    return opt.apply(P.make_dict, args[0], *values, like=node)


@rewrite(P.dict_from_values)
def dict_from_make_tuple(node: Apply, opt: Any) -> Node | None:
    """Make a dict from a tuple built in place directly.

    dict_from_values(d, make_tuple(v0, ..., vn)) => make_dict(keys of d, v0, ..., vn)
    """
    d, t = node.inputs[1:]
    items = _items(t, opt)
    a = node.abstract
    if items is None or not isinstance(a, AbstractDict) or len(items) != len(a.keys):
        return None
    return opt.apply(P.make_dict, opt.const(tuple(a.keys), like=node), *items, like=node)


@rewrite(P.list_getitem)
def getitem_make_list(node: Apply, opt: Any) -> Node | None:
    """Take an element of a list built in place.

    list_getitem(make_list(x0, ..., xn), i) => xi  (i a constant in range)
    """
    lst, i = node.inputs[1:]
    items = args_of(lst, P.make_list)
    if items is None:
        return None
    k = _index(i, len(items))
    return items[k] if k is not None else None


@rewrite(P.list_len)
def len_make_list(node: Apply, opt: Any) -> Node | None:
    """Count the elements of a list built in place.

    list_len(make_list(x0, ..., xn)) => n + 1
    """
    items = args_of(node.inputs[1], P.make_list)
    if items is None:
        return None
    return opt.const(len(items), like=node, abstract=node.abstract)


# Control --------------------------------------------------------------------------------------


@rewrite(P.switch)
def switch_constant(node: Apply, opt: Any) -> Node | None:
    """Select the branch of a switch whose condition is a constant.

    switch(True, a, b) => a;  switch(False, a, b) => b;  switch(c, a, a) => a
    """
    c, a, b = node.inputs[1:]
    if a is b:
        return a
    v = value_of(c)
    if v is NO_VALUE:
        return None
    try:
        return a if v else b
    except Exception:
        return None


@rewrite(P.seq)
def seq_droppable(node: Apply, opt: Any) -> Node | None:
    """Drop the first argument of a seq when computing it is unobservable.

    seq(before, after) => after  (what before computes that after does not compute is pure
                                  and unable to raise, and what may raise keeps its order)

    See `myia.opt.effects` for what is droppable, and `_shared` for the order.
    """
    before, after = node.inputs[1:]
    if before is after or droppable_tree(before, node.graph):
        return after  # (seq(x, x) computes x once either way)
    shared = _shared(after, before, node.graph)
    if shared is not None and droppable_tree(before, node.graph, computed=shared):
        return after
    return None


def _shared(after: Node, before: Node, graph: Any, limit: int = 256) -> set[Node] | None:
    """The nodes of `before` that computing `after` computes too, when that is safe (or None).

    In ``seq(before, after)``, what `before` shares with `after` is computed all the same
    (the statements a backpropagator sequences, whose values its result uses). Dropping
    `before` may change the order in which `after` computes things, so it is refused when
    `after` calls a function or runs an effect of its own, when it may raise both in what
    it shares with `before` and in what it does not, and when two of the shared computations
    that may raise do not depend one on the other (their order would be `after`'s, not
    `before`'s).
    """
    mine: set[Node] = set()
    stack = [before]
    while stack and len(mine) < limit:
        n = stack.pop()
        if n not in mine and n.is_apply and n.graph is graph:
            mine.add(n)
            stack.extend(n.inputs)
    seen: set[Node] = set()
    shared: set[Node] = set()
    raising_after = False
    stack = [after]
    while stack:
        n = stack.pop()
        if n in seen or not n.is_apply or n.graph is not graph:
            continue
        seen.add(n)
        if n in mine:
            shared.add(n)  # computed with what it depends on
            continue
        fn = n.inputs[0]
        if len(seen) > limit or not (fn.is_constant and type(fn.value) is Primitive):  # type: ignore[attr-defined]
            return None  # too far, or a call that may have effects
        if fn.value.effect:  # type: ignore[attr-defined]
            return None
        raising_after = raising_after or not droppable(n, graph)
        stack.extend(n.inputs[1:])
    stack = list(shared)  # and what the shared nodes depend on
    while stack:
        for i in stack.pop().inputs:
            if i in mine and i not in shared:
                shared.add(i)
                stack.append(i)
    raising = [n for n in shared if not droppable(n, graph)]
    if raising and (raising_after or not _chain(raising, mine)):
        return None
    return shared


def _chain(nodes: list[Node], within: set[Node]) -> bool:
    """Whether `nodes` are ordered by dependency (each pair: one depends on the other)."""
    deps: dict[Node, set[Node]] = {}
    for n in nodes:
        seen: set[Node] = set()
        stack = list(n.inputs)
        while stack:
            i = stack.pop()
            if i in within and i not in seen:
                seen.add(i)
                stack.extend(i.inputs)
        deps[n] = seen
    return all(a is b or b in deps[a] or a in deps[b] for a in nodes for b in nodes)


@rewrite(P.convert)
def convert_same(node: Apply, opt: Any) -> Node | None:
    """Drop a conversion to the type the value already has.

    convert(x, T) => x  (x already of type T)
    """
    x = node.inputs[1]
    return x if same_type(x.abstract, node.abstract) else None


@rewrite(P.convert)
def convert_tuple(node: Apply, opt: Any) -> Node | None:
    """Convert a tuple built here element by element, only the elements that need it.

    convert(make_tuple(a, b), (A, B)) => make_tuple(convert(a, A), b)  (b already of type B)

    A conversion reads only what changes type: an element no one reads (the placeholder of
    a sensitivity nobody asks for) is passed on as it is.
    """
    parts = args_of(node.inputs[1], P.make_tuple)
    to = node.abstract
    if parts is None or not isinstance(to, AbstractTuple) or len(to.elements) != len(parts):
        return None
    elements = []
    for x, t in zip(parts, to.elements):
        if not same_type(x.abstract, t):
            x = opt.apply(P.convert, x, opt.const(t, like=node), like=node, abstract=t)
        elements.append(x)
    return opt.apply(P.make_tuple, *elements, like=node, abstract=to)


@rewrite(P.identity)
def identity_value(node: Apply, opt: Any) -> Node | None:
    """Drop a call to identity.

    identity(x) => x
    """
    return node.inputs[1]


@rewrite(P.sens_as)
def sens_as_same(node: Apply, opt: Any) -> Node | None:
    """Drop a retyping of a sensitivity to the type it already has.

    sens_as(d, x) => d  (d already of the type of x's sensitivity)
    """
    d = node.inputs[1]
    return d if same_type(d.abstract, node.abstract) else None


@rewrite(P.narrow)
def narrow_same(node: Apply, opt: Any) -> Node | None:
    """Drop a narrowing to the type the value already has.

    narrow(x, T) => x  (x already of type T)

    Also through a conversion to a union: ``narrow(convert(x, T | U), T) => x``.
    """
    x = node.inputs[1]
    if same_type(x.abstract, node.abstract):
        return x
    inner = args_of(x, P.convert)
    if inner is not None and same_type(inner[0].abstract, node.abstract):
        return inner[0]
    return None


@rewrite(P.is_none)
def is_none_static(node: Apply, opt: Any) -> Node | None:
    """Answer is_none from the type of its argument.

    is_none(x) => True or False  (x's type is None, or neither None nor a union)

    And through a conversion to a union: ``is_none(convert(x, T | None)) => is_none(x)``.
    """
    x = node.inputs[1]
    inner = args_of(x, P.convert)
    if inner is not None:
        return opt.apply(P.is_none, inner[0], like=node)
    a = x.abstract
    if a == NONE:
        return opt.const(True, like=node, abstract=node.abstract)
    if a is not None and not isinstance(a, AbstractUnion):
        return opt.const(False, like=node, abstract=node.abstract)
    return None


@rewrite(P.to_bool)
def to_bool_of_bool(node: Apply, opt: Any) -> Node | None:
    """Drop to_bool on a Python bool.

    to_bool(x) => x  (x a Python bool)
    """
    x = node.inputs[1]
    return x if same_type(x.abstract, node.abstract) else None


@rewrite(Called(P.partial))
def call_partial(node: Apply, opt: Any) -> Node | None:
    """Call the function of a partial application with all its arguments.

    partial(f, a...)(b...) => f(a..., b...)
    """
    p = node.inputs[0]
    f, *bound = p.inputs[1:]
    if f.is_constant and isinstance(f.value, (Primitive, Graph)):  # type: ignore[attr-defined]
        abstract = None if isinstance(f.value, Primitive) else node.abstract  # type: ignore[attr-defined]
        return opt.apply(f, *bound, *node.inputs[1:], like=node, abstract=abstract)
    return opt.apply(f, *bound, *node.inputs[1:], like=node, abstract=node.abstract)


@rewrite(P.partial_arg)
def arg_of_partial(node: Apply, opt: Any) -> Node | None:
    """Take an argument of a partial application made in place.

    partial_arg(partial(f, a0, ..., an), i) => ai
    """
    p, i = node.inputs[1:3]
    bound = args_of(p, P.partial)
    k = value_of(i)
    if bound is None or type(k) is not int:
        return None
    return bound[1 + k]


DATA: list[Rewrite] = [
    getitem_make_tuple,
    getitem_seq,
    getitem_tuple_concat,
    getitem_tuple_setitem,
    getitem_of_slice,
    concat_tuples,
    setitem_make_tuple,
    make_tuple_of_getitems,
    getattr_make_record,
    getattr_record_setattr,
    getattr_from_fields,
    fields_of_record,
    record_from_make_tuple,
    setattr_make_record,
    make_record_of_getattrs,
    getitem_make_dict,
    values_of_make_dict,
    setitem_make_dict,
    dict_from_make_tuple,
    getitem_make_list,
    len_make_list,
    arg_of_partial,
]

CONTROL: list[Rewrite] = [
    switch_constant,
    seq_droppable,
    convert_same,
    convert_tuple,
    identity_value,
    narrow_same,
    sens_as_same,
    is_none_static,
    to_bool_of_bool,
    call_partial,
]

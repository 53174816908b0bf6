"""Flattened parameters: a tuple or record parameter becomes one parameter per element.

A loop carries its state from one iteration to the next as parameters; a ``for`` loop over a
``range`` carries the range itself, a record that each iteration rebuilds with its next start.
Passed whole, it is allocated at every iteration and read field by field. When every call of
a graph is known (a group of `myia.opt.callsites`), a parameter whose type is a tuple or a
non-recursive record can be passed as its elements instead:

    g(.., r: Range, ..)          => g(.., r_start, r_stop, r_step, ..)
    r (in g)                     => Range(r_start, r_stop, r_step)
    g(.., a, ..) (every call)    => g(.., a.start, a.stop, a.step, ..)

The ``data`` rules then take apart what is built and read (``Range(a, b, c).stop => b``),
so the record disappears from the loop, and dead-code elimination removes the elements
nobody reads. Elements that are tuples or records themselves are flattened in turn.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..abstract.data import AbstractRecord, AbstractTuple, SelfRef
from ..ir.node import Apply, Constant, Graph, Node, Parameter
from ..primitives import P
from .callsites import CallSites, Group
from .matcher import prim_of

#: At most this many elements come from one parameter (a wide tuple stays whole).
MAX_ELEMENTS = 8


def _parts(a: Any) -> list[tuple[Any, Any]] | None:
    """The elements of a value of type `a` as ``(key, type)`` pairs, if it is flattened."""
    if isinstance(a, AbstractTuple):
        if 0 < len(a.elements) <= MAX_ELEMENTS:
            return list(enumerate(a.elements))
        return None
    if isinstance(a, AbstractRecord) and a.cls is not None:
        if not a.fields or len(a.fields) > MAX_ELEMENTS:
            return None
        if any(_refers_to_self(f) for f in a.fields):
            return None  # a tree: its type is recursive
        names = [f.name for f in dataclasses.fields(a.cls)]
        return list(zip(names, a.fields))
    return None


def _refers_to_self(a: Any) -> bool:
    if isinstance(a, SelfRef):
        return True
    for attr in ("elements", "fields", "options"):
        for e in getattr(a, attr, ()) or ():
            if _refers_to_self(e):
                return True
    return False


def _typed(node: Apply, abstract: Any) -> Apply:
    node.abstract = abstract
    return node


def _const(value: Any, abstract: Any = None) -> Constant:
    from .sweep import value_abstract

    c = Constant(value)
    c.abstract = abstract if abstract is not None else value_abstract(value)
    return c


def _getter(graph: Graph, a: Any, arg: Node, key: Any, typ: Any) -> Apply:
    prim = P.tuple_getitem if isinstance(a, AbstractTuple) else P.record_getattr
    return _typed(graph.apply(_const(prim), arg, _const(key)), typ)


def _builder(graph: Graph, a: Any, parts: list[Node]) -> Apply:
    if isinstance(a, AbstractTuple):
        return _typed(graph.apply(_const(P.make_tuple), *parts), a)
    return _typed(graph.apply(_const(P.make_record), _const(a.cls), *parts), a)


def _flatten_position(
    group: Group, k: int, a: Any, parts: list[tuple[Any, Any]], sites: CallSites
) -> None:
    """Replace parameter `k` of `group`'s members by its `parts`, and the calls' arguments."""
    scopes = sites.scopes
    for m in group.members:
        old = m.parameters[k]
        base = old.debug.find_name() or "p"
        new_params = []
        for key, typ in parts:
            np_ = Parameter(m, f"{base}_{key}")
            np_.abstract = typ
            new_params.append(np_)
        rebuilt = _builder(m, a, new_params)
        sites.substitute(m, {old: rebuilt})
        scopes.nodes[m].append(rebuilt)
        m.parameters[k : k + 1] = new_params
    for call in group.calls:
        arg = call.inputs[k + 1]
        getters = [_getter(call.graph, a, arg, key, typ) for key, typ in parts]
        scopes.nodes[call.graph].extend(getters)  # seen by the positions flattened next
        call.inputs[k + 1 : k + 2] = getters


def _read_by_parts(group: Group, k: int, sites: CallSites) -> bool:
    """Whether the members only read parameter `k` element by element.

    Or pass it on to position `k` of the group; otherwise flattening would rebuild it whole.
    """
    calls = set(group.calls)
    for m in group.members:
        p = m.parameters[k]
        for g in sites.scope(m):
            if g.output is p:
                return False
            for n in sites.scopes.nodes[g]:
                if not n.is_apply:
                    continue
                for j, i in enumerate(n.inputs):
                    if i is not p:
                        continue
                    getter = j == 1 and prim_of(n) in (P.tuple_getitem, P.record_getattr)
                    if not getter and not (n in calls and j == k + 1):
                        return False
    return True


def flatten_parameters(graph: Graph) -> Graph:
    """Flatten the tuple and record parameters of the graphs whose calls are all known."""
    for _ in range(4):  # nested tuples: one level per round
        sites = CallSites(graph)
        changed = False
        for group in sites.groups:
            if not group.editable or graph in group.members:
                continue
            for k in reversed(range(group.nparams)):
                types = {m.parameters[k].abstract for m in group.members}
                if len(types) != 1:
                    continue
                (a,) = types
                parts = _parts(a)
                if parts is None or not _read_by_parts(group, k, sites):
                    continue
                _flatten_position(group, k, a, parts, sites)
                changed = True
        if not changed:
            break
    return graph

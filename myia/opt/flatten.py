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

from typing import Any

from ..abstract.data import AbstractRecord, AbstractTuple, SelfRef
from ..ir.node import Apply, Graph, Node, Parameter
from ..primitives import P
from ..records import field_names, is_record_value
from .callsites import CallSites, Group
from .matcher import prim_of
from .sweep import typed_apply, typed_constant

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
        return list(zip(field_names(a.cls), a.fields))
    return None


def _refers_to_self(a: Any) -> bool:
    if isinstance(a, SelfRef):
        return True
    for attr in ("elements", "fields", "options"):
        for e in getattr(a, attr, ()) or ():
            if _refers_to_self(e):
                return True
    return False


def _getter(graph: Graph, a: Any, arg: Node, key: Any, typ: Any) -> Node:
    """Element `key` of `arg`: taken from a tuple built there, else read by a new node."""
    if isinstance(a, AbstractTuple):
        if prim_of(arg) is P.make_tuple:
            return arg.inputs[1 + key]
        if arg.is_constant and type(arg.value) is tuple:  # type: ignore[attr-defined]
            return typed_constant(arg.value[key], typ)  # type: ignore[attr-defined]
    elif arg.is_constant and is_record_value(arg.value):  # type: ignore[attr-defined]
        return typed_constant(getattr(arg.value, key), typ)  # type: ignore[attr-defined]
    elif prim_of(arg) is P.make_record:
        return arg.inputs[2 + field_names(a.cls).index(key)]
    prim = P.tuple_getitem if isinstance(a, AbstractTuple) else P.record_getattr
    return typed_apply(graph, typ, prim, arg, key)


def _builder(graph: Graph, a: Any, parts: list[Node]) -> Apply:
    if isinstance(a, AbstractTuple):
        return typed_apply(graph, a, P.make_tuple, *parts)
    return typed_apply(graph, a, P.make_record, a.cls, *parts)


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
        subst: dict[Node, Node] = {old: rebuilt}
        keys = [key for key, _ in parts]
        for g in sites.scope(m):
            for n in scopes.nodes[g]:
                if n.is_apply and len(n.inputs) == 3 and n.inputs[1] is old:
                    if prim_of(n) in (P.tuple_getitem, P.record_getattr):
                        key = getattr(n.inputs[2], "value", None)
                        if key in keys and type(key) is type(keys[0]):
                            subst[n] = new_params[keys.index(key)]
        sites.substitute(m, subst)
        scopes.nodes[m].append(rebuilt)
        m.parameters[k : k + 1] = new_params
    for call in group.calls:
        arg = call.inputs[k + 1]
        getters = [_getter(call.graph, a, arg, key, typ) for key, typ in parts]
        # seen by the positions flattened next
        scopes.nodes[call.graph].extend(g for g in getters if g.graph is call.graph)
        call.inputs[k + 1 : k + 2] = getters


def _plan(group: Group, k: int, a: Any, sites: CallSites, root: Graph) -> list | None:
    """The positions to flatten with parameter `k` of `group`, or None if it stays whole.

    A parameter read element by element is flattened; one passed on to a call of a group
    is flattened with that group's position (the sensitivity of a loop goes from its header
    to its blocks and back). Where it is used whole, it is rebuilt: only allowed outside
    every loop (the exit of a loop stores its final state once), never in a loop, where it
    would be rebuilt at each iteration.
    """
    plan = {(group, k): None}
    todo = [(group, k)]
    while todo:
        grp, pos = todo.pop()
        if not grp.editable or root in grp.members:
            return None
        if any(m.parameters[pos].abstract != a for m in grp.members):
            return None
        for m in grp.members:
            p = m.parameters[pos]
            for g in sites.scope(m):
                if g.output is p and _in_loop(g, sites):
                    return None
                for n in sites.scopes.nodes[g]:
                    if not n.is_apply:
                        continue
                    for j, i in enumerate(n.inputs):
                        if i is not p:
                            continue
                        if j == 1 and prim_of(n) in (P.tuple_getitem, P.record_getattr):
                            continue
                        callee = sites.called_group(n) if j >= 1 else None  # type: ignore[arg-type]
                        if callee is not None:
                            if (callee, j - 1) not in plan:
                                plan[(callee, j - 1)] = None
                                todo.append((callee, j - 1))
                        elif _in_loop(g, sites):
                            return None
    return list(plan)


def _in_loop(g: Graph, sites: CallSites) -> bool:
    scopes = sites.scopes
    return scopes.is_recursive(g) or any(scopes.is_recursive(h) for h in scopes.ancestors(g))


def flatten_parameters(graph: Graph) -> Graph:
    """Flatten the tuple and record parameters of the graphs whose calls are all known."""
    for _ in range(4):  # nested tuples: one level per round
        sites = CallSites(graph)
        done: set[tuple[Group, int]] = set()
        changed = False
        for group in sites.groups:
            for k in reversed(range(group.nparams)):
                if (group, k) in done:
                    continue
                a = group.members[0].parameters[k].abstract
                parts = _parts(a)
                if parts is None:
                    continue
                plan = _plan(group, k, a, sites, graph)
                if plan is None:
                    continue
                # Higher positions first, so that the lower ones keep their index.
                for grp, pos in sorted(plan, key=lambda gp: -gp[1]):
                    _flatten_position(grp, pos, a, parts, sites)
                done.update(plan)
                changed = True
        if not changed:
            break
    return graph

"""Defunctionalization of stacks: a stack of closures becomes a stack of their free values.

The forward pass of a loop's gradient pushes, at each iteration, the backpropagator of the
block that ran: a closure over the values that block computed (`myia.grad.loops`). The
backward pass pops it and calls it. Once the optimizer has simplified the backpropagator, its
free variables are the few forward values it needs (``y`` for ``sin(y)``), and making the
closure costs more than the arithmetic. When every closure pushed on a stack is made from
one graph ``G`` (or from copies of it), and every closure popped is only called, the stack
can hold the free values instead and the pop site can call a lifted ``G``:

    stack_push(s, G)                      => stack_push(s, (fv1, ..., fvk))    (fv1 when k = 1)
    tuple_getitem(stack_pop(s), 0)(args)  => G'(top[0], ..., top[k-1], args)

where ``G'`` is ``G`` taking its free variables as first parameters (lambda lifting). The
inliner then writes ``G'``'s body into the backward loop, so an iteration of a loop's
gradient pushes a number (or a tuple) and pops it, with no function made or called. A
``G`` with no free variable gives a stack of empty tuples, which nothing reads: the
parameters carrying it are then dead (`myia.opt.dce`).

The stacks are found by following their values: from ``stack_of_functions()`` through pushes,
pops, and the parameters of graphs whose every call is known (`CallSites`). A stack that
flows anywhere else (returned, put in a tuple, differentiated again: ``stack_unpush``) is left
as it is, and so is one whose closures come from different graphs, or use a closure made
outside them (which lifting could not pass its free values).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import (
    BOTTOM,
    AbstractFunction,
    AbstractStack,
    AbstractTuple,
    GraphFunction,
)
from ..abstract.lattice import broaden, erase_functions
from ..ir.analysis import Scopes, toposort
from ..ir.node import Apply, Graph, Node, Parameter
from ..primitives import P
from ..primitives.grad import sens_type
from .callsites import CallSites
from .matcher import prim_of
from .sweep import typed_apply, typed_constant


def _has_function(a: Any) -> bool:
    """Whether a value of type `a` is or holds (in tuples) a function."""
    if isinstance(a, AbstractFunction):
        return True
    return isinstance(a, AbstractTuple) and any(map(_has_function, a.elements))


def _is_fn_stack(a: Any) -> bool:
    return isinstance(a, AbstractStack) and isinstance(a.element, AbstractFunction)


class _Flows:
    """The classes of stack values that are one stack flowing through the program."""

    def __init__(self) -> None:
        self.parent: dict[Node, Node] = {}
        self.bad: set[Node] = set()
        self.pushes: dict[Node, list[Apply]] = {}
        self.tops: dict[Node, list[Apply]] = {}  # tuple_getitem(stack_pop(s), 0) nodes
        self.pops: dict[Node, list[Apply]] = {}
        self.calls: dict[Node, list[Apply]] = {}  # the calls of each top
        #: ``stack_unpush(d, top)`` nodes read only for their stack (`_unpush_of_type`)
        self.unpushes: dict[Node, list[Apply]] = {}
        #: (user, position, stack started) for each use of an empty stack
        self.feeds: list[tuple[Apply, int, Node]] = []

    def find(self, n: Node) -> Node:
        p = self.parent.setdefault(n, n)
        while p is not n:
            self.parent[n] = self.parent.setdefault(p, p)
            n, p = p, self.parent[p]
        return n

    def union(self, a: Node, b: Node) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[ra] = rb

    def classes(self) -> dict[Node, list[Node]]:
        out: dict[Node, list[Node]] = {}
        for n in list(self.parent):
            out.setdefault(self.find(n), []).append(n)
        bad = {self.find(n) for n in self.bad}
        return {r: ns for r, ns in out.items() if r not in bad}


def _uses(sites: CallSites) -> tuple[dict[Node, list[tuple[Any, int]]], dict[Graph, list[Node]]]:
    """The uses of every node (``(None, -1)``: an output), and the constants of each graph."""
    uses: dict[Node, list[tuple[Any, int]]] = {}
    consts: dict[Graph, list[Node]] = {}
    for g in sites.scopes.graphs:
        for n in sites.scopes.nodes[g]:
            if n.is_apply:
                for k, i in enumerate(n.inputs):
                    uses.setdefault(i, []).append((n, k))
        for extra in (g.output, *g.defaults.values()):
            if extra is not None:
                uses.setdefault(extra, []).append((None, -1))
    for n in uses:
        if n.is_constant and type(n.value) is Graph:  # type: ignore[attr-defined]
            consts.setdefault(n.value, []).append(n)  # type: ignore[attr-defined]
    return uses, consts


def _trace(sites: CallSites, uses: dict) -> _Flows:
    """Follow every stack of functions through the program (see the module doc).

    An empty stack (``stack_of_functions()``) starts a new flow at each of its uses: one
    node may start several stacks (the loops' blocks' stacks all start empty).
    """
    flows = _Flows()
    nodes = [n for g in sites.scopes.graphs for n in sites.scopes.nodes[g]]
    for n in nodes:
        if not _is_fn_stack(n.abstract):
            continue
        root = prim_of(n) is P.stack_of_functions
        if not root:
            flows.find(n)
            if n.is_apply and not _known_source(n):
                flows.bad.add(n)  # a stack out of a tuple, a call, a switch...
        if n.is_parameter:
            graph = n.graph
            group = sites.group_of.get(graph)  # type: ignore[arg-type]
            if group is None:
                flows.bad.add(n)
                continue
            k = graph.parameters.index(n)  # type: ignore[union-attr, arg-type]
            for call in group.calls:
                arg = call.inputs[1 + k]
                if not _is_fn_stack(arg.abstract) and prim_of(arg) is not P.stack_new:
                    flows.bad.add(n)
        for user, k in uses.get(n, ()):
            p = prim_of(user) if user is not None else None
            if p is P.stack_push and k == 1:
                if root:
                    flows.feeds.append((user, k, user))  # type: ignore[arg-type]
                flows.union(user if root else n, user)  # type: ignore[arg-type]
                x = user.inputs[2]  # type: ignore[union-attr]
                if x.is_constant and type(x.value) is Graph:  # type: ignore[attr-defined]
                    flows.pushes.setdefault(user, []).append(user)  # type: ignore[arg-type]
                else:
                    flows.bad.add(user)  # type: ignore[arg-type]
            elif p is P.stack_pop and k == 1:
                if root:
                    flows.bad.add(user)  # type: ignore[arg-type]
                else:
                    _trace_pop(flows, n, user, uses)  # type: ignore[arg-type]
            elif p is P.stack_empty and k == 1:
                pass
            elif user is not None and k >= 1 and p is None:
                group = sites.called_group(user)  # type: ignore[arg-type]
                if group is None:
                    flows.bad.add(user if root else n)  # type: ignore[arg-type]
                    continue
                for m in group.members:
                    param = m.parameters[k - 1]
                    if root:
                        flows.feeds.append((user, k, param))  # type: ignore[arg-type]
                        flows.find(param)
                    else:
                        flows.union(n, param)
            elif not root:
                flows.bad.add(n)
    return flows


def _known_source(n: Node) -> bool:
    """Whether stack `n` is made by a push or is the rest of a pop (whose flows are traced)."""
    p = prim_of(n)
    if p is P.stack_push:
        return True
    return p is P.tuple_getitem and prim_of(n.inputs[1]) is P.stack_pop


def _trace_pop(flows: _Flows, s: Node, pop: Apply, uses: dict) -> None:
    flows.pops.setdefault(s, []).append(pop)
    for user, k in uses.get(pop, ()):
        if user is None or prim_of(user) is not P.tuple_getitem or k != 1:
            flows.bad.add(s)
            return
        index = user.inputs[2]
        if not index.is_constant or index.value not in (0, 1):  # type: ignore[attr-defined]
            flows.bad.add(s)
            return
        if index.value == 1:  # type: ignore[attr-defined]
            flows.union(s, user)
            continue
        calls = []
        for u, j in uses.get(user, ()):
            if u is not None and j == 0:
                calls.append(u)
            elif _unpush_of_type(u, j, uses):
                flows.unpushes.setdefault(s, []).append(u)
            else:
                flows.bad.add(s)  # a popped closure used as a value
                return
        flows.tops.setdefault(s, []).append(user)
        flows.calls[user] = calls


def _unpush_of_type(user: Any, k: int, uses: dict) -> bool:
    """Whether `user` is ``stack_unpush(d, top)`` (`top` at `k`) read only for its stack.

    The forward mode of a gradient (``jvp(grad(f))``) pops the tangent of the closure it
    pops with ``stack_unpush(ds, top)``, where `top` gives only the type of the zero tangent
    (of an empty ``ds``): with nothing reading that tangent, the free values can stand in.
    """
    if user is None or k != 2 or prim_of(user) is not P.stack_unpush:
        return False
    return all(
        u is not None and prim_of(u) is P.tuple_getitem and j == 1 and _const_is(u.inputs[2], 0)
        for u, j in uses.get(user, ())
    )


def _const_is(n: Node, v: int) -> bool:
    return n.is_constant and type(n.value) is int and n.value == v  # type: ignore[attr-defined]


def _same_value(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if type(a) is not type(b) or isinstance(a, (np.ndarray, Graph)):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - values without a plain equality are told apart
        return False


def _match(g1: Graph, g2: Graph, fvs1: list[Node], scopes: Scopes) -> list[Node] | None:
    """The values `g2` has for `g1`'s free variables `fvs1`, if `g2` is a copy of `g1`.

    A copy may have a constant where `g1` has a free variable (the first iteration of a
    loop, peeled by constant folding, has the index 0 where the loop has a variable).
    """
    if len(g1.parameters) != len(g2.parameters):
        return None
    order1 = [n for n in toposort(g1) if n.is_apply]
    order2 = [n for n in toposort(g2) if n.is_apply]
    if len(order1) != len(order2):
        return None
    pos1 = {n: i for i, n in enumerate(order1)}
    pos2 = {n: i for i, n in enumerate(order2)}
    fv_map: dict[Node, Node] = {}

    def same(a: Node, b: Node) -> bool:
        if a.is_apply and a.graph is g1:
            return b in pos2 and pos1[a] == pos2[b]
        if a.is_parameter and a.graph is g1:
            return (
                b.is_parameter
                and b.graph is g2
                and (
                    g1.parameters.index(a) == g2.parameters.index(b)  # type: ignore[arg-type]
                )
            )
        if a.is_constant:
            if not b.is_constant or not _same_value(a.value, b.value):  # type: ignore[attr-defined]
                return False
            closure = isinstance(a.value, Graph) and scopes.free_variables_total.get(a.value)  # type: ignore[attr-defined]
            return not closure
        # A free variable of g1: a free variable of g2 or a constant, the same each time.
        if b.graph is g2 or (b.is_constant and isinstance(b.value, Graph)):  # type: ignore[attr-defined]
            return False
        if fv_map.setdefault(a, b) is not b:
            return False
        return broaden(erase_functions(a.abstract)) == broaden(erase_functions(b.abstract))

    for a, b in zip(order1, order2):
        if len(a.inputs) != len(b.inputs):
            return None
        if not all(same(x, y) for x, y in zip(a.inputs, b.inputs)):
            return None
    if g1.output is None or g2.output is None or not same(g1.output, g2.output):
        return None
    if set(fv_map) != set(fvs1):
        return None
    return [fv_map[f] for f in fvs1]


def defunctionalize(root: Graph, functions: bool = True) -> Graph:
    """Turn the stacks of closures of `root`'s program into stacks of their free values.

    Without `functions`, closures that close over functions are left (the backpropagator of
    an inner loop, which `myia.opt.retfunc` turns into the values it closes over first).
    """
    defunctionalized(root, functions)
    return root


def defunctionalized(root: Graph, functions: bool = True) -> int:
    """`defunctionalize`; the number of stacks it rewrote."""
    count = 0
    sites = CallSites(root)
    uses, consts = _uses(sites)
    flows = _trace(sites, uses)
    for cls in flows.classes().values():
        pushes = [u for n in cls for u in flows.pushes.get(n, ())]
        if not pushes:
            continue
        graphs = list(dict.fromkeys(u.inputs[2].value for u in pushes))  # type: ignore[attr-defined]
        pushed = {u.inputs[2] for u in pushes}
        if any(len(uses[c]) != 1 or c not in pushed for g in graphs for c in consts[g]):
            continue  # a closure also used elsewhere
        for rep in graphs:
            fv_of = _copies(rep, graphs, sites, functions)
            if fv_of is not None:
                _rewrite(sites, flows, uses, cls, rep, fv_of, pushes)
                count += 1
                break
    return count


def _copies(
    rep: Graph, graphs: list[Graph], sites: CallSites, functions: bool = True
) -> dict[Graph, list[Node]] | None:
    """The values each of `graphs` gives `rep`'s free variables, if all are copies of `rep`."""
    scopes = sites.scopes
    fvs = list(scopes.free_variables_total.get(rep, ()))
    if not functions and any(_has_function(f.abstract) for f in fvs):
        return None
    if rep.defaults or rep.kwonly or rep.flags.get("vararg"):
        return None
    if any(_is_fn_stack(f.abstract) for f in fvs):
        return None  # a closure over a stack of closures
    if _uses_outer_closure(rep, sites):
        return None
    fv_of = {rep: fvs}
    for g in graphs:
        if g is not rep:
            m = _match(rep, g, fvs, scopes)
            if m is None:
                return None
            fv_of[g] = m
    return fv_of


def _uses_outer_closure(rep: Graph, sites: CallSites) -> bool:
    """Whether `rep` uses a closure made outside it (one that has free variables).

    Lifting `rep` passes its free variables as parameters to it and the graphs nested in it;
    such a closure would still need its own, from the graph `rep` was nested in (the
    backpropagator of a gradient's forward loop uses, to unpush it, the closure its block
    pushed on the first order's stack, made in the loop).
    """
    inside = sites.scope(rep)
    nested = set(inside)
    return any(
        sub not in nested and sites.scopes.free_variables_total.get(sub)
        for h in inside
        for sub in sites.scopes.constants(h)
    )


def _rewrite(
    sites: CallSites,
    flows: _Flows,
    uses: dict[Node, list[tuple[Any, int]]],
    cls: list[Node],
    rep: Graph,
    fv_of: dict[Graph, list[Node]],
    pushes: list[Apply],
) -> None:
    fvs = fv_of[rep]
    # A value known at compile time in `rep` (its loop's first iteration, peeled: ``x`` is
    # 1.0 there) is not known in its copies: the stack and the lifted graph keep the value
    # only where every closure pushed has it.
    types = tuple(
        f.abstract
        if all(getattr(vs[i], "abstract", None) == f.abstract for vs in fv_of.values())
        else broaden(f.abstract)
        for i, f in enumerate(fvs)
    )
    elem = types[0] if len(fvs) == 1 else AbstractTuple(types)  # type: ignore[arg-type]
    stack = AbstractStack(elem)  # type: ignore[arg-type]
    # Lift the representative: its free variables become its first parameters.
    params = [Parameter(rep, debug=f.debug.derive()) for f in fvs]
    for p, t in zip(params, types):
        p.abstract = t
    rep.parameters = [*params, *rep.parameters]
    sites.substitute(rep, dict(zip(fvs, params)))
    # Push the free values.
    for push in pushes:
        values = fv_of[push.inputs[2].value]  # type: ignore[attr-defined]
        if len(values) == 1:
            push.inputs[2] = values[0]
        else:
            push.inputs[2] = typed_apply(push.graph, elem, P.make_tuple, *values)  # type: ignore[arg-type]
    # Call the lifted graph where a closure was popped and called.
    rep_fn = typed_constant(rep, AbstractFunction(frozenset([GraphFunction(rep)])))
    for n in cls:
        for top in flows.tops.get(n, ()):
            top.abstract = elem
        for pop in flows.pops.get(n, ()):
            pop.abstract = AbstractTuple((elem, stack))
    for n in cls:
        for unpush in flows.unpushes.get(n, ()):
            d = unpush.inputs[1].abstract
            unpush.abstract = AbstractTuple((d, sens_type(elem)))
    for n in cls:
        for top in flows.tops.get(n, ()):
            for call in flows.calls[top]:
                if len(fvs) == 1:
                    parts: list[Node] = [top]
                else:
                    parts = [
                        typed_apply(call.graph, t, P.tuple_getitem, top, j)
                        for j, t in enumerate(types)
                    ]
                call.inputs = [rep_fn, *parts, *call.inputs[1:]]
    for n in cls:
        n.abstract = stack
    members = set(cls)
    for user, k, started in flows.feeds:
        if started in members:
            # The empty stack this one starts from (its node may start others too).
            user.inputs[k] = typed_apply(user.graph, AbstractStack(BOTTOM), P.stack_new)  # type: ignore[arg-type]

"""Lambda lifting: closures that are only called become graphs without free variables.

After inlining, the closures left are those called where they cannot be inlined (a local
recursive function, a loop's body nested in a function, the branches of a conditional
expression ``switch(c, λ: a, λ: b)()``). Such a closure takes its free variables as extra
first parameters, and every call passes them: ``h(x)`` with ``h`` using ``y`` of its parent
becomes ``h'(y, x)``, and ``h'`` is a top-level graph (no closure is allocated to call it).

A closure qualifies when every use of it is a call (`myia.opt.callsites`: the branches of a
switch are lifted together and take the union of their free variables), every call can see
those free variables (it is in their graph or nested in it), and each graph it
refers to can be reached from where it is lifted to: a closure it uses that is not lifted
too must be nested in it. Closures used as values (returned, stored, passed) stay closures:
the backends represent them natively. Groups are processed innermost first, so that a
closure nested in a lifted one is lifted into it first.
"""

from __future__ import annotations

from ..ir.analysis import Scopes
from ..ir.node import Graph, Node, Parameter
from .callsites import CallSites, Group


def _scope(scopes: Scopes, g: Graph, children: dict[Graph, list[Graph]]) -> list[Graph]:
    out = [g]
    i = 0
    while i < len(out):
        out.extend(children.get(out[i], ()))
        i += 1
    return out


def liftable(sites: CallSites) -> list[tuple[Group, list[Node]]]:
    """Return the groups to lift, innermost first, each with its free variables in order."""
    scopes = sites.scopes
    children: dict[Graph, list[Graph]] = {}
    for g, p in scopes.parents.items():
        if p is not None:
            children.setdefault(p, []).append(g)
    candidates: dict[Group, list[Node]] = {}
    for group in sites.groups:
        fvs: dict[Node, None] = {}
        for m in group.members:
            fvs.update(dict.fromkeys(scopes.free_variables_total.get(m, ())))
        if fvs and group.editable and all(_visible(scopes, fvs, c.graph) for c in group.calls):
            candidates[group] = list(fvs)
    scope_of = {m: set(_scope(scopes, m, children)) for group in candidates for m in group.members}
    changed = True
    while changed:
        changed = False
        for group in list(candidates):
            for m in group.members:
                inner = scope_of[m]
                if any(other in inner and other is not m for other in group.members):
                    break
                if not all(
                    _reachable(s, inner, scopes, sites, candidates) for s in _used(scopes, inner)
                ):
                    break
            else:
                continue
            del candidates[group]
            changed = True
    depth = {g: len(scopes.ancestors(g)) for group in candidates for g in group.members}
    order = sorted(candidates, key=lambda grp: -max(depth[m] for m in grp.members))
    return [(grp, candidates[grp]) for grp in order]


def _visible(scopes: Scopes, fvs: dict[Node, None], g: Graph) -> bool:
    """Whether every free variable in `fvs` can be passed by a call in graph `g`.

    A closed branch shared by the switches of two inlined copies of a block joins their
    groups; a call in one copy cannot pass the other copy's nodes, so that group stays closures.
    """
    scope = {g, *scopes.ancestors(g)}
    return all(fv.graph in scope for fv in fvs)


def _used(scopes: Scopes, graphs: set[Graph]) -> set[Graph]:
    return {s for g in graphs for s in scopes.constants(g)}


def _reachable(
    s: Graph, inner: set[Graph], scopes: Scopes, sites: CallSites, lifted: dict
) -> bool:
    """Whether graph `s`, used inside a lifted scope `inner`, is fine there after lifting."""
    if s in inner or not scopes.free_variables_total.get(s):
        return True
    group = sites.group_of.get(s)
    return group is not None and group in lifted


def lambda_lift(graph: Graph) -> Graph:
    """Lift the closures of `graph`'s program that are only called (see the module doc)."""
    sites = CallSites(graph)
    plan = liftable(sites)
    if not plan:
        return graph
    scopes = sites.scopes
    children: dict[Graph, list[Graph]] = {}
    for g, p in scopes.parents.items():
        if p is not None:
            children.setdefault(p, []).append(g)
    # Every call passes the free variables first (the nodes themselves, where it is).
    new_params: dict[Group, dict[Graph, list[Parameter]]] = {}
    for group, fvs in plan:
        params: dict[Graph, list[Parameter]] = {}
        for m in group.members:
            ps = [Parameter(m, debug=fv.debug.derive()) for fv in fvs]
            for p, fv in zip(ps, fvs):
                p.abstract = fv.abstract
            params[m] = ps
            m.parameters = [*ps, *m.parameters]
        new_params[group] = params
        for call in group.calls:
            call.inputs = [call.inputs[0], *fvs, *call.inputs[1:]]
    # Innermost first, uses of the free variables in each member's scope become its parameters.
    for group, fvs in plan:
        for m in group.members:
            subst = dict(zip(fvs, new_params[group][m]))
            for g in _scope(scopes, m, children):
                for n in scopes.nodes[g]:
                    if n.is_apply:
                        n.inputs = [subst.get(i, i) for i in n.inputs]
                if g.output in subst:
                    g.output = subst[g.output]  # type: ignore[index]
    return graph

"""Dead-code elimination: parameters nobody reads, loop-carried ones included.

Nodes nothing depends on are dead already: a graph is its output and what that depends on
(and the statements a ``seq`` keeps, see `myia.opt.effects`; the ``control`` rules drop those
that are pure). What this pass removes is dead *parameters*: a parameter that no node reads,
or that is only passed on to a dead parameter of a graph it calls. The second case is what
keeps values alive around loops: a loop header passes every variable to its body, which
passes it back to the header, so each one looks used. Liveness is solved on the groups of
`myia.opt.callsites` (graphs whose every call is known): a parameter position of a group is
live if some member reads the parameter in any other way than forwarding it to a dead
position. Dead positions are removed from the members and from every call.
"""

from __future__ import annotations

from ..ir.node import Apply, Graph, Node, Parameter
from .callsites import CallSites, Group


def dead_parameters(sites: CallSites) -> dict[Group, list[int]]:
    """The dead parameter positions of each group (see the module doc)."""
    scopes = sites.scopes
    call_group: dict[Apply, Group] = {}
    for group in sites.groups:
        for c in group.calls:
            call_group[c] = group
    position: dict[Parameter, tuple[Group, int]] = {}
    for group in sites.groups:
        for m in group.members:
            for j, p in enumerate(m.parameters):
                position[p] = (group, j)
    live: set[tuple[Group, int]] = set()
    # feeds[(H, k)]: the positions whose parameter is passed at position k of a call of H.
    feeds: dict[tuple[Group, int], list[tuple[Group, int]]] = {}
    todo: list[tuple[Group, int]] = []

    def mark(pos: tuple[Group, int]) -> None:
        if pos not in live:
            live.add(pos)
            todo.append(pos)

    def read(node: Node) -> None:
        pos = position.get(node) if node.is_parameter else None  # type: ignore[call-overload]
        if pos is not None:
            mark(pos)

    for g in scopes.graphs:
        for n in scopes.nodes[g]:
            if not n.is_apply:
                continue
            callee = call_group.get(n)  # type: ignore[call-overload]
            for k, i in enumerate(n.inputs):
                if not i.is_parameter or i not in position:
                    continue
                if callee is not None and k >= 1:
                    feeds.setdefault((callee, k - 1), []).append(position[i])  # type: ignore[index]
                else:
                    mark(position[i])  # type: ignore[index]
        if g.output is not None:
            read(g.output)
        for d in g.defaults.values():
            read(d)
    for group in sites.groups:
        if not _editable(group):
            for j in range(group.nparams):
                mark((group, j))
    while todo:
        pos = todo.pop()
        for src in feeds.get(pos, ()):
            mark(src)
    out: dict[Group, list[int]] = {}
    for group in sites.groups:
        dead = [j for j in range(group.nparams) if (group, j) not in live]
        if dead:
            out[group] = dead
    return out


def _editable(group: Group) -> bool:
    return not any(m.defaults or m.kwonly or m.flags.get("vararg") for m in group.members)


def dce(graph: Graph) -> Graph:
    """Remove the dead parameters of every graph reachable from `graph` (not its own)."""
    sites = CallSites(graph)
    for group, dead in dead_parameters(sites).items():
        drop = set(dead)
        for m in group.members:
            m.parameters = [p for j, p in enumerate(m.parameters) if j not in drop]
        for call in group.calls:
            args = call.inputs[1:]
            call.inputs = [call.inputs[0], *(a for j, a in enumerate(args) if j not in drop)]
    return graph

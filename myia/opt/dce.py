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

from ..ir.node import Apply, Graph, Node
from .callsites import CallSites, Group
from .effects import calls_effect
from .info import ProgramInfo


def dead_parameters(sites: CallSites) -> dict[Group, list[int]]:
    """Return the dead parameter positions of each group (see the module doc).

    A mark phase from every graph's output: a node marked marks its inputs, except that a
    call of a group marks its argument at position k only once position k of the group is
    live; a parameter marked makes its position live (and so marks the arguments passed at
    that position by the calls marked so far, and by those marked later).
    """
    scopes = sites.scopes
    effects = _Effects(ProgramInfo(sites.root, scopes))
    call_group: dict[Apply, Group] = {}
    for group in sites.groups:
        for c in group.calls:
            call_group[c] = group
    position: dict[Node, tuple[Group, int]] = {}
    for group in sites.groups:
        for m in group.members:
            for j, p in enumerate(m.parameters):
                position[p] = (group, j)
    live_pos: set[tuple[Group, int]] = set()
    marked: set[Node] = set()
    # The calls marked so far, by group: their arguments at positions made live later.
    calls_of: dict[Group, list[Apply]] = {}
    stack: list[Node] = []

    def make_live(pos: tuple[Group, int]) -> None:
        if pos in live_pos:
            return
        live_pos.add(pos)
        group, k = pos
        for c in calls_of.get(group, ()):
            stack.append(c.inputs[k + 1])

    for group in sites.groups:
        if not group.editable:
            for j in range(group.nparams):
                live_pos.add((group, j))
    for g in scopes.graphs:
        if g.output is not None:
            stack.append(g.output)
        stack.extend(g.defaults.values())
    while stack:
        node = stack.pop()
        if node in marked:
            continue
        marked.add(node)
        if node.is_parameter:
            pos = position.get(node)
            if pos is not None:
                make_live(pos)
            continue
        if not node.is_apply:
            continue
        group = call_group.get(node)  # type: ignore[call-overload]
        if group is None:
            stack.extend(node.inputs)
            continue
        calls_of.setdefault(group, []).append(node)  # type: ignore[arg-type]
        stack.append(node.inputs[0])
        for k, a in enumerate(node.inputs[1:]):
            if (group, k) not in live_pos and effects.has_effect(a):
                make_live((group, k))  # an argument computed for its effect stays
            if (group, k) in live_pos:
                stack.append(a)
    out: dict[Group, list[int]] = {}
    for group in sites.groups:
        dead = [j for j in range(group.nparams) if (group, j) not in live_pos]
        if dead:
            out[group] = dead
    return out


class _Effects:
    """Which nodes have an effect in their computation (memoized, iterative)."""

    def __init__(self, info: ProgramInfo):
        self.info = info
        self.memo: dict[Node, bool] = {}

    def has_effect(self, node: Node) -> bool:
        memo = self.memo
        stack = [node]
        while stack:
            n = stack[-1]
            if n in memo:
                stack.pop()
                continue
            if not n.is_apply:
                memo[n] = False
                stack.pop()
                continue
            pending = [i for i in n.inputs if i.graph is n.graph and i.is_apply and i not in memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            memo[n] = calls_effect(n, self.info.effectful, self.info.parents) or any(
                memo.get(i, False) for i in n.inputs if i.graph is n.graph
            )
        return memo[node]


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

"""Where each graph is called: the analysis that lets passes change a graph's parameters.

A graph's parameters can only be changed together with every call that passes them, so a
graph qualifies when it is only ever *called*, never passed as a value: each use of its
constant is either the function of a call (``g(x)``) or a branch of a ``switch`` whose result
is only called (``switch(c, g, h)(x)``). The branches of one ``switch`` take the same
arguments, so they form a *group* whose members change their parameters together (a loop's
body and exit, for instance). `CallSites` finds the groups and their call sites in one walk
over the program.
"""

from __future__ import annotations

from ..ir.analysis import Scopes
from ..ir.node import Apply, Graph, Node
from ..primitives import P
from .matcher import prim_of


class Group:
    """Graphs called at the same call sites (the branches of switches), or a single graph."""

    def __init__(self, members: list[Graph]):
        self.members = members
        self.calls: list[Apply] = []

    @property
    def nparams(self) -> int:
        return len(self.members[0].parameters)

    @property
    def editable(self) -> bool:
        """Whether the members' parameters can change (no defaults, keyword-only, varargs)."""
        return not any(m.defaults or m.kwonly or m.flags.get("vararg") for m in self.members)

    def __repr__(self) -> str:
        return f"Group({', '.join(g.name for g in self.members)})"


class CallSites:
    """The groups of graphs reachable from `root` that are only called (see the module doc).

    Attributes:
        scopes: the `Scopes` of the program.
        groups: the groups, each with the call nodes that call it (their arguments are
            ``call.inputs[1:]``); the root and graphs used as values belong to none.
        group_of: the group of each graph that has one.

    """

    def __init__(self, root: Graph):
        self.root = root
        self.scopes = scopes = Scopes(root)
        #: The graphs nested directly in each graph.
        self.children: dict[Graph, list[Graph]] = {}
        for g, p in scopes.parents.items():
            if p is not None:
                self.children.setdefault(p, []).append(g)
        const_uses: dict[Graph, list[tuple[Apply, int]]] = {}
        switch_uses: dict[Apply, list[tuple[Apply, int]]] = {}
        escaped: set[Graph] = {root}
        for g in scopes.graphs:
            for n in scopes.nodes[g]:
                if not n.is_apply:
                    continue
                for k, i in enumerate(n.inputs):
                    if i.is_constant and type(i.value) is Graph:  # type: ignore[attr-defined]
                        const_uses.setdefault(i.value, []).append((n, k))  # type: ignore[arg-type,attr-defined]
                    elif i.is_apply and prim_of(i) is P.switch:
                        switch_uses.setdefault(i, []).append((n, k))  # type: ignore[arg-type]
            for extra in (g.output, *g.defaults.values()):
                if extra is not None and extra.is_constant and type(extra.value) is Graph:  # type: ignore[attr-defined]
                    escaped.add(extra.value)  # type: ignore[attr-defined]
                if extra is not None and prim_of(extra) is P.switch:
                    switch_uses.setdefault(extra, []).append((extra, -1))  # type: ignore[arg-type]
        parent: dict[Graph, Graph] = {}

        def find(g: Graph) -> Graph:
            while parent.get(g, g) is not g:
                g = parent[g]
            return g

        def union(a: Graph, b: Graph) -> None:
            ra, rb = find(a), find(b)
            if ra is not rb:
                parent[ra] = rb

        called_switches: list[Apply] = []
        for g, uses in const_uses.items():
            for n, k in uses:
                if k == 0:
                    continue
                if prim_of(n) is P.switch and k in (2, 3) and _only_called(switch_uses.get(n)):
                    other = n.inputs[5 - k]
                    if other.is_constant and type(other.value) is Graph:  # type: ignore[attr-defined]
                        union(g, other.value)  # type: ignore[attr-defined]
                    continue
                escaped.add(g)
        for s, uses in switch_uses.items():
            if _only_called(uses) and any(_is_graph(b) for b in s.inputs[2:4]):
                called_switches.append(s)
        members: dict[Graph, list[Graph]] = {}
        for g in const_uses:
            members.setdefault(find(g), []).append(g)
        self.groups: list[Group] = []
        self.group_of: dict[Graph, Group] = {}
        for ms in members.values():
            if any(m in escaped for m in ms):
                continue
            if len({len(m.parameters) for m in ms}) != 1:
                continue
            group = Group(ms)
            self.groups.append(group)
            for m in ms:
                self.group_of[m] = group
        for g, group in self.group_of.items():
            group.calls.extend(n for n, k in const_uses[g] if k == 0)
        for s in called_switches:
            branches = [b.value for b in s.inputs[2:4] if _is_graph(b)]  # type: ignore[attr-defined]
            group = self.group_of.get(branches[0])
            if group is not None:
                group.calls.extend(n for n, _ in switch_uses[s])

    def called_group(self, call: Apply) -> Group | None:
        """The group `call` calls (its function a graph or a switch of graphs), if any."""
        fn = call.inputs[0]
        if _is_graph(fn):
            return self.group_of.get(fn.value)  # type: ignore[attr-defined]
        if prim_of(fn) is P.switch and _is_graph(fn.inputs[2]):
            group = self.group_of.get(fn.inputs[2].value)  # type: ignore[attr-defined]
            return group if group is not None and call in group.calls else None
        return None

    def scope(self, g: Graph) -> list[Graph]:
        """`g` and the graphs nested in it (where its parameters may be used)."""
        out = [g]
        for h in out:
            out.extend(self.children.get(h, ()))
        return out

    def substitute(self, g: Graph, subst: dict[Node, Node]) -> None:
        """Replace every use of a key of `subst` in `g` and the graphs nested in it."""
        for h in self.scope(g):
            for n in self.scopes.nodes[h]:
                if n.is_apply and any(i in subst for i in n.inputs):
                    n.inputs = [subst.get(i, i) for i in n.inputs]
            if h.output in subst:
                h.output = subst[h.output]  # type: ignore[index]


def _is_graph(node: Node) -> bool:
    return node.is_constant and type(node.value) is Graph  # type: ignore[attr-defined]


def _only_called(uses: list[tuple[Apply, int]] | None) -> bool:
    """Whether a switch node is only used as the function of calls."""
    return bool(uses) and all(k == 0 for _, k in uses)  # type: ignore[arg-type]

"""Analyses of the IR, computed on demand.

None of these are cached on the graphs: they walk the graphs from scratch, so they are always
consistent with the IR. Passes that need them repeatedly compute them once per pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .node import Apply, Graph, Node


def toposort(graph: Graph) -> list[Node]:
    """Return the nodes of `graph` reachable from its output, inputs before users.

    Only nodes that belong to `graph` and constants are listed: free variables (nodes of
    enclosing graphs) are not. Inputs are visited left to right, so effects sequenced by
    argument order keep their order.
    """
    out: list[Node] = []
    seen: set[int] = set()
    if graph.output is None:
        return out
    stack: list[tuple[Node, int]] = [(graph.output, 0)]
    while stack:
        node, i = stack.pop()
        if i == 0:
            if id(node) in seen:
                continue
            seen.add(id(node))
        if node.is_apply and node.graph is graph and i < len(node.inputs):
            stack.append((node, i + 1))
            inp = node.inputs[i]
            if id(inp) not in seen and (inp.graph is graph or inp.is_constant):
                stack.append((inp, 0))
            continue
        if node.graph is graph or node.is_constant:
            out.append(node)
    return out


def graph_constants(graph: Graph) -> Iterator[Graph]:
    """Yield the graphs held by constants used in `graph`'s body (with repetitions)."""
    for node in toposort(graph):
        if node.is_apply:
            for inp in node.inputs:
                if inp.is_constant and isinstance(inp.value, Graph):
                    yield inp.value
    if graph.output is not None and graph.output.is_constant_graph():
        yield graph.output.value  # type: ignore[union-attr]
    for d in graph.defaults.values():
        if d.is_constant_graph():
            yield d.value  # type: ignore[attr-defined]


def reachable_graphs(root: Graph) -> list[Graph]:
    """Return every graph reachable from `root` through graph constants, `root` first."""
    order: list[Graph] = []
    seen: set[Graph] = set()
    todo = [root]
    while todo:
        g = todo.pop()
        if g in seen:
            continue
        seen.add(g)
        order.append(g)
        todo.extend(reversed(list(graph_constants(g))))
    return order


def direct_free_variables(graph: Graph) -> list[Node]:
    """Return the nodes of other graphs that `graph`'s body uses directly, in order of use."""
    fvs: dict[int, Node] = {}
    for node in toposort(graph):
        if node.is_apply:
            for inp in node.inputs:
                if inp.graph is not None and inp.graph is not graph:
                    fvs.setdefault(id(inp), inp)
    out = graph.output
    if out is not None and out.graph is not None and out.graph is not graph:
        fvs.setdefault(id(out), out)
    for d in graph.defaults.values():
        if d.graph is not None and d.graph is not graph:
            fvs.setdefault(id(d), d)
    return list(fvs.values())


class Scopes:
    """Free variables, parents and children of a set of graphs.

    The *total* free variables of a graph are the nodes of other graphs it uses, directly or
    through the graphs it references by constant (a closure created in `g` needs `g` to see
    the closure's free variables). The *parent* of a graph is the graph, among the owners of
    its total free variables, that is nested the deepest; a graph without free variables is
    top-level (parent None).
    """

    def __init__(self, root: Graph | Iterable[Graph]):
        roots = [root] if isinstance(root, Graph) else list(root)
        graphs: list[Graph] = []
        seen: set[Graph] = set()
        for r in roots:
            for g in reachable_graphs(r):
                if g not in seen:
                    seen.add(g)
                    graphs.append(g)
        self.graphs = graphs
        direct = {g: direct_free_variables(g) for g in graphs}
        consts = {g: set(graph_constants(g)) for g in graphs}
        total: dict[Graph, dict[int, Node]] = {
            g: {id(n): n for n in direct[g]} for g in graphs
        }
        changed = True
        while changed:
            changed = False
            for g in graphs:
                fv = total[g]
                for sub in consts[g]:
                    for k, n in total.get(sub, {}).items():
                        if n.graph is not g and k not in fv:
                            fv[k] = n
                            changed = True
        self.free_variables_total: dict[Graph, list[Node]] = {
            g: list(v.values()) for g, v in total.items()
        }
        self.parents: dict[Graph, Graph | None] = {}
        for g in graphs:
            self._parent(g, set())

    def _parent(self, g: Graph, visiting: set[Graph]) -> Graph | None:
        if g in self.parents:
            return self.parents[g]
        owners = {n.graph for n in self.free_variables_total.get(g, [])}
        owners.discard(None)
        if not owners:
            self.parents[g] = None
            return None
        visiting.add(g)
        # The deepest owner is the one whose ancestors include every other owner.
        best = None
        for o in owners:
            anc = set(self.ancestors(o, visiting))
            if all(p is o or p in anc for p in owners):
                best = o
                break
        if best is None:
            best = next(iter(owners))
        self.parents[g] = best
        visiting.discard(g)
        return best

    def ancestors(self, g: Graph, visiting: set[Graph] | None = None) -> list[Graph]:
        """Return the chain of parents of `g`, innermost first."""
        out = []
        p = self.parents[g] if g in self.parents else self._parent(g, visiting or set())
        while p is not None:
            out.append(p)
            p = self.parents.get(p) if p in self.parents else self._parent(p, visiting or set())
        return out

    def children(self, g: Graph) -> list[Graph]:
        """Return the graphs whose parent is `g`."""
        return [c for c, p in self.parents.items() if p is g]

    def scope(self, g: Graph) -> list[Graph]:
        """Return `g` and every graph nested in it, transitively."""
        out = [g]
        for c in self.children(g):
            out.extend(self.scope(c))
        return out


def uses(graphs: Iterable[Graph]) -> dict[int, list[tuple[Apply, int]]]:
    """Map ``id(node)`` to the list of ``(user, input_index)`` pairs over `graphs`' bodies."""
    result: dict[int, list[tuple[Apply, int]]] = {}
    for g in graphs:
        for node in toposort(g):
            if node.is_apply:
                for i, inp in enumerate(node.inputs):
                    result.setdefault(id(inp), []).append((node, i))  # type: ignore[arg-type]
    return result

"""Cloning graphs: copies of graphs and of their scopes, and inlining of calls.

A `Cloner` copies nodes and graphs and records the correspondence between originals and
copies (``cloner.nodes`` and ``cloner.graphs``), which passes use to carry information over to
the copies. Two operations are built on it:

- `clone`: copy a graph together with the graphs nested in it (its *scope*, per `Scopes`), and
  optionally every graph reachable from it. Free variables that point into the copied graphs
  are remapped to the copies; free variables that point outside are left untouched, as are
  constants holding graphs that are not copied.
- `inline`: copy the body of a graph into another graph, substituting given nodes for its
  parameters, and return the node standing for its output. The graphs nested in the inlined
  graph are copied too, so that their free variables refer to the copied body.

Every copy gets a fresh `DebugInfo` derived from the original's (``origin`` points back at
it), so names and source locations are still found through ``find_name``/``find_location``.
The copy is iterative (explicit work lists), so arbitrarily long chains of nodes are fine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, overload

from .analysis import Scopes, graph_constants
from .node import Apply, Constant, Graph, Node, Parameter


class Cloner:
    """Copies graphs and nodes, remembering which copy stands for which original.

    ``cloner[x]`` is the copy of node or graph ``x``, or ``x`` itself when it was not copied: a
    node of a graph neither copied nor inlined (a free variable pointing outside), or a graph
    that was not copied. One cloner may serve several `clone`/`add_graphs`/`inline` calls:
    later copies refer to earlier ones. To inline the same graph twice, use two cloners.

    Attributes:
        nodes: maps each copied node to its copy (for an inlined graph, its parameters map to
            the nodes substituted for them).
        graphs: maps each copied graph to its copy.

    """

    def __init__(self, scopes: Scopes | None = None):
        self.nodes: dict[Node, Node] = {}
        self.graphs: dict[Graph, Graph] = {}
        self._scopes = scopes
        # The graph in which the copies of each source graph's nodes live.
        self._home: dict[Graph, Graph] = {}
        self._todo: list[tuple[Apply, Apply]] = []

    # Lookup ---------------------------------------------------------------------------------

    @overload
    def __getitem__(self, key: Graph) -> Graph: ...

    @overload
    def __getitem__(self, key: Node) -> Node: ...

    def __getitem__(self, key: Graph | Node) -> Graph | Node:
        """Return the copy of `key` (a node or a graph), or `key` itself if it was not copied."""
        if isinstance(key, Graph):
            return self.graphs.get(key, key)
        return self.nodes.get(key, key)

    def scopes(self, graph: Graph) -> Scopes:
        """Return the cloner's `Scopes`, indexing `graph` in it if needed."""
        if self._scopes is None:
            self._scopes = Scopes()
        if graph not in self._scopes.parents:
            self._scopes.add(graph)
        return self._scopes

    # Operations -----------------------------------------------------------------------------

    def clone(self, graph: Graph, *, total: bool = True) -> Graph:
        """Copy `graph` and the graphs nested in it; return the copy of `graph`.

        With ``total=True``, every graph reachable from `graph` through constants is copied
        too, so that the copy shares no node and no graph with the original.
        """
        scopes = self.scopes(graph)
        graphs = _used_graphs(graph, scopes) if total else scopes.scope(graph)
        self.add_graphs(graphs)
        return self.graphs[graph]

    def add_graphs(self, graphs: Iterable[Graph]) -> None:
        """Copy `graphs` (already copied ones are skipped).

        The set should contain every graph nested in each of its graphs (see `Scopes.scope`):
        a nested graph left out would keep pointing at the original's nodes.
        """
        new = [g for g in dict.fromkeys(graphs) if g not in self.graphs]
        for g in new:
            self._new_graph(g)
        for g in new:
            self._fill_graph(g, self.graphs[g])
        self._flush()

    def inline(
        self,
        graph: Graph,
        args: Sequence[Node],
        into: Graph,
        *,
        nested: Iterable[Graph] | None = None,
    ) -> Node:
        """Copy `graph`'s body into `into` with `args` for its parameters; return its output.

        The copied nodes belong to `into`; the graphs nested in `graph` are copied and refer
        to them. Free variables of `graph` are left as they are, so `into` must be nested in
        their owners (as a caller of `graph` is), and a constant holding `graph` itself (a
        recursive call) still refers to `graph`. Defaults are not applied: `args` gives one
        node per parameter. `nested`, if given, lists the graphs nested in `graph` (which a
        caller that tracks nesting itself knows without a `Scopes` walk).
        """
        if len(args) != len(graph.parameters):
            raise ValueError(
                f"cannot inline {graph.name}: {len(args)} arguments for "
                f"{len(graph.parameters)} parameters"
            )
        if graph in self._home:
            raise ValueError(f"{graph.name} was already copied or inlined by this cloner")
        scope = self.scopes(graph).scope(graph) if nested is None else [graph, *nested]
        nested = [g for g in scope if g is not graph and g not in self.graphs]
        self._home[graph] = into
        for p, a in zip(graph.parameters, args):
            self.nodes[p] = a
        for g in nested:
            self._new_graph(g)
        for g in nested:
            self._fill_graph(g, self.graphs[g])
        assert graph.output is not None, f"graph {graph.name} has no output"
        out = self._copy(graph.output)
        self._flush()
        return out

    def transplant(
        self, graph: Graph, node: Node, into: Graph, *, nested: Iterable[Graph]
    ) -> Node:
        """Copy `node`, a node of `graph`, and what it depends on in `graph` into `into`.

        The caller maps beforehand (in ``nodes``) the nodes of `graph` where the copy stops:
        every other node of `graph` that `node` reaches is copied, and reaching one of its
        parameters is an error. `nested` lists the graphs nested in `graph` to copy with it
        (their copies are nested in `into`).
        """
        self._home[graph] = into
        new = [g for g in nested if g not in self.graphs]
        for g in new:
            self._new_graph(g)
        for g in new:
            self._fill_graph(g, self.graphs[g])
        out = self._copy(node)
        self._flush()
        return out

    # Implementation -------------------------------------------------------------------------

    def _new_graph(self, g: Graph) -> Graph:
        """Create the copy of `g` with its parameters (its body is copied later)."""
        ng = Graph()
        ng.debug = g.debug.derive()
        ng.kwonly = g.kwonly
        ng.flags = dict(g.flags)
        if hasattr(g, "abstract"):  # the output type of a specialized graph
            ng.abstract = g.abstract  # type: ignore[attr-defined]
        for p in g.parameters:
            np_ = Parameter(ng, debug=p.debug.derive())
            np_.abstract = p.abstract
            ng.parameters.append(np_)
            self.nodes[p] = np_
        self.graphs[g] = ng
        self._home[g] = ng
        return ng

    def _fill_graph(self, g: Graph, ng: Graph) -> None:
        if g.output is not None:
            ng.output = self._copy(g.output)
        ng.defaults = {k: self._copy(v) for k, v in g.defaults.items()}

    def _copy(self, node: Node) -> Node:
        """Return the copy of `node`, creating it if needed (its inputs are set by `_flush`)."""
        new = self.nodes.get(node)
        if new is not None:
            return new
        if isinstance(node, Constant):
            new = Constant(self._value(node.value), node.debug.derive())
        else:
            home = self._home.get(node.graph) if node.graph is not None else None
            if home is None:
                return node  # a free variable pointing outside the copied graphs
            if not isinstance(node, Apply):
                raise ValueError(
                    f"{node!r} belongs to {node.graph!r} but is not one of its parameters"
                )
            new = Apply([], home, node.debug.derive())
            self._todo.append((node, new))
        new.abstract = node.abstract
        self.nodes[node] = new
        return new

    def _flush(self) -> None:
        """Set the inputs of the Apply copies created so far (creating their inputs' copies)."""
        todo = self._todo
        while todo:
            old, new = todo.pop()
            new.inputs = [self._copy(i) for i in old.inputs]

    def _value(self, value: Any) -> Any:
        if isinstance(value, Graph):
            return self.graphs.get(value, value)
        return value


def _used_graphs(graph: Graph, scopes: Scopes) -> list[Graph]:
    """`graph` and every graph reachable from it through constants (its scope included)."""
    out = {graph: None}
    todo = [graph]
    while todo:
        g = todo.pop()
        for sub in graph_constants(g, scopes.nodes[g]):
            if sub not in out:
                out[sub] = None
                scopes.add(sub)
                todo.append(sub)
    return list(out)


def clone(graph: Graph, *, total: bool = True, scopes: Scopes | None = None) -> Graph:
    """Return a copy of `graph` and of the graphs nested in it.

    With ``total=True`` (the default) every graph reachable from `graph` is copied as well,
    so the copy shares no node with the original; with ``total=False`` only `graph`'s scope is
    copied and the copy calls the original's other graphs. Use `Cloner` directly to get the
    correspondence between originals and copies.
    """
    return Cloner(scopes).clone(graph, total=total)


def clone_graphs(graphs: Iterable[Graph], *, scopes: Scopes | None = None) -> Cloner:
    """Copy `graphs` and the graphs nested in them; return the `Cloner` holding the copies."""
    cloner = Cloner(scopes)
    todo: list[Graph] = []
    for g in graphs:
        todo.extend(cloner.scopes(g).scope(g))
    cloner.add_graphs(todo)
    return cloner


def inline(
    graph: Graph, args: Sequence[Node], into: Graph, *, scopes: Scopes | None = None
) -> Node:
    """Copy the body of `graph` into `into` with `args` for its parameters; return its output.

    This is how a call ``graph(*args)`` in `into` is inlined: replace the call by the node
    returned.
    """
    return Cloner(scopes).inline(graph, args, into)

"""A stable, readable text form of graphs, for debugging, tests and documentation.

`print_graph(graph)` prints a graph and every graph reachable from it::

    graph loop:loop_body(s, i, n) {
      %s = add(s, i)
      %i = add(i, 1)
      %1 = @loop:loop_header(%i, n, %s)
      %2 = seq(%i, %1)
      %3 = seq(%s, %2)
      return %3
    }

- Parameters are written by their source name; the nodes a graph computes (applies) are
  written ``%name`` when they have a source name and ``%1``, ``%2``... (in order) otherwise,
  in topological order. Names are made unique within a graph with a suffix (``x.2``).
- A node of an enclosing graph (a free variable) is written ``owner.name``, e.g. ``outer.x``.
- Constants are written compactly: graphs as ``@name``, primitives and operations by name,
  numbers, strings and other plain values by ``repr``, other objects by their type.
- Graphs are written by name, in the order they are first referenced (depth first, the root
  first); a suffix (``f.2``) tells apart graphs that share a name.

The output depends only on the structure of the graphs and their debug names: no ids or
addresses, so it can be compared with stored text.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..operations.core import Operation
from ..primitives.core import Primitive
from .analysis import Scopes
from .node import Constant, Graph, Node

_MAX_REPR = 40
_MAX_ITEMS = 8


class GraphPrinter:
    """Names graphs and nodes consistently across one printout.

    Create one per printout: names are given in the order graphs are first met.
    """

    def __init__(
        self, scopes: Scopes | None = None, annotate: Callable[[Node], str | None] | None = None
    ):
        self.scopes = scopes if scopes is not None else Scopes()
        self.annotate = annotate
        self._graph_names: dict[Graph, str] = {}
        self._taken: set[str] = set()
        self._node_names: dict[Graph, dict[Node, str]] = {}
        self._orders: dict[Graph, list[Node]] = {}

    # Names ----------------------------------------------------------------------------------

    def graph_name(self, graph: Graph) -> str:
        """Return the unique name of `graph` in this printout."""
        name = self._graph_names.get(graph)
        if name is None:
            name = _unique(graph.name, self._taken)
            self._graph_names[graph] = name
        return name

    def order(self, graph: Graph) -> list[Node]:
        """Return the nodes of `graph` (constants included), inputs before users."""
        nodes = self._orders.get(graph)
        if nodes is None:
            if graph not in self.scopes.nodes:
                self.scopes.add(graph)
            nodes = self._orders[graph] = self.scopes.toposort(graph)
        return nodes

    def node_names(self, graph: Graph) -> dict[Node, str]:
        """Return the names of `graph`'s parameters and applies."""
        names = self._node_names.get(graph)
        if names is None:
            names = self._node_names[graph] = {}
            taken: set[str] = set()
            for i, p in enumerate(graph.parameters):
                names[p] = _unique(p.debug.find_name() or f"_{i}", taken)
            taken = set()  # applies are written with a ``%``: a namespace of their own
            count = 0
            for node in self.order(graph):
                if node.is_apply and node.graph is graph:
                    name = node.debug.find_name()
                    if name is None:
                        count += 1
                        name = str(count)
                    names[node] = "%" + _unique(name, taken)
        return names

    def ref(self, node: Node, graph: Graph | None) -> str:
        """Return how `node` is written when used in `graph`."""
        if isinstance(node, Constant):
            return self.constant(node.value)
        owner = node.graph
        if owner is None:
            return f"<{type(node).__name__}>"
        names = self.node_names(owner)
        name = names.get(node)
        if name is None:  # not computed by its graph: a broken graph, printed anyway
            taken = {n[2:] for n in names.values() if n.startswith("%?")}
            name = names[node] = "%?" + _unique(node.debug.find_name() or "node", taken)
        return name if owner is graph else f"{self.graph_name(owner)}.{name}"

    def constant(self, value: Any, depth: int = 0) -> str:
        """Return a compact text for a constant's value."""
        if isinstance(value, Graph):
            return "@" + self.graph_name(value)
        if isinstance(value, (Primitive, Operation)):
            return value.name
        if value is None or value is Ellipsis or isinstance(value, (bool, int, float, complex)):
            return repr(value)
        if isinstance(value, (str, bytes)):
            text = repr(value)
            return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 4] + "...'"
        if isinstance(value, (tuple, list)):
            if depth >= 2:
                return "(...)" if isinstance(value, tuple) else "[...]"
            items = [self.constant(v, depth + 1) for v in value[:_MAX_ITEMS]]
            if len(value) > _MAX_ITEMS:
                items.append("...")
            if isinstance(value, list):
                return "[" + ", ".join(items) + "]"
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if isinstance(value, slice):
            parts = (self.constant(x, depth + 1) for x in (value.start, value.stop, value.step))
            return f"slice({', '.join(parts)})"
        if isinstance(value, np.ndarray):
            return f"ndarray({value.dtype}, {value.shape})"
        if isinstance(value, np.generic):
            return f"{type(value).__name__}({value.item()!r})"
        if isinstance(value, type):
            return f"<class {value.__qualname__}>"
        if isinstance(value, types.ModuleType):
            return f"<module {value.__name__}>"
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
            return f"<function {value.__qualname__}>"
        if type(value).__repr__ is not object.__repr__:
            text = repr(value)
            if len(text) <= _MAX_REPR and " at 0x" not in text and "\n" not in text:
                return text
        return f"<{type(value).__name__}>"

    # Printing -------------------------------------------------------------------------------

    def header(self, graph: Graph) -> str:
        """Return the first line of a graph: ``graph name(params) {``, with its flags."""
        names = self.node_names(graph)
        vararg = len(graph.parameters) - graph.kwonly - 1 if graph.flags.get("vararg") else -1
        params = []
        for i, (name, p) in enumerate(zip(graph.param_names, graph.parameters)):
            text = ("*" if i == vararg else "") + names[p]
            d = graph.defaults.get(name)
            params.append(text if d is None else f"{text}={self.ref(d, None)}")
        if graph.kwonly and vararg < 0:
            params.insert(len(params) - graph.kwonly, "*")
        text = f"graph {self.graph_name(graph)}({', '.join(params)}) {{"
        flags = [
            k if v is True else f"{k}={self.constant(v)}"
            for k, v in sorted(graph.flags.items())
            if k not in ("vararg", "user_function")  # the user's code: every graph printed
        ]
        return text + (f"  # flags: {', '.join(flags)}" if flags else "")

    def print_one(self, graph: Graph) -> str:
        """Return the text of one graph."""
        lines = [self.header(graph)]
        names = self.node_names(graph)
        for node in self.order(graph):
            if not (node.is_apply and node.graph is graph):
                continue
            fn, *args = [self.ref(i, graph) for i in node.inputs] or ["<no inputs>"]
            line = f"  {names[node]} = {fn}({', '.join(args)})"
            lines.append(line + self._note(node))
        out = graph.output
        lines.append("  return " + (self.ref(out, graph) if out is not None else "<no output>"))
        lines.append("}")
        return "\n".join(lines)

    def _note(self, node: Node) -> str:
        text = self.annotate(node) if self.annotate is not None else None
        return f"  # {text}" if text else ""


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or `name.2`, `name.3`... whichever is not in `taken` yet (and take it)."""
    candidate = name
    k = 1
    while candidate in taken:
        k += 1
        candidate = f"{name}.{k}"
    taken.add(candidate)
    return candidate


def graph_order(roots: Iterable[Graph], scopes: Scopes | None = None) -> list[Graph]:
    """Return the graphs reachable from `roots` by constants, depth first, in order of use."""
    roots = list(roots)
    scopes = scopes if scopes is not None else Scopes(roots)
    out: list[Graph] = []
    seen: set[Graph] = set()
    stack = list(reversed(roots))
    while stack:
        g = stack.pop()
        if g in seen:
            continue
        seen.add(g)
        out.append(g)
        nodes = [*scopes.toposort(g), *g.defaults.values()]
        subs = [n.value for n in nodes if isinstance(n, Constant) and isinstance(n.value, Graph)]
        stack.extend(reversed(subs))
    return out


def print_graph(
    graph: Graph | Iterable[Graph],
    *,
    reachable: bool = True,
    annotate: Callable[[Node], str | None] | None = None,
) -> str:
    """Return the text of `graph` (or several graphs) and every graph reachable from it.

    With ``reachable=False`` only the given graphs are printed. `annotate`, if given, returns
    a comment to print after each apply (e.g. its inferred type), or None.
    """
    roots = [graph] if isinstance(graph, Graph) else list(graph)
    scopes = Scopes(roots)
    graphs = graph_order(roots, scopes) if reachable else roots
    printer = GraphPrinter(scopes, annotate)
    for g in graphs:
        printer.graph_name(g)
    return "\n\n".join(printer.print_one(g) for g in graphs) + "\n"


def str_node(node: Node) -> str:
    """Return one line describing `node` in the context of its graph (for messages)."""
    printer = GraphPrinter()
    graph = node.graph
    if graph is None or not node.is_apply:
        return printer.ref(node, graph)
    fn, *args = (printer.ref(i, graph) for i in node.inputs)
    return f"{printer.graph_name(graph)}: {printer.ref(node, graph)} = {fn}({', '.join(args)})"

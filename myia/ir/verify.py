"""The verifier: checks that a graph and every graph it reaches are well-formed.

`verify(graph)` raises `VerifyError`, naming the graph and the node at fault, when:

- a graph has no output, or a parameter list that is not made of its own parameters;
- a node is not an `Apply`, `Parameter` or `Constant`; an `Apply` has no inputs or an input
  that is not a node; a constant belongs to a graph or a parameter or apply to none;
- a parameter is used but is not in its graph's parameter list;
- a graph uses a node of another graph (a free variable) that is not an enclosing graph (an
  ancestor per `Scopes`), graphs are nested in a cycle, or a graph with free variables (a
  closure) is not made (held by a constant) anywhere inside its parent;
- a graph's nodes form a cycle;
- a default value is neither a constant nor a node of an enclosing graph.

Later passes can add their own checks (for instance on inferred types) with ``checks``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .analysis import Scopes, graph_constants
from .node import Apply, Constant, Graph, Node, Parameter

Check = Callable[[Graph, Node], "str | None"]


class VerifyError(Exception):
    """A graph is not well-formed. `graph` and `node` locate the problem."""

    def __init__(self, message: str, graph: Graph | None = None, node: object = None):
        where = f"in graph {graph.name}: " if graph is not None else ""
        what = f" [{describe(node)}]" if node is not None else ""
        super().__init__(f"{where}{message}{what}")
        self.graph = graph
        self.node = node


def describe(node: object) -> str:
    """Describe a node for error messages: its kind, name, callee and location."""
    if not isinstance(node, Node):
        return f"{type(node).__name__} {node!r}"
    name = node.debug.find_name()
    text = type(node).__name__ + (f" {name!r}" if name else "")
    if isinstance(node, Constant):
        text += f" {_short(node.value)}"
    elif isinstance(node, Apply) and isinstance(node.inputs, list) and node.inputs:
        fn = node.inputs[0]
        if isinstance(fn, Constant):
            text += f" calling {_short(fn.value)}"
    loc = node.debug.find_location()
    return text + (f" at {loc}" if loc is not None else "")


def _short(value: object) -> str:
    if isinstance(value, Graph):
        return f"graph {value.name}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def verify(graph: Graph, *, checks: Sequence[Check] = ()) -> None:
    """Check that `graph` and every graph reachable from it are well-formed.

    Each of `checks` is called as ``check(graph, node)`` on every parameter, apply and
    constant of every graph, and returns None or a message describing what is wrong.
    """
    graphs = _check_structure(graph)
    scopes = Scopes(graph)
    known = set(graphs)
    graphs += [g for g in scopes.graphs if g not in known]  # both walks should agree
    makers: dict[Graph, list[Graph]] = {}
    for g in graphs:
        for sub in graph_constants(g, scopes.nodes[g]):
            makers.setdefault(sub, []).append(g)
    for g in graphs:
        _check_scoping(g, scopes, makers.get(g, []))
        for node in _check_order(g, scopes):
            for check in checks:
                message = check(g, node)
                if message:
                    raise VerifyError(message, g, node)


def _check_structure(root: Graph) -> list[Graph]:
    """Check the shape of every node and graph reachable from `root`; return the graphs.

    This runs before any analysis, which would trip over malformed nodes.
    """
    graphs: list[Graph] = []
    seen_graphs: set[Graph] = set()
    seen: set[int] = set()
    stack: list[tuple[Graph, object]] = []

    def add_graph(g: Graph) -> None:
        if g in seen_graphs:
            return
        seen_graphs.add(g)
        graphs.append(g)
        _check_graph(g)
        stack.extend((g, p) for p in g.parameters)
        stack.extend((g, d) for d in g.defaults.values())
        stack.append((g, g.output))

    add_graph(root)
    while stack:
        user, node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if not isinstance(node, (Apply, Parameter, Constant)):
            raise VerifyError("input is not an Apply, Parameter or Constant", user, node)
        if isinstance(node, Constant):
            if node.graph is not None:
                raise VerifyError("constant belongs to a graph", user, node)
            if isinstance(node.value, Graph):
                add_graph(node.value)
            continue
        g = node.graph
        if not isinstance(g, Graph):
            raise VerifyError("node belongs to no graph", user, node)
        add_graph(g)
        if isinstance(node, Parameter):
            if not any(p is node for p in g.parameters):
                raise VerifyError(f"parameter is not in the parameter list of {g.name}", g, node)
            continue
        if not isinstance(node.inputs, list) or not node.inputs:
            raise VerifyError("apply has no inputs", g, node)
        for inp in node.inputs:
            if not isinstance(inp, Node):
                raise VerifyError(f"apply has an input that is not a node: {inp!r}", g, node)
            stack.append((g, inp))
    return graphs


def _check_graph(g: Graph) -> None:
    if not isinstance(g.output, Node):
        raise VerifyError("graph has no output", g)
    ids = set()
    for p in g.parameters:
        if not isinstance(p, Parameter):
            raise VerifyError("parameter list holds a node that is not a Parameter", g, p)
        if p.graph is not g:
            raise VerifyError("parameter list holds a parameter of another graph", g, p)
        if id(p) in ids:
            raise VerifyError("parameter listed twice", g, p)
        ids.add(id(p))
    if not 0 <= g.kwonly <= len(g.parameters):
        raise VerifyError(f"kwonly is {g.kwonly} for {len(g.parameters)} parameters", g)
    names = set(g.param_names)
    for name, d in g.defaults.items():
        if name not in names:
            raise VerifyError(f"default for unknown parameter {name!r}", g, d)


def _check_scoping(g: Graph, scopes: Scopes, makers: list[Graph]) -> None:
    """Check that `g` only uses free variables of enclosing graphs.

    `makers` are the graphs that hold `g` as a constant: for a closure, one of them must be
    in its parent's scope (where the closure is made, with its free variables).
    """
    ancestors = scopes.ancestors(g)
    if g in ancestors:
        raise VerifyError("graph is nested in itself (a cycle of free variables)", g)
    for d in g.defaults.values():
        if not d.is_constant and d.graph not in ancestors:
            raise VerifyError("default is neither a constant nor a free variable", g, d)
    for node in scopes.free_variables_direct[g]:
        if node.graph not in ancestors:
            raise VerifyError(
                f"uses a node of graph {node.graph.name}, which does not enclose it", g, node
            )
    for node in scopes.free_variables_total[g]:
        if node.graph not in ancestors:
            raise VerifyError(
                f"uses a closure that needs a node of graph {node.graph.name}, "
                "which does not enclose it",
                g,
                node,
            )
    parent = scopes.parents[g]
    if parent is not None and not any(
        m is parent or parent in scopes.ancestors(m) for m in makers
    ):
        raise VerifyError(
            f"graph uses nodes of graph {parent.name} but is never made as a closure there", g
        )


def _check_order(g: Graph, scopes: Scopes) -> list[Node]:
    """Return `g`'s parameters and own nodes, inputs first; raise on a cycle."""
    out: list[Node] = list(g.parameters)
    state: dict[Node, bool] = {}  # False: being visited, True: done
    roots = [g.output, *scopes.nodes[g]]
    for root in roots:
        if root in state or root is None:
            continue
        stack: list[tuple[Node, int]] = [(root, 0)]
        state[root] = False
        while stack:
            node, i = stack.pop()
            inputs = node.inputs if node.graph is g else []
            if i < len(inputs):
                stack.append((node, i + 1))
                inp = inputs[i]
                seen = state.get(inp)
                if seen is False:
                    raise VerifyError("cycle: a node depends on itself", g, inp)
                if seen is None and (inp.graph is g or inp.is_constant):
                    state[inp] = False
                    stack.append((inp, 0))
                continue
            state[node] = True
            if (node.graph is g and not node.is_parameter) or node.is_constant:
                out.append(node)
    return out

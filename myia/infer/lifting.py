"""Lambda lifting of a closure called with several types through a function value.

One function value is one specialized graph, but a closure chosen at run time and called
with arguments of two types (``fn = g if c else h; fn(1.0), fn(v)``) needs one graph per
type, over the same captured values. Such a closure is rewritten, in the parsed graphs, as
the partial application of a closed graph to the values it captures::

    def g(a): return a * x              # g captures x
    # becomes
    def g'(x, a): return a * x          # captures nothing
    ... partial(g', x) ...              # wherever g was made

A partial application of a function that captures nothing is called through the function's
specialization for each call's types, and a call choosing among several at run time tests
which function it applies (`myia.infer.fnvalues.dispatch`). The API compiles the program
again once the closure is lifted (`LiftClosure`); the closure's values are the ones it
captured where it was made, as before.
"""

from __future__ import annotations

from ..errors import MyiaTypeError
from ..ir.analysis import Scopes
from ..ir.clone import Cloner
from ..ir.node import Apply, Constant, Graph, Node
from ..primitives import P


class LiftClosure(MyiaTypeError):
    """A closure must be lifted (`lift_closure`) before the program compiles.

    Raised by specialization, with the error to give if it cannot be (`error`).
    """

    def __init__(self, graph: Graph, error: MyiaTypeError):
        super().__init__(error.message, error.frames)
        self.graph = graph
        self.error = error


def lift_closure(g: Graph, root: Graph) -> bool:
    """Rewrite closure `g`, reachable from `root`, as a partial application of a closed graph.

    Returns False where `g` is not found among the graphs `root` reaches (nothing changes).
    """
    scopes = Scopes(root)
    if g not in scopes.parents or scopes.parents[g] is None:
        return False
    inner = _own_graphs(g, scopes)
    mine = set(inner)
    captured: dict[Node, None] = {}
    closures: dict[Graph, None] = {}
    for sub in inner:
        for n in scopes.free_variables_direct[sub]:
            if n.graph not in mine:
                captured[n] = None
        for c in scopes.constants(sub):
            # A closure made in an enclosing function: its value is captured.
            if c is not g and c not in mine and scopes.parents.get(c) is not None:
                closures[c] = None
    free = [*captured, *(Constant(c) for c in closures)]
    cloner = Cloner(scopes)
    cloner.add_graphs(inner)
    lifted = cloner.graphs[g]
    lifted.debug = g.debug.derive()
    params = []
    for n in free:
        # Named apart from the graph's own parameters (``lambda v, k=k: ...`` captures
        # the ``k`` of its loop): arguments and defaults are bound by name.
        debug = n.debug.derive()
        debug.name = f"$captured:{n.debug.find_name() or len(params)}"
        p = lifted.add_parameter(debug=debug)
        params.append(p)
    # The captured values come first, bound by the partial application.
    lifted.parameters[:] = [*params, *lifted.parameters[: len(lifted.parameters) - len(free)]]
    subst: dict[Node, Node] = {}
    for n, p in zip(free, params):
        subst[n] = p
    copies = [cloner.graphs[s] for s in inner]
    for sub in copies:
        for node in _applies(sub):
            node.inputs = [_lifted_input(i, subst, g, lifted, params, sub) for i in node.inputs]
        if sub.output is not None:
            sub.output = _lifted_input(sub.output, subst, g, lifted, params, sub)
    # Wherever `g` was made (in the graphs of its enclosing function), make the partial.
    for h in scopes.graphs:
        if h in mine:
            continue
        for node in _applies(h):
            if any(i.is_constant and i.value is g for i in node.inputs):
                node.inputs = [
                    _made(h, lifted, free) if i.is_constant and i.value is g else i
                    for i in node.inputs
                ]
        if h.output is not None and h.output.is_constant and h.output.value is g:
            h.output = _made(h, lifted, free)
    return True


def _own_graphs(g: Graph, scopes: Scopes) -> list[Graph]:
    """`g` and the graphs that are part of it: nested in it, or used by it alone.

    The blocks of ``g`` (the branches of an ``if``, a loop's body) read what they need of
    ``g``'s variables as parameters, and are nested in ``g``'s parent as far as their free
    variables tell; they are part of ``g`` all the same when ``g`` alone uses them.
    """
    users: dict[Graph, set[Graph]] = {}
    for h in scopes.graphs:
        for c in scopes.constants(h):
            users.setdefault(c, set()).add(h)
    base = scopes.scope(g)
    own = dict.fromkeys(base)
    todo = list(base)
    while todo:  # every closure `g` reaches...
        for c in scopes.constants(todo.pop()):
            if c not in own and scopes.parents.get(c) is not None:
                own[c] = None
                todo.append(c)
    changed = True
    while changed:  # ... but those used elsewhere too
        changed = False
        for c in list(own):
            if c not in base and not users.get(c, set()) <= own.keys():
                del own[c]
                changed = True
    return list(own)


def _applies(g: Graph) -> list[Apply]:
    from ..ir.analysis import toposort

    return [n for n in toposort(g) if n.is_apply and n.graph is g]  # type: ignore[misc]


def _lifted_input(
    i: Node, subst: dict[Node, Node], g: Graph, lifted: Graph, params: list[Node], where: Graph
) -> Node:
    """Input `i` of a node of the lifted copy: a captured value read from its parameter."""
    if i.is_constant and isinstance(i.value, Graph):
        for n, p in subst.items():
            if n.is_constant and n.value is i.value:
                return p
        if i.value is g or i.value is lifted:  # `g` calling itself: on the values it was given
            return _made(where, lifted, params)
        return i
    return subst.get(i, i)


def _made(h: Graph, lifted: Graph, free: list[Node]) -> Apply:
    """``partial(lifted, *free)`` in graph `h`."""
    args = [Constant(n.value) if n.is_constant else n for n in free]
    return Apply([Constant(P.partial), Constant(lifted), *args], h, lifted.debug.derive())


__all__ = ["LiftClosure", "lift_closure"]

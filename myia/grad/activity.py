"""Activity analysis: which values of a program depend on the inputs a gradient is taken of.

``grad(f, "W", "b")`` needs the sensitivities of ``W`` and ``b`` alone. A value that does not
depend on them (the tree a recursive net walks, the sequence an RNN reads, an index) is
*inactive*: nothing that flows back into it can reach ``W`` or ``b``, since everything it was
computed from is inactive too. The J transform gives inactive values no sensitivity: their
backpropagators are not called, their zeros are not built, and a primitive applied to inactive
values alone is computed as it is (`myia.grad.jtransform`). Without it, the gradient of a tree
net builds the sensitivity of the whole tree at every node, and that of an RNN adds up a
sensitivity of the whole input sequence at every step.

The analysis runs on the specialized program of the function differentiated. A node is
*varied* when it is an active parameter, uses a varied node (or a closure over one), or calls
a graph whose output is varied; a graph's parameter is varied when a call passes a varied
argument there, and every parameter of a graph whose calls are not all known is varied. A
node whose type has no gradient (an integer, a boolean, a list of indices, a ``range``: see
`myia.primitives.grad.no_gradient`) is never varied, unless it is a parameter differentiated
or one of a graph called from elsewhere: every sensitivity of it is zero, so nothing flows
back through it, and it passes nothing on (the indices a loop computes from a varied count,
the lists of indices a recursion passes down stay inactive). The
result is the least fixpoint, computed by propagation along the uses of each node.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from ..ir.analysis import Scopes
from ..ir.node import Graph, Node
from ..primitives import P
from ..primitives.grad import no_gradient


class Activity:
    """The varied nodes and closures of one gradient's program (see the module doc).

    `key` names the analysis in the J transform's caches: a graph is transformed once per
    activity it is differentiated with.
    """

    def __init__(self, key: object, varied: set[object], graphs: set[Graph]):
        self.key = key
        self.varied = varied
        self.graphs = graphs  # the graphs analyzed: a node of another one counts as active

    def active(self, node: Node) -> bool:
        """Whether `node` may depend on an input the gradient is taken of."""
        if node.is_constant:
            v = node.value  # type: ignore[attr-defined]
            return isinstance(v, Graph) and (v in self.varied or v not in self.graphs)
        return node in self.varied or node.graph not in self.graphs


def _is_graph(node: Node) -> bool:
    return node.is_constant and isinstance(node.value, Graph)  # type: ignore[attr-defined]


def _is_switch(node: Node) -> bool:
    fn = node.inputs[0] if node.is_apply else None
    return fn is not None and fn.is_constant and fn.value is P.switch  # type: ignore[attr-defined]


def _callees(fn: Node) -> list[Graph] | None:
    """The graphs a call of `fn` may call, when it is a graph constant or a switch of them."""
    if _is_graph(fn):
        return [fn.value]  # type: ignore[attr-defined]
    if _is_switch(fn):
        branches = [b for b in fn.inputs[2:] if not _is_dead(b)]
        if all(_is_graph(b) for b in branches):
            return [b.value for b in branches]  # type: ignore[attr-defined]
    return None


def _is_dead(node: Node) -> bool:
    """Whether `node` is the branch of a switch never taken (`Dead`)."""
    from ..infer.specialize import Dead

    return node.is_constant and isinstance(node.value, Dead)  # type: ignore[attr-defined]


class _Program:
    """Who uses what in a program: the edges activity propagates along."""

    def __init__(self, root: Graph):
        self.scopes = scopes = Scopes(root)
        self.users: dict[object, list[tuple[Node, int]]] = {}  # node or graph -> uses
        self.calls: dict[Graph, list[Node]] = {}  # graph -> the known calls of it
        self.outputs: dict[Node, list[Graph]] = {}  # node -> the graphs it is the output of
        self.closures: dict[Node, list[Graph]] = {}  # node -> the graphs closing over it
        self.escaped: set[Graph] = {root}
        for g in scopes.graphs:
            for n in scopes.nodes[g]:
                if n.is_apply:
                    self._apply(n)
            for extra in (g.output, *g.defaults.values()):
                if extra is None:
                    continue
                if _is_graph(extra):
                    self.escaped.add(extra.value)  # type: ignore[attr-defined]
                else:
                    self.outputs.setdefault(extra, []).append(g)
            for fv in scopes.free_variables_total.get(g, ()):
                self.closures.setdefault(fv, []).append(g)
        for g in scopes.graphs:
            for n in scopes.nodes[g]:
                if n.is_apply and _is_switch(n) and not self._only_called(n):
                    self.escaped.update(b.value for b in n.inputs[2:] if _is_graph(b))  # type: ignore[attr-defined]

    def _apply(self, n: Node) -> None:
        for c in _callees(n.inputs[0]) or ():
            self.calls.setdefault(c, []).append(n)
        for k, i in enumerate(n.inputs):
            key = i.value if _is_graph(i) else i  # type: ignore[attr-defined]
            self.users.setdefault(key, []).append((n, k))
            if _is_graph(i) and k > 0 and not (k >= 2 and _is_switch(n)):
                self.escaped.add(i.value)  # type: ignore[attr-defined]

    def _only_called(self, switch: Node) -> bool:
        uses = self.users.get(switch, ())
        return bool(uses) and all(k == 0 for _, k in uses) and switch not in self.outputs


def analyze(root: Graph, active_params: Iterable[Node], key: object) -> Activity:
    """The `Activity` of the program of `root` when `active_params` are differentiated."""
    prog = _Program(root)
    varied: set[object] = set()
    todo: list[object] = []

    def mark(x: object) -> None:
        if x not in varied and not (isinstance(x, Node) and no_gradient(x.abstract)):
            varied.add(x)
            todo.append(x)

    def force(x: Node) -> None:
        if x not in varied:
            varied.add(x)
            todo.append(x)

    for p in active_params:
        force(p)
    for g in prog.escaped:
        if g is not root:
            for p in g.parameters:
                force(p)  # called from where the analysis does not see: every sensitivity read
    while todo:
        x = todo.pop()
        for user, k in prog.users.get(x, ()):
            mark(user)
            if k >= 1:
                for c in _callees(user.inputs[0]) or ():
                    if k - 1 < len(c.parameters):
                        mark(c.parameters[k - 1])
        if isinstance(x, Graph):
            continue
        for g in prog.closures.get(x, ()):  # type: ignore[call-overload]
            mark(g)
        for g in prog.outputs.get(x, ()):  # type: ignore[call-overload]
            for call in prog.calls.get(g, ()):
                mark(call)
    return Activity(key, varied, set(prog.scopes.graphs))


_current: list[Activity | None] = [None]


def current_activity() -> Activity | None:
    """The activity the J transform works with now (None: every value is active)."""
    return _current[-1]


def activity_key() -> object:
    """The key of the current activity in the J transform's caches."""
    act = _current[-1]
    return act.key if act is not None else None


@contextmanager
def using(activity: Activity | None) -> Iterator[None]:
    """Run the J transform with `activity` (nested gradients stack theirs)."""
    _current.append(activity)
    try:
        yield
    finally:
        _current.pop()

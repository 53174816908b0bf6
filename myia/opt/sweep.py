"""The rewriting engine: sweeps that bring every node of a program to normal form.

One sweep visits every node reachable from the root once, inputs before users (an iterative
depth-first walk, so chains of any length are fine). A graph is visited once a graph that
uses it is done, so that a closure inlined where it is called (the usual fate of a
backpropagator) is never visited alone. When a node's inputs are final, the `Matcher`'s
rules for its head are tried; a rule's result replaces the node (users find it through the
replacement map) and is visited in turn, so that what a rule builds (an inlined body, a new
tuple) is normalized in the same sweep. A node no rule rewrites is entered in its graph's
table of common subexpressions (CSE, `myia.opt.cse`): an equal node met later is replaced by
it.

Effects are never dropped: the sweep knows which nodes have an effect in their computation
(`myia.opt.effects.calls_effect`, and the inputs of a node that has one), and refuses a
replacement that no longer depends on such an input of the node it replaces (as
``tuple_getitem(make_tuple(x, print(y)), 0) => x`` would).

Rules build new nodes and never mutate existing ones, except that a node's inputs are updated
in place to their replacements. So a sweep costs time linear in the nodes visited and created.
`run_sweeps` repeats sweeps, each with a fresh `ProgramInfo` (uses, recursion, nesting), until
one changes nothing: rules that depend on global facts (inline a graph used once) fire on the
next sweep.

Every node a rule creates gets an abstract value from its primitive's type rule and a
`DebugInfo` derived from the node it replaces (so names and source locations survive). A
replacement must have the type of the node it replaces; one of a narrower type (``None`` for
``Tree | None``) is wrapped in ``convert`` to the declared type, so that users still type-check.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..abstract.data import (
    BOTTOM,
    AbstractConstant,
    AbstractFunction,
    AbstractValue,
    GraphFunction,
)
from ..abstract.lattice import TypeMismatch, broaden, constant_abstract, erase_functions, join
from ..errors import MyiaInternalError, MyiaShapeError, MyiaTypeError
from ..infer.registry import INFER_RULES
from ..ir.clone import Cloner
from ..ir.node import Apply, Constant, DebugInfo, Graph, Node
from ..operations.core import Operation
from ..primitives import P, Primitive
from .cse import cse_key
from .effects import calls_effect
from .info import ProgramInfo
from .matcher import GRAPH_CALL, Called, Matcher, Rewrite, head_of

#: Upper bound on sweeps per rewrite pass (each sweep normalizes everything it reaches).
MAX_SWEEPS = 12

#: Print each rewrite as it fires (debugging aid).
TRACE = os.environ.get("MYIA_TRACE_REWRITES", "") not in ("", "0")


def same_type(a: Any, b: Any) -> bool:
    """Whether abstract values `a` and `b` describe the same data (values and functions aside)."""
    if a is b or a == b:
        return True
    if a is None or b is None:
        return False
    try:
        return broaden(erase_functions(a)) == broaden(erase_functions(b))
    except Exception:
        return False


def covers(wide: Any, narrow: Any) -> bool:
    """Whether a value of type `narrow` may stand where type `wide` is declared."""
    wide, narrow = erase_functions(wide), erase_functions(narrow)
    try:
        return broaden(join(wide, narrow)) == broaden(wide)
    except (TypeMismatch, Exception):
        return False


def function_abstract(fn: Any) -> AbstractFunction:
    """Return the abstract value of a constant holding a primitive, operation or graph."""
    if isinstance(fn, Graph):
        return AbstractFunction(frozenset([GraphFunction(fn)]))
    return AbstractFunction(frozenset([fn]))


def value_abstract(value: Any) -> Any:
    """Return the abstract value of a constant holding `value` (as specialization does)."""
    if isinstance(value, (Primitive, Operation, Graph)):
        return function_abstract(value)
    if isinstance(value, AbstractValue):
        return AbstractConstant(value)  # the type argument of convert, narrow...
    try:
        return constant_abstract(value)
    except TypeError:
        return AbstractConstant(value)


def typed_constant(value: Any, abstract: Any = None, debug: DebugInfo | None = None) -> Constant:
    """A new constant holding `value`, of type `abstract` (by default `value_abstract`)."""
    c = Constant(value, debug)
    c.abstract = abstract if abstract is not None else value_abstract(value)
    return c


def typed_apply(graph: Graph, abstract: Any, fn: Any, *args: Any) -> Apply:
    """A new node ``fn(*args)`` of type `abstract` in `graph`, for passes that build calls.

    Arguments that are not nodes (and `fn`, if it is not one) become typed constants.
    """
    inputs = [a if isinstance(a, Node) else typed_constant(a) for a in (fn, *args)]
    app = Apply(inputs, graph)
    app.abstract = abstract
    return app


class Sweep:
    """One sweep of rewrites over the program reachable from `root` (see the module doc).

    Rules receive the sweep as their ``opt`` argument: `info` for facts about graphs, and
    `apply`, `const`, `inline` to build what replaces a node.
    """

    def __init__(self, root: Graph, matcher: Matcher, *, cse: bool = True, budget: int = 0):
        self.root = root
        self.matcher = matcher
        self.cse = cse
        self.info = ProgramInfo(root)
        self.repl: dict[Node, Node] = {}
        self.done: set[Node] = set()
        self.tables: dict[Graph, dict[Any, Node]] = {}
        self.fired: Counter[str] = Counter()
        self.queued: set[Graph] = set()
        self.queue: list[Graph] = []
        self.walked: set[Node] = set()
        #: Nodes whose computation has an effect (an effect, or a call that may run one), each
        #: with the effects it depends on in its graph (the nodes that run them): a random
        #: draw's samples are used downstream, and what uses them may be rewritten as long as
        #: it still depends on the draw.
        self.impure: dict[Node, frozenset[Node]] = {}
        total = sum(self.info.sizes.values())
        #: How many nodes inlining may still copy in this sweep (guards against blow-up).
        self.budget = budget or max(20_000, 8 * total)
        self._steps = 0
        self._max_steps = 200_000 + 50 * total

    # Driving --------------------------------------------------------------------------------

    def run(self) -> bool:
        """Sweep the program; return whether anything changed."""
        self._enqueue(self.root)
        i = 0
        while i < len(self.queue):
            g = self.queue[i]
            i += 1
            if g.output is None:
                continue
            self._visit(g.output)
            g.output = self.resolve(g.output)
            self._discover(g.output)
        return bool(self.fired)

    def _discover(self, root: Node) -> None:
        """Queue the graphs used by the nodes `root` depends on, now that they are final.

        Graphs are queued only once the graph using them is done, so that a closure inlined
        where it is called (the usual fate of a backpropagator) is never visited on its own.
        """
        walked = self.walked
        stack = [root]
        while stack:
            node = stack.pop()
            if node in walked:
                continue
            walked.add(node)
            if node.is_apply:
                stack.extend(node.inputs)
            elif node.is_constant and type(node.value) is Graph:  # type: ignore[attr-defined]
                self._enqueue(node.value)  # type: ignore[attr-defined]

    def _enqueue(self, g: Graph) -> None:
        if g not in self.queued:
            self.queued.add(g)
            self.queue.append(g)

    def resolve(self, node: Node) -> Node:
        """Return the node that stands for `node` now (following replacements)."""
        repl = self.repl
        r = repl.get(node)
        if r is None:
            return node
        path = []
        while True:
            nxt = repl.get(r)
            if nxt is None:
                break
            path.append(r)
            r = nxt
        repl[node] = r
        for p in path:
            repl[p] = r
        return r

    def _visit(self, root: Node) -> None:
        done = self.done
        repl = self.repl
        stack = [root]
        while stack:
            node = stack[-1]
            if node in done or not node.is_apply:
                stack.pop()
                continue
            inputs = node.inputs
            pushed = False
            for k in range(len(inputs) - 1, -1, -1):
                i = inputs[k]
                if i in repl:
                    i = inputs[k] = self.resolve(i)
                if i.is_apply and i not in done:
                    stack.append(i)
                    pushed = True
            if pushed:
                continue
            stack.pop()
            graph = node.graph
            impure = self.impure
            roots = frozenset().union(
                *(impure[i] for i in inputs if i in impure and i.graph is graph)
            )
            new = self._rewrite(node, list(roots))
            done.add(node)
            if new is None:
                if calls_effect(node, self.info.effectful, self.info.parents):
                    impure[node] = roots | {node}
                elif roots:
                    impure[node] = roots
            if new is not None:
                repl[node] = new
                if not new.is_constant and new.debug.find_name() is None:
                    new.debug.name = node.debug.find_name()  # keep the user's name
                if new.is_apply and new not in done:
                    stack.append(new)
            elif self.cse:
                key = cse_key(node)
                if key is not None:
                    table = self.tables.setdefault(node.graph, {})  # type: ignore[arg-type]
                    other = table.get(key)
                    if other is None:
                        table[key] = node
                    else:
                        repl[node] = other
                        self.fired["cse"] += 1

    def _rewrite(self, node: Apply, tainted: list[Node]) -> Node | None:
        """Return the replacement of `node` by the first rule that applies to it, or None.

        `tainted` are the effects the inputs of `node` depend on (the nodes that run them): a
        replacement that no longer depends on one of them (which would drop it) is refused.
        """
        rules = self.matcher.rules_for(head_of(node))
        if not rules:
            return None
        self._steps += 1
        if self._steps > self._max_steps:
            raise MyiaInternalError("the optimizer does not terminate (rewrites keep firing)")
        for rule in rules:
            try:
                new = rule.fn(node, self)
            except (MyiaTypeError, MyiaShapeError):
                continue  # what the rule would build does not type-check here: not applicable
            if new is None or new is node:
                continue
            new = self._conform(new, node, rule)
            if new is None or (
                tainted
                and not _depends_on(new, tainted, node.graph, self._captured)
                and not self._computed_elsewhere(node, new, tainted)
            ):
                continue
            self.fired[rule.name] += 1
            if TRACE:
                print(f"[rewrite] {rule.name}: {node!r} => {new!r}")
            return new
        return None

    def _computed_elsewhere(
        self, node: Node, new: Node, effects: list[Node], limit: int = 20_000
    ) -> bool:
        """Whether every node of `effects` is still computed once `new` replaces `node`.

        It is when it stays reachable from its graph's output (as it is now, with `new` for
        `node`), which computes every node it reaches: a replacement may then drop one use of
        an effect's value (``(loss, bprop)[1] => bprop`` where ``loss`` depends on a random
        draw that the graph returns anyway).
        """
        graph = node.graph
        if graph.output is None:
            return False

        def current(n: Node) -> Node:
            n = self.resolve(n)
            return new if n is node else n

        return _depends_on(graph.output, effects, graph, self._captured, limit, current)

    def _captured(self, g: Graph) -> Iterable[Node]:
        """The free variables of closure `g` (none known for a graph made in this sweep)."""
        return self.info.scopes.free_variables_total.get(g, ())

    def _conform(self, new: Node, node: Apply, rule: Rewrite) -> Node | None:
        """Return `new` with the type `node` is declared with (converted if narrower), or None."""
        if new.abstract is None:
            raise MyiaInternalError(f"rewrite {rule.name} made a node without a type: {new!r}")
        want = node.abstract
        if same_type(new.abstract, want) or want is BOTTOM:
            return new
        if covers(want, new.abstract) and not _has_function(want):
            return self.apply(P.convert, new, self.const(want, like=node), like=node)
        return None

    # Building nodes -------------------------------------------------------------------------

    def const(self, value: Any, *, like: Node | None = None, abstract: Any = None) -> Constant:
        """Make a new constant holding `value` (with the debug origin of `like`)."""
        return typed_constant(
            value, abstract, DebugInfo(origin=like.debug) if like is not None else None
        )

    def apply(self, fn: Any, *args: Any, like: Node, abstract: Any = None) -> Apply:
        """Make a new node ``fn(*args)`` in the graph of `like`, which it replaces or helps to.

        Arguments that are not nodes become constants. Its abstract value is `abstract`, else
        the type rule's for a primitive, else that of `like`.
        """
        inputs = [a if isinstance(a, Node) else self.const(a, like=like) for a in (fn, *args)]
        graph = like.graph
        if graph is None:
            raise MyiaInternalError("cannot build a node next to a constant")
        app = Apply(inputs, graph, DebugInfo(origin=like.debug))
        if abstract is None:
            f = inputs[0]
            if f.is_constant and isinstance(f.value, Primitive) and f.value in INFER_RULES:  # type: ignore[attr-defined]
                abstract = INFER_RULES[f.value](*(i.abstract for i in inputs[1:]))  # type: ignore[attr-defined]
            elif f.is_constant and isinstance(f.value, Graph):  # type: ignore[attr-defined]
                abstract = getattr(f.value, "abstract", None) or like.abstract  # type: ignore[attr-defined]
            else:
                abstract = like.abstract
        app.abstract = abstract
        return app

    def inline(self, g: Graph, args: Iterable[Node], call: Apply) -> Node:
        """Copy `g`'s body in place of `call` (``g(*args)``); return the node for its output."""
        info = self.info
        nested = info.scope(g)[1:]
        cloner = Cloner()
        out = cloner.inline(g, list(args), call.graph, nested=nested)  # type: ignore[arg-type]
        for orig, copy in cloner.graphs.items():
            parent = info.parents.get(orig)
            parent = call.graph if parent is g else cloner.graphs.get(parent, parent)  # type: ignore[arg-type]
            info.register_copy(orig, copy, parent)
        self.budget -= info.scope_size(g)
        # Code generated without a location (the graphs of AD) gets the call's: errors and
        # generated code point at the user's line.
        where = call.debug.find_location()
        site = (call.debug, call.graph.name, g.name)  # type: ignore[union-attr]
        for orig, copy in cloner.nodes.items():
            if copy.debug.origin is orig.debug:
                if where is not None and copy.debug.find_location() is None:
                    copy.debug.location = where
                if copy.graph is call.graph:
                    # A run-time error raised by the copy shows the call too (not by those
                    # of the closures copied with it: they run where they are called).
                    copy.debug.site = site
        return out


def _depends_on(
    node: Node,
    targets: list[Node],
    graph: Any,
    captured: Any = None,
    limit: int = 5000,
    current: Any = None,
) -> bool:
    """Whether `node` depends on every node of `targets`, within `graph` (False if unsure).

    A closure depends on the values it captures (``captured(g)``: its free variables), which
    are computed where it is made. ``current(n)``, if given, is the node that stands for `n`.
    """
    todo = set(targets)
    seen: set[Node] = set()
    stack = [node]
    while stack and todo:
        n = stack.pop()
        if current is not None:
            n = current(n)
        if n in seen:
            continue
        seen.add(n)
        todo.discard(n)
        if len(seen) > limit:
            return False
        if n.is_apply and n.graph is graph:
            stack.extend(n.inputs)
        elif captured is not None and n.is_constant and type(n.value) is Graph:
            stack.extend(captured(n.value))
    return not todo


def _has_function(a: Any) -> bool:
    return erase_functions(a) != a


def run_sweeps(root: Graph, rules: Iterable[Rewrite], *, cse: bool = True) -> Counter[str]:
    """Sweep `root` with `rules` until nothing changes; return how often each rule fired."""
    matcher = rules if isinstance(rules, Matcher) else Matcher(rules)
    total: Counter[str] = Counter()
    for _ in range(MAX_SWEEPS):
        sweep = Sweep(root, matcher, cse=cse)
        if not sweep.run():
            break
        total.update(sweep.fired)
    return total


__all__ = ["GRAPH_CALL", "Called", "Sweep", "covers", "run_sweeps", "same_type"]

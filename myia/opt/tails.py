"""Tails into branches: what a graph computes after its last branch moves into the branches.

A conditional ends in a call of one of two graphs, ``switch(c, G1, G2)(args)``. What the
graph does with that call's result afterwards (its *tail*) can be done by each branch
instead, at the end of its own body::

    G(...):  r = switch(c, G1, G2)(a1..ak); return T(r, f1..fm)
    =>
    G(...):  return switch(c, G1', G2')(a1..ak, f1..fm)
    Gi'(p1..pk, e1..em):  return T(<Gi's body>, e1..em)

where ``f1..fm`` are the values of ``G`` the tail reads (passed as extra arguments), and the
tail's closures are copied with it. This matters for gradients: the forward graph of an
``if`` returns ``(value, backpropagator)`` where the backpropagator is a closure that calls
the branch's own backpropagator and rearranges its result. Once the tail is in the branch,
``simplify`` sees the branch's closure being called by the tail's closure and merges the two,
so that each ``if`` a gradient goes through costs no closure and no call of its own. Through
a recursion such as a tree walk (`tree_h` with two nested ``if``), one closure per call is
left instead of three.

The tail is only moved when it is small (`LIMIT` nodes, its closures included), the graph
has no effect besides the branch call, the values the tail reads that came after the branch
cannot raise (they are now computed first), and both branches are graphs used nowhere else
(they are changed in place, gaining the extra parameters). Graphs are taken in the order
the branches go (a graph before its branches), so that a tail moved into a branch which
itself ends in a conditional moves on into that conditional's branches.
"""

from __future__ import annotations

from collections import Counter

from ..ir.analysis import Scopes, toposort
from ..ir.clone import Cloner
from ..ir.node import Apply, Graph, Node, Parameter
from ..primitives import P
from .effects import calls_effect, droppable_tree
from .info import ProgramInfo
from .matcher import prim_of
from .sweep import same_type

#: Tails of at most this many applies (their closures' bodies included) are moved.
LIMIT = 48


def _branch_call(g: Graph, order: list[Node]) -> Apply | None:
    """The last call ``switch(c, G1, G2)(args)`` of two graph constants in `g`, if any."""
    for n in reversed(order):
        if not n.is_apply or n.graph is not g:
            continue
        f = n.inputs[0]
        if f.is_apply and f.graph is g and prim_of(f) is P.switch:
            a, b = f.inputs[2], f.inputs[3]
            if a.is_constant and b.is_constant:
                if type(a.value) is Graph and type(b.value) is Graph:  # type: ignore[attr-defined]
                    return n  # type: ignore[return-value]
    return None


def _branches(n: Apply) -> tuple[Graph, Graph]:
    s = n.inputs[0]
    return s.inputs[2].value, s.inputs[3].value  # type: ignore[attr-defined, return-value]


class _Tails:
    def __init__(self, root: Graph):
        self.info = ProgramInfo(root)
        self.scopes: Scopes = self.info.scopes
        self.uses: Counter[Graph] = Counter(self.info.uses)

    def nested_in(self, h: Graph, g: Graph) -> bool:
        if h not in self.scopes.parents:
            self.scopes.add(h)
        return g in self.scopes.ancestors(h)

    def movable(self, g: Graph) -> tuple[Apply, list[Apply], list[Graph], list[Node]] | None:
        """The branch call of `g`, its tail, the closures to copy and the values it reads."""
        order = toposort(g, self.scopes.closure_deps)
        n = _branch_call(g, order)
        if n is None or g.output is n:
            return None
        g1, g2 = _branches(n)
        for b in (g1, g2):
            if b is g or self.uses[b] != 1 or b.output is None:
                return None
            if b.defaults or b.kwonly or b.flags.get("vararg"):
                return None
            if len(b.parameters) != len(n.inputs) - 1:
                return None
            if not same_type(b.output.abstract, n.abstract):
                return None  # a narrower type (one branch of a union): the tail expects n's
        if g1 is g2 or not self._only_user(n.inputs[0], n, order, g):
            return None
        effectful, known = self.info.effectful, self.info.parents
        for x in order:
            if x.is_apply and x is not n and x.graph is g and calls_effect(x, effectful, known):
                return None  # the order of effects is kept by not moving anything
        dep: set[Node] = {n}
        tail: list[Apply] = []
        closures: dict[Graph, None] = {}
        size = 0
        for x in order[order.index(n) + 1 :]:
            if not x.is_apply or x.graph is not g:
                continue
            if any(i in dep for i in x.inputs) or any(
                i.is_constant
                and type(i.value) is Graph  # type: ignore[attr-defined]
                and self.nested_in(i.value, g)  # type: ignore[attr-defined]
                and any(v in dep for v in self.scopes.closure_deps(i.value))  # type: ignore[attr-defined]
                for i in x.inputs
            ):
                dep.add(x)
                tail.append(x)  # type: ignore[arg-type]
        if not tail or g.output not in dep:
            return None
        for x in tail:
            size += 1
            for i in x.inputs:
                if i.is_constant and type(i.value) is Graph:  # type: ignore[attr-defined]
                    h = i.value  # type: ignore[attr-defined]
                    if self.nested_in(h, g):
                        for sub in self.scopes.scope(h):
                            closures.setdefault(sub)
                    elif self.scopes.parents.get(h) is not None:
                        return None  # a closure of another scope
        for h in closures:
            body = [x for x in toposort(h) if x.is_apply]
            size += len(body)
            if any(calls_effect(x, effectful, known) for x in body):
                return None
        if size > LIMIT:
            return None
        inside = set(closures) | {g}
        reads: dict[Node, None] = {}
        for x in tail:
            for i in x.inputs:
                if not i.is_constant and i not in dep:
                    reads.setdefault(i)
        for h in closures:
            for v in self.scopes.closure_deps(h):
                if v.graph not in inside:
                    return None  # a value from outside `g`: not visible in the branches
                if v.graph is g and v not in dep:
                    reads.setdefault(v)
        if any(v.graph is not g for v in reads):
            return None
        # A value the tail reads is computed before the branch runs, now: if it came after the
        # branch and may raise, the branch's own exceptions or effects would come second.
        after = set(order[order.index(n) + 1 :])
        if any(v in after and not droppable_tree(v, g) for v in reads):
            return None
        return n, tail, list(closures), list(reads)

    def _only_user(self, s: Node, n: Apply, order: list[Node], g: Graph) -> bool:
        """Whether `n` is the only use of `s` (the switch, which is changed with `n`)."""
        for x in order:
            if x.is_constant and type(x.value) is Graph and self.nested_in(x.value, g):  # type: ignore[attr-defined]
                if s in self.scopes.closure_deps(x.value):  # type: ignore[attr-defined]
                    return False
            elif x.is_apply and x is not n and s in x.inputs:
                return False
        return True

    def move(self, g: Graph, n: Apply, closures: list[Graph], reads: list[Node]) -> None:
        """Move the tail of `g` after `n` into `n`'s branches, passing them `reads`."""
        args = n.inputs[1:]
        extras = [v for v in reads if v not in args]
        out = g.output
        assert out is not None
        for b in _branches(n):
            params = []
            for v in extras:
                p = Parameter(b, debug=v.debug.derive())
                p.abstract = v.abstract
                params.append(p)
            b.parameters = [*b.parameters, *params]
            cloner = Cloner()
            cloner.nodes[n] = b.output  # type: ignore[assignment]
            for a, p in zip(args, b.parameters):
                if a in reads and a not in cloner.nodes:
                    cloner.nodes[a] = p
            for v, p in zip(extras, params):
                cloner.nodes[v] = p
            b.output = cloner.transplant(g, out, b, nested=closures)
            if g.flags.get("recursive_call"):  # the recursive call it makes moves there
                b.flags["recursive_call"] = True
            if hasattr(b, "abstract"):
                b.abstract = out.abstract  # type: ignore[attr-defined]
            for orig, copy in cloner.nodes.items():  # the graphs the copies use, counted
                if copy is not orig and copy.is_constant and type(copy.value) is Graph:  # type: ignore[attr-defined]
                    self.uses[copy.value] += 1  # type: ignore[attr-defined]
        call = Apply([*n.inputs, *extras], g, n.debug.derive())
        call.abstract = out.abstract
        g.output = call


def move_tails(root: Graph) -> Graph:
    """Move each graph's tail after its last conditional into the branches (module doc)."""
    t = _Tails(root)
    succ: dict[Graph, tuple[Graph, Graph]] = {}
    for g in t.scopes.graphs:
        n = _branch_call(g, toposort(g))
        if n is not None:
            succ[g] = _branches(n)
    indegree: Counter[Graph] = Counter(b for bs in succ.values() for b in bs)
    ready = [g for g in succ if indegree[g] == 0]
    while ready:
        g = ready.pop()
        found = t.movable(g)
        if found is not None:
            n, _, closures, reads = found
            t.move(g, n, closures, reads)
        for b in succ[g]:
            indegree[b] -= 1
            if indegree[b] == 0 and b in succ:
                ready.append(b)
    return root

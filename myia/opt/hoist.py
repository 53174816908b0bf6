"""A backpropagator's arithmetic on its free values, computed where the closure is made.

The backpropagator of ``sin(y)`` computes ``dout * cos(y)``: ``cos(y)`` depends on the forward
value ``y`` alone, not on the sensitivity. Computed in the forward pass instead, next to
``sin(y)``, it is off the critical path of a loop's chain of ``sin`` calls (a processor
computes both at once), and the backward loop is loads and multiply-adds::

    P = λ... ⟨sin(y) ...⟩ G,  G = λd. ... cos(y) ...   =>   c = cos(y) in P,  G = λd. ... c ...

An expression of a backpropagator ``G`` (flagged ``backpropagator``, nested in its forward
graph ``P``) moves to ``P`` when every node of it is a call of a primitive on scalars and
constants, its leaves are free values of ``G``, and

- it cannot raise: ``+``, ``-``, ``*`` and negation of floats (`TOTAL`), or ``cos``, ``sin``
  and ``tan`` of a value whose ``sin``, ``cos`` or ``tan`` ``P`` computes before it makes
  ``G`` (`GUARDED`: they raise on the same inputs, infinities, with the same error, and the
  copy carries the location of the one ``P`` computes);
- ``G`` keeps as many free values: the values the moved expressions read are no longer free
  in ``G`` (no other use), so that a loop pushes as many numbers per iteration as before.

A backpropagator is called once, in the backward pass, so the work done is the same. The
pass runs after the first `simplify`, once the backpropagators of a loop's blocks are whole,
and before `myia.opt.defunc` turns their stacks into stacks of their free values: the stack
of ``scalar_loop``'s gradient then holds ``cos(y)`` instead of ``y``. It is not run on a
gradient that is differentiated again (`BETWEEN_ORDERS`): the next order keeps the closures'
captures that specialization typed.
"""

from __future__ import annotations

import numpy as np

from ..abstract.data import AbstractScalar
from ..ir.analysis import toposort
from ..ir.node import Apply, DebugInfo, Graph, Node
from ..primitives import P
from .info import ProgramInfo
from .matcher import prim_of

#: Primitives that never raise on floats (Python's arithmetic, NumPy's scalars'), of floats
#: and small constants (a Python int too large for a float would raise).
TOTAL = frozenset([P.add, P.sub, P.mul, P.neg])

#: Primitives of one argument that raise exactly on the same inputs (``±inf``: ``math``'s
#: ``ValueError: math domain error``); each is safe where one of them already succeeded.
GUARDED = frozenset([P.sin, P.cos, P.tan])


def _number(node: Node) -> bool:
    """Whether `node` is a float constant, or an int one that a float meets exactly."""
    v = node.value  # type: ignore[attr-defined]
    return isinstance(v, (float, np.floating)) or (type(v) is int and abs(v) <= 2**53)


def _float(node: Node) -> bool:
    a = node.abstract
    return isinstance(a, AbstractScalar) and a.dtype.startswith("float")


class _Hoister:
    """The moves of one program (see the module docstring)."""

    def __init__(self, root: Graph):
        info = ProgramInfo(root)
        self.scopes = info.scopes
        self.scope = info.scope  # a graph and the graphs nested in it
        self.moved = 0

    def guards(self, p: Graph, g: Graph) -> dict[Node, Apply]:
        """The values ``v`` whose ``sin``/``cos``/``tan`` `p` computes before it makes `g`."""
        order = toposort(p, self.scopes.closure_deps)
        made = next(
            (k for k, n in enumerate(order) if n.is_constant and n.value is g),  # type: ignore[attr-defined]
            None,
        )
        if made is None:
            return {}
        computed = set(toposort(p))  # computed whenever p runs (not only for a closure)
        out: dict[Node, Apply] = {}
        for n in order[:made]:
            if n in computed and prim_of(n) in GUARDED and _float(n) and len(n.inputs) == 2:
                out.setdefault(n.inputs[1], n)  # type: ignore[arg-type]
        return out

    def hoistable(self, g: Graph, p: Graph) -> dict[Node, Apply | None]:
        """The nodes of `g` that may move to `p`, each with its guard (None: cannot raise)."""
        guards: dict[Node, Apply] | None = None
        out: dict[Node, Apply | None] = {}
        for n in toposort(g, self.scopes.closure_deps):
            if not n.is_apply or n.graph is not g or not _float(n):
                continue
            prim = prim_of(n)
            args = n.inputs[1:]
            free = [a for a in args if a.graph is not None and a.graph is not g]
            if not (free or any(a in out for a in args)):
                continue  # constants alone: folding's business
            if not all(
                (a.is_constant and _number(a)) or (a in out) or (a in free and _float(a))
                for a in args
            ):
                continue
            if prim in TOTAL:
                out[n] = None
            elif prim in GUARDED and len(args) == 1 and args[0] in free:
                if guards is None:
                    guards = self.guards(p, g)
                guard = guards.get(args[0])
                if guard is not None:
                    out[n] = guard
        return out

    def run(self, g: Graph) -> None:
        """Move `g`'s expressions of its free values to its parent, if it keeps as many."""
        p = self.scopes.parents.get(g)
        if p is None or g.output is None:
            return
        movable = self.hoistable(g, p)
        if not movable:
            return
        graphs = self.scope(g)
        users: dict[Node, list[tuple[Node | None, int]]] = {}
        for h in graphs:
            for n in toposort(h, self.scopes.closure_deps):
                if n.is_apply and n.graph is h:
                    for k, i in enumerate(n.inputs):
                        users.setdefault(i, []).append((n, k))
            if h.output is not None:
                users.setdefault(h.output, []).append((None, -1))
        # The roots: moved nodes that something staying in g (or nested in it) reads.
        roots = [
            n for n in movable if any(u is None or u not in movable for u, _ in users.get(n, ()))
        ]
        below = {r: _below(r, movable) for r in roots}
        free = set(self.scopes.free_variables_total.get(g, ()))
        while roots:
            # The nodes that no longer run in g once `roots` move, and the values freed.
            kept: set[Node] = set()
            for r in below:
                if r not in roots:
                    kept |= below[r]
            dead = set().union(*(below[r] for r in roots)) - kept
            freed = {v for v in free if v in users and all(u in dead for u, _ in users[v])}
            useful = [r for r in roots if any(i in freed for i in _leaves(below[r]))]
            if len(useful) == len(roots):
                break
            roots = useful
        if not roots or len(roots) > len(freed):
            return
        for r in list(below):
            if r not in roots:
                del below[r]
        movable = {n: movable[n] for n in movable if any(n in b for b in below.values())}
        copies: dict[Node, Node] = {}
        for n in movable:  # (in order: inputs first)
            guard = movable[n]
            origin = guard.debug if guard is not None else n.debug
            copy = Apply([copies.get(i, i) for i in n.inputs], p, DebugInfo(origin=origin))
            copy.abstract = n.abstract
            copies[n] = copy
        for n in roots:
            for u, k in users[n]:
                if u is None:
                    for h in graphs:
                        if h.output is n:
                            h.output = copies[n]
                else:
                    u.inputs[k] = copies[n]
        self.moved += len(roots)


def _below(root: Node, movable: dict) -> set[Node]:
    """`root` and the moved nodes it reads, transitively."""
    out = {root}
    todo = [root]
    while todo:
        for i in todo.pop().inputs:
            if i in movable and i not in out:
                out.add(i)
                todo.append(i)
    return out


def _leaves(nodes: set[Node]) -> set[Node]:
    """The inputs of `nodes` that are not among them."""
    return {i for n in nodes for i in n.inputs if i not in nodes}


def hoist_backward(root: Graph, stats: dict[str, int] | None = None) -> Graph:
    """Compute backpropagators' arithmetic on their free values in the forward pass.

    c(fv) in G, G a backpropagator made in P => c(fv) in P, G reads it (module docstring)
    """
    h = _Hoister(root)
    for g in list(h.scopes.graphs):
        if g.flags.get("backpropagator"):
            h.run(g)
    if stats is not None:
        stats["hoisted"] = h.moved
    return root


__all__ = ["GUARDED", "TOTAL", "hoist_backward"]

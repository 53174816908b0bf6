"""What the optimizer knows of a whole program: nesting, recursion, uses, sizes, raises.

A `ProgramInfo` is a snapshot taken at the start of each sweep of the rewriter, in time linear
in the size of the program (one `Scopes` walk, one Tarjan, one reverse-edge propagation). The
sweep keeps it up to date for what it creates itself: the graphs copied by inlining inherit
their originals' recursion and raising flags, and are nested where the copy was made. Other
rewrites only ever *remove* free variables from graphs, so a graph may end up nested less
deeply than the snapshot says, which is safe (inlining then copies a graph it needed not copy).
"""

from __future__ import annotations

from ..ir.analysis import Scopes
from ..ir.node import Graph
from ..primitives import P, Primitive


class ProgramInfo:
    """Facts about every graph reachable from `root` (see the module docstring).

    Attributes:
        scopes: the `Scopes` of the program when the snapshot was taken.
        parents: the graph each graph is nested in (None: top-level).
        uses: how many times each graph appears as an input of an apply or as an output.
        sizes: the number of applies of each graph's own body.
        raises: the graphs that may reach a ``raise`` (directly or through calls).
        effectful: the graphs that may reach any effect (``print``, ``assert``, ``raise``).

    """

    def __init__(self, root: Graph, scopes: Scopes | None = None):
        self.root = root
        self.scopes = scopes if scopes is not None else Scopes(root)
        self.parents: dict[Graph, Graph | None] = dict(self.scopes.parents)
        self.children: dict[Graph, list[Graph]] = {}
        for g, p in self.parents.items():
            if p is not None:
                self.children.setdefault(p, []).append(g)
        self.uses: dict[Graph, int] = {}
        self.sizes: dict[Graph, int] = {}
        self.recursive: dict[Graph, bool] = {}
        direct_raise: list[Graph] = []
        direct_effect: list[Graph] = []
        callers: dict[Graph, list[Graph]] = {}
        for g in self.scopes.graphs:
            size = 0
            raises = effect = False
            for n in self.scopes.nodes[g]:
                if not n.is_apply:
                    continue
                size += 1
                for i in n.inputs:
                    if i.is_constant:
                        v = i.value  # type: ignore[attr-defined]
                        if type(v) is Graph:
                            self.uses[v] = self.uses.get(v, 0) + 1
                            callers.setdefault(v, []).append(g)
                        elif type(v) is Primitive and v.effect:
                            effect = True
                            raises = raises or v is P.raise_
            out = g.output
            if out is not None and out.is_constant and type(out.value) is Graph:  # type: ignore[attr-defined]
                self.uses[out.value] = self.uses.get(out.value, 0) + 1  # type: ignore[attr-defined]
                callers.setdefault(out.value, []).append(g)  # type: ignore[attr-defined]
            self.sizes[g] = size
            if raises:
                direct_raise.append(g)
            if effect:
                direct_effect.append(g)
        self.raises = _callers_of(direct_raise, callers)
        self.effectful = _callers_of(direct_effect, callers)
        self._scope_sizes: dict[Graph, int] = {}
        #: the recursive graphs inlined at their one call in this sweep (`myia.opt.inline`)
        self.once: set[Graph] = set()

    def known(self, g: Graph) -> bool:
        """Whether `g` is in the snapshot (or was registered since)."""
        return g in self.parents

    def is_recursive(self, g: Graph) -> bool:
        """Whether `g` can reach itself through graph constants (True if `g` is unknown)."""
        r = self.recursive.get(g)
        if r is None:
            if g not in self.scopes.nodes:
                return True
            r = self.recursive[g] = self.scopes.is_recursive(g)
        return r

    def scope(self, g: Graph) -> list[Graph]:
        """`g` and every graph nested in it, transitively (parents before children)."""
        out = [g]
        i = 0
        while i < len(out):
            out.extend(self.children.get(out[i], ()))
            i += 1
        return out

    def scope_size(self, g: Graph) -> int:
        """Return the number of applies of `g` and of the graphs nested in it."""
        s = self._scope_sizes.get(g)
        if s is None:
            s = self._scope_sizes[g] = sum(self.sizes.get(h, 0) for h in self.scope(g))
        return s

    def register_copy(self, original: Graph, copy: Graph, parent: Graph | None) -> None:
        """Record `copy`, a copy of `original` nested in `parent`, made during a sweep."""
        self.parents[copy] = parent
        if parent is not None:
            self.children.setdefault(parent, []).append(copy)
        self.recursive[copy] = self.is_recursive(original)
        self.sizes[copy] = self.sizes.get(original, 0)
        self.uses[copy] = 1
        if original in self.raises:
            self.raises.add(copy)
        if original in self.effectful:
            self.effectful.add(copy)
        self._scope_sizes.pop(parent, None)  # type: ignore[arg-type]


def _callers_of(graphs: list[Graph], callers: dict[Graph, list[Graph]]) -> set[Graph]:
    """`graphs` and every graph that uses one of them, transitively."""
    out = set(graphs)
    todo = list(graphs)
    while todo:
        g = todo.pop()
        for c in callers.get(g, ()):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out

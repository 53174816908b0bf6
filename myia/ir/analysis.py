"""Analyses of the IR, computed on demand.

None of these are cached on the graphs themselves: a `Scopes` is a snapshot of the graphs
reachable from some roots, and passes that transform graphs build a new one when they need it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Iterator

from .node import Apply, Graph, Node


def toposort(graph: Graph, deps: Callable[[Graph], Iterable[Node]] | None = None) -> list[Node]:
    """Return the nodes of `graph` reachable from its output, inputs before users.

    Only nodes that belong to `graph` and constants are listed: free variables (nodes of
    enclosing graphs) are not. Inputs are visited left to right, so effects sequenced by
    argument order keep their order. With `deps`, a constant holding a graph ``g`` also
    depends on the nodes of `graph` among ``deps(g)`` (the free variables of a closure must
    be computed before the closure is made); without it, such nodes are only listed when
    something else uses them.
    """
    out: list[Node] = []
    root = graph.output
    if root is None:
        return out
    # Depth first: each node's successors are listed once, when it is met, and walked by an
    # iterator kept on the stack.
    seen: set[Node] = {root}
    stack: list[tuple[Node, Iterator[Node]]] = [(root, iter(_successors(graph, root, deps)))]
    while stack:
        node, succ = stack[-1]
        for inp in succ:
            if inp not in seen:
                seen.add(inp)
                stack.append((inp, iter(_successors(graph, inp, deps))))
                break
        else:
            stack.pop()
            if node.graph is graph or node.is_constant:
                out.append(node)
    return out


def _successors(
    graph: Graph, node: Node, deps: Callable[[Graph], Iterable[Node]] | None
) -> list[Node]:
    if node.is_apply:
        if node.graph is not graph:
            return []
        return [i for i in node.inputs if i.graph is graph or i.is_constant]
    if deps is not None and node.is_constant and isinstance(node.value, Graph):
        return [n for n in deps(node.value) if n.graph is graph]
    return []


def graph_constants(graph: Graph, nodes: Iterable[Node] | None = None) -> Iterator[Graph]:
    """Yield the graphs held by constants used by `graph`'s nodes (with repetitions)."""
    for node in toposort(graph) if nodes is None else nodes:
        if node.is_apply:
            for inp in node.inputs:
                if inp.is_constant and isinstance(inp.value, Graph):
                    yield inp.value
    if graph.output is not None and graph.output.is_constant_graph():
        yield graph.output.value  # type: ignore[attr-defined]
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
        todo.extend(reversed(list(dict.fromkeys(graph_constants(g)))))
    return order


def direct_free_variables(graph: Graph) -> list[Node]:
    """Return the nodes of other graphs that `graph`'s own nodes use, in order of use."""
    return Scopes(graph).free_variables_direct[graph]


class Scopes:
    """Nodes, free variables, parents and children of every graph reachable from roots.

    A graph's *own nodes* are those reachable from its output or used, as free variables, by
    the graphs it references. Its *direct* free variables are the nodes of other graphs its
    own nodes use; its *total* free variables add those of the graphs it references by
    constant (a closure made in ``g`` needs ``g`` to see the closure's free variables). The
    *parent* of a graph is the owner of its total free variables nested the deepest; a graph
    without free variables is top-level (parent None). `add` extends the snapshot with new
    roots, recomputing nothing already known.
    """

    def __init__(self, roots: Graph | Iterable[Graph] = ()):
        self.graphs: list[Graph] = []
        self.nodes: dict[Graph, list[Node]] = {}
        self.free_variables_direct: dict[Graph, list[Node]] = {}
        self.free_variables_total: dict[Graph, list[Node]] = {}
        self.parents: dict[Graph, Graph | None] = {}
        self._topo: dict[Graph, list[Node]] = {}
        self._consts: dict[Graph, list[Graph]] = {}
        self._recursive: dict[Graph, bool] = {}
        self._components: dict[Graph, tuple[Graph, ...]] = {}
        self._invariant: dict[Graph, frozenset[int]] = {}
        self.add(roots)

    def add(self, roots: Graph | Iterable[Graph]) -> None:
        """Index every graph reachable from `roots` that is not indexed yet."""
        roots = [roots] if isinstance(roots, Graph) else list(roots)
        new: list[Graph] = []
        found: dict[Graph, dict[Node, None]] = {}
        todo = [r for r in roots if r not in self.nodes]
        for r in todo:
            found.setdefault(r, {})
        # Walk every node of every new graph, following inputs and graph constants.
        stack: list[Node] = []
        for r in todo:
            new.append(r)
            if r.output is not None:
                stack.append(r.output)
            stack.extend(r.defaults.values())
            stack.extend(r.parameters)
        seen: set[Node] = set()
        known = self.nodes
        push, extend, pop = stack.append, stack.extend, stack.pop
        while stack:
            node = pop()
            if node in seen:
                continue
            seen.add(node)
            g = node.graph
            if g is not None:
                if g in known:
                    continue
                own = found.get(g)
                if own is None:
                    own = found[g] = {}
                    new.append(g)
                    extend(g.parameters)
                    if g.output is not None:
                        push(g.output)
                own[node] = None
            if node.is_apply:
                extend(node.inputs)
            elif node.is_constant and isinstance(node.value, Graph):
                sub = node.value
                if sub not in known and sub not in found:
                    found[sub] = {}
                    new.append(sub)
                    stack.extend(sub.parameters)
                    stack.extend(sub.defaults.values())
                    if sub.output is not None:
                        stack.append(sub.output)
        consts: dict[Graph, dict[Graph, None]] = {}
        for g in new:
            own = found[g]
            self.graphs.append(g)
            self.nodes[g] = list(own)
            fv: dict[Node, None] = {}
            cs: dict[Graph, None] = {}  # in the order met: free variables' order
            for n in own:
                if n.is_apply:
                    for inp in n.inputs:
                        h = inp.graph
                        if h is not None:
                            if h is not g:
                                fv[inp] = None
                        elif inp.is_constant and isinstance(inp.value, Graph):
                            cs[inp.value] = None
            for extra in [g.output, *g.defaults.values()]:
                if extra is None:
                    continue
                if extra.graph is not None and extra.graph is not g:
                    fv[extra] = None
                elif extra.is_constant and isinstance(extra.value, Graph):
                    cs[extra.value] = None
            consts[g] = cs
            self.free_variables_direct[g] = list(fv)
        total: dict[Graph, dict[Node, None]] = {
            g: dict.fromkeys(self.free_variables_direct[g]) for g in new
        }
        # Sweeps in the order of `new` until nothing grows; a graph none of whose new
        # constants grew since it was last swept is skipped (it would gain nothing), which
        # keeps the result (and the order of each list) that of the full sweeps.
        step = 0
        grown: dict[Graph, int] = dict.fromkeys(new, 0)  # the step a graph last grew at
        swept: dict[Graph, int] = dict.fromkeys(new, -1)  # the step a graph was last swept
        changed = True
        while changed:
            changed = False
            for g in new:
                step += 1
                subs = consts[g]
                last = swept[g]
                if last >= 0 and not any(grown.get(sub, -1) > last for sub in subs):
                    continue
                swept[g] = step
                fv = total[g]
                for sub in subs:
                    sub_fv = total[sub] if sub in total else self.free_variables_total[sub]
                    for n in sub_fv:
                        if n.graph is not g and n not in fv:
                            fv[n] = None
                            grown[g] = step
                            changed = True
        for g in new:
            self.free_variables_total[g] = list(total[g])
        for g in new:
            self._parent(g)

    def _parent(self, g: Graph) -> Graph | None:
        if g in self.parents:
            return self.parents[g]
        owners = {n.graph: None for n in self.free_variables_total[g] if n.graph is not None}
        self.parents[g] = None  # guard against cycles while computing
        best = None
        for o in owners:
            anc = set(self.ancestors(o))
            if all(p is o or p in anc for p in owners):
                best = o
                break
        if best is None and owners:
            best = next(iter(owners))
        self.parents[g] = best
        return best

    def ancestors(self, g: Graph) -> list[Graph]:
        """Return the chain of parents of `g`, innermost first."""
        out = []
        p = self._parent(g) if g in self.free_variables_total else None
        while p is not None and p not in out:
            out.append(p)
            p = self._parent(p) if p in self.free_variables_total else None
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

    def toposort(self, g: Graph) -> list[Node]:
        """Return `toposort` of `g`, closures after their free variables (cached: no mutation!)."""
        order = self._topo.get(g)
        if order is None:
            order = self._topo[g] = toposort(g, self.closure_deps)
        return order

    def constants(self, g: Graph) -> list[Graph]:
        """Return the graphs held by constants among `g`'s own nodes (indexing `g` if needed)."""
        if g not in self.nodes:
            self.add(g)
        out = self._consts.get(g)
        if out is None:
            out = self._consts[g] = list(dict.fromkeys(graph_constants(g, self.nodes[g])))
        return out

    def is_recursive(self, g: Graph) -> bool:
        """Whether `g` can reach itself through graph constants (loops, recursion).

        Computed for every graph reachable from `g` at once, by Tarjan's algorithm.
        """
        if g not in self._recursive:
            self._tarjan(g)
        return self._recursive[g]

    def _tarjan(self, root: Graph) -> None:
        index: dict[Graph, int] = {}
        low: dict[Graph, int] = {}
        on_stack: set[Graph] = set()
        stack: list[Graph] = []
        work: list[tuple[Graph, int]] = [(root, 0)]
        while work:
            g, i = work.pop()
            if i == 0:
                if g in index or g in self._recursive:
                    continue
                index[g] = low[g] = len(index)
                stack.append(g)
                on_stack.add(g)
            succ = self.constants(g)
            if i < len(succ):
                work.append((g, i + 1))
                h = succ[i]
                if h in self._recursive:
                    continue
                if h not in index:
                    work.append((h, 0))
                elif h in on_stack:
                    low[g] = min(low[g], index[h])
                continue
            for h in succ:
                if h in on_stack and h in low:
                    low[g] = min(low[g], low[h])
            if low[g] == index[g]:
                component = []
                while True:
                    h = stack.pop()
                    on_stack.discard(h)
                    component.append(h)
                    if h is g:
                        break
                rec = len(component) > 1 or g in self.constants(g)
                for h in component:
                    self._recursive[h] = rec
                    if rec:
                        self._components[h] = tuple(component)

    def invariant_parameters(self, g: Graph) -> frozenset[int]:
        """The positions of the parameters of recursive `g` that its recursion never changes.

        A loop's header passes the variables the loop does not assign back to itself as
        they are (``n`` in ``while i < n: i += 1``): every call within `g`'s recursive
        component passes, at such a position, a constant, a value computed outside the
        component, or a parameter of the component at such a position itself. Inference keeps
        their values (a shape read before a loop stays known in it) and broadens the others.
        """
        if not self.is_recursive(g):
            return frozenset()
        out = self._invariant.get(g)
        if out is None:
            self._invariants(self._components[g])
            out = self._invariant[g]
        return out

    def _invariants(self, component: tuple[Graph, ...]) -> None:
        members = set(component)
        inv = {(h, i) for h in component for i in range(len(h.parameters))}
        calls: list[tuple[Graph, list[Node]]] = []

        def member(node: Node) -> Graph | None:
            v = node.value if node.is_constant else None  # type: ignore[attr-defined]
            return v if type(v) is Graph and v in members else None

        for h in component:
            for n in self.nodes[h]:
                if not n.is_apply:
                    continue
                fn, *args = n.inputs
                callees = [member(fn)] if member(fn) else []
                if fn.is_apply and _is_switch_node(fn):
                    callees = [k for k in map(member, fn.inputs[2:]) if k is not None]
                for k in callees:
                    calls.append((k, args))
                for idx, i in enumerate(n.inputs):
                    k = member(i)
                    used_as_callee = idx == 0 or (_is_switch_node(n) and idx >= 2)
                    if k is not None and not used_as_callee:
                        inv -= {(k, j) for j in range(len(k.parameters))}  # a value: any call
        for k, args in calls:
            if len(args) != len(k.parameters) or k.defaults or k.kwonly:
                inv -= {(k, j) for j in range(len(k.parameters))}

        def invariant(a: Node) -> bool:
            if a.is_constant or a.graph not in members:
                return True
            if a.is_parameter:
                return (a.graph, a.graph.parameters.index(a)) in inv  # type: ignore[union-attr]
            return False

        changed = True
        while changed:
            changed = False
            for k, args in calls:
                for j, a in enumerate(args):
                    if (k, j) in inv and not invariant(a):
                        inv.discard((k, j))
                        changed = True
        for h in component:
            self._invariant[h] = frozenset(i for (k, i) in inv if k is h)

    def closure_deps(self, g: Graph) -> list[Node]:
        """Return the total free variables of `g` (indexing `g` first if needed)."""
        if g not in self.free_variables_total:
            self.add(g)
        return self.free_variables_total[g]


_CAPTURES: weakref.WeakKeyDictionary[Graph, bool] = weakref.WeakKeyDictionary()


def captures(g: Graph) -> bool:
    """Whether `g` reads variables of the graphs it is nested in (a closure), cached.

    That is, whether ``Scopes(g).free_variables_total[g]`` is not empty. Most closures read
    such a variable in their own body (`_uses_free_variable`): that is enough, and costs a
    walk of `g` alone. Only the others need `Scopes(g)`, which walks every graph `g` reaches
    and, through free variables, the graphs it is nested in and all they reach: done for
    each closure of a gradient program, that was quadratic in the size of the program.

    The answer is cached by graph, so `g` must not gain or lose free variables once asked
    about. It is asked about by inference, specialization and the J transform, none of which
    changes what a graph captures (the optimizer changes specialized graphs later, or copies
    of them; `myia.infer.lifting` changes where a closure is made, not what it captures).
    """
    out = _CAPTURES.get(g)
    if out is None:
        out = _uses_free_variable(g) or bool(Scopes(g).free_variables_total[g])
        _CAPTURES[g] = out
    return out


def _uses_free_variable(g: Graph) -> bool:
    """Whether a node of `g` reachable from its output (or a default) is a node of another graph.

    Such a node is a direct free variable of `g` in any `Scopes` holding `g` (its own nodes
    include those reachable from its output), so `g` captures; False says nothing.
    """
    roots = [n for n in (g.output, *g.defaults.values()) if n is not None]
    if any(n.graph is not None and n.graph is not g for n in roots):
        return True
    seen: set[Node] = set()
    stack = [n for n in roots if n.graph is g]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.is_apply:
            for inp in node.inputs:  # type: ignore[attr-defined]
                owner = inp.graph
                if owner is g:
                    stack.append(inp)
                elif owner is not None:
                    return True
    return False


def _is_switch_node(node: Node) -> bool:
    fn = node.inputs[0] if node.is_apply else None
    return (
        fn is not None
        and fn.is_constant
        and getattr(fn.value, "name", None) == "switch"  # type: ignore[attr-defined]
        and type(fn.value).__name__ == "Primitive"  # type: ignore[attr-defined]
    )


def uses(graphs: Iterable[Graph]) -> dict[Node, list[tuple[Apply, int]]]:
    """Map each node to the list of ``(user, input_index)`` pairs over `graphs`' bodies."""
    result: dict[Node, list[tuple[Apply, int]]] = {}
    for g in graphs:
        for node in toposort(g):
            if node.is_apply:
                for i, inp in enumerate(node.inputs):
                    result.setdefault(inp, []).append((node, i))  # type: ignore[arg-type]
    return result

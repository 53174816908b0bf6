"""A transformation of a closure passed as an argument: ``apply_jvp(lambda z: W @ z, x, v)``.

``def apply_jvp(fn, x, v): return jvp(fn, (x,), (v,))`` transforms the closure it receives:
its specialization for that closure (inference specializes a function per function value it
receives) calls the transformed closure, lifted (`myia.grad.closures.lifted_closure`), which
takes the closure's free variables (``W``) as arguments. The call cannot read them where they
are defined: they are passed to it along the calls that brought the closure there, each
specialized graph on the way taking them as parameters after its own:

    def caller(W, x, v):                    def caller(W, x, v):
        return apply_jvp(clo, x, v)   =>        return apply_jvp(clo, x, v, W)
    def apply_jvp(fn, x, v):                def apply_jvp(fn, x, v, W):
        return jvp_of(fn)(x, v)                 return jvp(clo:lifted)(x, v, W)

A graph that branches of a ``switch`` share calls with (a loop's, an ``if``'s) takes them too,
as do its other callers. A graph used otherwise than called (passed as a function value) is
refused, as the transformation of a closure called away from where it is defined was.
"""

from __future__ import annotations

from typing import Any

from ..ir.analysis import Scopes, toposort
from ..ir.node import Apply, Graph, Node, Parameter
from ..primitives import P
from .closures import PASSED, _in_scope


class _Calls:
    """How the specialized graphs are called: directly, through a ``switch``, or otherwise."""

    def __init__(self, graphs: list[Graph]):
        self.direct: dict[Graph, list[Apply]] = {}
        self.switched: dict[Graph, list[Apply]] = {}  # switch(c, a, b): by branch
        self.other: set[Graph] = set()  # used as a value (passed, stored, returned)
        switches: dict[Apply, list[Apply]] = {}
        for h in graphs:
            for node in toposort(h):
                if not node.is_apply:
                    continue
                fn = node.inputs[0]
                if fn.is_constant and isinstance(fn.value, Graph):
                    self.direct.setdefault(fn.value, []).append(node)
                elif _is_switch(fn):
                    switches.setdefault(fn, []).append(node)
        for h in graphs:
            for node in toposort(h):
                if not node.is_apply:
                    continue
                for k, i in enumerate(node.inputs):
                    if not (i.is_constant and isinstance(i.value, Graph)) or k == 0:
                        continue
                    if _is_switch(node) and k >= 2 and node in switches:
                        self.switched.setdefault(i.value, []).append(node)
                    else:
                        self.other.add(i.value)
        self.calls_of_switch = switches

    def group(self, g: Graph) -> list[Graph]:
        """`g` and the graphs a ``switch`` selects among with it, transitively."""
        out = [g]
        for h in out:
            for sw in self.switched.get(h, ()):
                for i in sw.inputs[2:]:
                    if i.is_constant and isinstance(i.value, Graph) and i.value not in out:
                        out.append(i.value)
        return out

    def sites(self, group: list[Graph]) -> list[Apply]:
        """The calls of the graphs of `group`: direct, and of the switches among them."""
        out: list[Apply] = []
        for g in group:
            out += self.direct.get(g, [])
            for sw in self.switched.get(g, ()):
                out += [c for c in self.calls_of_switch.get(sw, []) if c not in out]
        return out


def _is_switch(node: Node) -> bool:
    fn = node.inputs[0] if node.is_apply and node.inputs else None
    return fn is not None and fn.is_constant and fn.value is P.switch


def pass_threaded_values(sp: Any, closure: Graph, call: Apply) -> None:
    """Have `call` (of ``vmap``/``jvp_of`` of `closure`) pass the values `closure` reads.

    Those it cannot read are passed to it, as parameters of the graphs on the way from where
    they are defined (see the module's docstring); where a graph on the way is not only called,
    they are left out, and `pass_free_variables` refuses the call. `sp` is the `Specializer`.
    """
    last = call.inputs[-1]
    if last.is_constant and last.value is closure:
        return  # the call is made where the closure is: it reads them (`pass_free_variables`)
    scopes = Scopes(closure)
    fvs = list(scopes.free_variables_total[closure])
    values = threaded_values(sp, fvs, call.graph, scopes)
    if values:
        PASSED[call] = {fv: v for fv, v in values.items() if v is not None}


def threaded_values(
    sp: Any, fvs: list[Node], g: Graph, scopes: Scopes | None = None
) -> dict[Node, Node | None]:
    """Nodes that graph `g` can read for the nodes `fvs` of other graphs (None: not found).

    `g` reads a node of a graph enclosing it as it is; another is passed to it along the
    calls that reach it. Empty where `g` can read them all. `scopes`, if given, indexes the
    graphs of `fvs` (one index serves every check).
    """
    scopes = scopes if scopes is not None else Scopes(g)
    if all(_in_scope(fv, g, scopes) for fv in fvs):
        return {}
    calls = _Calls(list(sp.graphs.values()))
    memo: dict[tuple[Graph, Node], Node] = sp.__dict__.setdefault("_threaded", {})

    def value_in(g: Graph, fv: Node) -> Node | None:
        if _in_scope(fv, g):
            return fv
        if (g, fv) in memo:
            return memo[(g, fv)]
        group = calls.group(g)
        sites = calls.sites(group)
        if not sites or any(h in calls.other for h in group):
            return None
        for h in group:
            p = Parameter(h, debug=fv.debug.derive())
            p.abstract = fv.abstract
            h.parameters = [*h.parameters, p]
            memo[(h, fv)] = p
        for site in sites:
            v = value_in(site.graph, fv)
            if v is None:
                return None
            site.inputs = [*site.inputs, v]
        return memo[(g, fv)]

    return {fv: value_in(g, fv) for fv in fvs}


def call_closures_directly(sp: Any, root: Graph) -> None:
    """Calls of closures that graphs reached from `root` read as variables, made direct.

    ``hessian(make_loss(X, y))`` differentiates a function that calls ``loss``, the value of
    a variable made outside it (by a call, or received as an argument): the transformation
    has no graph for such a value. Where the value is one closure, known at compile time, its
    call ``loss(w)`` becomes a call of its specialization lifted, ``loss:lifted(w, Xs, y)``,
    on the values it reads, read from the call that made it (`env_values`) or passed along
    the calls that brought it (`threaded_values`). The program computes what it computed.
    `sp` is the `Specializer`.
    """
    from ..abstract.data import AbstractFunction, GraphFunction
    from ..ir.analysis import reachable_graphs
    from ..ir.node import Constant
    from .closures import lifted_closure
    from .escaped import env_values, source_of

    lifted: dict[Graph, Graph] = {}
    for g in list(reachable_graphs(root)):
        for node in toposort(g):
            fn = node.inputs[0] if node.is_apply and node.inputs else None
            if fn is None or fn.is_constant or fn.graph is g or fn.graph is None:
                continue
            a = fn.abstract
            if not (isinstance(a, AbstractFunction) and len(a.options) == 1):
                continue
            (opt,) = a.options
            clo = _specialization(sp, opt, [i.abstract for i in node.inputs[1:]])
            if clo is None:
                continue
            fvs = list(Scopes(clo).free_variables_total.get(clo, ()))
            if not fvs or len(node.inputs) - 1 != len(clo.parameters):
                continue
            values: dict[Node, Node | None] = {fv: fv for fv in fvs}
            if not all(_in_scope(fv, g) for fv in fvs):
                made = fn if fn.is_apply else source_of(fn, list(sp.graphs.values()))
                callee = made.inputs[0] if made is not None and made.is_apply else None
                if callee is not None and all(fv.graph is callee.value for fv in fvs):
                    values = env_values(fvs, made, node, "differentiating") or values
                far = [v for v in values.values() if not _in_scope(v, g)]
                passed = threaded_values(sp, far, fn.graph)  # (a parameter, a loop's)
                values = {fv: passed.get(v, v) for fv, v in values.items()}  # type: ignore
            if any(v is None or not _in_scope(v, g) for v in values.values()):
                continue  # (refused where it is transformed)
            if clo not in lifted:
                lifted[clo] = lifted_closure(clo, fvs)
            target = lifted[clo]
            const = Constant(target)
            const.abstract = AbstractFunction(frozenset([GraphFunction(target, None)]))
            node.inputs = [const, *node.inputs[1:], *(values[fv] for fv in fvs)]


def _specialization(sp: Any, fn: Any, args: list[Any]) -> Graph | None:
    """The specialized graph of closure `fn` (a `GraphFunction`) called on types `args`."""
    from ..abstract.data import GraphFunction

    if not isinstance(fn, GraphFunction) or fn.context is None:
        return None
    found = [
        g
        for ctx, g in sp.graphs.items()
        if ctx.graph is fn.graph
        and ctx.parent == fn.context
        and [p.abstract for p in g.parameters] == args
    ]
    return found[0] if len(found) == 1 else None

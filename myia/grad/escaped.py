"""``grad`` of a closure that a call made and returned: ``grad(make_loss(X, y))(w)``.

The closure reads variables of the call that made it (``X``, ``y``, or values computed from
them), which the function calling ``grad`` cannot read: the gradient graph of the closure's
specialization would be nested in the maker's graph, and be called from outside it. Instead,
the closure is lifted (its free variables become parameters, `lifted_closure`), and the call
of its gradient passes them, read from a copy of the maker's specialization that returns them
(``env``), called on the maker's arguments where the maker was called:

    loss = make_loss(X, y)          loss = make_loss(X, y)
    grad(loss)(w)           =>      env = make_loss:env(X, y)      # (X, y): what loss reads
                                    ∇loss:lifted(w, env[0], env[1])

The copy computes what the maker computed again (the optimizer keeps only what the closure
reads, and inlines it). A maker that prints, raises on purpose or draws random numbers would
do so twice: such a closure is refused, as is one made deeper than the maker's own body.
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import AbstractFunction, AbstractTuple, GraphFunction
from ..errors import MyiaTypeError
from ..ir.analysis import Scopes, toposort
from ..ir.clone import Cloner
from ..ir.node import Apply, Constant, Graph, Node
from ..primitives import P
from .batching import reaches_effect
from .closures import PASSED, _in_scope, _typed, call_frames, lifted_closure

REFUSED = (
    "{what} of a closure made by another function's call ({maker}) {why}: define the "
    "function where {what} is called, or pass the values it reads as arguments"
)


def made_by_call(spec: Any, fn: GraphFunction, node: Apply, ctx: Any) -> Apply | None:
    """The specialized call that made closure `fn`, which ``grad(fn)`` (`node`) may call away.

    None where `fn` is made where the gradient is called or around it (it reads what it
    reads there), or where the call that made it is not known. `spec` is the `Specializer`.
    """
    from ..infer.fnvalues import _captures_nothing
    from ..infer.spec_grads import _encloses

    if _captures_nothing(fn) or _encloses(fn.context, ctx):
        return None
    fn_node = node.inputs[0]  # grad(f, ...)
    p = fn_node.inputs[1] if fn_node.is_apply and len(fn_node.inputs) >= 2 else None
    made = None
    if p is not None and not p.is_constant:
        c = ctx
        while c is not None and c.graph is not p.graph:
            c = c.parent
        made = spec.maps.get(c, {}).get(p) if c is not None else None
    if made is not None and made.is_parameter:
        made = source_of(made, list(spec.graphs.values()))
    maker = spec.graphs.get(fn.context)
    if made is None or not made.is_apply or maker is None:
        return None
    callee = made.inputs[0]
    return made if callee.is_constant and callee.value is maker else None


def source_of(param: Node, graphs: list[Graph]) -> Node | None:
    """The node every call of `param`'s graph passes for it, through loops, or None.

    A loop's graphs pass a variable the loop does not change to themselves as it is
    (``loss`` made before a ``for`` loop that calls ``grad(loss)``): the value is the one the
    first call passes. Calls are direct (``g(...)``) or through a ``switch`` of graphs.
    """
    seen: set[Node] = set()
    while param.is_parameter and param not in seen:
        seen.add(param)
        g = param.graph
        k = g.parameters.index(param)
        sources = {a for a in _passed(g, k, graphs) if a not in seen}
        if len(sources) != 1:
            return None
        (param,) = sources
    return None if param in seen else param


def _passed(g: Graph, k: int, graphs: list[Graph]) -> list[Node]:
    """The arguments the calls of graph `g` in `graphs` pass for its parameter `k`."""
    out = []
    for h in graphs:
        for node in toposort(h):
            if not node.is_apply or len(node.inputs) <= k + 1:
                continue
            f = node.inputs[0]
            if f.is_apply and f.inputs and f.inputs[0].is_constant:
                if f.inputs[0].value is P.switch:
                    targets = [t.value for t in f.inputs[2:] if t.is_constant]
                else:
                    targets = []
            else:
                targets = [f.value] if f.is_constant else []
            if g in targets:
                out.append(node.inputs[k + 1])
    return out


def lift_escaped(closure: Graph, made: Apply, call: Apply) -> Graph:
    """`closure` lifted; `call` (of its gradient) passes its free variables after its inputs.

    `made` is the specialized call of the maker whose result is the closure: the free
    variables are read from a copy of the maker returning them, called on its arguments.
    `closure` is returned as it is where `call` can read its free variables.
    """
    fvs = list(Scopes(closure).free_variables_total[closure])
    values = env_values(fvs, made, call, "grad")
    if values is None:
        return closure  # made where the call can read what it reads (in a loop of the maker)
    call.inputs = [*call.inputs, *(values[fv] for fv in fvs)]
    return lifted_closure(closure, fvs)


def env_values(fvs: list[Node], made: Apply, call: Apply, what: str) -> dict[Node, Node] | None:
    """Nodes that `call` can read, for the free variables `fvs` of a closure `made` made.

    None where `call` can read them all as they are. `what` names the transformation.
    """
    if all(_in_scope(fv, call.graph) for fv in fvs):
        return None
    maker = made.inputs[0].value
    name = maker.name.split(":")[0]
    why = None
    if any(fv.graph is not maker for fv in fvs):
        why = "inside a loop, a branch or another function of it"
    elif reaches_effect(maker):
        why = "that prints, raises or draws random numbers (it would run again)"
    if why is not None:
        message = REFUSED.format(what=what, maker=name, why=why)
        raise MyiaTypeError(message, call_frames(call, made))
    cloner = Cloner()
    env_graph = cloner.clone(maker, total=False)
    env_type = AbstractTuple(tuple(fv.abstract for fv in fvs))
    out = Apply([_typed(P.make_tuple), *(cloner[fv] for fv in fvs)], env_graph)
    out.abstract = env_type
    env_graph.output = out
    env_graph.abstract = env_type
    home = made.graph
    const = Constant(env_graph)
    const.abstract = AbstractFunction(frozenset([GraphFunction(env_graph)]))
    env = Apply([const, *made.inputs[1:]], home, made.debug.derive())
    env.abstract = env_type
    values = {}
    for i, fv in enumerate(fvs):
        v = Apply([_typed(P.tuple_getitem), env, _typed(i)], home, fv.debug.derive())
        v.abstract = fv.abstract
        values[fv] = v
    return values


def pass_made_values(closure: Graph, made: Apply, call: Apply, what: str) -> None:
    """Have `call` (of ``vmap``/``jvp_of`` of `closure`) pass values it can read.

    Where it cannot read what `closure` reads, `pass_free_variables` passes the values
    `env_values` reads instead.
    """
    fvs = list(Scopes(closure).free_variables_total[closure])
    values = env_values(fvs, made, call, what)
    if values is not None:
        PASSED[call] = values

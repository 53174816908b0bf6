"""A closure's specialization made a function of its own, for a transformation of it.

``vmap`` and ``jvp_of`` of a closure transform its specialization: its free variables become
parameters that the call passes (`pass_free_variables`, `lifted_closure`), and the call's
arguments are made to fit its parameters: ``*args`` as one tuple (`star_parameter`,
`fixed_arity`), defaults not passed as their constants (`with_defaults`).
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import (
    AbstractDict,
    AbstractFunction,
    AbstractTuple,
    AbstractValue,
    GraphFunction,
)
from ..errors import MyiaTypeError
from ..ir.analysis import Scopes, reachable_graphs
from ..ir.node import Apply, Constant, Graph, Node
from ..primitives import P, Primitive

#: The values a call passes for free variables of a closure it cannot read, by call
#: (`myia.grad.escaped`: a closure that another function's call made and returned).
PASSED: dict[Apply, dict[Node, Node]] = {}


def star_parameter(g: Graph, examples: list[AbstractValue], kwarg: bool) -> int | None:
    """The position of the tuple of ``*args`` among `g`'s parameters, called on `examples`.

    A specialized graph has no flag left for ``*args``: its last parameter (before the dict
    of ``**kwargs`` where its function takes them) is the tuple of the arguments left over,
    which the examples' types tell.
    """
    k = len(g.parameters) - 1 - kwarg
    if k < 0 or k > len(examples):
        return None
    if kwarg and g.parameters[k + 1].abstract != AbstractDict((), ()):
        return None
    star = g.parameters[k].abstract
    rest = tuple(examples[k:])
    if not isinstance(star, AbstractTuple) or star.elements != rest:
        return None
    if k < len(examples) and len(rest) == 1 and examples[k] == star:
        return None  # a tuple argument, passed as it is
    return k


def fixed_arity(g: Graph, k: int, m: int, kwarg: bool) -> Graph:
    """``(x1...xm, fv...) -> g(x1...xk, (xk+1...xm), fv...)``, typed.

    `g` is the specialization of a function taking ``*args`` (after `k` parameters), lifted:
    `build_vmap_graph` passes one parameter per argument. With `kwarg`, it takes
    ``**kwargs`` too: ``{}`` is passed after the tuple.
    """
    star = g.parameters[k]
    w = Graph(f"{g.name}:arity")
    w.debug = g.debug.derive()
    types = [p.abstract for p in g.parameters[:k]]
    types += list(star.abstract.elements)  # type: ignore[union-attr]
    types += [p.abstract for p in g.parameters[k + 1 + kwarg :]]
    ps = [w.add_parameter(debug=g.debug.derive()) for _ in types]
    for p, a in zip(ps, types):
        p.abstract = a
    t = Apply([_typed(P.make_tuple), *ps[k:m]], w)
    t.abstract = star.abstract
    kws = []
    if kwarg:
        kws = [Apply([_typed(P.make_dict), _typed(())], w)]
        kws[0].abstract = AbstractDict((), ())
    fn = Constant(g)
    fn.abstract = AbstractFunction(frozenset([GraphFunction(g, None)]))
    out = Apply([fn, *ps[:k], t, *kws, *ps[m:]], w)
    out.abstract = g.output.abstract
    w.output = out
    w.abstract = g.output.abstract
    return w


def with_defaults(g: Graph, m: int, fn: Any) -> Graph:
    """``(x1...xm, fv...) -> g(x1...xm, d..., fv...)``: `g` called on `m` arguments.

    `g` is the specialization of closure `fn`, lifted; the parameters of `fn` that the call
    did not pass get their defaults `d` (constants: one computed where `fn` is defined is
    read by `g` as a free variable, `myia.frontend.defaults`).
    """
    f = fn.graph
    n = len(f.parameters)
    if m >= n or f.flags.get("vararg") or f.flags.get("kwarg"):
        return g
    names = f.param_names
    defaults = [f.defaults.get(name) for name in names[m:n]]
    if not all(d is not None and d.is_constant for d in defaults):
        return g  # (the call is refused at inference)
    w = Graph(f"{g.name}:defaults")
    w.debug = g.debug.derive()
    inputs: list[Node] = []
    for i, p in enumerate(g.parameters):
        if m <= i < n:
            node: Node = Constant(defaults[i - m].value)  # type: ignore[union-attr]
        else:
            node = w.add_parameter(debug=p.debug.derive())
        node.abstract = p.abstract
        inputs.append(node)
    callee = Constant(g)
    callee.abstract = AbstractFunction(frozenset([GraphFunction(g, None)]))
    out = Apply([callee, *inputs], w)
    out.abstract = g.output.abstract
    w.output = out
    return w


def gradient_of_lifted(lifted: Graph, spec: Any) -> Graph:
    """The typed graph of ``grad(lifted)`` as `spec` (a `GradSpec`) asks, of the same types.

    `lifted` is a closure's specialization lifted (its free variables parameters after the
    closure's own): ``vmap(grad(clo))`` and ``jvp(grad(clo), ...)`` transform the gradient,
    whose free variables the call passes as for the closure itself. Positions and names
    differentiated are those of the closure's parameters, which come first.
    """
    from ..infer.engine import Inferrer
    from ..infer.specialize import Specializer
    from .api import build_grad_graph

    n = len(lifted.parameters)
    graph = build_grad_graph(lifted, spec, n)
    nested = Inferrer()
    gctx, _ = nested.infer(graph, tuple(p.abstract for p in lifted.parameters))
    out = Specializer(nested).run(gctx)
    out.flags["gradient"] = True
    return out


def _typed(value: Any) -> Constant:
    """A constant `value` (a primitive or a constant argument) with its abstract value."""
    from ..abstract.lattice import constant_abstract

    c = Constant(value)
    c.abstract = (
        AbstractFunction(frozenset([value]))
        if isinstance(value, Primitive)
        else constant_abstract(value)
    )
    return c


def pass_free_variables(call: Apply, closure: Graph, error: str) -> list[Node]:
    """The free variables of `closure`, which `call` (of its transformation) now passes.

    They replace the closure itself, which the call passed until then where it is made in the
    caller or around it (`Specializer.grad_call`).
    """
    scopes = Scopes(closure)  # indexes the graphs of its free variables too
    fvs = list(scopes.free_variables_total[closure])
    given = PASSED.pop(call, {})
    for fv in fvs:
        if fv not in given and not _in_scope(fv, call.graph, scopes):
            raise MyiaTypeError(error, call_frames(call, closure))
    last = call.inputs[-1]
    passed = call.inputs[:-1] if last.is_constant and last.value is closure else call.inputs
    call.inputs = [*passed, *(given.get(fv, fv) for fv in fvs)]
    return fvs


def call_frames(call: Apply, *fallbacks: Any) -> list[Any]:
    """A traceback of one frame: the user's line of `call` (or of the call it was inlined at).

    Where `call` is in Myia's library (``jacfwd`` calls ``jvp``), the line of the first of
    `fallbacks` (the function transformed, the value refused: nodes or graphs) in user code.
    """
    from ..errors import Frame
    from ..infer.traceback import is_internal

    name = call.graph.name if call.graph is not None else "?"
    where = [(name, call.debug.find_location()), *call.debug.call_chain(name)]
    for x in reversed(fallbacks):
        g = x if isinstance(x, Graph) else x.graph
        where.insert(0, (g.name if g is not None else "?", x.debug.find_location()))
    user = [(n, loc) for n, loc in where if loc is not None and not is_internal(loc.filename)]
    if not user:
        return []
    return [Frame(user[-1][0].split(":")[0].lstrip("▶◀∂"), user[-1][1])]


def _in_scope(fv: Node, g: Graph, scopes: Scopes | None = None) -> bool:
    """Whether node `fv` can be read in graph `g` (it is `g`'s or an enclosing graph's).

    `scopes`, if given, is a `Scopes` of the graphs (not changed since it was made) that
    serves the checks of several free variables: ``fv.graph`` and `g` are added to it.
    """
    if scopes is None:
        scopes = Scopes(fv.graph)
    else:
        scopes.add(fv.graph)
    h: Graph | None = g
    while h is not None and h is not fv.graph:
        scopes.add(h)  # a graph that `fv.graph` reaches only through a transformation's value
        h = scopes.parents.get(h)
    return h is fv.graph


def lifted_closure(closure: Graph, fvs: list[Node]) -> Graph:
    """A copy of `closure` (and its scope) taking its free variables `fvs` as parameters."""
    from ..ir.clone import Cloner
    from ..ir.node import Parameter

    cloner = Cloner()
    extra = []
    for fv in fvs:
        p = Parameter(closure, debug=fv.debug.derive())
        p.abstract = fv.abstract
        cloner.nodes[fv] = p
        extra.append(p)
    # The graphs it reaches that read them are copied too, though nested elsewhere: a branch
    # that reads only a variable of the enclosing function (``lambda x, y=w: x * y`` reads
    # ``w`` in the branch ``y is NOT_GIVEN``) is nested in that function, not in `closure`.
    scopes = Scopes(closure)
    wanted = set(fvs)
    total = scopes.free_variables_total
    readers = [g for g in reachable_graphs(closure) if wanted.intersection(total.get(g, ()))]
    cloner.add_graphs([h for g in [closure, *readers] for h in scopes.scope(g)])
    copy = cloner.graphs[closure]
    for p in extra:
        p.graph = copy
    copy.parameters = [*copy.parameters, *extra]
    return copy


def partial_spec(spec: Any, args: list[Any]) -> tuple[Any, list[Any]]:
    """``vmap(partial(f, *bound))`` called on `args`: ``vmap(f)`` on ``(*bound, *args)``.

    The arguments bound are not batched (their axes are None), as JAX's. `spec` is a
    `VmapSpec` of a `PartialFunction`; the types of the arguments bound come first.
    """
    from ..abstract.data import AbstractKeyword, PartialFunction
    from ..primitives.batching import VmapSpec

    pf = spec.fn
    if isinstance(pf.fn, PartialFunction) or any(isinstance(a, AbstractKeyword) for a in args):
        raise MyiaTypeError(
            "vmap of a partial application of a partial application, or called with keyword "
            "arguments, is not supported: bind the arguments in one partial application and "
            "pass the others by position"
        )
    k = len(pf.args)
    ax = spec.in_axes
    axes = tuple(ax) if isinstance(ax, (tuple, list)) else (ax,) * len(args)
    return VmapSpec(pf.fn, (None,) * k + axes, spec.out_axes), [*pf.args, *args]


def partial_callee(fn_node: Node) -> Node | None:
    """The partial application that ``vmap_(p)`` (`fn_node`, the callee of a call) maps."""
    from ..frontend import parse
    from ..transforms.vmapping import vmap_

    if not (fn_node.is_apply and len(fn_node.inputs) >= 2 and fn_node.inputs[0].is_constant):
        return None
    f = fn_node.inputs[0].value
    return fn_node.inputs[1] if f in (P.vmap_of, P.jvp_of) or f is parse(vmap_) else None


def unbound_partial(sp: Any, spec: Any, node: Apply, refs: list[Node], ctx: Any, values: Any):
    """``vmap(p)(args)`` at specialization, ``p`` a partial: ``vmap(f)(*bound, *args)``.

    The arguments bound are read from ``p`` where the call can see it made
    (``vmap(partial(grad(f), W))(x)``): ``partial_arg(p, i)``. Returns the new spec and the
    argument nodes.
    """
    from ..abstract.data import AbstractConstant

    p_node = partial_callee(node.inputs[0])
    if p_node is None:
        from ..infer.traceback import error_frames

        raise MyiaTypeError(
            "vmap of a partial application, called away from where vmap is applied (in a "
            "loop, a branch or another function), is not supported: call "
            "vmap(partial(f, ...)) where the call is, or vmap a lambda",
            error_frames([*sp.inf.calls, (ctx, node, values)]),
        )
    new_spec, arg_abs = partial_spec(spec, [r.abstract for r in refs])
    p = sp.ref(p_node, ctx, values)
    bound: list[Node] = []
    for i, a in enumerate(spec.fn.args):
        arg = Apply([sp._const(P.partial_arg, node, None), p, Constant(i)], sp.graphs[ctx])
        arg.inputs[2].abstract = AbstractConstant(i)
        arg.abstract = a
        bound.append(arg)
    return new_spec, [*bound, *refs], arg_abs


def bound_arguments(sp: Any, spec: Any, node: Apply, ctx: Any, values: Any) -> list[Node]:
    """``jvp_of(p)(x1, t1, ...)``, ``p`` a partial: nodes reading the arguments ``p`` binds.

    The call passes them after its own, as a closure's free variables (`jvp_call_graph`:
    their tangents are zeros), read from ``p`` wherever it was made (``partial_arg(p, i)``).
    """
    from ..abstract.data import AbstractConstant, GraphFunction, PartialFunction
    from ..infer.fnvalues import _captures_nothing

    pf = spec.fn
    p_node = partial_callee(node.inputs[0])
    inner = pf.fn
    if (
        p_node is None
        or not isinstance(inner, GraphFunction)
        or isinstance(inner, PartialFunction)
        or not _captures_nothing(inner)
    ):
        from ..infer.traceback import error_frames

        raise MyiaTypeError(
            "jvp of a partial application of a closure, of a partial application, or of a "
            "partial application chosen at run time is not supported: bind the arguments in "
            "one partial application of a function defined at the top level",
            error_frames([*sp.inf.calls, (ctx, node, values)]),
        )
    p = sp.ref(p_node, ctx, values)
    bound: list[Node] = []
    for i, a in enumerate(pf.args):
        arg = Apply([sp._const(P.partial_arg, node, None), p, Constant(i)], sp.graphs[ctx])
        arg.inputs[2].abstract = AbstractConstant(i)
        arg.abstract = a
        bound.append(arg)
    return bound


def partial_primal(spec: Any, primals: list[AbstractValue]) -> Graph:
    """The specialized graph ``(x..., b...) -> f(b..., x...)``: ``spec.fn`` is ``partial(f, b)``.

    The arguments bound come last, as a closure's free variables do, lifted.
    """
    from ..infer.engine import Inferrer
    from ..infer.specialize import Specializer

    pf = spec.fn
    g = Graph(spec.name)
    xs = [g.add_parameter(f"x{i}") for i in range(len(primals))]
    bs = [g.add_parameter(f"b{i}") for i in range(len(pf.args))]
    g.output = g.apply(Constant(pf.fn.graph), *bs, *xs)
    nested = Inferrer()
    gctx, _ = nested.infer(g, (*primals, *pf.args))
    return Specializer(nested).run(gctx)


def vmap_call_args(sp: Any, spec: Any, node: Apply, args: tuple, ctx: Any, values: Any) -> tuple:
    """``vmap(f)(args)`` at specialization: `spec` and the arguments, as inference has them.

    Keywords are bound to the parameters of the function mapped (or of the one it is a
    gradient of), as by `infer_vmap_call`; a partial application's arguments are passed
    first (`unbound_partial`). `sp` is the `Specializer`; `args` the argument nodes, their
    references and types.
    """
    from ..abstract.data import PartialFunction
    from ..infer.binding import _is_kwarg, bind_graph_nodes
    from .batch_types import keyword_spec
    from .batching import keyword_target

    arg_nodes, refs, arg_abs = args
    target = keyword_target(spec.fn)
    keys = tuple(o.inputs[1].value for o in arg_nodes if _is_kwarg(o))
    if target is not None and keys:
        g = target.graph
        spec = keyword_spec(spec, g, len(arg_nodes) - len(keys), keys)
        refs = bind_graph_nodes(g, refs, arg_nodes, sp.graphs[ctx])
        arg_abs = [r.abstract for r in refs]
    if isinstance(spec.fn, PartialFunction):
        spec, refs, arg_abs = unbound_partial(sp, spec, node, refs, ctx, values)
    return spec, refs, arg_abs

"""`grad` and `value_and_grad`, at the top level and inside Myia code.

``grad(f, *wrt)`` is a function value (`GradSpec` at inference). Calling it on arguments:

- at inference, infers ``f`` on them, checks that it returns a scalar, and gives the types of
  the gradients (those of the arguments differentiated);
- at specialization, builds the gradient graph: the forward graph of ``f``'s specialization
  (`myia.grad.jtransform.fprop`) is called, its backpropagator is called on a sensitivity of
  one, and the sensitivities of the arguments asked for are returned. That graph is inferred
  and specialized in turn, so the gradient is an ordinary typed graph, which can itself be
  differentiated (``grad(grad(f))``).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from ..abstract.data import (
    BOTTOM,
    AbstractArray,
    AbstractConstant,
    AbstractFunction,
    AbstractKeyword,
    AbstractOpaque,
    AbstractScalar,
    AbstractTuple,
    AbstractValue,
    GraphFunction,
    PartialFunction,
    show,
)
from ..errors import Frame, MyiaTypeError
from ..ir.analysis import Scopes, captures
from ..ir.node import Constant, Graph
from ..primitives import P
from ..primitives.grad import GradSpec, grad_of, sens_type


def _flat(wrt: tuple[Any, ...]) -> list[Any]:
    return [x for w in wrt for x in (w if isinstance(w, (tuple, list)) else (w,))]


def returns_tuple(spec: GradSpec) -> bool:
    """Whether ``grad(f, *wrt)`` gives a tuple: several parameters, or one tuple of them.

    ``grad(f, 1)`` gives one gradient, ``grad(f, 0, 1)`` and ``grad(f, (0, 1))`` (JAX's
    ``argnums=(0, 1)``) a tuple, ``grad(f, (1,))`` a tuple of one.
    """
    wrt = spec.wrt
    return len(wrt) > 1 or (len(wrt) == 1 and isinstance(wrt[0], (tuple, list)))


def positions(spec: GradSpec, nargs: int) -> list[int]:
    """The positions of the arguments `spec` differentiates."""
    fn = spec.fn
    names = fn.graph.param_names if isinstance(fn, GraphFunction) else []
    out = []
    for w in _flat(spec.wrt) if spec.wrt else (0,):
        if isinstance(w, str):
            if w not in names:
                raise MyiaTypeError(f"grad: {w!r} is not a parameter of the function")
            if names.index(w) >= nargs:
                raise MyiaTypeError(
                    f"grad with respect to {w!r}, which the call does not pass (its default "
                    "value is a constant): pass it to differentiate with respect to it"
                )
            out.append(names.index(w))
        elif isinstance(w, int) and not isinstance(w, bool) and -nargs <= w < nargs:
            out.append(w % nargs)
        elif isinstance(w, int) and not isinstance(w, bool):
            raise MyiaTypeError(f"grad: no argument at position {w} (the function takes {nargs})")
        else:
            raise MyiaTypeError(
                f"grad: the parameters differentiated are positions or names, not {w!r}"
            )
    return out


def arg_params(spec: GradSpec, nparams: int) -> list[tuple[int, int | None]]:
    """The parameters of the arguments `spec` differentiates, with elements of ``*args``.

    ``(i, None)`` for parameter ``i``, ``(k, j)`` for the ``j``-th argument that ``*args``
    (parameter ``k``) receives. As JAX's ``argnums``, a position is that of an argument of
    the call: past the parameters before ``*args``, one of the arguments it receives (at the
    top level, a gradient's entry passes one argument per parameter: positions are
    parameters there, and `myia.api.GradFunction` differentiates such positions in Myia
    code).
    """
    fn = spec.fn
    g = fn.graph if isinstance(fn, GraphFunction) else None
    if g is None or not g.flags.get("vararg"):
        return [(i, None) for i in positions(spec, nparams)]
    k = len(g.parameters) - g.kwonly - 1 - (1 if g.flags.get("kwarg") else 0)
    out: list[tuple[int, int | None]] = []
    for w in _flat(spec.wrt) if spec.wrt else (0,):
        if isinstance(w, str):
            out.append((positions(dataclasses.replace(spec, wrt=(w,)), nparams)[0], None))
        else:
            out.append((w, None) if w < k else (k, w - k))
    return out


def at_call(spec: GradSpec, npos: int) -> GradSpec:
    """`spec` for a call passing `npos` positional arguments: negative positions counted back.

    As JAX's ``argnums=-1``, a negative position counts from the last argument the call
    passes by position, not from the last parameter (one with a default the call does not
    pass, or one passed by keyword, is not counted).
    """

    def resolved(w: Any) -> Any:
        if isinstance(w, (tuple, list)):
            return tuple(map(resolved, w))
        if isinstance(w, int) and not isinstance(w, bool) and -npos <= w < 0:
            return w + npos
        return w

    wrt = tuple(map(resolved, spec.wrt))
    return spec if wrt == spec.wrt else dataclasses.replace(spec, wrt=wrt)


def is_float_scalar(a: AbstractValue) -> bool:
    """Whether `a` is a float scalar: a Python or NumPy float, or a 0-d array (as in JAX)."""
    return isinstance(a, (AbstractScalar, AbstractArray)) and (
        a.dtype.startswith("float") and (isinstance(a, AbstractScalar) or a.shape == ())
    )


def grad_type(a: AbstractValue) -> AbstractValue:
    """The type of the gradient of an argument of type `a`: its sensitivity's.

    A 0-d array's is the NumPy scalar of its dtype (results are never 0-d arrays).
    """
    return sens_type(a)


def infer_grad_call(inferrer: Any, spec: GradSpec, args: list[AbstractValue]) -> AbstractValue:
    """The type of ``grad(f)(args)``: the types of the arguments differentiated."""
    spec = at_call(spec, sum(not isinstance(a, AbstractKeyword) for a in args))
    result = inferrer.call(spec.fn, args)
    loss = result
    if spec.aux:
        if not (isinstance(result, AbstractTuple) and len(result.elements) == 2):
            raise MyiaTypeError(
                "with has_aux=True, the function differentiated must return a pair "
                f"(loss, aux), not {show(result)}",
                _not_scalar_frames(inferrer, spec, result),
            )
        loss = result.elements[0]
    if not is_float_scalar(loss):
        inferrer.check_bound([loss])  # it returns a variable that no path assigned
        what = "its loss (has_aux=True) must be" if spec.aux else "must return"
        if loss is BOTTOM:
            # (Python would raise the error of the path it takes: it has no gradient.)
            raise MyiaTypeError(
                "the function differentiated never returns: every path raises an error "
                "(or never ends), so it has no gradient",
                _not_scalar_frames(inferrer, spec, result),
            )
        raise MyiaTypeError(
            f"the function differentiated {what} a float scalar, not {show(loss)}",
            _not_scalar_frames(inferrer, spec, result),
        )
    fn = spec.fn
    if isinstance(fn, GraphFunction) and (fn.graph.flags.get("vararg") or fn.graph.kwonly):
        g = fn.graph
        npos = len(g.parameters) - g.kwonly - 1 - (1 if g.flags.get("kwarg") else 0)
        npos += 0 if g.flags.get("vararg") else 1
        if g.flags.get("vararg"):  # positions past it are arguments that ``*args`` receives
            npos = sum(not isinstance(a, AbstractKeyword) for a in args)
        if any(isinstance(i, int) and not 0 <= i < npos for i in _flat(spec.wrt)):
            from ..infer.traceback import error_frames

            raise MyiaTypeError(
                f"grad of {g.name}, which takes *args or keyword-only parameters: the "
                f"arguments differentiated are among its first {npos} (or name its parameters)",
                error_frames(inferrer.calls),
            )
    for a in args:
        if _has_closure(a):
            from ..infer.traceback import error_frames

            raise MyiaTypeError(
                "differentiating a function that receives a closure, a partial application or "
                f"a function chosen at run time as an argument ({show(a)}) is not supported "
                "yet: pass a function defined at the top level, and the values it closes over "
                "as arguments",
                error_frames(inferrer.calls),
            )
    grads = [grad_type(args[i]) for i in positions(spec, len(args))]
    for i in positions(spec, len(args)):
        if isinstance(args[i], AbstractFunction):
            from ..infer.traceback import error_frames

            raise MyiaTypeError(
                f"grad with respect to argument {i}, a function ({show(args[i])}): a function "
                "has no gradient; differentiate with respect to the values it uses instead",
                error_frames(inferrer.calls),
            )
        if isinstance(getattr(args[i], "value", None), str):
            from ..infer.traceback import error_frames

            raise MyiaTypeError(
                f"grad with respect to argument {i}, a string ({show(args[i])}): a string has "
                "no gradient; differentiate with respect to float scalars or arrays",
                error_frames(inferrer.calls),
            )
    g: AbstractValue = AbstractTuple(tuple(grads)) if returns_tuple(spec) else grads[0]
    if spec.aux and not spec.value:
        return AbstractTuple((g, result.elements[1]))  # JAX's (grads, aux)
    return AbstractTuple((result, g)) if spec.value else g


def _has_closure(a: Any) -> bool:
    """Whether a value of type `a` holds a closure (a function made inside another)."""
    from ..abstract.data import AbstractFunction

    if isinstance(a, AbstractFunction):
        # A partial application, or one of several graphs chosen at run time, passed as it
        # is, would be called as its forward function (it was an error in ``use``'s body,
        # "tuple indexing expects a tuple"); one graph that captures nothing is a constant.
        graphs = [f for f in a.options if isinstance(f, (GraphFunction, PartialFunction))]
        return any(
            isinstance(f, PartialFunction) or captures(f.graph) or len(a.options) > 1
            for f in graphs
        )
    return any(_has_closure(e) for e in getattr(a, "elements", ()))


def _not_scalar_frames(inferrer: Any, spec: GradSpec, result: AbstractValue) -> list[Frame]:
    """The traceback of `grad` of a function that does not return a float scalar.

    The calls down to the gradient's (in Myia code), then the function differentiated,
    where it returns.
    """
    from ..infer.traceback import error_frames, is_internal

    frames = error_frames(inferrer.calls)
    fn = spec.fn
    if isinstance(fn, GraphFunction) and result is BOTTOM:
        ctxs = list(inferrer.fn_contexts.get(fn, ()))
        node = _raising_node(inferrer, ctxs[-1], set()) if ctxs else None
        loc = node.debug.find_location() if node is not None else None
        if loc is not None and not is_internal(loc.filename):
            frames.append(Frame(fn.graph.name, loc, f"never returns from here ({show(result)})"))
            return frames
    if isinstance(fn, GraphFunction):
        g = fn.graph
        out = _strip_seq(g.output)
        loc = out.debug.find_location() if out is not None else None
        if loc is None or is_internal(loc.filename):
            loc = g.debug.find_location()
        if loc is not None and not is_internal(loc.filename):
            frames.append(Frame(g.name, loc, f"returns {show(result)}"))
    return frames


def _raising_node(inferrer: Any, ctx: Any, seen: set[Any]) -> Any:
    """The first node of `ctx` that never returns though its inputs do (``a, b = (x, x, x)``).

    A call of a block of the same function (a branch, a loop) that never returns is looked
    into: the node that never returns there.
    """
    seen.add(ctx)
    values = inferrer.node_values.get(ctx, {})
    for node in inferrer.scopes.toposort(ctx.graph):
        if not node.is_apply or values.get(node) is not BOTTOM:
            continue
        if any(values.get(i) is BOTTOM for i in node.inputs[1:]):
            continue
        base = ctx.graph.name.split(":")[0]
        for _, callee, _ in inferrer.made.get(ctx, ()):
            if callee in seen or callee.graph.name.split(":")[0] != base:
                continue
            if inferrer.results.get(callee) is BOTTOM:
                inner = _raising_node(inferrer, callee, seen)
                if inner is not None:
                    return inner
        return node
    return None


def _handed_back(g: Graph, d: Any, p: Any, a: AbstractValue, leaves: tuple[type, ...]) -> Any:
    """The gradient `d` of parameter `p` of type `a`, as the user receives it."""
    if isinstance(a, leaves):
        return d
    return g.apply(P.gmaterialize, d)


def _strip_seq(node: Any) -> Any:
    """`node`, or the value of the ``seq`` chain it is (the statements before a return)."""
    while node is not None and node.is_apply and node.inputs[0].is_constant:
        if node.inputs[0].value is not P.seq:
            break
        node = node.inputs[2]
    return node


def build_grad_graph(primal: Graph, spec: GradSpec, nargs: int) -> Graph:
    """The graph computing ``grad(primal)`` (untyped: it is inferred afterwards)."""
    from .activity import analyze, using
    from .jtransform import fprop

    picks = arg_params(spec, nargs)
    pos = list(dict.fromkeys(i for i, _ in picks))
    for i in pos:
        a = primal.parameters[i].abstract
        if isinstance(a, AbstractOpaque):
            raise MyiaTypeError(
                f"cannot differentiate with respect to {primal.parameters[i].debug.find_name()}"
                f", a {show(a)}: name the inputs to differentiate (grad(f, 'mu'))"
            )
    primal = simplified(primal)
    g = Graph(f"∇{primal.name}", primal.debug.find_location())
    g.debug.origin = primal.debug
    params = [g.add_parameter(p.debug.find_name()) for p in primal.parameters]
    # Only what depends on the inputs differentiated gets a sensitivity.
    active = [primal.parameters[i] for i in pos]
    with using(analyze(primal, active, key=(primal, tuple(pos)))):
        forward = fprop(primal)
    res = g.apply(forward, *params)
    out = g.apply(P.tuple_getitem, res, 0)
    bprop = g.apply(P.tuple_getitem, res, 1)
    if spec.aux:
        # ``(loss, aux)``: a sensitivity of one for the loss, none for aux.
        loss, aux = g.apply(P.tuple_getitem, out, 0), g.apply(P.tuple_getitem, out, 1)
        one = g.apply(P.broadcast_like, 1.0, loss)
        sens = g.apply(bprop, g.apply(P.make_tuple, one, g.apply(P.gzeros, aux)))
    else:
        sens = g.apply(bprop, g.apply(P.broadcast_like, 1.0, out))
    # Sensitivities of data structures may be lazy (`myia.primitives.lazy_sens`): the user
    # receives them built.
    # Numbers need nothing; an array may be a zero shared between calls (copied then).
    leaves = (AbstractScalar, AbstractConstant)
    handed = {
        i: _handed_back(
            g,
            g.apply(P.tuple_getitem, sens, i + 1),
            params[i],
            primal.parameters[i].abstract,
            leaves,
        )
        for i in pos
    }
    grads = [handed[i] if j is None else g.apply(P.tuple_getitem, handed[i], j) for i, j in picks]
    result = g.apply(P.make_tuple, *grads) if returns_tuple(spec) else grads[0]
    if spec.aux and not spec.value:
        g.output = g.apply(P.make_tuple, result, aux)
    elif spec.value:
        g.output = g.apply(P.make_tuple, out, result)
    else:
        # The forward pass raises what the function raises (`math.log(-1.0)`), even where
        # the gradient does not use its value: the optimizer drops what cannot raise.
        g.output = g.apply(P.seq, out, result)
    return g


def simplified(primal: Graph) -> Graph:
    """`primal` simplified, if it computes a gradient (which is differentiated again).

    A gradient graph as specialization leaves it is full of plumbing: closures, environments,
    tuples of sensitivities, zeros. Differentiated as it is, each order would differentiate
    all of it, and the graph would grow about tenfold per order. So a copy of it is optimized
    first (`SIMPLIFY`), and the copy is differentiated: each order then costs a few times the
    previous one. A loop's gradient whose stacks still hold closures once simplified is
    differentiated as it was: differentiated, the type of such a stack would grow at every
    iteration.
    """
    from ..ir.analysis import reachable_graphs

    if not SIMPLIFY or Scopes(primal).free_variables_total[primal]:
        return primal
    if not any(h.flags.get("gradient") for h in reachable_graphs(primal)):
        return primal
    out = SIMPLIFY["gradient"](primal)
    return primal if _stacks_functions(out) else out


#: Simplified copies of a program, by use: "gradient", a gradient to be differentiated again
#: (`simplified`); "vmap", a program to be batched (`myia.grad.batching`). The optimizer, a
#: later stage, registers them when it is imported (`myia.opt.passes.simplify_gradient`,
#: `myia.opt.passes.simplify_for_vmap`).
SIMPLIFY: dict[str, Callable[[Graph], Graph]] = {}


def _stacks_functions(root: Graph) -> bool:
    """Whether the program of `root` pushes a function on a stack."""
    from ..abstract.data import AbstractFunction
    from ..ir.analysis import reachable_graphs, toposort

    def function(a: Any) -> bool:
        if isinstance(a, AbstractFunction):
            return True
        return any(function(e) for e in getattr(a, "elements", ()))

    return any(
        n.is_apply
        and n.inputs[0].is_constant
        and n.inputs[0].value is P.stack_push
        and function(n.inputs[2].abstract)
        for g in reachable_graphs(root)
        for n in toposort(g)
    )


def target_graph(fn: Any) -> Graph:
    """The graph of the function a gradient is taken of (a Python or Myia function)."""
    from ..frontend import parse
    from ..frontend.parser import bound_graph

    g = fn.graph() if hasattr(fn, "graph") and callable(fn.graph) else parse(fn)
    # The gradient's entry passes one argument per parameter (`*args` as a tuple...).
    return bound_graph(getattr(fn, "fn", fn), g)


def entry_graph(fn: Any, wrt: tuple[Any, ...], value: bool, aux: bool = False) -> Graph:
    """A graph ``(params...) -> grad(fn, *wrt)(params...)`` with `fn`'s parameters.

    `fn` is a function or its graph (`target_graph`).
    """
    inner = fn if isinstance(fn, Graph) else target_graph(fn)
    g = Graph(f"{'value_and_grad' if value else 'grad'}({inner.name})")
    params = [g.add_parameter(name) for name in inner.param_names]
    g.defaults = dict(inner.defaults)
    gf = g.apply(grad_of, Constant(inner), Constant(tuple(wrt)), Constant(value), Constant(aux))
    g.output = g.apply(gf, *params)
    return g


def python_signature(fn: Any) -> inspect.Signature:
    """The signature of the function a gradient is taken of."""
    target = getattr(fn, "fn", fn)
    return inspect.signature(target)


# Forward mode ---------------------------------------------------------------------------------


def infer_jvp_call(inferrer: Any, spec: Any, args: list[AbstractValue]) -> AbstractValue:
    """The type of ``jvp_of(f)(x1, t1, ..., xn, tn)``: ``(f's result, its tangent's type)``."""
    from ..abstract.lattice import TypeMismatch, join
    from .batching import closure_inside

    if len(args) % 2:
        raise MyiaTypeError("a tangent function takes a tangent after each argument")
    primals, tangents = args[0::2], args[1::2]
    if (
        _callee(Graph(), spec.fn) is None
        and closure_inside(spec.fn) is None
        and not isinstance(spec.fn, PartialFunction)
    ):
        raise MyiaTypeError(
            "jvp of a function that reads variables of an enclosing function, called away "
            "from it, is not supported yet: pass those values as arguments"
        )
    for a in primals:
        if _has_closure(a):
            from ..infer.traceback import error_frames

            raise MyiaTypeError(
                "jvp of a function that receives a closure, a partial application or a "
                f"function chosen at run time as an argument ({show(a)}) is not supported yet: "
                "pass the values it closes over as arguments",
                error_frames(inferrer.calls),
            )
    for i, (p, t) in enumerate(zip(primals, tangents)):
        want = sens_type(p)
        try:
            ok = join(want, sens_type(t)) is not None
        except TypeMismatch:
            ok = False
        if ok and isinstance(p, AbstractArray) and isinstance(t, AbstractArray):
            ok = p.shape == t.shape or None in p.shape + t.shape
        if not ok:
            raise MyiaTypeError(
                f"jvp: the tangent of argument {i} is {show(t)}, it must be like the "
                f"argument: {show(want)}"
            )
    result = inferrer.call(spec.fn, primals)
    return AbstractTuple((result, sens_type(result)))


def jvp_call_graph(
    spec: Any, args: list[AbstractValue], closure: Graph | None, call: Any
) -> tuple[Graph, list[AbstractValue]]:
    """The graph of the call `call` of ``jvp_of(f)`` on `args`, and its argument types.

    A closure's specialization `closure` is lifted: its free variables become parameters of
    zero tangent, which `call` passes after the arguments (``jvp(lambda y: x * y, ...)``
    differentiates with respect to ``y`` only: the tangent of ``x`` belongs to the caller's
    derivative, if any, which differentiates this call in turn).
    """
    from .closures import (
        call_frames,
        fixed_arity,
        lifted_closure,
        pass_free_variables,
        star_parameter,
        with_defaults,
    )

    if isinstance(spec.fn, PartialFunction):  # the arguments bound, passed last
        from .closures import partial_primal

        primal = partial_primal(spec, list(args[0::2]))
        return build_jvp_graph(primal, len(args) // 2), [*args, *spec.fn.args]
    if closure is None:
        return build_jvp_graph(_jvp_primal(spec, args[0::2]), len(args) // 2), args
    fvs = pass_free_variables(
        call,
        closure,
        "jvp of a closure called away from where it is defined: pass the values it reads as "
        "arguments",
    )
    from .jtransform import _closed_graph, _holds_closure, _is_function, free_function_message

    for fv in fvs:
        a = fv.abstract
        if (_is_function(a) and _closed_graph(a) is None) or _holds_closure(a):
            # (Passed as it is, a function value would be called as its tangent function.)
            raise MyiaTypeError(
                free_function_message("jvp of", fv), call_frames(call, fv, closure)
            )
    from .batching import closure_inside, is_closure
    from .closures import gradient_of_lifted

    n = len(args) // 2
    lifted = lifted_closure(closure, fvs)
    kwarg = bool(getattr(spec.fn, "graph", closure).flags.get("kwarg"))
    k = star_parameter(closure, list(args[0::2]), kwarg)
    if k is not None:
        # A closure taking ``*args``: its specialization takes them as one tuple, which the
        # free variables follow ("tuple indexing expects a tuple" on the tuple's first
        # element, before), as `myia.grad.batching.vmap_graph`'s.
        lifted = fixed_arity(lifted, k, n, kwarg)
    else:
        lifted = with_defaults(lifted, n, closure_inside(spec.fn))
    args = [*args, *(fv.abstract for fv in fvs)]
    if not is_closure(spec.fn):  # ``jvp(grad(clo), ...)``: the gradient of the closure
        lifted = gradient_of_lifted(lifted, spec.fn)
    return build_jvp_graph(lifted, n), args


def _callee(g: Graph, fn: Any) -> Any:
    """A node of `g` for function value `fn` that captures nothing (None for a closure)."""
    from ..operations.core import Operation
    from ..primitives import Primitive
    from .batching import _fn_value

    if isinstance(fn, (Primitive, Operation)):
        return Constant(fn)  # ``jvp(np.sin, ...)``
    return _fn_value(g, fn)


def _jvp_primal(spec: Any, primals: list[AbstractValue]) -> Graph:
    """The specialized graph ``(x...) -> f(x...)`` of ``spec.fn`` (a new specialization)."""
    from ..infer.engine import Inferrer
    from ..infer.specialize import Specializer

    g = Graph(spec.name)
    params = [g.add_parameter(f"x{i}") for i in range(len(primals))]
    g.output = g.apply(_callee(g, spec.fn), *params)
    nested = Inferrer()
    gctx, _ = nested.infer(g, tuple(primals))
    return Specializer(nested).run(gctx)


def build_jvp_graph(primal: Graph, n: int) -> Graph:
    """The graph ``(x1, t1, ..., xn, tn, *extra) -> (primal(x..., *extra), tangent)``.

    The tangent is that of `primal` (`myia.grad.forward.tangent_graph`) along ``t1...tn``;
    the parameters of `primal` after the first `n` (a closure's free variables, lifted) come
    last and have zero tangents.
    """
    from .forward import tangent_graph

    primal = simplified(primal)
    g = Graph(f"jvp({primal.name})", primal.debug.find_location())
    g.debug.origin = primal.debug
    params = [g.add_parameter(p.debug.find_name()) for p in primal.parameters[:n] for _ in "xt"]
    for i, p in enumerate(primal.parameters[:n]):
        a = p.abstract
        if isinstance(a, AbstractScalar) and a.dtype.startswith("float"):
            # The tangent of a float scalar is of its kind (a Python float's is a Python
            # float): the tangent graph of a recursive function (``jvp(grad(f))``) passes
            # the two on together, and one function takes one type.
            params[2 * i + 1] = g.apply(P.convert, params[2 * i + 1], Constant(sens_type(a)))
    fvs = [g.add_parameter(p.debug.find_name()) for p in primal.parameters[n:]]
    zeros = [g.apply(P.gmaterialize, g.apply(P.gzeros, fv)) for fv in fvs]
    ins = [*params, *(x for pair in zip(fvs, zeros) for x in pair)]
    res = g.apply(tangent_graph(primal), *ins)
    out, tan = g.apply(P.tuple_getitem, res, 0), g.apply(P.tuple_getitem, res, 1)
    typ = sens_type(primal.output.abstract)
    # The user receives built structures, in the type `infer_jvp_call` gave.
    tan = g.apply(P.convert, g.apply(P.gmaterialize, tan), Constant(typ))
    g.output = g.apply(P.make_tuple, out, tan)
    return g

"""Specialization of the calls of gradients and other transformations (`GradientCalls`).

``grad(f)(args)``, ``vmap(f)(args)``, ``jvp_of(f)(args)`` in Myia code: the call is specialized
to call a placeholder graph, and the transformed graph is built once every graph of the primal
is (`build_gradient`), then inferred and specialized on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..abstract.data import AbstractFunction, AbstractValue, GraphFunction, PartialFunction
from ..abstract.lattice import broaden
from ..errors import MyiaTypeError
from ..ir.analysis import toposort
from ..ir.node import Apply, Constant, Graph, Node
from ..primitives import P
from ..primitives.batching import JvpSpec, TransformSpec, VmapSpec
from ..primitives.grad import GradSpec
from .binding import _is_kwarg, bind_graph_nodes
from .engine import Context, Inferrer


class GradientCalls:
    """The `Specializer`'s handling of transformation calls (a base class of it)."""

    # Set by `Specializer.__init__`.
    inf: Inferrer
    graphs: dict[Context, Graph]
    pending: dict[Graph, tuple[Constant, GradSpec, Graph]]
    escapes: dict[Graph, tuple[Apply, Apply]]

    def grad_call(
        self,
        spec: GradSpec,
        node: Apply,
        arg_nodes: list[Node],
        arg_abs: list[AbstractValue],
        ctx: Context,
        values: dict[Node, AbstractValue],
    ) -> Apply:
        """``grad(f)(args)``: a call to the specialized gradient graph of ``f``.

        The gradient graph is built once every graph is (`build_gradient`); until then, the
        call calls a placeholder.
        """
        if isinstance(spec, GradSpec):
            from ..grad.api import at_call

            spec = at_call(spec, sum(not _is_kwarg(o) for o in arg_nodes))
        fn = spec.fn
        made = None
        refs = [self.ref(i, ctx, values) for i in arg_nodes]
        if isinstance(spec, VmapSpec):  # keywords bound, a partial's arguments passed
            from ..grad.closures import vmap_call_args

            args = (arg_nodes, refs, arg_abs)
            spec, refs, arg_abs = vmap_call_args(self, spec, node, args, ctx, values)
            fn = spec.fn
        if isinstance(spec, TransformSpec):
            # ``vmap(f)(args)``, ``jvp_of(f)(args)``: the graph transformed from ``f``'s on the
            # types it is called on, built last; a closure's specialization on them, whose
            # free variables the call passes.
            from ..grad.batching import closure_inside

            closure = None
            inputs = refs
            clo = closure_inside(fn)
            if isinstance(spec, JvpSpec) and isinstance(fn, PartialFunction):
                from ..grad.closures import bound_arguments

                inputs = [*refs, *bound_arguments(self, spec, node, ctx, values)]
            elif clo is not None:  # a closure, or the closure ``fn`` is the gradient of
                target = self.target(clo, spec.examples(arg_abs), node, ctx, values)
                closure = self.graph_for(target)
                if _encloses(clo.context, ctx):
                    # The call reads the closure until it is built (`pass_free_variables`),
                    # so that the graph making the call has the closure's free variables as
                    # its own: it is nested where the closure is defined (``grad(lambda a:
                    # vmap(lambda r: m @ r)(a))``: the lambda differentiated reads ``m``).
                    marker = Constant(closure)
                    marker.abstract = AbstractFunction(frozenset([GraphFunction(closure)]))
                    inputs = [*refs, marker]
                else:
                    from ..grad.escaped import made_by_call

                    made = made_by_call(self, clo, node, ctx)
            primal = [arg_abs, closure, None]
        elif isinstance(fn, GradSpec) and _grad_of_top_level(fn):
            # grad of a gradient (``grad(grad(f))`` in Myia code): the inner gradient's graph.
            primal = _specialized_grad_value(type(self), fn, arg_abs)
            inputs = refs
        elif isinstance(fn, GraphFunction):
            target = self.target(fn, arg_abs, node, ctx, values)
            primal = self.graph_for(target)
            inputs = bind_graph_nodes(fn.graph, refs, arg_nodes, self.graphs[ctx])
            from ..grad.escaped import made_by_call

            made = made_by_call(self, fn, node, ctx)
        else:
            raise MyiaTypeError(f"grad of {fn!r} is not supported: wrap it in a function")
        placeholder = Graph(spec.name)
        const = self._const(placeholder, node, None)
        self.pending[placeholder] = (const, spec, primal)
        app = Apply([const, *inputs], self.graphs[ctx], node.debug.derive())
        if isinstance(spec, TransformSpec):
            primal[2] = app
        app.abstract = values[node]
        if made is not None:
            self.escapes[placeholder] = (made, app)
        return app

    def build_gradient(self, placeholder: Graph) -> None:
        """Build the gradient standing for `placeholder`, after those its primal calls.

        A gradient differentiates its primal's specialized graphs, which must all be built:
        the primal may call a function that is still being built when the gradient is met
        (``jvp(f)`` where ``f`` takes a gradient itself), so gradients are built last,
        those a primal reaches first.
        """
        from ..grad.api import build_grad_graph
        from ..ir.analysis import reachable_graphs

        const, spec, primal = self.pending.pop(placeholder)
        # What the gradient transforms: its primal graph, or the closure that a transformation
        # (``vmap``, ``jvp_of``) of a closure batches (``jacrev(jacfwd(f))``: the closure
        # calls the placeholder of its own ``jvp_of``).
        root = primal[1] if isinstance(spec, TransformSpec) else primal
        for g in reachable_graphs(root) if isinstance(root, Graph) else ():
            for node in toposort(g):
                for i in node.inputs if node.is_apply else ():
                    v = i.value if i.is_constant else None
                    if type(v) is Graph and v in self.pending:
                        self.build_gradient(v)
        from ..grad.threaded import call_closures_directly

        if isinstance(root, Graph):  # (``hessian(make_loss(X, y))``: ``moved`` calls ``loss``)
            call_closures_directly(self, root)
        if isinstance(spec, TransformSpec):
            if placeholder in self.escapes:
                from ..grad.escaped import pass_made_values

                made, app = self.escapes.pop(placeholder)
                pass_made_values(primal[1], made, app, spec.name.split("(")[0])
            elif primal[1] is not None:  # a closure it receives as an argument
                from ..grad.threaded import pass_threaded_values

                pass_threaded_values(self, primal[1], primal[2])
            graph, args = spec.build(*primal)
        else:
            nargs = len(primal.parameters)
            if placeholder in self.escapes:
                from ..grad.escaped import lift_escaped

                primal = lift_escaped(primal, *self.escapes.pop(placeholder))
            graph = build_grad_graph(primal, spec, nargs)
            args = [p.abstract for p in primal.parameters]
        nested = Inferrer()
        gctx, _ = nested.infer(graph, tuple(args))
        gspec = type(self)(nested).run(gctx)
        if getattr(spec, "gradient", True):
            gspec.flags["gradient"] = True
        const.value = gspec
        const.abstract = AbstractFunction(frozenset([GraphFunction(gspec)]))


def _specialized_grad_value(
    make: Callable[[Inferrer], Any], spec: GradSpec, args: list[AbstractValue]
) -> Graph:
    """The specialized graph ``(args...) -> grad(spec.fn, *spec.wrt)(args...)``."""
    g = Graph(spec.name)
    params = [g.add_parameter(f"x{i}") for i in range(len(args))]
    g.output = g.apply(_grad_value(g, spec), *params)
    nested = Inferrer()
    gctx, _ = nested.infer(g, tuple(broaden(a) for a in args))
    return make(nested).run(gctx)


def _grad_of_top_level(spec: GradSpec) -> bool:
    fn = spec.fn
    if isinstance(fn, GradSpec):
        return _grad_of_top_level(fn)
    return isinstance(fn, GraphFunction) and fn.context is None


def _grad_value(g: Graph, spec: GradSpec) -> Apply:
    """``grad_of(...)`` in `g` for `spec` (gradients of gradients of a top-level graph)."""
    fn = spec.fn
    f = _grad_value(g, fn) if isinstance(fn, GradSpec) else Constant(fn.graph)
    return g.apply(P.grad_of, f, Constant(spec.wrt), Constant(spec.value), Constant(spec.aux))


def _encloses(outer: Context | None, ctx: Context | None) -> bool:
    """Whether context `outer` is `ctx` or one of its parents (a closure made there is seen)."""
    while ctx is not None:
        if ctx is outer:
            return True
        ctx = ctx.parent
    return False

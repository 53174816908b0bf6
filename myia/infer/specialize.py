"""Specialization: one typed graph per inference context.

After inference, every context (a graph on given argument types) becomes a new graph whose
nodes carry their abstract values (``node.abstract``). Operations are replaced by the callee
they resolve to for those types (a primitive or another specialized graph), calls are
normalized to positional arguments (keywords bound, defaults filled in), and graph constants
refer to the specialization of the context they are called in.
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import (
    ANYTHING,
    BOTTOM,
    AbstractConstant,
    AbstractFunction,
    AbstractList,
    AbstractRecord,
    AbstractTuple,
    AbstractValue,
    GraphFunction,
    PartialFunction,
    in_order,
)
from ..abstract.lattice import broaden, constant_abstract, erase_functions
from ..errors import MyiaInternalError, MyiaTypeError
from ..ir.analysis import toposort
from ..ir.node import Apply, Constant, Graph, Node, Parameter
from ..operations import ops
from ..operations.core import Operation
from ..operations.ops import callable_record, post_init
from ..primitives import P, Primitive
from ..primitives.batching import TransformSpec
from ..primitives.grad import GradSpec
from ..records import is_record_class
from .binding import (
    TupleDefault,
    bind_graph_nodes,
    bind_primitive_nodes,
    bind_record_nodes,
)
from .calls import bind_graph_args, star_shape
from .engine import Context, Inferrer, _is_switch
from .fnvalues import DEAD, Dead, FunctionValues, _captures_nothing, _returns
from .registry import INFER_RULES
from .spec_grads import GradientCalls
from .traceback import error_frames


class Specializer(GradientCalls, FunctionValues):
    """Builds the specialized graphs of every context reachable from an entry context."""

    def __init__(self, inferrer: Inferrer):
        self.inf = inferrer
        self.graphs: dict[Context, Graph] = {}
        self.maps: dict[Context, dict[Node, Node]] = {}
        self.todo: list[Context] = []
        self.join_converts: list[Apply] = []
        #: The gradients called, built once every graph is (`grad_call`): placeholder graph
        #: -> (the constant calling it, the gradient, its primal's specialized graph).
        self.pending: dict[Graph, tuple[Constant, GradSpec, Graph]] = {}
        #: The gradients of closures that a call made and returned (`myia.grad.escaped`):
        #: placeholder -> (that call, specialized; the call of the gradient).
        self.escapes: dict[Graph, tuple[Apply, Apply]] = {}
        #: Function values (top-level functions called with several types) that a call
        #: chooses among at run time: the specialized graph standing for each (`dispatch`),
        #: and the constants that stand for them as values, set to it once every graph is.
        self.reps: dict[GraphFunction, Graph] = {}
        #: Contexts of one closure that differ only in weak scalars, and the one that stands
        #: for them (`merged_contexts`).
        self.merged: dict[frozenset[Context], Context] = {}
        self.merged_target: dict[Context, Context] = {}
        self.value_consts: list[tuple[Constant, GraphFunction]] = []
        #: The value standing for each function never called (`Dead`).
        self.deads: dict[GraphFunction, Dead] = {}
        #: The closures called, by graph (`alike`), once asked for.
        self._by_graph: dict[Graph, list[GraphFunction]] | None = None
        #: The constants of function values found never called, with the value and the
        #: context making it: looked at again once every graph is built (`revive`).
        self.dead_values: list[tuple[Constant, GraphFunction, Context]] = []

    def run(self, entry: Context) -> Graph:
        """Return the specialized graph of `entry` (and specialize everything it reaches)."""
        g = self.graph_for(entry)
        while True:
            while self.todo:
                self.build(self.todo.pop(0))
            if not self.revive():
                break
        for c, fn in self.value_consts:
            # A top-level function called with several types, as a value (that a call
            # chooses among others at run time: `dispatch`, or that `is_` compares): the
            # graph standing for it, one of its specializations, the same everywhere.
            rep = self.reps.get(fn)
            if rep is not None:
                c.value = rep
                c.abstract = AbstractFunction(frozenset([GraphFunction(rep)]))
        # The converts of joins go into the branches first: a gradient differentiates a
        # branch returning its own type, converted there (``x * w if c else None``).
        self.place_join_converts()
        while self.pending:
            self.build_gradient(next(reversed(self.pending)))
        return g

    def revive(self) -> bool:
        """Give its graph to each function value found never called that a call reaches now.

        Building a graph finishes the inference of its context where that was tentative
        (`Inferrer.finalize`), and interpreting a context again may call closures that no
        call reached before: a backpropagator pushed on a loop's stack, made in a context
        built earlier and found `Dead` there, would raise at run time (which graphs are
        built first follows the order of sets of functions and contexts). Whether any
        value was given a graph (whose graphs are then built in turn).
        """
        dead, self.dead_values = self.dead_values, []
        revived = False
        for c, fn, where in dead:
            target = self.indirect(fn, where)
            if isinstance(target, Dead):
                self.dead_values.append((c, fn, where))
                continue
            c.value = target
            c.abstract = AbstractFunction(frozenset([GraphFunction(target)]))
            revived = True
        return revived

    def place_join_converts(self) -> None:
        """Move each join's ``convert`` from the call into the branches that need it.

        A call that may call several functions (``switch(c, f, g)(x)``) gets
        ``convert(call, joined_type)`` while the branches are specialized. Once every graph is
        built, the convert goes where a branch returns another type (``f``'s output becomes
        ``convert(out, joined_type)``), so that the call itself keeps a truthful type and
        stays a tail call (a loop's header jumps to its body that way).
        """
        uses: dict[Graph, int] | None = None
        for conv in self.join_converts:
            call = conv.inputs[1]
            fn = call.inputs[0]
            if not (fn.is_apply and _is_switch(fn)):
                continue
            targets = [b.value for b in fn.inputs[2:] if b.is_constant]
            graphs = [t for t in targets if isinstance(t, Graph)]
            if len(targets) != len(fn.inputs) - 2 or any(
                not isinstance(t, (Dead, Graph)) for t in targets
            ):
                continue
            if any(g.output is None or g.output.abstract is None for g in graphs):
                continue
            want = conv.abstract
            wrong = [g for g in graphs if not _returns(g.output.abstract, want)]
            if wrong and uses is None:
                uses = _graph_uses(self.graphs.values())
            if any(uses.get(g, 0) > 1 for g in wrong):  # type: ignore[union-attr]
                continue
            for g in wrong:
                assert g.output is not None
                g.output = self.convert(g.output, want, g)
            owner = conv.graph
            if owner.output is conv:
                owner.output = call
            for node in toposort(owner):
                if node.is_apply and conv in node.inputs:
                    node.inputs = [call if i is conv else i for i in node.inputs]

    def graph_for(self, ctx: Context) -> Graph:
        g = self.graphs.get(ctx)
        if g is None:
            if ctx not in self.inf.results:
                self.inf.finalize(ctx)
                self._by_graph = None  # (it may call closures not called before)
            old = ctx.graph
            g = Graph()
            g.debug = old.debug.derive()
            g.flags = dict(old.flags)
            g.flags.pop("vararg", None)
            g.flags.pop("kwarg", None)
            m: dict[Node, Node] = {}
            narrowed = self.inf.narrowed.get((ctx.graph, ctx.args), {})
            for i, (p, a) in enumerate(zip(old.parameters, ctx.args)):
                np_ = Parameter(g, debug=p.debug.derive())
                np_.abstract = a
                g.parameters.append(np_)
                m[p] = np_
                if i in narrowed:
                    # The caller passes a union that this branch's test narrowed: say so.
                    np_.abstract = narrowed[i]
                    typ = Constant(a, p.debug.derive())
                    typ.abstract = AbstractConstant(a)
                    fn = Constant(P.narrow, p.debug.derive())
                    fn.abstract = AbstractFunction(frozenset([P.narrow]))
                    m[p] = Apply([fn, np_, typ], g, p.debug.derive())
                    m[p].abstract = a
            self.graphs[ctx] = g
            self.maps[ctx] = m
            self.todo.append(ctx)
        return g

    # Building one graph -----------------------------------------------------------------------

    def build(self, ctx: Context) -> None:
        old, new = ctx.graph, self.graphs[ctx]
        values = self.inf.node_values[ctx]
        m = self.maps[ctx]
        for node in self.inf.scopes.toposort(old):
            if node.is_apply:
                m[node] = self.apply(node, ctx, values)
        # A narrowing node is used only where the parameter was: keep it even if unused.
        assert old.output is not None
        new.output = self.ref(old.output, ctx, values)
        new.abstract = self.inf.result_of(ctx)

    def ref(self, node: Node, ctx: Context, values: dict[Node, AbstractValue]) -> Node:
        """The specialized counterpart of input `node` of a node of `ctx`."""
        if node.is_constant:
            return self.constant(node, ctx, values)
        if node.graph is ctx.graph:
            return self.maps[ctx][node]
        c = ctx.parent
        while c is not None and c.graph is not node.graph:
            c = c.parent
        if c is None or node not in self.maps.get(c, {}):
            if node.abstract is not None:
                return node  # a node of an enclosing, already specialized graph
            raise MyiaInternalError(f"free variable {node} is not specialized")
        return self.maps[c][node]

    def constant(self, node: Node, ctx: Context, values: dict[Node, AbstractValue]) -> Node:
        v = node.value
        a = self.inf.value(node, ctx, values)
        if isinstance(a, AbstractFunction) and len(a.options) == 1:
            (fn,) = a.options
            if isinstance(fn, GraphFunction):
                target = self.indirect(fn, ctx)
                c = self._const(target, node, a if isinstance(target, Dead) else None)
                if isinstance(target, Dead):
                    self.dead_values.append((c, fn, ctx))
                if _captures_nothing(fn) and len(self.inf.fn_contexts.get(fn, ())) > 1:
                    # Called with several types: a call choosing among it and other
                    # functions tells them apart by the graph standing for it (`dispatch`).
                    self.value_consts.append((c, fn))
                return c
        c = self._const(v, node, a)
        return c

    def default(self, d: Constant | TupleDefault, origin: Node, ctx: Context, values: Any) -> Node:
        """The node of a record field's default holding functions (`field_default`)."""
        if isinstance(d, Constant):
            return self.constant(d, ctx, values)
        items = [self.default(i, origin, ctx, values) for i in d.items]
        fn = self._const(P.make_tuple, origin, None)
        tup = Apply([fn, *items], self.graphs[ctx], origin.debug.derive())
        tup.abstract = AbstractTuple(tuple(i.abstract for i in items))
        return tup

    def _const(self, value: Any, origin: Node, abstract: AbstractValue | None) -> Constant:
        c = Constant(value, origin.debug.derive())
        if abstract is None and isinstance(value, Graph):
            abstract = AbstractFunction(frozenset([GraphFunction(value)]))
        c.abstract = abstract if abstract is not None else _abstract_of(value)
        return c

    def indirect(self, fn: GraphFunction, where: Context) -> Any:
        """The specialized graph of a function value made in `where`.

        It is the context the value was called in: from `where` itself (a branch selected by
        `switch`), or anywhere if it is called with one type only.
        """
        merged = self.merged_value(fn)
        if merged is not None:
            return self.graph_for(merged)
        mirrored = self.mirrored(fn)
        ctxs = list(self.inf.local_contexts.get((fn, where), ()))
        if ctxs:
            ctxs = list(dict.fromkeys([*ctxs, *mirrored]))
        else:
            # Called elsewhere (the value escaped), or never called (a branch not taken).
            ctxs = list(dict.fromkeys([*self.inf.fn_contexts.get(fn, ()), *mirrored]))
            if len(ctxs) > 1 and not _captures_nothing(fn):
                # Calls of a closure call the value made here (those of a top-level
                # function call the specialization for their arguments: `apply`).
                raise self.lift_or_error(fn, ctxs)
            if not ctxs and _captures_nothing(fn):
                # A value never called (which a call may still compare: `Dead`).
                return self.deads.setdefault(fn, Dead(fn.graph.name))
            if len(ctxs) != 1:
                return DEAD
        if len(ctxs) > 1 and not _captures_nothing(fn):
            raise self.lift_or_error(fn, ctxs)
        if len(ctxs) > 1:
            # Its calls call the specialization for their arguments (`apply`); as a value,
            # it is its own object (`run` makes it the graph a dispatch tests, if any).
            return self.deads.setdefault(fn, Dead(fn.graph.name))
        return self.graph_for(ctxs[0])

    def mirrored(self, fn: GraphFunction) -> list[Context]:
        """The contexts of closure `fn` where inference merged it with another of its graph.

        A closure pushed on a loop's stack is called as the one it was merged with
        (`myia.infer.loop_stacks`): the value made here calls its own graph, made from the
        calls of that one in `fn`'s own context (where the closures made stand for that
        one's in turn).
        """
        if _captures_nothing(fn):
            return []
        rep = self.inf.closure_rep(fn)
        sources = [] if rep is None else [rep]
        if fn.graph.flags.get("backpropagator") and not any(
            self.inf.fn_contexts.get(o) for o in [fn, *sources]
        ):
            # A backpropagator made in a context that is called, but never called itself nor
            # as the closure it was merged with: its calls went to another closure of its
            # graph capturing values of the same types (a loop's stack joined with one made
            # in a context that no call reaches once its callers were interpreted again).
            sources = [o for o in self.alike(fn) if self.inf.fn_contexts.get(o)][:1]
        out = []
        for source in sources:
            for c in self.inf.fn_contexts.get(source, ()):
                mine = Context(fn.graph, c.args, fn.context)
                self.inf.closure_alias.setdefault(mine, c)
                out.append(mine)
        return out

    def alike(self, fn: GraphFunction) -> list[GraphFunction]:
        """The closures of `fn`'s graph whose captures have the types of `fn`'s (`mirrored`).

        Those capturing values of the same types come first, then those capturing wider
        ones (a number whose value `fn`'s context knows): what their calls were specialized
        for holds of `fn`'s captures too.
        """
        if self._by_graph is None:
            self._by_graph = {}
            for o in self.inf.fn_contexts:
                if type(o) is GraphFunction and o.context is not None:
                    self._by_graph.setdefault(o.graph, []).append(o)
        others = [o for o in self._by_graph.get(fn.graph, []) if o != fn]
        same = [o for o in others if self.inf.same_captures(fn, o)]
        return same + [
            o for o in others if o not in same and self.inf.same_captures(fn, o, None, True)
        ]

    def apply(self, node: Apply, ctx: Context, values: dict[Node, AbstractValue]) -> Node:
        new = self.graphs[ctx]
        fn_node = node.inputs[0]
        fn_abs = self.inf.value(fn_node, ctx, values)
        arg_nodes = list(node.inputs[1:])
        arg_abs = [self.inf.value(i, ctx, values) for i in arg_nodes]
        result = values[node]
        raised = self.inf.shape_raises.get((ctx, node))
        if raised is not None:
            # A shape error on a path a branch may not take (`myia.infer.deferred`): raised
            # as itself, with its frames (the user's line), not its compiler's traceback.
            inputs = [P.raise_, type(raised)(raised.message, raised.frames)]
            app = Apply([self._const(v, node, None) for v in inputs], new, node.debug.derive())
            return _retype(app, BOTTOM)
        if fn_node.is_constant and fn_node.value is P.partial:
            return self.partial(node, ctx, values)
        made = self.inf.case_made.get((ctx, node))
        if made is not None:
            # Made once per length of a union of tuples (`myia.infer.cases`).
            m = self.maps[ctx][made] = self.apply(made, ctx, values)
            return m
        if fn_node.is_constant and fn_node.value is P.apply_star:
            return self.star_call(node, ctx, values)
        made = self.inf.window_made.get((ctx, node))
        if made is not None:
            # ``x[i:i + k]``: the windows inference made of it (`myia.infer.windows`).
            m = self.maps[ctx]
            for x in made:
                m[x] = self.apply(x, ctx, values)
            return m[made[-1]]
        if isinstance(fn_abs, AbstractConstant) and isinstance(fn_abs.value, type):
            fn_abs = AbstractFunction(frozenset([fn_abs.value]))
        if isinstance(fn_abs, AbstractRecord) and callable_record(fn_abs.cls) is not None:
            # ``model(x)``: a direct call of ``type(model).__call__`` on ``(model, x)``.
            out = self.direct_call(
                callable_record(fn_abs.cls),
                node,
                [fn_node, *arg_nodes],
                [fn_abs, *arg_abs],
                ctx,
                values,
            )
            if out is not None:
                return _retype(out, result)
        if isinstance(fn_abs, AbstractFunction) and len(fn_abs.options) == 1:
            callee = next(iter(fn_abs.options))
            if isinstance(callee, (GradSpec, TransformSpec)):
                return self.grad_call(callee, node, arg_nodes, arg_abs, ctx, values)
            if isinstance(callee, Primitive) and callee.static:
                # Its value is the one inference gave (a test on types: `tuple_loops`).
                return self._const(result.value, node, result)
            if fn_node.is_constant:
                out = self.direct_call(callee, node, arg_nodes, arg_abs, ctx, values)
                if out is not None:
                    if callee is P.switch:
                        self.dead_branch(out, arg_abs[0])
                    return _retype(out, result)
            elif isinstance(callee, (Operation, Primitive)) and not _is_switch(fn_node):
                # An operation or primitive passed as a value (``apply(abs, x)``): resolved
                # here, and called as a constant (the gradient differentiates it as one).
                out = self.direct_call(callee, node, arg_nodes, arg_abs, ctx, values)
                if out is not None:
                    return _retype(out, result)
            elif isinstance(callee, PartialFunction):
                method = self.method_call(callee, node, arg_nodes, arg_abs, ctx, values)
                if method is None:
                    method = self.partial_direct(callee, node, arg_nodes, arg_abs, ctx, values)
                if method is not None:
                    return _retype(method, result)
                inputs = self.partial_call(callee, node, arg_nodes, arg_abs, ctx, values)
                app = Apply(inputs, new, node.debug.derive())
                app.abstract = result
                return app
            elif isinstance(callee, GraphFunction):
                refs = [self.ref(i, ctx, values) for i in arg_nodes]
                bound = bind_graph_nodes(callee.graph, refs, arg_nodes, new)
                fn_ref = self.ref(fn_node, ctx, values)
                merged = self.merged_value(callee)
                if merged is not None and not _is_switch(fn_node):
                    return self.weak_call(merged, fn_ref, bound, result, node, new)
                if _captures_nothing(callee) and not _is_switch(fn_node):
                    # A top-level function (or one that captures nothing) passed as a value:
                    # call the specialization for these arguments directly (the same value
                    # may be called with others).
                    fn_ref = self._const(
                        self.value_target(callee, arg_abs, node, ctx, values), node, None
                    )
                app = Apply([fn_ref, *bound], new, node.debug.derive())
                return _retype(app, result)
        inputs = [self.ref(i, ctx, values) for i in node.inputs]
        self.inf.calls.append((ctx, node, values))
        try:
            self.refuse_transform_choice(fn_abs)
            dispatch = self.needs_dispatch(fn_abs, fn_node)
        finally:
            self.inf.calls.pop()
        if dispatch:
            bound = self.bind_options(fn_abs, inputs[1:], arg_nodes, arg_abs, node, ctx, values)  # type: ignore[arg-type]
            return self.dispatch(fn_abs, inputs[0], bound, arg_abs, node, ctx, values)  # type: ignore[arg-type]
        if isinstance(fn_abs, AbstractFunction) and len(fn_abs.options) > 1:
            bound = self.bind_options(fn_abs, inputs[1:], arg_nodes, arg_abs, node, ctx, values)
            if isinstance(bound, dict):  # each binds the call its own way (defaults)
                return self.dispatch(fn_abs, inputs[0], bound, arg_abs, node, ctx, values)
            inputs = [inputs[0], *bound]
        app = _retype(Apply(inputs, new, node.debug.derive()), result)
        if isinstance(fn_abs, AbstractFunction) and len(fn_abs.options) > 1:
            want = erase_functions(result)
            # An option never called from here (None) returns nothing to convert.
            results = self.option_results(fn_abs, ctx)
            if any(r is not None and not _returns(r, want) for r in results):
                conv = self.convert(app, result, new)
                self.join_converts.append(conv)
                return conv
        return app

    def star_call(self, node: Apply, ctx: Context, values: dict[Node, AbstractValue]) -> Node:
        """``apply_star(f, t, d...)``: the call written out that inference made of it."""
        arg_abs = [self.inf.value(i, ctx, values) for i in node.inputs[1:]]
        made = self.inf.star_calls[(node, star_shape(self.inf, arg_abs))]
        m = self.maps[ctx]
        for x in made:
            m[x] = self.apply(x, ctx, values)
        return m[made[-1]]

    def option_results(self, fn: AbstractFunction, ctx: Context) -> list[AbstractValue | None]:
        """The result type of each function a call may call (None where unknown)."""
        out: list[AbstractValue | None] = []
        for f in in_order(fn.options):
            targets = (
                self.inf.local_contexts.get((f, ctx)) if isinstance(f, GraphFunction) else None
            )
            if not targets:
                out.append(None)
                continue
            for t in targets:
                self.inf.finalize(t)  # a tentative result whose epoch passed is not known
                out.append(self.inf.result_of(t))
        return out

    def convert(self, node: Node, to: AbstractValue, graph: Graph) -> Apply:
        """``convert(node, to)`` in `graph`: `node`'s value in the representation of `to`."""
        if isinstance(to, AbstractFunction) or to is BOTTOM:
            return node  # type: ignore[return-value]
        to = erase_functions(to)
        typ = Constant(to, node.debug.derive())
        typ.abstract = AbstractConstant(to)
        app = Apply([self._const(P.convert, node, None), node, typ], graph, node.debug.derive())
        app.abstract = to
        return app

    def partial(self, node: Apply, ctx: Context, values: dict[Node, AbstractValue]) -> Apply:
        """``partial(g, x...)``: `g` specialized as its calls with ``x...`` made it."""
        result = values[node]
        target = None
        if isinstance(result, AbstractFunction) and len(result.options) == 1:
            option = next(iter(result.options))
            targets = self.inf.partial_contexts.get(option, ())
            fn = option.fn
            if len(targets) == 1 and isinstance(fn, GraphFunction) and _captures_nothing(fn):
                target = self._const(self.graph_for(next(iter(targets))), node.inputs[1], None)
        # (The function itself is not looked up when its specialization is known: the same
        # function may be partially applied elsewhere to other types. A closure is the value
        # made where it is defined, which holds its free variables.)
        inputs = [
            target if i == 1 and target is not None else self.ref(n, ctx, values)
            for i, n in enumerate(node.inputs)
        ]
        return _retype(Apply(inputs, self.graphs[ctx], node.debug.derive()), result)

    def value_target(
        self,
        fn: GraphFunction,
        arg_abs: list[AbstractValue],
        node: Apply,
        ctx: Context,
        values: dict[Node, AbstractValue],
    ) -> Graph:
        """The specialization a call through a function value reaches (as inference did)."""
        wide = [broaden(a) for a in arg_abs]
        return self.graph_for(self.target(fn, wide, node, ctx, values))

    def target(
        self,
        fn: GraphFunction,
        args: list[AbstractValue],
        node: Apply,
        ctx: Context,
        values: dict[Node, AbstractValue],
    ) -> Context:
        """The context inference reached for a call of `fn` on `args` at `node` of `ctx`."""
        self.inf.calls.append((ctx, node, values))
        try:
            bound = bind_graph_args(self.inf, fn, args)
        finally:
            self.inf.calls.pop()
        target = Context(fn.graph, self.inf.loop_args(fn.graph, bound), fn.context)
        return self.inf.widened.get((ctx, node, target), target)

    def method_call(
        self,
        pf: PartialFunction,
        node: Apply,
        arg_nodes: list[Node],
        arg_abs: list[AbstractValue],
        ctx: Context,
        values: dict[Node, AbstractValue],
    ) -> Apply | None:
        """``obj.method(args)``: a direct call ``method(obj, args)`` to its specialization.

        Each call site gets the specialization for its own arguments, even when the same
        method of the same object is called with different types (``x.sum(axis=0)`` and
        ``x.sum(axis=1)``).
        """
        getter = node.inputs[0]
        if not (getter.is_apply and getter.graph is ctx.graph and len(pf.args) == 1):
            return None
        if not (getter.inputs[0].is_constant and getter.inputs[0].value is ops.getattr_):
            return None
        if not isinstance(pf.fn, GraphFunction):
            return None
        obj = getter.inputs[1]
        target = self.graph_for(self.target(pf.fn, [*pf.args, *arg_abs], node, ctx, values))
        refs = [self.ref(i, ctx, values) for i in [obj, *arg_nodes]]
        inputs = bind_graph_nodes(pf.fn.graph, refs, [obj, *arg_nodes], self.graphs[ctx])
        return Apply(
            [self._const(target, node, None), *inputs], self.graphs[ctx], node.debug.derive()
        )

    def partial_direct(
        self,
        pf: PartialFunction,
        node: Apply,
        arg_nodes: list[Node],
        arg_abs: list[AbstractValue],
        ctx: Context,
        values: dict[Node, AbstractValue],
    ) -> Apply | None:
        """``p(args)``, `p` a partial application of a function called with several types.

        One partial value is one graph, but its function has a specialization per call's
        types: each call calls its own directly, on the arguments `p` bound (`partial_arg`).
        """
        fn, inner = pf.fn, pf
        while isinstance(fn, PartialFunction):
            fn, inner = fn.fn, fn
        if not (isinstance(fn, GraphFunction) and _captures_nothing(fn)):
            return None
        if len(self.inf.partial_contexts.get(inner, ())) < 2:
            return None
        if inner is not pf:
            raise MyiaTypeError(
                f"a partial application of a partial application of {fn.graph.name}, which "
                "is called with several argument types, is not supported: bind the "
                "arguments in one partial application, or call it with arguments of one type",
                error_frames([*self.inf.calls, (ctx, node, values)]),
            )
        new = self.graphs[ctx]
        target = self.graph_for(self.target(fn, [*pf.args, *arg_abs], node, ctx, values))
        p = self.ref(node.inputs[0], ctx, values)
        bound: list[Node] = []
        for i, a in enumerate(pf.args):
            arg = Apply([self._const(P.partial_arg, node, None), p, Constant(i)], new)
            arg.inputs[2].abstract = AbstractConstant(i)
            arg.abstract = a
            bound.append(arg)
        refs = [self.ref(i, ctx, values) for i in arg_nodes]
        holes: list[Node] = [Constant(None) for _ in bound]
        inputs = bind_graph_nodes(fn.graph, bound + refs, holes + arg_nodes, new)
        return Apply([self._const(target, node, None), *inputs], new, node.debug.derive())

    def partial_call(
        self,
        pf: PartialFunction,
        node: Apply,
        arg_nodes: list[Node],
        arg_abs: list[AbstractValue],
        ctx: Context,
        values: dict[Node, AbstractValue],
    ) -> list[Node]:
        """Inputs of a call to a partial application, with keywords bound positionally."""
        fn_ref = self.ref(node.inputs[0], ctx, values)
        refs = [self.ref(i, ctx, values) for i in arg_nodes]
        k = len(pf.args)
        target = pf.fn
        while isinstance(target, PartialFunction):  # a partial of a partial
            k += len(target.args)
            target = target.fn
        holes: list[Node] = [Constant(None) for _ in range(k)]
        if isinstance(target, Graph):
            target = GraphFunction(target)
        if isinstance(target, GraphFunction):
            bound = bind_graph_nodes(
                target.graph, holes + refs, holes + arg_nodes, self.graphs[ctx]
            )
        elif isinstance(target, Primitive):
            bound = bind_primitive_nodes(target, holes + refs, holes + arg_nodes, node)
        else:
            return [fn_ref, *refs]
        return [fn_ref, *bound[k:]]

    def direct_call(
        self,
        callee: Any,
        node: Apply,
        arg_nodes: list[Node],
        arg_abs: list[AbstractValue],
        ctx: Context,
        values: dict[Node, AbstractValue],
    ) -> Apply | None:
        """A call to a known callee, resolved and with positional arguments."""
        from ..frontend import parse
        from ..frontend.resolve import is_parsable

        new = self.graphs[ctx]
        dbg = node.debug.derive()
        if any(a is BOTTOM for a in arg_abs):
            return None
        while True:
            if isinstance(callee, Operation):
                self.inf.calls.append((ctx, node, values))
                try:
                    callee = self.inf.resolve(callee, arg_abs)
                finally:
                    self.inf.calls.pop()
                continue
            if is_parsable(callee):
                callee = GraphFunction(parse(callee), None)
                continue
            if isinstance(callee, Graph):
                callee = GraphFunction(callee, None)
                continue
            break
        refs = [self.ref(i, ctx, values) for i in arg_nodes]
        if isinstance(callee, Primitive):
            inputs = bind_primitive_nodes(callee, refs, arg_nodes, node)
            if callee is P.make_list and inputs:
                elem = values[node].element  # type: ignore[attr-defined]
                inputs = [
                    i if _is_element(i.abstract, elem) else self.convert(i, elem, new)
                    for i in inputs
                ]
            return Apply([self._const(callee, node, None), *inputs], new, dbg)
        if isinstance(callee, GraphFunction):
            g = self.graph_for(self.target(callee, arg_abs, node, ctx, values))
            inputs = bind_graph_nodes(callee.graph, refs, arg_nodes, new)
            return Apply([self._const(g, node, None), *inputs], new, dbg)
        if isinstance(callee, type) and is_record_class(callee):
            inputs = bind_record_nodes(
                callee,
                refs,
                arg_nodes,
                node,
                self.inf.record_defaults,
                lambda d: self.default(d, node, ctx, values),
            )
            cls = self._const(callee, node, constant_abstract(callee))
            record = Apply([self._const(P.make_record, node, None), cls, *inputs], new, dbg)
            check = post_init(callee)
            if check is None:
                return record
            # ``seq(cls.__post_init__(record), record)``: its checks run on each instance.
            record.abstract = values[node]
            fn = GraphFunction(parse(check), None)
            target = self.target(fn, [record.abstract], node, ctx, values)
            call = Apply([self._const(self.graph_for(target), node, None), record], new, dbg)
            call.abstract = self.inf.results.get(target)
            return Apply([self._const(P.seq, node, None), call, record], new, dbg)
        if isinstance(callee, PartialFunction):
            return None
        return None


def _graph_uses(graphs: Any) -> dict[Graph, int]:
    """How many times each graph is referenced by a constant in `graphs`."""
    uses: dict[Graph, int] = {}
    for g in graphs:
        for node in toposort(g):
            if node.is_apply:
                for i in node.inputs:
                    if i.is_constant and isinstance(i.value, Graph):
                        uses[i.value] = uses.get(i.value, 0) + 1
    return uses


def _retype(app: Apply, result: AbstractValue) -> Apply:
    """Give `app` its inferred type; function values refer to the specialized graphs."""
    app.abstract = result
    fn = app.inputs[0]
    if _has_function(result) and fn.is_constant:
        if isinstance(fn.value, Primitive) and fn.value is not P.apply_star:
            app.abstract = INFER_RULES[fn.value](*(i.abstract for i in app.inputs[1:]))
    return app


def _has_function(a: Any) -> bool:
    if isinstance(a, AbstractFunction):
        return True
    if isinstance(a, AbstractTuple):
        return any(_has_function(e) for e in a.elements)
    return False


def _abstract_of(value: Any) -> AbstractValue | None:
    if isinstance(value, (Primitive, Operation)):
        return AbstractFunction(frozenset([value]))
    try:
        return constant_abstract(value)
    except TypeError:
        return AbstractConstant(value)


def specialize(inferrer: Inferrer, entry: Context) -> Graph:
    """Return the specialized graph of `entry`, inferred by `inferrer`."""
    return Specializer(inferrer).run(entry)


__all__ = ["DEAD", "Dead", "Specializer", "specialize"]


def _is_element(a: Any, elem: AbstractValue) -> bool:
    """Whether a value of type `a` is already an element of type `elem` of a list.

    A literal list (``[0, 1]`` in ``x[[[0, 1], [2, 2]]]``) is one as it is: the values its
    type keeps are no data to convert, and a conversion would forget them (the list of lists
    made again in the gradient's forward pass would be an index unknown at compile time).
    """
    if a == elem:
        return True
    return type(a) is AbstractList and a.value is not ANYTHING and AbstractList(a.element) == elem

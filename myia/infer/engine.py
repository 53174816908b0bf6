"""Type and shape inference by abstract interpretation.

The engine interprets graphs on abstract values, starting from the abstract values of the
entry point's arguments. Each (graph, argument values, parent context) is a `Context`,
interpreted once; its result and the abstract value of each of its nodes are recorded.

Recursion (loops are tail-recursive graphs) is solved by fixpoint iteration: a call to a
context that is already being interpreted returns the current approximation of its result
(bottom at first); when the outer interpretation ends with a different result, the
approximation is widened (joined with it) and the context interpreted again, until stable.
Contexts whose result depended on an approximation are *tentative*: their results are cached
only until an approximation changes (a global epoch), and become final when the recursive
context they depend on does.

Arguments to recursive graphs are broadened (values known at compile time are forgotten), so
that ``i = 0; while ...: i = i + 1`` gives one context, not one per iteration; arrays whose
shape keeps changing are widened to unknown dimensions (`Inferrer._widen_dims`), and the stacks a
loop's gradient pushes on are joined over the loop's calls (`Inferrer._widen_stacks`). Elsewhere
values are kept: tuple indices, `axis` arguments, dataclass field names, lengths of tuples.
"""

from __future__ import annotations

import functools
import itertools
import sys
from dataclasses import dataclass
from typing import Any

from ..abstract.data import (
    ANYTHING,
    BOTTOM,
    NEVER_CALLED,
    AbstractConstant,
    AbstractFunction,
    AbstractKeyword,
    AbstractRecord,
    AbstractScalar,
    AbstractUnion,
    AbstractValue,
    GraphFunction,
    PartialFunction,
    has_unknown_dims,
    in_order,
    show,
)
from ..abstract.lattice import TypeMismatch, broaden, constant_abstract, join, widen_dims
from ..errors import (
    Frame,
    MyiaError,
    MyiaInternalError,
    MyiaNameError,
    MyiaShapeError,
    MyiaSyntaxError,
    MyiaTypeError,
)
from ..ir.analysis import Scopes
from ..ir.node import Apply, Graph, Node
from ..operations.core import Mutation, NoMatch, Operation
from ..operations.ops import StaticOperation, callable_record, post_init
from ..primitives import P, Primitive
from .calls import (
    bind_graph_args,
    bind_primitive_args,
    construct_record,
    star_nodes,
    star_shape,
    untyped_fields_hint,
)
from .cases import MAX_LENGTHS, case_call, case_position, dispatches, lengths_of, lengths_of_any
from .deferred import call_branches, defer_shape_error
from .kinds import _fold, abstract_kind, static_value, union_error
from .loop_stacks import LoopStacks, Superseded
from .loop_types import LoopTypes
from .narrow import branch_refinements
from .registry import INFER_RULES
from .traceback import error_frames, user_name
from .windows import window_nodes, window_plan

MAX_DEPTH = 3000


@dataclass(frozen=True)
class Context:
    """A graph interpreted on given argument values, inside the context of its parent."""

    graph: Graph
    args: tuple[AbstractValue, ...]
    parent: Context | None = None

    def __hash__(self) -> int:
        # Cached: contexts key most of inference's and specialization's tables, and hashing
        # one hashes its arguments and every context it is nested in.
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.graph, self.args, self.parent))
            object.__setattr__(self, "_hash", h)
        return h

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not Context or hash(self) != hash(other):
            return False
        return (
            self.graph is other.graph and self.args == other.args and self.parent == other.parent
        )

    def __repr__(self) -> str:
        return f"{self.graph.name}({', '.join(map(show, self.args))})"


def _ends(frames: list[Frame], n: int = 6) -> list[Frame]:
    """The first and last `n` of `frames` (a recursion thousands of calls deep)."""
    return frames if len(frames) <= 2 * n else [*frames[:n], *frames[-n:]]


class Inferrer(LoopTypes, LoopStacks):
    """Infers the abstract value of every node of every graph reachable from an entry point.

    Attributes:
        results: the final result of each context.
        node_values: the abstract value of each node, per context.

    """

    def __init__(self) -> None:
        self.scopes = Scopes()
        self.results: dict[Context, AbstractValue] = {}
        self.node_values: dict[Context, dict[Node, AbstractValue]] = {}
        self.approx: dict[Context, AbstractValue] = {}
        self.tentative: dict[Context, tuple[AbstractValue, int, int]] = {}
        self.epoch = 0
        self.stack: list[Context] = []
        self.on_stack: dict[Context, int] = {}
        #: Per context on the stack: how many times in a row the arguments of its graph grew
        #: from one call to the next (`_growth`).
        self.growing: list[int] = []
        #: Per context of a loop on the stack: the first context of its graph it called with
        #: other argument types, and the call doing so (`_loop_type_change`).
        self.reentered: dict[Context, tuple[Context, Any]] = {}
        self.low = MAX_DEPTH * 10
        self.calls: list[tuple[Context, Node | None, dict[Node, AbstractValue]]] = []
        self.targets: dict[tuple[Context, Node], set[Any]] = {}
        # The contexts each function was called in, in the order inference met them (dicts
        # as ordered sets: the order of a set of contexts would follow hashing).
        self.fn_contexts: dict[GraphFunction, dict[Context, None]] = {}
        self.local_contexts: dict[tuple[GraphFunction, Context], dict[Context, None]] = {}
        self.partial_contexts: dict[PartialFunction, dict[Context, None]] = {}
        #: The calls each context made, in its last interpretation, and how many calls made
        #: reach each context of `fn_contexts` and `partial_contexts` (`_forget_calls`).
        self.made: dict[Context, list[tuple[GraphFunction, Context, Any]]] = {}
        self.call_counts: dict[tuple[int, Any, Context], int] = {}
        self.narrowed: dict[tuple[Graph, tuple[AbstractValue, ...]], dict[int, Any]] = {}
        self.star_calls: dict[tuple[Node, Any], list[Apply]] = {}
        #: The windows a node indexing an array with ``x[i:i + k]`` stands for, by plan,
        #: and those of each context (`window_call`).
        self.window_calls: dict[tuple[Node, Any], list[Apply]] = {}
        self.window_made: dict[tuple[Any, Node], list[Apply]] = {}
        #: The calls made once per length of a union of tuples (`myia.infer.cases`): by node
        #: and union, and the one each context's node stands for (read by specialization).
        self.case_calls: dict[tuple[Node, int, Any], Apply] = {}
        self.case_made: dict[tuple[Context, Node], Apply] = {}
        #: The context a call of a recursive graph went to instead of the one its arguments
        #: give, by (caller's context, call node, that context): `_widen_dims`.
        self.widened: dict[tuple[Context, Node | None, Context], Context] = {}
        #: The arguments of the widest context of each recursive graph (and parent) whose
        #: arguments hold stacks, and how many times they grew, by their types with the
        #: stacks' elements erased; how many times one grew in all (`_widen_stacks`).
        self.stack_args: dict[tuple[Graph, Any, tuple[AbstractValue, ...]], Any] = {}
        self.stack_growths = 0
        #: The contexts that closures held in a loop's stacks were made in, merged with
        #: another closure of their graph: the context each stands for (`_merge_closures`).
        self.closure_alias: dict[Context, Context] = {}
        self.closure_reps: dict[GraphFunction, GraphFunction] = {}
        #: Shape errors raised at run time, on a path a branch may not take (`deferred`).
        self.defer_shapes = 0
        self.inferred_nodes: set[Node] = set()
        self.branch_depths: list[int] = []
        self.shape_raises: dict[tuple[Context, Node], MyiaShapeError] = {}
        #: The default of each field of a dataclass that a call left out, read once
        #: (`myia.infer.binding.field_default`).
        self.record_defaults: dict[tuple[type, str], Any] = {}

    # Entry ------------------------------------------------------------------------------------

    def infer(self, graph: Graph, args: tuple[AbstractValue, ...]) -> tuple[Context, Any]:
        """Infer `graph` called on `args`; return the entry context and the result."""
        ctx = Context(graph, tuple(args))
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20 * MAX_DEPTH))
        try:
            result = self.infer_context(ctx)
        except MyiaError:
            raise
        except RecursionError as exc:
            raise MyiaInternalError(f"inference recursed too deeply: {exc}") from exc
        finally:
            sys.setrecursionlimit(limit)
        self.check_bound([result])  # ``if False: y = x`` then ``return y``
        return ctx, result

    def finalize(self, ctx: Context) -> None:
        """Make sure `ctx` has final node values (re-interpreting a tentative context)."""
        if ctx not in self.results:
            self.infer_context(ctx)

    def result_of(self, ctx: Context) -> AbstractValue | None:
        """Return the result of `ctx` once inference is done (final, or tentative and stable).

        A context that depended on a recursive context keeps a tentative result; once every
        approximation is stable (the epoch no longer changes) that result is final too.
        """
        done = self.results.get(ctx)
        if done is None:
            cached = self.tentative.get(ctx)
            if cached is not None and cached[1] == self.epoch:
                return cached[0]
        return done

    # Contexts ---------------------------------------------------------------------------------

    def infer_context(self, ctx: Context) -> AbstractValue:
        """The result of context `ctx` (or its current approximation while it is running)."""
        done = self.results.get(ctx)
        if done is not None:
            return done
        depth = self.on_stack.get(ctx)
        if depth is not None:
            self.low = min(self.low, depth)
            return self.approx.get(ctx, BOTTOM)
        cached = self.tentative.get(ctx)
        if cached is not None and cached[1] == self.epoch:
            self.low = min(self.low, cached[2])  # it depends on what it depended on
            return cached[0]
        depth = len(self.stack)
        if depth >= MAX_DEPTH:
            raise MyiaTypeError(
                f"type inference of {user_name(ctx.graph.name)} recursed {MAX_DEPTH} levels "
                "deep: "
                "a recursive function whose argument types change at every call?",
                _ends(error_frames(self.calls)),
            )
        self._carried_closure(ctx)
        growth = self._growth(ctx)
        prev = self._previous(ctx)
        if prev is not None and prev.args != ctx.args and self.calls:
            self.reentered.setdefault(prev, (ctx, self.calls[-1]))
        self.stack.append(ctx)
        self.on_stack[ctx] = depth
        self.growing.append(growth)
        outer_low = self.low
        try:
            while True:
                self.low = MAX_DEPTH * 10
                growths = self.stack_growths
                try:
                    result = self.interpret(ctx)
                except Superseded as exc:
                    self._forget_calls(ctx)
                    if exc.depth != depth + 1:
                        raise
                    # The context called was widened: what was inferred since is redone.
                    self.epoch += 1
                    continue
                if self.stack_growths != growths:
                    # A call went to a loop's context that a later call widened: each call
                    # of the loop goes to the widest when interpreted again.
                    continue
                if self.low < depth:
                    break
                if self.low == depth:
                    old = self.approx.get(ctx, BOTTOM)
                    if result != old:
                        # A result below the approximation (a constant where it is broadened)
                        # is the fixpoint: it is the approximation.
                        new = self._widen(old, result, ctx)
                        if new != old:
                            self.approx[ctx] = new
                            self.epoch += 1
                            continue
                        result = old
                break
        except MyiaTypeError as exc:
            changed = self._loop_type_change(ctx, prev, exc)
            if changed is None:
                raise
            raise changed from None
        finally:
            self.stack.pop()
            self.growing.pop()
            del self.on_stack[ctx]
            self.reentered.pop(ctx, None)
        if self.low < depth:
            self.tentative[ctx] = (result, self.epoch, self.low)
            self.low = min(outer_low, self.low)
        else:
            self.results[ctx] = result
            self.tentative.pop(ctx, None)
            self.low = outer_low
        return result

    def _widen(self, old: AbstractValue, new: AbstractValue, ctx: Context) -> AbstractValue:
        try:
            out = broaden(join(old, new))
        except TypeMismatch as exc:
            self.check_bound([old, new])
            raise MyiaTypeError(
                f"{user_name(ctx.graph.name)} returns incompatible types: {exc}"
                f"{untyped_fields_hint(old, new)}",
                error_frames(self.calls),
            ) from None
        if len(lengths_of_any(out)) > MAX_LENGTHS:
            # ``return f(n - 1) + (x,)``: a tuple one longer at every level of a recursion.
            raise MyiaTypeError(
                f"{user_name(ctx.graph.name)} returns tuples of ever more lengths "
                f"({show(out)}, ...): Myia needs a type that does not grow without bound; "
                "return a list (``[x]``, ``xs + [x]``) instead of a growing tuple",
                error_frames(self.calls),
            )
        return out

    def interpret(self, ctx: Context) -> AbstractValue:
        """Interpret the body of `ctx`'s graph on its arguments."""
        graph = ctx.graph
        values: dict[Node, AbstractValue] = dict(zip(graph.parameters, ctx.args))
        self.node_values[ctx] = values
        self._forget_calls(ctx)
        self.calls.append((ctx, None, values))
        try:
            for node in self.scopes.toposort(graph):
                if node.is_apply:
                    self.calls[-1] = (ctx, node, values)
                    values[node] = self.infer_apply(node, ctx, values)  # type: ignore[arg-type]
                    self.inferred_nodes.add(node)
            assert graph.output is not None
            return self.value(graph.output, ctx, values)
        finally:
            self.calls.pop()

    # Nodes ------------------------------------------------------------------------------------

    def value(self, node: Node, ctx: Context, values: dict[Node, AbstractValue]) -> Any:
        """The abstract value of `node` as seen from context `ctx`."""
        if node.graph is ctx.graph:
            return values[node]
        if node.is_constant:
            return self.constant(node.value, ctx)
        c = ctx.parent
        while c is not None and c.graph is not node.graph:
            c = c.parent
        if c is None:
            if node.abstract is not None:
                return node.abstract  # a node of an already specialized graph
            raise MyiaInternalError(f"free variable {node} not found from {ctx}")
        return self.node_values[c][node]

    def constant(self, v: Any, ctx: Context | None) -> AbstractValue:
        """The abstract value of constant `v` (a graph becomes a closure over `ctx`)."""
        if isinstance(v, Graph):
            return AbstractFunction(frozenset([GraphFunction(v, self.closure_context(v, ctx))]))
        if isinstance(v, (Primitive, Operation)):
            return AbstractFunction(frozenset([v]))
        if isinstance(v, _dead_class()):
            # A function never called (a gradient of a gradient meets those the first
            # specialization left): the empty set of functions, which joins with any.
            return AbstractFunction(frozenset())
        if isinstance(v, AbstractValue):
            return AbstractConstant(v)  # a type: the target of `convert` and `narrow`
        from ..frontend.resolve import is_parsable

        if is_parsable(v):
            from ..frontend import parse

            return AbstractFunction(frozenset([GraphFunction(parse(v), None)]))
        try:
            return constant_abstract(v)
        except TypeError:
            return AbstractConstant(v)

    def closure_context(self, g: Graph, ctx: Context | None) -> Context | None:
        """The context that a closure of `g` made in `ctx` sees its free variables in."""
        if g not in self.scopes.parents:
            self.scopes.add(g)
        parent = self.scopes.parents[g]
        if parent is None:
            return None
        c = ctx
        while c is not None and c.graph is not parent:
            c = c.parent
        return c  # None for a graph nested in an already specialized graph

    def infer_apply(self, node: Apply, ctx: Context, values: dict[Node, AbstractValue]) -> Any:
        fn = self.value(node.inputs[0], ctx, values)
        args = [self.value(i, ctx, values) for i in node.inputs[1:]]
        if fn is BOTTOM or any(a is BOTTOM for a in args):
            return BOTTOM
        if isinstance(fn, AbstractConstant) and isinstance(fn.value, type):
            fn = AbstractFunction(frozenset([fn.value]))
        if isinstance(fn, AbstractRecord) and callable_record(fn.cls) is not None:
            # ``model(x)``: ``type(model).__call__(model, x)``.
            return self.call(callable_record(fn.cls), [fn, *args])
        if not isinstance(fn, AbstractFunction):
            raise MyiaTypeError(f"{show(fn)} is not a function", error_frames(self.calls))
        fn_node = node.inputs[0]
        k = case_position(args)
        if k is not None and len(fn.options) == 1:
            if dispatches(self, next(iter(fn.options)), args):
                return self.cases(node, k, args[k], ctx, values)
        if len(fn.options) > 1 and fn_node.is_apply and fn_node.graph is ctx.graph:
            refined = branch_refinements(fn_node, node, ctx, values, self)
            if refined is not None:
                for f, a in refined:
                    if isinstance(f, GraphFunction):
                        key = (f.graph, self.loop_args(f.graph, a))
                        self.narrowed[key] = {
                            i: args[i] for i, (x, y) in enumerate(zip(a, args)) if x != y
                        }
                return self._join_results(call_branches(self, refined))
        if not fn_node.is_constant and not _is_switch(fn_node):
            # A function value is called on broadened arguments (values known at compile time
            # would make one specialization per call site); partial applications keep them.
            wide = [broaden(a) for a in args]
            return self._join_results(
                [
                    self.call(f, wide if isinstance(f, GraphFunction) else args)
                    for f in in_order(fn.options)
                ]
            )
        calls = [(f, args) for f in in_order(fn.options)]
        if _is_switch(fn_node):
            return self._join_results(call_branches(self, calls))
        return self._join_results([self.call(f, a) for f, a in calls])

    def _join_results(self, results: list[AbstractValue]) -> AbstractValue:
        out: AbstractValue = BOTTOM
        for r in results:
            try:
                out = join(out, r)
            except TypeMismatch as exc:
                self.check_bound([out, r])
                raise MyiaTypeError(
                    f"branches return incompatible types: {exc}{untyped_fields_hint(out, r)}",
                    error_frames(self.calls),
                ) from None
        return out

    # Calls ------------------------------------------------------------------------------------

    def call(self, fn: Any, args: list[AbstractValue]) -> AbstractValue:
        """The abstract result of calling callee `fn` on `args`."""
        partials: list[PartialFunction] = []
        while True:
            if isinstance(fn, GraphFunction):
                return self.call_graph(fn, args, partials)
            if fn is NEVER_CALLED:
                return BOTTOM
            if isinstance(fn, Primitive):
                return self.call_primitive(fn, args)
            if isinstance(fn, PartialFunction):
                partials.append(fn)  # each partial of a partial of `fn`...
                args = [*fn.args, *args]
                fn = fn.fn
                continue
            if isinstance(fn, Operation):
                fn = self.resolve(fn, args)
                continue
            if isinstance(fn, Graph):
                fn = GraphFunction(fn, None)
                continue
            if isinstance(fn, type):
                self._record(fn)
                record = construct_record(self, fn, args)
                check = post_init(fn)
                if check is not None and self.call(check, [record]) is BOTTOM:
                    return BOTTOM  # its ``__post_init__`` always raises
                return record
            from ..grad.api import GradSpec, infer_grad_call
            from ..primitives.batching import TransformSpec

            if isinstance(fn, TransformSpec):  # vmap, jvp
                self._record(fn)
                try:
                    return fn.infer_call(self, args)
                except MyiaError as exc:
                    if not exc.frames:
                        exc.frames = error_frames(self.calls)
                    raise
            if isinstance(fn, GradSpec):
                self._record(fn)
                try:
                    return infer_grad_call(self, fn, args)
                except MyiaError as exc:
                    if not exc.frames:
                        exc.frames = error_frames(self.calls)
                    raise
            from ..frontend.resolve import is_parsable

            if is_parsable(fn):
                from ..frontend import parse

                fn = GraphFunction(parse(fn), None)
                continue
            raise MyiaTypeError(f"{fn!r} is not callable", error_frames(self.calls))

    def resolve(self, op: Operation, args: list[AbstractValue]) -> Any:
        """The callee of operation `op` on arguments `args`."""
        static = op.static if isinstance(op, StaticOperation) else ()
        kinds = []
        for i, a in enumerate(args):
            if isinstance(a, AbstractKeyword):
                a = a.value
            if i in static:
                v = static_value(a)
                if v is ANYTHING:
                    raise MyiaTypeError(
                        f"argument {i + 1} of {op.name} must be known at compile time, "
                        f"got {show(a)}",
                        error_frames(self.calls),
                    )
                kinds.append(v)
            else:
                kinds.append(abstract_kind(a, op, self.calls))
        try:
            return op.resolve(tuple(kinds))
        except Mutation as exc:
            raise self.mutation_error(exc) from None
        except NoMatch as exc:
            self.check_bound(args)
            if exc.args:
                raise MyiaTypeError(exc.args[0], error_frames(self.calls)) from None
            for a in args:
                if isinstance(a, AbstractUnion):
                    raise union_error(a, op, self.calls) from None
            shown = ", ".join(show(a) for a in args)
            raise MyiaTypeError(
                f"unsupported operation {op.name} on ({shown})", error_frames(self.calls)
            ) from None

    def check_bound(self, values: list[AbstractValue]) -> None:
        """Raise the error for a variable read where it may be unassigned, if one is.

        The frontend gives a variable read before any assignment on some path the value
        `Unbound`, made at the read (``if c: y = x`` then ``return y``). Used by an
        operation, or joined with the value of another path, it is that read's error, at
        that read, as Python's ``UnboundLocalError`` is.
        """
        from ..frontend.blocks import Unbound

        for v in values:
            if type(v) is AbstractConstant and type(v.value) is Unbound:
                u = v.value
                frames = error_frames(self.calls)
                if u.location is not None:
                    # The frame of the function that reads it (the value may have been
                    # passed on to a function that uses it) points at the read.
                    mine = [i for i, f in enumerate(frames) if f.function.endswith(u.function)]
                    keep = mine[-1] if mine else len(frames) - 1
                    name = frames[keep].function if mine else u.function
                    frames = [*frames[:keep], Frame(name, u.location)]
                raise MyiaNameError(
                    f"local variable {u.name!r} may be read here before it is assigned: it is "
                    "assigned on some paths only, and Python raises UnboundLocalError on the "
                    f"others; give {u.name!r} a value on every path that reaches this read "
                    "(before the if or loop that assigns it)",
                    frames,
                )

    def mutation_error(self, exc: Mutation) -> MyiaSyntaxError:
        """The error for ``xs.pop()`` used as a value: the one a mutating statement gets."""
        from ..frontend.subset import mutation_message

        node = self.calls[-1][1] if self.calls else None
        loc = node.debug.find_location() if node is not None else None
        text = loc.source_text() if loc is not None else None
        suffix = f".{exc.method}"
        if text is not None and text.endswith(suffix):
            obj = text[: -len(suffix)]
        else:
            obj = f"the {exc.kind.__name__}"
        return MyiaSyntaxError(mutation_message(obj, exc.method), error_frames(self.calls))

    def _record(self, target: Any) -> None:
        """Record that the node being inferred calls `target` (for specialization)."""
        ctx, node, _ = self.calls[-1]
        if node is not None:
            self.targets.setdefault((ctx, node), set()).add(target)

    def call_primitive(self, prim: Primitive, args: list[AbstractValue]) -> AbstractValue:
        self._record(prim)
        if prim is P.apply_star:
            return self.star_call(args)
        if prim is P.array_getitem and len(args) == 2:
            out = self.window_call(args)
            if out is not None:
                return out
        if prim is not P.switch:
            self.check_bound(args)
        args = bind_primitive_args(prim, args, self.calls)
        rule = INFER_RULES.get(prim)
        if rule is None:
            raise MyiaInternalError(f"primitive {prim.name} has no type rule")
        try:
            result = rule(*args)
        except MyiaError as exc:
            if not exc.frames:
                exc.frames = error_frames(self.calls)
            if isinstance(exc, MyiaShapeError) and defer_shape_error(self, exc):
                return BOTTOM
            raise
        except (TypeError, ValueError, IndexError):
            if not any(has_unknown_dims(a) for a in args):
                raise
            # A rule that needs every dimension at compile time.
            shown = ", ".join(show(a) for a in args)
            raise MyiaTypeError(
                f"{prim.name} needs dimensions known at compile time, and some of ({shown}) "
                "are known only at run time (arrays of different shapes joined: two branches, "
                "or a loop whose arrays change shape)",
                error_frames(self.calls),
            ) from None
        if type(result) is AbstractScalar and result.value is ANYTHING and not prim.effect:
            result = _fold(prim, args, result)
        return result

    def call_graph(
        self, fn: GraphFunction, args: list[AbstractValue], partials: Any = ()
    ) -> AbstractValue:
        g = fn.graph
        bound = self.loop_args(g, bind_graph_args(self, fn, args))
        ctx = Context(g, bound, fn.context)
        wide = self._widen_stacks(g, self._widen_dims(g, bound, fn.context), fn.context)
        if wide != bound:
            caller, node, _ = self.calls[-1]
            key = (caller, node, ctx)
            ctx = self.widened[key] = Context(g, wide, fn.context)
        self._record(ctx)
        caller = self.calls[-1][0]
        self.made.setdefault(caller, []).append((fn, ctx, partials))
        self.local_contexts.setdefault((fn, caller), {})[ctx] = None
        self._ref(self.fn_contexts, fn, ctx)
        for partial in partials:
            self._ref(self.partial_contexts, partial, ctx)
        return self.infer_context(ctx)

    def _widen_dims(self, g: Graph, args: tuple[AbstractValue, ...], parent: Any) -> Any:
        """The arguments of a call of graph `g`, widened to unknown dimensions where needed.

        A loop whose state changes shape at every iteration (``y = np.concatenate([y, x])``)
        would have a context per iteration. When `g` already runs twice on the stack (the
        loop took a step that changed a shape, then another), each argument that joins with
        the previous call's into arrays of unknown dimensions is replaced by that join (as
        abstract interpretation widens): the next call finds the same context and the
        fixpoint ends. A shape that changes once (an RNN's ``h`` of shape ``(1, H)``, then
        ``(B, H)``) keeps its known dimensions, and so does a loop whose calls differ in other
        ways too (over a tuple of layers). A graph made from one specialized with
        unknown dimensions (`declare_unknown_dims`) has its arguments widened to its
        parameters' types at once.
        """
        declared = g.flags.get("param_types")
        if declared is not None:
            # Made from a graph specialized with unknown dimensions (its gradient).
            args = tuple(
                widen_dims(t, a) if t is not None else a
                for t, a in itertools.zip_longest(declared, args)
                if a is not None
            )
        if not self.is_recursive(g):
            return args
        seen = []
        for c in reversed(self.stack):
            if c.graph is g and (c.parent is parent or c.parent == parent):
                seen.append(c)
                if len(seen) == 2:
                    break
        else:
            return args
        prev = seen[0].args
        if prev == args or len(prev) != len(args):
            return args
        if any(a != b and widen_dims(a, b) != widen_dims(b, a) for a, b in zip(prev, args)):
            # The calls differ otherwise too (the iterator of a loop over a tuple of layers,
            # which shrinks): each iteration keeps its own context and known shapes.
            return args
        return tuple(widen_dims(a, b) for a, b in zip(prev, args))

    def star_call(self, args: list[AbstractValue]) -> AbstractValue:
        """``apply_star(f, t, d...)``, inferred as the call it stands for, written out.

        The call ``f(t[0], ..., k=d["k"], ...)`` is made of nodes of its own
        (`star_nodes`, one set per node and shape), inferred in place of the node; the
        specializer emits them instead of ``apply_star``.
        """
        ctx, node, values = self.calls[-1]
        if node is None or not (node.is_apply and node.inputs[0].is_constant):
            raise MyiaTypeError("a call with * or ** must be written in the code")
        shape = star_shape(self, args)
        key = (node, shape)
        made = self.star_calls.get(key)
        if made is None:
            made = self.star_calls[key] = star_nodes(node, shape)  # type: ignore[arg-type]
        try:
            for m in made:
                self.calls[-1] = (ctx, m, values)  # (an error shows the call written out)
                values[m] = self.infer_apply(m, ctx, values)
        finally:
            self.calls[-1] = (ctx, node, values)
        return values[made[-1]]

    def window_call(self, args: list[AbstractValue]) -> AbstractValue | None:
        """``a[i:i + k]``, inferred as the windows it stands for (`myia.infer.windows`).

        None where the index has no window, or its slices are not visible in the code.
        """
        ctx, node, values = self.calls[-1]
        if node is None or not node.is_apply:
            return None
        plan = window_plan(*args)
        made = None
        if plan is not None and values.get(node.inputs[-1]) == args[1]:
            made = self.window_calls.get((node, plan)) or window_nodes(node, plan)  # type: ignore[arg-type]
        if made is None:
            # (Inferred again without windows: an approximation of a recursion changed.)
            self.window_made.pop((ctx, node), None)
            return None
        self.window_calls[(node, plan)] = made
        self.window_made[(ctx, node)] = made
        try:
            for m in made:
                self.calls[-1] = (ctx, m, values)
                values[m] = self.infer_apply(m, ctx, values)
        finally:
            self.calls[-1] = (ctx, node, values)
        return values[made[-1]]

    def cases(
        self, node: Apply, k: int, a: AbstractValue, ctx: Context, values: dict[Node, Any]
    ) -> AbstractValue:
        """`node`, whose argument `k` is union of tuples `a`, made once per length.

        The call made (`myia.infer.cases`), one per node and union, is inferred in place of
        `node`; the specializer emits it instead.
        """
        lengths, others = lengths_of(a)
        key = (node, k, (lengths, others))
        made = self.case_calls.get(key)
        if made is None:
            made = self.case_calls[key] = case_call(node, k, lengths, others)
        self.case_made[(ctx, node)] = made
        self.calls[-1] = (ctx, made, values)
        try:
            values[made] = self.infer_apply(made, ctx, values)
        except MyiaTypeError as exc:
            if not getattr(exc, "cases", False):
                exc.cases = True  # type: ignore[attr-defined]
                exc.message += _cases_hint(node.inputs[k + 1], lengths)
                exc.args = (exc.message,)
            raise
        finally:
            self.calls[-1] = (ctx, node, values)
        return values[made]

    def is_recursive(self, g: Graph) -> bool:
        """Whether `g` can call itself (loops and recursive functions)."""
        return self.scopes.is_recursive(g)

    def loop_args(self, g: Graph, args: Any) -> tuple[AbstractValue, ...]:
        """The arguments of a call of `g` as its context holds them.

        Those of a recursive graph are broadened (their values may change at every call),
        except at the positions its recursion passes on unchanged (`invariant_parameters`).
        """
        if not self.is_recursive(g):
            return tuple(args)
        keep = self.scopes.invariant_parameters(g)
        return tuple(a if i in keep else broaden(a) for i, a in enumerate(args))


def _cases_hint(subject: Node, lengths: tuple[int, ...]) -> str:
    """What an error in an operation made per length of a union of tuples adds."""
    name = subject.debug.find_name()
    what = f"`{name}`" if name and name.isidentifier() else "the value"
    shown = " or ".join([", ".join(map(str, lengths[:-1])), str(lengths[-1])])
    return (
        f" ({what} is a tuple of length {shown}, known at run time only: branches made "
        f"tuples of different lengths; test its length first, e.g. "
        f"`if len({name if name and name.isidentifier() else 't'}) == {lengths[-1]}:`)"
    )


def _is_switch(node: Node) -> bool:
    return node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is P.switch


@functools.cache
def _dead_class() -> type:
    from .specialize import Dead

    return Dead

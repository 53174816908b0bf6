"""Function values in specialization: calls that choose among functions at run time.

A top-level function (or one that captures nothing) is called through its specialization for
each call's arguments. Chosen at run time among several (``fn = sq if c else neg``) and called
with several types, a call tests which function the value is (`dispatch`): as a value, each is
one of its specializations, the same everywhere (`representative`). A closure called with
arguments that differ only in which scalars are Python scalars (a loop whose variable starts
as ``0.0``) is one specialization, called with its arguments converted (`merged_contexts`).
These are methods of `Specializer` (`myia.infer.specialize`).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from ..abstract.data import (
    ANYTHING,
    BOTTOM,
    AbstractArray,
    AbstractFunction,
    AbstractList,
    AbstractScalar,
    AbstractTuple,
    AbstractUnion,
    AbstractValue,
    GraphFunction,
    PartialFunction,
    in_order,
    show,
)
from ..abstract.lattice import TypeMismatch, broaden, erase_functions, join, join_shapes
from ..errors import MyiaTypeError
from ..ir.analysis import captures
from ..ir.node import Apply, Constant, Graph, Node, Parameter
from ..primitives import P
from .binding import _is_kwarg, _same_input, bind_graph_nodes
from .calls import bind_graph_args
from .engine import Context, Inferrer, _is_switch
from .lifting import LiftClosure
from .registry import INFER_RULES
from .rulelib import py_bool
from .traceback import error_frames, user_name


class Dead:
    """Stands for a function that is never called (a branch never taken).

    `DEAD` stands for every branch never taken. A function value never called but compared
    (``is_``: the test of `dispatch`, once a gradient inlined the calls it chose among) has
    one of its own, `named` after it: values of different functions are different objects.
    """

    def __init__(self, name: str | None = None):
        self.name = name

    def __repr__(self) -> str:
        return "DEAD" if self.name is None else f"DEAD({self.name})"


DEAD = Dead()


class FunctionValues:
    """The methods of `Specializer` that handle function values chosen at run time."""

    inf: Inferrer
    graphs: dict[Context, Graph]
    reps: dict[GraphFunction, Graph]
    merged: dict[frozenset[Context], Context]
    merged_target: dict[Context, Context]
    graph_for: Any
    target: Any
    convert: Any
    _const: Any

    def merged_value(self, fn: GraphFunction) -> Context | None:
        """The one context of closure `fn` standing for all, if they differ in weak scalars."""
        if _captures_nothing(fn):
            return None
        ctxs = list(self.inf.fn_contexts.get(fn, ()))
        if len(ctxs) < 2:
            return None
        got = self.merged_contexts(fn, ctxs)
        return got[0] if len(got) == 1 else None

    def merged_contexts(self, fn: GraphFunction, ctxs: list[Context]) -> list[Context]:
        """The one context standing for `ctxs` (of one closure) if they differ in weak scalars.

        They may differ only in which of their scalars are Python scalars (weak) and which
        NumPy's. A loop whose variable starts as a Python float (``c = 0.0``) and becomes a NumPy
        float gives a context per kind; a closure it calls (a backpropagator, a step
        function defined in the loop's function) is called with both. One value is one
        graph: the context whose scalars are NumPy's where any is, its arguments and result
        converted where the call's are weak (`weak_call`). So too where they differ in
        which dimensions of their arrays are known: the backward pass of a loop whose first
        iteration has arrays of known shapes (``x[:i + 1]`` at ``i = 0``) calls their
        backpropagators with sensitivities of the shapes of every iteration (unknown); the
        context of unknown dimensions stands for the others. Otherwise `ctxs` as they are.
        """
        key = frozenset(ctxs)
        got = self.merged.get(key)
        if got is not None:
            return [got]
        want = tuple(_weak_join([c.args[i] for c in ctxs]) for i in range(len(ctxs[0].args)))
        if any(len(c.args) != len(want) for c in ctxs) or any(
            not _below(a, b) for c in ctxs for a, b in zip(c.args, want)
        ):
            return ctxs
        chosen = next((c for c in ctxs if c.args == want), None)
        if chosen is None:
            return ctxs
        results = []
        for c in ctxs:
            self.inf.finalize(c)
            results.append(self.inf.result_of(c))
        target = results[ctxs.index(chosen)]
        # (A union's result may cover the others': a backpropagator called with the
        # sensitivity of a union of tuples, and with that of one of them.)
        if any(r is None or target is None or not _below(r, target) for r in results):
            return ctxs
        self.merged[key] = chosen
        for c in ctxs:
            self.merged_target[c] = chosen
        return [chosen]

    def weak_call(
        self,
        target: Context,
        fn_ref: Node,
        bound: list[Node],
        result: AbstractValue,
        node: Apply,
        new: Graph,
    ) -> Node:
        """A call of a closure whose one context is `target` (`merged_contexts`).

        The arguments are converted to its types, its result to the call's.
        """
        args = [
            b if b.abstract == a else self.convert(b, a, new) for b, a in zip(bound, target.args)
        ]
        app = Apply([fn_ref, *args], new, node.debug.derive())
        app.abstract = self.inf.result_of(target)
        if app.abstract == result:
            return app
        return self.convert(app, result, new)

    def lift_or_error(self, fn: GraphFunction, ctxs: list[Context]) -> MyiaTypeError:
        """The error that has closure `fn`, called with several types, lifted (`LiftClosure`).

        The program compiles again with `fn` a partial application of a closed graph to
        the values it captures (`myia.infer.lifting`); `polymorphic_value_error` if it
        cannot be.
        """
        error = self.polymorphic_value_error(fn, ctxs)
        if hasattr(fn.graph, "abstract"):  # a graph Myia made, not one parsed
            return error
        return LiftClosure(fn.graph, error)

    def polymorphic_value_error(self, fn: GraphFunction, ctxs: list[Context]) -> MyiaTypeError:
        """The error for function value `fn` called with several argument types (`ctxs`).

        One value is one specialized graph, so this is not supported yet; the traceback
        shows where the function is defined and one call for each type.
        """
        sites: list[tuple[tuple[int, int], str, Any]] = []
        for c in ctxs:
            call = next(((k, n) for (k, n), t in self.inf.targets.items() if c in t), None)
            loc = call[1].debug.find_location() if call is not None else None
            site = (call[0], call[1], self.inf.node_values.get(call[0], {})) if call else None
            types = f"({', '.join(map(show, c.args))})"
            sites.append(((loc.line, loc.column) if loc is not None else (0, 0), types, site))
        sites.sort(key=lambda s: s[0])
        loc = fn.graph.debug.find_location()
        where = f" (defined at {loc.filename}:{loc.line})" if loc is not None else ""
        shown = " and ".join(s[1] for s in sites)
        if len({s[1] for s in sites}) < len(sites):
            shown += " (they differ in which scalars are Python scalars and which NumPy's)"
        return MyiaTypeError(
            f"the function {user_name(fn.graph.name)}{where} is called with different argument "
            "types: "
            f"{shown}; Myia needs one type per function value "
            "(not supported yet): call it with arguments of one type, or make one function "
            "value per type",
            error_frames([s[2] for s in sites if s[2] is not None]),
        )

    def dead_branch(self, switch: Apply, cond: AbstractValue) -> None:
        """Make DEAD the branch of `switch` that its condition never takes.

        The condition is known at compile time; the branch may have been specialized for
        other types (the body of a loop over a tuple, after the last element) and is no part
        of the program here.
        """
        v = getattr(cond, "value", ANYTHING)
        if v is not True and v is not False or len(switch.inputs) != 4:
            return
        i = 3 if v else 2
        branch = switch.inputs[i]
        if branch.is_constant and isinstance(branch.value, Graph):
            switch.inputs[i] = self._const(DEAD, branch, branch.abstract)

    def needs_dispatch(self, fn_abs: AbstractValue, fn_node: Node) -> bool:
        """Whether a call of a function chosen at run time picks its specialization then.

        Top-level functions (and functions that capture nothing) are called through their
        specialization for each call's arguments; chosen at run time among several, one of
        which is called with several types (``fn = sq if c else neg; fn(x), fn(1)``), the
        call tests which function the value is (`dispatch`).
        """
        if not isinstance(fn_abs, AbstractFunction) or len(fn_abs.options) < 2:
            return False
        if _is_switch(fn_node):
            return False
        opts = in_order(fn_abs.options)
        several = [
            f
            for f in opts
            if _dispatchable(f)
            and (
                len(self.inf.fn_contexts.get(f, ())) > 1
                or len(self.inf.partial_contexts.get(f, ())) > 1  # type: ignore[call-overload]
            )
        ]
        if not several:
            return False
        others = [f for f in opts if not isinstance(f, (GraphFunction, PartialFunction))]
        if others:
            names = ", ".join(sorted(getattr(f, "name", repr(f)) for f in others))
            raise MyiaTypeError(
                f"this call chooses at run time between {_name(several[0])} (called with "
                f"several argument types) and {names}: Myia cannot tell them apart (not "
                f"supported yet); wrap {names} in a function (``lambda v: f(v)``)",
                error_frames(self.inf.calls),
            )
        return all(map(_dispatchable, opts))

    def refuse_transform_choice(self, fn_abs: AbstractValue) -> None:
        """Refuse a call of a transformed function chosen at run time among several.

        ``grad(f)``, ``jvp(f, ...)`` or ``vmap(f)`` of ``f = g if c else h`` (or ``grad(g) if
        c else grad(h)``): each transformed function is built at compile time, and the call
        cannot tell at run time which to call (not supported yet). An ``if`` statement
        assigning ``f`` in each branch transforms each function on its own path.
        """
        if not isinstance(fn_abs, AbstractFunction) or len(fn_abs.options) < 2:
            return
        from ..primitives.batching import TransformSpec
        from ..primitives.grad_value import GradSpec

        specs = [f for f in in_order(fn_abs.options) if isinstance(f, (GradSpec, TransformSpec))]
        if not specs:
            return
        what = specs[0].name.split("(")[0]
        names = sorted(_shown(_name(s.fn)) for s in specs)
        raise MyiaTypeError(
            f"{what} of a function chosen at run time (here one of {', '.join(names)}) is not "
            f"supported yet: choose the function with an `if` statement (``if c: f = ... "
            f"else: f = ...``) or apply {what} in each branch, not with a conditional "
            f"expression or a value holding several functions",
            error_frames(self.inf.calls),
        )

    def dispatch(
        self,
        fn_abs: AbstractFunction,
        fn_ref: Node,
        bound: list[Node] | dict[Any, list[Node]],
        arg_abs: list[AbstractValue],
        node: Apply,
        ctx: Context,
        values: dict[Node, AbstractValue],
    ) -> Apply:
        """A call of function value `fn_ref`, one of `fn_abs`'s options, on `bound`.

        ``D1(fn, args)`` where ``Dk(fn, args) = switch(is_(fn, Fk), Wk, Dk+1)(fn, args)``
        and ``Wk(fn, args) = Fk'(args)``: ``Fk'`` is the specialization of the k-th function
        for these arguments, ``Fk`` the graph standing for it as a value (`representative`).
        Each ``Wk`` converts its result to the call's (joined) type. Where the options bind
        the call differently (`bind_options` gives each its arguments: defaults), ``args``
        holds all of them, and ``Wk`` passes its own.
        """
        new = self.graphs[ctx]
        result = values[node]
        want = erase_functions(result)
        dbg = node.debug
        # Functions first: the test of a partial application reads its function.
        opts = sorted(fn_abs.options, key=_option_key)  # type: ignore[arg-type]
        per = bound if isinstance(bound, dict) else dict.fromkeys(opts, bound)
        flat = bound if isinstance(bound, list) else [n for f in opts for n in per[f]]
        start = {f: 0 for f in opts}
        if isinstance(bound, dict):
            for k, f in enumerate(opts):
                start[f] = sum(len(per[o]) for o in opts[:k])
        types = [fn_ref.abstract, *(b.abstract for b in flat)]

        def graph(name: str) -> tuple[Graph, list[Parameter]]:
            g = Graph(name)
            g.debug = dbg.derive()
            ps = [g.add_parameter(debug=dbg.derive()) for _ in types]
            for p_, t in zip(ps, types):
                p_.abstract = t
            g.abstract = want
            return g, ps

        nxt: Graph | None = None
        for f in reversed(opts):
            fn, pargs = _unpartial(f)
            # A function value is called on broadened arguments, a partial application on
            # the call's (as inference called them).
            args = [*pargs, *arg_abs] if pargs else [broaden(a) for a in arg_abs]
            tctx = self.target(fn, args, node, ctx, values)
            t = self.graph_for(tctx)
            self.inf.finalize(tctx)
            res = self.inf.result_of(tctx)
            rep = self.representative(fn, t)
            w, ps = graph(f"{t.name}:dispatch")
            mine = ps[1 + start[f] : 1 + start[f] + len(per[f])]
            if isinstance(f, PartialFunction):
                # The arguments this partial application bound (it is the one applying
                # `rep`: the test below chose it).
                ps[0].abstract = AbstractFunction(frozenset([f]))
                held = []
                for i, a in enumerate(pargs):
                    pa = [P.partial_arg, ps[0], i, rep, -1]
                    arg = Apply(
                        [self._const(v, node, None) if k != 1 else v for k, v in enumerate(pa)],
                        w,
                        dbg.derive(),
                    )
                    arg.abstract = a
                    held.append(arg)
                mine = [*held, *mine]
            call = Apply([self._const(t, node, None), *mine], w, dbg.derive())
            call.abstract = res
            w.output = self.convert(call, want, w) if not _returns(res, want) else call
            if nxt is None:
                nxt = w
                continue
            d, ps = graph(f"{t.name}:choose")
            is_ = self._const(P.is_, node, None)
            which: Node = ps[0]
            if isinstance(f, PartialFunction):
                which = Apply([self._const(P.partial_fn, node, None), ps[0]], d, dbg.derive())
                which.abstract = AbstractFunction(
                    frozenset(o.fn for o in fn_abs.options)  # type: ignore[union-attr]
                )
            test = Apply([is_, which, self._const(rep, node, None)], d, dbg.derive())
            test.abstract = py_bool()
            sw_in = [self._const(P.switch, node, None), test]
            sw = Apply([*sw_in, self._const(w, node, None), self._const(nxt, node, None)], d)
            sw.abstract = INFER_RULES[P.switch](*(i.abstract for i in sw.inputs[1:]))
            out = Apply([sw, *ps], d, dbg.derive())
            out.abstract = want
            d.output = out
            nxt = d
        assert nxt is not None
        app = Apply([self._const(nxt, node, None), fn_ref, *flat], new, dbg.derive())
        app.abstract = result
        return app

    def representative(self, fn: GraphFunction, target: Graph) -> Graph:
        """The specialized graph standing for top-level function `fn` as a value.

        `fn` is called through its specialization for each call's arguments; as a value
        tested by `dispatch`, it is one of them (`target`, the first a dispatch calls), the
        same everywhere in the program. Being called, it stays one function when the program
        is differentiated (the forward graph of one specialization).
        """
        return self.reps.setdefault(fn, target)

    def bind_options(
        self,
        fn_abs: AbstractFunction,
        refs: list[Node],
        arg_nodes: list[Node],
        arg_abs: list[AbstractValue],
        node: Apply,
        ctx: Context,
        values: dict[Node, AbstractValue],
    ) -> list[Node] | dict[Any, list[Node]]:
        """Positional arguments of a call to a function chosen at run time among `fn_abs`.

        Keywords, defaults and ``*args`` are bound at compile time: where the functions it
        may call bind the arguments alike, that binding; where they bind them differently
        (other defaults, other parameters) and the call can test which it calls
        (`dispatch`), each one's; else a `MyiaTypeError`.
        """
        options = in_order(fn_abs.options)

        def positional(f: Any) -> bool:
            # A primitive or operation takes the arguments as they are.
            f, bound = _unpartial(f)
            if not isinstance(f, GraphFunction):
                return True
            g = f.graph
            return len(g.parameters) == len(bound) + len(refs) and not (
                g.flags.get("vararg") or g.flags.get("kwarg") or g.kwonly
            )

        if all(map(positional, options)) and not any(_is_kwarg(a) for a in arg_nodes):
            return refs
        bindings = []
        for option in options:
            # A partial application binds its arguments in front of the call's (`holes`).
            f, bound = _unpartial(option)
            if not isinstance(f, GraphFunction):
                raise MyiaTypeError(
                    "a function chosen at run time among functions and other callables "
                    "must be called with positional arguments only",
                    error_frames([*self.inf.calls, (ctx, node, values)]),
                )
            self.inf.calls.append((ctx, node, values))
            try:
                bind_graph_args(self.inf, f, [*bound, *arg_abs])
            finally:
                self.inf.calls.pop()
            holes: list[Node] = [Constant(None) for _ in bound]
            nodes = bind_graph_nodes(f.graph, holes + refs, holes + arg_nodes, self.graphs[ctx])
            bindings.append(nodes[len(bound) :])
        first = bindings[0]
        for other in bindings[1:]:
            if len(other) != len(first) or not all(map(_same_input, first, other)):
                if all(_dispatchable(f) for f in options):
                    # Each binds the call its own way (``def f1(x, k=2.0)``, ``def f2(x,
                    # k=3.0)``): the call tests which it calls (`dispatch`).
                    return dict(zip(options, bindings))
                names = ", ".join(sorted(_unpartial(f)[0].graph.name for f in options))
                error = MyiaTypeError(
                    f"the functions this call may call ({names}) bind its arguments "
                    "differently (parameter names, order or defaults): call them with "
                    "positional arguments, or give them the same parameters",
                    error_frames([*self.inf.calls, (ctx, node, values)]),
                )
                closure = next(
                    (
                        f.graph
                        for f in map(lambda o: _unpartial(o)[0], options)
                        if isinstance(f, GraphFunction)
                        and not _captures_nothing(f)
                        and not hasattr(f.graph, "abstract")
                    ),
                    None,
                )
                # A closure among them is lifted, to be told apart as a partial application.
                raise error if closure is None else LiftClosure(closure, error)
        return first


def _weak_join(items: list[AbstractValue]) -> AbstractValue:
    """`items` (equal but for weak scalars) with a NumPy scalar where any is one.

    Where one is a union and the others are below it (the sensitivity of a value of a union
    type, and that of one of its members: a backpropagator called with both), the union.
    """
    first = items[0]
    union = next((a for a in items if isinstance(a, AbstractUnion)), None)
    if union is not None and all(_below(a, union) for a in items):
        return union
    if isinstance(first, AbstractScalar) and all(isinstance(a, AbstractScalar) for a in items):
        weak = all(a.weak for a in items)  # type: ignore[attr-defined]
        return dataclasses.replace(first, weak=weak) if first.weak != weak else first
    if isinstance(first, AbstractArray) and all(
        isinstance(a, AbstractArray)
        and a.dtype == first.dtype
        and len(a.shape) == len(first.shape)
        for a in items
    ):
        # The dimensions they do not all agree on, unknown.
        shape = functools.reduce(join_shapes, (a.shape for a in items))  # type: ignore[attr-defined]
        return AbstractArray(first.dtype, shape)
    if isinstance(first, AbstractList) and all(
        isinstance(a, AbstractList) and a.value is ANYTHING for a in items
    ):
        return AbstractList(_weak_join([a.element for a in items]))  # type: ignore[attr-defined]
    if isinstance(first, AbstractTuple) and all(
        isinstance(a, AbstractTuple) and len(a.elements) == len(first.elements) for a in items
    ):
        return AbstractTuple(
            tuple(
                _weak_join([a.elements[i] for a in items])  # type: ignore[attr-defined]
                for i in range(len(first.elements))
            )
        )
    return first


def _same_but_weak(a: AbstractValue, b: AbstractValue) -> bool:
    """Whether `a` passes as `b`: equal but for weak scalars and unknown dimensions.

    Which scalars are weak may differ, and dimensions of `a`'s arrays may be unknown in
    `b`'s (the same runtime value, typed less precisely).
    """
    if isinstance(a, AbstractScalar) and isinstance(b, AbstractScalar):
        return a.dtype == b.dtype and a.value == b.value
    if isinstance(a, AbstractTuple) and isinstance(b, AbstractTuple):
        return len(a.elements) == len(b.elements) and all(
            map(_same_but_weak, a.elements, b.elements)
        )
    if isinstance(a, AbstractArray) and isinstance(b, AbstractArray):
        return (
            a.dtype == b.dtype
            and len(a.shape) == len(b.shape)
            and all(db is None or da == db for da, db in zip(a.shape, b.shape))
        )
    if isinstance(a, AbstractList) and isinstance(b, AbstractList):
        return b.value is ANYTHING and _same_but_weak(a.element, b.element)
    return a == b


def _below(a: AbstractValue, want: AbstractValue) -> bool:
    """Whether an argument of type `a` is passed as one of type `want` (`merged_contexts`)."""
    if isinstance(want, AbstractUnion) and not isinstance(a, AbstractUnion):
        try:
            return join(a, want) == want
        except TypeMismatch:
            return False
    return _same_but_weak(a, want)


def _option_key(f: Any) -> tuple[Any, ...]:
    """A deterministic order of the functions a call may call, partial applications last."""
    last = isinstance(f, PartialFunction)
    f = _unpartial(f)[0]
    loc = f.graph.debug.find_location()
    return (last, f.graph.name, loc.filename if loc else "", loc.line if loc else 0, id(f.graph))


def _unpartial(f: Any) -> tuple[Any, list[AbstractValue]]:
    """The function partial application `f` calls, and the arguments it binds in front."""
    bound: list[AbstractValue] = []
    while isinstance(f, PartialFunction):
        bound[:0] = f.args
        f = f.fn
    return f, bound


def _dispatchable(f: Any) -> bool:
    """Whether `dispatch` can tell option `f` of a call apart from the others at run time.

    A function that captures nothing is tested by identity; a partial application of one, by
    the function it applies.
    """
    if isinstance(f, PartialFunction):
        f = f.fn
    return isinstance(f, GraphFunction) and _captures_nothing(f)


def _shown(name: str) -> str:
    """A graph's name as a user reads it: ``f:lambda`` is "a lambda in f"."""
    base, _, block = name.partition(":")
    return f"a lambda in {base}" if block == "lambda" else user_name(name)


def _name(f: Any) -> str:
    """The name of the function `f` is, or applies."""
    return str(_unpartial(f)[0].graph.name)


def _captures_nothing(fn: GraphFunction) -> bool:
    """Whether function value `fn` reads no variable of an enclosing function.

    Such a function (a top-level one, or a lambda that captures nothing) is called through
    its specialization for each call's arguments, wherever the value goes.
    """
    return fn.context is None or not captures(fn.graph)


def _returns(result: AbstractValue, want: AbstractValue) -> bool:
    """Whether a function whose result is `result` needs no convert to return `want`.

    A result ⊥ (a loop that returns through another of its blocks, as inference sees it) has
    no value to convert; converting it would take a tail call out of tail position.
    """
    return result is BOTTOM or erase_functions(result) == want

"""How inference gives a loop of a gradient one context, not one per path through it.

The forward loop of a loop's gradient (`myia.grad.loops`) carries a stack per block of the
loop: empty at first (its element type ⊥, or no function), then holding what the block pushed.
Typed by the stacks pushed on so far, the loop would have a context per set of paths taken
through its branches (``break``, ``continue``, ``if``), exponentially many: the second order
of two nested loops with a ``break`` and two ``continue`` inferred 13276 contexts of 622
graphs, in minutes. `LoopStacks`, a part of `myia.infer.engine.Inferrer`, joins the stacks
of a loop's calls after its first iteration instead, and keeps what specialization reads of
the calls made consistent with the contexts interpreted last.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from ..abstract.data import (
    AbstractDict,
    AbstractFunction,
    AbstractList,
    AbstractRecord,
    AbstractScalar,
    AbstractStack,
    AbstractTuple,
    AbstractUnion,
    AbstractValue,
    GraphFunction,
    PartialFunction,
    show,
)
from ..abstract.lattice import TypeMismatch, all_empty, erase_stacks, holds_stack, join
from ..ir.node import Graph

if TYPE_CHECKING:
    from .engine import Context


#: How many times the join of a loop's stacks may grow before its calls keep their arguments.
MAX_GROWTHS = 32


class Superseded(BaseException):
    """A context being interpreted is narrower than its loop's stacks now: its caller redoes.

    Raised where the join of a loop's stacks grows (`LoopStacks._widen_stacks`) past the
    arguments of a context on the stack, at depth `depth`; the interpretation of its caller
    (one level down) catches it and starts again, its call now going to the widest context.
    A `BaseException`, as it passes through the rules that catch errors of their own.
    """

    def __init__(self, depth: int) -> None:
        super().__init__(depth)
        self.depth = depth


class LoopStacks:
    """The methods of `Inferrer` that join the stacks of a loop's calls."""

    stack_args: dict[tuple[Graph, Any, tuple[AbstractValue, ...]], Any]
    stack_growths: int
    made: dict[Any, list[tuple[Any, Any, Any]]]
    call_counts: dict[tuple[int, Any, Any], int]
    fn_contexts: dict[Any, dict[Any, None]]
    local_contexts: dict[tuple[Any, Any], dict[Any, None]]
    partial_contexts: dict[Any, dict[Any, None]]
    is_recursive: Any
    stack: list[Any]
    closure_alias: dict[Any, Any]
    closure_reps: dict[GraphFunction, GraphFunction]
    node_values: dict[Any, Any]
    scopes: Any

    def _widen_stacks(self, g: Graph, args: tuple[AbstractValue, ...], parent: Any) -> Any:
        """The arguments of a call of recursive graph `g`, their stacks joined with earlier calls'.

        A call whose arguments are those of an earlier call of `g` (in the same parent) but
        for what their stacks hold goes to the context of the join of all such calls, as a
        loop variable takes the join of the values it is given: a loop has a context per step
        of that growth, not one per path. A context being interpreted when the join grows is
        interpreted again (`infer_context`), so that its calls of the loop all reach the
        widest, and one the join widens is replaced by the widest (`_supersede`). A stack typed
        as possibly holding something where it is empty is tested for emptiness at run time:
        no value changes.

        A call whose stacks are all empty (the loop's first iteration, from its entry) keeps
        its own context: the loop then starts with what that iteration pushed, as backends
        expect (the JAX backend's stacks of a weight, `myia.compile.jax_runtime.uniform`, and
        of a carried value, `myia.compile.jax_lags`, start at their first push).
        """
        if not self.is_recursive(g) or not any(map(holds_stack, args)):
            return args
        if all(map(all_empty, args)):
            return args
        key = (g, parent, tuple(map(erase_stacks, args)))
        old, grown = self.stack_args.get(key, (None, 0))
        if old is None:
            args = self._merge_closures(args, frozenset())
            self.stack_args[key] = (args, 0)
            return args
        if grown > MAX_GROWTHS:
            # Types that grow without end (a closure pushed whose context holds the stack it
            # is pushed on, and whose captures differ in type from the earlier ones': see
            # `_merge_closures`): each call keeps its arguments, as a recursion whose arguments
            # change at every call (an error of inference, not an endless loop of it).
            return args
        try:
            wide = tuple(map(join, old, args))
        except TypeMismatch:
            return args
        wide = self._merge_closures(wide, frozenset(_graph_functions(old)))
        if wide != old:
            # The contexts being interpreted may have called narrower ones: they are
            # interpreted again (`infer_context`).
            self.stack_args[key] = (wide, grown + 1)
            self.stack_growths += 1
            self._supersede(key, wide)
        return wide

    def _merge_closures(self, args: tuple[AbstractValue, ...], keep: frozenset) -> Any:
        """`args` with the closures of one graph held in their stacks made one option.

        A block of a loop that makes a closure and pushes it (the backpropagator of a branch,
        in the second order of a loop) makes it in a context whose arguments hold the stack
        it pushes on: each iteration's closure has a new type (its context holds the stack of
        the previous ones), and the join of the loop's stacks grows without end. Two closures
        of one graph whose captured values have the same types but for the contexts of the
        closures among them are one option here: the one in `keep` (the join so far), else
        the first made. The other's contexts stand for the option's (`closure_alias`): the
        closure pushed is called as the option is, and specialization makes the graph of each
        from the calls of the option's (`Specializer.indirect`).
        """
        merge = functools.partial(self._one_per_graph, keep=keep)
        return tuple(_map_stack_functions(a, merge) for a in args)

    def _one_per_graph(self, fn: AbstractFunction, keep: frozenset) -> AbstractFunction:
        """`fn` with its closures of one graph merged into one (`_merge_closures`)."""
        by_graph: dict[Any, list[GraphFunction]] = {}
        for o in fn.options:
            if type(o) is GraphFunction and o.context is not None:
                by_graph.setdefault(o.graph, []).append(o)
        drop = set()
        for same in by_graph.values():
            if len(same) < 2:
                continue
            same.sort(key=lambda o: (o not in keep, _context_size(o.context)))
            rep = same[0]
            for other in same[1:]:
                if self.same_captures(rep, other):
                    drop.add(other)
                    if self.closure_rep(rep) != other:
                        # (Where `other` is `rep`'s already, a join elsewhere kept it: one
                        # of the two stands for the other, not each for the other.)
                        self.closure_reps.setdefault(other, rep)
                    self._alias_chain(other.context, rep.context)
        return AbstractFunction(fn.options - drop) if drop else fn

    def same_captures(
        self, a: GraphFunction, b: GraphFunction, seen: set | None = None, wider: bool = False
    ) -> bool:
        """Whether closures `a` and `b` of one graph capture values of the same types.

        Closures among the values are of the same graphs, and capture values of the same
        types in turn (`seen`: the pairs compared already). With `wider`, `b`'s may also be
        wider than `a`'s (a number whose value `a` knows and `b` does not).
        """
        seen = set() if seen is None else seen
        if a == b or (a, b) in seen:
            return True
        seen.add((a, b))
        for n in self.scopes.free_variables_total.get(a.graph, ()):
            va, vb = self._captured(n, a.context), self._captured(n, b.context)
            if va is None or vb is None or not _same_shape(va, vb, wider):
                return False
            pairs = _closure_pairs(va, vb)
            if pairs is None or not all(self.same_captures(x, y, seen, wider) for x, y in pairs):
                return False
        return True

    def _captured(self, node: Any, ctx: Any) -> Any:
        """The value of free variable `node` in context chain `ctx` (None if unknown)."""
        while ctx is not None and ctx.graph is not node.graph:
            ctx = ctx.parent
        if ctx is None:
            return node.abstract if node.is_constant or node.abstract is not None else None
        return self.node_values.get(ctx, {}).get(node)

    def _alias_chain(self, ctx: Any, rep: Any) -> None:
        """Record that each context of chain `ctx` stands for the one of chain `rep`."""
        while ctx is not None and rep is not None and ctx is not rep and ctx != rep:
            self.closure_alias.setdefault(ctx, rep)
            ctx, rep = ctx.parent, rep.parent

    def closure_rep(self, fn: GraphFunction) -> GraphFunction | None:
        """The closure that closure `fn` was merged with (`_merge_closures`), if any.

        A closure made in a context that stands for another (`closure_alias`: the context of
        a merged closure, or one of its calls) stands for the same closure made there.
        """
        rep = self.closure_reps.get(fn)
        while rep is not None and rep in self.closure_reps:
            rep = self.closure_reps[rep]
        if rep is not None:
            return rep
        ctx = self._alias_of(fn.context)
        return None if ctx is fn.context else GraphFunction(fn.graph, ctx)

    def _alias_of(self, ctx: Any) -> Any:
        """The context that `ctx` stands for (itself, or with an ancestor that stands for one)."""
        if ctx is None:
            return None
        got = self.closure_alias.get(ctx)
        if got is not None:
            return got
        parent = self._alias_of(ctx.parent)
        return ctx if parent is ctx.parent else type(ctx)(ctx.graph, ctx.args, parent)

    def _supersede(self, key: tuple[Graph, Any, tuple[AbstractValue, ...]], wide: Any) -> None:
        """Unwind to the caller of the first context on the stack that `wide` widens, if any.

        Left to finish, such a context would be a fixpoint of its own that no call reaches
        once its callers are interpreted again, and the contexts of the loop it reached, made
        members of a recursion it headed, would keep results that miss what flows through it
        (a loop's exits: their backpropagators never called, specialized as dead). Its caller
        interprets its body again instead, its call going to the widest context.
        """
        g, parent, erased = key
        for depth, c in enumerate(self.stack):
            if (
                depth
                and c.graph is g
                and c.args != wide
                and (c.parent is parent or c.parent == parent)
                and not all(map(all_empty, c.args))
                and tuple(map(erase_stacks, c.args)) == erased
            ):
                raise Superseded(depth)

    def _forget_calls(self, caller: Context) -> None:
        """Forget the calls an earlier interpretation of `caller` made (it is interpreted again).

        What specialization reads of the contexts each function is called in is what the last
        interpretation of each caller called, as the node values are its: an earlier one may
        have called a narrower context of a loop (`_widen_stacks`), which no call reaches now.
        """
        made = self.made.pop(caller, None)
        if not made:
            return
        for fn, ctx, partials in made:
            self.local_contexts.pop((fn, caller), None)
            self._unref(self.fn_contexts, fn, ctx)
            for partial in partials:
                self._unref(self.partial_contexts, partial, ctx)

    def _ref(self, table: dict[Any, dict[Context, None]], fn: Any, ctx: Context) -> None:
        """Record in `table[fn]` a call of `fn` reaching `ctx`."""
        table.setdefault(fn, {})[ctx] = None
        key = (id(table), fn, ctx)
        self.call_counts[key] = self.call_counts.get(key, 0) + 1

    def _unref(self, table: dict[Any, dict[Context, None]], fn: Any, ctx: Context) -> None:
        """Drop `ctx` from `table[fn]` unless a call that is still made reaches it."""
        key = (id(table), fn, ctx)
        left = self.call_counts[key] - 1
        if left:
            self.call_counts[key] = left
            return
        del self.call_counts[key]
        del table[fn][ctx]
        if not table[fn]:
            del table[fn]


def _graph_functions(values: Any) -> Any:
    """The options of the function types held in the stacks of `values`."""
    out: list[Any] = []

    def collect(fn: AbstractFunction) -> AbstractFunction:
        out.extend(fn.options)
        return fn

    for a in values:
        _map_stack_functions(a, collect)
    return out


def _map_stack_functions(a: AbstractValue, f: Any, inside: bool = False) -> AbstractValue:
    """`a` with `f` applied to each function type in (the tuples of) its stacks' elements."""
    t = type(a)
    if t is AbstractStack:
        element = _map_stack_functions(a.element, f, True)
        return a if element is a.element else AbstractStack(element)
    if t is AbstractTuple:
        elements = tuple(_map_stack_functions(e, f, inside) for e in a.elements)
        same = all(x is y for x, y in zip(elements, a.elements))
        return a if same else AbstractTuple(elements)
    if t is AbstractFunction and inside:
        return f(a)
    return a


def _closure_pairs(a: Any, b: Any) -> list[tuple[GraphFunction, GraphFunction]] | None:
    """The pairs of closures of one graph at the same places of `a` and `b` (of one `_shape`).

    None where they cannot be paired (in a union, or partial applications that differ).
    """
    if a == b:
        return []
    t = type(a)
    if type(b) is not t:
        return None  # (`b` wider: a union where `a` is one of its options)
    if t is AbstractFunction:
        mine = {o for o in a.options if o not in b.options}
        theirs = {o for o in b.options if o not in a.options}
        if not all(type(o) is GraphFunction for o in (*mine, *theirs)):
            return None
        return [(x, y) for x in mine for y in theirs if x.graph is y.graph]
    parts = {
        AbstractTuple: lambda v: v.elements,
        AbstractStack: lambda v: (v.element,),
        AbstractList: lambda v: (v.element,),
        AbstractDict: lambda v: v.values,
        AbstractRecord: lambda v: v.fields,
    }.get(t)
    if parts is None:
        return [] if t is AbstractScalar else None
    out: list[tuple[GraphFunction, GraphFunction]] = []
    for x, y in zip(parts(a), parts(b)):
        got = _closure_pairs(x, y)
        if got is None:
            return None
        out += got
    return out


def _same_shape(a: Any, b: Any, wider: bool) -> bool:
    """Whether `a` and `b` are of one `_shape`, or (`wider`) `b` holds all that `a` does."""
    if _shape(a) == _shape(b):
        return True
    if not wider:
        return False
    try:
        return _shape(join(a, b)) == _shape(b)
    except TypeMismatch:
        return False


def _shape(a: Any) -> Any:
    """`a` with each closure's context left out: what tells two closures' captures apart."""
    t = type(a)
    if t is AbstractFunction:
        return ("fn", frozenset(map(_option_shape, a.options)))
    if t is AbstractTuple:
        return ("tuple", tuple(map(_shape, a.elements)))
    if t is AbstractStack:
        return ("stack", _shape(a.element))
    if t is AbstractList:
        return ("list", _shape(a.element), a.value)
    if t is AbstractDict:
        return ("dict", a.keys, tuple(map(_shape, a.values)))
    if t is AbstractRecord:
        return ("record", a.cls, tuple(map(_shape, a.fields)))
    if t is AbstractUnion:
        return ("union", frozenset(map(_shape, a.options)))
    return a


def _option_shape(o: Any) -> Any:
    if type(o) is GraphFunction:
        return ("graph", o.graph)
    if type(o) is PartialFunction:
        return ("partial", _option_shape(o.fn), tuple(map(_shape, o.args)))
    return o


def _context_size(ctx: Any) -> tuple[int, str]:
    """A key ordering contexts by how much their arguments hold (the first made is smallest)."""
    shown = []
    while ctx is not None:
        shown.append(", ".join(map(show, ctx.args)))
        ctx = ctx.parent
    text = " / ".join(shown)
    return len(text), text

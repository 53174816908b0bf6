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

from typing import TYPE_CHECKING, Any

from ..abstract.data import AbstractValue
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
            self.stack_args[key] = (args, 0)
            return args
        if grown > MAX_GROWTHS:
            # Types that grow without end (a closure pushed whose context holds the stack it
            # is pushed on): each call keeps its arguments, as a recursion whose arguments
            # change at every call (an error of inference, not an endless loop of it).
            return args
        try:
            wide = tuple(map(join, old, args))
        except TypeMismatch:
            return args
        if wide != old:
            # The contexts being interpreted may have called narrower ones: they are
            # interpreted again (`infer_context`).
            self.stack_args[key] = (wide, grown + 1)
            self.stack_growths += 1
            self._supersede(key, wide)
        return wide

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

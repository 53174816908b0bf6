"""How inference gives a loop of a gradient one context, not one per path through it.

The forward loop of a loop's gradient (`myia.grad.loops`) carries a stack per block of the
loop: empty at first (its element type ⊥, or no function), then holding what the block pushed.
Typed by the stacks pushed on so far, the loop would have a context per set of paths taken
through its branches (``break``, ``continue``, ``if``), exponentially many: the second order
of two nested loops with a ``break`` and two ``continue`` inferred 13276 contexts of 622
graphs, in minutes. `LoopStacks`, a part of `myia.infer.engine.Inferrer`, joins the stacks
of a loop's calls instead, and keeps what specialization reads of the calls made consistent
with the contexts interpreted last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..abstract.data import AbstractValue
from ..abstract.lattice import TypeMismatch, erase_stacks, holds_stack, join
from ..ir.node import Graph

if TYPE_CHECKING:
    from .engine import Context


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

    def _widen_stacks(self, g: Graph, args: tuple[AbstractValue, ...], parent: Any) -> Any:
        """The arguments of a call of recursive graph `g`, their stacks joined with earlier calls'.

        A call whose arguments are those of an earlier call of `g` (in the same parent) but
        for what their stacks hold goes to the context of the join of all such calls, as a
        loop variable takes the join of the values it is given: a loop has a context per step
        of that growth, not one per path. A context being interpreted when the join grows is
        interpreted again (`infer_context`), so that its calls of the loop all reach the
        widest. A stack typed as possibly holding something where it is empty is tested for
        emptiness at run time: no value changes.
        """
        if not self.is_recursive(g) or not any(map(holds_stack, args)):
            return args
        key = (g, parent, tuple(map(erase_stacks, args)))
        old = self.stack_args.get(key)
        if old is None:
            self.stack_args[key] = args
            return args
        try:
            wide = tuple(map(join, old, args))
        except TypeMismatch:
            return args
        if wide != old:
            # The contexts being interpreted may have called narrower ones: they are
            # interpreted again (`infer_context`).
            self.stack_args[key] = wide
            self.stack_growths += 1
        return wide

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

"""How inference tells a loop whose variables change type: errors at the user's line.

A loop is one graph called at every iteration, so its variables need one type. `LoopTypes`,
a part of `myia.infer.engine.Inferrer`, finds the variable that changed (or keeps growing:
``y = (y, 1.0)``) and says which, where it is made, and what to write instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..abstract.data import (
    AbstractDict,
    AbstractFunction,
    AbstractKeyword,
    AbstractList,
    AbstractRecord,
    AbstractStack,
    AbstractTuple,
    AbstractUnion,
    AbstractValue,
    GraphFunction,
    PartialFunction,
    show,
)
from ..abstract.lattice import TypeMismatch, join
from ..errors import MyiaSyntaxError, MyiaTypeError, at
from ..ir.node import Node
from .calls import untyped_fields_hint
from .kinds import GROWTH_LIMIT, abstract_size
from .traceback import error_frames, user_name

if TYPE_CHECKING:
    from .engine import Context


def _made(call: Any, k: int) -> Node | None:
    """The node making argument `k` of the call `call`, if it is located in the source."""
    node = call[1] if call is not None else None
    if node is None or k + 1 >= len(node.inputs):
        return None
    arg = node.inputs[k + 1]
    return arg if arg.is_apply and arg.debug.find_location() is not None else None


def _shrinks(a: AbstractValue, b: AbstractValue) -> bool:
    """Whether `b` is a smaller value of the same kind as `a` (the iterator over a tuple)."""
    if type(a) is not type(b) or getattr(a, "cls", None) is not getattr(b, "cls", None):
        return False
    return abstract_size(b) < abstract_size(a)


def _closures(values: Any) -> Any:
    """The closures (`GraphFunction`s with a context) held in abstract values `values`."""
    todo = list(values)
    seen: set[int] = set()
    while todo:
        a = todo.pop()
        if id(a) in seen:
            continue
        seen.add(id(a))
        if isinstance(a, AbstractFunction):
            for o in a.options:
                while isinstance(o, PartialFunction):
                    todo.extend(o.args)
                    o = o.fn
                if isinstance(o, GraphFunction) and o.context is not None:
                    yield o
        elif isinstance(a, AbstractTuple):
            todo.extend(a.elements)
        elif isinstance(a, (AbstractList, AbstractStack)):
            todo.append(a.element)
        elif isinstance(a, AbstractDict):
            todo.extend(a.values)
        elif isinstance(a, AbstractRecord):
            todo.extend(a.fields)
        elif isinstance(a, AbstractUnion):
            todo.extend(a.options)
        elif isinstance(a, AbstractKeyword):
            todo.append(a.value)


class LoopTypes:
    """The methods of `Inferrer` that find and report loop variables changing type."""

    stack: list[Any]
    growing: list[int]
    calls: list[Any]
    reentered: dict[Any, Any]
    is_recursive: Any

    def _growth(self, ctx: Context) -> int:
        """How many times in a row the argument types of `ctx`'s graph grew, this call included.

        A loop (a recursive function) whose variable is rebound to a larger type at every
        iteration (``y = (y, 1.0)``, ``t += (x,)``) has a context per iteration and would
        never finish: after `GROWTH_LIMIT` growths in a row it is a `MyiaTypeError` at the
        line that makes the variable. An argument that shrinks (the iterator of a loop over
        a tuple) ends the count.
        """
        i = self._previous_index(ctx)
        if i is None:
            return 0
        prev = self.stack[i]
        if len(prev.args) != len(ctx.args):
            return 0
        grew = []
        for k, (a, b) in enumerate(zip(prev.args, ctx.args)):
            sa, sb = abstract_size(a), abstract_size(b)
            if sb < sa:
                return 0
            if sb > sa:
                grew.append(k)
        if not grew:
            return 0
        count = self.growing[i] + 1
        if count >= GROWTH_LIMIT:
            raise self._growth_error(ctx, prev, grew[0])
        return count

    def _carried_closure(self, ctx: Context) -> None:
        """Refuse a closure made in an earlier call of `ctx`'s recursive graph, passed back in.

        A closure is typed by the context it was made in, so a closure made in one iteration
        of a loop and carried into the next (``fs = fs + [lambda v: v * k]``, or a list of
        such lambdas made by a comprehension) has a type that holds the previous iteration's
        and never settles. Such a closure is lifted to the partial application of a closed
        graph to the values it captures (`LiftClosure`), whose type is that of those values;
        the error is raised if it cannot be.
        """
        if not self.is_recursive(ctx.graph):
            return
        for fn in _closures(ctx.args):
            c = fn.context
            while c is not None and c.graph is not ctx.graph:
                c = c.parent
            if c is None:
                continue
            from .lifting import LiftClosure

            loc = fn.graph.debug.find_location()
            late = fn.graph.flags.get("loop_reads")
            if late:
                last = fn.graph.name.split(":")[-1]
                name = "a lambda" if last == "lambda" else f"the function {last}"
                raise MyiaSyntaxError(
                    f"{name} reads {late[0]!r}, which the loop it is made in assigns, and is "
                    "kept for a later iteration (in a list, or a variable): Python's closure "
                    f"would read the value {late[0]!r} has when it is called, Myia's the one "
                    f"it has where the closure is made. Bind it where the closure is made "
                    f"with a default (lambda v, {late[0]}={late[0]}: ...), or pass it as an "
                    "argument",
                    at(loc, user_name(fn.graph.name)),
                )
            where = f" (defined at {loc.filename}:{loc.line})" if loc is not None else ""
            error = MyiaTypeError(
                f"the function {user_name(fn.graph.name)}{where} is made in a loop (or a "
                "recursive call) and passed on to its next iteration, capturing values of "
                "ever new types: Myia needs one type per loop variable; pass the values it "
                "captures instead of the function",
                error_frames(self.calls),
            )
            if hasattr(fn.graph, "abstract"):  # a graph Myia made, not one parsed
                raise error
            raise LiftClosure(fn.graph, error)

    def _previous_index(self, ctx: Context) -> int | None:
        """Where the stack holds the last context of `ctx`'s recursive graph (a loop's)."""
        g = ctx.graph
        if not self.is_recursive(g):
            return None
        for i in range(len(self.stack) - 1, -1, -1):
            prev = self.stack[i]
            if prev.graph is g and prev.parent == ctx.parent:
                return i
        return None

    def _previous(self, ctx: Context) -> Context | None:
        i = self._previous_index(ctx)
        return None if i is None else self.stack[i]

    def _loop_type_change(
        self, ctx: Context, prev: Context | None, exc: MyiaTypeError
    ) -> MyiaTypeError | None:
        """The error to raise for `exc`, raised in a loop whose variable changed type.

        A loop is one graph called at every iteration, so its variables need one type: a
        variable rebound to a value of another type (``xs = w * xs[0]`` where ``xs`` was a
        tuple) makes a second context of the loop, where the body fails (``getitem`` on a
        float) or the branches of the loop's test return different types. The error says
        which variable changed, from what to what, at the line making the new value. A loop
        over a tuple, unrolled, changes the types of its iterator: it is left alone.
        """
        if getattr(exc, "loop_change", False) or ":loop" not in ctx.graph.name:
            return None
        pairs = []
        if prev is not None:
            call = next((c for c in reversed(self.calls) if c[0] in self.on_stack), None)
            pairs.append((prev, ctx, self.reentered.get(prev, (None, call))[1]))
        if ctx in self.reentered:
            then, call = self.reentered[ctx]
            pairs.append((ctx, then, call))
        for first, then, call in pairs:
            if len(first.args) != len(then.args):
                continue
            if any(map(_shrinks, first.args, then.args)):
                continue  # unrolled over a tuple
            for k, (a, b) in enumerate(zip(first.args, then.args)):
                try:
                    join(a, b)
                except TypeMismatch:
                    made = _made(call, k)
                    if made is None and prev is not None:
                        # Passed on from another block of the loop: the block that makes
                        # the new value, further out, tells.
                        return None
                    return self._changed_error(first, k, a, b, call, made, exc)
        return None

    def _changed_error(
        self,
        first: Context,
        k: int,
        a: AbstractValue,
        b: AbstractValue,
        call: Any,
        made: Node | None,
        exc: MyiaTypeError,
    ) -> MyiaTypeError:
        g = first.graph
        param = g.parameters[k] if k < len(g.parameters) else None
        name = param.debug.find_name() if param is not None else None
        what = f"variable {name}" if name else f"variable {k + 1}"
        frames = list(exc.frames)
        if call is not None and call[1] is not None:
            c, node, values = call
            depth = next((i for i, f in enumerate(self.calls) if f[0] == c), len(self.calls))
            frames = error_frames([*self.calls[:depth], (c, made or node, values)])
        err = MyiaTypeError(
            f"the loop {what} in {g.name.split(':')[0]} changes type between iterations: "
            f"{show(a)} before an iteration, {show(b)} after it. Myia needs one type per loop "
            f"variable: give it the same type on every iteration, or use another variable "
            f"({exc.message.splitlines()[0]})",
            frames,
        )
        err.loop_change = True  # type: ignore[attr-defined]
        return err

    def _growth_error(self, ctx: Context, prev: Context, k: int) -> MyiaTypeError:
        g = ctx.graph
        param = g.parameters[k] if k < len(g.parameters) else None
        name = param.debug.find_name() if param is not None else None
        fn = g.name.split(":")[0]
        loop = ":loop" in g.name
        what = f"variable {name}" if name else f"argument {k + 1}"
        seen = [c.args[k] for c in self.stack if c.graph is g and c.parent == ctx.parent]
        types = ", ".join(show(t) for t in [*seen[-3:], ctx.args[k]])
        calls = list(self.calls)
        # Point at the node that makes the new value (``y = (y, 1.0)``), if known.
        c, node, values = calls[-1] if calls else (None, None, None)
        if node is not None and node.is_apply and k + 1 < len(node.inputs):
            arg = node.inputs[k + 1]
            if arg.is_apply and arg.debug.find_location() is not None:
                calls[-1] = (c, arg, values)
        tuples = isinstance(ctx.args[k], AbstractTuple)
        if loop and ":dictcomp:" in g.name:
            msg = (
                f"the dict comprehension in {fn} adds a key at every iteration of a loop "
                f"({types}, ...): the keys of a dict must be known at compile time. Build it "
                "from a dict's items or from a tuple of distinct constant keys (strings), or "
                "use a list indexed by position (`[x * k for k in range(n)]`)"
            )
        elif loop:
            msg = (
                f"the type of the loop {what} in {fn} changes at every iteration ({types}, "
                "...): Myia needs one type per loop variable; give it the same type on every "
                "iteration" + (" (a list instead of a growing tuple)" if tuples else "")
            ) + untyped_fields_hint(ctx.args[k])
        else:
            msg = (
                f"the type of argument {name or k + 1} of {fn} changes at every recursive call "
                f"({types}, ...): "
                "Myia needs a type that does not grow without bound"
            ) + untyped_fields_hint(ctx.args[k])
        err = MyiaTypeError(msg, error_frames(calls))
        err.loop_change = True  # type: ignore[attr-defined]  # already says what changed
        return err

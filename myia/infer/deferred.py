"""Shape errors on a path a branch may not take, raised at run time on that path.

After ``if b: x = x.T`` (no ``else``), the code after the ``if`` is inferred once per
branch, with each branch's shapes: ``x + y`` may fit on one path only (``y`` of ``x.T``'s
shape), which is the one the program takes at run time. A `MyiaShapeError` in a branch
whose condition is known at run time only is therefore not raised at compile time when
another branch fits: the branch is inferred again with the error deferred (the operation
raising it stands for an operation that always raises, of result ⊥), and the specializer
makes the operation ``raise MyiaShapeError(message)`` (the message of the compile-time
error, which shows the user's line). Only an error at a line of the user's that fits on
another path is deferred: the first line the branch reaches past its jumps to other blocks
(the code after the ``if``) must have been inferred without error elsewhere. ``x + y`` of
shapes that fit on no path (in a loop's body, in a branch alone, in a function called from
a branch alone) raises at compile time, as before, and so does a program whose every path
fails.
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import BOTTOM, AbstractValue
from ..errors import MyiaShapeError
from ..primitives import P
from .traceback import is_internal


def call_branches(inf: Any, calls: list[tuple[Any, list[AbstractValue]]]) -> list[AbstractValue]:
    """The results of the calls of the options of a branch, `calls` ``(callee, args)``.

    An option that raises a `MyiaShapeError` is inferred again with shape errors deferred
    (`defer_shape_error`): its result is ⊥ where the error is certain. Raise the first such
    error if no option returns.
    """
    if len(calls) < 2:
        return [inf.call(f, a) for f, a in calls]
    results: dict[int, AbstractValue] = {}
    errors: dict[int, MyiaShapeError] = {}
    for i, (f, a) in enumerate(calls):
        try:
            results[i] = inf.call(f, a)
        except MyiaShapeError as exc:
            errors[i] = exc
    if not errors:
        return [results[i] for i in range(len(calls))]
    if len(errors) == len(calls):
        raise next(iter(errors.values()))
    # Inferred again once every other path was (where the line may fit).
    inf.defer_shapes += 1
    inf.branch_depths.append(len(inf.calls))
    try:
        for i in errors:
            f, a = calls[i]
            results[i] = inf.call(f, a)
    finally:
        inf.defer_shapes -= 1
        inf.branch_depths.pop()
    if all(r is BOTTOM for r in results.values()):
        raise next(iter(errors.values()))
    return [results[i] for i in range(len(calls))]


def defer_shape_error(inf: Any, exc: MyiaShapeError) -> bool:
    """Whether `exc`, raised by the node inference is at, is raised at run time instead."""
    if not inf.defer_shapes:
        return False
    ctx, node, _ = inf.calls[-1]
    if node is None:
        return False
    for _, user, _ in inf.calls[inf.branch_depths[-1] :]:
        if user is None or _jumps(user):
            continue  # to the code after the branch (reached by the other paths too)
        loc = user.debug.find_location()
        if loc is not None and not is_internal(loc.filename):
            break  # the user's line the branch's path reached
    else:
        return False
    if user not in inf.inferred_nodes:
        return False  # it fits on no path inferred so far
    inf.shape_raises[(ctx, node)] = exc
    return True


#: The kinds of the blocks of a function (``f:if_after``) the parser makes.
_BLOCKS = ("if_", "loop_", "and", "or", "edge", "true", "false")


def _jumps(node: Any) -> bool:
    """Whether `node` goes to another block of its function: a jump, or a branch taken."""
    fn = node.inputs[0] if node.is_apply else None
    if fn is None or not fn.is_constant:
        # ``switch(c, a, b)()``: a branch taken.
        return (
            fn is not None
            and fn.is_apply
            and fn.inputs[0].is_constant
            and (fn.inputs[0].value is P.switch)
        )
    g = fn.value
    name = getattr(g, "name", None)
    return isinstance(name, str) and name.partition(":")[2].startswith(_BLOCKS)

"""Shape errors on a path a branch may not take, raised at run time on that path.

After ``if b: x = x.T`` (no ``else``), the code after the ``if`` is inferred once per
branch, with each branch's shapes: ``x + y`` may fit on one path only (``y`` of ``x.T``'s
shape), which is the one the program takes at run time. A `MyiaShapeError` in a branch
whose condition is known at run time only is therefore not raised at compile time when
another branch fits: the branch is inferred again with the error deferred (the operation
raising it stands for an operation that always raises, of result ⊥), and the specializer
makes the operation ``raise MyiaShapeError(message)`` (the message of the compile-time
error, which shows the user's line). A program whose every path fails raises it at compile
time, as before.
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import BOTTOM, AbstractValue
from ..errors import MyiaShapeError


def call_branches(inf: Any, calls: list[tuple[Any, list[AbstractValue]]]) -> list[AbstractValue]:
    """The results of the calls of the options of a branch, `calls` ``(callee, args)``.

    An option that raises a `MyiaShapeError` is inferred again with shape errors deferred
    (`defer_shape_error`): its result is ⊥ where the error is certain. Raise the first such
    error if no option returns.
    """
    if len(calls) < 2:
        return [inf.call(f, a) for f, a in calls]
    results, errors = [], []
    for f, a in calls:
        try:
            results.append(inf.call(f, a))
        except MyiaShapeError as exc:
            errors.append(exc)
            inf.defer_shapes += 1
            try:
                results.append(inf.call(f, a))
            finally:
                inf.defer_shapes -= 1
    if errors and all(r is BOTTOM for r in results):
        raise errors[0]
    return results


def defer_shape_error(inf: Any, exc: MyiaShapeError) -> bool:
    """Whether `exc`, raised by the node inference is at, is raised at run time instead."""
    if not inf.defer_shapes:
        return False
    ctx, node, _ = inf.calls[-1]
    if node is None:
        return False
    inf.shape_raises[(ctx, node)] = exc
    return True

"""The table of type and shape rules of primitives, owned by type inference.

A rule is registered beside its primitive's declaration with `infer_rule`. It receives the
abstract values of the arguments and returns the abstract value of the result, or raises
`MyiaTypeError` / `MyiaShapeError` (inference adds the user's call stack to the message).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

INFER_RULES: dict[Any, Callable[..., Any]] = {}


def infer_rule(*prims: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the type rule of each primitive in `prims`."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for p in prims:
            if p in INFER_RULES:
                raise ValueError(f"type rule of {p} registered twice")
            INFER_RULES[p] = fn
        return fn

    return deco

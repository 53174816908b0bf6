"""The batching rules of primitives, owned by the batching transform (`myia.grad.batching`).

A rule receives the batcher (`myia.grad.batching.Batcher`, which builds nodes in the batched
graph), the node of the per-example graph, the batched nodes of its arguments and whether each
is batched (its batch axis first), and returns the batched node of the result and whether it is
batched. It returns None where it does not apply (an index known only at run time...): the
primitive then runs once per example, in a compiled loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

BATCH_RULES: dict[Any, Callable[..., Any]] = {}


def batch_rule(*prims: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the batching rule of each primitive in `prims`."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for p in prims:
            if p in BATCH_RULES:
                raise ValueError(f"batching rule of {p} registered twice")
            BATCH_RULES[p] = fn
        return fn

    return deco

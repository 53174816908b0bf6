"""Helpers for the gradient tests."""

from __future__ import annotations

from typing import Any

from myia import grad
from myia.testing import check_grad


def check_grad_at(fn: Any, points: list[tuple[Any, ...]], *wrt: int | str) -> Any:
    """``grad(fn, *wrt)`` matches central differences (and the identity <grad, v> = the
    directional derivative) at every point; return ``grad(fn, *wrt)``.

    `myia.testing.check_grad` compiles the gradient once per signature and reuses it for
    every point.
    """
    for args in points:
        check_grad(fn, *args, wrt=wrt if wrt else 0)
    return grad(fn, *wrt)


def interpreted_grad(fn: Any, *args: Any, wrt: tuple[Any, ...] = ()) -> Any:
    """Compile ``grad(fn, *wrt)`` for the types of `args`, unoptimized, for the interpreter.

    Return ``run(*args) -> (gradient, depth)``: the gradient computed by the reference
    interpreter and the largest number of frames it kept alive at once (one per call being
    evaluated; a tail call replaces its caller's frame, so a loop adds none).
    """
    from myia.abstract import to_abstract
    from myia.grad.api import entry_graph
    from myia.infer.engine import Inferrer
    from myia.infer.specialize import specialize
    from myia.infer.verify_types import verify_types
    from myia.vm import DebugVM

    inferrer = Inferrer()
    ctx, _ = inferrer.infer(entry_graph(fn, wrt, False), tuple(to_abstract(a) for a in args))
    graph = specialize(inferrer, ctx)
    verify_types(graph)

    def run(*call_args: Any) -> tuple[Any, int]:
        vm = DebugVM()
        return vm.run(graph, call_args), vm.max_depth

    return run

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

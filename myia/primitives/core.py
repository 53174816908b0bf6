"""The `Primitive` class: an operation of the IR that Myia does not decompose.

Each primitive is declared once, in its family module, by decorating its Python/NumPy
implementation with `primitive`. Everything else about a primitive (its type and shape rule,
its backpropagator, how each backend lowers it) is registered beside that declaration into a
plain dict owned by the pass that reads it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

PRIMITIVES: dict[str, Primitive] = {}


class Primitive:
    """A primitive operation.

    Attributes:
        name: the unique name of the primitive.
        impl: its Python/NumPy implementation, used by the reference interpreter.
        signature: the signature of `impl` (used to bind keyword arguments).
        effect: whether the primitive has a side effect (printing, raising), so that passes
            must neither remove nor duplicate it.
        static: whether its value is known from the types of its arguments: specialization
            replaces each call by the value inference gave (`impl` is what the interpreter
            computes on untyped graphs, where values of either answer give the same results).

    """

    def __init__(
        self, name: str, impl: Callable[..., Any], effect: bool = False, static: bool = False
    ):
        self.name = name
        self.impl = impl
        self.signature = inspect.signature(impl)
        self.effect = effect
        self.static = static
        self.__doc__ = impl.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.impl(*args, **kwargs)

    def __repr__(self) -> str:
        return self.name


def primitive(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    effect: bool = False,
    static: bool = False,
) -> Any:
    """Declare a primitive whose implementation is the decorated function."""

    def deco(impl: Callable[..., Any]) -> Primitive:
        pname = name or impl.__name__.rstrip("_")
        if pname in PRIMITIVES:
            raise ValueError(f"primitive {pname} declared twice")
        prim = Primitive(pname, impl, effect=effect, static=static)
        PRIMITIVES[pname] = prim
        return prim

    return deco(fn) if fn is not None else deco

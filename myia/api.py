"""The public entry point: `myia`, which compiles a Python function and calls it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .frontend import parse
from .ir.node import Graph
from .primitives.structure import KeywordArgument
from .signature import signature_of
from .vm import DebugVM

BACKENDS = ("debug",)


class MyiaFunction:
    """A Python function compiled by Myia on each new argument signature, then called."""

    def __init__(self, fn: Callable[..., Any], backend: str = "debug"):
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose among {BACKENDS}")
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.__myia_function__ = fn
        self.backend = backend
        self._graph: Graph | None = None
        self._vm = DebugVM()
        self._signatures: dict[Any, Any] = {}

    def graph(self) -> Graph:
        """The graph of the function, as parsed."""
        if self._graph is None:
            self._graph = parse(self.fn)
        return self._graph

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        sig = signature_of(args, kwargs)
        if sig not in self._signatures:
            self._signatures[sig] = self.graph()
        call_args = [*args, *(KeywordArgument(k, v) for k, v in kwargs.items())]
        return self._vm.run(self._signatures[sig], tuple(call_args))

    def compiled_signatures(self) -> list[Any]:
        """The argument signatures compiled so far (one entry per compilation)."""
        return list(self._signatures)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)


def myia(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """Compile `fn` with Myia: ``@myia``, ``@myia(backend=...)`` or ``myia(fn, ...)``."""
    if fn is None:
        return lambda f: MyiaFunction(f, **options)
    return MyiaFunction(fn, **options)

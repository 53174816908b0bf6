"""What `myia`, `grad` and `value_and_grad` accept as the function to compile.

A Python function; a `functools.partial` of one, a bound method (``obj.method``) or a
callable dataclass instance (``model``, whose ``__call__`` is compiled), whose bound
arguments are passed on every call like the others (so their types are part of the
signature); a function wrapped by `functools.lru_cache` (the wrapped function is compiled:
the cache plays no part in compiled code); a builtin, `math` or NumPy function that Myia maps
to an operation (``myia(np.sin)``). Anything else is a `MyiaTypeError` that says what was given.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
from typing import Any

from .errors import MyiaTypeError
from .ir.node import Constant, Graph


def _describe(value: Any) -> str:
    if isinstance(value, type):
        return f"the class {value.__qualname__}"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


@dataclasses.dataclass
class Entry:
    """The function compiled for a callable given to `myia`/`grad`, and how to call it.

    `fn` is the Python function (or builtin) whose parameters the compiled graph has;
    `args` and `keywords` are bound in front of the caller's arguments (a partial
    application, a method's object); `callable` is what the user gave.
    """

    callable: Any
    fn: Any
    args: tuple[Any, ...] = ()
    keywords: dict[str, Any] = dataclasses.field(default_factory=dict)
    builtin: Any = None

    @classmethod
    def of(cls, value: Any, who: str = "myia") -> Entry:
        """The entry for `value`, or a `MyiaTypeError` for what cannot be compiled."""
        fn, args, keywords = value, (), {}
        while True:
            if isinstance(fn, functools.partial):
                args = (*fn.args, *args)
                keywords = {**fn.keywords, **keywords}
                fn = fn.func
            elif isinstance(fn, types.MethodType):
                args = (fn.__self__, *args)
                fn = fn.__func__
            elif isinstance(fn, functools._lru_cache_wrapper):
                fn = fn.__wrapped__
            elif not isinstance(fn, types.FunctionType) and (
                hasattr(fn, "__myia_function__") and not hasattr(fn, "__myia_graph__")
            ):
                fn = fn.__myia_function__  # a `myia` function, in a partial application
            else:
                break
        if isinstance(fn, types.FunctionType):
            return cls(value, fn, args, keywords)
        if isinstance(fn, type):
            raise MyiaTypeError(
                f"{who}() expects a function, not {_describe(fn)}; to compile the construction "
                f"of instances, compile a function that returns {fn.__name__}(...)"
            )
        call = inspect.getattr_static(type(fn), "__call__", None)
        if dataclasses.is_dataclass(fn) and isinstance(call, types.FunctionType):
            # A callable dataclass instance (a model): its `__call__`, with the object first.
            return cls(value, call, (fn, *args), keywords)
        from .operations.mapping import lookup

        mapped = lookup(fn)
        if mapped is not None and not args and not keywords:
            return cls(value, fn, builtin=mapped)
        if mapped is not None:
            raise MyiaTypeError(
                f"{who}() of a partial application of {_describe(fn)} is not supported; "
                "write it as a function"
            )
        if callable(fn):
            raise MyiaTypeError(
                f"{who}() expects a Python function, not {_describe(fn)}, which Myia cannot "
                "compile"
            )
        raise MyiaTypeError(f"{who}() expects a function, not {_describe(fn)}")

    @property
    def prefixed(self) -> bool:
        """Whether arguments are bound in front of the caller's."""
        return bool(self.args or self.keywords)

    @property
    def name(self) -> str:
        """The name the user knows the function by."""
        return getattr(self.fn, "__name__", None) or repr(self.fn)

    @functools.cached_property
    def signature(self) -> inspect.Signature:
        """The signature of `fn` (all its parameters, those bound in front included)."""
        if self.builtin is not None:
            nin = getattr(self.fn, "nin", None)
            if nin is None:
                try:
                    return inspect.signature(self.fn, follow_wrapped=False)
                except (TypeError, ValueError):
                    nin = 1
            kind = inspect.Parameter.POSITIONAL_ONLY
            return inspect.Signature(
                [inspect.Parameter(f"x{i + 1}" if nin > 1 else "x", kind) for i in range(nin)]
            )
        # Not the signature of a function it wraps (`functools.wraps` sets `__wrapped__`):
        # the one of the code that is compiled, `def wrapper(*args, **kwargs)` for instance.
        return inspect.signature(self.fn, follow_wrapped=False)

    def user_signature(self) -> inspect.Signature:
        """The signature of what the user gave (without the arguments bound in front)."""
        if not self.prefixed:
            return self.signature
        params = list(self.signature.parameters.values())[len(self.args) :]
        out = []
        for p in params:
            if p.name in self.keywords:
                p = p.replace(kind=inspect.Parameter.KEYWORD_ONLY, default=self.keywords[p.name])
            out.append(p)
        kw = [p for p in out if p.kind is inspect.Parameter.KEYWORD_ONLY]
        rest = [p for p in out if p.kind is not inspect.Parameter.KEYWORD_ONLY]
        var = [p for p in rest if p.kind is inspect.Parameter.VAR_KEYWORD]
        rest = [p for p in rest if p.kind is not inspect.Parameter.VAR_KEYWORD]
        return inspect.Signature(rest + kw + var)

    def graph(self) -> Graph:
        """The graph of `fn` (a graph calling the operation, for a builtin)."""
        if self.builtin is None:
            from .frontend import parse

            return parse(self.fn)
        cached = self.__dict__.get("_graph")
        if cached is not None:
            return cached
        g = self.__dict__["_graph"] = Graph(self.name)
        params = [g.add_parameter(name) for name in self.signature.parameters]
        g.output = g.apply(Constant(self.builtin), *params)
        return g

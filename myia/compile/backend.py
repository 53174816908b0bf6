"""The backend interface, and the two backends: generated Python/NumPy code, and the interpreter.

A backend turns a typed, optimized graph into something that can be called on Python values.
Each backend says how it lowers primitives, converts arguments and results, and where values
live (`Backend.device`). The JAX backend (`jax_backend.py`) implements this same interface,
and so will the next ones (PyTorch on GPUs): `compile`, `to_backend` and `from_backend` for
values; a backend's own options (``keep_on_device=``...) are its constructor's keywords.
"""

from __future__ import annotations

import gc
import inspect
import linecache
import sys
import weakref
from collections.abc import Callable
from typing import Any

from ..errors import usage_error
from ..ir.node import Graph
from .codegen import Module, generate
from .runtime import DeepRecursion, translate_error


class Executable:
    """A compiled graph: call it with a tuple of arguments."""

    source: str | None = None

    def __call__(self, args: tuple[Any, ...]) -> Any:
        raise NotImplementedError

    def direct(self) -> tuple[Any, bool]:
        """A function that runs the program on the arguments themselves, and whether that is final.

        The function (None if there is none, or none yet) returns what a call does, with
        no conversion, for the argument types the program was compiled for; an error it
        raises says nothing to the user: the call is then run again as usual, which
        reports it. `myia.api.MyiaFunction` calls it directly, past its own call layers.
        """
        return None, True


#: Array types of backends (``jax.Array``'s class) that a call's quick key reads as it reads
#: NumPy arrays (their shape and dtype), with their type: the backend that registers one
#: gives their abstract value (`abstract_of`), which no other backend accepts.
DEVICE_ARRAY_TYPES: set[type] = set()


class Backend:
    """What every backend provides."""

    name: str = ""
    device: str = "cpu"

    def compile(self, graph: Graph) -> Executable:
        """Compile the closed, typed graph `graph`."""
        raise NotImplementedError

    def to_backend(self, value: Any) -> Any:
        """Convert an argument to the backend's representation."""
        return value

    def from_backend(self, value: Any) -> Any:
        """Convert a result to the Python/NumPy values the user gets."""
        return value


_getrecursionlimit = sys.getrecursionlimit
_setrecursionlimit = sys.setrecursionlimit
_DEEP_LIMIT = DeepRecursion.LIMIT
_gc_isenabled = gc.isenabled
_gc_disable = gc.disable
_gc_enable = gc.enable

# The modules of generated code, by file name (for tracebacks), while their programs live:
# kept for good, every program compiled in the process would be.
MODULES: weakref.WeakValueDictionary[str, Module] = weakref.WeakValueDictionary()


class PythonExecutable(Executable):
    """A function of generated Python code.

    The garbage collector is paused while it runs (and resumed after, unless it was paused
    already). Generated code makes no reference cycles (a closure takes its free variables as
    parameter defaults, `myia.compile.codegen.CodeGenerator.closure_defaults`), so the
    collector has nothing to free among the objects it makes; but a gradient keeps a
    backpropagator per call of a recursion and per iteration of a loop until its backward
    pass, and those objects would trigger passes of the collector, each full pass walking
    every object alive in the process (other libraries' included): the program's speed would
    depend on them. Paused, the collector passes at most once after the call, over the
    objects that survived it.
    """

    def __init__(self, module: Module):
        self.module = module
        self.source = module.source
        name = module.filename
        n = 2
        while name in MODULES or name in linecache.cache:  # (the source of one gone stays)
            name = f"{module.filename[:-1]} #{n}>"
            n += 1
        module.filename = name
        MODULES[name] = module
        linecache.cache[name] = (len(module.source), None, module.source.splitlines(True), name)
        code = compile(module.source, name, "exec")
        exec(code, module.globals)
        self.fn: Callable[..., Any] = module.globals[module.entry]
        self.deep = module.deep

    def __call__(self, args: tuple[Any, ...]) -> Any:
        paused = _gc_isenabled()
        if paused:
            _gc_disable()
        try:
            if self.deep:
                # `DeepRecursion`, inlined (a context manager costs ~1.5 us a call): the limit
                # is raised while the code runs, unless a caller raised it already.
                old = _getrecursionlimit()
                if old < _DEEP_LIMIT:
                    _setrecursionlimit(_DEEP_LIMIT)
                    try:
                        return self.fn(*args)
                    finally:
                        _setrecursionlimit(old)
            return self.fn(*args)
        except BaseException as exc:  # (``raise SystemExit`` in the program too)
            err = translate_error(exc, MODULES)
            if err is exc:
                raise
            raise err from None
        finally:
            if paused:
                _gc_enable()


class PythonBackend(Backend):
    """The default backend: Python source with NumPy calls, one function per graph."""

    name = "numpy"

    def compile(self, graph: Graph) -> Executable:
        return PythonExecutable(generate(graph, reuse=True))


class DebugExecutable(Executable):
    def __init__(self, graph: Graph):
        from ..vm import DebugVM

        self.graph = graph
        self.vm = DebugVM()

    def __call__(self, args: tuple[Any, ...]) -> Any:
        return self.vm.run(self.graph, args)


class DebugBackend(Backend):
    """The reference interpreter (`myia.vm.DebugVM`): slow, faithful, for debugging."""

    name = "debug"

    def compile(self, graph: Graph) -> Executable:
        return DebugExecutable(graph)


BACKENDS: dict[str, type[Backend]] = {"numpy": PythonBackend, "debug": DebugBackend}


def get_backend(name: str, **options: Any) -> Backend:
    """The backend called `name` (``"numpy"``, the default, ``"debug"``, ``"jax"``, ``"native"``).

    `options` are the backend's own (``keep_on_device``, ``device``, ``mesh``... for
    ``"jax"``; ``background`` for ``"jax"`` and ``"native"``).
    """
    try:
        cls = BACKENDS[name]
    except KeyError:
        raise usage_error(
            ValueError(f"unknown backend {name!r}; choose among {tuple(BACKENDS)}")
        ) from None
    if options and cls.__init__ is object.__init__:
        raise usage_error(
            ValueError(f"the {name!r} backend takes no option ({', '.join(options)})")
        )
    if options:
        known = inspect.signature(cls.__init__).parameters
        unknown = [o for o in options if o not in known]
        if unknown:
            raise usage_error(ValueError(f"the {name!r} backend takes no option {unknown[0]!r}"))
    return cls(**options)

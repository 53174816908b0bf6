"""The public entry point: `myia`, which compiles a Python function and calls it."""

from __future__ import annotations

import functools
import gc
import inspect
import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from . import disk_cache
from .abstract import show, to_abstract
from .abstract.lattice import PY_SCALARS, TypeMismatch
from .boundary import boundary, boundary_call
from .compile import Backend, get_backend
from .compile.backend import DEVICE_ARRAY_TYPES
from .entry import Entry
from .errors import MyiaError, MyiaInternalError, MyiaTypeError, did_you_mean, usage_error
from .frontend.cache import new_compilation, record, recorded
from .frontend.defaults import given_or_not
from .infer.engine import Inferrer
from .infer.lifting import LiftClosure, lift_closure
from .infer.specialize import specialize
from .infer.verify_types import verify_types
from .ir.node import Graph
from .opt import optimize
from .records import field_values, is_record_value
from .results import ScalarResults, has_0d_array

#: The keyword options of `myia` and `grad` that go to the backend.
BACKEND_OPTIONS = (
    "keep_on_device",
    "device",
    "background",
    "mesh",
    "batch_axis",
    "batch_argnums",
    "arg_specs",
)

#: The backend of functions that do not name one (``MYIA_BACKEND`` in the environment sets it).
DEFAULT_BACKEND = os.environ.get("MYIA_BACKEND", "numpy")

#: Verify the structure and types of every specialized graph, before and after the optimizer
#: (the test suite turns it on).
VERIFY = False
#: Also verify them after each optimizer pass, which names the pass that broke a graph (the
#: test suite turns it on for the optimizer's and the fuzzers' tests, ``MYIA_VERIFY_PASSES=1``
#: everywhere: it costs more than the compilation it checks).
VERIFY_PASSES = os.environ.get("MYIA_VERIFY_PASSES", "") not in ("", "0")

#: The compilations under way (nested, or in several threads): the gradient transform's
#: caches are emptied when none is.
_compiling = 0
_COMPILING_LOCK = threading.Lock()
#: Held by a compilation (`MyiaFunction.compile`): Myia's stages share caches (the gradient
#: transform's, inference's), so compilations in several threads run one at a time.
_COMPILE_LOCK = threading.RLock()

#: The argument types whose abstract value the type alone gives (`to_abstract`): Python
#: scalars, and NumPy's numeric scalars (the dtype of such a value is its type's; not so for
#: ``np.str_``, ``np.void``, ``np.datetime64`` or ``np.timedelta64``, whose dtype has a size or
#: a unit).
SCALAR_TYPES = frozenset(PY_SCALARS) | frozenset(np.dtype(c).type for c in "?bhilqpBHILQPefdgFDG")

#: The argument types of a direct call (`MyiaFunction._direct`).
_DIRECT_TYPES = frozenset((float, int, bool))

_ndarray = np.ndarray
_Generator = np.random.Generator  # its type is its signature (an opaque value)


def quick_key(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """A cheap key that determines the argument signature of `args`, or None.

    The key of arguments that are all `SCALAR_TYPES` is the tuple of their types; where some
    are NumPy arrays (exactly `np.ndarray`), NumPy random generators or tuples of such
    values, it is `array_key`: an array stands for its shape and dtype, all `to_abstract`
    reads of it. Arguments of other
    types (lists, records, ...) have no quick key: only their abstract value says which
    specialization they call.
    """
    types = tuple(map(type, args))
    if SCALAR_TYPES.issuperset(types):
        return types
    return array_key(args) if all(map(_has_quick_key, args)) else None


def _has_quick_key(a: Any) -> bool:
    t = type(a)
    return (
        t in SCALAR_TYPES
        or t is _ndarray
        or t is _Generator
        or t in DEVICE_ARRAY_TYPES
        or (t is tuple and all(map(_has_quick_key, a)))
    )


def array_key(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The key of `args`: each array's shape and dtype, each tuple's `tuple_key`, else a type.

    It checks nothing: a key is looked up among those `quick_key` made, which did. (The
    shape comes first: a key never compares a dtype with another object, which NumPy would
    convert to a dtype.)
    """
    return tuple(
        [
            (a.shape, a.dtype)
            if type(a) is _ndarray
            else (tuple_key(a) if type(a) is tuple else _other_key(a))
            for a in args
        ]
    )


def _other_key(a: Any) -> Any:
    """The key of an argument other than an array or a tuple.

    Its type, with a device array's shape and dtype.
    """
    t = type(a)
    return (t, a.shape, a.dtype) if t in DEVICE_ARRAY_TYPES else t


def tuple_key(t: tuple[Any, ...]) -> tuple[Any, ...]:
    """The key of a tuple argument: ``(tuple, array_key(t))``."""
    return (tuple, array_key(t))


def _holds_function(a: Any) -> bool:
    """Whether values of abstract type `a` hold a function (in a tuple, a record...)."""
    from .abstract.data import (
        AbstractDict,
        AbstractFunction,
        AbstractList,
        AbstractRecord,
        AbstractTuple,
        AbstractUnion,
    )

    seen: set[int] = set()
    todo = [a]  # walked without recursion: an argument may be nested deeply
    while todo:
        a = todo.pop()
        if id(a) in seen:
            continue
        seen.add(id(a))
        if isinstance(a, AbstractFunction):
            return True
        if isinstance(a, AbstractTuple):
            todo.extend(a.elements)
        elif isinstance(a, AbstractList):
            todo.append(a.element)
        elif isinstance(a, AbstractDict):
            todo.extend(a.values)
        elif isinstance(a, AbstractRecord):
            todo.extend(a.fields)
        elif isinstance(a, AbstractUnion):
            todo.extend(a.options)
    return False


class Signature(tuple):
    """The abstract values of a call's arguments, printed in Myia's notation."""

    def __str__(self) -> str:
        return "(" + ", ".join(show(a) for a in self) + ")"

    def __repr__(self) -> str:
        return f"Signature{self}"


class Compiled:
    """One specialization of a function: its typed, optimized graph and its executable."""

    def __init__(self, graph: Graph, result: Any, backend: Backend, debug_nans: bool = False):
        self.graph = graph
        self.result = result
        self.executable = backend.compile(graph)
        if has_0d_array(result):
            self.executable = ScalarResults(self.executable, result)
        if debug_nans:
            self.executable = NanChecking(self.executable, graph)

    @property
    def source(self) -> str | None:
        """The generated source code (None for the reference interpreter)."""
        return self.executable.source


class NanChecking:
    """An executable whose results are checked for NaN and infinities (``debug_nans=True``).

    Where a result holds one and the arguments did not, the call runs again on the reference
    interpreter checking every primitive, which raises `FloatingPointError` at the first one
    that made a NaN or an infinity from finite values: the user's line, in the forward pass or
    the gradient of that line.
    """

    def __init__(self, inner: Any, graph: Graph):
        self.inner = inner
        self.graph = graph
        self.source = getattr(inner, "source", None)

    def __call__(self, args: tuple[Any, ...]) -> Any:
        from .vm.debug_vm import DebugVM
        from .vm.nans import _nonfinite

        out = self.inner(args)
        if _nonfinite(_leaves(out)) and not _nonfinite(_leaves(args)):
            DebugVM(check_nans=True).run(self.graph, args)
        return out


def _leaves(x: Any) -> tuple[Any, ...]:
    """The numbers and arrays of a value (tuples, lists, dicts and dataclasses opened)."""
    if isinstance(x, (tuple, list)):
        return tuple(y for e in x for y in _leaves(e))
    if isinstance(x, dict):
        return _leaves(tuple(x.values()))
    if is_record_value(x):
        return _leaves(field_values(x))
    return (x,)


class MyiaFunction:
    """A Python function compiled by Myia on each new argument signature, then called."""

    def __init__(
        self, fn: Callable[..., Any], *, backend: str | None = None, **options: Any
    ) -> None:
        # `options` are the backend's (``keep_on_device=``, ``device=`` for ``"jax"``), and
        # ``debug_nans=True`` (`NanChecking`).
        self._options = dict(options)
        self.debug_nans = bool(options.pop("debug_nans", False))
        self.backend = get_backend(backend or DEFAULT_BACKEND, **options)
        # `myia(f)` of a function `f` compiled by Myia already (`@myia`, `grad`) compiles
        # what `f` compiles, with these options.
        self._wrapped = fn if isinstance(fn, MyiaFunction) else None
        if self._wrapped is not None:
            if hasattr(fn, "__myia_graph__"):
                self.__myia_graph__ = self.graph
            self.entry: Entry = self._wrapped.entry
        else:
            self.entry = Entry.of(fn, "grad" if isinstance(self, GradFunction) else "myia")
        fn = self.entry.fn
        functools.update_wrapper(self, self.entry.callable, updated=())
        self.fn = fn
        # What Myia code calling this object calls (a partial application stays one).
        self.__myia_function__ = self.entry.callable if self.entry.prefixed else fn
        self._signature = self.entry.signature
        self._nparams = len(self._signature.parameters)
        self._simple = not self.entry.prefixed and all(
            p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and p.default is p.empty
            for p in self._signature.parameters.values()
        )
        self._cache: dict[Signature, Compiled] = {}
        # The executables of plain positional calls by `quick_key` (`__call__`'s fast path):
        # a key determines the signature, so that a hit needs no abstract value, no look-up
        # in `_cache` and no check.
        self._quick: dict[tuple[Any, ...], Callable[[tuple[Any, ...]], Any]] = {}
        self._array_keys = False
        #: ``(types, function)``: the direct function of the last plain call of scalars that
        #: found one (`myia.compile.backend.Executable.direct`), which `boundary_call` runs
        #: on arguments of these types.
        self._direct: tuple[tuple[type, ...], Callable[..., Any]] | None = None

    def graph(self) -> Graph:
        """The graph of the function, as parsed."""
        if self._wrapped is not None:
            return self._wrapped.graph()
        return self.entry.graph()

    def _arguments(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        if self._simple and not kwargs and len(args) == self._nparams:
            return args
        entry = self.entry
        if entry.prefixed:
            args = (*entry.args, *args)
            kwargs = {**entry.keywords, **kwargs}
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as exc:
            params = self._signature.parameters
            if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
                unknown = [k for k in kwargs if k not in params]
                if unknown:  # Python's first complaint (inspect's is a missing argument)
                    hint = did_you_mean(unknown[0], params)
                    raise MyiaTypeError(
                        f"{self.entry.name}() got an unexpected keyword argument "
                        f"{unknown[0]!r}{hint}"
                    ) from None
            raise MyiaTypeError(f"{self.entry.name}(): {exc}") from None
        bound.apply_defaults()
        # One value per parameter, as the graph has them: ``*args`` as a tuple, keyword-only
        # parameters after it, ``**kwargs`` as a dict. A function default not passed is the
        # graph's to give.
        params = self._signature.parameters
        return tuple(given_or_not(v, params[k].default) for k, v in bound.arguments.items())

    def signature(self, *args: Any, **kwargs: Any) -> Signature:
        """The argument signature of a call (the key of the compilation cache)."""
        args = self._arguments(args, kwargs)
        try:
            return Signature(to_abstract(a) for a in args)
        except (TypeError, TypeMismatch, RecursionError) as exc:
            return self._backend_signature(args, exc)

    def _backend_signature(self, args: tuple[Any, ...], exc: Exception) -> Signature:
        """The signature of arguments some of which are the backend's values (``jax.Array``)."""
        abstract_of = getattr(self.backend, "abstract_of", None)
        if abstract_of is None:
            raise self._bad_argument(exc) from None
        try:
            return Signature(abstract_of(a) or to_abstract(a) for a in args)
        except (TypeError, TypeMismatch, RecursionError) as exc2:
            raise self._bad_argument(exc2) from None

    def _bad_argument(self, exc: Exception) -> MyiaTypeError:
        if isinstance(exc, RecursionError):
            exc = TypeError("it is nested too deeply or contains itself")
        return MyiaTypeError(f"{self.entry.name}(): an argument has no Myia type: {exc}")

    def compile(self, sig: Signature) -> Compiled:
        """Parse, infer and specialize the function for argument signature `sig`.

        The program is loaded from the disk cache where a previous process compiled it
        (`myia.disk_cache`), and stored there otherwise. Compilations in several threads run
        one at a time (Myia's stages share caches), and one compiled meanwhile by another
        thread is not compiled again.
        """
        with _COMPILE_LOCK:
            compiled = self._cache.get(sig)
            return compiled if compiled is not None else self._compile_once(sig)

    def _compile_once(self, sig: Signature) -> Compiled:
        """Compile for `sig` (or load from the disk cache), the cyclic collector paused.

        Myia's stages allocate many small objects that live as long as the compilation
        (graphs, nodes, abstract values): each pass of the collector meanwhile would walk
        them all, and a third of a first call's time went to it. They are collected
        afterwards, young, in one pass.
        """
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._compile_or_load(sig)
        finally:
            if enabled:
                gc.enable()

    def _compile_or_load(self, sig: Signature) -> Compiled:
        fn = self.entry.fn
        key = None
        if not any(map(_holds_function, sig)):
            key = disk_cache.key(fn, tuple(sig), self._disk_options())
        if key is not None:
            graph = disk_cache.load(key, fn)
            if graph is not None:
                return Compiled(graph, graph.output.abstract, self.backend, self.debug_nans)
        previous = record() if key is not None else None
        try:
            compiled = self._compile(sig)
        finally:
            used = recorded(previous) if key is not None else None
        if key is not None and used is not None:
            disk_cache.store(key, fn, compiled.graph, tuple(sig), self.backend.name, used)
        return compiled

    def _disk_options(self) -> dict[str, Any]:
        """What the program depends on besides the function and the signature."""
        opts: dict[str, Any] = {
            "class": type(self).__name__,
            "backend": self.backend.name,
            "options": self._options,
        }
        if isinstance(self, GradFunction):
            opts["grad"] = (self.wrt, self.value, self.has_aux)
        if self._wrapped is not None:
            opts["wrapped"] = self._wrapped._disk_options()
        return opts

    def _compile(self, sig: Signature) -> Compiled:
        global _compiling
        with _COMPILING_LOCK:
            _compiling += 1
        try:
            return self._compile_now(sig)
        finally:
            with _COMPILING_LOCK:
                _compiling -= 1
                if not _compiling:
                    # What the gradient transform kept of this compilation's graphs.
                    from .grad.jtransform import forget

                    forget()

    def _compile_now(self, sig: Signature) -> Compiled:
        new_compilation()
        try:
            graph, result = self._specialize(sig)
            if VERIFY:
                verify_types(graph)
            graph = optimize(graph)
            if VERIFY:
                verify_types(graph)
            return Compiled(graph, result, self.backend, self.debug_nans)
        except MyiaError:
            raise
        except Exception as exc:
            raise MyiaInternalError(f"{type(exc).__name__}: {exc}") from exc

    def _specialize(self, sig: Signature) -> tuple[Graph, Any]:
        """The specialized graph of the program on `sig`, and its result type.

        A closure called with several types through a function value is lifted, and the
        program inferred again (`myia.infer.lifting`).
        """
        lifted: set[Graph] = set()
        while True:
            inferrer = Inferrer()
            root = self.graph()
            try:
                ctx, result = inferrer.infer(root, tuple(sig))
                if _holds_function(result):
                    raise self._returns_function_error(ctx.graph, result)
                return specialize(inferrer, ctx), result
            except LiftClosure as exc:
                if exc.graph in lifted or not lift_closure(exc.graph, root):
                    raise exc.error from None
                lifted.add(exc.graph)

    def _returns_function_error(self, graph: Graph, result: Any) -> MyiaTypeError:
        from .errors import Frame
        from .grad.api import _strip_seq
        from .infer.traceback import is_internal

        out = _strip_seq(graph.output)
        loc = out.debug.find_location() if out is not None else None
        if loc is None or is_internal(loc.filename):
            loc = graph.debug.find_location()
        return MyiaTypeError(
            f"{self.entry.name} returns a function ({show(result)}): a function made in "
            "compiled code cannot be returned to Python (as in jax.jit); return the values "
            "it computes, or compile the function itself (myia(inner) where it is defined)",
            [Frame(graph.name, loc, f"returns {show(result)}")],
        )

    @boundary
    def specialization(self, *args: Any, **kwargs: Any) -> Compiled:
        """The compiled specialization for these arguments (compiling it if needed)."""
        sig = self.signature(*args, **kwargs)
        compiled = self._cache.get(sig)
        if compiled is None:
            compiled = self._cache[sig] = self.compile(sig)
        return compiled

    @boundary_call
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            # The fast path: the executable by `quick_key`, which is the tuple of the types of
            # Python or NumPy scalars, or else `array_key` (the same for scalars).
            if self._array_keys:
                try:
                    run = self._quick.get(array_key(args))
                except RecursionError:  # tuples nested too deeply for a key
                    run = None
            else:
                # ``tuple(map(type, args))``, spelled out for one or two arguments (3x faster).
                n = len(args)
                if n == 1:
                    run = self._quick.get((type(args[0]),))
                elif n == 2:
                    run = self._quick.get((type(args[0]), type(args[1])))
                else:
                    run = self._quick.get(tuple(map(type, args)))
            if run is not None:
                return run(args)
        return self._call(args, kwargs)

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A call by the signature of its arguments (compiling it if needed)."""
        args = self._arguments(args, kwargs)
        try:
            sig = Signature(to_abstract(a) for a in args)
        except (TypeError, TypeMismatch, RecursionError) as exc:
            sig = self._backend_signature(args, exc)
        compiled = self._cache.get(sig)
        if compiled is None:
            compiled = self._cache[sig] = self.compile(sig)
        if self._simple and not kwargs:
            # `args` were passed as they are bound (`_arguments`).
            try:
                key = quick_key(args)
            except RecursionError:  # tuples nested too deeply for a key
                key = None
            if key is not None:
                self._quick[key] = self._runner(key, compiled.executable)
                self._array_keys = self._array_keys or not SCALAR_TYPES.issuperset(map(type, args))
        return compiled.executable(args)

    def _runner(self, key: tuple[Any, ...], executable: Any) -> Callable[[tuple[Any, ...]], Any]:
        """What a call of quick key `key` runs: `executable`, once it says if it has a direct one.

        Calls of Python scalars then run that function (`myia.compile.backend.Executable.direct`).
        """
        if not hasattr(executable, "direct") or not key or not _DIRECT_TYPES.issuperset(key):
            return executable.__call__

        def run(args: tuple[Any, ...]) -> Any:
            fn, final = executable.direct()
            if fn is not None:
                self._direct = (key, fn)
            if final:
                self._quick[key] = executable.__call__
            return executable(args)

        return run

    @boundary
    def generated_code(self, *args: Any, **kwargs: Any) -> str:
        """The Python source the backend generated for a call with these arguments.

        It compiles the specialization if needed. The code is what runs: one function per
        graph, named after the user's functions, loops as ``while`` loops; for a gradient,
        it is the optimized code of the forward and backward passes.
        """
        compiled = self.specialization(*args, **kwargs)
        if compiled.source is None:
            raise usage_error(
                ValueError(f"the {self.backend.name!r} backend generates no source code")
            )
        return compiled.source

    @boundary
    def lowered_text(self, *args: Any, **kwargs: Any) -> str:
        """The StableHLO text XLA receives for a call with these arguments (``backend="jax"``).

        A `ValueError` says why when the program runs as host code instead.
        """
        executable = self.specialization(*args, **kwargs).executable
        lowered = getattr(executable, "lowered_text", None)
        if lowered is None:
            raise usage_error(ValueError(f"the {self.backend.name!r} backend does not use XLA"))
        return lowered(self._arguments(args, kwargs))

    def compiled_signatures(self) -> list[Signature]:
        """The argument signatures compiled so far (one entry per compilation)."""
        return list(self._cache)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)


class GradFunction(MyiaFunction):
    """``grad(fn, *wrt)`` or ``value_and_grad(fn, *wrt)``: compiled like any Myia function."""

    def __init__(
        self,
        fn: Any,
        wrt: tuple[Any, ...],
        value: bool,
        *,
        has_aux: bool = False,
        backend: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(fn, backend=backend, **options)
        self.wrt = _check_wrt(wrt, self.entry)
        self.value = value
        self.has_aux = bool(has_aux)
        self._entry: tuple[Graph, Graph] | None = None
        # A negative position counts back from the last argument a call passes by position
        # (JAX's ``argnums=-1``), not from the last parameter: one gradient per such count.
        self._counted: dict[int, GradFunction] | None = None
        if _negative(wrt):
            self._counted = {}
            self._given = (fn, wrt, backend, options)
            # Myia code calling it counts back from its call's arguments too.
            self.__myia_graph__ = None
            self.__myia_function__ = _counting(fn, wrt, value, self.has_aux)
        # A position past the parameters before ``*args`` is an argument it receives (JAX's
        # ``argnums``): the gradient is taken in Myia code, which counts the call's arguments
        # (the entry graph passes one argument per parameter, ``*args`` as one tuple).
        self._starred: MyiaFunction | None = None
        if self._counted is None and _into_star(self.entry, self.wrt):
            counted = _counting(fn, self.wrt, value, self.has_aux)
            self._starred = MyiaFunction(counted, backend=backend, **options)
            self.__myia_graph__ = None
            self.__myia_function__ = counted

    @boundary_call
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._starred is not None:
            return self._starred(*args, **kwargs)
        if self._counted is None:
            return super().__call__(*args, **kwargs)
        n = len(args)
        counted = self._counted.get(n)
        if counted is None:
            fn, wrt, backend, options = self._given
            if _negative(_counted_back(wrt, n)):
                raise MyiaTypeError(
                    f"grad({self.entry.name}, ...): no argument at position {_lowest(wrt)} "
                    f"(the call passes {n} by position)"
                )
            counted = GradFunction(
                fn,
                _counted_back(wrt, n),
                self.value,
                has_aux=self.has_aux,
                backend=backend,
                **options,
            )
            self._counted[n] = counted
        return counted(*args, **kwargs)

    def compiled_signatures(self) -> list[Signature]:
        """The argument signatures compiled so far (one entry per compilation)."""
        if self._starred is not None:
            return self._starred.compiled_signatures()
        counted = self._counted.values() if self._counted else ()
        return [*self._cache, *(s for c in counted for s in c.compiled_signatures())]

    def graph(self) -> Graph:
        from .frontend.parser import bound_graph
        from .grad.api import entry_graph

        # The entry passes one argument per parameter (`*args` as a tuple...).
        inner = bound_graph(self.fn, MyiaFunction.graph(self))
        if self._entry is None or self._entry[0] is not inner:
            self._entry = (inner, entry_graph(inner, self.wrt, self.value, self.has_aux))
        return self._entry[1]

    __myia_graph__ = graph


def _negative(wrt: Any) -> bool:
    """Whether `wrt` (`grad`'s parameters) holds a negative position."""
    if isinstance(wrt, (tuple, list)):
        return any(map(_negative, wrt))
    return isinstance(wrt, int) and not isinstance(wrt, bool) and wrt < 0


def _lowest(wrt: Any) -> int:
    """The lowest position in `wrt`."""
    if isinstance(wrt, (tuple, list)):
        return min(map(_lowest, wrt))
    return wrt if isinstance(wrt, int) else 0


def _counted_back(wrt: Any, n: int) -> Any:
    """`wrt` where a call passes `n` arguments by position: ``-1`` is ``n - 1``..."""
    if isinstance(wrt, (tuple, list)):
        return type(wrt)(_counted_back(w, n) for w in wrt)
    if _negative(wrt) and wrt >= -n:
        return wrt + n
    return wrt


def _counting(fn: Any, wrt: tuple[Any, ...], value: bool, aux: bool) -> Callable[..., Any]:
    """What Myia code calls for ``grad(fn, *wrt)`` with a negative position in `wrt`.

    The gradient taken in Myia code, where a call's positional arguments are counted
    (`myia.grad.api.at_call`); the entry graph of a `GradFunction` has one per parameter.
    """
    transform = value_and_grad if value else grad

    def counted(*args, **kwargs):
        return transform(fn, *wrt, has_aux=aux)(*args, **kwargs)

    return counted


def _into_star(entry: Entry, wrt: tuple[Any, ...]) -> bool:
    """Whether `wrt` differentiates arguments that the ``*args`` of `entry`'s function gets."""
    if entry.prefixed:
        return False
    kinds = [p.kind for p in entry.signature.parameters.values()]
    if inspect.Parameter.VAR_POSITIONAL not in kinds:
        return False
    k = kinds.index(inspect.Parameter.VAR_POSITIONAL)
    flat = [x for w in wrt for x in (w if isinstance(w, tuple) else (w,))] or [0]
    return any(isinstance(w, int) and w >= k for w in flat)


def _check_wrt(wrt: tuple[Any, ...], entry: Entry) -> tuple[Any, ...]:
    """The parameters `grad` differentiates, checked.

    Positions in a partial application (``grad(functools.partial(f, a))``,
    ``grad(obj.method)``) become names of `f`'s parameters.
    """
    for w in wrt:
        items = w if isinstance(w, (tuple, list)) else (w,)
        for i in items:
            if isinstance(i, bool) or not isinstance(i, (int, str)):
                raise MyiaTypeError(
                    f"grad({entry.name}, ...): the parameters differentiated are given by "
                    f"position (an int) or name (a str), or a tuple of them, not {i!r}"
                )
    wrt = tuple(tuple(w) if isinstance(w, list) else w for w in wrt)
    if not entry.prefixed:
        return wrt
    names = list(entry.user_signature().parameters)

    def name(i: Any) -> Any:
        if isinstance(i, str):
            return i
        if not -len(names) <= i < len(names):
            raise MyiaTypeError(
                f"grad({entry.name}, ...): no argument at position {i} "
                f"(the function takes {len(names)})"
            )
        return names[i]

    if not wrt:
        return (name(0),)
    return tuple(tuple(map(name, w)) if isinstance(w, tuple) else name(w) for w in wrt)


def _grad_arguments(
    wrt: tuple[Any, ...], argnums: Any, options: dict[str, Any], who: str
) -> tuple[Any, ...]:
    """`wrt`, or JAX's ``argnums=``; a keyword `grad` does not know is a `MyiaTypeError`."""
    unknown = sorted(set(options) - {"backend", "has_aux", "debug_nans", *BACKEND_OPTIONS})
    if unknown:
        raise MyiaTypeError(
            f"{who}() got an unexpected keyword argument {unknown[0]!r}: give the parameters "
            f'to differentiate by position or name ({who}(f, "y"), {who}(f, 1), '
            f"{who}(f, (0, 1))) or as argnums=..."
        )
    if argnums is None:
        return wrt
    if wrt:
        raise MyiaTypeError(f"{who}() got parameters both as arguments and as argnums")
    return (argnums,)


@boundary
def grad(fn: Callable[..., Any], *wrt: Any, argnums: Any = None, **options: Any) -> GradFunction:
    """The gradient of scalar function `fn` w.r.t. the parameters `wrt` (default: the first).

    Parameters are named or given by position; several (``grad(f, 0, 1)``), or a tuple of
    them (``grad(f, (0, 1))``, JAX's ``argnums=(0, 1)``), give a tuple of gradients. Works at
    the top level (it compiles) and inside Myia code, to any order. With ``has_aux=True``,
    `fn` returns ``(loss, aux)`` and the result is ``(gradient, aux)``.
    """
    wrt = _grad_arguments(wrt, argnums, options, "grad")
    return GradFunction(fn, wrt, False, **options)


@boundary
def value_and_grad(
    fn: Callable[..., Any], *wrt: Any, argnums: Any = None, **options: Any
) -> GradFunction:
    """Like `grad`, but returns ``(fn(*args), gradient)``.

    With ``has_aux=True``, `fn` returns ``(loss, aux)`` and the result is
    ``((loss, aux), gradient)``, as in JAX.
    """
    wrt = _grad_arguments(wrt, argnums, options, "value_and_grad")
    return GradFunction(fn, wrt, True, **options)


def _register_grad_in_myia_code() -> None:
    from .grad import lib
    from .operations.mapping import MAPPING

    MAPPING[grad] = lib.grad_
    MAPPING[value_and_grad] = lib.value_and_grad_


_register_grad_in_myia_code()


@boundary
def myia(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """Compile `fn` with Myia: ``@myia``, ``@myia(backend=...)`` or ``myia(fn, ...)``."""
    if fn is None:
        return lambda f: MyiaFunction(f, **options)
    return MyiaFunction(fn, **options)

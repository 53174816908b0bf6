"""What a global name in a user's function means to Myia.

Names that are not local to any enclosing function are looked up when the function is parsed:
in the Python closure of the function, then its module's globals, then the builtins. The value
found becomes a constant of the IR: a Python function is parsed in turn (once, cached), a
builtin or NumPy/`math` function becomes the operation or primitive it maps to, and a plain
value (a number, an array, a tuple, a module, a dataclass) is kept as is. Module-level values
are thus read at compile time.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import inspect
import sys
import types
from typing import Any

import numpy as np

from ..errors import MyiaNameError, MyiaTypeError, at, did_you_mean
from ..ir.node import Constant, DebugInfo, Graph, Location
from ..operations.core import Operation
from ..operations.mapping import lookup, refusal
from ..primitives import P, Primitive

_MISSING = object()

_PLAIN_TYPES = (
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    type(None),
    type(Ellipsis),
    slice,
    np.ndarray,
    np.generic,
    np.dtype,
)


def lookup_global(fn: types.FunctionType, name: str) -> Any:
    """Return the value of the free name `name` of Python function `fn`, or `_MISSING`."""
    code = fn.__code__
    if fn.__closure__ and name in code.co_freevars:
        cell = fn.__closure__[code.co_freevars.index(name)]
        try:
            return cell.cell_contents
        except ValueError:
            return _MISSING
    if name in fn.__globals__:
        return fn.__globals__[name]
    return getattr(builtins, name, _MISSING)


def _local_names(code: types.CodeType) -> list[str]:
    """The names of the variables of `code` and of the functions defined in it."""
    names = [*code.co_varnames, *code.co_cellvars, *code.co_freevars]
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names += _local_names(c)
    return names


def is_namespace(value: Any) -> bool:
    """Whether attributes of `value` are resolved when parsing (modules, classes, namespaces)."""
    return isinstance(value, (types.ModuleType, types.SimpleNamespace, type))


def is_parsable(value: Any) -> bool:
    """Whether `value` is a Python function Myia parses (not one of NumPy's own)."""
    if not isinstance(value, types.FunctionType):
        return False
    module = getattr(value, "__module__", None) or ""
    if module == "numpy" or module.startswith("numpy."):
        return False
    return not value.__code__.co_filename.startswith("<")


def to_node(
    value: Any, name: str, location: Location | None, function: str = "<module>"
) -> Constant:
    """Return the IR constant standing for Python value `value` (named `name` in the source).

    `function` is the name of the function that uses it (for an error's traceback).
    """
    from .parser import parse

    debug = DebugInfo(name, location)
    if not isinstance(value, types.FunctionType):
        # A function compiled by Myia (`myia`, `grad`). (A plain function may carry these
        # attributes too, copied by `functools.wraps` from the function it wraps: it is
        # itself parsed.)
        make_graph = getattr(value, "__myia_graph__", None)
        if make_graph is not None:
            entry = getattr(value, "entry", None)
            if entry is not None and entry.prefixed:
                # `grad` of a partial application: the gradient's graph, arguments bound.
                callee = Constant(make_graph(), debug)
                sig = entry.user_signature()
                g = _bound_call(callee, entry.args, sig, name, location)
                return Constant(g, debug)
            return Constant(make_graph(), debug)
        value = getattr(value, "__myia_function__", value)
    if value is np.random.default_rng or value is np.random.RandomState:
        raise MyiaTypeError(
            f"{name} cannot be called in Myia code: make the generator outside, "
            "rng = np.random.default_rng(seed), and pass it as an argument",
            at(location, function),
        )
    if _legacy_random(value):
        raise MyiaTypeError(
            f"{name} draws from NumPy's global random state, which Myia code does not use: "
            "pass a generator, np.random.default_rng(seed), as an argument and call its "
            f"methods (rng.{getattr(value, '__name__', 'normal')}(...))",
            at(location, function),
        )
    stream = _stream(value)
    if stream is not None:
        return Constant(stream, debug)
    if isinstance(value, functools._lru_cache_wrapper) and is_parsable(value.__wrapped__):
        value = value.__wrapped__  # `functools.cache`: a pure function computes the same
    mapped = lookup(value)
    if mapped is not None:
        value = mapped
    if isinstance(value, (Graph, Primitive, Operation)):
        return Constant(value, debug)
    why = refusal(value) if callable(value) else None
    if why is not None and is_parsable(value):  # Python's own code that Myia cannot run
        raise MyiaTypeError(
            f"{value.__module__}.{value.__qualname__} is not supported in Myia code (used as "
            f"{name!r}): {why}",
            at(location, function),
        )
    if is_parsable(value):
        return Constant(parse(value), debug)
    if isinstance(value, types.FunctionType) and value.__code__.co_filename.startswith("<"):
        # Defined in a notebook cell (its source is known), by exec or eval (it is not).
        from .source import module_ast, no_source_error

        if module_ast(value.__code__.co_filename) is None:
            raise no_source_error(value, location, function)
        return Constant(parse(value), debug)
    if isinstance(value, functools.partial) or (
        isinstance(value, types.MethodType) and is_parsable(value.__func__)
    ):
        return Constant(partial_graph(value, name, location), debug)
    if isinstance(value, _PLAIN_TYPES) or is_namespace(value):
        return Constant(value, debug)
    if isinstance(value, (tuple, list, dict)) or dataclasses.is_dataclass(value):
        return Constant(value, debug)
    if callable(value):
        qual = getattr(value, "__qualname__", None) or getattr(value, "__name__", repr(value))
        module = getattr(value, "__module__", None)
        full = f"{module}.{qual}" if module and module != "builtins" else qual
        why = refusal(value)
        raise MyiaTypeError(
            f"{full} is not supported in Myia code (used as {name!r})"
            + (f": {why}" if why else ""),
            at(location, function),
        )
    return Constant(value, debug)


def _legacy_random(value: Any) -> bool:
    """Whether `value` is one of ``np.random``'s functions (global state, or a new generator)."""
    if isinstance(getattr(value, "__self__", None), np.random.RandomState):
        return True  # np.random.normal...: methods of the global RandomState
    module = getattr(value, "__module__", None) or ""
    return callable(value) and not isinstance(value, type) and module.startswith("numpy.random")


def _stream(value: Any) -> Any:
    """The `Stream` Myia code names ``sys.stdout`` or ``sys.stderr`` by, or None."""
    from ..primitives.control import STDERR, STDOUT

    if value is sys.stdout or value is sys.__stdout__:
        return STDOUT
    if value is sys.stderr or value is sys.__stderr__:
        return STDERR
    return None


def _holds_functions(value: Any, depth: int = 0) -> bool:
    t = type(value)
    if depth > 20:  # deep or cyclic data: a plain constant
        return False
    if t is tuple or t is list:
        return any(_holds_functions(v, depth + 1) for v in value)
    if t is dict:
        return any(_holds_functions(v, depth + 1) for v in value.values())
    return callable(value) and not isinstance(value, (type, np.ndarray, np.generic))


def functions_in_constant(value: Any, name: str, location: Location | None, apply: Any) -> Any:
    """A tuple, list or dict of functions (``ACTIVATIONS = (np.tanh, relu)``) built in the IR.

    Each function becomes the constant Myia calls (a parsed graph, a primitive), and the
    container is built with ``apply(primitive, *args)``. Return None for any other value.
    """
    from ..primitives import P

    if not _holds_functions(value):
        return None
    t = type(value)
    if t is tuple or t is list or t is dict:
        items = list(value.values()) if t is dict else list(value)
        nodes = [
            functions_in_constant(v, name, location, apply) or _item(v, name, location)
            for v in items
        ]
        if t is dict:
            return apply(P.make_dict, tuple(value), *nodes)
        return apply(P.make_tuple if t is tuple else P.make_list, *nodes)
    return None


def partial_graph(value: Any, name: str, location: Location | None) -> Graph:
    """The graph of a partial application or bound method that Myia code refers to.

    It has the parameters Python gives the partial application (`inspect.signature`: those
    left, with their defaults; keywords bound become keyword-only parameters with defaults)
    and calls the function with the bound arguments first. The bound values are constants,
    read at compile time like the other module-level values.
    """
    if isinstance(value, functools.partial):
        fn, args = value.func, value.args
    else:
        fn, args = value.__func__, (value.__self__,)
    try:
        sig = inspect.signature(value)
    except (TypeError, ValueError):
        sig = None
    kinds = [p.kind for p in sig.parameters.values()] if sig is not None else []
    if sig is None or any(k in (_VAR_POSITIONAL, _VAR_KEYWORD) for k in kinds):
        raise MyiaTypeError(
            f"{name}: a partial application of a function with *args or **kwargs is not "
            "supported in Myia code when read from a global; write a function",
            at(location),
        )
    return _bound_call(to_node(fn, name, location), args, sig, name, location)


def _bound_call(
    callee: Constant,
    args: tuple[Any, ...],
    sig: inspect.Signature,
    name: str,
    location: Location | None,
) -> Graph:
    """``(params of sig) -> callee(*args, *params)``, keyword-only parameters by name.

    (Keywords a partial application binds are keyword-only parameters of `sig`, with the
    values bound as defaults.)
    """
    g = Graph(f"partial({name})", location)
    inputs: list[Any] = [Constant(a, DebugInfo(None, location)) for a in args]
    for p in sig.parameters.values():
        param = g.add_parameter(p.name, DebugInfo(p.name, location))
        if p.default is not p.empty:
            g.defaults[p.name] = Constant(p.default, DebugInfo(p.name, location))
        if p.kind is inspect.Parameter.KEYWORD_ONLY:
            g.kwonly += 1
            inputs.append(g.apply(P.make_kwarg, p.name, param))
        else:
            inputs.append(param)
    g.output = g.apply(callee, *inputs)
    return g


_VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL
_VAR_KEYWORD = inspect.Parameter.VAR_KEYWORD


def _item(value: Any, name: str, location: Location | None) -> Constant:
    try:
        return to_node(value, name, location)
    except MyiaTypeError:  # a function Myia does not support: an error only where called
        return Constant(value, DebugInfo(name, location))


def resolve_global(
    fn: types.FunctionType, name: str, location: Location | None, function: str | None = None
) -> Constant:
    """Return the constant for free name `name` of `fn`, or raise `MyiaNameError`.

    `location` is where the name is used, in the function (possibly nested in `fn`) named
    `function`.
    """
    value = lookup_global(fn, name)
    if value is _MISSING:
        hint = did_you_mean(name, [*_local_names(fn.__code__), *fn.__globals__, *dir(builtins)])
        raise MyiaNameError(
            f"name {name!r} is not defined{hint}", at(location, function or fn.__name__)
        )
    return to_node(value, name, location, function or fn.__name__)

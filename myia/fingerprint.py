"""Fingerprints of Python values: what the disk cache compares to know a program is current.

A fingerprint is a SHA-256 of everything about a value a compilation can depend on: a
function's code (bytecode, constants, names, line table, nested code), its defaults and its
custom gradient; a number's type and value; an array's dtype, shape and bytes; a container's
items; a user's class's bases, methods and attributes; a module or a library object
(NumPy's, Myia's, the standard library's) by its name, which the versions in the cache key
cover. A value that cannot be fingerprinted reliably (an object of an unknown type, a cycle)
raises `Unfingerprintable`, and the program is not cached.

Fingerprinting a value also lists the Python functions it holds (`Fingerprinter.found`, in a
fixed order), so that the disk cache can find, in a new process, the functions a program
used through the values that hold them.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import hashlib
import sys
import types
from typing import Any

import numpy as np

from .records import field_names, field_values, is_namedtuple_class, is_record_value

#: Top-level packages whose objects are fingerprinted by name: their versions are in the key.
_LIBRARIES = frozenset({"builtins", "numpy", "myia", "jax", "jaxlib", "numba"})

#: Attributes of a class that are not part of its behaviour, or are fingerprinted otherwise.
_CLASS_SKIP = frozenset(
    {
        "__dict__",
        "__weakref__",
        "__module__",
        "__doc__",
        "__qualname__",
        "__annotations__",
        "__dataclass_fields__",
        "__dataclass_params__",
        "__match_args__",
        "__static_attributes__",
        "__firstlineno__",
    }
)

_MISSING = object()


class Unfingerprintable(Exception):
    """A value whose fingerprint would not say reliably whether it changed."""


def is_library(module: str | None) -> bool:
    """Whether `module` is of a library whose version the cache key holds (or the stdlib)."""
    top = (module or "").partition(".")[0]
    return top in _LIBRARIES or top in sys.stdlib_module_names


def resolve(module: str, qualname: str) -> Any:
    """The object named `qualname` in the imported module `module`, or `_MISSING`."""
    obj: Any = sys.modules.get(module, _MISSING)
    for part in qualname.split("."):
        if obj is _MISSING or part == "<locals>":
            return _MISSING
        obj = getattr(obj, part, _MISSING)
    return obj


def name_of(v: Any) -> tuple[str, str] | None:
    """``(module, qualname)`` that `resolve` finds `v` by, or None."""
    module = getattr(v, "__module__", None)
    qualname = getattr(v, "__qualname__", None) or getattr(v, "__name__", None)
    if isinstance(v, np.ufunc) and module is None:
        module = "numpy"
    if not isinstance(module, str) or not isinstance(qualname, str):
        return None
    return (module, qualname) if resolve(module, qualname) is v else None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Fingerprinter:
    """Fingerprints values (`__call__`), listing the Python functions they hold in `found`."""

    def __init__(self) -> None:
        self.found: list[types.FunctionType] = []
        self._active: set[int] = set()

    def __call__(self, v: Any) -> str:
        return _digest(self.text(v))

    def text(self, v: Any, depth: int = 0) -> str:
        if depth > 64:
            raise Unfingerprintable("a value nested too deeply")
        t = type(v)
        if v is None or v is Ellipsis or t in (bool, int, float, complex, str, bytes):
            return f"{t.__name__}:{v!r}"
        if t is np.ndarray:
            if v.dtype.hasobject:
                raise Unfingerprintable("an array of Python objects")
            data = hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()
            return f"array:{v.dtype.str}:{v.shape}:{data}"
        if isinstance(v, np.generic):
            if v.dtype.hasobject:
                raise Unfingerprintable("a NumPy object")
            return f"np:{v.dtype.str}:{np.asarray(v).tobytes().hex()}"
        if isinstance(v, np.dtype):
            if v.hasobject:
                raise Unfingerprintable("a dtype of Python objects")
            return f"dtype:{v.descr!r}"
        if id(v) in self._active:
            raise Unfingerprintable("a value that contains itself")
        self._active.add(id(v))
        try:
            return self._composite(v, t, depth + 1)
        finally:
            self._active.discard(id(v))

    def _composite(self, v: Any, t: type, depth: int) -> str:
        items = self._items
        if t is tuple or t is list:
            return f"{t.__name__}({items(v, depth)})"
        if t is dict:
            return f"dict({items(v.keys(), depth)}:{items(v.values(), depth)})"
        if t is set or t is frozenset:
            return f"{t.__name__}({','.join(sorted(self.text(x, depth) for x in v))})"
        if t is slice or t is range:
            return f"{t.__name__}({items((v.start, v.stop, v.step), depth)})"
        if t is types.FunctionType:
            return self._function(v, depth)
        if t is types.ModuleType:
            if sys.modules.get(v.__name__) is not v:
                raise Unfingerprintable(f"the module {v.__name__} is not imported by its name")
            return f"module:{v.__name__}"
        if isinstance(v, type):
            return self._class(v, depth)
        if t is types.MethodType:
            return f"method({self.text(v.__func__, depth)},{self.text(v.__self__, depth)})"
        if t is functools.partial:
            parts = (v.func, v.args, v.keywords)
            return f"partial({items(parts, depth)})"
        if t is staticmethod or t is classmethod:
            return f"{t.__name__}({self.text(v.__func__, depth)})"
        if t is property:
            return f"property({items((v.fget, v.fset, v.fdel), depth)})"
        if t is types.SimpleNamespace:
            return f"namespace({self.text(dict(sorted(vars(v).items())), depth)})"
        if v is dataclasses.MISSING:
            return "dataclasses.MISSING"
        if v is sys.stdout or v is sys.__stdout__:
            return "stream:stdout"
        if v is sys.stderr or v is sys.__stderr__:
            return "stream:stderr"
        if hasattr(v, "__myia_graph__") and hasattr(v, "entry"):
            # A function compiled by Myia (`myia`, `grad`), used in Myia code: its graph.
            how = (getattr(v, "wrt", None), getattr(v, "value", None), getattr(v, "has_aux", None))
            inner = self.text(v.entry.callable, depth)
            return f"myia:{t.__name__}({inner},{self.text(how, depth)})"
        if is_record_value(v):
            return f"record({self._class(t, depth)},{items(field_values(v), depth)})"
        if isinstance(v, tuple) and is_library(t.__module__):
            return f"{t.__module__}.{t.__qualname__}({items(v, depth)})"
        if t.__name__ == "Primitive" and is_library(t.__module__):
            return f"primitive:{v.name}"
        name = name_of(v)
        if name is not None and is_library(name[0]):
            return f"object:{name[0]}:{name[1]}"
        raise Unfingerprintable(f"a value of type {t.__qualname__}")

    def _items(self, values: Any, depth: int) -> str:
        return ",".join(self.text(x, depth) for x in values)

    def _function(self, fn: types.FunctionType, depth: int) -> str:
        from .grad.registry import CUSTOM_BPROPS
        from .infer.traceback import is_internal

        if is_library(fn.__module__) or is_internal(fn.__code__.co_filename):
            name = name_of(fn)
            if name is None:
                raise Unfingerprintable(f"the library function {fn.__qualname__}")
            return f"object:{name[0]}:{name[1]}"
        self.found.append(fn)
        parts = [
            fn.__module__,
            fn.__qualname__,
            code_text(fn.__code__),
            self.text(fn.__defaults__, depth),
            self.text(fn.__kwdefaults__, depth),
            self.text(getattr(fn, "sequence_argument", False), depth),
        ]
        bprop = CUSTOM_BPROPS.get(fn)
        if bprop is not None:
            parts.append("bprop:" + self.text(bprop, depth))
        return f"function({'|'.join(map(str, parts))})"

    def _class(self, cls: type, depth: int) -> str:
        if is_library(cls.__module__):
            name = name_of(cls)
            if name is None:
                raise Unfingerprintable(f"the class {cls.__qualname__}")
            return f"class:{name[0]}:{name[1]}"
        parts = [cls.__module__, cls.__qualname__, self._items(cls.__bases__, depth)]
        if dataclasses.is_dataclass(cls):
            parts.append(repr(getattr(cls, "__dataclass_params__", None)))
            for f in dataclasses.fields(cls):
                default = (f.default, f.default_factory)
                parts.append(f"{f.name}:{f.type!s}:{self.text(default, depth)}")
        if is_namedtuple_class(cls):
            defaults = cls._field_defaults  # type: ignore[attr-defined]
            parts.append(f"namedtuple:{field_names(cls)}:{self.text(defaults, depth)}")
            parts.append(repr(getattr(cls, "__annotations__", {})))
        for k, a in cls.__dict__.items():
            if k in _CLASS_SKIP or (is_namedtuple_class(cls) and _made_by_namedtuple(cls, k)):
                continue
            if isinstance(a, types.FunctionType) and a.__code__.co_filename == "<string>":
                # Made by `dataclasses` from the fields (``__init__``, ``__eq__``...).
                continue
            parts.append(f"{k}={self.text(a, depth)}")
        return f"userclass({'|'.join(parts)})"


def _made_by_namedtuple(cls: type, name: str) -> bool:
    """Whether attribute `name` of named tuple class `cls` is one `namedtuple` makes."""
    return name in _NAMEDTUPLE_MADE or name in field_names(cls)


#: The attributes `collections.namedtuple` gives each class (fingerprinted by its fields).
_NAMEDTUPLE_MADE = frozenset(
    [*vars(collections.namedtuple("_Made", "x")), "__orig_bases__", "__annotations__"]
)


def code_text(code: types.CodeType) -> str:
    """Everything about a code object (its nested code objects included)."""
    consts = []
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            consts.append(code_text(c))
        elif isinstance(c, frozenset):
            consts.append(f"frozenset({sorted(map(repr, c))})")
        else:
            consts.append(f"{type(c).__name__}:{c!r}")
    fields = (
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags,
        code.co_code.hex(),
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_filename,
        code.co_name,
        code.co_qualname,
        code.co_firstlineno,
        code.co_linetable.hex(),
        code.co_exceptiontable.hex(),
    )
    return f"code({fields!r},[{','.join(consts)}])"


def code_fingerprint(code: types.CodeType) -> str:
    """The fingerprint of a code object."""
    return _digest(code_text(code))

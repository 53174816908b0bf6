"""How the reference interpreter calls what is not a graph: primitives with keywords, classes.

Also the keyword arguments of ``f(**d)`` and the exception that carries an error raised by
the user's program out of the interpreter loop.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any

import numpy as np

from ..errors import MyiaTypeError
from ..primitives import P, Primitive
from ..primitives.structure import KeywordArgument
from ..records import is_namedtuple_class


class UserException(Exception):
    """Carries an exception the user's program raised out of the interpreter loop."""

    def __init__(self, exception: BaseException):
        super().__init__(exception)
        self.exception = exception


def _keyword_arguments(dicts: list[dict[str, Any]]) -> list[KeywordArgument]:
    """The keyword arguments of ``f(**d1, **d2)``: Python's ``TypeError`` on a repeated key."""
    out: list[KeywordArgument] = []
    seen: set[str] = set()
    for d in dicts:
        if type(d) is not dict:
            raise UserException(TypeError(f"argument after ** must be a mapping, not {d!r}"))
        for k, v in d.items():
            if k in seen:
                raise UserException(TypeError(f"got multiple values for keyword argument {k!r}"))
            seen.add(k)
            out.append(KeywordArgument(k, v))
    return out


_KIND_NAMES = {float: "f64", int: "i64", bool: "bool", type(None): "None"}


def _kind_name(k: Any) -> str:
    """Name a kind as type errors do (``f64``, ``i64``, ``f32``, ``Array``, ``tuple``...)."""
    if k in _KIND_NAMES:
        return _KIND_NAMES[k]
    if isinstance(k, type) and issubclass(k, np.generic):
        dt = np.dtype(k)
        return "bool" if dt.kind == "b" else f"{dt.kind}{dt.itemsize * 8}"
    return getattr(k, "__name__", repr(k))


def _bind_primitive(prim: Primitive, args: list[Any]) -> list[Any]:
    pos = [a for a in args if type(a) is not KeywordArgument]
    kws = {a.key: a.value for a in args if type(a) is KeywordArgument}
    try:
        bound = prim.signature.bind(*pos, **kws)
    except TypeError as exc:
        raise MyiaTypeError(f"{prim.name}: {exc}") from None
    bound.apply_defaults()
    return list(bound.args)


@functools.cache
def _fields(cls: type) -> tuple[dataclasses.Field, ...]:
    return dataclasses.fields(cls)


def construct(cls: type, args: list[Any]) -> Any:
    """Call a class: build a dataclass instance (fields bound like its ``__init__``)."""
    if is_namedtuple_class(cls):  # (its ``__new__`` binds the fields and their defaults)
        pos = [a for a in args if type(a) is not KeywordArgument]
        kws = {a.key: a.value for a in args if type(a) is KeywordArgument}
        try:
            return cls(*pos, **kws)
        except TypeError as exc:
            raise MyiaTypeError(f"{cls.__name__}(): {exc}") from None
    if dataclasses.is_dataclass(cls):
        fields = _fields(cls)
        if len(args) == len(fields) and all(f.init for f in fields):
            if not any(type(a) is KeywordArgument for a in args):
                return P.make_record.impl(cls, *args)
        pos = [a for a in args if type(a) is not KeywordArgument]
        kws = {a.key: a.value for a in args if type(a) is KeywordArgument}
        try:
            bound = inspect.signature(cls).bind(*pos, **kws)
        except TypeError as exc:
            raise MyiaTypeError(f"{cls.__name__}(): {exc}") from None
        values = []
        for f in fields:
            if f.name in bound.arguments:
                values.append(bound.arguments[f.name])
            elif f.default_factory is not dataclasses.MISSING:
                values.append(f.default_factory())
            else:
                values.append(f.default)
        return P.make_record.impl(cls, *values)
    if issubclass(cls, BaseException):
        return cls(*args)
    raise MyiaTypeError(f"calling {cls.__name__} is not supported in Myia")

"""Records: the classes whose instances Myia takes apart by field name.

A record is an instance of a dataclass or of a named tuple (`typing.NamedTuple`,
`collections.namedtuple`). Both have the abstract value `AbstractRecord`: their fields are
read by name, built by the class, replaced, differentiated and given back as instances of the
class. A named tuple is also a tuple: inside Myia code it is indexed, measured, unpacked and
iterated as the tuple of its fields (`myia.operations.core.Operation`'s sequence operations).

This module reads classes and values only; it imports nothing of Myia.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any


def is_namedtuple_class(cls: Any) -> bool:
    """Whether `cls` is a named tuple class (``typing.NamedTuple``, ``namedtuple``)."""
    return (
        isinstance(cls, type)
        and issubclass(cls, tuple)
        and isinstance(getattr(cls, "_fields", None), tuple)
        and hasattr(cls, "_make")
    )


#: `is_record_class` of each class asked about (it is asked of every value's class).
_RECORD_CLASSES: dict[type, bool] = {}


def is_record_class(cls: Any) -> bool:
    """Whether `cls` is a dataclass or a named tuple class."""
    try:
        return _RECORD_CLASSES[cls]
    except KeyError:
        pass
    except TypeError:  # (an unhashable class)
        return False
    out = isinstance(cls, type) and (dataclasses.is_dataclass(cls) or is_namedtuple_class(cls))
    if isinstance(cls, type):
        _RECORD_CLASSES[cls] = out
    return out


def is_record_value(x: Any) -> bool:
    """Whether `x` is an instance of a dataclass or of a named tuple class."""
    return not isinstance(x, type) and is_record_class(type(x))


@functools.cache
def field_names(cls: type) -> tuple[str, ...]:
    """The names of the fields of record class `cls`, in order."""
    if is_namedtuple_class(cls):
        return tuple(cls._fields)  # type: ignore[attr-defined]
    return tuple(f.name for f in dataclasses.fields(cls))


@functools.cache
def init_names(cls: type) -> tuple[str, ...]:
    """The fields of `cls` that its constructor takes (``dataclasses.replace``'s)."""
    if is_namedtuple_class(cls):
        return field_names(cls)
    return tuple(f.name for f in dataclasses.fields(cls) if f.init)


def field_annotation(cls: type, name: str) -> Any:
    """The annotation of field `name` of `cls` as written (a string, a type), or None."""
    if is_namedtuple_class(cls):
        return getattr(cls, "__annotations__", {}).get(name)
    return next(f.type for f in dataclasses.fields(cls) if f.name == name)


def field_values(x: Any, cls: type | None = None) -> tuple[Any, ...]:
    """The values of the fields of record `x`, in order.

    With `cls`, the fields of that class are read as attributes of `x` (a stand-in for a
    record of `cls`, such as a lazy sensitivity, which reads them from the record it builds).
    """
    if cls is None:
        if isinstance(x, tuple):
            return tuple(x)
        cls = type(x)
    return tuple(getattr(x, n) for n in field_names(cls))


def make_value(cls: type, values: Any) -> Any:
    """An instance of record class `cls` holding `values` (no ``__init__`` nor checks run)."""
    if is_namedtuple_class(cls):
        return tuple.__new__(cls, tuple(values))
    obj = object.__new__(cls)
    for n, v in zip(field_names(cls), values):
        object.__setattr__(obj, n, v)
    return obj


def replace_fields(x: Any, **changes: Any) -> Any:
    """A copy of record `x` with the fields named in `changes` replaced."""
    if isinstance(x, tuple):
        return x._replace(**changes)  # type: ignore[attr-defined]
    return dataclasses.replace(x, **changes)


def is_plain_tuple(x: Any) -> bool:
    """Whether `x` is a tuple that is not a named tuple."""
    return isinstance(x, tuple) and not is_namedtuple_class(type(x))

"""Primitives on data structures: tuples, lists, dicts, records (dataclasses) and partials.

All data structures are immutable values in Myia: every primitive here builds a new value.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .core import primitive

# Tuples ---------------------------------------------------------------------------------------


@primitive
def make_tuple(*items):
    """Build the tuple ``(items...)``."""
    return items


@primitive
def tuple_getitem(t, i):
    """``t[i]`` for a constant integer ``i``."""
    return t[i]


@primitive
def tuple_slice(t, start, stop, step):
    """``t[start:stop:step]`` with constant bounds."""
    return t[start:stop:step]


@primitive
def tuple_concat(a, b):
    """``a + b`` on tuples."""
    return a + b


@primitive
def tuple_len(t):
    """``len(t)`` for a tuple."""
    return len(t)


# Lists ----------------------------------------------------------------------------------------


@primitive
def make_list(*items):
    """Build the list ``[items...]``."""
    return list(items)


@primitive
def list_getitem(lst, i):
    """``lst[i]`` for an integer ``i`` (negative indices count from the end)."""
    return lst[i]


@primitive
def list_slice(lst, start, stop, step):
    """``lst[start:stop:step]``."""
    return lst[start:stop:step]


@primitive
def list_concat(a, b):
    """``a + b`` on lists: a new list."""
    return a + b


@primitive
def list_len(lst):
    """``len(lst)``."""
    return len(lst)


# Dicts ----------------------------------------------------------------------------------------


@primitive
def make_dict(keys, *values):
    """Build a dict from a constant tuple of string keys and the values."""
    return dict(zip(keys, values))


@primitive
def dict_getitem(d, key):
    """``d[key]`` for a constant string key."""
    return d[key]


@primitive
def dict_keys(d):
    """The tuple of keys of ``d``."""
    return tuple(d.keys())


@primitive
def dict_values(d):
    """The tuple of values of ``d``, in key order."""
    return tuple(d.values())


# Records --------------------------------------------------------------------------------------


@primitive
def make_record(cls, *fields):
    """Build an instance of the dataclass ``cls`` from the values of all its fields."""
    obj = object.__new__(cls)
    for f, v in zip(dataclasses.fields(cls), fields):
        object.__setattr__(obj, f.name, v)
    return obj


@primitive
def record_getattr(r, name):
    """The field ``name`` (a constant string) of the record ``r``."""
    return getattr(r, name)


# Keyword arguments and partial application ------------------------------------------------------


class KeywordArgument:
    """A keyword argument at a call site: ``f(x, key=value)`` passes ``make_kwarg(key, value)``."""

    __slots__ = ("key", "value")

    def __init__(self, key: str, value: Any):
        self.key = key
        self.value = value

    def __repr__(self) -> str:
        return f"{self.key}={self.value!r}"


@primitive
def make_kwarg(key, value):
    """A keyword argument ``key=value``."""
    return KeywordArgument(key, value)


class Partial:
    """The partial application of a function to its first arguments."""

    __slots__ = ("fn", "args")

    def __init__(self, fn: Any, args: tuple[Any, ...]):
        self.fn = fn
        self.args = args

    def __repr__(self) -> str:
        return f"partial({self.fn!r}, {', '.join(map(repr, self.args))})"


@primitive
def partial(fn, *args):
    """The function ``fn`` with its first arguments bound to ``args``."""
    return Partial(fn, args)


@primitive
def make_slice(start, stop, step):
    """``slice(start, stop, step)``."""
    return slice(start, stop, step)

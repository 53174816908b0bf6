"""Argument signatures: the key under which a compiled specialization is cached."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

_SCALARS = {bool: "bool", int: "i64", float: "f64"}


class Signature(tuple):
    """The types of a call's arguments, printed in Myia's notation (``f64 x 3 x 4``)."""

    def __str__(self) -> str:
        return "(" + ", ".join(_show(t) for t in self) + ")"


def _show(t: Any) -> str:
    if isinstance(t, tuple) and t and t[0] == "tuple":
        return "(" + ", ".join(_show(x) for x in t[1]) + ")"
    return str(t)


def type_key(value: Any) -> Any:
    """A hashable description of the type of `value`."""
    t = type(value)
    if t in _SCALARS:
        return _SCALARS[t]
    if isinstance(value, np.generic):
        return value.dtype.str
    if isinstance(value, np.ndarray):
        return " x ".join([np.dtype(value.dtype).name, *map(str, value.shape)])
    if t is tuple:
        return ("tuple", tuple(type_key(v) for v in value))
    if t is list:
        return ("list", type_key(value[0]) if value else None)
    if t is dict:
        return ("dict", tuple((k, type_key(v)) for k, v in value.items()))
    if dataclasses.is_dataclass(value):
        return (t.__qualname__, tuple(type_key(getattr(value, f.name)) for f in dataclasses.fields(value)))
    if value is None:
        return "None"
    return t.__name__


def signature_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Signature:
    """The signature of a call."""
    keys = [type_key(a) for a in args]
    keys.extend((k, type_key(v)) for k, v in sorted(kwargs.items()))
    return Signature(keys)

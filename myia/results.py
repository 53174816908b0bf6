"""Results as the user receives them: NumPy scalars where a program computed 0-d arrays.

API.md: results come back as Python or NumPy scalars, never as 0-d arrays. Inside compiled
code a 0-d array behaves as in NumPy; a specialization whose result type holds one (an
argument returned as it is) makes it the NumPy scalar of its dtype when it returns.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .abstract.data import (
    AbstractArray,
    AbstractDict,
    AbstractList,
    AbstractRecord,
    AbstractTuple,
    AbstractValue,
    SelfRef,
)


def has_0d_array(a: AbstractValue) -> bool:
    """Whether a value of type `a` holds a 0-d array (not looking into recursive records).

    Iterative: an argument may be a tuple nested hundreds of levels deep.
    """
    todo = [a]
    while todo:
        x = todo.pop()
        if isinstance(x, AbstractArray):
            if x.shape == ():
                return True
        elif isinstance(x, AbstractTuple):
            todo.extend(x.elements)
        elif isinstance(x, AbstractList):
            todo.append(x.element)
        elif isinstance(x, AbstractDict):
            todo.extend(x.values)
        elif isinstance(x, AbstractRecord) and not any(isinstance(f, SelfRef) for f in x.fields):
            todo.extend(x.fields)
    return False


def scalars(value: Any, a: AbstractValue) -> Any:
    """`value`, of type `a`, with its 0-d arrays made NumPy scalars of their dtype."""
    if not has_0d_array(a):
        return value
    if isinstance(a, AbstractArray):
        return value[()] if type(value) is np.ndarray else value
    if isinstance(a, AbstractTuple):
        return tuple(map(scalars, value, a.elements))
    if isinstance(a, AbstractList):
        return [scalars(v, a.element) for v in value]
    if isinstance(a, AbstractDict):
        return {k: scalars(value[k], t) for k, t in zip(a.keys, a.values)}
    assert isinstance(a, AbstractRecord)
    changes = {n: scalars(getattr(value, n), t) for n, t in zip(a.names, a.fields)}
    return dataclasses.replace(value, **changes)


class ScalarResults:
    """An executable whose results hold no 0-d array: each is the NumPy scalar of its dtype."""

    def __init__(self, inner: Any, result: AbstractValue):
        self.inner = inner
        self.result = result

    def __call__(self, args: tuple[Any, ...]) -> Any:
        return scalars(self.inner(args), self.result)

    def __getattr__(self, name: str) -> Any:
        # What the backend's executable tells (``source``, ``jitted``, ``native``...).
        return getattr(self.inner, name)

"""Results as the user receives them: NumPy scalars where a program computed 0-d arrays.

API.md: results come back as Python or NumPy scalars, never as 0-d arrays. Inside compiled
code a 0-d array behaves as in NumPy; a specialization whose result type holds one (an
argument returned as it is) makes it the NumPy scalar of its dtype when it returns. A
``range`` (a record of Myia's library inside compiled code) comes back as Python's.
"""

from __future__ import annotations

from collections.abc import Callable
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
from .records import replace_fields


def _is_view(a: Any) -> bool:
    """Whether `a` is a dict view (``d.keys()``: `myia.operations.lib.DictView`)."""
    return isinstance(a, AbstractRecord) and hasattr(a.cls, "__myia_view__")


def _is_range(a: Any) -> bool:
    from .operations.lib import Range

    return isinstance(a, AbstractRecord) and a.cls is Range


def has_0d_array(a: AbstractValue) -> bool:
    """Whether a value of type `a` holds a 0-d array or a range (not in recursive records).

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
        elif _is_range(x) or _is_view(x):
            return True
        elif isinstance(x, AbstractRecord) and not any(isinstance(f, SelfRef) for f in x.fields):
            todo.extend(x.fields)
    return False


def _same(value: Any) -> Any:
    return value


def _scalar(value: Any) -> Any:
    return value[()] if type(value) is np.ndarray else value


def converter(a: AbstractValue) -> Callable[[Any], Any]:
    """The function making the 0-d arrays of a value of type `a` NumPy scalars of their dtype.

    Its ranges are made Python's.

    It is built once per specialization (from the result type) and walks only the parts of a
    result that may hold a 0-d array.
    """
    if not has_0d_array(a):
        return _same
    if isinstance(a, AbstractArray):
        return _scalar
    if isinstance(a, AbstractTuple):
        items = [converter(e) for e in a.elements]
        return lambda v: tuple(c(x) for c, x in zip(items, v))
    if isinstance(a, AbstractList):
        element = converter(a.element)
        return lambda v: [element(x) for x in v]
    if isinstance(a, AbstractDict):
        values = [(k, converter(t)) for k, t in zip(a.keys, a.values)]
        return lambda v: {k: c(v[k]) for k, c in values}
    assert isinstance(a, AbstractRecord)
    if _is_range(a):
        return lambda v: range(int(v.start), int(v.stop), int(v.step))
    if _is_view(a):  # (its elements, as a tuple: a view of a dict needs the dict)
        items = converter(a.fields[0])
        return lambda v: items(v.items)
    fields = [(n, converter(t)) for n, t in zip(a.names, a.fields) if has_0d_array(t)]
    return lambda v: replace_fields(v, **{n: c(getattr(v, n)) for n, c in fields})


class ScalarResults:
    """An executable whose results hold no 0-d array: each is the NumPy scalar of its dtype."""

    def __init__(self, inner: Any, result: AbstractValue):
        self.inner = inner
        self.result = result
        self.convert = converter(result)

    def __call__(self, args: tuple[Any, ...]) -> Any:
        return self.convert(self.inner(args))

    def __getattr__(self, name: str) -> Any:
        # What the backend's executable tells (``source``, ``jitted``, ``native``...).
        return getattr(self.inner, name)

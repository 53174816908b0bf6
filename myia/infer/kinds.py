"""The dispatch kind of an abstract value, and values known at compile time.

Operations are resolved on kinds (see `myia.operations.core`); an abstract value's kind is the
kind its runtime values will have, so that the interpreter and inference resolve alike.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

import numpy as np

from ..abstract.data import (
    ANYTHING,
    NONE,
    AbstractArray,
    AbstractConstant,
    AbstractDict,
    AbstractFunction,
    AbstractList,
    AbstractOpaque,
    AbstractRecord,
    AbstractScalar,
    AbstractSlice,
    AbstractStack,
    AbstractTuple,
    AbstractUnion,
    AbstractValue,
    PartialFunction,
    SelfRef,
    show,
)
from ..abstract.lattice import union_options
from ..errors import MyiaTypeError
from ..operations.core import Array, Function, UnionKind
from .traceback import error_frames

if TYPE_CHECKING:
    from ..primitives import Primitive


def union_error(a: AbstractValue, op: Any, calls: Any) -> MyiaTypeError:
    """The error for using a union-typed value where its alternative must be known."""
    return MyiaTypeError(
        f"a value of type {show(a)} is used in {op.name} without checking which it is; "
        "test it first (e.g. `if x is not None:` or `isinstance`)",
        error_frames(calls),
    )


def _option_class(a: AbstractValue) -> type:
    if isinstance(a, SelfRef):
        return a.cls
    return type(None) if a == NONE else abstract_kind(a)


_WEAK = {"bool": bool, "int64": int, "float64": float}


def abstract_kind(a: AbstractValue, op: Any = None, calls: Any = ()) -> Any:
    """The kind runtime values of abstract value `a` have."""
    t = type(a)
    if t is AbstractScalar:
        return _WEAK[a.dtype] if a.weak else np.dtype(a.dtype).type
    if t is AbstractArray:
        return Array
    if t is AbstractTuple:
        return tuple
    if t is AbstractList:
        return list
    if t is AbstractDict:
        return dict
    if t is AbstractRecord:
        return a.cls
    if t is AbstractFunction:
        return Function
    if t is AbstractConstant:
        v = a.value
        if isinstance(v, types.ModuleType):
            return v  # its attributes are known (``np.sum`` where ``np`` is an argument)
        return type if isinstance(v, type) else type(v)
    if t is AbstractUnion:
        return UnionKind(tuple(_option_class(o) for o in union_options(a)))
    if t is AbstractSlice:
        return slice
    if t is AbstractOpaque:
        return a.cls
    raise MyiaTypeError(f"unexpected value of type {show(a)}", error_frames(calls))


def static_value(a: AbstractValue) -> Any:
    """The Python value of `a` if known at compile time, else `ANYTHING`."""
    t = type(a)
    if t is AbstractScalar:
        return a.value
    if t is AbstractConstant:
        return a.value
    if t is AbstractTuple:
        items = [static_value(e) for e in a.elements]
        return ANYTHING if any(i is ANYTHING for i in items) else tuple(items)
    if t is AbstractFunction and len(a.options) == 1:
        (fn,) = a.options
        return getattr(fn, "pytype", ANYTHING)
    if t is AbstractList and a.value is not ANYTHING:
        return a.value  # a literal list of constants (as a tuple: ``x[[[0, 1], [2, 2]]]``)
    return ANYTHING


def is_literal(v: Any, leaves: tuple[type, ...] = (int,)) -> bool:
    """Whether `v` is None, of `leaves`, or a tuple of them (an item of a literal of axes).

    A list of them (``[None, 0]``) keeps its values in its type (`myia.abstract.AbstractList`),
    and a record of ints and None (``Pt(0, None)``) too: axes of ``vmap`` known at compile time.
    """
    if type(v) is tuple:
        return all(is_literal(e, leaves) for e in v)
    return v is None or isinstance(v, leaves)


def axes_literal(fields: Any) -> Any:
    """The values of a record's `fields` where all are ints, None or tuples of them.

    A field that is itself such a record gives the tuple of its values.

    Else `ANYTHING` (its type is then that of any record of its fields' types).
    """
    values = tuple(_literal_value(a) for a in fields)
    return values if fields and all(is_literal(v) for v in values) else ANYTHING


def _literal_value(a: Any) -> Any:
    """`static_value`, and a record literal's values (nested axes: ``Out(In(0, None), 1)``)."""
    if isinstance(a, AbstractRecord):
        return a.value
    return static_value(a)


GROWTH_LIMIT = 4


def abstract_size(a: Any) -> int:
    """The number of parts of abstract value `a` (it grows with nested tuples and ranks)."""
    if isinstance(a, AbstractTuple):
        return 1 + sum(abstract_size(e) for e in a.elements)
    if isinstance(a, (AbstractList, AbstractStack)):
        return 1 + abstract_size(a.element)
    if isinstance(a, AbstractDict):
        return 1 + sum(abstract_size(e) for e in a.values)
    if isinstance(a, AbstractRecord):
        return 1 + sum(abstract_size(e) for e in a.fields)
    if isinstance(a, AbstractUnion):
        return 1 + sum(abstract_size(e) for e in a.options)
    if isinstance(a, AbstractArray):
        return 1 + len(a.shape)  # (a rank that grows at every iteration never joins)
    if isinstance(a, AbstractFunction):
        # A partial application binding the previous one (``f = partial(g, f)`` in a loop).
        return 1 + max((_callee_size(o) for o in a.options), default=0)
    return 1


def _callee_size(o: Any) -> int:
    size = 0
    while isinstance(o, PartialFunction):
        size += 1 + sum(abstract_size(e) for e in o.args)
        o = o.fn
    return size


def _fold(prim: Primitive, args: list[AbstractValue], result: AbstractScalar) -> AbstractValue:
    """Compute a scalar result at compile time when every argument is known."""
    values = []
    for a in args:
        v = static_value(a)
        if v is ANYTHING or not isinstance(a, (AbstractScalar, AbstractConstant, AbstractTuple)):
            return result
        values.append(v)
    try:
        v = prim.impl(*values)
    except Exception:
        return result
    if result.weak and type(v) is not _WEAK.get(result.dtype):
        return result  # (``2 ** -2`` is a float: computed at run time, as ``a ** b``)
    return AbstractScalar(result.dtype, result.weak, v)

"""The whole program's lowering of the primitives on arrays and trees (`native_whole`).

The machine code of a whole program computes arrays with the NumPy functions Numba has
(`native_arrays`) and reads trees as arrays (`native_records`): where the NumPy backend's
code calls a runtime function or reads an attribute, `lower` writes what Numba compiles.
Each rewrite is named, ``lhs => rhs``; a primitive whose values are of other types keeps
the NumPy backend's code (which the checks of `native_whole` then refuse).
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import AbstractScalar
from ..ir.analysis import graph_constants
from ..ir.node import Apply, Graph
from ..primitives import P
from .native_arrays import (
    ADD_AT_SOURCE,
    WINDOW_START_SOURCE,
    basic_index,
    creation,
    native_array,
    window_source,
)
from .native_source import _weak_leaf


def _getattr(gen: Any, node: Apply) -> str | None:
    """A field of a tree: a read of its array (`native_records`).

    record_getattr(t, "left") => _rc[c][k][t]  (t of a recursive dataclass)
    """
    name = node.inputs[2]
    if not (name.is_constant and isinstance(name.value, str)):
        return None
    x = node.inputs[1]
    return gen.records.getattr(x.abstract, gen.expr(x), name.value)


def _is_none(gen: Any, node: Apply) -> str | None:
    """A tree's missing child: a number of -1.

    is_none(t) => (t < 0)  (t of a recursive dataclass or None)
    """
    x = node.inputs[1]
    return gen.records.is_none(x.abstract, gen.expr(x))


def _materialize(gen: Any, node: Apply) -> str | None:
    """A result the user receives: an array of their own (constants are read-only).

    gmaterialize(x) => np.copy(x)  (an array); x  (a number)
    """
    a, x = node.abstract, gen.expr(node.inputs[1])
    if native_array(a):
        return f"np.copy({x})"
    return x if _weak_leaf(a) else None


def _creation(gen: Any, node: Apply) -> str | None:
    """A new array, of the dtype of its type.

    zeros(shape, dtype) => np.zeros(shape, dtype=np.float64)  (and ones, full)
    """
    args = [gen.expr(a) for a in node.inputs[1:]]
    return creation(node.inputs[0].value.name, node.abstract, args)  # type: ignore[attr-defined]


def _add_at(gen: Any, node: Apply) -> str | None:
    """The sensitivity of a slice or of an element: an addition at a basic index.

    array_index_add(a, i, v) => _add_at(np.copy(a), i, v)  (i a slice or an int)
    array_index_add_inplace(a, i, v) => _add_at(a, i, v)
    """
    if not (native_array(node.abstract) and basic_index(node.inputs[2])):
        return None
    a, i, v = [gen.expr(x) for x in node.inputs[1:]]
    if ADD_AT_SOURCE not in gen.helper_source:
        gen.helper_source.append(ADD_AT_SOURCE)
    into = a if node.inputs[0].value is P.array_index_add_inplace else f"np.copy({a})"  # type: ignore[attr-defined]
    return f"_add_at({into}, {i}, {v})"


def _window(gen: Any, node: Apply) -> str | None:
    """A window ``x[i:i + k]``, or its sensitivity: a basic slice at an offset checked.

    dynamic_window(a, i, k, axis) => _window_<axis>(a, i, k)
    window_add(a, i, v, axis) => _window_add_<axis>(a, i, v)  (a copy of a)
    window_add_inplace(a, i, v, axis) => _window_add_inplace_<axis>(a, i, v)
    """
    a, start, _, axis = node.inputs[1:]
    if not (native_array(node.abstract) and native_array(a.abstract) and axis.is_constant):
        return None
    if not isinstance(start.abstract, AbstractScalar) or start.abstract.dtype != "int64":
        return None
    prim = node.inputs[0].value  # type: ignore[attr-defined]
    add = prim is not P.dynamic_window
    if add and not native_array(node.inputs[3].abstract):
        return None
    name, source = window_source(axis.value, add, prim is P.window_add_inplace)  # type: ignore[attr-defined]
    for helper in (WINDOW_START_SOURCE, source):
        if helper not in gen.helper_source:
            gen.helper_source.append(helper)
    return f"{name}({', '.join(gen.expr(x) for x in node.inputs[1:4])})"


def _owned_copy(gen: Any, node: Apply) -> str | None:
    """A copy that an addition at an index may write.

    owned_copy(a) => np.copy(a)
    """
    return f"np.copy({gen.expr(node.inputs[1])})" if native_array(node.abstract) else None


_LOWERINGS = {
    P.record_getattr: _getattr,
    P.is_none: _is_none,
    P.gmaterialize: _materialize,
    P.zeros: _creation,
    P.ones: _creation,
    P.full: _creation,
    P.array_index_add: _add_at,
    P.array_index_add_inplace: _add_at,
    P.owned_copy: _owned_copy,
    P.dynamic_window: _window,
    P.window_add: _window,
    P.window_add_inplace: _window,
}


def lower(gen: Any, node: Apply) -> str | None:
    """The machine code's expression of primitive call `node` (None: the NumPy backend's)."""
    fn = node.inputs[0]
    rule = _LOWERINGS.get(fn.value) if fn.is_constant else None  # type: ignore[call-overload]
    return rule(gen, node) if rule is not None else None


def recursive(graphs: list[Graph]) -> bool:
    """Whether some graph of `graphs` calls itself, directly or through others."""
    calls = {g: set(graph_constants(g)) for g in graphs}
    for start in graphs:
        seen: set[Graph] = set()
        todo = list(calls.get(start, ()))
        while todo:
            g = todo.pop()
            if g is start:
                return True
            if g not in seen:
                seen.add(g)
                todo.extend(calls.get(g, ()))
    return False

"""Common-subexpression elimination: equal pure computations of one graph are computed once.

Two applies of a graph are equal when they call the same primitive on the same nodes, or on
constants of equal value (compared by type and exact value: ``0.0`` and ``-0.0`` differ, so do
``1`` and ``1.0``), and have the same type (so that the users of the one dropped still
type-check). Effects (``print``, ``raise``, ``assert``) are never merged, nor are calls
to graphs (which may have effects) or to computed functions. A primitive that may raise at run
time (``x // y``) can be merged: the node kept is the first one computed, which would have
raised first.

The sweep (`myia.opt.sweep`) does CSE as it goes: a node no rule rewrites is looked up in its
graph's table by `cse_key`, after its inputs, so chains of equal nodes merge in one sweep.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.node import Graph, Node
from ..primitives import P, Primitive
from ..records import field_values, is_record_value

#: Primitives never merged besides effects: they call functions or build mutable values.
NO_CSE = frozenset([P.apply_star, P.make_list, P.make_dict])


def const_key(value: Any) -> Any:
    """Return a hashable key, equal for constants of exactly the same value (or None)."""
    t = type(value)
    if t is float:
        return (float, value.hex())
    if t is int or t is bool or t is str or value is None:
        return (t, value)
    if isinstance(value, np.generic):
        return (t, value.tobytes())
    if t is tuple:
        keys = tuple(const_key(v) for v in value)
        return None if any(k is None for k in keys) else (tuple, keys)
    if is_record_value(value):
        keys = tuple(const_key(v) for v in field_values(value))
        return None if any(k is None for k in keys) else (t, keys)
    return ("id", id(value))


def cse_key(node: Node) -> Any:
    """Return the key of `node` in its graph's table of subexpressions (None: unmergeable)."""
    fn = node.inputs[0]
    if not fn.is_constant:
        return None
    prim = fn.value  # type: ignore[attr-defined]
    if type(prim) is not Primitive or prim.effect or prim in NO_CSE:
        return None
    key: list[Any] = [prim, node.abstract]
    for i in node.inputs[1:]:
        if i.is_constant:
            k = const_key(i.value)  # type: ignore[attr-defined]
            if k is None:
                return None
            key.append((k, i.abstract))
        else:
            key.append(i)
    try:
        hash(tuple(key[1:]))
    except TypeError:
        return None
    return tuple(key)


def cse(graph: Graph) -> Graph:
    """Merge equal pure computations in every graph reachable from `graph`."""
    from .sweep import run_sweeps

    run_sweeps(graph, [], cse=True)
    return graph

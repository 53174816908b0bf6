"""``x[i:i + k]`` on an array, written out as windows: ``dynamic_window(x, i, k, axis)``.

The frontend gives a slice whose bounds share terms its length (`myia.frontend.windows`);
where inference knows it, the slice is an `AbstractSlice` with a `length`. Indexing an array
with such slices (alone or in a tuple, with other indices) is inferred as nodes of its own,
made once per node and plan (as ``apply_star``'s call written out): a `dynamic_window` per
window, on the axis it slices, then the rest of the index (the windows made ``:``) if it
does anything. The specializer emits them instead of ``array_getitem``.
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import AbstractArray, AbstractConstant, AbstractSlice, AbstractTuple
from ..ir.node import Apply, Constant, DebugInfo, Node
from ..primitives import P

#: ``(tuple or not, number of parts, ((position, axis, length), ...))``.
Plan = tuple[bool, int, tuple[tuple[int, int, int], ...]]


def window_plan(a: Any, index: Any) -> Plan | None:
    """The windows of `index` into an array of type `a` (None: it has none, or others)."""
    if not isinstance(a, AbstractArray):
        return None
    is_tuple = isinstance(index, AbstractTuple)
    parts = list(index.elements) if is_tuple else [index]
    if not any(isinstance(p, AbstractSlice) for p in parts):
        return None
    if any(isinstance(p, AbstractSlice) and p.length is None for p in parts):
        return None  # a slice of a length known at run time: refused by array_getitem
    ndim = len(a.shape)
    eats = [not _is_const(p, None) and not _is_const(p, Ellipsis) for p in parts]
    dots = [k for k, p in enumerate(parts) if _is_const(p, Ellipsis)]
    windows = []
    for k, p in enumerate(parts):
        if not isinstance(p, AbstractSlice):
            continue
        if dots and k > dots[0]:
            axis = ndim - sum(eats[k:])
        else:
            axis = sum(eats[:k])
        if not 0 <= axis < ndim:
            return None
        windows.append((k, axis, p.length))
    return is_tuple, len(parts), tuple(windows)


def _is_const(a: Any, value: Any) -> bool:
    return isinstance(a, AbstractConstant) and a.value is value


def _trivial(v: Any) -> bool:
    """Whether index part `v` selects everything (``:``, ``...``)."""
    return v is Ellipsis or (type(v) is slice and v == slice(None))


def _is_apply_of(node: Node, prim: Any) -> bool:
    return node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is prim


def window_nodes(node: Apply, plan: Plan) -> list[Apply] | None:
    """``a[index]`` (`node`) written out by `plan`, the result last (None: not visible).

    The nodes are in `node`'s graph, and no other node uses them.
    """
    if len(node.inputs) != 3:
        return None
    is_tuple, n, windows = plan
    a, index = node.inputs[1:]
    if is_tuple:
        if not (_is_apply_of(index, P.make_tuple) and len(index.inputs) == n + 1):
            return None
        parts = list(index.inputs[1:])
    else:
        parts = [index]
    if not all(_is_apply_of(parts[k], P.make_slice) for k, _, _ in windows):
        return None
    g = node.graph

    def apply(*inputs: Any) -> Apply:
        nodes = [i if isinstance(i, Node) else Constant(i) for i in inputs]
        return Apply(nodes, g, DebugInfo(origin=node.debug))  # type: ignore[arg-type]

    made = []
    cur: Node = a
    for k, axis, length in windows:
        cur = apply(P.dynamic_window, cur, parts[k].inputs[1], length, axis)
        made.append(cur)
    rest = list(parts)
    for k, _, _ in windows:
        rest[k] = Constant(slice(None))
    if all(r.is_constant and _trivial(r.value) for r in rest):
        return made
    if all(r.is_constant for r in rest):
        idx: Node = Constant(tuple(r.value for r in rest))
    else:
        idx = apply(P.make_tuple, *rest)
        made.append(idx)
    made.append(apply(P.array_getitem, cur, idx))
    return made

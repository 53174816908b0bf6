"""The length of a slice whose bounds share terms: ``x[i:i + k]`` has length ``k``.

A slice of an array with bounds known only at run time has a shape known only at run time,
which Myia refuses. Where its stop minus its start does not depend on what varies, the
slice is a window of a static length (`myia.primitives.windows`). Each bound is read as a
sum of integer multiples of *terms* (the nodes it adds, subtracts and multiplies by integer
constants: ``i * s + k`` is ``1·(i * s) + 1·k``); the terms common to both bounds cancel,
and the rest, ``k`` here, is the length, computed by nodes of its own. Its value is known
at compile time where it is a constant, or where type inference knows it (a constant
argument, a closure's constant, ``w.shape[0]``). ``make_slice`` receives it.

Terms are compared by structure: a variable read twice in a block is one node
(``j = i + k; x[i:j]`` is ``x[i:i + k]``), and two computations of one pure operation on
the same terms are one term (``x[i * s:i * s + k]``, ``w.shape[0]``).
"""

from __future__ import annotations

from typing import Any

from ..ir.node import Constant, DebugInfo, Node
from ..operations import ops

#: A sum of integer multiples of terms, and a constant: ``({term: coefficient}, constant)``.
Linear = tuple[dict[Any, int], int]


def _int(node: Node) -> int | None:
    v = node.value if node.is_constant else None
    return v if type(v) is int else None


def _op(node: Node) -> Any:
    if not node.is_apply or not node.inputs[0].is_constant:
        return None
    return node.inputs[0].value


#: The operations whose calls on equal terms are equal (pure, and of no effect).
_PURE = (
    ops.add, ops.sub, ops.mul, ops.floordiv, ops.mod, ops.neg, ops.pos, ops.getattr_,
    ops.getitem, ops.len_,
)  # fmt: skip


def _key(node: Node, depth: int = 0) -> Any:
    """What identifies the value of `node`: its structure where it is pure, else itself."""
    if node.is_constant:
        v = node.value
        try:
            hash(v)
        except TypeError:
            return node
        return ("constant", type(v), v)
    op = _op(node)
    if depth < 32 and any(op is p for p in _PURE):
        return (op, *(_key(i, depth + 1) for i in node.inputs[1:]))
    return node


def linear(node: Node, depth: int = 0) -> Linear:
    """`node` as a sum of integer multiples of terms (itself, if it is no such sum)."""
    c = _int(node)
    if c is not None:
        return {}, c
    op = _op(node)
    if depth < 32 and op in (ops.add, ops.sub) and len(node.inputs) == 3:
        (ta, ca), (tb, cb) = (linear(x, depth + 1) for x in node.inputs[1:])
        sign = 1 if op is ops.add else -1
        return _combine(ta, tb, sign), ca + sign * cb
    if depth < 32 and op is ops.neg and len(node.inputs) == 2:
        t, c = linear(node.inputs[1], depth + 1)
        return {k: -v for k, v in t.items()}, -c
    if depth < 32 and op is ops.mul and len(node.inputs) == 3:
        a, b = node.inputs[1:]
        for x, y in ((a, b), (b, a)):
            k = _int(x)
            if k is not None:
                t, c = linear(y, depth + 1)
                return {n: k * v for n, v in t.items() if k * v}, k * c
    return {_Term(node): 1}, 0


class _Term:
    """A term of a sum: a node, equal to another of the same structure (`_key`)."""

    __slots__ = ("key", "node")

    def __init__(self, node: Node):
        self.node = node
        self.key = _key(node)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Term) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


def _combine(a: dict[Any, int], b: dict[Any, int], sign: int) -> dict[Any, int]:
    out = dict(a)
    for n, v in b.items():
        out[n] = out.get(n, 0) + sign * v
    return {n: v for n, v in out.items() if v}


def window_length(graph: Any, start: Node, stop: Node, debug: DebugInfo) -> Node | None:
    """A node computing ``stop - start`` from the terms they do not share (None: none cancel)."""
    ts, cs = linear(start)
    tt, ct = linear(stop)
    if not set(ts) & set(tt):
        return None  # nothing cancels: the length varies as the bounds do
    diff = _combine(tt, ts, -1)
    node: Node | None = None
    for term, k in diff.items():
        n = term.node
        part = n if k == 1 else graph.apply(ops.mul, Constant(k), n, debug=debug)
        node = part if node is None else graph.apply(ops.add, node, part, debug=debug)
    c = ct - cs
    if node is None:
        return Constant(c, debug)
    return node if c == 0 else graph.apply(ops.add, node, Constant(c), debug=debug)

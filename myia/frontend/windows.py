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

NumPy's slice is shorter where the window runs past the end of its axis (``x[8:11]`` of 10
elements has 2), so a window has its static length only where it provably fits: its start
is at least 0 and its stop at most the axis's length for every value of the loop indices
in its bounds (`WindowFacts`: ``for i in range(len(x) - k + 1): x[i:i + k]``,
``for t in range(k, len(X) + 1): X[t - k:t]``). Elsewhere (``x[i:i + 3]`` of an argument
``i``, a ``while`` loop's counter) the slice is NumPy's, of a length known at run time
only (``f64 x ?``).
"""

from __future__ import annotations

import ast
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


def _same(node: Node) -> Node:
    return node


def _shape_key(key: Any, axis: int) -> Any:
    """The key of ``a.shape[axis]``, `key` that of ``a``."""
    return (ops.getitem, (ops.getattr_, key, ("constant", str, "shape")), ("constant", int, axis))


def _key(node: Node, depth: int = 0, resolve: Any = _same) -> Any:
    """What identifies the value of `node`: its structure where it is pure, else itself.

    `resolve` gives the node whose value a node has (a parameter passed the same value by
    every jump into its block is that value: `WindowFacts.resolve`). ``len(a)`` is
    ``a.shape[0]``.
    """
    node = resolve(node)
    if node.is_constant:
        v = node.value
        try:
            hash(v)
        except TypeError:
            return node
        return ("constant", type(v), v)
    op = _op(node)
    if depth < 32 and op is ops.len_ and len(node.inputs) == 2:
        return _shape_key(_key(node.inputs[1], depth + 1, resolve), 0)
    if depth < 32 and any(op is p for p in _PURE):
        return (op, *(_key(i, depth + 1, resolve) for i in node.inputs[1:]))
    return node


def linear(node: Node, depth: int = 0, resolve: Any = _same) -> Linear:
    """`node` as a sum of integer multiples of terms (itself, if it is no such sum)."""
    node = resolve(node)
    c = _int(node)
    if c is not None:
        return {}, c
    op = _op(node)
    if depth < 32 and op in (ops.add, ops.sub) and len(node.inputs) == 3:
        (ta, ca), (tb, cb) = (linear(x, depth + 1, resolve) for x in node.inputs[1:])
        sign = 1 if op is ops.add else -1
        return _combine(ta, tb, sign), ca + sign * cb
    if depth < 32 and op is ops.neg and len(node.inputs) == 2:
        t, c = linear(node.inputs[1], depth + 1, resolve)
        return {k: -v for k, v in t.items()}, -c
    if depth < 32 and op is ops.mul and len(node.inputs) == 3:
        a, b = node.inputs[1:]
        for x, y in ((a, b), (b, a)):
            k = _int(resolve(x))
            if k is not None:
                t, c = linear(y, depth + 1, resolve)
                return {n: k * v for n, v in t.items() if k * v}, k * c
    return {_Term(node, _key(node, depth, resolve)): 1}, 0


class _Term:
    """A term of a sum: a node, equal to another of the same structure (`_key`)."""

    __slots__ = ("key", "node")

    def __init__(self, node: Node | None, key: Any = None):
        self.node = node
        self.key = _key(node) if key is None else key

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


class WindowFacts:
    """What the parser of a function learns to tell which windows fit, and the verdict.

    `ranges`: the index of each loop ``for i in range(lo, hi)`` (of step 1), with `lo` and
    `hi`; `phis`: each block parameter, with its block and variable; `windows`: each slice
    given a length (its ``make_slice`` node, its start and stop, the array and the axis).
    Once every block is sealed, `settle` takes the length back from the slices it cannot
    prove fit: those are NumPy's slices, of a length known at run time only.
    """

    def __init__(self) -> None:
        self.ranges: dict[Node, tuple[Node, Node]] = {}
        self.phis: dict[Node, tuple[Any, str]] = {}
        self.windows: list[tuple[Node, Node, Node, Node, int]] = []

    def resolve(self, node: Node) -> Node:
        """The node whose value parameter `node` has: the only one any jump passes (or itself).

        A parameter of a loop's blocks that no iteration changes is the value before the
        loop; a value changed anywhere is passed two different nodes.
        """
        if node not in self.phis:
            return node
        seen, todo, sources = {node}, [node], set()
        while todo:
            block, name = self.phis[todo.pop()]
            for jump in block.preds:
                if name not in jump.vars:
                    return node
                arg = jump.apply.inputs[1 + jump.vars.index(name)]
                if arg in self.phis:
                    if arg not in seen:
                        seen.add(arg)
                        todo.append(arg)
                else:
                    sources.add(arg)
        return sources.pop() if len(sources) == 1 else node

    def _bound(self, form: Linear, low: bool) -> Linear | None:
        """A lower (`low`) or upper bound of `form` over the loop indices' ranges."""
        terms, c = form
        for _ in range(16):
            index = next((t for t in terms if t.node in self.ranges), None)
            if index is None:
                return terms, c
            k = terms[index]
            lo, hi = self.ranges[index.node]
            bt, bc = linear(lo if (k > 0) == low else hi, resolve=self.resolve)
            if (k > 0) != low:
                bc -= 1  # the last index is hi - 1
            rest = {t: v for t, v in terms.items() if t != index}
            terms, c = _combine(rest, {t: k * v for t, v in bt.items()}, 1), c + k * bc
        return None

    def fits(self, start: Node, stop: Node, array: Node, axis: int) -> bool:
        """Whether ``array[..., start:stop]`` on `axis` is in bounds whatever the indices."""
        first = self._bound(linear(start, resolve=self.resolve), low=True)
        last = self._bound(linear(stop, resolve=self.resolve), low=False)
        if first is None or last is None or first[0] or first[1] < 0:
            return False
        n = _Term(None, _shape_key(_key(array, resolve=self.resolve), axis))
        terms, c = _combine(last[0], {n: 1}, -1), last[1]
        return not terms and c <= 0

    def settle(self) -> None:
        """Make the slices that may not fit NumPy's (no static length)."""
        for node, start, stop, array, axis in self.windows:
            if not self.fits(start, stop, array, axis):
                del node.inputs[4:]
        self.windows = []


def range_bounds(call: ast.expr, node: Node) -> tuple[Node, Node] | None:
    """``(lo, hi)`` of ``range(lo, hi)`` or ``range(hi)`` (`node`, parsed from `call`), if so.

    A step, if any, must be the constant 1; the call must be of the builtin ``range``.
    """
    from ..operations.mapping import BUILTINS

    if not (isinstance(call, ast.Call) and not call.keywords and 1 <= len(call.args) <= 3):
        return None
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    fn = node.inputs[0] if node.is_apply else None
    if fn is None or not fn.is_constant or fn.value is not BUILTINS[range]:
        return None
    args = node.inputs[1:]
    if len(args) != len(call.args) or (len(args) == 3 and _int(args[2]) != 1):
        return None
    return (Constant(0), args[0]) if len(args) == 1 else (args[0], args[1])

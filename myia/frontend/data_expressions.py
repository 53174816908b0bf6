"""The parsing of data expressions (a mixin of `FunctionParser`).

Subscripts and their indices (slices, windows, masks), tuple, list and dict displays,
f-strings. It uses the parser's `expr`, `error` and `dbg`.
"""

from __future__ import annotations

import ast
from typing import Any

from ..ir.node import Constant, Node
from ..operations import ops
from ..primitives import P
from .blocks import Block
from .indices import mask_positions
from .windows import window_length


class DataExpressions:
    """Subscripts (``x[i]``, slices, windows, masks), displays and f-strings."""

    expr: Any
    error: Any
    dbg: Any

    def expr_Subscript(self, block: Block, node: ast.Subscript) -> Node:
        value = self.expr(block, node.value)
        index = self.index(block, node.slice, value)
        return block.apply(ops.getitem, value, index, debug=self.dbg(node))

    def index(
        self, block: Block, node: ast.expr, array: Node | None = None, axis: int = 0
    ) -> Node:
        """The index `node` of `array` (None: not known), at `axis` if it is a slice."""
        if isinstance(node, ast.Slice):
            parts = [
                self.expr(block, p) if p is not None else Constant(None)
                for p in (node.lower, node.upper, node.step)
            ]
            if all(p.is_constant for p in parts):
                return Constant(slice(*(p.value for p in parts)), self.dbg(node))
            step = node.step
            if isinstance(step, ast.Constant) and type(step.value) is int and step.value == 1:
                parts[2], step = Constant(None), None  # ``x[i:j:1]`` is ``x[i:j]``
            if node.lower is not None and node.upper is not None and step is None:
                # ``x[i:i + k]``: a window, where its length is known at compile time.
                length = window_length(block.graph, parts[0], parts[1], self.dbg(node))
                if length is not None:
                    parts.append(length)
            made = block.apply(P.make_slice, *parts, debug=self.dbg(node))
            if len(parts) == 4:
                # A window only where it fits whatever the loops' indices (`WindowFacts`).
                facts = self.source.windows
                if array is None:
                    del made.inputs[4:]
                else:
                    facts.windows.append((made, parts[0], parts[1], array, axis))
            return made
        if isinstance(node, ast.Tuple):
            ones = [_one_axis(e) for e in node.elts]
            on = [array if all(ones[:k]) and isinstance(e, ast.Slice) else None for k, e in
                  enumerate(node.elts)]  # fmt: skip
            parts = [
                self.index(block, e, on[k], k)
                if isinstance(e, (ast.Slice, ast.Tuple))
                else self.expr(block, e)
                for k, e in enumerate(node.elts)
            ]
            items = [i for p in parts for i in mask_positions(p)]
            if all(i.is_constant for i in items):
                return Constant(tuple(i.value for i in items), self.dbg(node))
            return block.apply(P.make_tuple, *items, debug=self.dbg(node))
        index = self.expr(block, node)
        positions = mask_positions(index)
        if positions[0] is not index:
            return Constant(tuple(p.value for p in positions), index.debug)
        return index

    def expr_Tuple(self, block: Block, node: ast.Tuple) -> Node:
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return self._spread(block, node, P.make_tuple, ops.star_tuple)
        items = self._items(block, node.elts)
        return block.apply(P.make_tuple, *items, debug=self.dbg(node))

    def expr_List(self, block: Block, node: ast.List) -> Node:
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return self._spread(block, node, P.make_list, ops.star_list)
        items = self._items(block, node.elts)
        return block.apply(P.make_list, *items, debug=self.dbg(node))

    def _spread(self, block: Block, node: ast.Tuple | ast.List, make: Any, star: Any) -> Node:
        """``(a, *t, b)``: ``(a,) + star(t) + (b,)``, the elements of `t` between `a` and `b`.

        `star` is `ops.star_tuple` (a tuple display); of a list display, ``[a] + star(t) +
        [b]`` with `ops.star_list`.
        """
        parts: list[Node] = []
        pending: list[Node] = []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                if pending:
                    parts.append(block.apply(make, *pending, debug=self.dbg(e)))
                    pending = []
                parts.append(block.apply(star, self.expr(block, e.value), debug=self.dbg(e)))
            else:
                pending.append(self.expr(block, e))
        if pending:
            parts.append(block.apply(make, *pending, debug=self.dbg(node)))
        out = parts[0]
        for p in parts[1:]:
            out = block.apply(ops.add, out, p, debug=self.dbg(node))
        return out

    def _items(self, block: Block, elts: list[ast.expr]) -> list[Node]:
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                raise self.error(e, "starred expressions are not supported by Myia")
            out.append(self.expr(block, e))
        return out

    def expr_Dict(self, block: Block, node: ast.Dict) -> Node:
        keys = []
        for k in node.keys:
            if k is None:
                raise self.error(
                    node,
                    "unpacking a dict into a dict ({**d, ...}) is not supported by Myia: "
                    "write its keys, {'a': d['a'], ...}",
                )
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                raise self.error(k, "dict keys must be constant strings in Myia")
            keys.append(k.value)
        values = self._items(block, node.values)
        return block.apply(P.make_dict, tuple(keys), *values, debug=self.dbg(node))

    def expr_JoinedStr(self, block: Block, node: ast.JoinedStr) -> Node:
        """An f-string: its replacement fields formatted (`format_`) and concatenated."""
        parts: list[Node] = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(Constant(v.value, self.dbg(v)))
                continue
            assert isinstance(v, ast.FormattedValue)
            value = self.expr(block, v.value)
            spec = (
                self.expr(block, v.format_spec)
                if v.format_spec is not None
                else Constant("", self.dbg(v))
            )
            conversion = chr(v.conversion) if v.conversion > 0 else ""
            parts.append(block.apply(P.format_, value, conversion, spec, debug=self.dbg(v)))
        if all(p.is_constant for p in parts):
            return Constant("".join(p.value for p in parts), self.dbg(node))
        if len(parts) == 1:
            return parts[0]
        return block.apply(P.str_concat, *parts, debug=self.dbg(node))


def _one_axis(node: ast.expr) -> bool:
    """Whether index part `node` stands for one axis (not ``None``, ``...``, a mask)."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    return not isinstance(node, (ast.Tuple, ast.Compare, ast.BoolOp, ast.Starred))

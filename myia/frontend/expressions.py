"""The parser's expressions on data: attributes, indexing, literals, f-strings and rejections.

A mixin of `myia.frontend.parser.FunctionParser` (which provides ``expr``, ``error``,
``dbg``, ``loc``, ``narrowed`` and ``name``).
"""

from __future__ import annotations

import ast
from typing import Any

from ..errors import MyiaNameError, at
from ..ir.node import Constant, Node
from ..operations import ops
from ..primitives import P
from . import cache
from .blocks import Block
from .resolve import is_namespace, to_node


def attribute_chain(node: ast.expr) -> str | None:
    """``"a.b.c"`` for the expression ``a.b.c``, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


class DataExpressions:
    """Expressions on data, and the expressions Myia rejects."""

    expr: Any
    error: Any
    dbg: Any
    loc: Any
    constant: Any
    narrowed: dict[str, Any]
    name: str

    def expr_Attribute(self, block: Block, node: ast.Attribute) -> Node:
        chain = attribute_chain(node) if self.narrowed else None
        if chain in self.narrowed:
            return block.read(self.narrowed[chain])
        value = self.expr(block, node.value)
        if value.is_constant and is_namespace(value.value):
            try:
                attr = getattr(value.value, node.attr)
            except AttributeError:
                raise MyiaNameError(
                    f"{value.value!r} has no attribute {node.attr!r}",
                    at(self.loc(node), self.name),
                ) from None
            cache.read(value.value, node.attr, attr)
            full = f"{getattr(value.value, '__name__', '')}.{node.attr}"
            return self.constant(
                block, to_node(attr, full, self.loc(node), self.name).value, full, node
            )
        return block.apply(ops.getattr_, value, node.attr, debug=self.dbg(node, node.attr))

    def expr_Subscript(self, block: Block, node: ast.Subscript) -> Node:
        value = self.expr(block, node.value)
        index = self.index(block, node.slice)
        return block.apply(ops.getitem, value, index, debug=self.dbg(node))

    def index(self, block: Block, node: ast.expr) -> Node:
        if isinstance(node, ast.Slice):
            parts = [
                self.expr(block, p) if p is not None else Constant(None)
                for p in (node.lower, node.upper, node.step)
            ]
            if all(p.is_constant for p in parts):
                return Constant(slice(*(p.value for p in parts)), self.dbg(node))
            return block.apply(P.make_slice, *parts, debug=self.dbg(node))
        if isinstance(node, ast.Tuple):
            items = [self.index(block, e) for e in node.elts]
            if all(i.is_constant for i in items):
                return Constant(tuple(i.value for i in items), self.dbg(node))
            return block.apply(P.make_tuple, *items, debug=self.dbg(node))
        return self.expr(block, node)

    def expr_Tuple(self, block: Block, node: ast.Tuple) -> Node:
        items = self._items(block, node.elts)
        return block.apply(P.make_tuple, *items, debug=self.dbg(node))

    def expr_List(self, block: Block, node: ast.List) -> Node:
        items = self._items(block, node.elts)
        return block.apply(P.make_list, *items, debug=self.dbg(node))

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
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                raise self.error(k or node, "dict keys must be constant strings in Myia")
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

    def expr_Starred(self, block: Block, node: ast.Starred) -> Node:
        raise self.error(node, "starred expressions are not supported by Myia")

    def expr_Yield(self, block: Block, node: ast.Yield) -> Node:
        raise self.error(node, "yield is not supported by Myia (generators have effects)")

    expr_YieldFrom = expr_Yield

    def expr_Await(self, block: Block, node: ast.Await) -> Node:
        raise self.error(node, "await is not supported by Myia")

    def expr_NamedExpr(self, block: Block, node: ast.NamedExpr) -> Node:
        raise self.error(node, "assignment expressions (:=) are not supported by Myia")

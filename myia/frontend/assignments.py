"""The parsing of assignments (a mixin of `FunctionParser`).

``x = e``, ``x: T = e``, ``x += e``, and unpacking targets (``a, (b, c) = t``, starred
``first, *rest = xs``). Assigning to an attribute or an item mutates an object, which Myia
refuses at its line. It uses the parser's `expr`, `error`, `dbg`, `loc`, `read_variable`,
`narrowed` and `use_location`.
"""

from __future__ import annotations

import ast
from typing import Any

from ..ir.node import Constant, Node
from ..operations import ops
from .blocks import Block

BINOPS: dict[type, Any] = {
    ast.Add: ops.add,
    ast.Sub: ops.sub,
    ast.Mult: ops.mul,
    ast.Div: ops.truediv,
    ast.FloorDiv: ops.floordiv,
    ast.Mod: ops.mod,
    ast.Pow: ops.pow_,
    ast.MatMult: ops.matmul,
    ast.BitAnd: ops.and_,
    ast.BitOr: ops.or_,
    ast.BitXor: ops.xor,
    ast.LShift: ops.lshift,
    ast.RShift: ops.rshift,
}


class Assignments:
    """Assignment statements and their targets."""

    expr: Any
    error: Any
    dbg: Any
    loc: Any
    read_variable: Any
    narrowed: dict[str, str]
    use_location: Any

    def stmt_Assign(self, block: Block, stmt: ast.Assign) -> Block:
        value = self.expr(block, stmt.value)
        if value.is_apply:
            block.effects.append(value)
        for target in stmt.targets:
            self.assign(block, target, value)
        return block

    def stmt_AnnAssign(self, block: Block, stmt: ast.AnnAssign) -> Block:
        if stmt.value is None:
            return block
        value = self.expr(block, stmt.value)
        self.assign(block, stmt.target, value)
        return block

    def stmt_AugAssign(self, block: Block, stmt: ast.AugAssign) -> Block:
        if not isinstance(stmt.target, ast.Name):
            raise self.error(
                stmt,
                "augmented assignment to an item or attribute mutates an object, "
                "which Myia does not allow (augmented assignment is supported on names)",
            )
        self.use_location = self.loc(stmt.target)
        current = self.read_variable(block, stmt.target.id, stmt.target)
        value = self.expr(block, stmt.value)
        op = BINOPS.get(type(stmt.op))
        if op is None:
            raise self.error(stmt, f"operator {type(stmt.op).__name__} is not supported")
        node = block.apply(op, current, value, debug=self.dbg(stmt, stmt.target.id))
        block.write(stmt.target.id, node)
        return block

    def assign(self, block: Block, target: ast.expr, value: Node) -> None:
        if isinstance(target, ast.Name):
            for chain in [c for c in self.narrowed if c.split(".")[0] == target.id]:
                del self.narrowed[chain]
            if value.debug.name is None and not value.is_constant:
                value.debug.name = target.id
            block.write(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            stars = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
            if stars:  # (Python's compiler allows one)
                self.assign_starred(block, target, value, stars[0])
                return
            n = Constant(len(target.elts))
            value = block.apply(ops.unpack, value, n, debug=self.dbg(target))
            for i, elt in enumerate(target.elts):
                item = block.apply(ops.getitem, value, i, debug=self.dbg(elt))
                self.assign(block, elt, item)
        elif isinstance(target, ast.Attribute):
            raise self.error(
                target, "assigning to an attribute mutates an object, which Myia does not allow"
            )
        elif isinstance(target, ast.Subscript):
            raise self.error(
                target, "assigning to an item mutates an object, which Myia does not allow"
            )
        else:
            raise self.error(target, "this assignment target is not supported by Myia")

    def assign_starred(
        self, block: Block, target: ast.Tuple | ast.List, value: Node, star: int
    ) -> None:
        """``first, *mid, last = xs``: the names before and after, and a list of the others.

        As in Python, `xs` (a tuple, list or array) must have at least as many elements as
        there are names besides the starred one (Python's ``ValueError`` otherwise), and the
        starred name is a list (of a tuple's elements, which must then have one type).
        """
        n = len(target.elts)
        after = n - 1 - star
        value = block.apply(ops.unpack_star, value, Constant(n - 1), debug=self.dbg(target))
        for i, elt in enumerate(target.elts):
            if i == star:
                rest = Constant(slice(star, -after if after else None))
                item = block.apply(ops.getitem, value, rest, debug=self.dbg(elt))
                item = block.apply(ops.star_list, item, debug=self.dbg(elt))
                self.assign(block, elt.value, item)  # type: ignore[attr-defined]
            else:
                index = i if i < star else i - n
                self.assign(
                    block, elt, block.apply(ops.getitem, value, index, debug=self.dbg(elt))
                )

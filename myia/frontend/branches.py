"""Branches inside expressions: ``a if c else b``, ``a and b``, ``a or b``, ``a < b < c``.

Each is ``switch(cond, λ: a, λ: b)()``: the branches are closures nested in the current
block's graph (`ExpressionBlock`), so that only the branch taken is evaluated. The variables
that the test narrows (``x is not None``, ``isinstance``) are the closures' parameters, so
that type inference narrows them in each branch. `BranchExpressions` holds these methods of
`myia.frontend.parser.FunctionParser`.
"""

from __future__ import annotations

import ast
from typing import Any

from ..ir.node import Constant, Graph, Node
from ..operations import ops
from ..primitives import P
from .blocks import Block, ExpressionBlock

COMPARE: dict[type, Any] = {
    ast.Eq: ops.eq,
    ast.NotEq: ops.ne,
    ast.Lt: ops.lt,
    ast.LtE: ops.le,
    ast.Gt: ops.gt,
    ast.GtE: ops.ge,
}


class BranchExpressions:
    """The parsing of branches inside expressions (a mixin of `FunctionParser`).

    It uses the parser's `expr`, `truth`, `_narrow`, `loc` and `dbg`.
    """

    narrowed: dict[str, str]

    def closure(
        self, block: Block, node: ast.AST, kind: str, make: Any, params: tuple[str, ...] = ()
    ) -> Node:
        """Return a closure nested in `block`'s graph whose body is ``make(inner)``.

        It takes the variables `params` as parameters (so that their types can be narrowed).
        """
        g = Graph(f"{block.graph.name}:{kind}", self.loc(node))
        inner = ExpressionBlock(self, g, block, params)
        inner.finish(make(inner))
        return Constant(g, self.dbg(node))

    def select(
        self,
        block: Block,
        node: ast.AST,
        cond: Node,
        if_true: Any,
        if_false: Any,
        params: list[str] | None = None,
    ) -> Node:
        """``switch(cond, λ p: if_true(), λ p: if_false())(p)`` evaluated in `block`.

        `params` are the variables the test narrows: each branch receives them as parameters.
        """
        names = tuple(dict.fromkeys(params or ()))
        # Each branch sees the chains narrowed so far, not those narrowed in the other.
        narrowed = dict(self.narrowed)
        t = self.closure(block, node, "true", if_true, names)
        self.narrowed = dict(narrowed)
        f = self.closure(block, node, "false", if_false, names)
        self.narrowed = narrowed
        sw = block.apply(P.switch, cond, t, f, debug=self.dbg(node))
        args = [block.read(name) for name in names]
        return block.apply(sw, *args, debug=self.dbg(node))

    def expr_IfExp(self, block: Block, node: ast.IfExp) -> Node:
        saved = dict(self.narrowed)
        try:
            return self._branch_on(
                block,
                node,
                node.test,
                lambda b, _: self.expr(b, node.body),
                lambda b, _: self.expr(b, node.orelse),
            )
        finally:
            self.narrowed = saved

    def expr_BoolOp(self, block: Block, node: ast.BoolOp) -> Node:
        # The value of ``a and b`` or ``a or b`` is that of the last operand evaluated.
        saved = dict(self.narrowed)
        try:
            return self._branch_on(block, node, node, lambda b, v: v, lambda b, v: v)
        finally:
            self.narrowed = saved

    def _branch_on(
        self, block: Block, node: ast.AST, test: ast.expr, if_true: Any, if_false: Any
    ) -> Node:
        """``if_true(b, v)`` if `test` is true else ``if_false(b, v)``, evaluated in `block`.

        `v` is the value of the last operand of `test` evaluated (that of `test` itself).
        As for an ``if`` statement (`_jump_if`), ``not``, ``and`` and ``or`` branch on each
        operand in turn, so that each operand's type test narrows the operands after it and
        the branch it leads to: in ``a + b if a is not None and b is not None else 0.0`` the
        first branch sees both narrowed. A branch reached from several operands is parsed
        once for each (in ``p and q``, the second branch once after ``p`` and once after
        ``q``), each copy seeing what the tests on its way narrowed.
        """
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            dbg = self.dbg(test)
            return self._branch_on(
                block,
                node,
                test.operand,
                lambda b, _: if_false(b, Constant(False, dbg)),
                lambda b, _: if_true(b, Constant(True, dbg)),
            )
        if isinstance(test, ast.BoolOp):
            return self._branch_on_values(block, node, test, test.values, if_true, if_false)
        params = self._narrow(block, test)
        value = self.expr(block, test)
        cond = block.apply(ops.truth, value, debug=self.dbg(test))
        return self.select(
            block,
            node,
            cond,
            lambda b: if_true(b, value),
            lambda b: if_false(b, value),
            params,
        )

    def _branch_on_values(
        self,
        block: Block,
        node: ast.AST,
        test: ast.BoolOp,
        values: list[ast.expr],
        if_true: Any,
        if_false: Any,
    ) -> Node:
        if len(values) == 1:
            return self._branch_on(block, node, values[0], if_true, if_false)

        def rest(b: Block, _: Node) -> Node:
            return self._branch_on_values(b, node, test, values[1:], if_true, if_false)

        if isinstance(test.op, ast.And):
            return self._branch_on(block, node, values[0], rest, if_false)
        return self._branch_on(block, node, values[0], if_true, rest)

    def expr_Compare(self, block: Block, node: ast.Compare) -> Node:
        left = self.expr(block, node.left)
        return self._compare(block, node, left, node.ops, node.comparators)

    def _compare(
        self, block: Block, node: ast.Compare, left: Node, ops_: list[ast.cmpop], rights: list
    ) -> Node:
        right = self.expr(block, rights[0])
        result = self._compare1(block, node, ops_[0], left, right)
        if len(ops_) == 1:
            return result
        cond = block.apply(ops.truth, result, debug=self.dbg(node))
        return self.select(
            block,
            node,
            cond,
            lambda b: self._compare(b, node, right, ops_[1:], rights[1:]),
            lambda b: result,
        )

    def _compare1(self, block: Block, node: ast.AST, op: ast.cmpop, a: Node, b: Node) -> Node:
        dbg = self.dbg(node)
        if isinstance(op, (ast.Is, ast.IsNot)):
            if b.is_constant and b.value is None:
                r = block.apply(ops.is_none, a, debug=dbg)
            else:
                r = block.apply(P.is_, a, b, debug=dbg)
            return block.apply(P.logical_not, r, debug=dbg) if isinstance(op, ast.IsNot) else r
        if isinstance(op, (ast.In, ast.NotIn)):
            r = block.apply(ops.contains, a, b, debug=dbg)
            return block.apply(P.logical_not, r, debug=dbg) if isinstance(op, ast.NotIn) else r
        return block.apply(COMPARE[type(op)], a, b, debug=dbg)

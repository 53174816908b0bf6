"""Narrowing union types in the branches of an ``if`` that tests them.

In ``if x is not None: f(x)``, `x` has type ``Tree | None`` before the test; the branch that
runs when it is not None receives it as a parameter, and is inferred with ``Tree``. The test
is recognized in the condition of the `switch` whose result is called:
``truth(...)``, ``not ...``, ``... is None`` and ``isinstance(..., C)``. A union of tuples of
different lengths (``(x,) if c else (x, y)``) is narrowed by its length: ``len(t) == 2``,
`tuple_len_is` (the tests of `myia.infer.cases`), and the test of a ``for`` loop over it
(``hasnext``: the loop's body receives the tuples that are not empty).
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import (
    BOTTOM,
    NONE,
    AbstractFunction,
    AbstractTuple,
    AbstractValue,
    in_order,
)
from ..abstract.lattice import union_options
from ..ir.node import Node
from ..operations import ops
from ..primitives import P


def _fn_of(node: Node) -> Any:
    if node.is_apply and node.inputs[0].is_constant:
        return node.inputs[0].value
    return None


class Length:
    """The test ``len(x) == n`` on a union of tuples; `n` None: ``len(x) > 0`` (``hasnext``)."""

    def __init__(self, n: int | None):
        self.n = n


def _int_constant(node: Node) -> int | None:
    v = node.value if node.is_constant else None
    return v if type(v) is int else None


def _returns(branch: Node, node: Node) -> bool:
    return branch.is_constant and getattr(branch.value, "output", None) is node


def type_tests(
    cond: Node, negate: bool = False, sides: tuple[bool, bool] = (True, True)
) -> list[tuple[Node, Any, bool, tuple[bool, bool]]]:
    """The ``(node, test, negated, sides)`` type tests that `cond` performs.

    `sides` says which branches the test narrows: both for a plain test; the true one only
    for the first operand of an ``and`` (``a and b`` true means `a` true, false says
    nothing), the false one only for that of an ``or``.
    """
    fn = _fn_of(cond)
    if fn is ops.truth:
        return type_tests(cond.inputs[1], negate, sides)
    if fn is P.logical_not:
        return type_tests(cond.inputs[1], not negate, sides)
    if fn is ops.is_none or fn is P.is_none:
        return [(cond.inputs[1], None, negate, sides)]
    if fn is ops.isinstance_ and cond.inputs[2].is_constant:
        return [(cond.inputs[1], cond.inputs[2].value, negate, sides)]
    if fn is P.tuple_len_is and _int_constant(cond.inputs[2]) is not None:
        return [(cond.inputs[1], Length(cond.inputs[2].value), negate, sides)]
    if fn is ops.myia_hasnext:
        return [(cond.inputs[1], Length(None), negate, sides)]
    if (fn is ops.eq or fn is ops.ne) and _fn_of(cond.inputs[1]) is ops.len_:
        n = _int_constant(cond.inputs[2])
        if n is not None:
            return [(cond.inputs[1].inputs[1], Length(n), negate != (fn is ops.ne), sides)]
    if cond.is_apply and _fn_of(cond.inputs[0]) is P.switch:
        # ``a and b`` / ``a or b``: switch(truth(a), λ: b, λ: a)() / switch(truth(a), λ: a, λ: b)()
        test, if_true, if_false = cond.inputs[0].inputs[1:]
        if _fn_of(test) is ops.truth:
            first = test.inputs[1]
            if _returns(if_false, first):
                return type_tests(
                    test, negate, (sides[0], False) if not negate else (False, sides[1])
                )
            if _returns(if_true, first):
                return type_tests(
                    test, negate, (False, sides[1]) if not negate else (sides[0], False)
                )
    return []


def _matches(option: AbstractValue, test: Any) -> bool:
    if test is None:
        return option == NONE
    if isinstance(test, Length):
        n = len(option.elements)  # type: ignore[attr-defined]  # (tuples only: `_narrows`)
        return n > 0 if test.n is None else n == test.n
    from ..operations.mapping import python_class
    from .kinds import abstract_kind

    classes = tuple(python_class(c) for c in (test if isinstance(test, tuple) else (test,)))
    classes = tuple(c for c in classes if isinstance(c, type))
    try:
        kind = abstract_kind(option)
    except Exception:
        return False
    return isinstance(kind, type) and any(issubclass(kind, c) for c in classes)


def _narrows(a: AbstractValue, test: Any) -> bool:
    """Whether `test` tells apart the values of type `a`: a length, those of tuples only."""
    return not isinstance(test, Length) or all(
        isinstance(o, AbstractTuple) for o in union_options(a)
    )


def split(a: AbstractValue, test: Any) -> tuple[AbstractValue, AbstractValue]:
    """The parts of `a` for which `test` is true and false (BOTTOM where none)."""
    yes = [o for o in union_options(a) if _matches(o, test)]
    no = [o for o in union_options(a) if not _matches(o, test)]

    def make(opts: list[AbstractValue]) -> AbstractValue:
        from ..abstract.lattice import join

        out: AbstractValue = BOTTOM
        for o in opts:
            out = join(out, o)
        return out

    return make(yes), make(no)


def branch_refinements(
    switch_node: Node, call: Node, ctx: Any, values: dict[Node, AbstractValue], inferrer: Any
) -> list[tuple[Any, list[AbstractValue]]] | None:
    """For ``switch(cond, t, f)(args)``, the callee and narrowed arguments of each branch."""
    if _fn_of(switch_node) is not P.switch:
        return None
    cond, if_true, if_false = switch_node.inputs[1:]
    tests = type_tests(cond)
    args = [inferrer.value(i, ctx, values) for i in call.inputs[1:]]
    true_args, false_args = list(args), list(args)
    possible = [True, True]
    narrowed = False
    for node, test, negated, sides in tests:
        positions = [i for i, inp in enumerate(call.inputs[1:]) if inp is node]
        value = inferrer.value(node, ctx, values)
        if not positions or not _narrows(value, test):
            continue
        yes, no = split(value, test)
        if negated:
            yes, no = no, yes
        for i in positions:
            if sides[0]:
                true_args[i] = yes
            if sides[1]:
                false_args[i] = no
        if sides[0]:
            possible[0] = possible[0] and yes is not BOTTOM
        if sides[1]:
            possible[1] = possible[1] and no is not BOTTOM
        narrowed = True
    if not narrowed:
        return None
    out = []
    for ok, branch, bargs in (
        (possible[0], if_true, true_args),
        (possible[1], if_false, false_args),
    ):
        if ok:
            fn = inferrer.value(branch, ctx, values)
            assert isinstance(fn, AbstractFunction)
            out.extend((f, bargs) for f in in_order(fn.options))
    return out

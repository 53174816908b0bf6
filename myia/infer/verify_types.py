"""The type verifier: every node of a specialized graph agrees with its primitive's rule.

Used in tests after specialization (and after each later pass): on top of the structural
checks of `myia.ir.verify`, each node must carry an abstract value; a call to a primitive
must have the abstract value its type rule gives for its inputs; a call to a graph must pass
arguments of the types of its parameters and have the type of its output.
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import (
    BOTTOM,
    AbstractDict,
    AbstractList,
    AbstractRecord,
    AbstractStack,
    AbstractTuple,
    AbstractValue,
    show,
)
from ..abstract.lattice import FUNCTION, TypeMismatch, broaden, erase_functions, join
from ..errors import MyiaError, MyiaShapeError
from ..ir.node import Graph, Node
from ..ir.verify import verify
from ..primitives import P, Primitive
from .registry import INFER_RULES


def _no_functions_as_erased(expected: AbstractValue, actual: AbstractValue) -> AbstractValue:
    """`expected` with no value (``[]``'s elements) where `actual` has an erased function.

    A ``convert`` to a list of closures has the erased type of its elements; its rule gives
    no value for the elements of ``[]`` (`myia.abstract.lattice.merge_data`).
    """
    if expected is BOTTOM and actual == FUNCTION:
        return FUNCTION
    if isinstance(expected, AbstractList) and isinstance(actual, AbstractList):
        return AbstractList(
            _no_functions_as_erased(expected.element, actual.element), expected.value
        )
    if isinstance(expected, AbstractStack) and isinstance(actual, AbstractStack):
        return AbstractStack(_no_functions_as_erased(expected.element, actual.element))
    if isinstance(expected, AbstractTuple) and isinstance(actual, AbstractTuple):
        if len(expected.elements) == len(actual.elements):
            pairs = zip(expected.elements, actual.elements)
            return AbstractTuple(tuple(_no_functions_as_erased(e, a) for e, a in pairs))
    if isinstance(expected, AbstractDict) and isinstance(actual, AbstractDict):
        if expected.keys == actual.keys:
            pairs = zip(expected.values, actual.values)
            return AbstractDict(
                expected.keys, tuple(_no_functions_as_erased(e, a) for e, a in pairs)
            )
    return expected


def _erase(a: AbstractValue) -> AbstractValue:
    """`erase_functions` of `a`, also in the fields of records (``Layer(w, np.tanh)``).

    A record's function field names the graph before specialization in the type inference
    gave the call, and the specialized graph in its input's: the same function.
    """
    if isinstance(a, AbstractRecord):
        return AbstractRecord(a.cls, tuple(_erase(f) for f in a.fields), a.value)
    if isinstance(a, AbstractTuple):
        return AbstractTuple(tuple(_erase(e) for e in a.elements))
    if isinstance(a, AbstractStack):
        return AbstractStack(_erase(a.element))
    if isinstance(a, AbstractDict):
        return AbstractDict(a.keys, tuple(_erase(e) for e in a.values))
    if isinstance(a, AbstractList):
        return AbstractList(_erase(a.element), a.value)
    return erase_functions(a)


def _compatible(expected: AbstractValue, actual: AbstractValue) -> bool:
    if expected == actual:  # the common case, without copying the types (a long tuple's)
        return True
    expected, actual = _erase(expected), _erase(actual)
    expected = _no_functions_as_erased(expected, actual)
    if expected == actual or expected is BOTTOM or actual is BOTTOM:
        return True
    try:
        # The node's type holds every value the rule's does (the optimizer made an input
        # more precise: a shape folded to constants, where the node has unknown dimensions),
        # or the other way round.
        joined = broaden(join(expected, actual))
        return joined == broaden(expected) or joined == broaden(actual)
    except TypeMismatch:
        return False


def _raises_when_run(fn: Primitive, exc: MyiaError) -> bool:
    """Whether `fn`'s rule failed on an index out of bounds that the optimizer made constant.

    Inference rejects a constant index of the source out of bounds, so such an index was
    found by folding (``x[t + 1]`` at ``t = 0``, a loop's first iteration peeled): the node
    raises ``IndexError`` whenever it runs, as Python does, and every backend checks it then.
    """
    return (
        fn is P.array_getitem
        and isinstance(exc, MyiaShapeError)
        and "out of bounds" in exc.message
    )


def check_types(graph: Graph, node: Node) -> str | None:
    """The type check of one node (a `verify` check)."""
    if node.abstract is None:
        return "has no abstract value"
    if not node.is_apply:
        return None
    fn = node.inputs[0]
    if not fn.is_constant:
        return None
    args = [i.abstract for i in node.inputs[1:]]
    if any(a is BOTTOM for a in args):
        return None  # unreachable: an input never returns
    if fn.value is P.apply_star:
        return None
    if isinstance(fn.value, Primitive):
        rule = INFER_RULES[fn.value]
        try:
            expected = rule(*args)
        except MyiaError as exc:
            if _raises_when_run(fn.value, exc):
                return None
            return f"fails the rule of {fn.value.name}: {exc.message}"
        if not _compatible(expected, node.abstract):
            return f"has type {show(node.abstract)} but {fn.value.name} gives {show(expected)}"
    elif isinstance(fn.value, Graph):
        callee = fn.value
        if len(callee.parameters) != len(args):
            return f"passes {len(args)} arguments to {callee.name}"
        for p, a in zip(callee.parameters, args):
            if not _compatible(p.abstract, a):
                return (
                    f"passes {show(a)} for parameter {p.debug.find_name()} :: {show(p.abstract)}"
                )
        out: Any = getattr(callee, "abstract", None)
        if out is not None and not _compatible(out, node.abstract):
            return f"has type {show(node.abstract)} but {callee.name} returns {show(out)}"
    return None


def verify_types(graph: Graph) -> None:
    """Verify `graph` and every graph it reaches, structure and types (raises VerifyError)."""
    verify(graph, checks=[check_types])

"""Sum types: narrowing through ``and``/``or``, conditional expressions and early returns;
union and optional trees built in Myia code, with gradients."""

from __future__ import annotations

import dataclasses
from types import NoneType
from typing import Optional, Union

import numpy as np
import pytest

from myia import myia
from myia.testing import check_grad


@dataclasses.dataclass
class T:
    v: float
    left: Optional[T]
    right: T | None = None


def narrow_and(t):
    if t.left is not None and t.left.v > 0:
        return t.left.v * t.v
    return t.v


def narrow_or(t):
    if t.left is None or t.left.v < 0:
        return t.v
    return t.left.v * t.v


def narrow_not_or(t):
    if not (t.left is None or t.left.v < 0):
        return t.left.v * t.v
    return t.v * 3.0


def narrow_ifexp(t):
    return t.left.v * t.v if t.left is not None else 2.0 * t.v


def narrow_ifexp_local(t):
    x = t.left
    return x.v * t.v if x is not None else t.v


def narrow_and_value(t):
    return t.left is not None and t.left.v > 1.0


def narrow_early(t):
    if t.left is None:
        return t.v
    return t.left.v * t.v


def narrow_nested(t):
    # Each operand of the `and` sees the chains the operands before it tested; the body sees
    # those of the first operand (`t.left`).
    if t.left is not None and t.left.left is not None and t.left.left.v > 0:
        return t.left.v * t.v
    return t.v + 1.0


def narrow_nested_ifs(t):
    if t.left is not None:
        if t.left.left is not None and t.left.left.v > 0:
            return t.left.left.v * t.v
    return t.v + 1.0


def narrow_isinstance(t):
    if isinstance(t.right, T):
        return t.right.v + t.v
    if isinstance(t.left, NoneType):
        return -t.v
    return t.left.v


def narrow_isinstance_and(t):
    if isinstance(t.right, T) and t.right.v > 0:
        return t.right.v + t.v
    return t.v


TREES = [
    T(2.0, None),
    T(2.0, T(3.0, None)),
    T(2.0, T(-3.0, None)),
    T(1.5, T(3.0, T(4.0, None)), T(0.5, None)),
    T(1.5, T(3.0, T(-4.0, None)), T(-0.5, None)),
]

FUNCS = [
    narrow_and,
    narrow_or,
    narrow_not_or,
    narrow_ifexp,
    narrow_ifexp_local,
    narrow_early,
    narrow_nested,
    narrow_nested_ifs,
    narrow_isinstance,
    narrow_isinstance_and,
]


@pytest.mark.parametrize("fn", FUNCS + [narrow_and_value])
@pytest.mark.parametrize("tree", TREES)
def test_narrowing(check, fn, tree):
    check(fn, tree)


@pytest.mark.parametrize("fn", FUNCS)
@pytest.mark.parametrize("tree", TREES)
def test_narrowing_grad(fn, tree):
    check_grad(fn, tree)


def test_narrowing_one_signature():
    f = myia(narrow_and)
    for tree in TREES[1:3]:
        assert f(tree) == narrow_and(tree)
    assert len(f.compiled_signatures()) == 1


@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: Optional[np.ndarray] = None


def layer_ifexp(layer, x):
    y = layer.w * x
    return np.sum(y + layer.b if layer.b is not None else y)


def layer_or(layer, x):
    if layer.b is None or np.sum(layer.b) > 100.0:
        return np.sum(layer.w * x)
    return np.sum(layer.w * x + layer.b)


def tree_fold(t):
    # A recursive function narrowing with conditional expressions and `and`.
    s = t.v
    s = s + (tree_fold(t.left) if t.left is not None else 0.0)
    big = t.right is not None and t.right.v > 0.0
    return s * (2.0 if big else 1.0)


@pytest.mark.parametrize("fn", [layer_ifexp, layer_or])
@pytest.mark.parametrize("b", [None, np.array([0.5, -1.0])])
def test_optional_array_field(check, fn, b):
    layer, x = Layer(np.array([1.0, 2.0]), b), np.array([3.0, -0.5])
    check(fn, layer, x)
    check_grad(fn, layer, x)


def test_recursive_fold_one_signature(check):
    f = myia(tree_fold)
    for tree in TREES:
        check(tree_fold, tree)
        check_grad(tree_fold, tree)
        assert f(tree) == tree_fold(tree)
    assert len(f.compiled_signatures()) == 1


def later_operand_in_body(t):
    if t.v > 0 and t.left is not None:
        return t.left.v
    return 0.0


def later_operands_in_body(t):
    if t.left is not None and t.right is not None:
        return t.left.v * t.right.v + t.v
    return t.v


def later_operand_negated(t):
    if not (t.v <= 0 or t.right is None):
        return t.right.v * t.v
    return -t.v


def later_operand_early_return(t):
    if t.v < 0 or t.right is None:
        return t.v
    return t.right.v + t.v


def later_operand_nested(t):
    if t.left is not None and (t.v > 0 and t.left.left is not None or t.right is not None):
        return t.left.v * 2.0
    return t.v


LATER = [
    later_operand_in_body,
    later_operands_in_body,
    later_operand_negated,
    later_operand_early_return,
    later_operand_nested,
]


@pytest.mark.parametrize("fn", LATER)
@pytest.mark.parametrize("tree", TREES)
def test_later_operands_narrow_the_body(check, fn, tree):
    # Each operand of ``and``/``or`` in an ``if`` jumps on its own: the body sees every test.
    check(fn, tree)


@pytest.mark.parametrize("fn", LATER)
@pytest.mark.parametrize("tree", TREES)
def test_later_operands_narrow_the_body_grad(fn, tree):
    check_grad(fn, tree)


def ifexp_and(t):
    return t.left.v * t.right.v if t.left is not None and t.right is not None else t.v


def ifexp_or(t):
    return t.v if t.left is None or t.right is None else t.left.v * t.right.v + t.v


def ifexp_not_or(t):
    return t.left.v - t.right.v if not (t.left is None or t.right is None) else 2.0 * t.v


def ifexp_later_operand(t):
    return t.left.v * t.v if t.v > 0 and t.left is not None else -t.v


def ifexp_operand_reads_earlier(t):
    return t.left.v * t.v if t.left is not None and t.left.v > 0 else t.v + 1.0


def ifexp_locals(t):
    a, b = t.left, t.right
    return 0.0 if a is None or b is None else a.v * b.v


def ifexp_nested(t):
    return (
        (t.left.v + t.right.v if t.right is not None and t.right.v > 0 else t.left.v) * t.v
        if t.v > 0 and t.left is not None
        else (t.right.v if t.right is not None else t.v)
    )


def ifexp_in_test(t):
    # A conditional expression in the test of another narrows the first one's branches only.
    return t.v * 2.0 if (t.left.v > 0 if t.left is not None else False) else t.v


def ifexp_in_lambda(t):
    return 1.0 + (
        lambda u: u.left.v * u.right.v if u.left is not None and u.right is not None else u.v
    )(t)


def ifexp_in_comprehension(t):
    return sum([x.v * 2.0 if x is not None and x.v > 0 else 1.0 for x in (t.left, t.right)])


def ifexp_isinstance_and(t):
    return t.right.v + t.v if isinstance(t.right, T) and t.right.v > 0 else t.v


def early_return_or(t):
    a, b = t.left, t.right
    if a is None or b is None:
        return t.v
    return a.v * b.v + t.v


def early_return_not_and(t):
    if not (t.left is not None and t.right is not None):
        return -t.v
    return t.left.v * t.right.v


def value_not_or_and(t):
    # The value of ``and``/``or`` with a compound first operand: each operand narrows.
    return not (t.left is None or t.right is None) and t.left.v > t.right.v


def value_or_or(t):
    return (t.left is None or t.right is None) or t.left.v > t.right.v


def value_mixed(t):
    big = (t.left is not None and t.right is not None) and t.left.v + t.right.v or t.v
    return big * 2.0


def while_and(t):
    # The test of a ``while`` narrows its body as an ``if``'s does.
    s = 0.0
    while t.left is not None and t.left.v > 0:
        s = s + t.left.v * t.v
        t = t.left
    return s + t.v


def while_not_or(t):
    s = t.v
    while not (t.right is None or t.right.v < 0):
        s = s * t.right.v
        t = t.right
    return s


IFEXPS = [
    ifexp_and,
    ifexp_or,
    ifexp_not_or,
    ifexp_later_operand,
    ifexp_operand_reads_earlier,
    ifexp_locals,
    ifexp_nested,
    ifexp_in_test,
    ifexp_in_lambda,
    ifexp_in_comprehension,
    ifexp_isinstance_and,
    early_return_or,
    early_return_not_and,
    value_mixed,
    while_and,
    while_not_or,
]


@pytest.mark.parametrize("fn", IFEXPS)
@pytest.mark.parametrize("tree", TREES)
def test_conditional_expressions_narrow_like_if(check, fn, tree):
    # Each operand of ``and``/``or`` in the test of ``a if test else b`` branches on its own,
    # as in an ``if`` statement: the chosen branch sees every test on its way.
    check(fn, tree)


@pytest.mark.parametrize("fn", [value_not_or_and, value_or_or])
@pytest.mark.parametrize("tree", TREES)
def test_boolean_values_narrow(check, fn, tree):
    check(fn, tree)


@pytest.mark.parametrize("fn", IFEXPS)
@pytest.mark.parametrize("tree", TREES)
def test_conditional_expressions_narrow_like_if_grad(fn, tree):
    check_grad(fn, tree)


def test_conditional_expression_one_signature():
    f = myia(ifexp_and)
    for tree in TREES:
        assert f(tree) == ifexp_and(tree)
    assert len(f.compiled_signatures()) == 1


def maybe(c, x):
    return x if c > 0 else None


def optional_and(a, b):
    return a * b if a is not None and b is not None else 0.5


def optional_or(a, b):
    return 0.5 if a is None or b is None else a * b - a


def optional_early(a, b):
    if a is None or b is None:
        return 0.5
    return a * b + b


def optional_args(ca, cb, x, y):
    # ``a`` and ``b`` are ``float | None`` at run time: one signature for every case.
    a, b = maybe(ca, x), maybe(cb, y)
    return optional_and(a, b) + optional_or(a, b) * 2.0 + optional_early(a, b) * 3.0


OPTIONAL_CASES = [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)]


@pytest.mark.parametrize("ca, cb", OPTIONAL_CASES)
def test_optional_arguments(check, ca, cb):
    check(optional_args, ca, cb, 1.5, -2.0)
    check_grad(optional_args, ca, cb, 1.5, -2.0)


@pytest.mark.parametrize("fn", [optional_and, optional_or, optional_early])
@pytest.mark.parametrize("a, b", [(None, None), (1.5, None), (None, -2.0), (1.5, -2.0)])
def test_optional_arguments_given(check, fn, a, b):
    check(fn, a, b)


def leaf_value(t):
    return t.left.value * t.weight if isinstance(t.left, Leaf) and t.left.value > 0 else 0.25


# Trees built in Myia code whose fields are unions -----------------------------------------------


@dataclasses.dataclass
class Leaf:
    value: float


@dataclasses.dataclass
class Node:
    weight: float
    left: Union["Leaf", "Node"]  # noqa: UP007 (a string per class, as users write it)
    right: Union["Leaf", "Node"]  # noqa: UP007


def build(n, x):
    if n == 0:
        return Leaf(x)
    return Node(0.5 * x, build(n - 1, x * 2.0), build(n - 1, x + 1.0))


def evaluate(t, w):
    if isinstance(t, Leaf):
        return t.value * w
    return t.weight * evaluate(t.left, w) + evaluate(t.right, w)


def build_and_evaluate(n, x):
    return evaluate(build(n, x), 1.5)


def leaf_or_node(c, x):
    t = Leaf(x) if c > 0 else Node(0.5, Leaf(x), Leaf(x * 2.0))
    return evaluate(t, 1.5)


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_union_tree_built_in_myia(backend):
    f = myia(build_and_evaluate, backend=backend)
    for n in (0, 1, 3):
        assert f(n, 1.25) == build_and_evaluate(n, 1.25)
    # One signature for every shape of such a tree: built, or given as an argument.
    assert len(f.compiled_signatures()) == 1
    g = myia(build, backend=backend)
    assert g(2, 1.0) == build(2, 1.0)
    e = myia(evaluate, backend=backend)
    for n in (1, 2, 3):
        assert e(build(n, 0.5), 2.0) == evaluate(build(n, 0.5), 2.0)
    assert len(e.compiled_signatures()) == 1


@pytest.mark.parametrize("n", [0, 1, 3])
def test_union_tree_built_in_myia_gradient(n):
    check_grad(build_and_evaluate, n, 1.25)


@pytest.mark.parametrize("c", [1.0, -1.0])
def test_leaf_or_node_chosen_at_run_time(check, c):
    check(leaf_or_node, c, 0.75)
    check_grad(leaf_or_node, c, 0.75)


@dataclasses.dataclass(frozen=True)
class Pair:
    value: float
    left: Optional["Pair"]
    right: Optional["Pair"]


def build_pairs(n, x):
    if n == 0:
        return Pair(x, None, None)
    return Pair(x * 0.5, build_pairs(n - 1, x * 2.0), build_pairs(n - 1, x + 1.0))


def pairs_total(t):
    if t.left is not None and t.right is not None:
        return t.value + pairs_total(t.left) * pairs_total(t.right)
    return t.value


def pairs_tree(n, x):
    return pairs_total(build_pairs(n, x))


@pytest.mark.parametrize("n", [0, 1, 3])
def test_optional_tree_built_in_myia_gradient(n):
    assert myia(pairs_tree)(n, 0.75) == pairs_tree(n, 0.75)
    check_grad(pairs_tree, n, 0.75)


@pytest.mark.parametrize("n, x", [(1, 1.25), (1, -1.25), (2, 1.25)])
def test_isinstance_and_in_conditional_expression(check, n, x):
    t = build(n, x)
    check(leaf_value, t)
    check_grad(leaf_value, t)
    f = myia(leaf_value)
    f(build(1, 1.0))
    f(build(2, 1.0))
    assert len(f.compiled_signatures()) == 1

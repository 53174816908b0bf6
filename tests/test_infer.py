"""Type and shape inference: results per construct, recursion, recursive data, the cache."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
import pytest

from myia import myia
from myia.abstract import (
    AbstractArray,
    AbstractList,
    AbstractRecord,
    AbstractScalar,
    AbstractTuple,
    show,
    to_abstract,
)
from myia.frontend import parse
from myia.infer.engine import Inferrer
from myia.infer.specialize import specialize
from myia.infer.verify_types import verify_types


def infer_abstract(fn, *args):
    """The abstract result of `fn` on arguments of the types of `args`."""
    inferrer = Inferrer()
    ctx, result = inferrer.infer(parse(fn), tuple(to_abstract(a) for a in args))
    verify_types(specialize(inferrer, ctx))
    return result


def infer(fn, *args):
    """The printed type of `fn`'s result on arguments of the types of `args`."""
    return show(infer_abstract(fn, *args))


# Scalars and promotion ---------------------------------------------------------------------


def add(x, y):
    return x + y


@pytest.mark.parametrize(
    "x, y, expected",
    [
        (1, 2, "i64"),
        (1, 2.0, "f64"),
        (True, 1, "i64"),
        (np.float32(1), 2.0, "f32"),
        (np.float32(1), np.float64(2), "f64"),
        (np.int32(1), 2, "i32"),
        (np.int32(1), 2.5, "f64"),
        (np.ones(3, np.float32), 2.0, "f32 x 3"),
        (np.ones((2, 1)), np.ones(3), "f64 x 2 x 3"),
        (np.ones(3, np.int64), np.ones(3, np.float32), "f64 x 3"),
    ],
)
def test_promotion(x, y, expected):
    assert infer(add, x, y) == expected
    assert show(to_abstract(np.asarray(x) + np.asarray(y))).startswith(expected.split(" ")[0][:1])


def test_division_and_comparison_types():
    def f(x, y):
        return x / y, x // y, x < y, -x, abs(x), math.sin(x)

    assert infer(f, 1, 2) == "(f64, i64, bool, i64, i64, f64)"
    assert infer(f, 1.0, 2.0) == "(f64, f64, bool, f64, f64, f64)"


def test_branches_promote_int_and_float():
    def f(x):
        if x > 0:
            return 1
        return 2.5

    assert infer(f, 1.0) == "f64"
    assert myia(f)(3.0) == 1.0 and isinstance(myia(f)(3.0), float)


# Data structures -----------------------------------------------------------------------------


@dataclass
class Point:
    x: float
    y: float

    def norm2(self):
        return self.x * self.x + self.y * self.y


def test_structures():
    def f(t, lst, d, p):
        return t[0], t[1:], lst[0], d["a"], p.x, p.norm2(), len(t), len(lst)

    out = infer(f, (1, 2.0, (3,)), [1.0, 2.0], {"a": np.ones(2)}, Point(1.0, 2.0))
    assert out == "(i64, (f64, (i64,)), f64, f64 x 2, f64, f64, i64, i64)"


def test_constants_are_tracked():
    def f(x):
        t = (x, 2 * x, 3)
        n = len(t) + 1
        return t[n - 3], n

    result = infer_abstract(f, 1.0)
    assert show(result) == "(f64, i64)"
    assert result.elements[1].value == 4


def test_for_over_tuple_of_mixed_types():
    def f(t):
        s = 0
        for x in t:
            s = s + x
        return s

    assert infer(f, (1, 2.0, np.float32(3))) == "f32"  # NumPy 2: Python floats are weak


# Recursion -----------------------------------------------------------------------------------


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def test_recursion():
    assert infer(fact, 3) == "i64"
    assert infer(fact, 3.0) == "f64"
    assert infer(is_even, 3) == "bool"


def test_loop_with_constant_start_gives_one_context():
    def f(n):
        i = 0
        while i < n:
            i = i + 1
        return i

    inferrer = Inferrer()
    inferrer.infer(parse(f), (to_abstract(1),))
    headers = [c for c in inferrer.results if c.graph.name.endswith("loop_header")]
    assert len(headers) == 1


@dataclass
class Tree:
    value: float
    left: Optional["Tree"] = None
    right: Optional["Tree"] = None


def tree_sum(t):
    s = t.value
    if t.left is not None:
        s = s + tree_sum(t.left)
    if t.right is not None:
        s = s + tree_sum(t.right)
    return s


def make_tree(depth, seed=0):
    if depth == 0:
        return Tree(float(seed))
    return Tree(float(seed), make_tree(depth - 1, seed + 1), None if seed % 2 else make_tree(0))


def test_tree_has_one_type_whatever_its_shape():
    trees = [Tree(1.0), make_tree(2), make_tree(4), Tree(1.0, None, Tree(2.0))]
    types = {to_abstract(t) for t in trees}
    assert len(types) == 1
    (t,) = types
    assert isinstance(t, AbstractRecord)
    assert show(t) == "Tree(value :: f64, left :: Tree | None, right :: Tree | None)"
    assert infer(tree_sum, trees[2]) == "f64"


def fold(xs):
    acc = 0.0
    for x in xs:
        acc = acc * 0.5 + x
    return acc


def test_list_has_one_type_whatever_its_length():
    assert len({to_abstract([1.0] * n) for n in (1, 2, 5, 30)}) == 1
    assert isinstance(to_abstract([1.0, 2.0]), AbstractList)
    assert infer(fold, [1.0, 2.0, 3.0]) == "f64"


# The compilation cache -------------------------------------------------------------------------


def test_cache_does_not_infer_again(monkeypatch):
    calls = []
    original = Inferrer.infer

    def counting(self, *args):
        calls.append(1)
        return original(self, *args)

    monkeypatch.setattr(Inferrer, "infer", counting)
    f = myia(tree_sum)
    trees = [make_tree(1), make_tree(3), Tree(5.0), make_tree(5)]
    for t in trees:
        assert f(t) == tree_sum(t)
    assert len(calls) == 1
    assert len(f.compiled_signatures()) == 1

    g = myia(fold)
    for n in (1, 3, 10):
        assert g([1.0] * n) == fold([1.0] * n)
    assert len(calls) == 2
    assert len(g.compiled_signatures()) == 1

    h = myia(add)
    h(1.0, 2.0)
    h(3.0, 4.0)
    h(np.ones(3), 1.0)
    h(np.ones(4), 1.0)
    assert [str(s) for s in h.compiled_signatures()] == [
        "(f64, f64)",
        "(f64 x 3, f64)",
        "(f64 x 4, f64)",
    ]


def test_signature_printing():
    assert show(AbstractArray("float64", (3, 10))) == "f64 x 3 x 10"
    assert show(AbstractScalar("float32")) == "f32"
    assert (
        show(AbstractTuple((AbstractScalar("int64"), AbstractArray("bool", (2,)))))
        == "(i64, bool x 2)"
    )

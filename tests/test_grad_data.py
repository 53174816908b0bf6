"""Gradients through data: tuples, lists, dicts, dataclasses and recursive trees, as arguments
(the gradient has the argument's structure) and as intermediate values."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np
import pytest
from grad_helpers import check_grad_at
from helpers import time_ratio

from myia import grad, value_and_grad
from myia.testing import check_grad


@dataclass
class Point:
    x: float
    y: float
    n: int

    def norm2(self):
        return self.x * self.x + self.y * self.y

    @property
    def scaled(self):
        return self.x * self.n


@dataclass
class Positive:
    x: float

    def __post_init__(self):
        assert self.x > 0.0, "x must be positive"


def log_of_positives(x, n):
    s = 0.0
    for i in range(n):
        s = s + math.log(Positive(x * (i + 1)).x)
    return s


def test_gradient_through_instances_checked_by_post_init():
    check_grad(log_of_positives, 0.7, 3, wrt=0)
    check_grad(log_of_positives, 0.7, 3, wrt=0, order=2)
    assert grad(log_of_positives)(0.5, 4) == pytest.approx(4 / 0.5)
    with pytest.raises(AssertionError, match="x must be positive"):
        grad(log_of_positives)(-0.5, 4)


@dataclass
class Tree:
    value: float
    left: Optional["Tree"] = None  # noqa: UP007, UP037, UP045
    right: Optional["Tree"] = None  # noqa: UP007, UP037, UP045


@dataclass
class Pair:
    first: tuple
    second: list


# Tuples -------------------------------------------------------------------------------------


def tuple_arg(t):
    a, (b, n) = t
    return a * b * n + math.sin(b)


def tuple_ops(t, x):
    u = t + (x, 2.0)
    return u[0] * u[-1] + sum(u[1:]) * len(u) + (u[1] if 2.0 in u else 0.0)


def tuple_with_none_bool_int(t):
    x, nothing, flag, n = t
    if flag and nothing is None:
        return x * n
    return x


def test_grad_tuple_argument_gives_tuple_with_int_zero():
    g = check_grad_at(tuple_arg, [((1.0, (2.0, 3)),), ((-0.5, (0.3, -2)),)])
    got = g((1.0, (2.0, 3)))
    assert got == (6.0 + 0.0, (3.0 + math.cos(2.0), 0))
    assert type(got[1][1]) is int


def test_grad_tuple_operations():
    check_grad_at(tuple_ops, [((1.0, 3.0, -2.0), 0.5)], "t", "x")


def test_grad_none_bool_int_leaves():
    got = grad(tuple_with_none_bool_int)((1.5, None, True, 2))
    assert got == (2.0, None, False, 0)
    assert got[1] is None and got[2] is False and type(got[3]) is int


# Lists --------------------------------------------------------------------------------------


def list_arg(xs):
    s = 0.0
    for i in range(len(xs)):
        s = s + xs[i] * xs[-1 - i] * (i + 1)
    return s + xs[0] ** 3


def list_ops(xs, x):
    ys = xs + [x, x * x]
    zs = ys[1:]
    return sum(zs) * ys[0] + max(ys) + min(zs)


def list_built_in_loop(x, n):
    out = []
    for i in range(n):
        out = out + [x * i]
    s = 0.0
    for v in out:
        s = s + v * v
    return s


def test_grad_list_argument_gives_list():
    points = [([1.0, 2.0, 3.0],), ([0.5],), ([1.0, -2.0, 3.0, 4.0, 0.2],)]
    g = check_grad_at(list_arg, points)
    # Lists of any length have one type.
    for args in points:
        assert len(g(*args)) == len(args[0])
    assert len(g.compiled_signatures()) == 1


def test_grad_list_operations():
    check_grad_at(list_ops, [([1.0, 3.0, -2.0], 0.5), ([2.0], -1.5)], "xs", "x")


def test_grad_list_built_in_a_loop():
    check_grad_at(list_built_in_loop, [(0.7, 4), (0.7, 0)])


# Dicts --------------------------------------------------------------------------------------


def dict_arg(d):
    return d["a"] * d["b"] + d["c"][0] * d["n"] + math.exp(d["c"][1])


def dict_intermediate(x, y):
    d = {"p": x * y, "q": (x, y), "r": [x, x]}
    return d["p"] * d["q"][1] + d["r"][1]


def test_grad_dict_argument_gives_dict():
    g = check_grad_at(dict_arg, [({"a": 1.0, "b": 2.0, "c": (3.0, 0.5), "n": 2},)])
    d = g({"a": 1.0, "b": 2.0, "c": (3.0, 0.5), "n": 2})
    assert isinstance(d, dict) and list(d) == ["a", "b", "c", "n"]
    assert type(d["c"]) is tuple
    assert type(d["n"]) is int and d["n"] == 0


def test_grad_dict_as_intermediate_value():
    check_grad_at(dict_intermediate, [(1.5, -0.5)], "x", "y")


# Dataclasses --------------------------------------------------------------------------------


def point_arg(p):
    return p.norm2() + p.scaled + math.sin(p.y)


def point_intermediate(x, y):
    p = Point(x * 2.0, y, 3)
    q = Point(p.y, p.x, p.n)
    return q.norm2() * p.scaled


def nested_dataclass(pair, x):
    a, b = pair.first
    return a * b * x + pair.second[0] * pair.second[-1]


def isinstance_dispatch(v, x):
    if isinstance(v, Point):
        return v.x * x
    return v * x


def test_grad_dataclass_argument_gives_instance():
    g = check_grad_at(point_arg, [(Point(1.0, 2.0, 3),), (Point(-0.5, 0.3, -1),)])
    got = g(Point(1.0, 2.0, 3))
    assert type(got) is Point and type(got.n) is int and got.n == 0
    assert got.x == pytest.approx(2.0 + 3.0)


def test_grad_dataclass_as_intermediate_value():
    check_grad_at(point_intermediate, [(1.5, -0.5), (0.2, 2.0)], "x", "y")


def replaced_point(p, x):
    q = replace(p, x=x * p.y, n=2)
    r = replace(q, y=np.array([x, q.x]))  # a field of another type
    return q.norm2() * q.scaled + np.sum(r.y * r.x) + p.x


@pytest.mark.parametrize("backend", ["numpy", "debug", "jax", "native"])
def test_grad_through_dataclasses_replace(backend):
    # The replaced fields' gradients go to the new values, the others' to the instance's.
    if backend in ("jax", "native"):
        pytest.importorskip({"jax": "jax", "native": "numba"}[backend])
    for args in ((Point(1.0, 2.0, 3), 0.5), (Point(-0.5, 0.3, -1), 1.5)):
        check_grad(replaced_point, *args, wrt=(0, 1), backend=backend)
    dp, dx = grad(replaced_point, "p", "x", backend=backend)(Point(1.0, 2.0, 3), 0.5)
    assert type(dp) is Point and dp.n == 0 and dp.x == 1.0  # p.x: only the last term


def test_grad_nested_dataclass_tuple_list():
    pair = Pair((1.0, 2.0), [3.0, 4.0, 5.0])
    g = check_grad_at(nested_dataclass, [(pair, 0.5)], "pair", "x")
    dpair, dx = g(pair, 0.5)
    assert type(dpair) is Pair
    assert type(dpair.first) is tuple and type(dpair.second) is list


def test_grad_isinstance():
    g = grad(isinstance_dispatch, "x")
    assert g(Point(1.5, 2.0, 3), 2.0) == 1.5
    assert g(2.5, 2.0) == 2.5


def test_value_and_grad_of_dataclass_argument():
    value, dp = value_and_grad(point_arg, "p")(Point(1.0, 2.0, 3))
    assert value == pytest.approx(point_arg(Point(1.0, 2.0, 3)))
    assert type(dp) is Point


# Trees --------------------------------------------------------------------------------------


def tree_fold(t, x):
    s = math.sin(t.value * x)
    if t.left is not None:
        s = s + t.value * tree_fold(t.left, x)
    if t.right is not None:
        s = s * tree_fold(t.right, x)
    return s


def tree_depth_weighted(t):
    s = t.value * t.value
    if t.left is not None:
        s = s + 2.0 * tree_depth_weighted(t.left)
    if t.right is not None:
        s = s + math.exp(tree_depth_weighted(t.right) * 0.1)
    return s


def build_tree(x, n):
    if n <= 0:
        return None
    return Tree(x * n, build_tree(x * 0.5, n - 1), build_tree(x + 1.0, n - 2))


def tree_sum(t):
    if t is None:
        return 0.0
    return t.value + tree_sum(t.left) * 0.5 + tree_sum(t.right) * t.value


def tree_intermediate(x, n):
    return tree_sum(build_tree(x, n))


def tree_sum_conditional_expressions(t):
    left = tree_sum_conditional_expressions(t.left) if t.left is not None else 0.0
    right = tree_sum_conditional_expressions(t.right) if t.right is not None else 1.0
    return t.value * right + left


TREES = [
    Tree(1.0),
    Tree(1.0, Tree(2.0, None, Tree(3.0)), Tree(0.5)),
    Tree(0.3, Tree(-0.7, Tree(1.1), Tree(0.2, Tree(0.4))), None),
]


def assert_same_shape(a, b):
    assert (a is None) == (b is None), (a, b)
    if a is not None:
        assert type(a) is type(b)
        assert_same_shape(a.left, b.left)
        assert_same_shape(a.right, b.right)


def test_grad_tree_argument_gives_tree_of_same_shape():
    g = check_grad_at(tree_depth_weighted, [(t,) for t in TREES])
    for t in TREES:
        assert_same_shape(g(t), t)
    # Every tree shape has one type: one compilation.
    assert len(g.compiled_signatures()) == 1


def test_grad_tree_fold_wrt_tree_and_scalar():
    g = check_grad_at(tree_fold, [(t, 0.7) for t in TREES], "t", "x")
    for t in TREES:
        dt, _ = g(t, 0.7)
        assert_same_shape(dt, t)
    assert len(g.compiled_signatures()) == 1


def test_grad_tree_fold_with_conditional_expressions():
    check_grad_at(tree_sum_conditional_expressions, [(t,) for t in TREES])


@dataclass
class ArrayTree:
    value: np.ndarray
    left: Optional["ArrayTree"] = None  # noqa: UP007, UP037, UP045
    right: Optional["ArrayTree"] = None  # noqa: UP007, UP037, UP045


def array_tree_sum(t):
    s = np.sum(np.tanh(t.value))
    if t.left is not None:
        s = s + array_tree_sum(t.left)
    if t.right is not None:
        s = s * array_tree_sum(t.right)
    return s


def test_grad_tree_of_arrays():
    rng = np.random.default_rng(0)
    t = ArrayTree(
        rng.normal(size=4),
        ArrayTree(rng.normal(size=4), None, ArrayTree(rng.normal(size=4))),
        ArrayTree(rng.normal(size=4)),
    )
    g = check_grad_at(array_tree_sum, [(t,)])
    dt = g(t)
    assert_same_shape(dt, t)
    assert dt.left.right.value.shape == (4,)


def tuple_of_arrays(p, x):
    w, (b, n) = p
    return np.sum(np.tanh(x @ w + b)) * n


def test_grad_tuple_of_arrays_with_int_leaf():
    rng = np.random.default_rng(1)
    p = (rng.normal(size=(3, 2)), (rng.normal(size=2), 3))
    g = check_grad_at(tuple_of_arrays, [(p, rng.normal(size=(4, 3)))], "p", "x")
    (dw, (db, dn)), dx = g(p, np.ones((4, 3)))
    assert dw.shape == (3, 2) and db.shape == (2,) and dx.shape == (4, 3)
    assert type(dn) is int and dn == 0


def test_grad_tree_as_intermediate_value():
    check_grad_at(tree_intermediate, [(0.7, 0), (0.7, 1), (0.7, 4), (-1.3, 5)])


# Time linear in the size of the data ------------------------------------------------------------


def chain_sum(t, w):
    s = t.value * w
    if t.left is not None:
        s = s + chain_sum(t.left, w)
    return s


def list_sum(xs, w):
    s = 0.0
    for x in xs:
        s = s + x * w
    return s


def _chain(n):
    t = None
    for _ in range(n):
        t = Tree(1.0, t)
    return t


@pytest.mark.serial
@pytest.mark.parametrize("backend", ["numpy", "debug"])
@pytest.mark.parametrize(
    "fn, make", [(list_sum, lambda n: [1.0] * n), (chain_sum, _chain)], ids=["list", "tree"]
)
def test_grad_through_list_or_tree_takes_linear_time(fn, make, backend):
    # The backpropagator of an access once built a zero of the whole structure, and added
    # whole structures up: time quadratic in the size (400 elements: 16x the time of 100).
    # The zeros are lazy and the list sensitivities sparse (myia.primitives.lazy_sens).
    g = grad(fn, "w", backend=backend)
    assert g(make(3), 2.0) == 3.0
    small, large = make(100), make(400)
    assert g(large, 2.0) == 400.0
    ratio = time_ratio(g, (large, 2.0), (small, 2.0))
    assert ratio < 8, f"400 elements take {ratio:.1f}x the time of 100"
    # The gradient with respect to the structure itself is built in linear time too.
    d = grad(fn, 0, backend=backend)(make(1000), 2.0)
    if fn is list_sum:
        assert d == [2.0] * 1000
    else:
        depth = 0
        while d is not None:
            assert type(d) is Tree and d.value == 2.0 and d.right is None
            d, depth = d.left, depth + 1
        assert depth == 1000


def _power_times(k, a):
    return lambda v: v**k * a


def sum_of_closures_built_by_a_comprehension(a, x):
    fs = [_power_times(k, a) for k in range(1, 4)]
    s = 0.0
    for f in fs:
        s = s + f(x)
    return s


def chain_of_closures_in_a_list(a, x):
    fs = [_power_times(1, a), _power_times(2, a)]
    for f in fs:
        x = f(x)
    return x


@pytest.mark.parametrize(
    "fn", [sum_of_closures_built_by_a_comprehension, chain_of_closures_in_a_list]
)
def test_grad_through_a_loop_over_a_list_of_closures(fn):
    # The comprehension's ``[]``, converted to a list of closures, had its function types
    # erased ("branches return incompatible types"); the sensitivity of the loop's iterator
    # over closures held closures, not their environments (with respect to `a`).
    check_grad_at(fn, [(2.0, 1.5), (-0.5, 0.7)], 0, 1)
    assert grad(sum_of_closures_built_by_a_comprehension, 1)(2.0, 1.5) == pytest.approx(21.5)

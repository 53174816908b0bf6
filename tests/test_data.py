"""Data in the language: tuples, lists, dicts with string keys, dataclasses (methods,
properties, recursive trees) and ``isinstance``, run through `@myia` and compared with Python."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from typing import Optional

import numpy as np
import pytest
from helpers import examples, floats, interpret, line_of, numbers, small_ints
from hypothesis import given
from hypothesis import strategies as st

from myia import MyiaError, MyiaTypeError, myia

# Tuples ---------------------------------------------------------------------------------------


def tuple_ops(t, i):
    return t[0], t[-1], t[i], t[1:], t[:-1], t[::2], t[::-1], len(t), t + (1, 2), () + t


def tuple_nested(x):
    t = ((x, 1), (2, (x, 3.0)))
    (a, b), (c, (d, e)) = t
    return t[1][1][0] + a + b + c + d + e, t[0], len(t[1])


def tuple_equality(a, b):
    return a == b, a != b, (a, 1) == (a, 1), () == ()


@examples
@given(st.lists(numbers, min_size=1, max_size=6), st.data())
def test_tuples(check, xs, data):
    i = data.draw(st.integers(-len(xs), len(xs) - 1))
    check(tuple_ops, tuple(xs), i)
    check(tuple_nested, xs[0])
    check(tuple_equality, tuple(xs), tuple(xs))
    check(tuple_equality, tuple(xs), tuple(xs[:-1]))


def test_tuple_index_out_of_range():
    def f(t):
        return t[5]

    # A tuple's length is part of its type: inference rejects the index before running.
    with pytest.raises(MyiaTypeError, match="out of range") as info:
        myia(f)((1, 2))
    assert info.value.location.line == line_of(f, "t[5]")
    # The interpreter alone runs it as Python would.
    with pytest.raises(IndexError):
        interpret(f, (1, 2))


# Lists ----------------------------------------------------------------------------------------


def list_ops(xs, i):
    ys = xs + [1.0, 2.0]
    return xs[0], xs[-1], xs[i], xs[1:], xs[:-1], xs[::-1], len(xs), len(ys), ys, [] + xs


def list_slice_variable(xs, a, b):
    return xs[a:b], xs[a:], xs[:b]


def list_build(n):
    out = []
    for i in range(n):
        out = out + [i * i]
    return out, len(out)


def list_of_tuples(xs):
    pairs = [(x, -x) for x in ()] if False else [(xs[0], 1), (xs[-1], 2)]
    return pairs[1][0], pairs


@examples
@given(st.lists(floats, min_size=1, max_size=6), st.data())
def test_lists(check, xs, data):
    i = data.draw(st.integers(-len(xs), len(xs) - 1))
    a = data.draw(st.integers(-7, 7))
    b = data.draw(st.integers(-7, 7))
    check(list_ops, xs, i)
    check(list_slice_variable, xs, a, b)
    check(list_build, len(xs))


def test_list_index_out_of_range(check):
    def f(xs, i):
        return xs[i]

    check(f, [1, 2], 2)
    check(f, [1, 2], -3)


# Dicts ----------------------------------------------------------------------------------------


def dict_ops(x, y):
    d = {"a": x, "b": y, "c": (x, y)}
    return d["a"] + d["b"], d["c"], len(d), d.keys(), d.values(), d.items()


def dict_argument(d):
    s = 0
    for _k, v in d.items():
        s = s + v
    return s, tuple(d.keys()) if False else d.keys(), d["x"]


def dict_result(x):
    return {"value": x, "double": 2 * x, "nested": {"t": (x,)}}


@examples
@given(numbers, numbers)
def test_dicts(check, x, y):
    got = myia(dict_ops)(x, y)
    expected = dict_ops(x, y)
    # keys/values/items are tuples in Myia (dicts are immutable values)
    assert got[:3] == expected[:3]
    assert tuple(got[3]) == tuple(expected[3])
    assert tuple(got[4]) == tuple(expected[4])
    assert tuple(got[5]) == tuple(expected[5])
    check(dict_result, x)
    d = {"x": x, "y": y}
    s, keys, v = myia(dict_argument)(d)
    assert s == x + y and tuple(keys) == ("x", "y") and v == x


def test_dict_missing_key():
    def f(d):
        return d["zz"]

    with pytest.raises(MyiaTypeError, match="zz") as info:
        myia(f)({"a": 1})
    assert info.value.location.line == line_of(f, 'd["zz"]')
    with pytest.raises(KeyError):
        interpret(f, {"a": 1})


# Dataclasses ----------------------------------------------------------------------------------


@dataclass
class Point:
    x: float
    y: float = 0.0

    def norm2(self):
        return self.x * self.x + self.y * self.y

    def scaled(self, k):
        return Point(self.x * k, self.y * k)

    def dist2(self, other):
        return (self - other).norm2()

    def __sub__(self, other):
        return Point(self.x - other.x, self.y - other.y)

    def __add__(self, other):
        return Point(self.x + other.x, self.y + other.y)

    def __mul__(self, k):
        return self.scaled(k)

    def __rmul__(self, k):
        return self.scaled(k)

    @property
    def swapped(self):
        return Point(self.y, self.x)

    @property
    def total(self):
        return self.x + self.y

    @staticmethod
    def origin():
        return Point(0.0, 0.0)


@dataclass(frozen=True)
class Config:
    scale: float = 2.0
    offset: float = 1.0
    names: tuple = ("a", "b")


def use_point(x, y):
    p = Point(x, y)
    q = Point(x=y)
    r = Point(y=x, x=1.0)
    return (
        p.x,
        p.y,
        q.y,
        p.norm2(),
        p.scaled(2.0).x,
        p.dist2(q),
        p.swapped.x,
        p.total,
        (p + q).x,
        (p * 3.0).y,
        (2.0 * p).y,
        r.x,
        r.y,
        Point.origin().x,
    )


def use_config(x):
    c = Config()
    d = Config(scale=x)
    return c.scale * x + c.offset, d.scale, d.names[1], c


def point_result(x):
    return Point(x, -x), (Point(1.0, x), Config(offset=x))


def point_argument(p, ps):
    s = p.x
    for q in ps:
        s = s + q.norm2()
    return s, p.swapped


@examples
@given(floats, floats)
def test_dataclasses(check, x, y):
    check(use_point, x, y)
    check(use_config, x)
    check(point_result, x)
    check(point_argument, Point(x, y), [Point(y, x), Point(1.0)])
    check(point_argument, Point(x, y), (Point(y, x), Point(1.0, 2.0)))


@dataclass(frozen=True)
class Layer:
    w: np.ndarray
    scale: float = 1.0
    steps: int = field(default=0, init=False)  # not in __init__: replace() resets it


def replaced(p, x, layer):
    q = dataclasses.replace(p, x=x * 2)
    return (
        q,
        q.norm2(),
        dataclasses.replace(q),  # a copy
        dataclasses.replace(p, y=p.x, x=1),  # a field of another type: an int
        replace(Config(), offset=x, names=("c",)),
        replace(layer, w=layer.w * x),
        replace(layer, scale=layer.w),  # an array where a float was
    )


@examples
@given(floats, floats)
def test_dataclasses_replace(check, x, y):
    # dataclasses.replace(obj, **changes) is a new instance with those fields replaced (it was
    # refused: "Myia values are immutable"); Python's replace calls the class.
    layer = Layer(np.array([x, 1.0]))
    object.__setattr__(layer, "steps", 7)  # Python's replace makes it 0 again
    check(replaced, Point(x, y), y, layer)


def replace_unknown_field(p):
    return dataclasses.replace(p, z=1.0)  # MARK unknown


def replace_not_a_dataclass(t):
    return replace(t, x=1.0)  # MARK not


def test_dataclasses_replace_mistakes_are_type_errors_at_the_users_line():
    for fn, arg, mark, match in [
        (replace_unknown_field, Point(1.0), "MARK unknown", "unexpected keyword argument 'z'"),
        (replace_not_a_dataclass, (1.0,), "MARK not", "should be called on dataclass instances"),
    ]:
        with pytest.raises(TypeError):
            fn(arg)  # Python's TypeError
        with pytest.raises(MyiaTypeError, match=match) as info:
            myia(fn)(arg)
        assert info.value.location.line == line_of(fn, mark)


@dataclass
class Interval:
    lo: float
    hi: float

    def __post_init__(self):
        if self.lo > self.hi:
            raise ValueError("an interval's lo is above its hi")
        if self.hi - self.lo >= 100.0:  # (an assert here would be rewritten by pytest)
            raise OverflowError("too wide")

    def width(self):
        return self.hi - self.lo


def made_interval(lo, hi):
    return Interval(lo, hi)


def replaced_interval(lo, hi):
    return dataclasses.replace(Interval(lo, lo), hi=hi).width()


def interval_widths(x, n):
    s = 0.0
    for i in range(n):
        s = s + Interval(x, x + i * 30.0).width()
    return s


@examples
@given(floats, floats)
def test_post_init_runs_on_each_instance_made(check, x, y):
    # ``__post_init__`` was not run: its checks were skipped silently.
    check(made_interval, x, y)
    check(replaced_interval, x, y)
    check(interval_widths, x, 3)
    check(interval_widths, x, 5)  # the fifth is too wide


@dataclass
class Normalized:
    x: float

    def __post_init__(self):
        self.x = float(self.x)  # MARK assigns


def normalized(x):
    return Normalized(x).x


def test_post_init_assigning_a_field_is_refused_at_its_line():
    with pytest.raises(MyiaError, match="mutates an object") as info:
        myia(normalized)(1)
    assert info.value.location.line == line_of(Normalized.__post_init__, "MARK assigns")


@dataclass
class Tree:
    value: float
    left: Optional["Tree"] = None  # noqa: UP007, UP037, UP045
    right: Optional["Tree"] = None  # noqa: UP007, UP037, UP045

    def total(self):
        s = self.value
        if self.left is not None:
            s = s + self.left.total()
        if self.right is not None:
            s = s + self.right.total()
        return s


def tree_sum(t):
    if t is None:
        return 0.0
    return t.value + tree_sum(t.left) + tree_sum(t.right)


def tree_depth(t):
    if t is None:
        return 0
    return 1 + max(tree_depth(t.left), tree_depth(t.right))


def tree_map(t, k):
    if t is None:
        return None
    return Tree(t.value * k, tree_map(t.left, k), tree_map(t.right, k))


def tree_build(n):
    if n == 0:
        return None
    return Tree(float(n), tree_build(n - 1), None)


def trees():
    return st.recursive(
        st.none(),
        lambda children: st.builds(Tree, floats, children, children),
        max_leaves=12,
    )


@examples
@given(trees())
def test_trees(check, t):
    check(tree_sum, t)
    check(tree_depth, t)
    check(tree_map, t, 2.0)
    if t is not None:
        check(Tree.total, t)


def test_tree_build(check):
    check(tree_build, 5)


# isinstance -----------------------------------------------------------------------------------


def kinds(x):
    return (
        isinstance(x, int),
        isinstance(x, float),
        isinstance(x, (int, float)),
        isinstance(x, tuple),
        isinstance(x, Point),
        isinstance(x, np.ndarray),
        isinstance(x, bool),
        isinstance(x, list),
        isinstance(x, dict),
    )


def dispatch_on_kind(x):
    if isinstance(x, tuple):
        return len(x)
    elif isinstance(x, Point):
        return x.x
    return x


@pytest.mark.parametrize(
    "x", [1, 1.5, True, (1, 2), Point(1.0, 2.0), np.ones(3), None, [1], {"a": 1}]
)
def test_isinstance(check, x):
    check(kinds, x)


@pytest.mark.parametrize("x", [1, 1.5, (1, 2, 3), Point(4.0)])
def test_isinstance_branches(check, x):
    check(dispatch_on_kind, x)


# Structural equality of results and the signature cache ------------------------------------------


def identity(x):
    return x


@pytest.mark.parametrize(
    "x",
    [
        1,
        2.5,
        True,
        None,
        (1, (2.0, None)),
        [1.0, 2.0],
        {"a": (1, 2), "b": [3]},
        Point(1.0, 2.0),
        np.float32(1.5),
        np.arange(6.0).reshape(2, 3),
    ],
)
def test_identity_roundtrip(check, x):
    check(identity, x)


def test_signature_cache():
    f = myia(lambda x: x)
    f(1.0)
    f(2.0)
    f(np.ones((3, 4)))
    f(np.zeros((3, 4)))
    f(Tree(1.0, Tree(2.0), None))
    f(Tree(1.0, None, Tree(2.0, Tree(3.0))))
    sigs = f.compiled_signatures()
    assert len(sigs) == 3, sigs
    shown = [str(s) for s in sigs]
    assert "(f64 x 3 x 4)" in shown, shown


def test_list_lengths_share_a_signature():
    f = myia(lambda xs: len(xs))
    f([1.0, 2.0])
    f([1.0, 2.0, 3.0])
    f([])
    assert len(f.compiled_signatures()) <= 2


def test_unsupported_argument_kind():
    with pytest.raises((MyiaError, TypeError)):
        myia(identity)(object())


@examples
@given(small_ints)
def test_default_factory_dataclass(check, x):
    @dataclass
    class WithFactory:
        a: int
        b: tuple = field(default_factory=tuple)

    def f(a):
        return WithFactory(a).b

    check(f, x)

"""Everyday Python and NumPy in compiled code and under `grad`, compared with Python.

Comprehensions and generator expressions; builtins over lists of arrays and lists as
compile-time arguments (other constructs: `test_everyday_constructs`).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from myia import myia
from myia.testing import check_grad

# Comprehensions -------------------------------------------------------------------------------


def listcomp_range(x, n):
    return [x * i for i in range(n)]


def listcomp_filter(n):
    return [i * i for i in range(n) if i % 2 == 0]


def listcomp_list(x, xs):
    return [x * v + 1.0 for v in xs if v > 0.0]


def listcomp_tuple(x):
    return [x * v for v in (1.0, 2.0, 3.0)]


def listcomp_nested(n):
    return [i * j for i in range(n) for j in range(i) if j != 1]


def listcomp_zip(xs, ys):
    return [a * b for a, b in zip(xs, ys)]


def listcomp_enumerate(xs):
    return [i * x for i, x in enumerate(xs) if i != 1]


def listcomp_closure(x, xs):
    scale = x * 2.0
    return [scale * v for v in xs]


def listcomp_shadow(x):
    # The loop variable of a comprehension does not leak.
    v = 10.0
    ys = [v * 2.0 for v in (x, x + 1.0)]
    return ys[1] + v


def listcomp_in_loop(x, n):
    total = 0.0
    for k in range(n):
        total = total + sum([x * k * j for j in range(3)])
    return total


def dictcomp_items(x):
    return {k: v * x for k, v in (("a", 1.0), ("b", 2.0))}


def dictcomp_dict(d, s):
    return {k: v * s for k, v in d.items()}


def tuplecomp(x, y):
    return tuple(v * 2.0 for v in (x, y, x * y))


def tuplecomp_zip(x, y):
    return tuple(a + b for a, b in zip((x, y), (y, x)))


def gen_sum(x, n):
    return sum(x * i for i in range(n))


def gen_sum_filter(xs):
    return sum(v * v for v in xs if v > 1.0)


def gen_max_min(xs):
    return max(v * 2.0 for v in xs), min(v - 1.0 for v in xs)


def gen_any_all(xs):
    return any(v > 2.0 for v in xs), all(v > 0.0 for v in xs)


def gen_sum_zip(xs, ys):
    return sum(a * b for a, b in zip(xs, ys))


def gen_nested(x, n):
    return sum(x * i + j for i in range(n) for j in range(2))


def gen_any_all_static(x):
    t = (x, 2.0 * x, -x)
    return any(v > 1.0 for v in t), all(v != 0.0 for v in t), min(v * v for v in t)


def gen_filters_range(n):
    return any(i > 3 for i in range(n) if i % 2 == 1), all(i < 3 for i in range(n) if i < 5)


def gen_tuple_static(x):
    return max(v * x for v in (1.0, -2.0, 3.0))


def tuple_of_rows(x, W):
    # The rows of arrays of known shapes: tuples, as in Python, of which a tuple is made.
    return tuple(x) + (1.0,), tuple(np.tanh(r) for r in W), tuple(enumerate(x))


def tuple_of_zips(x, W):
    return tuple(zip(x, W)), tuple(zip(x, (1, 2.0, 3))), tuple(zip(x, x[:2], W))


def rows_unpacked(x):
    a, b, c = tuple(2.0 * v for v in x)
    return a * b - c, sum(v * v for v in x)


def list_tuple_builtins(x, xs):
    return list((x, x * 2.0)), list(xs), tuple((x, 1.0)), tuple(), list()


COMPREHENSIONS = [
    (listcomp_range, (2.0, 4)),
    (listcomp_range, (2.0, 0)),
    (listcomp_filter, (7,)),
    (listcomp_list, (2.0, [1.0, -3.0, 2.0])),
    (listcomp_tuple, (2.0,)),
    (listcomp_nested, (5,)),
    (listcomp_zip, ([1.0, 2.0, 3.0], [4.0, 5.0])),
    (listcomp_enumerate, ([1.0, 2.0, 3.0],)),
    (listcomp_closure, (1.5, [1.0, 2.0])),
    (listcomp_shadow, (1.5,)),
    (listcomp_in_loop, (1.5, 3)),
    (dictcomp_items, (2.0,)),
    (dictcomp_dict, ({"a": 1.0, "b": 2.5}, 3.0)),
    (tuplecomp, (2.0, 3.0)),
    (tuplecomp_zip, (2.0, 3.0)),
    (gen_sum, (2.0, 4)),
    (gen_sum_filter, ([1.0, 3.0, 2.0, 0.5],)),
    (gen_max_min, ([1.0, 3.0, 2.0],)),
    (gen_any_all, ([1.0, 3.0, 2.0],)),
    (gen_any_all, ([1.0, -3.0],)),
    (gen_sum_zip, ([1.0, 3.0], [2.0, 4.0])),
    (gen_nested, (1.5, 3)),
    (gen_tuple_static, (2.0,)),
    (gen_any_all_static, (0.75,)),
    (gen_filters_range, (3,)),
    (gen_filters_range, (8,)),
    (list_tuple_builtins, (2.0, [1.0, 2.0])),
    (tuple_of_rows, (np.array([0.5, -1.0, 2.0]), np.arange(6.0).reshape(2, 3) / 4)),
    (tuple_of_zips, (np.array([0.5, -1.0, 2.0]), np.arange(6.0).reshape(2, 3) / 4)),
    (rows_unpacked, (np.array([0.5, -1.0, 2.0]),)),
]


@pytest.mark.parametrize(("fn", "args"), COMPREHENSIONS, ids=lambda v: getattr(v, "__name__", ""))
def test_comprehensions(check, fn, args):
    check(fn, *args)


def test_generator_over_range_is_a_list():
    # A generator expression whose length is only known at run time gives a list.
    assert myia(lambda n: tuple(i * 2 for i in range(n)))(3) == [0, 2, 4]


def test_rows_of_an_array_make_a_tuple():
    # Of a known number of rows (up to 256) a tuple, as Python makes; its gradient flows
    # back to the rows.
    x = np.array([0.5, -1.0, 2.0])
    assert myia(lambda x: tuple(x))(x) == tuple(x)
    assert isinstance(myia(lambda x: tuple(v * 2.0 for v in x))(x), tuple)
    assert isinstance(myia(lambda x: tuple(x))(np.zeros(300)), list)  # more: a list
    check_grad(lambda x: tuple(x)[0] * tuple(v * v for v in x)[2], x)


def test_set_comprehension_is_rejected():
    from myia import MyiaSyntaxError

    def f(xs):
        return {x for x in xs}

    with pytest.raises(MyiaSyntaxError, match="set comprehensions"):
        myia(f)([1.0])


def comp_loss_range(x, n):
    return sum([x * x * i for i in range(n)])


def comp_loss_list(x, xs):
    return sum(v * x + x * x for v in xs if v > 0.0)


def comp_loss_nested(x, n):
    return sum([math.sin(x * i) * j for i in range(n) for j in range(3)])


def comp_loss_tuple(x, y):
    t = tuple(v * v for v in (x, y, x * y))
    return t[0] + t[2]


def comp_loss_dict(x, y):
    d = {k: v * x for k, v in (("a", y), ("b", x))}
    return d["a"] * d["b"]


def comp_loss_max(xs):
    return max(v * v for v in xs) + min(v for v in xs)


def comp_loss_zip_enum(xs, ys):
    return sum(i * a * b for i, (a, b) in enumerate(zip(xs, ys)))


def comp_loss_arrays(w, xs):
    return sum([np.sum(np.tanh(w * x)) for x in xs])


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (comp_loss_range, (1.5, 4)),
        (comp_loss_list, (1.5, [1.0, -2.0, 3.0])),
        (comp_loss_nested, (0.7, 3)),
        (comp_loss_tuple, (1.5, 2.0)),
        (comp_loss_dict, (1.5, 2.0)),
        (comp_loss_max, ([1.0, -2.0, 0.5],)),
        (comp_loss_zip_enum, ([1.0, 2.0, 3.0], [0.5, -1.0, 2.0])),
        (comp_loss_arrays, (np.array([0.5, -1.0]), [np.ones(2), np.arange(2.0)])),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_comprehension_gradients(fn, args):
    check_grad(fn, *args)


# Builtins and NumPy on lists; functions in data ---------------------------------------------


def sum_list_of_arrays(xs):
    return sum(xs)


def sum_list_of_arrays_start(xs, s):
    return sum(xs, s)


def mean_of_list(xs):
    return np.mean(xs)


def sum_of_list(xs):
    return np.sum(xs)


def _inc(x):
    return x + 1.0


def _dbl(x):
    return x * 2.0


FUNCTIONS = (_inc, _dbl, math.sin)
FUNCTION_DICT = {"inc": _inc, "tanh": math.tanh}


def tuple_of_functions(x, i):
    return FUNCTIONS[1](x) + FUNCTIONS[0](x) + FUNCTIONS[2](x) + FUNCTIONS[i](x)


def dict_of_functions(x):
    return FUNCTION_DICT["inc"](x) * FUNCTION_DICT["tanh"](x)


def lambdas_in_literals(x):
    acts = {"sq": lambda y: y * y, "neg": lambda y: -y}
    pair = (lambda y: y + 1.0, lambda y: y * 3.0)
    return acts["sq"](x) + acts["neg"](x) + pair[0](x) * pair[1](x)


def apply(f, x):
    return f(x)


def apply_builtins(x):
    return apply(math.sin, x) + apply(math.tanh, x) + apply(abs, -x) + apply(math.cos, x)


def mixed_list(x):
    return [1, 2.5, True, x]


def mixed_list_ints(n):
    return [n, True, 3]


def not_or(a, b):
    return (not a) or b


def sum_mixed(b, x):
    return sum([b, 1, x])


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (sum_list_of_arrays, ([np.ones(2), np.arange(2.0)],)),
        (sum_list_of_arrays, ([np.ones((2, 3))] * 3,)),
        (sum_list_of_arrays_start, ([np.ones(2), np.arange(2.0)], 1.5)),
        (sum_list_of_arrays, ([1.0, 2.5],)),
        (sum_list_of_arrays, ([],)),
        (mean_of_list, ([1.0, 2.0, 4.0],)),
        (mean_of_list, ([np.ones(2), np.arange(2.0)],)),
        (mean_of_list, ((1.0, 3.0),)),
        (sum_of_list, ([1, 2],)),
        (sum_of_list, ([1.5, 2.0],)),
        (tuple_of_functions, (0.5, 1)),
        (dict_of_functions, (0.5,)),
        (lambdas_in_literals, (1.5,)),
        (apply_builtins, (0.5,)),
        (mixed_list, (0.5,)),
        (sum_mixed, (True, 2.5)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_lists_and_functions(check, fn, args):
    check(fn, *args)


def test_bools_join_as_numpy_promotes():
    # [1, 2.5, True] is a list of floats; (not a) or b is an int (True is 1).
    assert myia(mixed_list)(0.5) == [1.0, 2.5, 1.0, 0.5]
    assert myia(mixed_list_ints)(4) == [4, 1, 3]
    assert myia(not_or)(True, 3) == 3
    out = myia(not_or)(False, 3)
    assert out == 1 and type(out) is int


def list_loss_arrays(w):
    return np.sum(sum([w * 2.0, np.tanh(w), w * w]))


def list_loss_list_argument(xs, w):
    return np.sum(sum(xs) * w) + np.sum(sum([x * x for x in xs], w))


def list_loss_mean(x):
    return np.mean([x, x * x, 2.0])


def list_loss_functions(x):
    return tuple_of_functions(x, 2) + dict_of_functions(x) + lambdas_in_literals(x)


def list_loss_apply(x):
    return apply_builtins(x) + apply(math.exp, x)


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (list_loss_arrays, (np.array([0.5, -1.0]),)),
        (list_loss_list_argument, ([np.array([0.5, -1.0]), np.ones(2)], np.array([2.0, 3.0]))),
        (list_loss_mean, (1.5,)),
        (mean_of_list, ([np.ones(2), np.arange(2.0)],)),
        (list_loss_functions, (0.7,)),
        (list_loss_apply, (0.7,)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_lists_and_functions_gradients(fn, args):
    check_grad(fn, *args)


# Lists as compile-time arguments -------------------------------------------------------------


def index_with_list(x):
    return x[[0, 2]], x[[1, 1, 0]] * 2.0


def index_rows_with_list(x):
    return x[[1, 0], 1:]


def transpose_list(x):
    return np.transpose(x, axes=[1, 0]), np.transpose(x, [1, 0]) + 1.0


def transpose_3d(x):
    return np.transpose(x, [2, 0, 1])


def split_list(x):
    return np.split(x, [1, 2])


def split_equal(x):
    return np.split(x, 2)


def split_axis(x):
    return np.split(x, [1], axis=1)


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (index_with_list, (np.arange(4.0),)),
        (index_rows_with_list, (np.arange(6.0).reshape(2, 3),)),
        (transpose_list, (np.arange(6.0).reshape(2, 3),)),
        (transpose_3d, (np.ones((2, 3, 4)),)),
        (split_equal, (np.arange(4.0),)),
        (split_equal, (np.arange(8.0).reshape(4, 2),)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_lists_as_constants(check, fn, args):
    check(fn, *args)


def test_split_sections_of_different_shapes():
    # A list holds elements of one type: sections of different shapes come as a tuple.
    x = np.arange(4.0)
    got = myia(split_list)(x)
    for g, e in zip(got, split_list(x), strict=True):
        np.testing.assert_array_equal(g, e)
    got = myia(split_axis)(np.ones((2, 3)))
    assert [g.shape for g in got] == [(2, 1), (2, 2)]


def list_const_loss(x):
    a, b = np.split(x[[0, 2, 3, 1]], 2)
    parts = np.split(x, [1, 3])
    return np.sum(a * b) + np.sum(np.transpose(x.reshape(2, 2), [1, 0]) * parts[1][0])


def test_lists_as_constants_gradients():
    check_grad(list_const_loss, np.array([0.5, -1.0, 2.0, 1.5]))

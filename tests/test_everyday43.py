"""Everyday NumPy a researcher writes: windows at run-time offsets, lists grown by ``append``.

``x[i:i + k]`` with `i` known at run time only (an argument, a loop variable) and `k` a
constant is a window of length `k`, with its gradient; ``x[:n]`` has an axis of a length
known at run time, NumPy's, with its gradient. ``xs.append(v)`` on a list the function
builds rebinds it; ``np.stack``, ``np.concatenate``, ``np.vstack``, ``np.hstack`` and
``np.column_stack`` join such a list (of a length known at run time), with gradients.
``math.isclose``, ``math.factorial``, ``math.gcd``, ``sorted`` and ``tuple * n``. Each is
checked on every backend against Python and, where differentiable, against finite
differences (`myia.testing.check_grad`).
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from myia import myia
from myia.errors import MyiaError, MyiaSyntaxError, MyiaTypeError
from myia.testing import check_grad

BACKENDS = ["debug", "numpy"]
BACKENDS += ["jax"] if importlib.util.find_spec("jax") else []

X = np.linspace(-1.0, 1.0, 10)
M = np.linspace(-1.0, 1.0, 48).reshape(6, 8)
K = 3

# Windows: slices whose bounds are known at run time only ------------------------------------


def window_arg(x, i):
    return np.sum(x[i : i + K] ** 2)


def window_offset(x, i):
    return np.sum(np.sin(x[i + 1 : i + 3]))


def window_named_stop(x, i):
    j = i + 2
    return np.sum(x[i:j] * x[i + 2 : j + 2])


def window_before(x, i):
    return np.sum(x[i - 2 : i] ** 3)


def window_step_one(x, i):
    return np.sum(x[i : i + 2 : 1] ** 2)


def window_columns(m, i):
    return np.sum(np.tanh(m[i : i + 2, i + 1 : i + 4]))


def window_in_for(x):
    t = 0.0
    for i in range(3):
        t = t + np.sum(x[i : i + 2] ** 2)
    return t


def window_in_for_runtime(x, n):
    t = 0.0
    for i in range(n):
        t = t + np.sum(x[i : i + 2] * x[i + 1 : i + 3])
    return t


def window_in_while(x):
    t = 0.0
    i = 0
    while i < 6:
        w = x[i : i + 2]
        t = t + w[0] * w[1]
        i = i + 2
    return t


WINDOWS = [
    (window_arg, (X, 3)),
    (window_offset, (X, 4)),
    (window_named_stop, (X, 1)),
    (window_before, (X, 5)),
    (window_step_one, (X, 2)),
    (window_columns, (M, 1)),
    (window_in_for, (X,)),
    (window_in_for_runtime, (X, 4)),
    (window_in_while, (X,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", WINDOWS, ids=[f.__name__ for f, _ in WINDOWS])
def test_windows_at_run_time_offsets(backend, fn, args):
    np.testing.assert_allclose(myia(fn, backend=backend)(*args), fn(*args), rtol=1e-12)
    check_grad(fn, *args, wrt=0, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_window_value_and_shape(backend):
    def window(x, i):
        return x[i : i + 2]

    got = myia(window, backend=backend)(X, 7)
    np.testing.assert_array_equal(got, X[7:9])


def prefix(x, n):
    return np.sum(x[:n] ** 2)


def suffix_block(m, i):
    return np.sum(np.tanh(m[i:, 1:3]))


def between(x, a, b):
    return np.sum(np.sin(x[a:b]) * 2.0)


def strided(x, s):
    return np.sum(x[::s] ** 2)


def prefix_rows_matmul(m, n):
    return np.mean(m[:n]) + np.sum(np.cos(m[:n] @ np.ones(8)))


PREFIXES = [
    (prefix, (X, 4)),
    (prefix, (X, 0)),
    (prefix, (X, 20)),
    (suffix_block, (M, 2)),
    (between, (X, 2, 7)),
    (between, (X, -3, 9)),
    (strided, (X, 3)),
    (prefix_rows_matmul, (M, 4)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "fn, args", PREFIXES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(PREFIXES)]
)
def test_slices_of_run_time_length(backend, fn, args):
    # (Once refused: "the bounds of a slice of an array must be known at compile time".)
    np.testing.assert_allclose(myia(fn, backend=backend)(*args), fn(*args), rtol=1e-12)
    check_grad(fn, *args, wrt=0, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_slice_of_run_time_length_has_numpys_shape(backend):
    def head(x, n):
        return x[:n], x[n:, None]

    for n in (0, 3, 12):
        got = myia(head, backend=backend)(M, n)
        for g, e in zip(got, head(M, n)):
            assert g.shape == e.shape
            np.testing.assert_array_equal(g, e)


def test_slice_with_a_float_bound_is_refused_at_the_users_line():
    def float_stop(x, t):
        return x[: t * 2.0]

    with pytest.raises(MyiaTypeError) as info:
        myia(float_stop)(X, 1.5)
    message = str(info.value)
    assert "slice indices must be integers" in message and "x[: t * 2.0]" in message


# Lists grown by append, joined into arrays -------------------------------------------------


def append_vstack(x):
    out = []
    for i in range(3):
        out.append(x * (i + 1.0))
    return np.sum(np.cos(np.vstack(out)) @ np.arange(4.0))


def append_stack_axis(x, n):
    out = []
    for i in range(n):
        if i % 2 == 0:
            out.append(np.sin(x) * i)
        else:
            out.append(x)
    return np.sum(np.stack(out, axis=1) ** 2)


def append_concatenate_windows(x):
    out = [x]
    for i in range(2):
        out.append(x[i : i + 2] * 2.0)
    return np.sum(np.concatenate(out) ** 2)


def append_hstack(m):
    cols = []
    for j in range(3):
        cols.append(m[:, j : j + 1] * j)
    return np.sum(np.tanh(np.hstack(cols)))


def append_column_stack(x):
    cols = []
    for j in range(3):
        cols.append(x * j)
    return np.sum(np.column_stack(cols) ** 2)


def append_concatenate_flat(m):
    parts = []
    for i in range(2):
        parts.append(m[i : i + 2] * (i + 1.0))
    return np.sum(np.concatenate(parts, axis=None) ** 3)


def rows_vstack(a):
    # (Once refused: "np.vstack of a list: its length is not known at compile time".)
    rows = []
    for r in a:
        rows = rows + [r * 2.0]
    return np.sum(np.vstack(rows) ** 2)


JOINS = [
    (rows_vstack, (M[:3, :4],)),
    (append_vstack, (X[:4],)),
    (append_stack_axis, (X[:4], 3)),
    (append_concatenate_windows, (X[:4],)),
    (append_hstack, (M[:3, :4],)),
    (append_column_stack, (X[:4],)),
    (append_concatenate_flat, (M[:4, :3],)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", JOINS, ids=[f.__name__ for f, _ in JOINS])
def test_lists_built_by_append_join_into_arrays(backend, fn, args):
    np.testing.assert_allclose(myia(fn, backend=backend)(*args), fn(*args), rtol=1e-12)
    check_grad(fn, *args, wrt=0, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_append_builds_the_list(backend):
    def build(a, n):
        xs = []
        for i in range(n):
            xs.append(a * i)
        return xs, np.stack(xs)

    xs, stacked = myia(build, backend=backend)(np.ones(2), 3)
    assert isinstance(xs, list) and len(xs) == 3
    np.testing.assert_array_equal(stacked, [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_stack_of_an_empty_list_is_numpys_error(backend):
    def empty(x, n):
        out = []
        for _ in range(n):
            out.append(x)
        return np.stack(out)

    with pytest.raises(ValueError, match="at least one array"):
        myia(empty, backend=backend)(X, 0)


def append_to_parameter(xs, a):
    xs.append(a)
    return xs


def append_to_alias(a):
    xs = []
    ys = xs
    xs.append(a)
    return ys


def append_to_tuple(a):
    t = (a, a)
    t.append(a)
    return t


def append_seen_by_closure(a):
    xs = [a]

    def first():
        return xs[0]

    xs.append(a)
    return first()


def append_after_a_comprehension_kept_it(a):
    xs = [a]
    ys = [xs for _ in range(1)]  # Python's ys sees the append
    xs.append(a)
    return ys


def _kept(v):
    return v


def append_after_a_call_kept_it(a):
    xs = [a]
    ys = _kept(xs)  # the same list in Python
    xs.append(a)
    return ys


def append_while_iterating(a):
    xs = [a]
    for v in xs:  # noqa: B007 (Python iterates the list as it grows)
        if len(xs) < 3:
            xs.append(a)
    return xs


@pytest.mark.parametrize(
    "fn, args, why",
    [
        (append_after_a_comprehension_kept_it, (1.0,), "xs is read as a whole while it grows"),
        (append_after_a_call_kept_it, (1.0,), "xs is read as a whole while it grows"),
        (append_while_iterating, (1.0,), "xs is read as a whole while it grows"),
        (append_to_parameter, ([1.0], 2.0), "xs is a parameter"),
        (append_to_alias, (1.0,), "another name refers to the list xs"),
        (append_to_tuple, (1.0,), "may be another list"),
        (append_seen_by_closure, (1.0,), "a nested function reads xs"),
    ],
)
def test_append_that_could_differ_from_python_is_refused_at_its_line(fn, args, why):
    with pytest.raises(MyiaSyntaxError) as info:
        myia(fn)(*args)
    message = str(info.value)
    assert why in message and "test_everyday43.py" in message and ".append(a)" in message
    assert isinstance(info.value, MyiaError)


def test_stack_of_a_list_of_mismatched_shapes_is_numpys_error():
    def mixed(x):
        out = [x]
        out.append(x[:2])
        return np.stack(out)

    with pytest.raises(ValueError, match="same shape"):
        myia(mixed)(X)


# math.isclose, math.factorial, math.gcd, sorted, tuple * n ----------------------------------


def isclose(a, b):
    return (
        math.isclose(a, b),
        math.isclose(a, b, rel_tol=0.5),
        math.isclose(a, b, abs_tol=1e-3),
        math.isclose(a, float("inf")),
    )


def factorial(n):
    return math.factorial(n)


def gcd(a, b):
    return math.gcd(a, b), math.gcd(a, b, 8), math.gcd()


def sort_numbers(a, b, c):
    return sorted((a, b, c)), sorted((a, b, c), reverse=True), sorted((a, b, c), key=abs)


def sort_ints(a, b, c, d):
    return sorted((a, b, c, d))


def repeat_tuple(a):
    return (a, 2.0) * 3, 2 * (a,), (a,) * 0


def repeat_list(a, n):
    return [a] * n, n * [a, a]


SCALARS = [
    (isclose, (1.0, 1.0 + 1e-12)),
    (isclose, (1.0, 1.1)),
    (factorial, (5,)),
    (factorial, (0,)),
    (factorial, (20,)),
    (gcd, (12, -18)),
    (gcd, (0, 7)),
    (sort_numbers, (3.0, -1.0, 2.0)),
    (sort_numbers, (1.0, 1.0, -1.0)),
    (sort_ints, (4, 1, 3, 1)),
    (repeat_tuple, (1.5,)),
    (repeat_list, (1.5, 3)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "fn, args", SCALARS, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(SCALARS)]
)
def test_everyday_builtins(backend, fn, args):
    got, expected = myia(fn, backend=backend)(*args), fn(*args)
    assert got == expected
    assert type(got) is type(expected)


def sorted_weights(a, b, c):
    s = sorted((a, b, c))
    return s[0] * 1.0 + s[1] * 2.0 + s[2] * 3.0


def repeat_weights(a):
    t = (a, a * a) * 2
    return t[0] + t[1] * t[2] + t[3]


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_through_sorted_and_tuple_repeat(backend):
    check_grad(sorted_weights, 3.0, 1.0, 2.0, backend=backend)
    check_grad(repeat_weights, 0.7, backend=backend)


def factorial_negative(n):
    return math.factorial(n)


def repeat_run_time(a, n):
    return (a,) * n


def test_everyday_errors():
    with pytest.raises(ValueError, match="not defined for negative"):
        myia(factorial_negative)(-1)
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        myia(factorial)(2.0)
    with pytest.raises(MyiaTypeError) as info:
        myia(repeat_run_time)(1.0, 3)
    assert "known at compile time" in str(info.value)
    assert "return (a,) * n" in str(info.value)


def append_beside_a_closure_of_its_own(x):
    def scaled(v):
        out = v * 2.0  # (its own variable out, not the list)
        return out

    out = [x]
    for i in range(2):
        out.append(scaled(out[i]))
    return np.sum(np.stack(out))


def test_append_beside_a_nested_function_with_a_local_of_that_name():
    x = np.ones(2)
    np.testing.assert_allclose(
        myia(append_beside_a_closure_of_its_own)(x), append_beside_a_closure_of_its_own(x)
    )

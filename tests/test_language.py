"""The language of API.md run through `@myia` and compared with plain Python.

Functions: nested ``def``, ``lambda``, closures, higher-order functions, recursion; branches;
operators. Assignment, arguments, unpacking and calls are in ``test_language_names.py``,
loops in ``test_loops.py``, data structures in ``test_data.py``, builtins and libraries in
``test_builtins.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import examples, interpret, numbers, small_ints
from hypothesis import given
from hypothesis import strategies as st

from myia import MyiaTypeError, myia

# Functions ------------------------------------------------------------------------------------


def nested_def(x, y):
    def add(a, b):
        return a + b

    def twice(a):
        return add(a, a)

    return twice(x) + add(x, y)


@examples
@given(numbers, numbers)
def test_nested_def(check, x, y):
    check(nested_def, x, y)


def lambdas(x):
    sq = lambda a: a * a  # noqa: E731
    add = lambda a, b=2: a + b  # noqa: E731
    return sq(x) + add(x) + (lambda: x)() + add(x, b=x)


@examples
@given(numbers)
def test_lambda(check, x):
    check(lambdas, x)


def closure_simple(x):
    y = x * 2

    def f(z):
        return y + z

    return f(1) + f(x)


def closure_nested(x):
    a = x + 1

    def outer(b):
        c = a * b

        def inner(d):
            return a + b + c + d

        return inner(b) + inner(x)

    return outer(2) + outer(x)


def make_adder(n):
    def add(x):
        return x + n

    return add


def make_counter_pair(n):
    return (lambda x: x + n), (lambda x: x * n)


def closures_returned(x, y):
    add = make_adder(y)
    inc, scale = make_counter_pair(x)
    return add(x) + inc(y) + scale(y) + make_adder(x)(make_adder(y)(1))


def closure_returned_nested(x):
    def outer(a):
        def middle(b):
            def inner(c):
                return a * 100 + b * 10 + c

            return inner

        return middle

    return outer(x)(2)(3)


def closure_captures_value_at_definition(x):
    y = x

    def f():
        return y

    a = f()
    y = x + 1  # noqa: F841
    return a


def closure_in_loop(n):
    total = 0
    i = 0
    while i < n:

        def f(a):
            return a + i  # noqa: B023

        total = total + f(1)
        i = i + 1
    return total


def closure_in_branch(x):
    if x > 0:
        k = 2
    else:
        k = 3
    f = lambda a: a * k  # noqa: E731
    return f(x)


@pytest.mark.parametrize(
    "fn",
    [
        closure_simple,
        closure_nested,
        closure_returned_nested,
        closure_captures_value_at_definition,
        closure_in_branch,
    ],
)
@examples
@given(x=numbers)
def test_closures(check, fn, x):
    check(fn, x)


@examples
@given(st.integers(0, 15))
def test_closure_in_loop(check, n):
    check(closure_in_loop, n)


@pytest.mark.parametrize("x, y", [(1, 2), (0.5, -3), (-2.5, 4.0)])
def test_closures_returned(check, x, y):
    check(closures_returned, x, y)


def apply_twice(f, x):
    return f(f(x))


def compose(f, g):
    return lambda x: f(g(x))


def higher_order(x):
    double = lambda a: 2 * a  # noqa: E731
    inc = lambda a: a + 1  # noqa: E731
    fs = (double, inc, make_adder(x))
    h = compose(double, inc)
    return apply_twice(double, x) + apply_twice(inc, x) + fs[2](fs[0](x)) + fs[1](x) + h(x)


def choose_function(x):
    fs = (lambda a: a + 1, lambda a: a - 1)
    f = fs[0] if x > 0 else fs[1]
    return f(x)


@examples
@given(numbers)
def test_higher_order(check, x):
    check(higher_order, x)
    check(choose_function, x)


def call_twice(g, x):
    return g(x) + g(2 * x)


def test_function_passed_from_python():
    # Inside the interpreter, a Python function is a value like any other.
    assert interpret(call_twice, lambda a: a * a, 3) == 45
    assert interpret(call_twice, make_adder(2), 3) == 13
    # Functions are not among the argument types of a compiled function (API.md).
    with pytest.raises(MyiaTypeError, match="function"):
        myia(call_twice)(lambda a: a * a, 3)


# Recursion ------------------------------------------------------------------------------------


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def nested_recursion(n):
    def go(k, acc):
        if k == 0:
            return acc
        return go(k - 1, acc + k)

    return go(n, 0)


def nested_mutual_recursion(n):
    def even(k):
        if k == 0:
            return True
        return odd(k - 1)

    def odd(k):
        if k == 0:
            return False
        return even(k - 1)

    return even(n), odd(n)


def recursion_with_closure(n, step):
    def go(k):
        if k <= 0:
            return 0
        return step + go(k - step)

    return go(n)


def fact_float(n):
    if n <= 1:
        return 1.0
    return n * fact_float(n - 1)


@examples
@given(st.integers(0, 12))
def test_recursion(check, n):
    check(fact, n)
    check(fact_float, n)
    check(fib, n)
    check(is_even, n)
    check(is_odd, n)
    check(nested_recursion, n)
    check(nested_mutual_recursion, n)
    check(recursion_with_closure, n, 2)


# Branches -------------------------------------------------------------------------------------


def if_elif_else(x):
    if x < -5:
        r = -1
    elif x < 0:
        r = 0
    elif x == 0:
        return 100
    else:
        r = 1
    return r * 10


def if_no_else(x):
    y = 0
    if x > 0:
        y = x
    return y


def if_returns_both(x):
    if x > 0:
        return x
    else:
        return -x


def if_unbound_on_one_path(x):
    if x > 0:
        y = 1
    if x > 0:
        return y
    return 0


def nested_ifs(x, y):
    if x > 0:
        if y > 0:
            r = 1
        else:
            r = 2
    else:
        if y > 0:  # noqa: PLR5501
            r = 3
        else:
            r = 4
    return r


def conditional_expression(x, y):
    a = x if x > y else y
    b = 1 if x > 0 else (2 if x == 0 else 3)
    return a + b


def if_on_values(x):
    # truth of ints, floats, tuples, None
    r = 0
    if x:
        r = r + 1
    if (x,):  # noqa: F634
        r = r + 10
    if ():
        r = r + 100
    if None:
        r = r + 1000
    if not x:
        r = r + 10000
    return r


@pytest.mark.parametrize("x", [-1, 0, 2])
def test_variable_unbound_on_one_path(check, x):
    check(if_unbound_on_one_path, x)


@examples
@given(numbers, numbers)
def test_branches(check, x, y):
    check(if_elif_else, x)
    check(if_no_else, x)
    check(if_returns_both, x)
    check(nested_ifs, x, y)
    check(conditional_expression, x, y)
    check(if_on_values, x)


# Operators ------------------------------------------------------------------------------------


def arithmetic(x, y):
    return x + y, x - y, x * y, -x, +x, x * 2 + y**2


def division(x, y):
    return x / y, x // y, x % y


def power(x, y):
    return x**y


def comparisons(x, y):
    return x < y, x <= y, x > y, x >= y, x == y, x != y


def chained(x, y, z):
    return x < y < z, x <= y > z, x == y == z, 0 < x < 10 > y


def logical(x, y):
    return not x, x and y, x or y, x and y or 3, not (x or y), (x or y) and x


def short_circuit_values():
    return 0 or 3, 2 and 0, 0 and 1, 2 or 1, None or 5, () or (1,), 0.0 or 2


def short_circuit_skips(x):
    # the right operand must not be evaluated when the left decides
    return x == 0 or 10 // x > 1, x != 0 and 10 // x > 1


def is_none(x):
    return x is None, x is not None


def membership(x):
    t = (1, 2, 3)
    return x in t, x not in t, x in (), x in (x,)


@examples
@given(numbers, numbers)
def test_arithmetic(check, x, y):
    check(arithmetic, x, y)
    check(comparisons, x, y)
    check(logical, x, y)


@examples
@given(numbers, numbers.filter(lambda v: v != 0))
def test_division(check, x, y):
    check(division, x, y)


def test_division_by_zero_int():
    with pytest.raises(ZeroDivisionError):
        myia(division)(1, 0)


def two_errors_in_a_tuple(x, y):
    t = (1.0 / x, math.sqrt(y))
    return t[1] + t[0]


def two_errors_in_statements(x, y):
    a = 1.0 / x
    return math.sqrt(y) + a


def unused_square_root(x, y):
    math.sqrt(y)  # a statement whose value nobody reads: it still raises
    return x


@pytest.mark.parametrize("fn", [two_errors_in_a_tuple, two_errors_in_statements])
def test_the_first_error_is_raised(check, fn):
    # Optimized or not, the division fails before the square root is taken.
    check(fn, 0.0, -1.0)
    check(fn, 2.0, 4.0)


def test_an_unused_value_still_raises(check):
    check(unused_square_root, 1.0, -1.0)
    check(unused_square_root, 1.0, 4.0)


def shape_of_an_item(x, i):
    return x[i].shape  # only the shape is read: an index out of range still raises


def length_of_a_row(x, i):
    return len(x[i])


def dtype_of_an_item(x, i):
    return x[i].dtype


def unused_tuple_item(t, i):
    z = t[i]  # noqa: F841 (never read: an index out of range still raises)
    return 2


@pytest.mark.parametrize(
    "fn,args",
    [
        (shape_of_an_item, (np.arange(3.0), 5)),
        (shape_of_an_item, (np.arange(3.0), -1)),
        (length_of_a_row, (np.ones((3, 2)), 7)),
        (length_of_a_row, (np.ones((3, 2)), 1)),
        (dtype_of_an_item, (np.arange(3.0), -4)),
        (unused_tuple_item, ((1, 2, 3), 5)),
        (unused_tuple_item, ((1, 2, 3), -3)),
    ],
)
def test_an_index_whose_value_is_not_read_still_raises(check, fn, args):
    check(fn, *args)


@examples
@given(st.floats(0.1, 5.0), st.floats(-3.0, 3.0))
def test_power_float(check, x, y):
    check(power, x, y)


@examples
@given(small_ints, st.integers(0, 8))
def test_power_int(check, x, y):
    check(power, x, y)


@examples
@given(numbers, numbers, numbers)
def test_chained_comparisons(check, x, y, z):
    check(chained, x, y, z)


def shown(x):
    print("shown", x)
    return x


def chained_with_effect(x):
    return 0 < shown(x) < 10


@pytest.mark.parametrize("x", [-1, 3, 20])
def test_chained_comparison_evaluates_middle_once(check, capsys, x):
    check(chained_with_effect, x)
    out = capsys.readouterr().out
    assert out == f"shown {x}\n" * 2  # once for Python, once for Myia


def test_short_circuit_values(check):
    check(short_circuit_values)


@examples
@given(small_ints)
def test_short_circuit_skips(check, x):
    check(short_circuit_skips, x)


@pytest.mark.parametrize("x", [None, 0, 1.5, (1, 2)])
def test_is_none(check, x):
    check(is_none, x)


@pytest.mark.parametrize("x", [0, 1, 2, 3, 4, 2.0, -1])
def test_membership(check, x):
    check(membership, x)


def test_bool_ops_on_mixed(check):
    def f(x, y):
        return (x or y), (x and y)

    check(f, 0, 2.5)
    check(f, 3, 0.0)
    check(f, None, 4)
    check(f, (), (1,))

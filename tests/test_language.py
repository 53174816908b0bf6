"""The language of API.md run through `@myia` and compared with plain Python.

Functions: nested ``def``, ``lambda``, closures, higher-order functions, recursion; branches;
operators; assignment and unpacking. Loops are in ``test_loops.py``, data structures in
``test_data.py``, builtins and libraries in ``test_builtins.py``.
"""

from __future__ import annotations

import math
import traceback

import numpy as np
import pytest
from helpers import examples, interpret, line_of, numbers, small_ints
from hypothesis import given
from hypothesis import strategies as st

from myia import MyiaTypeError, myia
from myia.testing import check_grad

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


# Assignment -----------------------------------------------------------------------------------


def unpacking(x, y):
    a, b = x, y
    (c, d), e = (a + 1, b + 1), a * b
    [f, g] = [c, d]
    b, a = a, b
    h = i = a + b
    return a, b, c, d, e, f, g, h, i


def augmented(x, y):
    s = x
    s += y
    s -= 1
    s *= 2
    p = y
    p **= 2
    t = (x,)
    t += (y,)
    return s, p, t


def augmented_div(x, y):
    a = x
    a /= y
    b = x
    b //= y
    c = x
    c %= y
    return a, b, c


def annotated(x):
    y: int = x + 1
    return y


def rebinding_parameter(x):
    x = x + 1
    x = x * 2
    return x


@examples
@given(numbers, numbers)
def test_assignment(check, x, y):
    check(unpacking, x, y)
    check(augmented, x, y)
    check(annotated, x)
    check(rebinding_parameter, x)


@examples
@given(numbers, numbers.filter(lambda v: v != 0))
def test_augmented_division(check, x, y):
    check(augmented_div, x, y)


# Arguments ------------------------------------------------------------------------------------


def with_defaults(x, y=2, z=3.5):
    return x + y * z


def kwonly(x, *, scale=2, shift):
    return x * scale + shift


def calls_with_keywords(x):
    return (
        with_defaults(x),
        with_defaults(x, 3),
        with_defaults(x, z=1),
        kwonly(x, shift=1),
        kwonly(x, shift=2, scale=x),
    )


def varargs(*xs):
    return len(xs), xs


def calls_varargs(x):
    return varargs(), varargs(x), varargs(x, x + 1, x + 2)


def nested_defaults(x):
    def f(a, b=1.5, *, c=1):
        return a + b + c

    return f(x), f(x, 2), f(1, c=x), f(a=3, b=x, c=5)


def nested_default_from_variable(x):
    def f(a, b=x):
        return a + b

    return f(1), f(1, 2)


@examples
@given(numbers)
def test_arguments(check, x):
    check(calls_with_keywords, x)
    check(calls_varargs, x)
    check(nested_defaults, x)


@pytest.mark.parametrize("x", [1, -2.5])
def test_default_from_variable(check, x):
    check(nested_default_from_variable, x)


def test_keywords_at_the_entry_point(check):
    check(with_defaults, 1.0, z=2.0)
    check(with_defaults, 1.0, y=4)
    check(with_defaults, x=1, y=2, z=3)


def test_keyword_only_at_the_entry_point(check):
    check(kwonly, 1.0, shift=2.0)
    check(kwonly, 1.0, shift=2.0, scale=3)
    check(kwonly, 3, shift=1, scale=2)


def test_wrong_arguments_at_the_entry_point():
    with pytest.raises(TypeError):
        with_defaults()
    from myia import MyiaTypeError

    with pytest.raises(MyiaTypeError):
        myia(with_defaults)()
    with pytest.raises(MyiaTypeError):
        myia(with_defaults)(1, 2, 3, 4)
    with pytest.raises(MyiaTypeError):
        myia(kwonly)(1, 2)


# Starred unpacking in displays and calls ----------------------------------------------------


def spread_displays(t, u, x):
    return (
        (*t, x),
        (x, *t, 1, *u, *t),
        (*t,),
        (*(),),
        [*t, *t],
        [x, *t, x],
        [*t, *[x, x]],
        (*{"a": x, "b": 2},),  # a dict's keys
    )


def three(a, b, c):
    return a * 100 + b * 10 + c


def spread_calls(t, x):
    return three(*t), three(x, *t[1:]), three(*t[:1], x, *t[2:]), varargs(*t, x, *t)


def spread_product(x, t):
    u = (*t, x, *t)
    return three(*u[2:]) + u[0] * u[1] * u[2] + sum([*t, x, x])


@examples
@given(numbers, numbers)
def test_starred_unpacking_in_displays_and_calls(check, x, y):
    # (*a, x), [*a, *b] and f(*args) spread tuples (and the elements of a list into a list)
    # as in Python; displays refused them.
    check(spread_displays, (x, y, 2), (), x)
    check(spread_displays, (x, y, 2.5), ("s", None), y)
    check(spread_calls, (x, y, 3), 2.0)


@pytest.mark.parametrize("backend", ["numpy", "debug", "jax", "native"])
def test_starred_unpacking_on_every_backend_and_its_gradient(backend):
    if backend in ("jax", "native"):
        pytest.importorskip({"jax": "jax", "native": "numba"}[backend])
    for args in ((1.5, (2.0, -3.0)), (-0.5, (0.25, 4.0))):
        assert myia(spread_product, backend=backend)(*args) == spread_product(*args)
    check_grad(spread_product, 1.5, (2.0, -3.0), wrt=(0, 1), backend=backend)


def spread_a_list(xs, x):
    return (*xs, x)  # MARK list


def call_with_a_list(xs):
    return three(*xs)  # MARK call


def spread_an_array(a):
    return (*a,)  # MARK array


def test_starred_unpacking_of_unknown_length_is_a_type_error_at_the_users_line():
    # A list's length is not part of its type (one type whatever its length): the tuple it
    # would spread into has no type at compile time.
    for fn, args, mark, match in [
        (spread_a_list, ([1.0, 2.0], 3.0), "MARK list", "length Myia does not know"),
        (call_with_a_list, ([1.0, 2.0, 3.0],), "MARK call", "length Myia does not know"),
        (spread_an_array, (np.ones(2),), "MARK array", "not a numpy.ndarray"),
    ]:
        fn(*args)  # Python: fine
        with pytest.raises(MyiaTypeError, match=match) as info:
            myia(fn)(*args)
        assert info.value.location.line == line_of(fn, mark)
    assert myia(lambda xs: [*xs, 1.0])([2.0]) == [2.0, 1.0]  # a list display takes it


def starred_targets(t):
    a, *rest = t
    first, *mid, last = t
    *init, z = t
    [p, q, *r] = t
    return a, rest, first, mid, last, init, z, p, q, r


def starred_in_a_sum(x, t):
    first, *mid, last = (x, *t)
    return first * last + sum(mid) * x


def starred_in_loops(ts):
    s = 0
    for a, *rest in ts:
        s = s + a * len(rest)
    return s, [len(r) + h for h, *r in ts]


def starred_of_mixed_types(t):
    a, *rest = t  # MARK mixed
    return rest


@pytest.mark.parametrize("backend", ["numpy", "debug", "jax", "native"])
def test_starred_assignment_targets_are_pythons(backend):
    # ``a, *rest = t`` was a MyiaSyntaxError. As in Python, the starred name is a list (of a
    # tuple's elements, a list's, an array's rows), possibly empty; too few elements raise
    # Python's ValueError.
    if backend in ("jax", "native"):
        pytest.importorskip({"jax": "jax", "native": "numba"}[backend])
    f = myia(starred_targets, backend=backend)
    for t in [
        (1, 2, 3), (1.5, -2.5), (True, False, True, 0), [1, 2, 3, 4, 5], [0.5, 1.5],
        np.arange(6.0).reshape(3, 2), np.arange(4, dtype=np.int8), ((1, 2), (3, 4), (5, 6)),
    ]:  # fmt: skip
        assert repr(f(t)) == repr(starred_targets(t)), t
    for t in [(1,), [2.0]]:
        with pytest.raises(ValueError, match=r"not enough values to unpack \(expected at least 2"):
            f(t)
    ts = ((1, 2, 3), (4, 5, 6))
    assert myia(starred_in_loops, backend=backend)(ts) == starred_in_loops(ts)
    args = (1.5, (2.0, -3.0, 0.5))
    assert myia(starred_in_a_sum, backend=backend)(*args) == starred_in_a_sum(*args)
    check_grad(starred_in_a_sum, *args, wrt=(0, 1), backend=backend)


def test_starred_assignment_of_mixed_types_is_a_type_error_at_the_users_line():
    # The list has one type: a string and a float cannot share one.
    assert starred_of_mixed_types((1, "s", 2.0)) == ["s", 2.0]
    with pytest.raises(MyiaTypeError, match="incompatible types") as info:
        myia(starred_of_mixed_types)((1, "s", 2.0))
    assert info.value.location.line == line_of(starred_of_mixed_types, "MARK mixed")


# Calls to other functions -----------------------------------------------------------------------


def plain_helper(x):
    return x * 3


@myia
def myia_helper(x):
    return x + 7


def calls_other_functions(x):
    return plain_helper(x) + myia_helper(x) + plain_helper(myia_helper(x))


SCALE = 4
OFFSETS = (1, 2, 3)


def reads_module_constants(x):
    return x * SCALE + OFFSETS[1]


@examples
@given(numbers)
def test_calls(check, x):
    check(calls_other_functions, x)
    check(reads_module_constants, x)
    assert myia_helper(x) == x + 7


def test_module_constants_read_at_compile_time():
    global SCALE
    f = myia(lambda x: x * SCALE)
    assert f(2) == 8
    old, SCALE = SCALE, 100
    try:
        assert f(2) == 8
    finally:
        SCALE = old


def test_method_of_myia_function_and_wrapper():
    assert myia_helper.__name__ == "myia_helper"
    assert myia_helper(1) == 8
    assert len(myia_helper.compiled_signatures()) >= 1


def test_myia_of_a_myia_function():
    # `myia(f)` of a function compiled by Myia already compiles what it compiles (it once
    # raised MyiaInternalError: "module, class, method, function ... got MyiaFunction").
    from myia import grad

    again = myia(myia_helper)
    assert again(1) == 8 and again.__name__ == "myia_helper"
    assert myia(backend="debug")(myia_helper)(2) == 9
    dscale = myia(grad(myia(lambda x, y: x * x * y)))
    assert dscale(3.0, 2.0) == 12.0
    assert grad(again)(1.0) == 1.0
    assert grad(dscale)(3.0, 2.0) == 4.0

    @myia
    def uses_them(x):
        return again(x) + dscale(x, 1.0)

    assert uses_them(2.0) == 9.0 + 4.0


def unbound_read(x):
    if x > 0:
        y = 1
    return y  # noqa: F821


def unbound_used(x):
    if x > 0:
        y = 1
    return y + 1  # noqa: F821


@pytest.mark.parametrize("fn", [unbound_read, unbound_used])
def test_unbound_local_in_interpreter(fn):
    # Reading a variable that no path assigned is Python's UnboundLocalError at run time.
    assert interpret(fn, 1) == fn(1)
    with pytest.raises(UnboundLocalError) as expected:
        fn(-1)
    with pytest.raises(UnboundLocalError) as got:
        interpret(fn, -1)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("fn", [unbound_read, unbound_used])
def test_unbound_local_when_compiled(fn):
    # A variable assigned on some paths only is tracked (`myia.frontend.blocks`): its value
    # where a path assigned it, Python's UnboundLocalError at the read where none did.
    assert myia(fn)(1) == fn(1)
    with pytest.raises(UnboundLocalError) as expected:
        fn(-1)
    with pytest.raises(UnboundLocalError) as got:
        myia(fn)(-1)
    assert str(got.value) == str(expected.value)
    text = "".join(traceback.format_exception(got.value))
    assert f'File "{__file__}", line {fn.__code__.co_firstlineno + 3}' in text, text


def last_of(xs, n):
    for i in range(n):
        last = xs[i] * 2.0
    return last


def first_positive(xs, n):
    for i in range(n):
        if xs[i] > 0:
            found = xs[i]
            break
    return found * found


def previous_step(x, n):
    for t in range(n):
        if t > 0:
            x = x + 0.5 * prev  # noqa: F821 (the previous iteration's)
        prev = x * x  # noqa: F841
    return x


@pytest.mark.parametrize("fn", [last_of, first_positive, previous_step])
@pytest.mark.parametrize("backend", ["numpy", "debug", "jax"])
def test_variables_assigned_in_a_loop(fn, backend):
    """A loop's last value read after it, or a value of the previous iteration."""
    xs = np.array([-1.0, 2.0, 3.0])
    cases = [(xs, 3), (xs, 0), (xs, 1)] if fn is not previous_step else [(0.3, 3), (0.3, 0)]
    f = myia(fn, backend=backend)
    for args in cases:
        try:
            expected = fn(*args)
        except UnboundLocalError as exc:
            with pytest.raises(UnboundLocalError, match=str(exc)):
                f(*args)
            continue
        assert f(*args) == expected
    if fn is previous_step:
        check_grad(fn, 0.3, 4, wrt=0, order=2)


def wrong_arity(x):
    def f(a, b):
        return a + b

    return f(x)  # MARK arity


def wrong_keyword(x):
    return with_defaults(x, w=2)  # MARK keyword


@pytest.mark.parametrize("run", [interpret, lambda f, *a: myia(f)(*a)])
@pytest.mark.parametrize(
    "fn, marker", [(wrong_arity, "MARK arity"), (wrong_keyword, "MARK keyword")]
)
def test_wrong_call_points_at_the_call(run, fn, marker):
    with pytest.raises(MyiaTypeError) as info:
        run(fn, 1.0)
    assert info.value.location.line == line_of(fn, marker)
    assert "myia/" not in str(info.value).replace(__file__, "")

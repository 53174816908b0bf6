"""Gradients through every construct of the language, checked against central differences.

Each function is differentiated once per signature (the compiled gradient is reused for
several points); the expected gradient is computed from the plain Python function.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from grad_helpers import check_grad_at

from myia import MyiaTypeError, grad, myia, value_and_grad
from myia.testing import check_grad

# Selecting what to differentiate ------------------------------------------------------------


def poly2(x, y):
    return math.sin(x) * y + x**3 - x * y * y


def test_grad_first_argument_by_default():
    g = check_grad_at(poly2, [(1.0, 2.0), (-0.5, 3.0)])
    assert g(1.0, 2.0) == pytest.approx(2 * math.cos(1.0) + 3 - 4)
    assert len(g.compiled_signatures()) == 1


def test_grad_by_name_and_by_position():
    by_name = grad(poly2, "y")(1.0, 2.0)
    by_position = grad(poly2, 1)(1.0, 2.0)
    assert by_name == by_position == pytest.approx(math.sin(1.0) - 4.0)
    assert grad(poly2, "x")(1.0, 2.0) == grad(poly2, 0)(1.0, 2.0) == grad(poly2)(1.0, 2.0)


def test_grad_negative_position():
    assert grad(poly2, -1)(1.0, 2.0) == grad(poly2, "y")(1.0, 2.0)


def test_grad_several_names_gives_a_tuple():
    got = grad(poly2, "x", "y")(1.0, 2.0)
    assert isinstance(got, tuple) and len(got) == 2
    check_grad(poly2, 1.0, 2.0, wrt=("x", "y"))
    assert grad(poly2, 0, 1)(1.0, 2.0) == got
    assert grad(poly2, "y", "x")(1.0, 2.0) == (got[1], got[0])


def test_value_and_grad():
    value, dx = value_and_grad(poly2, "x")(1.0, 2.0)
    assert value == poly2(1.0, 2.0)
    assert dx == grad(poly2, "x")(1.0, 2.0)
    value, (dx, dy) = value_and_grad(poly2, "x", "y")(1.0, 2.0)
    assert value == poly2(1.0, 2.0)
    assert (dx, dy) == grad(poly2, "x", "y")(1.0, 2.0)


def test_grad_of_int_argument_is_zero_int():
    def f(x, n):
        return x * n

    assert grad(f, "x")(2.0, 3) == 3.0
    dn = grad(f, "n")(2.0, 3)
    assert type(dn) is int and dn == 0


def test_grad_of_bool_argument_is_false():
    def f(x, b):
        return x * 2.0 if b else x

    db = grad(f, "b")(2.0, True)
    assert type(db) is bool and db is False


def test_grad_of_a_myia_function():
    @myia
    def f(x, y):
        return x * y + math.exp(x)

    assert grad(f)(1.0, 2.0) == pytest.approx(2.0 + math.e)


def test_grad_of_non_scalar_output_is_a_type_error():
    def pair(x):
        return x, x  # RETURNS-PAIR

    with pytest.raises(MyiaTypeError, match="scalar"):
        grad(pair)(1.0)


def non_scalar(x):
    y = x * 2.0
    return (x, y)  # NON-SCALAR


def grad_inside(x):
    return grad(non_scalar)(x)  # GRAD-CALL


def test_grad_of_non_scalar_output_shows_where():
    # The error once had no file nor line: it shows the function's return (and the call of
    # the gradient in Myia code).
    import inspect
    import os

    def line(fn, marker):
        lines, first = inspect.getsourcelines(fn)
        return first + next(i for i, t in enumerate(lines) if marker in t)

    here = os.path.abspath(__file__)
    for compile_it, sites in [
        (grad(non_scalar), [(non_scalar, "NON-SCALAR")]),
        (myia(grad_inside), [(grad_inside, "GRAD-CALL"), (non_scalar, "NON-SCALAR")]),
    ]:
        with pytest.raises(MyiaTypeError, match="scalar, not \\(f64, f64\\)") as exc:
            compile_it(1.0)
        frames = [f for f in exc.value.frames if f.location is not None]
        assert [(f.location.filename, f.location.line) for f in frames] == [
            (here, line(fn, marker)) for fn, marker in sites
        ]
        assert "return (x, y)  # NON-SCALAR" in str(exc.value)
        assert "returns (f64, f64)" in str(exc.value)


def test_grad_of_array_output_is_a_type_error():
    def vec(x):
        return np.ones(3) * x

    with pytest.raises(MyiaTypeError, match="scalar") as info:
        grad(vec)(1.0)
    assert "f64 x 3" in str(info.value) or "(3,)" in str(info.value)


def test_grad_of_int_output_is_a_type_error():
    def to_int(x):
        return 3

    with pytest.raises(MyiaTypeError, match="scalar"):
        grad(to_int)(1.0)


def test_grad_of_non_scalar_output_inside_myia_is_a_type_error():
    def pair(x):
        return (x, x)

    @myia
    def f(x):
        return grad(pair)(x)

    with pytest.raises(MyiaTypeError, match="scalar"):
        f(1.0)


def test_grad_of_unknown_name_is_a_type_error():
    with pytest.raises(MyiaTypeError, match="z"):
        grad(poly2, "z")(1.0, 2.0)


# Arithmetic and math ------------------------------------------------------------------------


def arith(x, y):
    return (x + y) * (x - y) / (1.0 + x * x) + -x + +y + x**2.5 + 2.0**x + y**3


def math_funcs(x):
    return (
        math.sin(x)
        + math.cos(2 * x)
        + math.tan(0.3 * x)
        + math.exp(x / 3)
        + math.log(x + 3.0)
        + math.sqrt(x + 2.0)
        + math.tanh(x)
        + math.atan(x)
        + math.log1p(x + 1.0)
        + math.expm1(x)
        + math.pow(x + 2.0, 1.5)
        + math.sinh(x)
        + math.cosh(x)
        + math.asin(x / 5)
        + math.acos(x / 5)
        + math.atan2(x, 2.0)
        + math.atan2(1.5, x + 3.0)
        + math.fabs(x) * 2.0
        + math.floor(x) * x
        + math.ceil(x) * x
    )


def builtins_math(x, y):
    return abs(x) * 2.0 + min(x, y) + max(x, y) * 3.0 + float(x) + abs(-y)


def test_grad_arithmetic():
    check_grad_at(arith, [(1.5, 0.7), (0.3, -2.0)], "x", "y")


def test_grad_math_functions():
    check_grad_at(math_funcs, [(0.5,), (-0.7,), (1.3,)])


def test_grad_math_log2_log10():
    def f(x):
        return math.log2(x) + math.log10(x)

    check_grad_at(f, [(1.5,)])


def signs_and_inverse_hyperbolics(x, y):
    return (
        math.copysign(x, y) * 3.0
        + math.copysign(2.0, x) * y  # no derivative in the sign's argument
        + math.asinh(x * y)
        + math.acosh(x * x + 1.5)
        + math.atanh(x / 4)
        + np.sum(np.copysign(np.arcsinh(x), -y) * np.arctanh(np.array([0.25, -0.125]) * y))
    )


def test_grad_copysign_and_inverse_hyperbolics():
    # copysign: slope +1 where the sign bits of x and y agree, -1 where not, 0 in y.
    check_grad_at(signs_and_inverse_hyperbolics, [(1.5, 0.7), (-0.3, 2.0), (-1.2, -0.9)], "x", "y")
    dx = grad(lambda x, y: math.copysign(x, y), "x", "y")
    assert dx(2.0, -0.0) == (-1.0, 0.0) and dx(-2.0, -3.0) == (1.0, 0.0)
    assert dx(-0.0, 1.0) == (-1.0, 0.0)  # one-sided at a zero: the sign bits disagree


def rounded_to_digits(x):
    return round(x, 2) * x + np.round(x, 1) + round(x * 100, -1) * x + np.sum(np.round(x * X, 3))


X = np.array([1.0, -2.0, 3.5])


def test_grad_of_round_to_digits_is_zero():
    # The rounding is constant between its jumps: its derivative is 0, as in NumPy and JAX.
    g = check_grad_at(rounded_to_digits, [(1.2311,), (-0.7071,), (3.14159,)])
    assert g(1.2311) == round(1.2311, 2) + round(123.11, -1)


def digits(x):
    return int(math.log10(x)) + 1, int(np.log10(x)) + 1, int(np.log2(x))


def test_log2_log10_are_exact_at_powers():
    """``log10(1000.0)`` is 3.0, as Python's and NumPy's (``log(x) / log(10)`` is 2.9999...)."""
    f = myia(digits)
    for k in range(-5, 16):
        assert f(10.0**k) == digits(10.0**k), k
        assert f(2.0**k) == digits(2.0**k), k


def test_grad_builtin_abs_min_max_float():
    check_grad_at(builtins_math, [(1.5, 0.7), (-0.3, 2.0), (-2.0, -1.0)], "x", "y")


def test_grad_floor_division_and_modulo_are_piecewise():
    def f(x):
        return (x // 1.0) * x + x % 1.0

    # d/dx (floor(x) x + frac(x)) = floor(x) + 1 between the integers.
    check_grad_at(f, [(2.5,), (-1.25,)])


def test_grad_augmented_assignment():
    def f(x, y):
        s = x
        s += y
        s *= x
        s -= 1.0
        s /= y
        s **= 2
        return s

    check_grad_at(f, [(1.5, 0.7), (0.3, -2.0)], "x", "y")


def test_grad_constant_function_is_zero():
    def f(x):
        return 4.0

    got = grad(f)(3.0)
    assert got == 0.0 and isinstance(got, float)


def test_grad_of_unused_argument_is_zero():
    def f(x, y):
        return y * y

    assert grad(f, "x")(3.0, 2.0) == 0.0


# Branches -----------------------------------------------------------------------------------


def branches(x, y):
    if x > 0:
        r = x * y
    elif x > -1:
        r = math.sin(x) + y * y
    else:
        r = x * x * x
    return r


def branch_early_return(x):
    if x < 0:
        return -x * 3.0
    y = x * x
    if y > 4.0:
        return y * x
    return y + x


def conditional_expression(x, y):
    return x * y if x > y else x + y * y


def and_or_values(x, y):
    # On floats, `and`/`or` return one of their operands (0.0 is false).
    return (x and y) or x * x


def and_or_conditions(x, y):
    if (x > 0.0 and y > 0.0) or x < -1.0:
        return x * y
    if not (x > 0.0 or y > 0.0):
        return x + y
    return x * x * y


def chained_comparison(x, y):
    if 0.0 < x < y:
        return x * y
    return x - y


def test_grad_if_elif_else_every_side():
    check_grad_at(branches, [(1.5, 2.0), (-0.5, 2.0), (-2.0, 2.0)], "x", "y")


def test_grad_early_return_in_branches():
    check_grad_at(branch_early_return, [(-1.0,), (3.0,), (1.0,)])


def test_grad_conditional_expression():
    check_grad_at(conditional_expression, [(2.0, 1.0), (1.0, 2.0)], "x", "y")


def test_grad_and_or_values():
    g = check_grad_at(and_or_values, [(1.5, 2.0), (-1.5, 2.0)], "x", "y")
    # y == 0.0 is false: the result is x * x (differences would straddle the jump).
    assert g(1.5, 0.0) == (3.0, 0.0)


def test_grad_and_or_conditions():
    points = [(1.5, 2.0), (-1.5, 2.0), (-0.5, -2.0), (0.5, -2.0)]
    check_grad_at(and_or_conditions, points, "x", "y")


def test_grad_chained_comparison():
    check_grad_at(chained_comparison, [(1.0, 2.0), (3.0, 2.0)], "x", "y")


def test_grad_branch_on_int_argument():
    def f(x, n):
        if n % 2 == 0:
            return x * x
        return x * x * x

    g = grad(f)
    assert g(3.0, 2) == 6.0
    assert g(3.0, 3) == 27.0


# While loops --------------------------------------------------------------------------------


def newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def while_counter(x, n):
    i = 0
    while i < n:
        x = math.sin(x) + 0.5 * x
        i += 1
    return x


def while_break_continue(x):
    i = 0
    s = 0.0
    while True:
        i += 1
        if i > 6:
            break
        if i % 3 == 0:
            continue
        s = s + x**i / i
    return s


def while_return_inside(x):
    i = 0
    while i < 100:
        x = x * 1.5
        if x > 10.0:
            return x * x
        i += 1
    return -x


def nested_while(x):
    i = 0
    s = 0.0
    while i < 3:
        j = 0
        while j < i + 1:
            s = s + x * i + math.sin(x * j)
            j += 1
        i += 1
    return s


def while_if_inside(x, n):
    s = x
    i = 0
    while i < n:
        if s < 10.0:
            s = s * x
        i += 1
    return s


def test_grad_if_statement_inside_while():
    check_grad_at(while_if_inside, [(1.5, 4), (1.5, 9), (0.5, 3)])


def test_grad_newton_sqrt_value_dependent_trip_count():
    g = check_grad_at(newton_sqrt, [(2.0,), (10.0,), (12345.0,), (0.25,)])
    for a in (2.0, 10.0, 12345.0):
        assert g(a) == pytest.approx(0.5 / math.sqrt(a), rel=1e-10)


def test_grad_while_with_counter():
    check_grad_at(while_counter, [(0.3, 5), (1.2, 0), (-0.7, 12)])


def test_grad_while_break_continue():
    check_grad_at(while_break_continue, [(0.8,), (-1.1,)])


def test_grad_while_return_inside():
    check_grad_at(while_return_inside, [(0.5,), (2.0,), (-1.0,)])


def test_grad_nested_while():
    check_grad_at(nested_while, [(0.5,), (-1.3,)])


# For loops ----------------------------------------------------------------------------------


def for_range(x, n):
    s = 0.0
    for i in range(n):
        s = s + x ** (i + 1) / (i + 1)
    return s


def for_range_step(x):
    s = x
    for i in range(10, 0, -3):
        s = s * x + i
    return s


def for_tuple(x, t):
    s = 0.0
    for v in t:
        s = s + v * x
    return s


def for_list(x, xs):
    s = x
    for v in xs:
        s = s * v + math.sin(s)
    return s


def for_zip(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys):
        s = s + a * b
    return s


def for_enumerate(xs):
    s = 0.0
    for i, v in enumerate(xs):
        s = s + i * v * v
    return s


def for_break_continue_return(x, xs):
    s = 0.0
    for v in xs:
        if v < 0.0:
            continue
        if v > 10.0:
            break
        if v > 4.0:
            return s * x * v
        s = s + v * x * x
    return s + x


def for_if_inside(x, xs):
    best = xs[0]
    for v in xs:
        if v * x > best:
            best = v * x
        else:
            best = best - 0.1 * v
    return best


def for_range_if_inside(x, n):
    s = x
    for i in range(n):
        if i % 2 == 0:
            s = s * x
    return s


def for_array_rows(a, x):
    s = 0.0
    for row in a:
        s = s + np.sum(np.sin(row * x)) * row[0]
    return s


def for_nested(x):
    s = 0.0
    for i in range(3):
        for j in range(i):
            s = s + x * (i + j) + x * x
    return s


def test_grad_for_range():
    check_grad_at(for_range, [(0.5, 4), (1.5, 0), (-2.0, 7)])


def test_grad_for_range_with_step():
    check_grad_at(for_range_step, [(0.5,), (-1.5,)])


def test_grad_for_over_tuple():
    check_grad_at(for_tuple, [(0.5, (1.0, 2.0, 3.0))], "x", "t")


def test_grad_for_over_list():
    check_grad_at(for_list, [(0.5, [1.0, 2.0, -0.5]), (1.5, [0.3])], "x", "xs")


def test_grad_for_over_empty_list():
    assert grad(for_list, "x", "xs")(0.5, []) == (1.0, [])


def test_grad_for_over_zip():
    check_grad_at(for_zip, [([1.0, 2.0, 3.0], [0.5, -1.0, 2.0])], 0, 1)


def test_grad_for_over_enumerate():
    check_grad_at(for_enumerate, [([1.0, 2.0, 3.0],), ([0.5],)])


def test_grad_for_with_break_continue_return():
    points = [
        (1.5, [1.0, -2.0, 3.0]),
        (1.5, [1.0, 11.0, 3.0]),
        (1.5, [1.0, 5.0, 3.0]),
        (1.5, [2.0]),
    ]
    check_grad_at(for_break_continue_return, points, "x", "xs")


def test_grad_if_statement_inside_for_over_list():
    check_grad_at(for_if_inside, [(1.5, [1.0, 3.0, 2.0]), (-0.5, [1.0, 3.0, 2.0])], "x", "xs")


def test_grad_if_statement_inside_for_over_range():
    g = check_grad_at(for_range_if_inside, [(1.5, 4), (1.5, 0), (0.7, 5)])
    assert g(1.5, 4) == 3 * 1.5**2


def test_grad_for_over_array_rows():
    g = check_grad_at(for_array_rows, [(np.arange(6.0).reshape(3, 2) / 5, 0.7)], "a", "x")
    da, dx = g(np.ones((4, 3)), 0.5)
    assert da.shape == (4, 3) and da.dtype == np.float64 and isinstance(dx, float)


def test_grad_nested_for():
    check_grad_at(for_nested, [(0.7,), (-2.0,)])


# Recursion ----------------------------------------------------------------------------------


def fact(x):
    if x <= 1.0:
        return 1.0
    return x * fact(x - 1.0)


def power(x, n):
    if n == 0:
        return 1.0
    if n % 2 == 0:
        h = power(x, n // 2)
        return h * h
    return x * power(x, n - 1)


def is_even(x, n):
    if n == 0:
        return x
    return is_odd(x * 1.5, n - 1)


def is_odd(x, n):
    if n == 0:
        return -x * x
    return is_even(math.sin(x), n - 1)


def test_grad_factorial_on_floats():
    g = check_grad_at(fact, [(4.5,), (3.2,), (0.5,)])
    # fact(x) = x (x - 1) (x - 2) ... down to a value <= 1.
    x = 4.5
    assert g(x) == pytest.approx(fact(x) * (1 / x + 1 / (x - 1) + 1 / (x - 2) + 1 / (x - 3)))


def test_grad_recursive_power():
    g = check_grad_at(power, [(1.1, 0), (1.1, 1), (1.1, 7), (0.9, 12)])
    assert g(1.1, 7) == pytest.approx(7 * 1.1**6)


def test_grad_mutual_recursion():
    check_grad_at(is_even, [(0.7, 0), (0.7, 1), (0.7, 4), (-0.3, 5)])

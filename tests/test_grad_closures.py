"""Gradients through closures, functions as values and `grad` inside Myia code, checked
against central differences (see `test_grad_language`).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from grad_helpers import check_grad_at

from myia import MyiaTypeError, grad, jacrev, myia, value_and_grad


def poly2(x, y):
    return math.sin(x) * y + x**3 - x * y * y


# Closures and higher-order functions --------------------------------------------------------


def closure(x, y):
    def f(z):
        return x * z + y

    return f(y) * f(x)


def nested_closures(x):
    a = x * 2.0

    def f(y):
        b = y * a

        def g(z):
            return z * a * b + x

        return g(b) + g(y)

    return f(x * x)


def recursive_closure(x, n):
    def rec(k):
        if k == 0:
            return x
        return math.sin(rec(k - 1)) * x

    return rec(n)


def closure_in_loop(x):
    s = 0.0
    for i in range(4):

        def f(y):
            return y * x * i + math.sin(y * i)  # noqa: B023 (called at once)

        s = s + f(x * s + 1.0)
    return s


def lambda_closure(x):
    sq = lambda y: y * y * x  # noqa: E731
    return sq(x + 1.0) + (lambda z: z * x)(3.0)


def apply_twice(f, x):
    return f(f(x))


def compose(f, g):
    return lambda x: f(g(x))


def make_scaler(a):
    def scale(v):
        return a * v

    return scale


def my_sin(v):
    return math.sin(v)


def my_exp(v):
    return math.exp(v)


def function_passed(x):
    return apply_twice(my_sin, x) + apply_twice(lambda v: v * x, 2.0)


def function_returned(x):
    h = compose(my_exp, make_scaler(x))
    return h(x) + make_scaler(x * x)(3.0)


def functions_in_tuple(x):
    fs = (my_sin, make_scaler(x), lambda v: v * v)
    s = 0.0
    for f in fs:
        s = s + f(x)
    return s + fs[1](fs[0](x))


def primitive_passed(x):
    return apply_twice(math.sin, x)


def test_grad_closure():
    check_grad_at(closure, [(1.5, 0.5), (-1.0, 2.0)], "x", "y")


def test_grad_nested_closures():
    check_grad_at(nested_closures, [(0.7,), (-1.2,)])


def test_grad_recursive_closure():
    check_grad_at(recursive_closure, [(0.7, 0), (0.7, 3), (1.3, 6)])


def test_grad_closures_made_in_loop():
    check_grad_at(closure_in_loop, [(0.7,), (-1.2,)])


def test_grad_lambda_closure():
    check_grad_at(lambda_closure, [(0.7,), (-1.2,)])


def test_grad_function_passed():
    check_grad_at(function_passed, [(0.7,), (-1.2,)])


def test_grad_function_returned():
    check_grad_at(function_returned, [(0.7,), (-1.2,)])


def test_grad_functions_stored_in_tuple():
    check_grad_at(functions_in_tuple, [(0.7,), (-1.2,)])


def test_grad_primitive_passed_as_function():
    check_grad_at(primitive_passed, [(0.7,)])


# grad inside Myia code ----------------------------------------------------------------------


def cube(x):
    return x * x * x


@myia
def grad_in_myia(x):
    return grad(cube)(x) + value_and_grad(poly2, "y")(x, 2.0)[1]


@myia
def grad_in_loop(x):
    s = 0.0
    for i in range(4):
        s = s + grad(poly2, "x")(x, i * 1.0)
    return s


@myia
def grad_in_recursion(x, n):
    if n == 0:
        return x
    return grad(cube)(grad_in_recursion(x, n - 1) * 0.5)


def test_grad_inside_myia_code():
    x = 0.8
    expected = 3 * x * x + (math.sin(x) - 2 * x * 2.0)
    assert grad_in_myia(x) == pytest.approx(expected)


def test_grad_inside_myia_loop():
    x = 0.8
    expected = sum(math.cos(x) * i + 3 * x * x - i * i for i in range(4))
    assert grad_in_loop(x) == pytest.approx(expected)


def test_grad_inside_myia_recursion():
    def py(x, n):
        return x if n == 0 else 3 * (py(x, n - 1) * 0.5) ** 2

    assert grad_in_recursion(0.8, 3) == pytest.approx(py(0.8, 3))


def test_grad_of_function_using_grad():
    def f(x):
        return grad(cube)(x) * x  # 3 x^3

    check_grad_at(f, [(0.8,), (-1.5,)])
    assert grad(f)(2.0) == pytest.approx(9 * 4.0)


def test_grad_of_closure_differentiated_again_wrt_closed_over_variable():
    def outer(x):
        def inner(y):
            return x * y * y

        return grad(inner)(x)  # 2 x y at y = x: 2 x^2

    g = grad(outer)
    assert g(3.0) == pytest.approx(12.0)
    assert g(-0.5) == pytest.approx(-2.0)


def test_no_perturbation_confusion():
    # Siskind & Pearlmutter: d/dx (x * d/dy (x + y)) = d/dx (x * 1) = 1.
    def outer(x):
        def inner(y):
            return x + y

        return x * grad(inner)(1.0)

    assert grad(outer)(3.0) == 1.0


def test_grad_of_closure_returned_by_a_call():
    def outer(x, a):
        return grad(make_scaler(a))(x) * a  # a^2

    assert grad(outer, "a")(1.0, 3.0) == pytest.approx(6.0)


def _adder(k, a):
    return lambda v: v * k * a


def test_closures_held_in_a_free_tuple_or_dict_are_refused_clearly():
    # Closures in a tuple (or a dict) that a differentiated function reads from outside:
    # an internal error (KeyError) or "tuple indexing expects a tuple, not f64" before; now
    # refused as a closure read alone is, until supported.
    def in_tuple(a, x):
        fs = (_adder(1, a), _adder(2, a))
        return grad(lambda x: fs[0](x) + fs[1](x))(x)

    def in_dict(a, x):
        d = {"f": lambda v: v * a}
        return grad(lambda x: d["f"](x))(x)

    for fn, name in ((in_tuple, "fs"), (in_dict, "d")):
        with pytest.raises(MyiaTypeError, match=f"reads from the variable {name}, made") as info:
            myia(fn)(2.0, 1.5)
        assert "return grad(lambda x:" in str(info.value)  # the user's line

    # Functions that capture nothing are read: np.sin and a lambda over constants.
    def closed(x):
        fs = (np.sin, lambda v: v * 2.0)
        return grad(lambda x: fs[0](x) + fs[1](x))(x)

    assert myia(closed)(0.5) == pytest.approx(math.cos(0.5) + 2.0)


def _sq(y, w=1.0):
    return y * y * w


def _neg(y, w=1.0):
    return -y * w


def _use(z, g):
    return g(z) * z


def test_function_values_read_from_outside_a_gradient_are_refused_at_the_users_line():
    # A closure made outside the function differentiated and passed through a loop, and one
    # of two functions chosen at run time: refused with no user frame before (grad, vjp,
    # jacrev, hessian); jvp and jacfwd called the function on its tangents
    # ("sq() takes 2 positional arguments but 4 were given").
    from myia import hessian, jacfwd, jvp

    def closure_through_loop(x, a):
        g = lambda y: y * a  # noqa: E731
        s = 0.0
        for _ in range(2):
            s = s + grad(lambda z: g(z) * z)(x)
        return s

    def chosen_grad(x, a):
        g = _sq if a > 0 else _neg
        return hessian(lambda z: g(z) * z)(x)

    def chosen_jvp(x, a):
        g = _sq if a > 0 else _neg
        return jvp(lambda z: g(z) * z, (x,), (1.0,))[1]

    def chosen_jacfwd(x, a):
        g = _sq if a > 0 else _neg
        return jacfwd(lambda z: g(z) * z)(x)

    # The closure made outside and passed through the loop is passed to the gradient's call
    # (`myia.grad.threaded`): ``grad(a * z ** 2) = 2 * a * x``, twice.
    assert myia(closure_through_loop)(2.0, 3.0) == pytest.approx(24.0)
    assert myia(closure_through_loop)(2.0, -3.0) == pytest.approx(-24.0)
    cases = [
        (chosen_grad, "return hessian(lambda z: g(z) * z)(x)"),
        (chosen_jvp, "return jvp(lambda z: g(z) * z, (x,), (1.0,))[1]"),
        (chosen_jacfwd, "g = _sq if a > 0 else _neg"),
    ]
    for fn, line in cases:
        with pytest.raises(MyiaTypeError, match="reads from the variable g, made") as info:
            myia(fn)(2.0, 3.0)
        assert line in str(info.value) and __file__ in str(info.value), fn.__name__


def test_partial_or_chosen_function_as_argument_of_a_gradient_is_refused():
    # "tuple indexing expects a tuple, not f64" in _use's body before.
    def chosen(x, a):
        g = _sq if a > 0 else _neg
        return grad(_use)(x, g)

    def partial_arg(x, a):
        return grad(_use)(x, functools.partial(_neg, w=a))

    for fn in (chosen, partial_arg):
        with pytest.raises(MyiaTypeError, match="a partial application or a function chosen"):
            myia(fn)(2.0, 3.0)
    # One function that captures nothing is still a constant of the gradient.
    assert myia(lambda x: grad(_use)(x, _sq))(2.0) == 12.0


def _jacrev_of_closure_in_loop(w, x):
    def loss(q):
        return np.sum((q * x - 1.0) ** 2)

    i = 0
    while i < 3:
        w = w - 0.1 * jacrev(loss)(w)
        i += 1
    return loss(w)


def _jacrev_of_closure_passed_through_a_loop(w, x):
    def loss(q):
        return np.sum((q * x - 1.0) ** 2)

    f = loss  # a variable, passed from block to block
    i = 0
    while i < 3:
        w = w - 0.1 * jacrev(f)(w)
        i += 1
    return f(w)


def test_jacrev_of_a_closure_defined_before_a_loop_runs_in_it():
    # The loop's body reads `loss`, defined once before it, as the function itself.
    args = (np.array([0.5, 1.0]), np.array([1.0, 2.0]))
    assert myia(_jacrev_of_closure_in_loop)(*args) == pytest.approx(
        _jacrev_of_closure_in_loop(*args)
    )


def test_jacrev_of_a_closure_passed_through_a_loop_runs_in_it():
    # jacrev's own closures read the loss, a variable passed from block to block: refused
    # before (with no frame at all, then at the user's line); the loss's values are now passed
    # along the loop (`myia.grad.threaded`).
    fn = _jacrev_of_closure_passed_through_a_loop
    args = (np.array([0.5, 1.0]), np.array([1.0, 2.0]))
    for backend in ("debug", "numpy"):
        assert myia(fn, backend=backend)(*args) == pytest.approx(fn(*args))

"""Regression tests: calls through `*args`, function values, and gradients of them.

Each was a silent wrong value, an internal error, or a refused program."""

from __future__ import annotations

import numpy as np
import pytest

from myia import MyiaTypeError, grad, myia
from myia.testing import check_grad

BACKENDS = ["numpy", "debug"]


def _scaled(a, b=2.0):
    return a * b


def _count(a, *rest):
    return a + len(rest)


def _keyword(a, *, c=3.0):
    return a * c


def star_default(x):
    t = (x,)
    return _scaled(*t)


def star_varargs(x):
    t = (x, 1.0, 2.0)
    return _count(*t)


def star_keyword_only(x):
    t = (x,)
    return _keyword(*t)


def star_lambda(x):
    g = lambda *a: a[0] * len(a)  # noqa: E731
    return g(*(x, x))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [star_default, star_varargs, star_keyword_only, star_lambda])
def test_star_call_binds_parameters(fn, backend):
    # ``f(*t)`` passed the elements of t where f takes ``*args`` as one tuple (a wrong value).
    assert myia(fn, backend=backend)(3.0) == fn(3.0)
    check_grad(fn, 3.0)


def _apply_star(f, xs):
    return f(*xs)


def _sq(u):
    return u * u


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_through_a_function_value_called_with_star(backend):
    assert grad(lambda a: _apply_star(_sq, (a,)), backend=backend)(3.0) == 6.0
    assert myia(lambda x: grad(_apply_star, 1)(_sq, (x,)), backend=backend)(3.0) == (6.0,)
    assert myia(lambda x: grad(_apply_star, 1)(np.sin, (x,)), backend=backend)(0.0) == (1.0,)


def _both(f, a, b):
    return f(a), f(b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_lambda_that_captures_nothing_is_called_with_several_types(backend):
    # It was "called with different argument types; Myia needs one type per function value".
    f = myia(lambda x, v: _both(lambda u: u * 2.0, x, v), backend=backend)
    a, b = f(1.5, np.ones(2))
    assert a == 3.0
    np.testing.assert_array_equal(b, np.full(2, 2.0))


def _args_product(a, *xs):
    return a * xs[0]


def test_grad_by_position_of_a_varargs_function_in_myia_code():
    # The position counted the call's arguments at inference and the parameters (``*xs`` as
    # one tuple) when building the gradient: the gradient had the wrong structure (it was
    # refused then). A position past ``a`` is now an argument ``*xs`` receives, as JAX's.
    assert myia(lambda x: grad(_args_product, 1)(x, 2.0))(3.0) == 3.0
    assert myia(lambda x: grad(_args_product, 0)(x, 2.0))(3.0) == 2.0


def _call(f, x):
    return f(x) * 1.0


def test_a_closure_given_to_a_gradient_is_a_clear_error():
    def g(x, a):
        return grad(_call, 1)(lambda z: z * a, x)

    with pytest.raises(MyiaTypeError, match="closure"):
        myia(g)(2.0, 3.0)
    # Made inside the function differentiated, the closure is fine.
    assert myia(lambda x, a: grad(lambda y: _call(lambda z: z * a, y))(x))(2.0, 3.0) == 3.0


def _cube_sum(z):
    return np.sum(z * z * z)


def _gradient_of_cube(x):
    return grad(_cube_sum)(x)


def _picked(f, x, e):
    return np.sum(f(x) * e)


def test_gradient_through_a_function_value_that_takes_a_gradient():
    # The gradient of _picked differentiated _gradient_of_cube while it was being built.
    x = np.array([1.0, 2.0])
    got = myia(lambda x: grad(_picked, 1)(_gradient_of_cube, x, np.ones(2)))(x)
    np.testing.assert_allclose(got, 6.0 * x)


# Issue 21's bugs ------------------------------------------------------------------------------


def _product(x, a, b):
    return x * a * b


def test_a_gradient_called_with_star_arguments():
    assert myia(lambda x: grad(_product)(x, *(2.0, 3.0)))(1.0) == 6.0


def _column(x, j):
    return np.sum(x[:, j] ** 2)


def test_a_gradient_called_twice_with_the_same_types():
    got = myia(lambda x: grad(_column)(x, 0) + grad(_column)(x, 1))(np.ones((2, 2)))
    np.testing.assert_array_equal(got, np.full((2, 2), 2.0))


def _shape_through_a_loop(x):
    n = x.shape[0]
    s = 0.0
    i = 0
    while i < 3:
        s = s + np.sum(np.zeros(n) + x)  # n is still known at compile time here
        i += 1
    return s + np.sum(np.arange(n))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shape_read_before_a_loop_stays_a_constant(backend):
    assert myia(_shape_through_a_loop, backend=backend)(np.ones(4)) == 18.0
    check_grad(_shape_through_a_loop, np.arange(4.0))


def _grown_list(x):
    xs = []
    for i in range(3):
        xs = xs + [x * i]
    return x * 2.0, xs


def _use_grown_list(x):
    a, xs = _grown_list(x)
    return np.sum(a) + np.sum(xs[1])


def test_gradient_through_a_list_grown_from_empty_and_returned():
    np.testing.assert_array_equal(grad(_use_grown_list)(np.ones(2)), np.full(2, 3.0))

"""Regression tests of gradients that were silently wrong or crashed (issue 22).

Each test writes a program the way a user would, and compares with the exact answer (closed
forms, NumPy) and with finite differences (`myia.testing.check_grad`).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from myia import grad, myia, value_and_grad
from myia.testing import check_grad

BACKENDS = ["numpy", "debug"]


# 1. A value computed and not used contributes nothing to a gradient -------------------------


def unused_log(a):
    v = np.log(a)  # noqa: F841
    return np.sum(a)


def unused_in_tuple(a):
    t = (np.log(a), a)
    return np.sum(t[1] * 2.0)


def unused_unpacked(a):
    v, w = np.log(a), np.sin(a)  # noqa: F841
    return np.sum(w)


def unused_chain(a):
    v = np.log(a)
    w = v * 2.0  # noqa: F841
    return np.sum(a * a)


def returns_pair(a):
    return np.log(a), a * 3.0


def unused_across_call(a):
    return np.sum(returns_pair(a)[1])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "fn, expected",
    [
        (unused_log, [1.0, 1.0]),
        (unused_in_tuple, [2.0, 2.0]),
        (unused_unpacked, [1.0, math.cos(1.0)]),
        (unused_chain, [0.0, 2.0]),
        (unused_across_call, [3.0, 3.0]),
    ],
)
def test_unused_values_give_no_nan(fn, expected, backend):
    a = np.array([0.0, 1.0])
    with np.errstate(divide="ignore"):
        got = grad(fn, backend=backend)(a)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    check_grad(fn, np.array([0.5, 1.5]))


def unused_sqrt(x):
    s = math.sqrt(x)  # noqa: F841
    return x * 3.0


def unused_dict_entry(x):
    d = {"a": math.sqrt(x), "b": x}
    return d["b"] * 2.0


def unused_in_loop(x):
    for _ in range(3):
        v = math.sqrt(x)  # noqa: F841
        x = x * 2.0
    return x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "fn, expected", [(unused_sqrt, 3.0), (unused_dict_entry, 2.0), (unused_in_loop, 8.0)]
)
def test_unused_scalar_values_do_not_raise(fn, expected, backend):
    assert grad(fn, backend=backend)(0.0) == expected
    check_grad(fn, 0.7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unused_values_at_second_order(backend):
    a = np.array([0.0, 1.0])

    def first(x):
        return grad(unused_chain)(x * a)[1]

    assert grad(first, backend=backend)(1.0) == 2.0  # d/dx 2 * (x * 1)
    assert grad(grad(unused_sqrt), backend=backend)(0.0) == 0.0
    check_grad(unused_sqrt, 0.7, order=2)
    check_grad(unused_chain, np.array([0.5, 1.5]), order=2)


# 2. np.prod with zeros ----------------------------------------------------------------------


def prod_others(a, axis=None):
    """The product of the other elements, computed without division."""
    a = np.asarray(a, dtype=np.float64)
    out = np.empty_like(a)
    for idx in np.ndindex(a.shape):
        b = a.copy()
        b[idx] = 1.0
        if axis is None:
            out[idx] = np.prod(b)
        else:
            sl = list(idx)
            sl[axis] = slice(None)
            out[idx] = np.prod(b[tuple(sl)])
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("a", [[2.0, 0.0, 3.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.5, 2.0, 3.0]])
def test_prod_gradient_with_zeros(a, backend):
    a = np.array(a)
    got = grad(lambda x: np.prod(x), backend=backend)(a)
    np.testing.assert_allclose(got, prod_others(a), rtol=1e-12)
    check_grad(lambda x: np.prod(x), a)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_prod_gradient_with_zeros_on_an_axis(axis, keepdims):
    b = np.array([[1.0, 0.0, 2.0], [3.0, 4.0, 0.0], [0.0, 5.0, 0.0]])

    def f(x):
        return np.sum(np.sin(np.prod(x, axis=axis, keepdims=keepdims)))

    p = np.prod(b, axis=axis, keepdims=True)
    expected = np.cos(p) * prod_others(b, axis % 2)
    np.testing.assert_allclose(grad(f)(b), expected, rtol=1e-12)
    check_grad(f, b)


def test_prod_gradient_over_several_axes():
    b = np.arange(24.0).reshape(2, 3, 4) / 10.0  # one zero

    def f(x):
        return np.sum(np.prod(x, axis=(0, 2)) * np.arange(1.0, 4.0))

    got = grad(f)(b)
    assert got[0, 0, 0] != 0.0 and np.all(np.isfinite(got))
    check_grad(f, b)
    check_grad(f, b + 0.5)


def test_prod_second_order_with_zeros():
    a = np.array([2.0, 0.0, 3.0])
    # d/da_k (prod of the others of a_0) = prod of a except a_0 and a_k.
    assert list(grad(lambda x: grad(lambda y: np.prod(y))(x)[0])(a)) == [0.0, 3.0, 0.0]
    # f = prod(a^2): d/da_1 sum_i d f/d a_i at a_1 = 0 is 2 * 4 * 9.
    got = grad(lambda x: np.sum(grad(lambda y: np.prod(y * y))(x)))(a)
    np.testing.assert_allclose(got, [0.0, 72.0, 0.0])
    check_grad(lambda x: np.prod(x), np.array([2.0, 0.0, 3.0, 0.5]), order=2)
    check_grad(lambda x: np.sum(np.prod(x, axis=1)), np.array([[1.0, 0.0], [2.0, 3.0]]), order=2)


# 3. The forward pass of a gradient raises what the function raises ---------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_raises_the_errors_of_the_primal(backend):
    with pytest.raises(ValueError, match="math domain error"):
        grad(lambda x: math.log(x), backend=backend)(-1.0)
    with pytest.raises(ValueError, match="math domain error"):
        grad(lambda x: math.sqrt(x) * 0.0 + x, backend=backend)(-1.0)
    with pytest.raises(ZeroDivisionError):
        grad(lambda x, y: x / y + x, "x", backend=backend)(1.0, 0.0)

    def uses_later(x):
        y = math.log(x) * 2.0
        return x * 3.0 + y * 0.0

    with pytest.raises(ValueError):
        grad(uses_later, backend=backend)(-2.0)
    # The gradient's values are those of the function where it does not raise.
    assert grad(lambda x: math.log(x), backend=backend)(2.0) == 0.5
    assert value_and_grad(lambda x: math.log(x), backend=backend)(1.0) == (0.0, 1.0)


def test_grad_raises_inside_myia_code():
    @myia
    def outer(x):
        return grad(lambda y: math.log(y))(x)

    with pytest.raises(ValueError):
        outer(-1.0)
    assert outer(4.0) == 0.25


# 4. Derivatives of x ** n at 0, at every order ------------------------------------------------


def poly(x):
    return 3 * x**4 - 2 * x**3 + x**2


@pytest.mark.slow  # orders 4 and 5 take minutes to compile (high-order compile time)
@pytest.mark.parametrize("backend", BACKENDS)
def test_polynomial_derivatives_at_zero_are_exact(backend):
    # 3x^4 - 2x^3 + x^2: derivatives at 0 are 0, 2, -12, 72, then 0.
    g = poly
    for expected in [0.0, 2.0, -12.0, 72.0, 0.0]:
        g = grad(g, backend=backend)
        assert g(0.0) == expected
    check_grad(poly, 0.3, order=3)


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_integer_power_at_zero(n):
    def f(x):
        return x**n

    g = f
    for k in range(1, 5):
        g = grad(g)
        expected = math.factorial(n) if k == n else 0.0
        assert g(0.0) == expected, (n, k)
    check_grad(f, 0.7, order=3)


def test_integer_power_of_arrays_at_zero():
    def f(x):
        return np.sum(x**3)

    a = np.array([0.0, 1.0, -2.0])
    np.testing.assert_allclose(grad(f)(a), 3 * a**2)
    np.testing.assert_allclose(grad(lambda x: np.sum(grad(f)(x)))(a), 6 * a)
    assert grad(grad(grad(f)))(0.0) == 6.0
    check_grad(f, a, order=2)


def test_fractional_power_at_zero_follows_ieee():
    # As NumPy and JAX: the slope of sqrt at 0 is inf (Python's 0.0 ** -0.5 raises).
    assert grad(lambda x: x**0.5)(0.0) == math.inf
    assert grad(grad(lambda x: x**0.5))(0.0) == -math.inf
    assert grad(lambda x: x**1.5)(0.0) == 0.0
    assert grad(grad(lambda x: x**1.5))(0.0) == math.inf
    check_grad(lambda x: x**1.5, 0.8, order=2)


def test_exponent_gradient():
    # d x ** y / d y = x ** y log x, and 0 at x = 0.
    assert grad(lambda x, y: x**y, 1)(0.0, 2.0) == 0.0
    assert grad(lambda x, y: x**y, 1)(2.0, 0.5) == pytest.approx(2.0**0.5 * math.log(2.0))
    check_grad(lambda x, y: x**y, 1.3, 0.7, order=2)


@pytest.mark.parametrize("backend", [*BACKENDS, "jax"])
def test_exponent_gradient_of_a_negative_base_is_nan(backend):
    # As NumPy and JAX: log(-2) is nan there, not Python's ValueError.
    if backend == "jax":
        pytest.importorskip("jax")
    assert math.isnan(grad(lambda x, y: x**y, 1, backend=backend)(-2.0, 2.0))
    _, (_, dy) = value_and_grad(lambda x, y: x**y, "x", "y", backend=backend)(-2.0, 3.0)
    assert math.isnan(dy)
    dy = grad(lambda x, y: np.sum(x**y), 1, backend=backend)(np.array([-2.0, 3.0]), 2.0)
    assert math.isnan(dy)
    assert grad(lambda x, y: x**y, 0, backend=backend)(-2.0, 2.0) == -4.0


@pytest.mark.parametrize("backend", [*BACKENDS, "jax"])
def test_constant_float_power_of_a_negative_base_in_forward_mode(backend):
    # x ** 3.0 has no log(x) term in its tangent: it was 0 * log(-1), a ValueError on floats
    # and nan on arrays (so was the Hessian, forward over reverse).
    if backend == "jax":
        pytest.importorskip("jax")
    from myia import hessian, jacfwd, jvp

    f = myia(lambda x: x**3.0, backend=backend)
    assert jvp(f, (-1.0,), (1.0,)) == (-1.0, 3.0)
    assert jacfwd(f)(-2.0) == 12.0
    assert hessian(f)(-1.0) == -6.0
    a = np.array([-1.0, 2.0])
    g = myia(lambda x: np.sum(x**3.0), backend=backend)
    np.testing.assert_allclose(hessian(g)(a), np.diag(6 * a))
    # A tangent given for the exponent is used: its log(x) term is nan, as in JAX.
    assert math.isnan(jvp(myia(lambda x, y: x**y, backend=backend), (-1.0, 3.0), (1.0, 0.0))[1])

"""Compile time of higher-order derivatives: a gradient is simplified before it is
differentiated again, so each order costs a few times the previous one, not tenfold.

The values are exact: compared with closed forms, and for ``sin(sin(x) + sin(x))`` with the
Taylor coefficients of the function, computed in plain Python.

Bounds on time are generous (a shared CI machine): about ten times the times measured on
two loaded cores (0.05 s for the fourth derivative of ``x**5 + 2*x``, 0.3 to 0.9 s for order
6 of ``1/x``); before the simplification between orders they took 23 s and over 7 minutes.
"""

from __future__ import annotations

import math
import time

import pytest

import myia.api
from myia import grad, hessian, jvp
from myia.ir.analysis import reachable_graphs, toposort
from myia.testing import check_grad


def poly(x):
    return x**5 + 2.0 * x


def inverse(x):
    return 1.0 / x


def sin_sum(x):
    return math.sin(math.sin(x) + math.sin(x))


def derivative(fn, order):
    g = fn
    for _ in range(order):
        g = grad(g)
    return g


def first_call(fn, x):
    """The value of ``fn(x)`` and the time its first call took (compiling it).

    The CPU time of this thread, where Myia compiles: the other processes of a loaded
    machine and the threads of earlier tests' programs (compiling machine code) take the
    cores meanwhile, not this thread's time.
    """
    t0 = time.thread_time()
    value = fn(x)
    return value, time.thread_time() - t0


def taylor_sin(a):
    """The Taylor coefficients of ``sin(a(x))`` given those of ``a`` (``s' = cos(a) a'``)."""
    n = len(a)
    s = [math.sin(a[0])] + [0.0] * (n - 1)
    c = [math.cos(a[0])] + [0.0] * (n - 1)
    for k in range(1, n):
        s[k] = sum(j * a[j] * c[k - j] for j in range(1, k + 1)) / k
        c[k] = -sum(j * a[j] * s[k - j] for j in range(1, k + 1)) / k
    return s


def sin_sum_derivatives(x, order):
    """``[f(x), f'(x), ..., f^(order)(x)]`` for ``f = sin(sin(x) + sin(x))``."""
    ident = [x, 1.0] + [0.0] * (order - 1)
    inner = [2.0 * v for v in taylor_sin(ident)]
    return [math.factorial(k) * v for k, v in enumerate(taylor_sin(inner))]


POINTS = [0.7, -1.3, 2.5]


@pytest.mark.serial
def test_fourth_derivative_of_a_polynomial_compiles_fast_and_is_exact():
    d4 = derivative(poly, 4)
    value, seconds = first_call(d4, 0.7)
    assert seconds < 2.0
    assert value == pytest.approx(120.0 * 0.7, rel=1e-14)
    for x in POINTS:
        assert d4(x) == pytest.approx(120.0 * x, rel=1e-14)


def test_fifth_and_sixth_derivatives_of_a_polynomial():
    assert derivative(poly, 5)(0.7) == pytest.approx(120.0, rel=1e-14)
    assert derivative(poly, 6)(0.7) == 0.0


@pytest.mark.serial
def test_sixth_derivative_of_the_inverse_compiles_fast_and_is_exact():
    d6 = derivative(inverse, 6)
    value, seconds = first_call(d6, 0.7)
    assert seconds < 8.0
    assert value == pytest.approx(720.0 / 0.7**7, rel=1e-13)
    for x in POINTS:
        assert d6(x) == pytest.approx(720.0 / x**7, rel=1e-13)


def test_every_order_of_the_inverse_is_exact():
    for k in range(1, 6):
        dk = derivative(inverse, k)
        for x in POINTS:
            expected = (-1) ** k * math.factorial(k) / x ** (k + 1)
            assert dk(x) == pytest.approx(expected, rel=1e-13)


@pytest.mark.serial
def test_fifth_derivative_of_sin_of_sums_of_sines_is_exact():
    d5 = derivative(sin_sum, 5)
    value, seconds = first_call(d5, 0.7)
    assert seconds < 8.0
    assert value == pytest.approx(sin_sum_derivatives(0.7, 5)[5], rel=1e-12)
    for x in POINTS:
        expected = sin_sum_derivatives(x, 5)
        for k in (1, 2, 3):
            assert derivative(sin_sum, k)(x) == pytest.approx(expected[k], rel=1e-12, abs=1e-12)


def test_higher_order_of_a_function_of_two_arguments():
    # f = x^3 y^2: d^3/dx^3 = 6 y^2, then d/dy = 12 y.
    def f(x, y):
        return x * x * x * y * y

    d3 = grad(grad(grad(f, "x"), "x"), "x")
    assert d3(0.3, 1.7) == pytest.approx(6 * 1.7**2, rel=1e-14)
    assert grad(d3, "y")(0.3, 1.7) == pytest.approx(12 * 1.7, rel=1e-14)


def test_higher_order_through_an_if_and_a_closure():
    def f(x):
        def scale(y):
            return x * y

        if x > 0:
            return scale(x) * x  # x^3
        return scale(math.exp(x))  # x e^x

    d4 = derivative(f, 4)
    assert d4(0.5) == pytest.approx(0.0, abs=1e-12)
    assert d4(-0.5) == pytest.approx((-0.5 + 4) * math.exp(-0.5), rel=1e-12)
    check_grad(f, 0.4, order=3)
    check_grad(f, -0.4, order=3)


def test_third_derivative_through_an_if():
    # The simplified gradient reads the sensitivity of a free variable with a constant default
    # (0.0): its value is not that constant.
    def f(x):
        if x > 0:
            return x * x * x
        return x * math.exp(x)

    d3 = derivative(f, 3)
    assert d3(0.5) == pytest.approx(6.0, rel=1e-14)
    assert d3(-0.5) == pytest.approx(2.5 * math.exp(-0.5), rel=1e-14)


def test_mixed_second_derivatives_through_tuple_slices():
    # f = x^2 y + y. A sensitivity added into a slice of a constant zero is not that constant.
    def f(x, y):
        t = (x, y * x) + (y,)
        u = t[1:]
        return t[0] * u[0] + u[1]

    x, y = 0.3, 0.7
    assert grad(grad(f, "x"), "y")(x, y) == pytest.approx(2 * x, rel=1e-14)
    assert grad(grad(f, "y"), "x")(x, y) == pytest.approx(2 * x, rel=1e-14)
    assert grad(grad(f, "x"), "x")(x, y) == pytest.approx(2 * y, rel=1e-14)
    check_grad(f, x, y, order=3)


def while_sin(x, n):
    s = x
    i = 0
    while i < n:
        s = math.sin(s) * x
        i += 1
    return s


def test_third_derivative_of_a_while_loop():
    # The loop's gradient is simplified too: its stacks of backpropagators become stacks of
    # numbers first (it took 15 s; now about 2).
    d3 = grad(grad(grad(while_sin, "x"), "x"), "x")
    value, seconds = first_call(lambda x: d3(x, 1), 0.6)
    assert seconds < 12.0
    assert value == pytest.approx(-3 * math.sin(0.6) - 0.6 * math.cos(0.6), rel=1e-13)
    assert d3(0.6, 0) == 0.0


@pytest.mark.slow
def test_third_derivative_of_a_while_loop_against_finite_differences():
    check_grad(while_sin, 0.6, 3, wrt="x", order=3)


def newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def sum_of_roots(x):
    s = 0.0
    c = 1.0
    while c < 3.5:
        s = s + newton_sqrt(1.0 + c * x * x)
        c = c + 1.0
    return s


def test_second_derivatives_of_a_loop_calling_a_while_loop():
    # The outer loop's gradient stacks the inner loop's backpropagators, closures whose
    # types differ between the first iteration (c a constant) and the others: forward over
    # reverse (hessian, jvp of grad) and reverse over reverse agree with the closed form.
    x = 0.7
    d2 = sum(c / (1.0 + c * x * x) ** 1.5 for c in (1.0, 2.0, 3.0))
    assert hessian(sum_of_roots)(x) == pytest.approx(d2, rel=1e-12)
    value, tangent = jvp(grad(sum_of_roots), (x,), (2.0,))
    assert value == pytest.approx(sum(c * x / math.sqrt(1.0 + c * x * x) for c in (1, 2, 3)))
    assert tangent == pytest.approx(2.0 * d2, rel=1e-12)
    assert grad(grad(sum_of_roots))(x) == pytest.approx(d2, rel=1e-12)


def program_sizes(fn, orders, monkeypatch):
    """The number of nodes of the specialized program of each derivative of `fn`."""
    sizes = []
    optimize = myia.api.optimize

    def counting(graph):
        sizes.append(sum(len(toposort(g)) for g in reachable_graphs(graph)))
        return optimize(graph)

    monkeypatch.setattr(myia.api, "optimize", counting)
    for k in orders:
        derivative(fn, k)(0.7)
    return sizes


@pytest.mark.parametrize("fn", [inverse, sin_sum])
def test_each_order_is_a_few_times_the_previous_one(fn, monkeypatch):
    # Before the simplification between orders, the program grew about tenfold per order.
    sizes = program_sizes(fn, range(2, 7), monkeypatch)
    for prev, size in zip(sizes, sizes[1:]):
        assert size <= 3 * prev, sizes


@pytest.mark.slow
def test_eighth_derivative_of_the_inverse_is_exact():
    d8 = derivative(inverse, 8)
    value, seconds = first_call(d8, 0.7)
    assert seconds < 40.0
    assert value == pytest.approx(math.factorial(8) / 0.7**9, rel=1e-12)


def test_derivatives_of_integer_powers_at_zero_are_exact():
    # The derivative with respect to the constant exponent is not computed: no 0.0 ** -1.
    def f(x):
        return 3 * x**4 - 2 * x**3 + x**2

    g, got = f, []
    for _ in range(4):
        g = grad(g)
        got.append(g(0.0))
    assert got == [0.0, 2.0, -12.0, 72.0]


def test_the_j_transform_indexes_each_graph_it_transforms_once(monkeypatch):
    # The loop analysis and the transform of a graph share one `Scopes` of what it reaches
    # (each built its own: two walks of the program below each graph differentiated).
    import importlib

    from myia.ir.analysis import Scopes

    roots = []

    class Counting(Scopes):
        def __init__(self, root=()):
            roots.append(root)
            super().__init__(root)

    for name in ("myia.grad.jtransform", "myia.grad.loops"):
        monkeypatch.setattr(importlib.import_module(name), "Scopes", Counting)

    def square(x):
        return x * x

    def f(x):
        return square(x) + square(2.0 * x) * x

    assert grad(grad(f))(0.5) == pytest.approx(2.0 + 24.0 * 0.5)  # f = x**2 + 4 x**3
    assert roots and len(roots) == len(set(roots))

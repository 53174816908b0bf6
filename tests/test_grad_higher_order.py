"""Higher-order gradients (exact against closed forms, and through control flow), and
gradients of long loops and deep recursion."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Optional

import pytest
from grad_helpers import check_grad_at, interpreted_grad

from myia import grad, myia, value_and_grad
from myia.grad import loops
from myia.testing import check_grad

# Closed forms ---------------------------------------------------------------------------------


def poly(x):
    return 3.0 * x**5 - 2.0 * x**3 + x * x - 7.0 * x + 1.5


def poly_mul(x):
    # The same polynomial without `**`: products only.
    x2 = x * x
    return 3.0 * x2 * x2 * x - 2.0 * x2 * x + x2 - 7.0 * x + 1.5


POLY_DERIVATIVES = [
    lambda x: 15.0 * x**4 - 6.0 * x**2 + 2.0 * x - 7.0,
    lambda x: 60.0 * x**3 - 12.0 * x + 2.0,
    lambda x: 180.0 * x**2 - 12.0,
    lambda x: 360.0 * x,
]


def sin_(x):
    return math.sin(x)


def exp_(x):
    return math.exp(2.0 * x)


def derivatives(fn, order):
    """``[grad(fn), grad(grad(fn)), ...]`` up to `order`, each built from the previous."""
    out = []
    g = fn
    for _ in range(order):
        g = grad(g)
        out.append(g)
    return out


POINTS = [-1.3, 0.4, 2.1]


# Each order differentiates the previous one simplified: fourth order compiles in a fraction of
# a second (tests/test_hiorder.py times it); the fourth-order tests stay in the slow set.


def test_polynomial_derivatives_to_third_order_are_exact():
    for d, closed in zip(derivatives(poly_mul, 3), POLY_DERIVATIVES):
        for x in POINTS:
            assert d(x) == pytest.approx(closed(x), rel=1e-12, abs=1e-12)


def test_power_operator_derivatives_to_second_order_are_exact():
    for d, closed in zip(derivatives(poly, 2), POLY_DERIVATIVES):
        for x in POINTS:
            assert d(x) == pytest.approx(closed(x), rel=1e-12, abs=1e-12)


SIN_DERIVATIVES = [math.cos, lambda x: -math.sin(x), lambda x: -math.cos(x), math.sin]


def test_sin_derivatives_to_third_order_are_exact():
    for d, closed in zip(derivatives(sin_, 3), SIN_DERIVATIVES):
        for x in POINTS:
            assert d(x) == pytest.approx(closed(x), rel=1e-14, abs=1e-15)


def test_exp_derivatives_to_third_order_are_exact():
    for k, d in enumerate(derivatives(exp_, 3), start=1):
        for x in POINTS:
            assert d(x) == pytest.approx(2.0**k * math.exp(2.0 * x), rel=1e-14)


@pytest.mark.slow
@pytest.mark.parametrize("fn", [poly, poly_mul])
def test_polynomial_fourth_derivative_is_exact(fn):
    d4 = derivatives(fn, 4)[-1]
    for x in POINTS:
        assert d4(x) == pytest.approx(360.0 * x, rel=1e-12)


@pytest.mark.slow
def test_sin_fourth_derivative_is_exact():
    d4 = derivatives(sin_, 4)[-1]
    for x in POINTS:
        assert d4(x) == pytest.approx(math.sin(x), rel=1e-14, abs=1e-15)


@pytest.mark.slow
def test_exp_fourth_derivative_is_exact():
    d4 = derivatives(exp_, 4)[-1]
    for x in POINTS:
        assert d4(x) == pytest.approx(16.0 * math.exp(2.0 * x), rel=1e-14)


def test_third_derivative_through_a_closure():
    def f(x):
        def inner(y):
            return x * y

        return inner(x) * x  # x^3

    assert derivatives(f, 3)[-1](0.5) == pytest.approx(6.0)


def test_mixed_second_derivatives():
    def f(x, y):
        return math.sin(x * y) + x * x * y

    def dfdx(x, y):
        return grad(f, "x")(x, y)

    x, y = 0.7, -1.3
    # d2f/dydx = cos(xy) - xy sin(xy) + 2x
    expected = math.cos(x * y) - x * y * math.sin(x * y) + 2 * x
    assert grad(dfdx, "y")(x, y) == pytest.approx(expected, rel=1e-12)
    dxx, dxy = grad(dfdx, "x", "y")(x, y)
    assert dxx == pytest.approx(-(y**2) * math.sin(x * y) + 2 * y, rel=1e-12)
    assert dxy == pytest.approx(expected, rel=1e-12)


def test_value_and_grad_of_gradient():
    value, second = value_and_grad(grad(sin_))(0.5)
    assert value == pytest.approx(math.cos(0.5), rel=1e-14)
    assert second == pytest.approx(-math.sin(0.5), rel=1e-14)


def d1_sin(x):
    return grad(sin_)(x)


def d2_sin(x):
    return grad(d1_sin)(x)


def test_grad_of_grad_inside_myia_code():
    @myia
    def third(x):
        return grad(d2_sin)(x)

    assert third(0.5) == pytest.approx(-math.cos(0.5), rel=1e-14)


def test_grad_of_grad_value_inside_myia_code():
    @myia
    def second(x):
        return grad(grad(sin_))(x)

    @myia
    def third(x):
        return value_and_grad(grad(grad(sin_)))(x)

    assert second(0.5) == pytest.approx(-math.sin(0.5), rel=1e-14)
    value, d3 = third(0.5)
    assert value == pytest.approx(-math.sin(0.5), rel=1e-14)
    assert d3 == pytest.approx(-math.cos(0.5), rel=1e-14)


# Second order through control flow ------------------------------------------------------------


def branchy(x):
    if x > 1.0:
        return x**4
    elif x > 0.0:
        return math.sin(x) * x
    return math.exp(x)


def newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def loop_poly(x, n):
    s = 1.0
    i = 0
    while i < n:
        s = s * x
        i += 1
    return s


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


@dataclass
class Tree:
    value: float
    left: Optional["Tree"] = None  # noqa: UP007, UP037, UP045
    right: Optional["Tree"] = None  # noqa: UP007, UP037, UP045


def tree_fold(t, x):
    s = math.sin(t.value * x)
    if t.left is not None:
        s = s + tree_fold(t.left, x)
    if t.right is not None:
        s = s + tree_fold(t.right, x)
    return s


def tree_values(t):
    out = [t.value]
    if t.left is not None:
        out = out + tree_values(t.left)
    if t.right is not None:
        out = out + tree_values(t.right)
    return out


d2_branchy = grad(grad(branchy))
d2_sqrt = grad(grad(newton_sqrt))
d2_loop_poly = grad(grad(loop_poly))
d2_power = grad(grad(power))
d2_tree_fold = grad(grad(tree_fold, "x"), "x")


def test_second_derivative_through_if():
    assert d2_branchy(1.5) == pytest.approx(12 * 1.5**2, rel=1e-12)
    x = 0.5
    assert d2_branchy(x) == pytest.approx(2 * math.cos(x) - x * math.sin(x), rel=1e-12)
    assert d2_branchy(-0.5) == pytest.approx(math.exp(-0.5), rel=1e-12)


def test_second_derivative_through_while():
    for n in (0, 1, 2, 5):
        expected = n * (n - 1) * 1.3 ** (n - 2) if n >= 2 else 0.0
        assert d2_loop_poly(1.3, n) == pytest.approx(expected, rel=1e-12)


def test_second_derivative_through_value_dependent_loop():
    # sqrt(a)'' = -1/4 a^(-3/2); the converged iteration differentiates to it.
    for a in (2.0, 10.0):
        assert d2_sqrt(a) == pytest.approx(-0.25 * a**-1.5, rel=1e-8)


def test_second_derivative_through_recursion():
    for n in (0, 1, 2, 6):
        expected = n * (n - 1) * 0.9 ** (n - 2) if n >= 2 else 0.0
        assert d2_power(0.9, n) == pytest.approx(expected, rel=1e-12)


def test_second_derivative_through_tree_fold():
    trees = [
        Tree(0.5),
        Tree(1.5, Tree(-0.5, None, Tree(2.0)), Tree(0.3)),
    ]
    x = 0.8
    for t in trees:
        expected = sum(-(v**2) * math.sin(v * x) for v in tree_values(t))
        assert d2_tree_fold(t, x) == pytest.approx(expected, rel=1e-12)
        check_grad(tree_fold, t, x, wrt="x", order=2)
    assert len(d2_tree_fold.compiled_signatures()) == 1


@pytest.mark.parametrize("backend", ["debug", "numpy"])
def test_second_derivative_through_tree_fold_wrt_tree(backend):
    # The tree's sensitivity rebuilt from its fields had the type ``Tree | Tree | None`` in
    # its children (unfolded), not the tree's own: the second order failed to type.
    t = Tree(1.5, Tree(-0.5, None, Tree(2.0)), Tree(0.3))
    check_grad(tree_fold, t, 0.8, order=2, backend=backend)
    check_grad(tree_fold, Tree(0.5), 0.8, wrt="t", order=2, backend=backend)


def test_third_derivative_through_tree_fold():
    check_grad(tree_fold, Tree(1.5, Tree(-0.5, None, Tree(2.0)), Tree(0.3)), 0.8, wrt="x", order=3)


def loop_and_branch(x):
    s = 0.0
    for i in range(4):
        if i % 2 == 0:
            s = s + x ** (i + 1)
        else:
            s = s - math.sin(x * i)
    return s


def test_second_derivative_through_for_loop_and_branch():
    # f = x + x^3 - sin(x) - sin(3x); f'' = 6x + sin(x) + 9 sin(3x)
    x = 0.6
    d2 = grad(grad(loop_and_branch))
    assert d2(x) == pytest.approx(6 * x + math.sin(x) + 9 * math.sin(3 * x), rel=1e-12)


def cube_by_loop(x):
    s = x
    for _ in range(2):
        s = s * x
    return s


@pytest.mark.slow
def test_third_derivative_through_for_loop():
    assert derivatives(cube_by_loop, 3)[-1](0.6) == pytest.approx(6.0)


# Loops and recursion at scale -----------------------------------------------------------------


def long_loop(x, n):
    i = 0
    s = 0.0
    while i < n:
        s = s + x * x * 1e-6
        i += 1
    return s


def deep_sum(x, n):
    if n == 0:
        return x
    return x * 1e-4 + deep_sum(x, n - 1)


def test_grad_of_million_iteration_while_loop():
    # On generated code: a forward and a backward Python `while` loop (about 10 s on 2 cores).
    g = grad(long_loop)
    g(1.5, 10)  # compile
    start = time.perf_counter()
    got = g(1.5, 10**6)
    elapsed = time.perf_counter() - start
    assert got == pytest.approx(2 * 1.5, rel=1e-9)
    print(f"grad of a 10^6-iteration while loop: {elapsed:.1f} s")


def test_grad_of_long_while_loop():
    assert grad(long_loop)(1.5, 2000) == pytest.approx(2 * 1.5 * 2e-3, rel=1e-9)


def test_grad_of_recursion_ten_thousand_deep():
    n = 10**4
    assert grad(deep_sum)(0.5, n) == pytest.approx(1.0 + n * 1e-4, rel=1e-12)


def test_second_order_grad_of_deep_recursion():
    def f(x, n):
        return deep_sum(x, n) * x

    n = 200
    # f = x^2 (1 + n 1e-4): f'' = 2 (1 + n 1e-4)
    assert grad(grad(f))(0.5, n) == pytest.approx(2 * (1.0 + n * 1e-4), rel=1e-12)


# The gradient of a loop is a loop ---------------------------------------------------------------
# The forward pass pushes each iteration's backpropagator on a stack and the backward pass pops
# them in a loop (myia.grad.loops): the interpreter keeps as many frames for 3000 iterations as
# for 30 (a backward pass that recursed would keep two or more per iteration).


def test_backward_pass_of_a_loop_is_a_loop():
    run = interpreted_grad(long_loop, 1.5, 10)
    depths = []
    for n in (30, 3000):
        got, depth = run(1.5, n)
        assert got == pytest.approx(2 * 1.5 * n * 1e-6, rel=1e-9)
        depths.append(depth)
    assert depths[0] == depths[1] < 20


def test_plain_j_transform_of_a_loop_recurses(monkeypatch):
    # What the loop transform avoids: each iteration's backpropagator calls the next one's.
    monkeypatch.setattr(loops, "ENABLED", False)
    run = interpreted_grad(long_loop, 1.5, 10)
    got, depth = run(1.5, 300)
    assert got == pytest.approx(2 * 1.5 * 300 * 1e-6, rel=1e-9)
    assert depth > 300


def nested_loops(x, n):
    s = 0.0
    i = 0
    while i < n:
        j = 0
        while j < i:
            s = s + x * j
            j += 1
        i += 1
    return s


def loop_with_break(x, n):
    i = 0
    while True:
        x = x * 1.01 + 0.1
        i += 1
        if i >= n:
            break
    return x


def loop_with_return(x, n):
    i = 0
    while i < 100000:
        x = x * math.sin(x) + 1.0
        if i >= n:
            return x * 2.0
        i += 1
    return x


def loop_in_closure(x, n):
    def inner(y):
        i = 0
        while i < n:
            y = y * x + 0.1  # x: a free variable of the loop
            i += 1
        return y

    return inner(x) + x


def for_over_list(x, n):
    xs = []
    for i in range(n):
        xs = xs + [x * i]
    s = 0.0
    for v in xs:
        s = s + v * v
    return s


def tail_recursion(x, n):
    if n == 0:
        return x
    return tail_recursion(x * 1.01 + math.cos(x), n - 1)


def loop_on_tuple_state(x, n):
    t = (x, 1.0)
    i = 0
    while i < n:
        t = (t[0] * t[1], t[1] + x * 0.1)
        i += 1
    return t[0]


@pytest.mark.parametrize(
    "fn",
    [
        nested_loops,
        loop_with_break,
        loop_with_return,
        loop_in_closure,
        for_over_list,
        tail_recursion,
        loop_on_tuple_state,
    ],
)
def test_gradients_of_loops_are_loops(fn):
    check_grad_at(fn, [(0.7, 1), (0.7, 2), (-0.4, 5)])
    run = interpreted_grad(fn, 0.7, 3)
    assert run(0.7, 5)[1] == run(0.7, 40)[1]


def loop_in_recursion(x, n, m):
    i = 0
    y = x
    while i < m:
        y = y * 0.999 + x * 0.001
        i += 1
    if n == 0:
        return y
    return y * loop_in_recursion(x * 0.5, n - 1, m)


def test_gradient_of_a_loop_in_a_recursive_function_is_a_loop():
    # The recursion keeps the plain transform (its backward pass recurses as deep as the
    # function did); the loop's backward pass is a loop.
    check_grad_at(loop_in_recursion, [(0.7, 0, 2), (0.7, 2, 3)])
    run = interpreted_grad(loop_in_recursion, 0.7, 2, 5)
    assert run(0.7, 2, 5)[1] == run(0.7, 2, 500)[1] < run(0.7, 4, 500)[1]


def test_second_order_gradient_of_a_loop_is_a_loop():
    run = interpreted_grad(grad(loop_poly), 1.3, 3)
    depths = []
    for n in (5, 200):
        got, depth = run(1.3, n)
        assert got == pytest.approx(n * (n - 1) * 1.3 ** (n - 2), rel=1e-12)
        depths.append(depth)
    assert depths[0] == depths[1]


@pytest.mark.slow
def test_backward_pass_of_a_hundred_thousand_iterations_is_a_loop():
    run = interpreted_grad(long_loop, 1.5, 10)
    got, depth = run(1.5, 10**5)
    assert got == pytest.approx(2 * 1.5 * 0.1, rel=1e-9)
    assert depth < 20


def nested_break_continue(x, n):
    s = 0.0
    for i in range(n):
        if i == 3:
            continue
        for j in range(n):
            if j > i:
                break
            if (i + j) % 3 == 0:
                continue
            s = s + x * (i - j) + x * x
        if s > 40.0:
            break
    return s


def test_second_order_through_nested_loops_with_break_and_continue(monkeypatch):
    # Each block of a loop pushes on its own stack; a context of the loop per set of stacks
    # pushed on so far (one per set of paths taken through the breaks and continues) made
    # the second order infer 13276 contexts of 622 graphs, in two minutes and more. The
    # stacks of a loop's calls are joined (`Inferrer._widen_stacks`): about 600, seconds.
    from myia.infer.engine import Inferrer

    contexts = []
    infer = Inferrer.infer

    def counted(self, graph, args):
        out = infer(self, graph, args)
        contexts.append(len(self.node_values))
        return out

    monkeypatch.setattr(Inferrer, "infer", counted)
    # Against central differences of the first order, on every path: s passes 40 (x = 2.5,
    # n = 8) or not, loops that do not run (n = 0, 1). Each order is compiled once.
    start = time.perf_counter()
    check_grad(nested_break_continue, 1.3, 0, wrt=0, order=2)
    assert time.perf_counter() - start < 90
    assert max(contexts) < 2000
    for x, n in [(1.3, 1), (1.3, 5), (-0.7, 8), (2.5, 8)]:
        check_grad(nested_break_continue, x, n, wrt=0, order=2)


def while_with_conditional_expression(x, y):
    while y < 3:
        x = x * (1.71 if y >= 1.38 else math.tanh(x))
        y = y + 1
    return x


def test_second_order_through_a_loop_with_a_conditional_expression():
    # The forward loop of the second order pushes on the first order's stack a closure (the
    # gradient of a branch's backpropagator) made in a context whose arguments hold that
    # stack: each iteration's closure had a new type, and the join of the loop's stacks grew
    # without end ("recursed 3000 levels deep"). Its closures of one graph are one option.
    # Central differences of the first order: the branch taken at every step (y = -0.7), or
    # the first steps only (y = 0.9).
    check_grad(while_with_conditional_expression, 0.3, -0.7, wrt=0, order=2)
    check_grad(while_with_conditional_expression, -0.4, 0.9, wrt=0, order=2)


def loop_choosing_y_or_x(x, y):
    for _ in range(1):
        x = y if x < 0 else x
    return x


@pytest.mark.parametrize("backend", ["debug", "numpy"])
def test_third_order_through_a_loop_with_a_conditional_expression(backend):
    # The first order's backward pass gives y, which x's gradient does not need, a zero that
    # compiled code passes as None ("nobody reads it"). Differentiated twice more, that zero
    # is a value whose sensitivity the third order adds up: float + None was a TypeError.
    # The next order's forward pass now builds the zero.
    check_grad(loop_choosing_y_or_x, 0.3, -0.7, wrt=0, order=3, backend=backend)
    check_grad(loop_choosing_y_or_x, -0.4, 2.0, wrt=0, order=3, backend=backend)

"""Regression tests: an ``if`` statement followed by a conditional expression or ``and``/``or``.

The join after the ``if`` is inlined into both of its branches; the conditional expression's
branches, nested in the join, are then shared by two switches. Compiled, such a program raised
an internal ``KeyError`` (and on the interpreter "closure escapes the scope of its free
variables"); about one random program in ten has this shape.
"""

import math

import numpy as np
import pytest

from myia import grad, myia
from myia.testing import check_grad


def if_then_ifexp(x, y):
    if y > 0:
        x = x + 1.0
    return x if x > 0 else 0.5


def if_then_and(x, y):
    if y > 0:
        x = x * 2.0
    return x > 1.0 and y < 3.0


def if_then_or_value(x, y):
    if y > 0:
        x = x - 1.0
    else:
        y = y * x
    return (x > 0 or y > 0) and x * y > -5.0


def elif_then_ifexp(x, y):
    if x > 1.0:
        y = y + x
    elif x < -1.0:
        y = y - x
    z = y * 2.0 if y > 0 else -y
    return z + (x if x > y else y)


def loop_with_ifexp(x, n):
    s = 0.0
    for i in range(n):
        s = s + (x if i % 2 == 0 else x * x)
        if s > 10.0:
            s = s * 0.5
    return s


def while_then_ifexp(x):
    y = x
    while y < 10.0:
        y = y * 2.0 + 1.0
    return y if y < 20.0 else y - x


CASES = [
    (if_then_ifexp, (1.0, 2.0)),
    (if_then_ifexp, (-3.0, -1.0)),
    (if_then_ifexp, (-0.5, 1.0)),
    (if_then_and, (1.0, 2.0)),
    (if_then_and, (0.2, -2.0)),
    (if_then_or_value, (0.5, 1.0)),
    (if_then_or_value, (-2.0, -1.0)),
    (elif_then_ifexp, (2.0, 1.0)),
    (elif_then_ifexp, (-2.0, -3.0)),
    (elif_then_ifexp, (0.0, 0.5)),
    (loop_with_ifexp, (1.5, 7)),
    (while_then_ifexp, (0.7,)),
]


@pytest.mark.parametrize("backend", ["numpy", "debug"])
@pytest.mark.parametrize("fn,args", CASES)
def test_values(fn, args, backend):
    assert myia(fn, backend=backend)(*args) == fn(*args)


@pytest.mark.parametrize(
    "fn,args",
    [
        (if_then_ifexp, (1.0, 2.0)),
        (if_then_ifexp, (-0.5, 1.0)),
        (elif_then_ifexp, (2.0, 1.0)),
        (elif_then_ifexp, (-2.0, -3.0)),
        (loop_with_ifexp, (1.5, 7)),
        (while_then_ifexp, (0.7,)),
    ],
)
def test_gradients(fn, args):
    check_grad(fn, *args, wrt=fn.__code__.co_varnames[0])


def test_second_order_through_the_join():
    def f(x):
        if x > 0:
            x = x * x
        return x * 3.0 if x > 1.0 else math.sin(x)

    assert grad(grad(f))(2.0) == pytest.approx(6.0)  # f(x) = 3 x^2 there
    assert grad(grad(f))(-0.5) == pytest.approx(-math.sin(-0.5))


def test_arrays_through_the_join():
    def f(a, y):
        if y > 0:
            a = a * y
        return np.sum(a * a) if np.sum(a) > 0 else np.sum(a)

    a = np.array([1.0, -2.0, 3.0])
    assert myia(f)(a, 2.0) == f(a, 2.0)
    assert myia(f)(-a, 2.0) == f(-a, 2.0)
    check_grad(f, a, 2.0)


def test_the_generated_code_has_no_closure():
    # Each switch gets its own copy of the shared branch, and both are lifted and inlined.
    src = myia(if_then_ifexp).generated_code(1.0, 2.0)
    assert "mk_" not in src

"""Second derivatives that raised internal errors, found by a differential sweep of the
transformations against per-example loops and finite differences.

The forward mode of ``convert`` (where a branch's or a loop's values of two types meet) read
its type argument as a constant; in a closure a factory made, or once batched, the type
reaches the call as a parameter: "AttributeError: 'Parameter' object has no attribute
'value'" from inside Myia.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from myia import grad, hessian, jvp, myia, vmap

BACKENDS = ["debug", "numpy", "jax"]


def make(a):
    return lambda y: np.tanh(a * y)


def through_a_made_closure(x):
    g = make(1.7)
    for _ in range(2):
        x = g(x)
    return x


def branch_in_loop(x):
    s = 0.0
    for _ in range(3):
        s = s + (x if x < 2.0 else math.sqrt(x))
    return s


def log_until_small(x):
    while x > 1e-2:
        x = math.log(1.0 + x)
    return x


def _second_derivative(fn, x, eps=1e-5):
    g = myia(lambda z: grad(fn)(z), backend="debug")
    return (g(x + eps) - g(x - eps)) / (2 * eps)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_of_a_loop_calling_a_closure_a_factory_made(backend):
    expected = _second_derivative(through_a_made_closure, 0.5)
    for fn in (
        lambda x: hessian(through_a_made_closure)(x),
        lambda x: grad(grad(through_a_made_closure))(x),
        lambda x: jvp(grad(through_a_made_closure), (x,), (1.0,))[1],
    ):
        assert myia(fn, backend=backend)(0.5) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [branch_in_loop, log_until_small], ids=["branch", "while"])
def test_batched_second_derivatives_are_the_per_example_ones(fn, backend):
    xs = np.array([0.3, 3.0])
    expected = np.array([_second_derivative(fn, float(x)) for x in xs])
    got = myia(lambda xs: vmap(hessian(fn))(xs), backend=backend)(xs)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    got = myia(
        lambda xs: jvp(lambda v: vmap(grad(fn))(v), (xs,), (np.ones(2),))[1], backend=backend
    )(xs)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)

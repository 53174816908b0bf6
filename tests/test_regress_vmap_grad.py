"""``vmap`` of gradients that were silently wrong, against the gradients per example.

Loops whose first iteration is peeled: the backward pass of a loop pops, at each iteration,
what its forward pass pushed. Where the first iteration runs apart (its ``x`` known: ``x =
1.0`` before the loop), its push holds constants the other iterations' pushes do not; the
stack must not keep them as known for every element (the backward pass of ``cos(a * x)``
then used ``x = 1.0`` at every iteration: a silently wrong ``vmap(grad(f))``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from myia import grad, myia, vmap
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]


def fixed_point(a):
    x = 1.0
    while abs(x - math.cos(a * x)) > 1e-3:
        x = math.cos(a * x)
    return x


def fixed_point_counted(a):
    x = 1.0
    k = 0
    while abs(x - math.cos(a * x)) > 1e-13 and k < 200:
        x = math.cos(a * x)
        k += 1
    return x


def squared_gap(a):
    x = 1.0
    while (x - math.cos(a * x)) ** 2 > 1e-6:
        x = math.cos(a * x) + 0.0 * x
    return x


A = np.array([0.3, 0.7, 0.9])  # trip counts that differ from example to example


def _per_example(fn, backend):
    g = grad(fn, backend=backend)
    return np.array([g(float(a)) for a in A])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [fixed_point, fixed_point_counted, squared_gap])
def test_vmap_of_a_gradient_object_equals_the_gradients_per_example(fn, backend):
    for a in A:
        check_grad(fn, float(a), backend=backend)
    want = _per_example(fn, backend)
    g = grad(fn)  # a gradient compiled at the top level, batched in Myia code
    got = myia(lambda xs: vmap(g)(xs), backend=backend)(A)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_top_level_vmap_of_grad():
    want = _per_example(fixed_point, "numpy")
    np.testing.assert_allclose(vmap(grad(fixed_point))(A), want, rtol=1e-12)
    np.testing.assert_allclose(vmap(grad(squared_gap))(A), _per_example(squared_gap, "numpy"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_grad_in_myia_code(backend):
    f = myia(lambda xs: vmap(grad(fixed_point))(xs), backend=backend)
    np.testing.assert_allclose(f(A), _per_example(fixed_point, backend), rtol=1e-12)


# A conditional expression whose branch reads a value computed before it --------------------
#
# The sensitivities of ``x if c else y`` are environments chosen by ``c``: batched, the choice
# was the first environment for every example (the gradient of the false branch was lost).


def reads_before(a):
    x = 0.5 * a
    return x if x > a else a * 0.7


def same_both_ways(a):
    x = a * 0.5
    return x if a > 2.0 else a * 0.5


def in_a_loop(a):
    x = 0.5 * a
    y = 0.0
    k = 0
    while k < 1 and x * a < 1.5:
        y = x
        x = x if x > a else a * 0.5
        x = x + 0.1 * y
        k += 1
    return x + 0.5 * y


B = np.array([0.3, 0.7, 1.1, 1.6, 3.0, -2.0])  # both sides of the conditions


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [reads_before, same_both_ways, in_a_loop])
def test_vmap_of_grad_of_a_conditional_expression(fn, backend):
    g = grad(fn, backend=backend)
    want = np.array([g(float(b)) for b in B])
    check_grad(fn, 0.7, backend=backend)
    got = myia(lambda xs: vmap(grad(fn))(xs), backend=backend)(B)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(vmap(grad(fn))(B), want, rtol=1e-12)

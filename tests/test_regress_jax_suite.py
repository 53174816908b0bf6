"""Programs of JAX's test suite (api_test.py, batching_test.py...) whose answers were wrong.

Each is compared with JAX's answer (written out) and, for gradients, with finite differences.

Negative ``argnums`` (JAX's ``test_grad_negative_argnums``): ``-1`` is the last argument a call
passes by position. Myia counted back from the last *parameter*, so that a parameter with a
default the call did not pass was the one differentiated: ``grad(f, -1)(x, y)`` of ``def f(x,
y, z=3.0)`` gave the gradient with respect to ``z`` (and ``False`` for a boolean flag).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from myia import MyiaTypeError, grad, myia, value_and_grad, vmap
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]


def scaled(x, y, z=3.0, flag=False):
    return 1.0 * x * y * z


@pytest.mark.parametrize("backend", BACKENDS)
def test_negative_argnums_count_back_from_the_arguments_passed(backend):
    check_grad(scaled, 1.5, 2.0, backend=backend)
    assert grad(scaled, -1, backend=backend)(1.0, 2.0) == 3.0  # d/dy, as jax.grad
    assert grad(scaled, argnums=-1, backend=backend)(1.0, 2.0, 5.0) == 2.0  # d/dz
    assert grad(scaled, argnums=(-1, 0), backend=backend)(1.0, 2.0) == (3.0, 6.0)
    assert value_and_grad(scaled, -2, backend=backend)(1.0, 2.0, z=4.0) == (8.0, 8.0)
    partial = functools.partial(scaled, 1.0)
    assert grad(partial, -1, backend=backend)(2.0) == 3.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_negative_argnums_in_myia_code(backend):
    top = grad(scaled, -1)  # made at the top level, called in Myia code

    @myia(backend=backend)
    def f(a):
        return grad(scaled, -1)(a, 2.0), grad(scaled, -2)(a, 2.0, 5.0), top(a, 2.0)

    assert f(1.0) == (3.0, 5.0, 3.0)

    @myia(backend=backend)
    def batched(xs):
        return vmap(grad(scaled, -1))(xs, xs), vmap(top)(xs, xs)

    for got in batched(np.array([1.0, 2.0])):
        np.testing.assert_array_equal(got, [3.0, 6.0])
    np.testing.assert_array_equal(vmap(top)(np.array([1.0, 2.0]), np.ones(2)), [3.0, 6.0])


def test_a_negative_position_out_of_range_is_a_type_error():
    with pytest.raises(MyiaTypeError, match="position"):
        grad(scaled, -3)(1.0, 2.0)

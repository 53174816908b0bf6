"""Regression tests: literal lists of arrays given to NumPy's joining functions."""

from __future__ import annotations

import numpy as np
import pytest

from myia import grad, myia
from myia.testing import check_grad

BACKENDS = ["numpy", "debug"]


def concatenate_literal(a, b):
    return np.sum(np.concatenate([a, b * 2.0]) ** 2)


def stack_literal(a, b):
    return np.stack([a, b], axis=1)


def concatenate_2d(a, b):
    return np.concatenate([a, b], axis=1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_literal_list_of_arrays_of_different_shapes(backend):
    # It was "a list: elements of incompatible types f64 x 2 and f64 x 3".
    a, b = np.arange(2.0), np.arange(3.0)
    assert myia(concatenate_literal, backend=backend)(a, b) == concatenate_literal(a, b)
    check_grad(concatenate_literal, a, b)
    x, y = np.ones((2, 3)), np.zeros((2, 1))
    np.testing.assert_array_equal(
        myia(concatenate_2d, backend=backend)(x, y), concatenate_2d(x, y)
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_literal_list_given_to_stack(backend):
    a, b = np.arange(2.0), np.ones(2)
    np.testing.assert_array_equal(myia(stack_literal, backend=backend)(a, b), stack_literal(a, b))
    g = grad(lambda a, b: np.sum(stack_literal(a, b) ** 3), "a", "b", backend=backend)(a, b)
    np.testing.assert_allclose(g[0], 3 * a**2)

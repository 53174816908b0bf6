"""Augmented assignment rebinds a name, as in JAX: an array another name holds stays as it was.

NumPy's ``y += 1.0`` writes into the array that ``y`` and ``x`` both hold; Myia's values are
immutable, so ``x`` keeps its value and the caller's arrays are never changed, on every
backend (docs/language.md).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from myia import grad, myia
from myia.testing import check_grad

BACKENDS = ["debug", "numpy"]
BACKENDS += ["jax"] if importlib.util.find_spec("jax") else []
BACKENDS += ["native"] if importlib.util.find_spec("numba") else []


def aliased(x):
    y = x
    y += 1.0
    y *= 2.0
    return x, y


def accumulate(x, n):
    acc = x
    for _ in range(n):
        acc += x * 0.5
    return acc, x


def sgd(W, g):
    W0 = W
    W -= 0.1 * g
    return np.sum(W0 * W)


@pytest.mark.parametrize("backend", BACKENDS)
def test_augmented_assignment_rebinds_the_name(backend):
    x = np.array([1.0, 2.0, 3.0])
    before = x.copy()
    got_x, got_y = myia(aliased, backend=backend)(x)
    np.testing.assert_array_equal(got_x, before)
    np.testing.assert_array_equal(got_y, (before + 1.0) * 2.0)
    acc, same = myia(accumulate, backend=backend)(x, 3)
    np.testing.assert_array_equal(acc, before * 2.5)
    np.testing.assert_array_equal(same, before)
    g = np.array([0.5, -1.0, 2.0])
    assert myia(sgd, backend=backend)(x, g) == pytest.approx(np.sum(before * (before - 0.1 * g)))
    np.testing.assert_array_equal(x, before)  # the caller's array
    dW = grad(sgd, "W", backend=backend)(x, g)
    np.testing.assert_allclose(dW, 2.0 * before - 0.1 * g, rtol=1e-12)


def test_gradient_through_augmented_assignment():
    check_grad(sgd, np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0]), order=2)

"""Regression tests: literal lists of numbers and arrays given to NumPy's functions.

A literal list given to a NumPy function that reads a sequence (``np.concatenate``,
``np.array``, ``np.max``, ``np.sum(..., axis=0)``) has a length known at compile time, and its
elements may have different shapes where NumPy allows it.
"""

from __future__ import annotations

import numpy as np
import pytest

from myia import grad, myia
from myia.testing import check_grad

BACKENDS = ["numpy", "debug"]
try:
    import jax  # noqa: F401

    BACKENDS.append("jax")
except ImportError:  # pragma: no cover - the extra is not installed
    pass


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


def reductions_of_literals(x, a, b):
    return (
        np.max([x, 2.0 * x, 1.0]),
        np.min((x, -x)),
        np.prod([x, 3.0]),
        np.argmax([x, 0.5]),
        np.max([a, b], axis=0),
        np.sum([a, b * x], axis=0),  # was the sum of every element: the axis was ignored
        np.mean((a, b), axis=1, keepdims=True),
        np.sum([a, b]),
    )


def arrays_of_literals(x, a, b):
    return (
        np.array([x, 2.0 * x]),
        np.array([[x, 1.0], [2.0, x * x]]),
        np.vstack([a, b]),
        np.hstack([a, b, a]),
        np.column_stack([a, b]),
    )


def literal_loss(x, a, b):
    r = reductions_of_literals(x, a, b)
    m = arrays_of_literals(x, a, b)
    return (
        r[0]
        + r[1]
        + r[2]
        + np.sum(r[4] * r[5])
        + np.sum(r[6])
        + np.sum(m[1] ** 2)
        + np.sum(m[0] * m[4][:, 0])
    )


def _same(got, expected):
    assert type(got) is type(expected) and len(got) == len(expected)
    for g, e in zip(got, expected):
        assert type(g) is type(e), (g, e)
        np.testing.assert_allclose(g, e, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reductions_and_arrays_of_literal_lists(backend):
    a, b = np.array([1.0, 4.0]), np.array([3.0, 2.0])
    for fn in (reductions_of_literals, arrays_of_literals):
        _same(myia(fn, backend=backend)(1.5, a, b), fn(1.5, a, b))
    check_grad(literal_loss, 1.5, a, b, backend=backend)

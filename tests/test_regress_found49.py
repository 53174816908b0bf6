"""Everyday programs that failed: a NumPy scalar indexed by ``()``, functions as defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from myia import grad, myia
from myia.errors import MyiaTypeError


def double(x):
    return 2.0 * x


@pytest.mark.parametrize("backend", ["debug", "numpy", "jax"])
def test_a_numpy_scalar_indexed_by_an_empty_tuple_is_itself(backend):
    # NumPy: ``x[0, 0][()]`` and ``np.sum(x)[()]`` are the scalars (refused before).
    def f(x):
        return x[0, 0][()] * 3.0 + np.sum(x)[()] + np.float32(1.5)[()]

    x = np.arange(4.0).reshape(2, 2)
    assert myia(f, backend=backend)(x) == pytest.approx(0.0 * 3.0 + 6.0 + 1.5)
    np.testing.assert_allclose(myia(grad(f), backend=backend)(x), [[4.0, 1.0], [1.0, 1.0]])


def test_another_index_of_a_numpy_scalar_raises_as_numpy():
    def f(x):
        return x[0, 0][(0,)]

    with pytest.raises(IndexError, match="invalid index to scalar variable"):
        myia(f)(np.ones((2, 2)))
    with pytest.raises(IndexError, match="invalid index to scalar variable"):
        np.ones((2, 2))[0, 0][(0,)]


def test_a_lambda_with_a_function_as_default():
    # ``lambda x, fn=double: fn(x)`` raised an internal error (a lambda has no name).
    assert myia(lambda x, fn=double: fn(x) + 1.0)(3.0) == 7.0
    assert myia(grad(lambda x, fn=double: fn(x) * x))(3.0) == pytest.approx(12.0)


@dataclass
class Layer:
    w: float
    acts: tuple = field(default_factory=lambda: (np.tanh,))


@dataclass
class ListLayer:
    w: float
    acts: list = field(default_factory=lambda: [np.tanh])


def test_a_default_factory_of_functions():
    # A tuple of functions works; a list of them was an internal error, now a clear refusal.
    def f(x):
        m = Layer(2.0)
        return m.acts[0](x * m.w)

    def g(x):
        m = ListLayer(2.0)
        return m.acts[0](x * m.w)

    assert myia(f)(0.5) == pytest.approx(np.tanh(1.0))
    with pytest.raises(MyiaTypeError, match="list holding functions.*tuple") as info:
        myia(g)(0.5)
    assert "m = ListLayer(2.0)" in str(info.value)

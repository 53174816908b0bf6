"""Defects users met: a dataclass field whose default is a function.

``Layer(w)`` in Myia code, for a dataclass with ``act: Callable = np.tanh``, was a
`MyiaInternalError` ("Myia cannot take a value of type ufunc as an argument"): the default was
read as a data constant. A function default (a NumPy ufunc, a Python function, a lambda given
by ``field(default=...)`` or ``default_factory``, a tuple of functions) is now the function
Myia code naming it would be: the record is the one ``Layer(w, np.tanh)`` makes.

A record holding a function that was passed to another function or called through its
``__call__`` failed the type verifier (the function's graph before and after specialization);
it compares data types alone, as for a tuple holding a function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

from myia import MyiaTypeError, myia
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]


def _backend(name):
    if name == "jax":
        pytest.importorskip("jax")
    return name


def relu(x):
    return np.maximum(x, 0.0)


def square(x):
    return x * x


@dataclass
class Tanh:
    w: np.ndarray
    act: Callable = np.tanh


@dataclass
class Relu:
    w: np.ndarray
    act: Callable = relu


@dataclass
class Double:
    w: np.ndarray
    act: Callable = field(default=lambda x: x * 2.0)


@dataclass
class Square:
    w: np.ndarray
    act: Callable = field(default_factory=lambda: square)


@dataclass
class Dense:
    w: np.ndarray
    act: Callable = np.tanh
    scale: float = 0.5

    def __call__(self, x):
        return self.scale * self.act(x @ self.w)


@dataclass
class Pair:
    w: np.ndarray
    acts: tuple = (np.tanh, relu)


def _args():
    rng = np.random.default_rng(0)
    return rng.normal(size=(2, 2)), rng.normal(size=2)


def by_default(w, x):
    return (
        np.sum(Tanh(w).act(x @ w))
        + np.sum(Relu(w).act(x @ w))
        + np.sum(Double(w).act(x @ w))
        + np.sum(Square(w).act(x @ w))
    )


def overridden(w, x):
    # The default is still usable beside the classes' instances that replace it.
    return (
        np.sum(Tanh(w, relu).act(x @ w)) + np.sum(Relu(w, act=np.tanh).act(x)) + Tanh(w).act(x[0])
    )


def apply_layer(layer, x):
    return layer.act(x @ layer.w)


def passed_on(w, x):
    return np.sum(apply_layer(Tanh(w), x)) + np.sum(apply_layer(Tanh(w, square), x))


def explicit_passed_on(w, x):
    return np.sum(apply_layer(Relu(w, np.tanh), x))


def called(w, x):
    return np.sum(Dense(w)(x)) + np.sum(Dense(w, relu, 2.0)(x))


def chosen(w, x, c):
    layer = Tanh(w) if c > 0 else Tanh(w, relu)
    return np.sum(layer.act(x @ w))


def of_a_tuple(w, x):
    p = Pair(w)
    return np.sum(p.acts[0](x @ w)) + np.sum(p.acts[1](x @ w))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "fn",
    [by_default, overridden, passed_on, explicit_passed_on, called, of_a_tuple],
    ids=lambda f: f.__name__,
)
def test_a_function_default_is_the_function(backend, fn):
    backend = _backend(backend)
    w, x = _args()
    np.testing.assert_allclose(myia(fn, backend=backend)(w, x), fn(w, x), rtol=1e-12)
    check_grad(fn, w, x, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_function_default_or_another_by_branch(backend):
    backend = _backend(backend)
    w, x = _args()
    f = myia(chosen, backend=backend)
    for c in (1.0, -1.0):
        np.testing.assert_allclose(f(w, x, c), chosen(w, x, c), rtol=1e-12)
        check_grad(chosen, w, x, c, wrt=(0, 1), backend=backend)


@dataclass
class Opened:
    w: np.ndarray
    act: Callable = open


def uses_open(w):
    return Opened(w).act


def test_an_unsupported_function_default_is_a_user_error():
    with pytest.raises(MyiaTypeError, match="Opened.act") as info:
        myia(uses_open)(np.ones(2))
    assert "uses_open" in str(info.value)

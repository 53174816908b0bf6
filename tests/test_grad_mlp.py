"""The seeds' multilayer perceptron: dataclass layers (`ArithmeticData`), a model holding a
tuple of layers, its gradient (the structure of the model) and a few steps of SGD."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from myia import ArithmeticData, myia, value_and_grad
from myia.testing import check_grad


@dataclass
class Linear(ArithmeticData):
    W: np.ndarray
    b: np.ndarray

    def apply(self, x):
        return x @ self.W + self.b


@dataclass
class Tanh(ArithmeticData):
    def apply(self, x):
        return np.tanh(x)


@dataclass
class Sequential(ArithmeticData):
    layers: tuple

    def apply(self, x):
        for layer in self.layers:
            x = layer.apply(x)
        return x


def cost(model, x, y):
    diff = model.apply(x) - y
    return np.sum(diff * diff) / x.shape[0]


@myia
def step(model, x, y, lr):
    loss, dmodel = value_and_grad(cost, "model")(model, x, y)
    return loss, model - lr * dmodel


def make_problem(seed=0, n=16, hidden=8):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    y = np.sin(x @ np.array([[1.0], [-2.0], [0.5]]))
    model = Sequential(
        (
            Linear(rng.normal(size=(3, hidden)) * 0.5, np.zeros(hidden)),
            Tanh(),
            Linear(rng.normal(size=(hidden, 1)) * 0.5, np.zeros(1)),
        )
    )
    return model, x, y


def test_mlp_gradient_matches_finite_differences():
    model, x, y = make_problem(n=4, hidden=3)
    check_grad(cost, model, x, y, wrt="model")


def test_mlp_gradient_has_the_structure_of_the_model():
    model, x, y = make_problem()
    loss, dmodel = value_and_grad(cost, "model")(model, x, y)
    assert loss == pytest.approx(cost(model, x, y), rel=1e-12)
    assert type(dmodel) is Sequential and type(dmodel.layers) is tuple
    assert [type(layer) for layer in dmodel.layers] == [Linear, Tanh, Linear]
    for got, layer in zip(dmodel.layers, model.layers):
        if isinstance(layer, Linear):
            for name in ("W", "b"):
                g, w = getattr(got, name), getattr(layer, name)
                assert isinstance(g, np.ndarray) and g.shape == w.shape and g.dtype == w.dtype


def test_mlp_sgd_steps_with_gradients_from_myia_decrease_the_loss():
    model, x, y = make_problem()
    vg = value_and_grad(cost, "model")
    losses = []
    for _ in range(5):
        loss, dmodel = vg(model, x, y)
        losses.append(loss)
        model = model - 0.1 * dmodel  # ArithmeticData in Python
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < 0.5 * losses[0], losses
    assert len(vg.compiled_signatures()) == 1


def test_mlp_step_in_myia_decreases_the_loss():
    model, x, y = make_problem()
    losses = []
    for _ in range(5):
        loss, model = step(model, x, y, 0.1)
        losses.append(loss)
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    assert type(model) is Sequential
    assert len(step.compiled_signatures()) == 1


def test_arithmetic_data_update_inside_myia():
    @myia
    def update(layer, lr):
        return layer - lr * layer

    layer = Linear(np.ones((3, 2)), np.ones(2))
    got = update(layer, 0.5)
    assert type(got) is Linear
    np.testing.assert_allclose(got.W, 0.5 * np.ones((3, 2)))

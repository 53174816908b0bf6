"""Custom backpropagators (`myia.custom_bprop`), composed with everything, to higher order."""

import math

import numpy as np

from myia import custom_bprop, grad, myia


def scaled(x):
    return x * 2.0


@custom_bprop(scaled)
def bprop_scaled(x, out, dout):
    return (dout * 10.0 * x,)


def uses_scaled(x):
    return scaled(x) + math.sin(x)


def clip_gradient(x):
    return x


@custom_bprop(clip_gradient)
def bprop_clip_gradient(x, out, dout):
    return (np.clip(dout, -1.0, 1.0),)


def test_custom_bprop_replaces_the_derivative():
    assert grad(scaled)(2.0) == 20.0
    assert grad(uses_scaled)(3.0) == 30.0 + math.cos(3.0)


def test_custom_bprop_to_second_order():
    assert grad(grad(uses_scaled))(3.0) == 10.0 - math.sin(3.0)


def test_custom_bprop_inside_myia_code_and_loops():
    @myia
    def f(x):
        s = 0.0
        for i in range(3):
            s = s + grad(uses_scaled)(x + i)
        return s

    expected = sum(10.0 * (3.0 + i) + math.cos(3.0 + i) for i in range(3))
    assert abs(f(3.0) - expected) < 1e-12


def test_gradient_clipping():
    def loss(w, x):
        return np.sum(clip_gradient(w * x) * 100.0)

    g = grad(loss)(np.ones(3), np.array([1.0, -2.0, 0.5]))
    np.testing.assert_allclose(g, [1.0, -2.0, 0.5])

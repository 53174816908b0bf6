"""Stacks of a loop-invariant value on the JAX backend.

The forward loop of a gradient pushes each iteration's values, the weights it reads too.
A stack buffer every push of which pushes the same traced value is that value broadcast,
and a pop reads the value (`myia.compile.jax_runtime.uniform`): XLA drops the buffer. A
loop assumes its state's such buffers stay so and is traced again where its body pushes
something else. The results are the NumPy backend's, the gradients finite differences'.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.rnn import rnn_loss
from myia import grad
from myia.testing import check_grad

jax = pytest.importorskip("jax")


def decaying(x, W):
    """The weight changes in the loop: its stack is a buffer of rows."""
    h = np.zeros((x.shape[1], W.shape[1]))
    for t in range(x.shape[0]):
        W = W * 0.9
        h = np.tanh(x[t] @ W + h)
    return np.sum(h * h)


def until(x, w):
    """A loop whose trip count depends on values (a ``while_loop``) reading a weight."""
    while x < 10.0:
        x = x * w + 1.0
    return x


def nested(x, w):
    for _ in range(3):
        for _ in range(4):
            x = np.tanh(x * w + 0.1)
    return np.sum(x)


def _arrays(*shapes):
    rng = np.random.default_rng(1)
    return [rng.normal(size=s) for s in shapes]


def test_the_gradient_of_rnn_keeps_no_buffer_of_its_weight():
    x, Wx, Wh = _arrays((6, 3, 2), (2, 7), (7, 7))
    b = np.zeros(7)
    g = grad(rnn_loss, "Wx", "Wh", "b", backend="jax")
    got = g(x, Wx, Wh, b)
    want = grad(rnn_loss, "Wx", "Wh", "b", backend="numpy")(x, Wx, Wh, b)
    for a, w in zip(got, want):
        np.testing.assert_allclose(a, w, rtol=1e-12, atol=1e-12)
    text = g.specialization(x, Wx, Wh, b).executable.compiled_text((x, Wx, Wh, b))
    assert "f64[64,3,7]" in text  # the stack of the states
    assert "f64[64,7,7]" not in text  # no stack of Wh


def test_a_weight_that_changes_is_stacked():
    x, W = _arrays((5, 3, 2), (2, 2))
    g = grad(decaying, "W", backend="jax")(x, W)
    np.testing.assert_allclose(g, grad(decaying, "W", backend="numpy")(x, W), rtol=1e-12)
    check_grad(decaying, x, W, wrt="W", backend="jax")


def test_a_weight_read_by_a_while_loop():
    for w in (1.5, 2.5):
        got = grad(until, "w", backend="jax")(1.0, w)
        assert got == pytest.approx(grad(until, "w", backend="numpy")(1.0, w), rel=1e-12)
    check_grad(until, 1.0, 1.5, backend="jax")


def test_nested_loops_reading_a_weight():
    (x,) = _arrays((3,))
    check_grad(nested, x, 0.7, backend="jax")
    check_grad(nested, x, 0.7, wrt="w", order=2, backend="jax")

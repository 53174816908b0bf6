"""The JAX backend on a GPU: the CPU backend's programs and gradients, run on JAX's GPU.

Skipped where JAX has no GPU (CI never has one); run on a machine with one:
``python -m pytest tests/test_backend_jax_gpu.py``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from test_backend_jax import PROGRAMS, _jitted, _same, loop_break, loss, newton, train_step

from benchmarks.rnn import rnn_loss
from myia import grad, myia, value_and_grad

jax = pytest.importorskip("jax")
#: ``MYIA_TEST_DEVICE=cpu`` runs this file on JAX's CPU device (a check of the tests).
DEVICE = os.environ.get("MYIA_TEST_DEVICE", "gpu")
try:
    GPU = jax.devices(DEVICE)[0]
except RuntimeError:
    pytest.skip(f"JAX has no {DEVICE} here", allow_module_level=True)

rng = np.random.default_rng(1)


@pytest.mark.parametrize(
    "fn,args,jitted", PROGRAMS, ids=[f"{p[0].__name__}-{i}" for i, p in enumerate(PROGRAMS)]
)
def test_same_results_as_numpy_on_the_gpu(fn, args, jitted, capsys):
    expected = myia(fn, backend="numpy")(*args)
    f = myia(fn, backend="jax", device=DEVICE)
    _same(f(*args), expected)
    _same(f(*args), expected)
    assert _jitted(f, args) == jitted


def test_results_stay_on_the_gpu_and_come_back_in():
    W, b, x = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal((5, 4))
    y = np.eye(3)[[0, 1, 2, 0, 1]]
    f = myia(train_step, backend="jax", device=DEVICE, keep_on_device=True)
    _, W1, b1 = f(W, b, x, y)
    assert isinstance(W1, jax.Array) and W1.devices() == {GPU}
    _, W2, b2 = f(W1, b1, x, y)  # no copy back to the host
    _, eW1, eb1 = myia(train_step, backend="numpy")(W, b, x, y)
    _, eW2, _ = myia(train_step, backend="numpy")(eW1, eb1, x, y)
    np.testing.assert_allclose(np.asarray(W2), eW2, rtol=1e-12)
    assert np.asarray(W2).dtype == np.float64


def test_gradients_on_the_gpu_match_finite_differences():
    W, b, x, y = (rng.standard_normal(s) for s in ((3, 4), 3, 4, 3))
    dW, db = grad(loss, "W", "b", backend="jax", device=DEVICE)(W, b, x, y)
    f = myia(loss, backend="jax", device=DEVICE)
    vW, vb, eps = rng.standard_normal((3, 4)), rng.standard_normal(3), 1e-6
    fd = (f(W + eps * vW, b + eps * vb, x, y) - f(W - eps * vW, b - eps * vb, x, y)) / (2 * eps)
    assert np.sum(dW * vW) + np.sum(db * vb) == pytest.approx(fd, rel=1e-7)


@pytest.mark.parametrize("a", [0.5, 2.0, 1e6])
def test_value_dependent_while_gradient_is_one_gpu_computation(a):
    g = grad(newton, backend="jax", device=DEVICE)
    expected = grad(newton, backend="numpy")(a)
    assert g(a) == pytest.approx(expected, rel=1e-12)
    assert _jitted(g, (a,)), g.specialization(a).executable.reason


def loop_break_second(x, n):
    return grad(grad(loop_break))(x, n)


def test_second_order_of_a_loop_with_break_on_the_gpu():
    h = myia(loop_break_second, backend="jax", device=DEVICE)
    expected = myia(loop_break_second, backend="numpy")(1.0, 10)
    assert h(1.0, 10) == pytest.approx(expected, rel=1e-12)
    assert _jitted(h, (1.0, 10)), h.specialization(1.0, 10).executable.reason


def test_rnn_gradient_of_a_long_sequence_on_the_gpu():
    x = rng.standard_normal((300, 8, 4))
    Wx, Wh, b = rng.standard_normal((4, 6)) / 2, rng.standard_normal((6, 6)) / 3, np.zeros(6)
    vg = value_and_grad(rnn_loss, "Wx", "Wh", "b", backend="jax", device=DEVICE)
    value, grads = vg(x, Wx, Wh, b)
    e_value, e_grads = value_and_grad(rnn_loss, "Wx", "Wh", "b", backend="numpy")(x, Wx, Wh, b)
    assert value == pytest.approx(e_value, rel=1e-10)
    for got, want in zip(grads, e_grads):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert _jitted(vg, (x, Wx, Wh, b))

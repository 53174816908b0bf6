"""Sliding windows ``x[i:i + k]``: a slice of a start known at run time and a static length.

A slice is a window where it provably fits (a loop's index within its range); elsewhere it
is NumPy's slice, shorter where it runs past the end, of an axis known at run time only.
Gradients are checked against finite differences, a loop over windows included.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from myia import grad, jvp, myia, vmap
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax", "native"]

K = 3


def _backend(name):
    if name == "jax":
        pytest.importorskip("jax")
    if name == "native":
        pytest.importorskip("numba")
    return name


def window(x, i):
    return x[i : i + 3]


def window_before(x, t):
    return x[t - K : t]


def strided(x, i, s):
    return x[i * s : i * s + 2]


def named_stop(x, i):
    j = i + 2
    return x[i:j]


def of_weights(x, w, i):
    return x[i : i + w.shape[0]] * w


def of_length(x, i, k=2):
    return x[i : i + k]


def constant_arguments(x, i):
    # Constants flow into the calls: each call's k is known at compile time.
    return of_length(x, i) * 2.0, of_length(x, i + 1, 4)


def rows(X, i):
    return X[i : i + 2, :]


def columns(X, j):
    return X[:, j : j + 3]


def patch(X, i, j):
    return X[i - 2 : i, j : j + 1]


def row_part(X, i, j):
    return X[i, j : j + 2]


def last_axis(X, j):
    return X[..., j : j + 2]


def conv1d(x, w):
    k = w.shape[0]
    out = []
    for i in range(x.shape[0] - k + 1):
        out = out + [np.sum(x[i : i + k] * w)]
    return out


def conv_loss(x, w):
    k = w.shape[0]
    s = 0.0
    for i in range(x.shape[0] - k + 1):
        s = s + np.sum(np.tanh(x[i : i + k] * w)) ** 2
    return s


def tanh_loss(x, w):
    s = 0.0
    for i in range(x.shape[0] - w.shape[0] + 1):
        s = s + np.sum(np.tanh(x[i : i + w.shape[0]] * w))
    return s


def moving_average(x):
    s = 0.0
    for t in range(K, x.shape[0] + 1):
        s = s + np.mean(x[t - K : t]) * t
    return s


def patches_loss(X, W):
    s = 0.0
    for i in range(X.shape[0] - 1):
        for j in range(X.shape[1] - 1):
            s = s + np.sum(np.sin(X[i : i + 2, j : j + 2] * W))
    return s


x10 = np.arange(10.0) * 0.5 - 1.0
X56 = np.arange(30.0).reshape(5, 6) * 0.1


CASES = [
    (window, (x10, 2)),
    (window, (x10, 7)),
    (window, (x10, -4)),
    (window, (x10, -10)),
    (window_before, (x10, 5)),
    (window_before, (x10, -1)),
    (strided, (x10, 2, 3)),
    (named_stop, (x10, 8)),
    (of_weights, (x10, np.array([1.0, -2.0]), 4)),
    (constant_arguments, (x10, 1)),
    (rows, (X56, 3)),
    (columns, (X56, 2)),
    (patch, (X56, 2, 5)),
    (row_part, (X56, 4, 1)),
    (last_axis, (X56, 4)),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_windows_are_numpy_slices(backend):
    backend = _backend(backend)
    for fn, args in CASES:
        got = myia(fn, backend=backend)(*args)
        want = fn(*args)
        for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
            assert g.shape == w.shape, fn.__name__
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (window, (x10, 8)),  # NumPy's x[8:11] has 2 elements
        (window, (x10, -2)),  # NumPy's x[-2:1] is empty
        (window, (x10, -11)),
        (columns, (X56, 4)),
        (window_before, (x10, 2)),
    ],
)
def test_a_slice_that_may_not_fit_is_numpys(backend, fn, args):
    # Not a window (nothing says it fits): an axis known at run time only, NumPy's values.
    got, want = myia(fn, backend=_backend(backend))(*args), fn(*args)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_a_loop_of_windows():
    w = np.array([1.0, 0.5, -1.0])
    x = np.linspace(-1.0, 1.0, 12)
    got = myia(conv1d)(x, w)
    np.testing.assert_allclose(got, np.convolve(x, w[::-1], mode="valid"), rtol=1e-12)


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_gradients_of_windows(backend):
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=9), rng.normal(size=3)
    check_grad(conv_loss, x, w, backend=backend)
    check_grad(moving_average, x, backend=backend)
    check_grad(lambda x, i: np.sum(window(x, i) ** 3), x, -5, order=2, backend=backend)
    X, W = rng.normal(size=(4, 3)), rng.normal(size=(2, 2))
    check_grad(patches_loss, X, W, backend=backend)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_second_order_gradients_of_loops_over_windows(backend):
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=7), rng.normal(size=3)
    check_grad(conv_loss, x, w, order=2, backend=backend)
    check_grad(moving_average, x, order=2, backend=backend)


def test_gradient_of_a_loop_over_windows_is_one_xla_computation():
    pytest.importorskip("jax")
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=9), rng.normal(size=3)
    g = grad(conv_loss, backend="jax")
    np.testing.assert_allclose(g(x, w), grad(conv_loss)(x, w), rtol=1e-10)
    assert g.specialization(x, w).executable.jitted
    check_grad(conv_loss, x, w, backend="jax")
    f = myia(moving_average, backend="jax")
    assert f(x10) == pytest.approx(moving_average(x10))
    assert f.specialization(x10).executable.jitted


@pytest.mark.slow  # Numba compiles the gradient: about 15 s
def test_windows_in_native_machine_code():
    pytest.importorskip("numba")
    x, w = np.linspace(-1.0, 1.0, 9), np.array([0.3, -0.2, 0.5])
    for f, want in (
        (myia(tanh_loss, backend="native", background=False), tanh_loss(x, w)),
        (grad(tanh_loss, "x", backend="native", background=False), grad(tanh_loss, "x")(x, w)),
    ):
        np.testing.assert_allclose(f(x, w), want, rtol=1e-12)
        whole = f.specialization(x, w).executable.whole
        assert whole.fn is not None, whole.reason
        assert "_window" in whole.source


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_vmap_and_jvp_of_windows(backend):
    backend = _backend(backend)
    xs = np.arange(20.0).reshape(2, 10) * 0.1

    def energy(x, i):
        return np.sum(x[i : i + 3] ** 2)

    shared = myia(lambda xs, i: vmap(energy, in_axes=(0, None))(xs, i), backend=backend)
    np.testing.assert_allclose(shared(xs, 2), [energy(x, 2) for x in xs])
    each = myia(lambda xs, i: vmap(energy)(xs, i), backend=backend)
    np.testing.assert_allclose(each(xs, np.array([1, 6])), [energy(xs[0], 1), energy(xs[1], 6)])
    X = np.arange(24.0).reshape(2, 4, 3)
    batched_rows = myia(lambda X, i: vmap(rows, in_axes=(0, None))(X, i), backend=backend)
    np.testing.assert_array_equal(batched_rows(X, 1), X[:, 1:3, :])
    t = np.linspace(0.0, 1.0, 10)
    value, tangent = myia(lambda x, t: jvp(energy, (x, 4), (t, 0)), backend=backend)(xs[1], t)
    assert value == pytest.approx(energy(xs[1], 4))
    assert tangent == pytest.approx(np.sum(2 * xs[1][4:7] * t[4:7]))


def test_slices_of_a_length_known_at_run_time_are_numpys():
    # Not windows: the result's axis has a length known at run time only (``?``), and the
    # bounds are NumPy's (clamped, not checked).
    def unrelated(x, i, j):
        return x[i:j]

    def runtime_length(x, i, n):
        return x[i : i + n]

    for fn in (unrelated, runtime_length):
        for i, k in [(1, 3), (8, 5), (0, 0)]:
            np.testing.assert_array_equal(myia(fn)(x10, i, k), fn(x10, i, k))


def test_lists_keep_python_slices():
    def middle(xs, i):
        return xs[i : i + 2]

    assert myia(middle)([1.0, 2.0, 3.0], 2) == [3.0]  # Python's shorter slice, as ever


def test_a_closure_constant_length():
    def outer(k):
        return lambda x, i: x[i : i + k]

    f = myia(functools.partial(window_before, t=6))
    np.testing.assert_array_equal(f(x10), x10[3:6])
    np.testing.assert_array_equal(myia(outer(4))(x10, 5), x10[5:9])

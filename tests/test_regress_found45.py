"""Defects users met in NumPy code, vmap and grad inside Myia code, and unclear messages.

A slice ``x[i:i + 3]`` whose start is known at run time only was a window of a fixed length
that raised `IndexError` where NumPy's slice is shorter (``i`` past ``len(x) - 3`` in a
loop). It is a window only where it provably fits (a loop's index within a range that keeps
it inside the axis); elsewhere it is NumPy's slice, of an axis known at run time only.
"""

from __future__ import annotations

import numpy as np
import pytest

from myia import grad, myia
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]


def _backend(name):
    if name == "jax":
        pytest.importorskip("jax")
    return name


def windows_past_the_end(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sum(x[i : i + 3] ** 2) * (i + 1)
    return s


def windows_in_a_branch(x, w):
    # The index read in a block of the body (a parameter every jump passes it to).
    s = 0.0
    for i in range(len(x) - 1):
        if i % 2 == 0:
            s = s + np.sum(np.tanh(x[i : i + 3] * w[: len(x[i : i + 3])]))
    return s


def window_of_an_argument(x, i):
    return x[i : i + 3]


def window_of_a_changing_array(x):
    s = 0.0
    for i in range(len(x) - 2):
        s = s + np.sum(x[i : i + 3])
        x = x * 2.0  # a new array each iteration: still the same length
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_windows_past_the_end_are_numpys_slices(backend):
    backend = _backend(backend)
    x, w = np.linspace(-1.0, 1.0, 5), np.array([0.5, -1.0, 2.0])
    got = myia(windows_past_the_end, backend=backend)(x)
    assert got == pytest.approx(windows_past_the_end(x), rel=1e-12)
    got = myia(windows_in_a_branch, backend=backend)(x, w)
    assert got == pytest.approx(windows_in_a_branch(x, w), rel=1e-12)
    f = myia(window_of_an_argument, backend=backend)
    for i in (0, 2, 3, 4, 6, -1, -7):
        got, want = f(x, i), window_of_an_argument(x, i)
        assert got.shape == want.shape, i
        np.testing.assert_array_equal(got, want)
    got = myia(window_of_a_changing_array, backend=backend)(x)
    assert got == pytest.approx(window_of_a_changing_array(x), rel=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_of_windows_past_the_end(backend):
    backend = _backend(backend)
    x, w = np.linspace(-1.0, 1.0, 5), np.array([0.5, -1.0, 2.0])
    check_grad(windows_past_the_end, x, backend=backend)
    check_grad(windows_in_a_branch, x, w, backend=backend)
    g = grad(lambda x, i: np.sum(window_of_an_argument(x, i) ** 2), backend=backend)
    np.testing.assert_allclose(g(x, 3), [0.0, 0.0, 0.0, 2 * x[3], 2 * x[4]])

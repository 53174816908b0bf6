"""Differential fuzzing of array programs (`fuzz_functions`) on every backend, with gradients.

Each program's ``f(x, y)`` runs under plain Python/NumPy and under Myia on the reference
interpreter and the NumPy, JAX and native backends: the values must agree to the float
tolerance of the program's dtype, with the same dtype. ``grad(f)`` is checked against finite
differences with `myia.testing.check_grad` (on the default backend, and compared with the
JAX and native gradients), and every fourth float64 program up to the second order, at
points where Python's own finite differences at two step sizes agree (elsewhere a kink or a
branch boundary is near). Seeds are fixed: a few in CI, more under ``-m slow``.
"""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_functions import inputs, load
from helpers import own_cache_dir  # noqa: F401 (a fixture)

from myia import grad, myia
from myia.testing import check_grad

BACKENDS = ["debug", "numpy", "jax", "native"]
#: (rtol, atol) of values, and the steps of the smoothness test, by dtype.
TOL = {"float64": (1e-7, 1e-9), "float32": (2e-4, 2e-5)}
STEPS = {"float64": (1e-4, 1e-6), "float32": (1e-2, 1e-3)}


def close(a, b, dtype):
    rtol, atol = TOL[dtype]
    return np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def python_fd(f, args, dtype, h):
    """Central differences of Python's `f` in every leaf of `args`."""
    out = []
    for pos, a in enumerate(args):
        arr = np.array(a, dtype=dtype)
        g = np.zeros(arr.shape)
        for idx in np.ndindex(arr.shape):
            up, down = arr.copy(), arr.copy()
            up[idx] += h
            down[idx] -= h
            scal = np.ndim(a) == 0 and not isinstance(a, np.ndarray)
            at = [list(args), list(args)]
            at[0][pos] = type(a)(up) if scal else up
            at[1][pos] = type(a)(down) if scal else down
            g[idx] = (float(f(*at[0])) - float(f(*at[1]))) / (float(up[idx]) - float(down[idx]))
        out.append(g)
    return out


def smooth(f, args, dtype):
    h1, h2 = STEPS[dtype]
    rtol = 1e-3 if dtype == "float64" else 5e-2
    a, b = python_fd(f, args, dtype, h1), python_fd(f, args, dtype, h2)
    return all(np.allclose(p, q, rtol=rtol, atol=rtol) for p, q in zip(a, b))


def check_program(tmp_path, seed, order=1):
    f = load(seed, tmp_path).f
    for point in (0, 1):
        args = inputs(seed, point)
        dtype = str(np.asarray(args[0]).dtype)
        expected = f(*args)
        for backend in BACKENDS:
            got = myia(f, backend=backend)(*args)
            assert np.asarray(got).dtype == np.asarray(expected).dtype, (seed, backend, got)
            assert close(got, expected, dtype), (seed, point, backend, got, expected)
        if not smooth(f, args, dtype):
            continue
        check_grad(f, *args, order=order if dtype == "float64" else 1)
        g = grad(f, "x", "y")(*args)
        for backend in ("jax", "native"):
            gb = grad(f, "x", "y", backend=backend)(*args)
            for a, b in zip(gb, g):
                assert close(a, b, dtype), (seed, point, backend, a, b)


@pytest.mark.parametrize("seed", [4, 6])
def test_fuzz_arrays(tmp_path, seed):
    check_program(tmp_path, seed, order=2 if seed == 4 else 1)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6, 300))
def test_fuzz_arrays_more(tmp_path, seed):
    check_program(tmp_path, seed, order=2 if seed % 4 == 0 else 1)

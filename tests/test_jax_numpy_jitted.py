"""Everyday NumPy functions are one XLA computation on the JAX backend, with NumPy's results.

A primitive whose NumPy code runs on the host (its 0-d results made NumPy or Python scalars,
its dtype arguments read by NumPy) has a JAX twin (`myia.compile.jax_lower.JAX_LOWER`):
without one, the whole program ran on the host, with the right values, but none of it in
XLA. A primitive that raises only where its type rule would have refused is not a reason
to run on the host (`jax_jittable._checked_by_inference`).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from myia import grad, myia
from myia.testing import check_grad

jax = pytest.importorskip("jax")

A = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
V = np.linspace(0.1, 1.0, 4)
F = A.astype(np.float32)
ROWS = np.array([0, -1])


def where(x):
    return np.where(x > 0, x, 0.0) + np.where(x > 0.5, 1.0, 0.5)


def clip(x):
    return np.clip(x, -0.5, 0.5) + np.clip(x, None, 0.2)


def dot(x, v):
    return np.dot(x, v), np.inner(v, v)


def stack(x):
    return np.stack((x, 2.0 * x), axis=1)


def like(x):
    return (
        np.zeros_like(x) + x,
        np.ones_like(x) * x,
        np.full_like(x, 2.0) * x,
        np.zeros_like(x, dtype=np.float32),
    )


def rounding(x):
    return np.floor(x * 3.0), np.ceil(x * 3.0), np.sign(x), np.arctan2(x, 0.5)


def einsum_scalar(v):
    return np.einsum("i,i->", v, v) + np.einsum("i,ij,j->", v[:3], A, v)


def cumprod(x):
    return np.cumprod(x, axis=1), np.prod(x, axis=0)


def casts(x):
    return x.astype(np.float32), np.sum(x).astype(np.float32), (x * 10.0).astype(np.int64)


def take_and_arange(x):
    return np.take(x, 2, axis=1) + np.arange(3) * 0.5, np.take(x, ROWS, axis=0)


def sort(x):
    return np.sort(x, axis=1)


def softplus(x):
    return np.logaddexp(0.0, x)


def float32_where(x):
    return np.where(x > 0, x, np.float32(0.1) * x)


def float_widths(x, y):
    # Floats of several widths promote to the widest, in JAX as in NumPy.
    return np.sum(x * y) + np.sum(x.astype(np.float32)) * np.float32(0.5), x + y.astype(np.float16)


def python_extrema(x, y):
    # Python's max and min: the first argument unless the second is greater (smaller).
    return max(x, y) + min(x, 0.5) + max(3, 4) + min(y, math.nan), max(math.nan, x)


def float_of(x):
    return float(np.sum(x)) * 2.0 + math.exp(float(np.mean(x))), float(x[1, 2])


def mean_of_bools(x):
    return np.mean(x > 0), np.mean((x > 0).astype(np.int32), axis=0)


def extrema_of_numbers(x):
    # np.max of a number cannot raise (of an empty array it would).
    return np.max(np.sum(x)) * 2.0 + np.max(np.sum(x, axis=0)), np.argmax(np.sum(x))


def int_of(x, y):
    # ``int`` truncates towards zero: of Python floats in a loop, of a NumPy float, of a
    # NumPy bool and of an int.
    s = 0
    for i in range(3):
        s = s + int(y * i - 1.7)
    return int(np.sum(x) * 3.0) + int(x[0, 1] > 0) + int(s)


PROGRAMS = [
    (int_of, (A, 0.9)),
    (int_of, (A, -2.6)),
    (int_of, (A, np.float16(2.6))),
    (extrema_of_numbers, (A,)),
    (python_extrema, (0.3, 0.7)),
    (python_extrema, (0.7, math.nan)),
    (float_of, (A,)),
    (mean_of_bools, (A,)),
    (float_widths, (V, V.astype(np.float32))),
    (where, (A,)),
    (clip, (A,)),
    (dot, (A, V)),
    (stack, (A,)),
    (like, (A,)),
    (rounding, (A,)),
    (einsum_scalar, (V,)),
    (cumprod, (A + 2.0,)),
    (casts, (A,)),
    (take_and_arange, (A,)),
    (sort, (A,)),
    (softplus, (A,)),
    (float32_where, (F,)),
]


def _same(got, want):
    if isinstance(want, tuple):
        assert type(got) is tuple and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert type(got) is type(want), (got, want)
    assert np.asarray(got).dtype == np.asarray(want).dtype and np.shape(got) == np.shape(want)
    rtol = 1e-6 if np.asarray(want).dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("fn,args", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_numpy_functions_are_jitted_with_numpy_results(fn, args):
    f = myia(fn, backend="jax")
    _same(f(*args), myia(fn, backend="numpy")(*args))
    _same(f(*args), myia(fn, backend="numpy")(*args))  # the fast path too
    ex = f.specialization(*args).executable
    assert ex.jitted, ex.reason


def loss_where(x):
    return np.sum(np.where(x > 0, x * x, 0.5 * x) + np.clip(x, -0.3, 0.4))


def loss_dot(x, v):
    return np.sum(np.dot(x, v)) * np.inner(v, v) + np.einsum("i,i->", v, v)


def loss_joins(x):
    return np.sum(np.concatenate([x, x * x]) * 0.5) + np.sum(np.vstack([x, x]) ** 2)


def loss_tile(v):
    return np.sum(np.tile(v, 2) * np.arange(8.0)) + np.sum(np.prod(A + v, axis=0))


def loss_stacks(x):
    s = np.stack((x, x * x), axis=1)
    return np.sum(s * s) + np.sum(np.repeat(x, 2, axis=0) ** 2) + np.sum(np.pad(x, 1) ** 2)


def loss_products(x):
    return np.sum(np.cumprod(x, axis=1)) + np.linalg.det(x[:, :3] + 2.0 * np.eye(3))


def loss_sort(x):
    return np.sum(np.sort(x, axis=1) * np.arange(4.0))


GRADS = [
    (loss_where, (A,)),
    (loss_dot, (A, V)),
    (loss_joins, (A,)),
    (loss_tile, (V,)),
    (loss_stacks, (A,)),
    (loss_products, (A + 1.5,)),
    (loss_sort, (A,)),
]


@pytest.mark.parametrize("fn,args", GRADS, ids=[p[0].__name__ for p in GRADS])
def test_their_gradients_are_jitted_and_right(fn, args):
    g = myia(grad(fn), backend="jax")
    got = g(*args)
    np.testing.assert_allclose(got, myia(grad(fn), backend="numpy")(*args), rtol=1e-12)
    assert g.specialization(*args).executable.jitted, g.specialization(*args).executable.reason
    check_grad(fn, *args, backend="jax")


@pytest.mark.parametrize("y", [math.nan, math.inf, -math.inf, 1e20, -1e19, np.float16(np.inf)])
def test_int_of_a_float_that_int64_does_not_hold_is_flagged(y):
    # Python raises for nan (ValueError) and inf (OverflowError), and its int of 1e20 is
    # past int64, where XLA's cast is undefined: the call is flagged, and the host runs it.
    f = myia(int_of, backend="jax")
    try:
        want = myia(int_of, backend="numpy")(A, y)
    except (ValueError, OverflowError) as exc:
        with pytest.raises(type(exc)):
            f(A, y)
    else:
        assert f(A, y) == want
    assert f.specialization(A, y).executable.jitted

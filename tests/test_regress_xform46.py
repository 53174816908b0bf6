"""Transformations, inside Myia code, of functions that arrive as values.

A closure passed as an argument to a function that transforms it (``apply_jvp(lambda z:
np.sin(W @ z), x, v)``), a partial application transformed (``jvp(partial(f, W), ...)``),
and ``jacfwd``/``jacrev``/``vjp``/``hessian`` of a closure that another function's call made
(``hessian(make_loss(X, y))(w)``) were refused; each is checked against JAX (float64) or
finite differences, on every backend.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from myia import grad, hessian, jacfwd, jacrev, jvp, myia, vjp, vmap
from myia.testing import check_grad

BACKENDS = ["debug", "numpy", "jax"]

W = np.arange(12.0).reshape(3, 4) / 10
X = np.arange(12.0).reshape(4, 3) / 7
Y = np.ones(4)
WV = np.array([0.1, 0.2, 0.3])
XV = np.ones(4)
V = np.arange(4.0)


def _jax():
    """JAX in float64, the reference where it is installed."""
    try:
        import jax
    except ImportError:  # pragma: no cover - depends on the environment
        pytest.skip("JAX is not installed")
    jax.config.update("jax_enable_x64", True)
    return jax


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9, atol=1e-12)


# 1. A closure or function passed as a parameter to a function that transforms it.


def apply_jvp(fn, x, v):
    return jvp(fn, (x,), (v,))


def hvp(f, x, v):
    return jvp(grad(f), (x,), (v,))[1]


def jvp_of_lambda(W, x, v):
    return apply_jvp(lambda z: np.sin(W @ z), x, v)


def hvp_of_lambda(W, x, v):
    return hvp(lambda z: np.sum(np.sin(W @ z)), x, v)


def through_two_calls(W, x, v):
    return _middle(lambda z: np.sin(W @ z), x, v)


def _middle(fn, x, v):
    return apply_jvp(fn, x, v)[1]


def jvp_in_a_loop(fn, x, v):
    acc = np.zeros(3)
    for i in range(3):
        acc = acc + jvp(fn, (x * i,), (v,))[1]
    return acc


def loop_of_lambda(W, x, v):
    return jvp_in_a_loop(lambda z: np.sin(W @ z), x, v)


def recursive_jvp(fn, x, v, n):
    if n == 0:
        return jvp(fn, (x,), (v,))[1]
    return recursive_jvp(fn, x, v, n - 1) * 2.0


def recursion_of_lambda(W, x, v):
    return recursive_jvp(lambda z: np.sin(W @ z), x, v, 3)


def apply_vmap(fn, xs):
    return vmap(fn)(xs)


def vmap_in_a_loop(W, xs):
    acc = np.zeros(3)
    for i in range(2):
        acc = acc + np.sum(apply_vmap(lambda z, i=i: np.sin(W @ z) * i, xs), axis=0)
    return acc


@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_of_a_closure_passed_as_an_argument(backend):
    jax = _jax()
    jnp = jax.numpy
    out, tan = myia(jvp_of_lambda, backend=backend)(W, XV, V)
    jout, jtan = jax.jvp(lambda z: jnp.sin(W @ z), (XV,), (V,))
    close(out, jout)
    close(tan, jtan)
    close(myia(through_two_calls, backend=backend)(W, XV, V), jtan)
    close(myia(recursion_of_lambda, backend=backend)(W, XV, V), 8 * jtan)
    want = sum(jax.jvp(lambda z: jnp.sin(W @ z), (XV * i,), (V,))[1] for i in range(3))
    close(myia(loop_of_lambda, backend=backend)(W, XV, V), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hvp_of_a_closure_passed_as_an_argument(backend):
    jax = _jax()
    jnp = jax.numpy
    got = myia(hvp_of_lambda, backend=backend)(W, XV, V)
    want = jax.jvp(jax.grad(lambda z: jnp.sum(jnp.sin(W @ z))), (XV,), (V,))[1]
    close(got, want)
    xs = np.stack([XV, 2 * XV])
    got = myia(lambda W, xs, v: vmap(lambda x: hvp_of_lambda(W, x, v))(xs), backend=backend)
    twice = jax.jvp(jax.grad(lambda z: jnp.sum(jnp.sin(W @ z))), (2 * XV,), (V,))[1]
    close(got(W, xs, V), np.stack([want, twice]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_a_closure_passed_as_an_argument_in_a_loop(backend):
    xs = np.ones((2, 4))
    want = sum(np.sum(np.sin(xs @ W.T) * i, axis=0) for i in range(2))
    close(myia(vmap_in_a_loop, backend=backend)(W, xs), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_through_a_jvp_of_a_closure_passed_as_an_argument(backend):
    def tangent_norm(W, x, v):
        return np.sum(apply_jvp(lambda z: np.sin(W @ z), x, v)[1] ** 2)

    check_grad(tangent_norm, W, XV, V, wrt=0, backend=backend)


# 2. Partial applications transformed.


def fw(W, z):
    return np.sin(W @ z)


def jvp_of_partial(W, x, v):
    return jvp(partial(fw, W), (x,), (v,))


def jvp_of_partial_argument(W, x, v):
    return apply_jvp(partial(fw, W), x, v)


def _make_partial(W):
    return partial(fw, W * 2.0)


def jvp_of_partial_made_elsewhere(W, x, v):
    return jvp(_make_partial(W), (x,), (v,))


@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_of_a_partial_application(backend):
    jax = _jax()
    jnp = jax.numpy
    want = jax.jvp(lambda z: jnp.sin(W @ z), (XV,), (V,))
    for fn in (jvp_of_partial, jvp_of_partial_argument):
        out, tan = myia(fn, backend=backend)(W, XV, V)
        close(out, want[0])
        close(tan, want[1])
    out, tan = myia(jvp_of_partial_made_elsewhere, backend=backend)(W, XV, V)
    want = jax.jvp(lambda z: jnp.sin(2 * W @ z), (XV,), (V,))
    close(out, want[0])
    close(tan, want[1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_through_a_jvp_of_a_partial_application(backend):
    def f(W, x, v):
        return np.sum(jvp(partial(fw, W), (x,), (v,))[1])

    check_grad(f, W, XV, V, wrt=(0, 1), backend=backend)


# 3. jacfwd, jacrev, vjp and hessian of a closure another function's call made.


def make_loss(X, y):
    Xs = X * 2.0

    def loss(w):
        return np.mean((Xs @ w - y) ** 2)

    return loss


def hessian_of_made(X, y, w):
    loss = make_loss(X, y)
    return hessian(loss)(w)


def jacfwd_of_made(X, y, w):
    return jacfwd(make_loss(X, y))(w)


def jacrev_of_made(X, y, w):
    return jacrev(make_loss(X, y))(w)


def vjp_of_made(X, y, w):
    out, pullback = vjp(make_loss(X, y), w)
    return out, pullback(1.0)


def jacrev_jacfwd_of_made(X, y, w):
    return jacrev(jacfwd(make_loss(X, y)))(w)


def hessian_in_a_loop(X, y, w):
    loss = make_loss(X, y)
    acc = 0.0
    for i in range(2):
        acc = acc + np.sum(hessian(loss)(w * i))
    return acc


def hessian_of(f, w):
    return hessian(f)(w)


def hessian_of_made_argument(X, y, w):
    return hessian_of(make_loss(X, y), w)


def hessian_of_lambda_argument(X, y, w):
    return hessian_of(lambda u: np.sum(np.sin(X @ u) * y), w)


def _jloss(jnp):
    return lambda w: jnp.mean((2 * X @ w - Y) ** 2)


MADE = {
    "hessian": (hessian_of_made, lambda jax, f: jax.hessian(f)(WV)),
    "jacfwd": (jacfwd_of_made, lambda jax, f: jax.jacfwd(f)(WV)),
    "jacrev": (jacrev_of_made, lambda jax, f: jax.jacrev(f)(WV)),
    "vjp": (vjp_of_made, lambda jax, f: (f(WV), jax.vjp(f, WV)[1](1.0))),
    "jacrev(jacfwd)": (jacrev_jacfwd_of_made, lambda jax, f: jax.hessian(f)(WV)),
    "loop": (
        hessian_in_a_loop,
        lambda jax, f: sum(np.sum(jax.hessian(f)(WV * i)) for i in range(2)),
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", list(MADE))
def test_jacobians_of_a_closure_made_by_a_call(kind, backend):
    jax = _jax()
    fn, reference = MADE[kind]
    got = myia(fn, backend=backend)(X, Y, WV)
    want = reference(jax, _jloss(jax.numpy))
    if kind == "vjp":
        close(got[0], want[0])
        close(got[1][0], want[1][0])
    else:
        close(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_of_a_closure_passed_as_an_argument(backend):
    jax = _jax()
    jnp = jax.numpy
    args = (X, Y, WV)
    want = jax.hessian(lambda w: jnp.mean((2 * X @ w - Y) ** 2))(WV)
    close(myia(hessian_of_made_argument, backend=backend)(*args), want)
    want = jax.hessian(lambda u: jnp.sum(jnp.sin(X @ u) * Y))(WV)
    close(myia(hessian_of_lambda_argument, backend=backend)(*args), want)

"""Keyword arguments and defaults through the transformations, as in JAX.

``jacfwd(f)(x, y=v)`` passes ``y`` to ``f`` and does not differentiate it (argnums are
positions), at the top level and inside Myia code, composed with ``vmap``; closures whose
defaults are read where they are defined are mapped and differentiated. Checked against
finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from myia import hessian, jacfwd, jacrev, jvp, myia, vmap
from myia.testing import check_grad

RNG = np.random.default_rng(7)
X, Y = RNG.normal(size=3), RNG.normal(size=3)


def scaled(x, y, *, s=2.0):
    return np.sin(x) * y * s


def energy(x, y, *, s=2.0):
    return np.sum(x * x * y) * s + np.sum(np.cos(x))


def _fd_jac(f, x, eps=1e-6):
    """The Jacobian of `f` at `x` by central differences."""
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    return np.stack(cols, axis=-1)


def _want_jac(y, s=2.0):
    return _fd_jac(lambda v: scaled(v, y, s=s), X)


def _want_hess(y, s=2.0):
    return np.diag(2.0 * y * s - np.cos(X))


@pytest.mark.parametrize("jac", [jacfwd, jacrev])
def test_jacobians_pass_keywords_to_the_function_undifferentiated(jac):
    np.testing.assert_allclose(jac(scaled)(X, y=Y), _want_jac(Y), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jac(scaled)(X, Y, s=3.0), _want_jac(Y, 3.0), rtol=1e-7, atol=1e-9)
    got = myia(lambda a, b: jac(scaled)(a, y=b, s=0.5))(X, Y)
    np.testing.assert_allclose(got, _want_jac(Y, 0.5), rtol=1e-7, atol=1e-9)


def test_hessian_passes_keywords_to_the_function_undifferentiated():
    np.testing.assert_allclose(hessian(energy)(X, y=Y), _want_hess(Y), rtol=1e-9)
    np.testing.assert_allclose(hessian(energy)(X, Y, s=3.0), _want_hess(Y, 3.0), rtol=1e-9)
    got = myia(lambda a, b: hessian(energy)(a, y=b, s=0.5))(X, Y)
    np.testing.assert_allclose(got, _want_hess(Y, 0.5), rtol=1e-9)


def test_jacobians_with_keywords_compose_with_vmap_and_grad():
    ys = RNG.normal(size=(4, 3))
    want = np.stack([_want_hess(y) for y in ys])
    got = myia(lambda a, b: vmap(lambda x, y: hessian(energy)(x, y=y), in_axes=(None, 0))(a, b))
    np.testing.assert_allclose(got(X, ys), want, rtol=1e-9)
    # the gradient of the trace of a Jacobian taken with a keyword
    check_grad(lambda a: np.sum(jacfwd(scaled)(a, y=a * a, s=1.5) * np.eye(3)), X)


def _closure_defaults(xs, w):
    """Closures whose defaults are read where they are defined (``lambda x, y=w: ...``)."""
    mapped = vmap(lambda x, y=w: np.sin(x * y))(xs)
    tangent = jvp(lambda x, y=w * w: np.sin(x * y), (xs,), (xs,))[1]
    return mapped, tangent


def test_vmap_and_jvp_of_a_closure_with_a_default_read_where_it_is_defined():
    # It said "_closure_defaults() missing required argument 'w'" (vmap) and was an internal
    # error (jvp): the branch reading the default was not lifted with the closure.
    xs = RNG.normal(size=(4, 3))
    mapped, tangent = myia(_closure_defaults)(xs, 1.5)
    np.testing.assert_allclose(mapped, np.sin(xs * 1.5), rtol=1e-12)
    np.testing.assert_allclose(tangent, np.cos(xs * 2.25) * 2.25 * xs, rtol=1e-12)
    check_grad(
        lambda xs, w: np.sum(_closure_defaults(xs, w)[0] + _closure_defaults(xs, w)[1]), xs, 1.5
    )

"""Matrix decompositions against JAX, their refused gradients and their shape errors.

The values and the gradients (to the second order, against finite differences) of every
function are checked by the table of tests/test_numpy_more.py; here the gradients of
functions built on them are compared with JAX's, and the errors are checked.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

from myia import grad, myia
from myia.errors import MyiaShapeError, MyiaTypeError

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # pragma: no cover - depends on the environment
    jax = jnp = None


def _with_numpy(module: Any, fn: Any) -> Any:
    """`fn` with the name ``np`` bound to `module` (the same source run by JAX)."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": module})


def decompositions_loss(m, b):
    # Functions of the decompositions that do not depend on the signs LAPACK picks.
    k = m @ m.T + 3.0 * np.eye(4)
    w, v = np.linalg.eigh(k)
    q, r = np.linalg.qr(m[:, :3])
    u, s, vh = np.linalg.svd(m[:3, :], full_matrices=False)
    proj = (u * s) @ vh
    return (
        np.sum(np.log(w))
        + np.sum((v * v) @ b)
        + np.sum(q @ r * b[:, :1])
        + np.sum(np.abs(np.diagonal(r)))
        + np.sum(s * s)
        + np.sum(proj * m[:3, :])
        + np.sum(np.linalg.pinv(m[:, :3]) @ b)
        + np.sum(np.linalg.matrix_power(k / 8.0, 3))
        + np.linalg.norm(m, 2)
    )


@pytest.mark.skipif(jax is None, reason="JAX is not installed")
def test_decomposition_gradients_match_jax() -> None:
    rng = np.random.default_rng(1)
    args = (rng.standard_normal((4, 4)), rng.standard_normal((4, 2)))
    ours = grad(decompositions_loss, 0, 1)(*args)
    with jax.enable_x64(True):
        theirs = jax.grad(_with_numpy(jnp, decompositions_loss), (0, 1))(*args)
    for g, e in zip(ours, theirs):
        np.testing.assert_allclose(g, np.asarray(e), rtol=1e-8, atol=1e-10)


def test_eigh_reads_one_triangle() -> None:
    # NumPy reads the lower triangle: the upper one has no influence, and no gradient.
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 3))

    def top(a):
        return np.sum(np.linalg.eigvalsh(a) ** 2)

    g = grad(top)(a)
    assert np.all(np.triu(g, 1) == 0)
    s = np.tril(a) + np.tril(a, -1).T
    # d/dA_ij sum(w^2) = d/dA_ij |S|_F^2: 2 S_ii on the diagonal, 4 S_ij below it.
    np.testing.assert_allclose(g, np.tril(4 * s) - 2 * np.diag(np.diag(s)), rtol=1e-10)


def svd_full(a):
    u, s, vh = np.linalg.svd(a)  # ERROR
    return np.sum(s)


def test_svd_full_matrices_gradient_of_a_rectangle_is_refused() -> None:
    with pytest.raises(MyiaTypeError, match="full_matrices=False"):
        grad(svd_full)(np.ones((4, 3)))
    assert np.isclose(myia(svd_full)(np.eye(3)[:, :2]), 2.0)  # values are fine


def qr_complete(a):
    return np.linalg.qr(a, mode="complete")


def test_qr_complete_of_a_tall_matrix_is_refused() -> None:
    with pytest.raises(NotImplementedError, match="mode='reduced'"):
        myia(qr_complete)(np.ones((4, 3)))
    q, r = myia(qr_complete)(np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(q @ r, np.arange(6.0).reshape(2, 3), atol=1e-12)


@pytest.mark.parametrize(
    "fn, arg",
    [
        (lambda a: np.linalg.qr(a), np.ones(3)),
        (lambda a: np.linalg.eigh(a), np.ones((3, 4))),
        (lambda a: np.linalg.svd(a), np.ones(4)),
        (lambda a: np.linalg.pinv(a), np.ones(4)),
    ],
)
def test_shape_errors(fn: Any, arg: Any) -> None:
    with pytest.raises(MyiaShapeError):
        myia(fn)(arg)


def test_repeated_eigen_and_singular_values_keep_the_values_gradients() -> None:
    # Exactly repeated (and zero) values: their vectors are not unique, but the gradients of
    # functions of the values alone are exact (not nan).
    def eig_sum(a):
        return np.sum(np.linalg.eigvalsh(a) ** 2)

    a = 2.0 * np.eye(3)
    np.testing.assert_allclose(grad(eig_sum)(a), 2.0 * a)

    def frobenius(a):
        return np.sum(np.linalg.svd(a, full_matrices=False)[1] ** 2)

    for m in (np.eye(3), np.eye(4)[:, :3], np.eye(4)[:3], np.zeros((3, 2))):
        np.testing.assert_allclose(grad(frobenius)(m), 2.0 * m, atol=1e-12)

"""NumPy's linear algebra and indexing on the JAX backend: one XLA computation, NumPy's results.

Each program is compared with the NumPy backend's result, and `_jitted` (the JAX backend's
own account) says whether it ran as one jitted computation rather than as host code.
"""

from __future__ import annotations

import numpy as np
import pytest

from myia import grad, myia
from myia.testing import check_grad

jax = pytest.importorskip("jax")


def _jitted(fn, args):
    ex = fn.specialization(*args).executable
    return ex.jitted, ex.reason


def _error_of(fn, *args):
    try:
        myia(fn, backend="numpy")(*args)
    except Exception as exc:  # noqa: BLE001 - the error NumPy's backend raises
        return exc
    raise AssertionError("no error")


rng = np.random.default_rng(0)
M = rng.standard_normal((4, 4))
SPD = M @ M.T + 4.0 * np.eye(4)


# np.linalg.solve --------------------------------------------------------------------------------


def solve_sum(a, b):
    return np.sum(np.linalg.solve(a, b) * b)


@pytest.mark.parametrize("b", [rng.standard_normal(4), rng.standard_normal((4, 2))])
def test_solve_is_one_xla_computation(b):
    args = (SPD, b)
    f = myia(solve_sum, backend="jax")
    assert f(*args) == pytest.approx(myia(solve_sum)(*args), rel=1e-12)
    assert _jitted(f, args) == (True, None)
    g = grad(solve_sum, 0, 1, backend="jax")
    for got, expected in zip(g(*args), grad(solve_sum, 0, 1)(*args)):
        np.testing.assert_allclose(got, expected, rtol=1e-10)
    assert _jitted(g, args) == (True, None)
    check_grad(solve_sum, *args, order=2, backend="jax")


def test_singular_solve_raises_numpys_error_under_xla():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    f = myia(solve_sum, backend="jax")
    assert _jitted(f, (singular, np.ones(2)))[0]
    with pytest.raises(Exception, match="Singular matrix") as info:
        f(singular, np.ones(2))
    assert type(info.value) is type(_error_of(solve_sum, singular, np.ones(2)))


# np.linalg.cholesky -----------------------------------------------------------------------------


def factor(a):
    return np.linalg.cholesky(a)


def test_cholesky_reads_the_lower_triangle_under_xla():
    # NumPy reads the lower triangle only: an upper triangle that differs changes nothing.
    a = np.tril(SPD) + np.triu(rng.standard_normal((4, 4)), 1)
    f = myia(factor, backend="jax")
    np.testing.assert_allclose(f(a), np.linalg.cholesky(a), rtol=1e-12)
    assert _jitted(f, (a,))[0]


def test_not_positive_definite_batch_raises_under_xla():
    batch = np.stack([SPD, -SPD])
    f = myia(factor, backend="jax")
    with pytest.raises(Exception, match="not positive definite") as info:
        f(batch)
    assert type(info.value) is type(_error_of(factor, batch))
    np.testing.assert_allclose(f(batch[:1]), np.linalg.cholesky(batch[:1]), rtol=1e-12)


def chol_loss(a, b):
    lower = np.linalg.cholesky(a)
    return np.sum(np.log(np.diagonal(lower, axis1=-2, axis2=-1))) + np.sum(lower * b)


def test_cholesky_gradient_under_xla():
    # The backpropagator's second solve, of a transposed matrix, is a right-side solve.
    args = (np.stack([SPD, SPD + np.eye(4)]), rng.standard_normal((2, 4, 4)))
    g = grad(chol_loss, 0, backend="jax")
    np.testing.assert_allclose(g(*args), grad(chol_loss, 0)(*args), rtol=1e-10)
    assert _jitted(g, args) == (True, None)
    check_grad(chol_loss, *args, wrt=0, order=2, backend="jax")


# Indexing with ..., and the gradients of indexing ------------------------------------------------


def last_column(x):
    return np.sum(np.tanh(x[..., 0]) * x[..., 1]) + np.sum(x[None, ..., 1:, 0])


def row(x, i):
    return np.sum(x[i, ...] * x[i]) + np.sum(x[..., i])


X = rng.standard_normal((3, 4, 4))


def test_ellipsis_index_and_its_gradient_are_one_xla_computation():
    for fn in (myia(last_column, backend="jax"), grad(last_column, backend="jax")):
        assert _jitted(fn, (X,)) == (True, None)
    assert myia(last_column, backend="jax")(X) == pytest.approx(last_column(X), rel=1e-12)
    np.testing.assert_allclose(
        grad(last_column, backend="jax")(X), grad(last_column)(X), rtol=1e-12
    )
    check_grad(last_column, X, order=2, backend="jax")


def test_index_out_of_bounds_raises_under_xla():
    f, g = myia(row, backend="jax"), grad(row, 0, backend="jax")
    np.testing.assert_allclose(g(X, 2), grad(row, 0)(X, 2), rtol=1e-12)
    assert f(X, -1) == pytest.approx(row(X, -1), rel=1e-12)
    assert _jitted(f, (X, 2)) == (True, None) and _jitted(g, (X, 2)) == (True, None)
    for fn in (f, g):
        with pytest.raises(IndexError):
            fn(X, 3)

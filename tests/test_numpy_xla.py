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


def gp_like(a, y):
    lower = np.linalg.cholesky(a)
    alpha = np.linalg.solve(lower, y)
    return 0.5 * np.sum(alpha * alpha) + np.sum(np.log(np.diagonal(lower)))


def gram(x, y):
    return np.sum(np.tanh(x.T @ y))


def _dots(text):
    return [line for line in text.splitlines() if " dot(" in line or "dot_general(" in line]


def test_products_of_transposed_matrices_read_them_laid_out_under_xla():
    # XLA's CPU runs a product contracting its left operand's first axis on a slow path: the
    # transposed factor of the Cholesky gradient (and a user's ``x.T @ y``) is copied first.
    b = rng.standard_normal((40, 40))
    a = b @ b.T + 40.0 * np.eye(40)
    y = rng.standard_normal(40)
    g = grad(gp_like, 0, backend="jax")
    np.testing.assert_allclose(g(a, y), grad(gp_like, 0)(a, y), rtol=1e-9, atol=1e-12)
    x, z = rng.standard_normal((64, 40)), rng.standard_normal((64, 48))
    f = myia(gram, backend="jax")
    assert f(x, z) == pytest.approx(gram(x, z), rel=1e-12)
    for fn, args in ((g, (a, y)), (f, (x, z))):
        assert "optimization_barrier" in fn.lowered_text(*args)
        compiled = fn.specialization(*args).executable.compiled_text(fn._arguments(args, {}))
        big = [d for d in _dots(compiled) if "f64[40,40]" in d or "f64[40,48]" in d]
        assert big and all("lhs_contracting_dims={1}" in d for d in big), big


def test_small_products_of_transposed_matrices_are_not_copied():
    x, z = rng.standard_normal((4, 3)), rng.standard_normal((4, 5))
    f = myia(gram, backend="jax")
    assert f(x, z) == pytest.approx(gram(x, z), rel=1e-12)
    assert "optimization_barrier" not in f.lowered_text(x, z)


def test_large_float32_products_of_transposed_matrices_are_copied_not_matrix_vector_ones():
    # ``mlp_step`` large's weight gradients (float32, hundreds of rows) gain from the copy; a
    # product with one column is a matrix-vector product, which has nothing to gain.
    x = rng.standard_normal((256, 1024)).astype(np.float32)
    z = rng.standard_normal((256, 10)).astype(np.float32)
    f = myia(gram, backend="jax")
    assert f(x, z) == pytest.approx(gram(x, z), rel=1e-4)
    assert "optimization_barrier" in f.lowered_text(x, z)
    column = z[:, :1]
    assert f(x, column) == pytest.approx(gram(x, column), rel=1e-4)
    assert "optimization_barrier" not in f.lowered_text(x, column)


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

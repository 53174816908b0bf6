"""``np.linalg`` and SciPy's triangular and Cholesky solves, written in Myia's Python subset.

Each gives NumPy's (or SciPy's) signature to the primitives of `myia.primitives.linalg` and
`myia.primitives.decompositions`, whose gradients are the analytic rules. `LINALG` says what
``np.linalg.<name>`` means; `numpy_extra` adds it to its mapping, with the SciPy functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..primitives import P

# Linear algebra -------------------------------------------------------------------------------


def linalg_cholesky(a, upper=False):
    """``np.linalg.cholesky(a, upper=False)``."""
    if upper:
        return P.swapaxes(P.cholesky(a), -1, -2)
    return P.cholesky(a)


def linalg_solve(a, b):
    """``np.linalg.solve(a, b)``."""
    return P.solve(a, b)


def linalg_inv(a):
    """``np.linalg.inv(a)``."""
    return P.inv(a)


def linalg_det(a):
    """``np.linalg.det(a)``."""
    return P.det(a)


def linalg_slogdet(a):
    """``np.linalg.slogdet(a)``: a tuple ``(sign, logabsdet)``."""
    return P.slogdet(a)


def linalg_qr(a, mode="reduced"):
    """``np.linalg.qr(a, mode)``: a tuple ``(q, r)``, or ``r`` for ``mode="r"``.

    ``mode="complete"`` is "reduced" for a matrix that is not tall, and refused for a tall one.
    """
    if mode == "r":
        return P.qr(a)[1]
    if mode == "complete":
        if P.shape(a)[-2] > P.shape(a)[-1]:
            raise NotImplementedError(
                "np.linalg.qr(mode='complete') of a tall matrix: its extra columns of q are "
                "not unique (use mode='reduced')"
            )
    return P.qr(a)


def linalg_eigh(a, UPLO="L"):
    """``np.linalg.eigh(a, UPLO)``: a tuple ``(eigenvalues, eigenvectors)``."""
    return P.eigh(a, UPLO == "L")


def linalg_eigvalsh(a, UPLO="L"):
    """``np.linalg.eigvalsh(a, UPLO)``."""
    return P.eigh(a, UPLO == "L")[0]


def linalg_svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``np.linalg.svd``: a tuple ``(u, s, vh)``, or ``s`` when not ``compute_uv``."""
    if compute_uv:
        return P.svd(a, full_matrices)
    return P.svd(a, False)[1]


def linalg_svdvals(x):
    """``np.linalg.svdvals(x)``: the singular values, descending."""
    return P.svd(x, False)[1]


def linalg_pinv(a, rcond=None, hermitian=False):
    """``np.linalg.pinv(a, rcond)``."""
    return P.pinv(a, rcond)


def linalg_lstsq(a, b, rcond=None):
    """``np.linalg.lstsq(a, b, rcond)``: ``(x, residuals, rank, s)``, `a` of full rank.

    The residuals are the squared norms of the columns of ``b - a x`` when `a` is tall, else
    empty (NumPy also empties them for a rank-deficient `a`, a shape only known at run time:
    here a rank-deficient tall `a` gives the residuals of the least-norm solution).
    """
    x = P.matmul(P.pinv(a, rcond), b)
    s = P.svd(a, False)[1]
    m, n = P.shape(a)[-2], P.shape(a)[-1]
    if rcond is None:
        cut = P.reduce_max(s, -1, True) * (_eps_of(s) * max(m, n))
    else:
        cut = P.reduce_max(s, -1, True) * rcond
    rank = P.reduce_sum(s > P.stop_gradient(cut), -1, False, np.int32)
    if m > n:
        r = b - P.matmul(a, x)
        if P.ndim(b) == 1:
            return x, P.reshape(P.reduce_sum(r * r, None, False, None), (1,)), rank, s
        return x, P.reduce_sum(r * r, 0, False, None), rank, s
    if P.ndim(b) == 1:
        return x, P.zeros((0,), P.dtype_of(s)), rank, s
    return x, P.zeros((0,), P.dtype_of(s)), rank, s


def linalg_matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """``np.linalg.matrix_rank(A, tol, rtol=...)``: the number of singular values above `tol`.

    NumPy's default `tol` is the largest singular value times ``max(M, N) * eps``.
    """
    if P.ndim(A) < 2:
        return 0 if np.all(A == 0) else 1
    s = P.svd(A, False)[1]
    m, n = P.shape(A)[-2], P.shape(A)[-1]
    if tol is None:
        if rtol is None:
            cut = P.reduce_max(s, -1, True) * (_eps_of(s) * max(m, n))
        else:
            cut = P.reduce_max(s, -1, True) * P.expand_dims(np.asarray(rtol), (-1,))
    else:
        cut = P.expand_dims(np.asarray(tol), (-1,))
    return P.reduce_sum(s > P.stop_gradient(cut), -1, False, np.int64)


def linalg_cond(x, p=None):
    """``np.linalg.cond(x, p)``: by the singular values for `p` None, 2 or -2, else by norms."""
    if p is None:
        return _cond_svd(x, False)
    if not isinstance(p, str):  # (a string compared with a number: refused)
        if p == 2 or p == -2:
            return _cond_svd(x, p == -2)
    return linalg_norm(x, p, (-2, -1)) * linalg_norm(P.inv(x), p, (-2, -1))


def _cond_svd(x, smallest):
    """The largest singular value of `x` over its smallest (the inverse if `smallest`)."""
    s = P.svd(x, False)[1]
    if smallest:
        return P.array_getitem(s, (..., -1)) / P.array_getitem(s, (..., 0))
    return P.array_getitem(s, (..., 0)) / P.array_getitem(s, (..., -1))


def _eps_of(s):
    """The machine epsilon of the dtype of `s` (float32 or float64)."""
    one = P.ones((), P.dtype_of(s))
    return P.where(one + 1e-10 == one, 1.1920929e-07, 2.220446049250313e-16)


def linalg_matrix_power(a, n):
    """``np.linalg.matrix_power(a, n)``: by repeated squaring (a loop; ``inv`` for ``n < 0``)."""
    if n < 0:
        return _matrix_power(P.inv(a), -n)
    return _matrix_power(a, n)


def _matrix_power(a, n):
    result = P.broadcast_to(P.eye(P.shape(a)[-1], None, 0, P.dtype_of(a)), P.shape(a))
    while n > 0:
        if n % 2 == 1:
            result = P.matmul(result, a)
        n = n // 2
        if n > 0:
            a = P.matmul(a, a)
    return result


def _vector_norm(x, ord, axis, keepdims):
    ax = -1 if axis is None else axis
    if ord == 2:
        return P.sqrt(P.reduce_sum(x * x, ax, keepdims, None))
    if ord == 1:
        return P.reduce_sum(P.abs_(x), ax, keepdims, None)
    if ord == np.inf:
        return P.reduce_max(P.abs_(x), ax, keepdims)
    if ord == -np.inf:
        return P.reduce_min(P.abs_(x), ax, keepdims)
    if ord == 0:
        return P.astype(P.reduce_sum(x != 0, ax, keepdims, None), P.dtype_of(x * 1.0))
    return P.reduce_sum(P.abs_(x) ** ord, ax, keepdims, None) ** (1.0 / ord)


def _matrix_norm(x, ord, axis, keepdims):
    rows, cols = (-2, -1) if axis is None else axis
    a = P.abs_(x)
    if ord == 1:
        t = P.reduce_max(P.reduce_sum(a, rows, True, None), cols, True)
    elif ord == -1:
        t = P.reduce_min(P.reduce_sum(a, rows, True, None), cols, True)
    elif ord == np.inf:
        t = P.reduce_max(P.reduce_sum(a, cols, True, None), rows, True)
    else:  # -inf (other orders are refused by `_norm_of_matrices`)
        t = P.reduce_min(P.reduce_sum(a, cols, True, None), rows, True)
    if keepdims:
        return t
    return P.squeeze(t, (rows, cols))


def _singular_norm(x, ord, axis, keepdims):
    """The matrix norms of the singular values: 2 (the largest), -2 (the smallest), "nuc"."""
    s = P.svd(P.moveaxis(x, axis, (-2, -1)), False)[1]
    if ord == 2:
        t = P.reduce_max(s, -1, False)
    elif ord == -2:
        t = P.reduce_min(s, -1, False)
    else:
        t = P.reduce_sum(s, -1, False, None)
    if keepdims:
        return P.expand_dims(P.expand_dims(t, axis[0]), axis[1])
    return t


def linalg_norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm(x, ord, axis, keepdims)``.

    Vector norms (``ord`` None, 0, 1, 2, inf, -inf or p) and matrix norms (``ord`` None,
    ``"fro"``, ``"nuc"``, 1, -1, 2, -2, inf, -inf; the last three from the SVD). Other orders
    raise NumPy's `ValueError`, as does an ``ord`` of an array of more than two dimensions
    without an ``axis``. Of integers and booleans, the norm of their float64 values (as NumPy:
    their squares are not computed in their own dtype, which wraps around).
    """
    if isinstance(x, list):  # (NumPy's array of a list of numbers, or of arrays of one shape)
        x = P.stack_list(x, 0)
    elif isinstance(x, tuple):
        x = P.stack(x, 0)
    if not np.issubdtype(P.dtype_of(x), np.inexact):
        x = P.astype(x, "float64")
    if axis is None:
        if ord is None:
            return P.sqrt(P.reduce_sum(x * x, None, keepdims, None))
        if P.ndim(x) == 1:
            return _norm_of_vectors(x, ord, -1, keepdims)
        if P.ndim(x) == 2:
            return _norm_of_matrices(x, ord, (-2, -1), keepdims)
        raise ValueError("Improper number of dimensions to norm.")
    if isinstance(axis, tuple):
        if len(axis) == 1:
            return _norm_of_vectors(x, ord, axis[0], keepdims)
        if len(axis) == 2:
            return _norm_of_matrices(x, ord, axis, keepdims)
        raise ValueError("Improper number of dimensions to norm.")
    return _norm_of_vectors(x, ord, axis, keepdims)


def _norm_of_vectors(x, ord, axis, keepdims):
    if ord is None:
        return P.sqrt(P.reduce_sum(x * x, axis, keepdims, None))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    return _vector_norm(x, ord, axis, keepdims)


def _norm_of_matrices(x, ord, axis, keepdims):
    if ord is None:
        return P.sqrt(P.reduce_sum(x * x, axis, keepdims, None))
    if isinstance(ord, str):
        if ord == "fro" or ord == "f":
            return P.sqrt(P.reduce_sum(x * x, axis, keepdims, None))
        if ord == "nuc":
            return _singular_norm(x, ord, axis, keepdims)
    elif ord == 2 or ord == -2:
        return _singular_norm(x, ord, axis, keepdims)
    elif ord == 1 or ord == -1 or ord == np.inf or ord == -np.inf:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ValueError("Invalid norm order for matrices.")


def _triangular(a, b, lower, trans, unit_diagonal):
    if unit_diagonal:
        i = P.eye(P.shape(a)[-1], None, 0, P.dtype_of(a))
        a = a * (1 - i) + i
    if P.ndim(b) == 1:
        x = P.triangular_solve(a, P.expand_dims(b, -1), lower, trans)
        return P.squeeze(x, -1)
    return P.triangular_solve(a, b, lower, trans)


def solve_triangular(
    a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True
):
    """``scipy.linalg.solve_triangular``: solve ``a x = b`` (``a.T x = b`` for ``trans``)."""
    if isinstance(trans, str):
        return _triangular(a, b, lower, trans != "N", unit_diagonal)
    return _triangular(a, b, lower, trans != 0, unit_diagonal)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """``scipy.linalg.cho_solve((c, lower), b)``: solve ``a x = b`` from a Cholesky factor."""
    c, lower = c_and_lower
    if lower:
        return _triangular(c, _triangular(c, b, True, False, False), True, True, False)
    return _triangular(c, _triangular(c, b, False, True, False), False, False, False)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``scipy.linalg.cho_factor(a, lower)``: ``(c, lower)`` (the other triangle is zero)."""
    if lower:
        return (P.cholesky(a), lower)
    return (P.swapaxes(P.cholesky(a), -1, -2), lower)


def scipy_cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """``scipy.linalg.cholesky(a, lower=False)``: upper triangular by default."""
    if lower:
        return P.cholesky(a)
    return P.swapaxes(P.cholesky(a), -1, -2)


LINALG: dict[Any, Any] = {
    np.linalg.cholesky: linalg_cholesky,
    np.linalg.solve: linalg_solve,
    np.linalg.inv: linalg_inv,
    np.linalg.det: linalg_det,
    np.linalg.slogdet: linalg_slogdet,
    np.linalg.norm: linalg_norm,
    np.linalg.qr: linalg_qr,
    np.linalg.eigh: linalg_eigh,
    np.linalg.eigvalsh: linalg_eigvalsh,
    np.linalg.svd: linalg_svd,
    np.linalg.pinv: linalg_pinv,
    np.linalg.lstsq: linalg_lstsq,
    np.linalg.matrix_power: linalg_matrix_power,
    np.linalg.svdvals: linalg_svdvals,
    np.linalg.matrix_rank: linalg_matrix_rank,
    np.linalg.cond: linalg_cond,
}

linalg_norm.sequence_argument = True  # type: ignore[attr-defined]  # norm([x, y])

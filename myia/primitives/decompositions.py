"""Matrix decompositions: QR, the symmetric eigendecomposition, the SVD and the pseudo-inverse.

Each primitive is one ``np.linalg`` call on the last two axes (NumPy's leading batch axes
batch it), with its shape rule and its closed-form backpropagator (never the differentiation
of the factorization's iterations), written with primitives so that it can be differentiated
again:

- ``Q, R = qr(A)`` (reduced, ``m >= n``): ``dA = (dQ + Q copyup(M)) R^-T`` with
  ``M = dR R^T - Q^T dQ`` and ``copyup(M)`` the symmetric matrix of the upper triangle of `M`.
  A wide matrix (``m < n``) is ``[X | Y]`` with ``X = Q R_1`` square and ``R_2 = Q^T Y``.
- ``w, V = eigh(A)``: ``S = V (diag(dw) + F o (V^T dV)) V^T`` with
  ``F_ij = 1 / (w_j - w_i)`` off the diagonal; NumPy reads one triangle of `A`, so its
  gradient is that triangle of ``S + S^T`` with the diagonal of ``S``. With an eigenvalue
  repeated exactly, its eigenvectors are not unique and a function of them has no gradient:
  ``F`` is 0 for such pairs (the gradients of the eigenvalues stay exact; those through the
  eigenvectors leave out rotations within the repeated eigenspace).
- ``U, s, Vh = svd(A)`` (reduced): Townsend's rule,
  ``dA = U [(F o (U^T dU - dU^T U)) S + diag(ds) + S (F o (V^T dV - dV^T V))] V^T
  + (I - U U^T) dU S^-1 V^T + U S^-1 dV^T (I - V V^T)`` with ``F_ij = 1 / (s_j^2 - s_i^2)``.
  Likewise ``F`` and ``S^-1`` are 0 for exactly repeated or zero singular values (the
  gradients of the singular values stay exact). With ``full_matrices=True`` and a non-square
  matrix, the extra singular vectors are not unique: that gradient is refused.
- ``X = pinv(A)`` (constant rank): ``dA = -X^T dX X^T + (I - A X) dX^T X X^T
  + X^T X dX^T (I - X A)`` (Golub and Pereyra).
"""

from __future__ import annotations

import numpy as np

from ..abstract.data import AbstractArray, AbstractTuple
from ..errors import MyiaShapeError, MyiaTypeError
from ..grad.registry import bprop, nondifferentiable
from ..infer.registry import infer_rule
from ..infer.rulelib import as_array, const_value, shape_str
from .core import primitive
from .linalg import _float_dtype, _square


def _matrices(a, what: str) -> AbstractArray:
    a = as_array(a, what)
    if len(a.shape) < 2:
        raise MyiaShapeError(
            f"{what} expects matrices (..., m, n), not an array of shape {shape_str(a.shape)}"
        )
    if a.dtype.startswith("complex"):
        raise MyiaTypeError(f"{what} of complex arrays is not supported")
    return a


# The decompositions ---------------------------------------------------------------------------


@primitive
def qr(a):
    """``np.linalg.qr(a)`` (reduced): ``(q, r)`` with ``q`` (..., m, k), ``r`` (..., k, n)."""
    return tuple(np.linalg.qr(a))


@primitive
def eigh(a, lower=True):
    """``np.linalg.eigh(a, UPLO)``: ascending eigenvalues ``w`` and eigenvectors ``v``.

    Only the lower triangle of `a` is read (the upper one when `lower` is false).
    """
    w, v = np.linalg.eigh(a, "L" if lower else "U")
    return w, v


@primitive
def svd(a, full_matrices=False):
    """``np.linalg.svd(a, full_matrices)``: ``(u, s, vh)``, singular values descending."""
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return u, s, vh


@primitive
def pinv(a, rcond=None):
    """``np.linalg.pinv(a, rcond)``: the Moore-Penrose pseudo-inverse (..., n, m)."""
    if rcond is None:
        return np.linalg.pinv(a)
    return np.linalg.pinv(a, rcond)


@infer_rule(qr)
def _infer_qr(a):
    a = _matrices(a, "np.linalg.qr")
    *batch, m, n = a.shape
    k, dt = min(m, n), _float_dtype(a.dtype)
    return AbstractTuple((AbstractArray(dt, (*batch, m, k)), AbstractArray(dt, (*batch, k, n))))


@infer_rule(eigh)
def _infer_eigh(a, lower):
    a = _square(a, "np.linalg.eigh")
    const_value(lower, "UPLO of np.linalg.eigh", (bool, int))
    dt = _float_dtype(a.dtype)
    return AbstractTuple((AbstractArray(dt, a.shape[:-1]), AbstractArray(dt, a.shape)))


@infer_rule(svd)
def _infer_svd(a, full_matrices):
    a = _matrices(a, "np.linalg.svd")
    full = const_value(full_matrices, "full_matrices of np.linalg.svd", (bool, int))
    *batch, m, n = a.shape
    k, dt = min(m, n), _float_dtype(a.dtype)
    u = AbstractArray(dt, (*batch, m, m if full else k))
    vh = AbstractArray(dt, (*batch, n if full else k, n))
    return AbstractTuple((u, AbstractArray(dt, (*batch, k)), vh))


@infer_rule(pinv)
def _infer_pinv(a, rcond):
    a = _matrices(a, "np.linalg.pinv")
    const_value(rcond, "rcond of np.linalg.pinv", (float, int, type(None)))
    *batch, m, n = a.shape
    return AbstractArray(_float_dtype(a.dtype), (*batch, n, m))


@primitive
def svd_full_gradient(a):
    """Refuse, at compile time, the gradient of ``svd(a, full_matrices=True)`` of a rectangle.

    Its infer rule raises: the extra singular vectors are not unique, so a gradient through
    them has no meaning (one that ignored them would be silently wrong).
    """
    raise AssertionError("never called: its infer rule refuses it")


@infer_rule(svd_full_gradient)
def _infer_svd_full_gradient(a):
    raise MyiaTypeError(
        "the gradient of np.linalg.svd(full_matrices=True) of a non-square matrix is not "
        "supported (its extra singular vectors are not unique): pass full_matrices=False"
    )


nondifferentiable(svd_full_gradient)


# Backpropagators ------------------------------------------------------------------------------


def _t(x):
    return swapaxes(x, -1, -2)


def _eye_of(x):
    return eye(shape(x)[-1], None, 0, dtype_of(x))


def _safe_inverse(d):
    """``1 / d``, and 0 where ``d`` is 0 (the diagonal, and pairs of repeated values)."""
    zero = d == 0
    return where(zero, 0.0, 1.0 / where(zero, 1.0, d))


def _qr_tall(q, r, dq, dr):
    m = matmul(dr, _t(r)) - matmul(_t(q), dq)
    n = triu(m, 0) + _t(triu(m, 1))
    x = dq + matmul(q, n)
    return _t(triangular_solve(r, _t(x), False, False))  # x R^-T


@bprop(qr)
def bprop_qr(a, out, dout):
    q, r = out
    dq, dr = dout
    m, n = shape(a)[-2], shape(a)[-1]
    if m >= n:
        return (_qr_tall(q, r, dq, dr),)
    # a = [x | y], x = q r1 (square), r2 = q^T y.
    r1 = r[..., :, :m]
    y = a[..., :, m:]
    dr2 = dr[..., :, m:]
    dx = _qr_tall(q, r1, dq + matmul(y, _t(dr2)), dr[..., :, :m])
    return (concatenate((dx, matmul(q, dr2)), -1),)


@bprop(eigh)
def bprop_eigh(a, lower, out, dout):
    w, v = out
    dw, dv = dout
    i = _eye_of(v)
    f = _safe_inverse(expand_dims(w, -2) - expand_dims(w, -1))
    inner = f * matmul(_t(v), dv) + i * expand_dims(dw, -2)
    s = matmul(v, matmul(inner, _t(v)))
    g = s + _t(s)
    if lower:
        return (tril(g, 0) - 0.5 * g * i, gzeros(lower))
    return (triu(g, 0) - 0.5 * g * i, gzeros(lower))


@bprop(svd)
def bprop_svd(a, full_matrices, out, dout):
    u, s, vh = out
    du, ds, dvh = dout
    m, n = shape(a)[-2], shape(a)[-1]
    if full_matrices:
        if m != n:
            return (svd_full_gradient(a), gzeros(full_matrices))
    v, dv = _t(vh), _t(dvh)
    i = eye(shape(s)[-1], None, 0, dtype_of(s))
    s_row = expand_dims(s, -2)  # s_j, along the columns
    s_col = expand_dims(s, -1)  # s_i, along the rows
    f = _safe_inverse(s_row * s_row - s_col * s_col)
    utdu = matmul(_t(u), du)
    vtdv = matmul(_t(v), dv)
    j = f * (utdu - _t(utdu))
    k = f * (vtdv - _t(vtdv))
    inner = j * s_row + i * expand_dims(ds, -2) + s_col * k
    da = matmul(u, matmul(inner, vh))
    if m > n:  # (I - U U^T) dU S^-1 V^T
        da = da + matmul((du - matmul(u, utdu)) * _safe_inverse(s_row), vh)
    if m < n:  # U S^-1 dV^T (I - V V^T)
        da = da + matmul(u, (_t(dv) - matmul(_t(vtdv), vh)) * _safe_inverse(s_col))
    return (da, gzeros(full_matrices))


@bprop(pinv)
def bprop_pinv(a, rcond, out, dout):
    x = out
    dxt = _t(dout)
    t1 = -matmul(_t(x), matmul(dout, _t(x)))
    t2 = matmul(dxt - matmul(a, matmul(x, dxt)), matmul(x, _t(x)))
    t3 = matmul(matmul(_t(x), x), dxt - matmul(matmul(dxt, x), a))
    return (t1 + t2 + t3, gzeros(rcond))


from .array import concatenate, dtype_of, expand_dims, matmul, shape, swapaxes  # noqa: E402
from .grad import gzeros  # noqa: E402
from .linalg import eye, triangular_solve, tril, triu  # noqa: E402
from .scalar import where  # noqa: E402

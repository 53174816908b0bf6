"""Linear algebra primitives: ``np.linalg`` and triangular solves, with analytic gradients.

Every primitive works on the last two axes of its arguments, with NumPy's leading batch axes.
The backpropagators are the closed-form rules (never the differentiation of a factorization
algorithm), written with these same primitives so that they can be differentiated again:

- ``L = cholesky(A)``: ``S = L^-T Phi(L^T dL) L^-1``, with ``Phi`` (`lower_half`) the lower
  triangle with a halved diagonal; NumPy reads only the lower triangle of ``A``, so its
  gradient is ``Phi(S + S^T)`` (Murray, 2016): a triangular product and two triangular
  solves, with no inverse.
- ``X = solve(A, B)``: ``dB = solve(A^T, dX)``, ``dA = -dB X^T``.
- ``X = triangular_solve(A, B, lower, trans)``: the same, masked to ``A``'s triangle.
- ``Y = triangular_matmul(A, B, lower, trans)`` (``op(tri(A)) @ B``, half a matmul's work):
  ``dB = op(tri(A))^T dY``, ``dA = tri(dY B^T)`` (``tri(B dY^T)`` for the transpose).
- ``inv``: ``dA = -X^T dX X^T``; ``det``: ``dA = dd * det * inv(A)^T``; ``slogdet``:
  ``dA = dlogabsdet * inv(A)^T`` (the sign has no derivative).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from ..abstract.data import AbstractArray, AbstractTuple
from ..abstract.lattice import promote
from ..errors import MyiaShapeError, MyiaTypeError
from ..grad.registry import bprop, nondifferentiable
from ..infer.registry import infer_rule
from ..infer.rulelib import (
    array_result,
    as_array,
    as_dtype,
    broadcast_shapes,
    const_dtype,
    const_value,
    shape_str,
)
from .core import primitive

#: Whether triangular solves are BLAS's (SciPy is installed): they raise nothing (an exactly
#: singular matrix gives infinities), where ``np.linalg.solve`` raises ``LinAlgError``.
BLAS_SOLVES = importlib.util.find_spec("scipy") is not None


_blas_funcs: Any = None


def _get_blas_funcs(names: tuple[str, ...], arrays: tuple[np.ndarray, ...]) -> Any:
    """SciPy's ``get_blas_funcs`` (SciPy has the fast triangular solve, BLAS's trsm).

    SciPy is imported at the first triangular solve or product, not by ``import myia``.
    """
    global _blas_funcs
    if _blas_funcs is None:
        from scipy.linalg.blas import get_blas_funcs

        _blas_funcs = get_blas_funcs
    return _blas_funcs(names, arrays)


def _trsm(a: np.ndarray, b: np.ndarray, lower: bool, trans: bool) -> np.ndarray | None:
    """``op(a)^-1 @ b`` for 2-d float arrays by BLAS's trsm, without copying `a`, or None.

    The problem is solved transposed, ``x.T @ op(a).T = b.T``, so that C-ordered arrays are
    the Fortran-ordered matrices BLAS reads (``a.T`` is upper triangular where `a` is lower).
    A Fortran-ordered `b` (the transpose of a C-ordered array) is solved as it is, with
    ``op(a) = op'(a.T)``: neither is copied.
    """
    if not BLAS_SOLVES or a.dtype != b.dtype or a.dtype.char not in "fd":
        return None
    (trsm,) = _get_blas_funcs(("trsm",), (a, b))
    if b.flags.f_contiguous and not b.flags.c_contiguous:
        return trsm(1.0, a.T, b, side=0, lower=not lower, trans_a=0 if trans else 1)
    x = trsm(1.0, a.T, b.T, side=1, lower=not lower, trans_a=1 if trans else 0)
    return x.T


def _trmm(a: np.ndarray, b: np.ndarray, lower: bool, trans: bool) -> np.ndarray | None:
    """``op(tri(a)) @ b`` for 2-d float arrays by BLAS's trmm (half a matmul's work), or None."""
    if not BLAS_SOLVES or a.dtype != b.dtype or a.dtype.char not in "fd":
        return None
    (trmm,) = _get_blas_funcs(("trmm",), (a, b))
    x = trmm(1.0, a.T, b.T, side=1, lower=not lower, trans_a=1 if trans else 0)
    return x.T


def _scalar(x):
    return x[()] if type(x) is np.ndarray and x.ndim == 0 else x


def _float_dtype(*dtypes: str) -> str:
    """The dtype of a linear algebra result: float32 stays float32, integers give float64."""
    dt = promote(*((d, False) for d in dtypes))[0]
    return dt if dt in ("float32", "float64") else "float64"


def _square(a, what: str) -> AbstractArray:
    a = as_array(a, what)
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise MyiaShapeError(
            f"{what} expects square matrices (..., n, n), not an array of shape "
            f"{shape_str(a.shape)}"
        )
    if a.dtype.startswith("complex"):
        raise MyiaTypeError(f"{what} of complex arrays is not supported")
    return a


# Factorizations and inverses ------------------------------------------------------------------


@primitive
def cholesky(a):
    """``np.linalg.cholesky(a)``: the lower triangular ``L`` with ``L @ L.T == a``.

    Only the lower triangle of `a` is read; a matrix that is not positive definite raises
    ``numpy.linalg.LinAlgError``.
    """
    return np.linalg.cholesky(a)


@primitive
def inv(a):
    """``np.linalg.inv(a)``."""
    return np.linalg.inv(a)


@primitive
def det(a):
    """``np.linalg.det(a)``."""
    return _scalar(np.linalg.det(a))


@primitive
def slogdet(a):
    """``np.linalg.slogdet(a)`` as a tuple ``(sign, logabsdet)``."""
    sign, logdet = np.linalg.slogdet(a)
    return _scalar(sign), _scalar(logdet)


@primitive
def solve(a, b):
    """``np.linalg.solve(a, b)``: `b` is a vector (n,) or matrices (..., n, k)."""
    return np.linalg.solve(a, b)


@primitive
def triangular_solve(a, b, lower=True, trans=False):
    """Solve ``op(a) @ x = b`` for `x`, with `a` triangular (only that triangle is read).

    ``op(a)`` is `a`, or its transpose when `trans`. `b` is (..., n, k), with batch axes
    broadcasting against those of `a`. With SciPy installed, BLAS's solver (an exactly singular
    `a` gives infinities, as in BLAS); without, ``np.linalg.solve`` on the triangle.
    """
    a, b = np.asarray(a), np.asarray(b)
    dt = np.result_type(a, b, np.float32)
    if a.ndim == 2 and b.ndim == 2:
        x = _trsm(a.astype(dt, copy=False), b.astype(dt, copy=False), lower, trans)
        if x is not None:
            return x
    elif BLAS_SOLVES and dt.char in "fd":
        shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = np.broadcast_to(a, shape + a.shape[-2:]).astype(dt, copy=False)
        b = np.broadcast_to(b, shape + b.shape[-2:]).astype(dt, copy=False)
        out = np.empty(shape + b.shape[-2:], dt)
        for i in np.ndindex(*shape):  # over the batch (BLAS solves one system at a time)
            out[i] = _trsm(a[i], b[i], lower, trans)
        return out
    t = np.tril(a) if lower else np.triu(a)
    if trans:
        t = np.swapaxes(t, -1, -2)
    return np.asarray(np.linalg.solve(t, b), dt)


@primitive
def triangular_matmul(a, b, lower=True, trans=False):
    """``op(t) @ b``, ``t`` the lower (or upper) triangle of `a`, transposed when `trans`.

    BLAS's triangular product (half a matmul's work) where SciPy is installed.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 2 and b.ndim == 2:
        dt = np.result_type(a, b, np.float32)
        x = _trmm(a.astype(dt, copy=False), b.astype(dt, copy=False), lower, trans)
        if x is not None:
            return x
    t = np.tril(a) if lower else np.triu(a)
    return np.matmul(np.swapaxes(t, -1, -2) if trans else t, b)


@primitive
def lower_half(x):
    """The lower triangle of the last two axes of `x`, its diagonal halved (Murray's ``Phi``).

    Linear and self-adjoint (it scales each element by 1, 1/2 or 0): its own gradient.
    """
    out = np.tril(x)
    if out.dtype.kind != "f":
        out = out.astype(np.float64)
    n = min(out.shape[-2:])
    idx = np.arange(n)
    out[..., idx, idx] *= 0.5
    return out


@infer_rule(lower_half)
def _infer_lower_half(x):
    x = as_array(x, "lower_half")
    if len(x.shape) < 2:
        raise MyiaShapeError(f"lower_half expects matrices, not an array of shape {x.shape}")
    return AbstractArray(_float_dtype(x.dtype), x.shape)


@infer_rule(cholesky, inv)
def _infer_square(a):
    a = _square(a, "np.linalg")
    return AbstractArray(_float_dtype(a.dtype), a.shape)


@infer_rule(det)
def _infer_det(a):
    a = _square(a, "np.linalg.det")
    return array_result(_float_dtype(a.dtype), a.shape[:-2])


@infer_rule(slogdet)
def _infer_slogdet(a):
    a = _square(a, "np.linalg.slogdet")
    r = array_result(_float_dtype(a.dtype), a.shape[:-2])
    return AbstractTuple((r, r))


def _solve_shapes(what, a, b, vector_ok=True):
    a, b = _square(a, what), as_array(b, what)
    n = a.shape[-1]
    if vector_ok and len(b.shape) == 1:
        if b.shape[0] != n:
            raise MyiaShapeError(
                f"Incompatible shapes in {what}: {shape_str(a.shape)} and {shape_str(b.shape)}"
            )
        return a, b, a.shape[:-1]
    if len(b.shape) < 2 or b.shape[-2] != n:
        raise MyiaShapeError(
            f"Incompatible shapes in {what}: {shape_str(a.shape)} and {shape_str(b.shape)} "
            f"(b must be a vector ({n},) or matrices (..., {n}, k))"
        )
    batch = broadcast_shapes(what, a.shape[:-2], b.shape[:-2])
    return a, b, (*batch, n, b.shape[-1])


@infer_rule(solve)
def _infer_solve(a, b):
    a, b, shape = _solve_shapes("np.linalg.solve", a, b)
    return AbstractArray(_float_dtype(a.dtype, b.dtype), shape)


@infer_rule(triangular_solve, triangular_matmul)
def _infer_triangular_solve(a, b, lower, trans):
    const_value(lower, "lower of a triangular product or solve", (bool, int))
    const_value(trans, "trans of a triangular product or solve", (bool, int))
    a, b, shape = _solve_shapes("a triangular product or solve", a, b, vector_ok=False)
    return AbstractArray(_float_dtype(a.dtype, b.dtype), shape)


# Triangles and identities ---------------------------------------------------------------------


@primitive
def tril(a, k=0):
    """``np.tril(a, k)``: the lower triangle of the last two axes (zeros above diagonal `k`)."""
    return np.tril(a, k)


@primitive
def triu(a, k=0):
    """``np.triu(a, k)``: the upper triangle of the last two axes."""
    return np.triu(a, k)


@primitive
def eye(n, m=None, k=0, dtype=None):
    """``np.eye(n, m, k, dtype)`` (float64 by default); the sizes are compile-time constants."""
    if dtype is None:
        return np.eye(n, m, k)
    return np.eye(n, m, k, dtype=dtype if isinstance(dtype, np.dtype) else as_dtype(dtype))


@infer_rule(tril, triu)
def _infer_triangle(a, k):
    a = as_array(a, "tril/triu")
    const_value(k, "the diagonal of tril/triu", int)
    if len(a.shape) < 2:
        raise MyiaShapeError(
            f"tril/triu expect matrices (..., m, n), not an array of shape {shape_str(a.shape)}"
        )
    return a


@infer_rule(eye)
def _infer_eye(n, m, k, dtype):
    n = const_value(n, "the size of eye", int)
    mv = const_value(m, "the size of eye")
    const_value(k, "the diagonal of eye", int)
    dt = const_dtype(dtype, "eye") or "float64"
    if mv is not None and not isinstance(mv, int):
        raise MyiaTypeError(f"the size of eye must be an int, not {mv!r}")
    if n < 0 or (mv is not None and mv < 0):
        raise MyiaShapeError("eye: negative dimensions are not allowed")
    return AbstractArray(dt, (n, n if mv is None else mv))


nondifferentiable(eye)


# Backpropagators ------------------------------------------------------------------------------


def _t(x):
    return swapaxes(x, -1, -2)


@bprop(tril)
def bprop_tril(a, k, out, dout):
    return (unbroadcast(tril(dout, k), a), gzeros(k))


@bprop(triu)
def bprop_triu(a, k, out, dout):
    return (unbroadcast(triu(dout, k), a), gzeros(k))


@bprop(cholesky)
def bprop_cholesky(a, out, dout):
    p = lower_half(triangular_matmul(out, tril(dout, 0), True, True))  # Phi(L^T dL)
    y = triangular_solve(out, p, True, True)  # L^-T P
    st = triangular_solve(out, _t(y), True, True)  # (L^-T P L^-1)^T
    return (unbroadcast(lower_half(st + _t(st)), a),)


@bprop(lower_half)
def bprop_lower_half(x, out, dout):
    return (unbroadcast(lower_half(dout), x),)


@bprop(inv)
def bprop_inv(a, out, dout):
    t = _t(out)
    return (unbroadcast(-matmul(t, matmul(dout, t)), a),)


@bprop(det)
def bprop_det(a, out, dout):
    s = expand_dims(expand_dims(dout * out, -1), -1)
    return (unbroadcast(s * _t(inv(a)), a),)


@bprop(slogdet)
def bprop_slogdet(a, out, dout):
    s = expand_dims(expand_dims(dout[1], -1), -1)
    return (unbroadcast(s * _t(inv(a)), a),)


@bprop(solve)
def bprop_solve(a, b, out, dout):
    if ndim(b) == 1:
        db = solve(_t(a), dout)
        da = -expand_dims(db, -1) * expand_dims(out, -2)
        return (unbroadcast(da, a), unbroadcast(db, b))
    db = solve(_t(a), dout)
    return (unbroadcast(-matmul(db, _t(out)), a), unbroadcast(db, b))


@bprop(triangular_matmul)
def bprop_triangular_matmul(a, b, lower, trans, out, dout):
    db = triangular_matmul(a, dout, lower, not trans)
    if trans:
        g = matmul(b, _t(dout))
    else:
        g = matmul(dout, _t(b))
    if lower:
        da = tril(g, 0)
    else:
        da = triu(g, 0)
    return (unbroadcast(da, a), unbroadcast(db, b), gzeros(lower), gzeros(trans))


@bprop(triangular_solve)
def bprop_triangular_solve(a, b, lower, trans, out, dout):
    db = triangular_solve(a, dout, lower, not trans)
    if shape(out)[-1] == 1:  # one right-hand side: an outer product of vectors, negated first
        if trans:
            g = out * _t(-db)
        else:
            g = (-db) * _t(out)
    elif trans:
        g = -matmul(out, _t(db))
    else:
        g = -matmul(db, _t(out))
    if lower:
        da = tril(g, 0)
    else:
        da = triu(g, 0)
    return (unbroadcast(da, a), unbroadcast(db, b), gzeros(lower), gzeros(trans))


from .array import expand_dims, matmul, ndim, shape, swapaxes  # noqa: E402
from .grad import gzeros, unbroadcast  # noqa: E402

"""One table over the NumPy functions ML code uses: values, dtypes, shapes and gradients.

Each entry of `TABLE` is a function written with NumPy (or SciPy), the NumPy names it covers,
its group (for docs/numpy.md) and argument specs. For each, the test checks that the shape
and dtype inference gives and Myia's value on every backend (``numpy``, ``debug``, ``jax``
when JAX is installed) are NumPy's, and, for differentiable entries, the gradient of
``<fn(*args), ct>`` (a random cotangent ``ct``) against finite differences at the first and
second order with `myia.testing.check_grad`, on every backend too (the backends but
``numpy`` marked slow). `UNSUPPORTED` (in tests/numpy_coverage.py) lists
the functions still refused and why; docs/numpy.md is generated from both (`python
tests/test_numpy_more.py` writes it, and `test_the_doc_is_the_table` checks it is up to date).
The functions of the later entries are in tests/numpy_more_cases.py.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy_coverage import DOC, render_doc
from numpy_more_cases import (
    angles,
    angles_of_ints,
    array_of_tuple,
    array_split,
    convolve,
    convolve_of_ints,
    correlations,
    covariances,
    covariances_of_other_dtypes,
    cross,
    cross_of_2_vectors,
    cross_of_ints,
    cube_roots,
    cumprod,
    differences,
    differences_of_ints,
    eigh,
    eigh_upper,
    eigvalsh,
    interp,
    interp_of_other_dtypes,
    kron,
    lstsq,
    lstsq_rank,
    matrix_power,
    meshgrid,
    nan_extrema,
    nan_reductions,
    nan_reductions_of_ints,
    nan_reductions_of_nans,
    nan_to_num,
    norm_spectral,
    pad,
    pinv,
    polyval,
    polyval_of_ints,
    powers,
    powers_of_ints,
    qr,
    qr_r,
    quantiles,
    remainders,
    remainders_of_ints,
    repeat,
    searchsorted,
    sinc,
    spacings,
    spacings_of_ints,
    splits,
    svd,
    svd_full_square,
    svd_values,
    tensordot,
    tile,
    tolist_sum,
    trapezoid,
    trapezoid_of_ints,
    windows,
)
from test_arrays import RecordingInferrer, as_myia_result, check_abstract, check_value

from myia import grad, myia, vmap
from myia.abstract import to_abstract
from myia.errors import MyiaShapeError, MyiaTypeError
from myia.frontend import parse
from myia.primitives import array_extra, decompositions, linalg, tiling
from myia.primitives import special as special_prims
from myia.testing import check_grad, vdot

try:
    import scipy.linalg as sl
    import scipy.special as ss
except ImportError:  # pragma: no cover - depends on the environment
    sl = ss = None

try:
    import jax
except ImportError:  # pragma: no cover - depends on the environment
    jax = None

# NumPy's warnings on the table's inputs: np.cross of 2-vectors (deprecated by NumPy 2.0,
# still computed), slices of NaNs only (np.nanmean, np.nanmax: NaN).
pytestmark = [
    pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors"),
    pytest.mark.filterwarnings("ignore:Mean of empty slice"),
    pytest.mark.filterwarnings("ignore:All-NaN slice encountered"),
]

BACKENDS = ["numpy", "debug"] + (["jax"] if jax is not None else [])

# Arguments ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class A:
    """A random array: ``normal``, ``pos`` (in [0.5, 2]), ``spd`` (symmetric positive definite
    matrices, batched on the leading axes), ``tri`` (well-conditioned lower triangular),
    ``sep`` (distinct values, no ties), ``int``, ``special`` (with nan and infinities)."""

    shape: tuple[int, ...]
    kind: str = "normal"
    dtype: str = "float64"

    def make(self, rng: np.random.Generator) -> Any:
        s = self.shape
        if self.kind == "spd":
            m = rng.standard_normal(s)
            v = m @ np.swapaxes(m, -1, -2) + s[-1] * np.eye(s[-1])
        elif self.kind == "tri":
            v = np.tril(rng.standard_normal(s)) + 3 * np.eye(s[-1])
        elif self.kind == "sep":
            n = int(np.prod(s))
            v = rng.permutation(n).reshape(s) * 0.1 + rng.uniform(0, 0.05, s)
        elif self.kind == "int":
            v = rng.integers(-3, 4, s)
        elif self.kind == "special":
            v = rng.standard_normal(s)
            v.flat[:3] = [np.nan, np.inf, -np.inf]
        elif self.kind == "unit01":
            v = rng.uniform(0.1, 0.9, s)
        elif self.kind == "pos":
            v = rng.uniform(0.5, 2.0, s)
        else:
            v = rng.standard_normal(s)
        return np.asarray(v).astype(self.dtype)[()]


def f(*shape: int, kind: str = "normal") -> A:
    return A(shape, kind)


def f32(*shape: int, kind: str = "normal") -> A:
    return A(shape, kind, "float32")


def i64(*shape: int) -> A:
    return A(shape, "int", "int64")


def make_args(spec: tuple[Any, ...], seed: int) -> tuple[Any, ...]:
    rng = np.random.default_rng(seed)
    return tuple(s.make(rng) if isinstance(s, A) else s for s in spec)


# Functions written with NumPy -----------------------------------------------------------------


def cholesky(a):
    return np.linalg.cholesky(a)


def cholesky_upper(a):
    return np.linalg.cholesky(a, upper=True)


def solve(a, b):
    return np.linalg.solve(a, b)


def inv(a):
    return np.linalg.inv(a)


def det(a):
    return np.linalg.det(a)


def slogdet(a):
    return np.linalg.slogdet(a)[1]


def slogdet_sign(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign, logdet


def norm(x):
    return np.linalg.norm(x)


def norm_vector_ords(x):
    return (
        np.linalg.norm(x, 1),
        np.linalg.norm(x, 2),
        np.linalg.norm(x, np.inf),
        np.linalg.norm(x, ord=3),
    )


def norm_axis(x):
    return np.linalg.norm(x, axis=-1), np.linalg.norm(x, ord=1, axis=0, keepdims=True)


def norm_matrix(x):
    return np.linalg.norm(x, "fro"), np.linalg.norm(x, 1), np.linalg.norm(x, np.inf)


def solve_triangular(a, b):
    return sl.solve_triangular(a, b, lower=True)


def solve_triangular_trans(a, b):
    return sl.solve_triangular(a.T, b, trans="T")


def solve_triangular_vector(a, b):
    return sl.solve_triangular(a, b, lower=True, trans=1)


def cho_solve(a, b):
    return sl.cho_solve((np.linalg.cholesky(a), True), b)


def cho_factor_solve(a, b):
    return sl.cho_solve(sl.cho_factor(a), b)


def einsum_matmul(x, y):
    return np.einsum("ij,jk->ik", x, y)


def einsum_implicit(x, y):
    return np.einsum("ij,kj", x, y)


def einsum_ellipsis(x, y):
    return np.einsum("...ij,...jk->...ik", x, y)


def einsum_reduce(x):
    return np.einsum("ijk->j", x)


def einsum_three(x, y, z):
    return np.einsum("i,ij,j->", x, y, z)


def einsum_outer_sum(x, y):
    return np.einsum("i,j->ij", x, y) + np.einsum("bi,bi->b", y[None, :3] * x, x[None, :])


def einsum_trace(x):
    return np.einsum("ii->", x), np.einsum("ii->i", x)


def einsum_repeats(x, y):
    return np.einsum("iij,jj->ij", x, y) + np.einsum("iii->i", x[:, :, :3])[:, None]


def cumsum(x):
    return np.cumsum(x, axis=1), x.cumsum(axis=-1)


def cumsum_flat(x):
    return np.cumsum(x)


def sort(x):
    return np.sort(x), np.sort(x, axis=0)


def sort_flat(x):
    return np.sort(x, axis=None)


def argsort(x):
    return np.argsort(x), x.argsort(axis=0)


def take_along_axis(x):
    return np.take_along_axis(x, np.argsort(x, axis=1)[:, :2], axis=1)


def var_std(x):
    return np.var(x), np.std(x, axis=0), np.var(x, axis=1, ddof=1, keepdims=True), x.std(ddof=1)


def logaddexp(x, y):
    return np.logaddexp(x, y)


def square(x):
    return np.square(x)


def eye(x):
    return np.eye(3), np.eye(2, 4, k=1), np.identity(3, dtype=np.float32), np.eye(x.shape[0])


def eye_mul(x):
    return x * np.eye(x.shape[-1])


def diag(x):
    return np.diag(x), np.diag(x, 1), np.diagonal(x, -1), x.diagonal()


def diag_vector(v):
    return np.diag(v), np.diag(v, k=-1)


def tril_triu(x):
    return np.tril(x), np.triu(x, 1), np.tril(x, -1)


def nan_tests(x):
    return np.isnan(x), np.isinf(x), np.isfinite(x)


def any_all(x):
    return np.any(x > 0), np.all(x > -10), np.any(x > 1, axis=0), x.all(axis=1, keepdims=True)


def float32(x):
    return np.float32(x), np.float64(x) * 2


def by_dtype(x):
    # A dtype is known at compile time: each comparison is a constant, one branch compiled.
    if x.dtype == np.float32:
        y = x * np.float32(2.0)
    elif x.dtype != np.float64 or not np.issubdtype(x.dtype, np.floating):
        y = x.undefined  # never inferred: the condition is a constant False
    else:
        y = x * x
    z = np.zeros(x.shape, dtype=x.dtype) + y.astype(x.dtype)
    return z, x.dtype == y.dtype, x.dtype == float, np.issubdtype(x.dtype, np.float32)


def broadcast_to(x):
    return np.broadcast_to(x, (2, 3, 4))


def trunc(x):
    return np.trunc(x)


def outer(x, y):
    return np.outer(x, y)


def trace(x):
    return np.trace(x), x.trace(offset=1)


def math_more(x, y):
    return (
        np.reciprocal(x),
        np.log2(x),
        np.log10(x),
        np.exp2(y),
        np.logaddexp2(x, y),
        np.hypot(x, y),
    )


def inverse_hyperbolic(x, y):
    return (
        np.arcsinh(y),
        np.arccosh(x + 1.0),
        np.arctanh(x / 4),
        np.copysign(x, y),
        np.copysign(y, -1.0),
    )


def math_of_ints(x):
    # NumPy's math of integers and booleans computes in the smallest float that holds them
    # (float16 for int8 and bool), np.reciprocal and np.round keep integers.
    b = x > 0
    return (
        np.reciprocal(np.where(x == 0, 2, x)),
        np.sqrt(x * x),
        np.exp(b),
        np.exp2(x),
        np.logaddexp(x, b),
        np.logaddexp(b, b),
        np.arctan2(x, b),
        np.hypot(x, b),
        np.hypot(x, 3),
        np.hypot(b, 3),
        np.round(x),
        np.round(x * 7, -1),
        np.round(x[0, ...], 2),
    )


def of_python_numbers(x, n):
    # NumPy makes a Python number an array first: np.clip(3, -1, 2) is np.int64(2), and
    # its dtype then mixes as an array's (np.minimum(np.int32(5), that) is an int64).
    return (
        np.clip(x, 0.0, 1.0),
        np.clip(n, -1, 2),
        np.minimum(np.int32(5), np.clip(-n, -1, 2)),
        np.clip(n, -1, 2.5),
        np.square(n > 0),
        np.square(x > np.array([0.0, 3.0])),
    )


def item(x):
    # a.item(): a Python float, int or bool (loss.item() in a training loop).
    return x[0].item() * 2, np.sum(x).item(), (x > 0)[:1].item(), (x * 10).astype(int)[1:2].item()


def heaviside(x):
    return np.heaviside(x, 0.5)


def close(x, y):
    return np.isclose(x, x + 1e-9), np.isclose(x, y), np.allclose(x, x * (1 + 1e-7))


def ptp_average(x, w):
    return np.ptp(x), np.ptp(x, axis=0), np.average(x), np.average(x, axis=1, weights=w)


def shapes_more(x, y):
    return (
        np.ravel(x),
        np.atleast_2d(y),
        np.atleast_2d(x),
        np.hstack((x, x)),
        np.hstack((y, y)),
        np.vstack((y, y)),
        np.vstack((x, x)),
        np.column_stack((y, y)),
        np.empty_like(x) * 0.0,
        np.vstack((x, y)),  # vectors are rows, matrices mixed with them
        np.hstack((y, 2.0)),  # scalars are vectors of one element
        np.column_stack((x.T, y)),  # vectors are columns
    )


def products_more(x, y):
    return np.vdot(x, x), np.inner(y, y), np.inner(x, x), np.inner(x, y)


def linspace(a, b):
    return np.linspace(a, b, 5), np.linspace(0.0, 1.0, 4, endpoint=False)


def special(x):
    return (
        ss.logsumexp(x),
        ss.logsumexp(x, axis=1),
        ss.logsumexp(x, axis=0, keepdims=True),
        ss.expit(x),
        ss.softmax(x, axis=1),
        ss.log_softmax(x, axis=-1),
        ss.softmax(x),
    )


def special_functions(x):
    return (
        ss.erf(x),
        ss.erfc(x),
        ss.gammaln(x),
        ss.digamma(x),
        ss.psi(x),
        ss.polygamma(1, x),
        ss.polygamma(0, x),
    )


def math_erf(x, y):
    return math.erf(x) + math.erfc(y) * x, math.erfc(x * y)


def math_lgamma(x, y):
    return math.lgamma(x) * y, math.lgamma(y)


def logit(p):
    return ss.logit(p)


def reorder(x):
    return (
        np.flip(x),
        np.flip(x, 1),
        np.roll(x, 2),
        np.roll(x, -1, axis=0),
        np.moveaxis(x, 0, -1),
        np.moveaxis(x, (0, 1), (2, 0)),
    )


def rounding(x):
    return np.rint(x), np.round(x), np.round(x, 2), x.round(1)


# The table ------------------------------------------------------------------------------------


@dataclasses.dataclass
class Case:
    """`fn` covers the NumPy names `names` of group `group`, called on each of `args`.

    The gradient is checked up to order `order` on the first arguments (first order on the
    others); 0 for functions with no derivative (their values are still checked).
    """

    names: str
    group: str
    fn: Callable[..., Any]
    args: list[tuple[Any, ...]]
    order: int = 2
    prims: tuple[str, ...] = ()
    scipy: bool = False
    options: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.fn.__name__


SPD = f(4, 4, kind="spd")
TABLE = [
    # np.linalg
    Case("np.linalg.cholesky", "linalg", cholesky, [(SPD,), (f(2, 3, 3, kind="spd"),)],
         prims=("cholesky",)),
    Case("np.linalg.cholesky(upper=True)", "linalg", cholesky_upper, [(SPD,)]),
    Case("np.linalg.solve", "linalg", solve,
         [(SPD, f(4, 2)), (SPD, f(4)), (f(2, 3, 3, kind="spd"), f(3, 1))], prims=("solve",)),
    Case("np.linalg.inv", "linalg", inv, [(SPD,), (f(2, 3, 3, kind="spd"),)], prims=("inv",)),
    Case("np.linalg.det", "linalg", det, [(SPD,), (f(2, 3, 3, kind="spd"),)], prims=("det",)),
    Case("np.linalg.slogdet", "linalg", slogdet, [(SPD,), (f(2, 3, 3, kind="spd"),)],
         prims=("slogdet",)),
    Case("np.linalg.slogdet (the sign)", "linalg", slogdet_sign, [(f(3, 3),)], order=0),
    Case("np.linalg.norm", "linalg", norm, [(f(5),), (f(3, 4),), (f32(2, 3, 2),)]),
    Case("np.linalg.norm(ord=1, 2, inf, p)", "linalg", norm_vector_ords, [(f(5, kind="sep"),)]),
    Case("np.linalg.norm(axis=...)", "linalg", norm_axis, [(f(3, 4),)]),
    Case("np.linalg.norm(ord='fro', 1, inf)", "linalg", norm_matrix, [(f(3, 4, kind="sep"),)]),
    Case("np.linalg.qr", "linalg", qr, [(f(5, 3),), (f(3, 3),), (f(3, 5),), (f(2, 4, 3),)],
         prims=("qr",)),
    Case("np.linalg.qr(mode='r')", "linalg", qr_r, [(f(4, 3),)]),
    Case("np.linalg.eigh", "linalg", eigh, [(SPD,), (f(4, 4),), (f(2, 3, 3, kind="spd"),)],
         prims=("eigh",)),
    Case("np.linalg.eigh(UPLO='U')", "linalg", eigh_upper, [(f(3, 3),)]),
    Case("np.linalg.eigvalsh", "linalg", eigvalsh, [(SPD,)]),
    Case("np.linalg.svd", "linalg", svd, [(f(5, 3),), (f(3, 5),), (f(3, 3),), (f(2, 4, 3),)],
         prims=("svd",)),
    Case("np.linalg.svd(compute_uv=False), np.linalg.svdvals", "linalg", svd_values,
         [(f(4, 3),), (f(2, 3, 5),)]),
    Case("np.linalg.svd(full_matrices=True) of square matrices", "linalg", svd_full_square,
         [(f(3, 3),)]),
    Case("np.linalg.pinv", "linalg", pinv, [(f(5, 3),), (f(3, 4),), (f(2, 3, 3),)],
         prims=("pinv",)),
    Case("np.linalg.lstsq", "linalg", lstsq, [(f(5, 3), f(5, 2)), (f(5, 3), f(5)),
                                              (f(3, 4), f(3))]),
    Case("np.linalg.lstsq (the rank)", "linalg", lstsq_rank, [(f(5, 3), f(5))], order=0),
    Case("np.linalg.matrix_power", "linalg", matrix_power, [(f(3, 3, kind="spd"),)]),
    Case("np.linalg.norm(ord=2, -2, 'nuc') of a matrix", "linalg", norm_spectral,
         [(f(4, 3),)]),
    Case("scipy.linalg.solve_triangular", "linalg", solve_triangular,
         [(f(4, 4, kind="tri"), f(4, 3)), (f(2, 3, 3, kind="tri"), f(3, 2))], scipy=True,
         prims=("triangular_solve",)),
    Case("scipy.linalg.solve_triangular(trans)", "linalg", solve_triangular_trans,
         [(f(4, 4, kind="tri"), f(4, 2))], scipy=True),
    Case("scipy.linalg.solve_triangular (a vector)", "linalg", solve_triangular_vector,
         [(f(4, 4, kind="tri"), f(4))], scipy=True),
    Case("scipy.linalg.cho_solve", "linalg", cho_solve, [(SPD, f(4, 2))], scipy=True),
    Case("scipy.linalg.cho_factor", "linalg", cho_factor_solve, [(SPD, f(4))], scipy=True),
    # Products
    Case("np.einsum", "products", einsum_matmul, [(f(3, 4), f(4, 2))], prims=("einsum",)),
    Case("np.einsum (implicit output)", "products", einsum_implicit, [(f(3, 4), f(2, 4))]),
    Case("np.einsum (ellipsis, broadcasting)", "products", einsum_ellipsis,
         [(f(2, 3, 4), f(4, 2)), (f(1, 3, 4), f(2, 4, 2))]),
    Case("np.einsum", "products", einsum_reduce, [(f(2, 3, 4),)]),
    Case("np.einsum", "products", einsum_three, [(f(3), f(3, 4), f(4))]),
    Case("np.einsum", "products", einsum_outer_sum, [(f(3), f(3))]),
    Case("np.einsum (repeated index)", "products", einsum_trace, [(f(3, 3),)]),
    Case("np.einsum (repeated index)", "products", einsum_repeats, [(f(3, 3, 3), f(3, 3))]),
    Case("np.tensordot", "products", tensordot, [(f(3, 4, 2), f(4, 2, 3))],
         prims=("product_spec",)),
    Case("np.kron", "products", kron, [(f(2, 3, 2), f(3, 2)), (f(2, 2, 1), f(2))]),
    Case("np.outer", "products", outer, [(f(3), f(4)), (f(2, 2), f(3))]),
    Case("np.trace, a.trace", "products", trace, [(f(3, 3),), (f(3, 4),)],
         prims=("diagonal",)),
    # Reductions and sorting
    Case("np.cumsum, a.cumsum", "reductions", cumsum, [(f(2, 3),), (f32(2, 3, 2),)],
         prims=("cumsum",)),
    Case("np.cumsum(axis=None)", "reductions", cumsum_flat, [(f(2, 3),), (A((4,), "int"),)]),
    Case("np.var, np.std (ddof), a.var, a.std", "reductions", var_std,
         [(f(3, 4),), (f32(2, 5),)]),
    Case("np.median, np.quantile, np.percentile", "reductions", quantiles,
         [(f(4, 5, kind="sep"), A((3,), "unit01")), (f(3, 2, kind="sep"), A((2,), "unit01"))]),
    Case("np.sort", "sorting", sort, [(f(3, 4, kind="sep"),)],
         prims=("argsort", "take_along_axis")),
    Case("np.sort(axis=None)", "sorting", sort_flat, [(f(3, 4, kind="sep"),)]),
    Case("np.argsort, a.argsort", "sorting", argsort, [(f(3, 4),)], order=0),
    Case("np.take_along_axis", "indexing", take_along_axis, [(f(3, 4, kind="sep"),)]),
    Case("x[i:i + k] (windows: k known at compile time, i at run time)", "indexing", windows,
         [(f(5, 3), 3), (f(4, 4), -1)], prims=("dynamic_window",)),
    Case("np.any, np.all, a.any, a.all", "tests", any_all, [(f(3, 4),)], order=0),
    Case("np.isnan, np.isinf, np.isfinite", "tests", nan_tests,
         [(f(3, 4, kind="special"),), (f(),), (A((3,), "int"),)], order=0),
    # Elementwise math
    Case("np.logaddexp", "math", logaddexp, [(f(3, 4), f(4)), (f(3), f(3) )]),
    Case("np.square", "math", square, [(f(3, 4),), (A((3,), "int"),)]),
    Case("np.reciprocal, np.log2, np.log10, np.exp2, np.logaddexp2, np.hypot", "math",
         math_more, [(f(3, 4, kind="pos"), f(4))]),
    Case("np.arcsinh, np.arccosh, np.arctanh, np.copysign", "math", inverse_hyperbolic,
         [(f(3, 4, kind="pos"), f(4)), (f32(3, kind="pos"), f(2, 1))],
         prims=("asinh", "acosh", "atanh", "copysign")),
    Case("np.reciprocal, np.sqrt, np.exp, np.logaddexp, np.arctan2, np.hypot, np.round "
         "of integers and booleans",
         "math", math_of_ints, [(A((3, 4), "int", "int8"),), (A((5,), "int", "int16"),),
         (A((2, 3), "int"),)], order=0),
    Case("np.clip, np.square of Python numbers and booleans", "math", of_python_numbers,
         [(2.5, 3), (0.25, -4)], order=0),
    Case("a.item()", "scalar types", item, [(f(3),)]),
    Case("np.heaviside", "math", heaviside, [(f(3, 4),)], order=0),
    Case("np.isclose, np.allclose", "tests", close, [(f(3, 4), f(4))], order=0),
    Case("np.ptp, a.ptp, np.average (weights)", "reductions", ptp_average,
         [(f(3, 4, kind="sep"), f(3, 4, kind="pos"))]),
    Case("np.ravel, np.atleast_2d, np.hstack, np.vstack, np.column_stack, np.empty_like",
         "shape", shapes_more, [(f(2, 3), f(3))]),
    Case("np.vdot, np.inner", "products", products_more, [(f(2, 3), f(3))]),
    Case("np.linspace", "creation", linspace, [(0.5, 2.0)]),
    Case("scipy.special.logsumexp, expit, softmax, log_softmax", "scipy.special", special,
         [(f(3, 4),), (f32(2, 3),)], scipy=True),
    Case("scipy.special.erf, erfc, gammaln, digamma (psi), polygamma", "scipy.special",
         special_functions, [(f(3, 4, kind="pos"),), (f32(5, kind="pos"),)], scipy=True,
         prims=("erf", "erfc", "gammaln", "digamma", "polygamma")),
    Case("math.erf, math.erfc", "math", math_erf, [(f(), f())]),
    Case("math.lgamma", "math", math_lgamma, [(f(kind="pos"), f())], scipy=True),
    Case("scipy.special.logit", "scipy.special", logit, [(A((3, 4), "unit01"),)], scipy=True),
    Case("np.rint, np.round, a.round", "math", rounding, [(f(3, 4),), (f32(5),)], order=0,
         prims=("rint",)),
    Case("np.flip, np.roll, np.moveaxis", "shape", reorder, [(f(2, 3, 4),)],
         prims=("flip", "roll", "moveaxis")),
    Case("np.trunc", "math", trunc, [(f(3, 4),)], order=0),
    Case("np.float32(x) and other scalar types", "scalar types", float32, [(f(3),), (f(),)],
         order=0),
    Case("x.dtype == np.float32, x.dtype != np.float64, np.issubdtype (constants)",
         "scalar types", by_dtype, [(f(3),), (f32(2, 2),)]),
    # Creation and shapes
    Case("np.eye, np.identity", "creation", eye, [(f(2),)], order=0, prims=("eye",)),
    Case("np.eye", "creation", eye_mul, [(f(2, 3, 3),)]),
    Case("np.diag, np.diagonal, a.diagonal", "creation", diag, [(f(3, 3),), (f(3, 4),)]),
    Case("np.diag (of a vector)", "creation", diag_vector, [(f(3),)], prims=("undiagonal",)),
    Case("np.tril, np.triu", "creation", tril_triu, [(f(3, 4),), (f(2, 3, 3),)],
         prims=("tril", "triu")),
    Case("np.tile", "shape", tile, [(f(2, 3),), (f(3),)], prims=("tile",)),
    Case("np.repeat, a.repeat", "shape", repeat, [(f(2, 3),)],
         prims=("repeat",)),
    Case("np.pad (constant, edge, reflect, symmetric, wrap)", "shape", pad, [(f(3, 2),)],
         prims=("pad",)),
    Case("np.array, np.asarray of a tuple (nested) of scalars or arrays", "creation",
         array_of_tuple,
         [(f(), f()), (f(3), f(3))]),
    Case("np.meshgrid", "creation", meshgrid, [(f(3), f(2), f(4))]),
    Case("np.cumprod, a.cumprod", "reductions", cumprod,
         [(f(3, 4),), (A((2, 3), "int"),), (A((2, 3), "int", "int32"),)], order=1),
    Case("np.sinc", "math", sinc, [(f(3, 4),)]),
    Case("np.nan_to_num", "math", nan_to_num, [(f(3, 4, kind="special"),)], order=0),
    Case("np.searchsorted", "sorting", searchsorted, [(f(6, kind="sep"), f(2, 3))], order=0,
         prims=("searchsorted",)),
    Case("np.array_split", "shape", array_split, [(f(3, 5),), (f32(4, 4),)]),
    Case("np.hsplit, np.vsplit, np.dsplit, np.split(axis=-1)", "shape", splits,
         [(f(2, 4, 2),)]),
    Case("np.broadcast_to", "shape", broadcast_to, [(f(3, 1),), (f(4),), (f(),)],
         prims=("broadcast_to",)),
    Case("np.diff (n, axis, prepend, append)", "shape", differences, [(f(4, 5),), (f32(3, 4),)]),
    Case("np.diff of integers and booleans", "shape", differences_of_ints,
         [(A((4, 5), "int"),), (A((3, 4), "int", "int32"),)], order=0),
    Case("np.remainder, np.mod, np.floor_divide, np.fmod, np.hypot", "math", remainders,
         [(f(3, 4), f(3, 4, kind="pos")), (f32(5), f32(5, kind="pos"))], order=1),
    Case("np.fmax, np.fmin, np.count_nonzero", "math", nan_extrema, [(A((3, 4), "unit01"),)]),
    Case("np.remainder, np.floor_divide, np.fmod, np.count_nonzero of integers", "math",
         remainders_of_ints, [(A((3, 4), "int"), A((3, 4), "pos").make(np.random.default_rng(0))
         .astype(int) + 1)], order=0),
    # Polynomials, interpolation, integration, convolution, statistics
    Case("np.polyval", "math", polyval, [(f(3), f(4)), (f(2, 3), f(3)), (f32(4), f32(2))]),
    Case("np.polyval of integers", "math", polyval_of_ints,
         [(i64(3), i64(4)), (A((2,), "int", "int32"), i64(2, 2))],
         order=0),
    Case("np.interp (left, right)", "math", interp, [(f(7), f(5), f(5)), (f(2, 3), f(3), f(3))]),
    Case("np.interp of integers and float32 (float64, as NumPy)", "math",
         interp_of_other_dtypes, [(f32(5), i64(4), i64(4))], order=0),
    Case("np.trapezoid (x, dx, axis)", "reductions", trapezoid,
         [(f(3, 4), f(4)), (f32(2, 5), f32(5))]),
    Case("np.trapezoid of integers", "reductions", trapezoid_of_ints, [(i64(3, 4),)],
         order=0),
    Case("np.convolve (full, same, valid)", "products", convolve,
         [(f(6), f(3)), (f(5), f(4)), (f32(4), f32(2))]),
    Case("np.convolve of integers", "products", convolve_of_ints,
         [(i64(5), i64(3))], order=0),
    Case("np.cross (axisa, axisb, axisc, axis)", "products", cross,
         [(f(3, 3), f(3, 3)), (f32(3, 3), f32(3, 3))]),
    Case("np.cross of 2-vectors (deprecated by NumPy 2.0)", "products", cross_of_2_vectors,
         [(f(4, 3), f(4, 3))]),
    Case("np.cross of integers", "products", cross_of_ints, [(i64(2, 3), i64(3))],
         order=0),
    Case("np.nansum, np.nanmean, np.nanmax, np.nanmin (axis, keepdims)", "reductions",
         nan_reductions, [(A((3, 4), "unit01"),), (A((2, 5), "unit01", "float32"),)]),
    Case("np.nansum, np.nanmean, np.nanmax, np.nanmin of a slice of NaNs only", "reductions",
         nan_reductions_of_nans, [(f(3, 4),)], order=0),
    Case("np.nansum, np.nanmean, np.nanmax, np.nanmin of integers", "reductions",
         nan_reductions_of_ints, [(i64(3, 4),)], order=0),
    Case("np.cov (rowvar, bias, ddof, y)", "reductions", covariances,
         [(f(2, 5), f(5)), (f(3, 4), f(4))]),
    Case("np.corrcoef", "reductions", correlations, [(f(3, 5), f(5))]),
    Case("np.cov, np.corrcoef of float32 and integers (float64, or dtype=)", "reductions",
         covariances_of_other_dtypes, [(f32(2, 4),), (i64(3, 4),)], order=0),
    Case("np.logspace, np.linspace (one sample, retstep, array bounds, axis)", "creation",
         spacings, [(f(), f())]),
    Case("np.linspace(dtype=int), np.logspace of integers", "creation", spacings_of_ints,
         [()], order=0),
    Case("np.deg2rad, np.radians, np.rad2deg, np.degrees", "math", angles,
         [(f(3, 4),), (f32(5),)]),
    Case("np.deg2rad, np.rad2deg, np.radians of integers and booleans", "math",
         angles_of_ints, [(i64(3),), (A((2, 2), "int", "int8"),)], order=0),
    Case("np.float_power, np.cbrt", "math", powers,
         [(f(3, 4, kind="pos"), f(4)), (f32(5, kind="pos"), f32(5))]),
    Case("np.cbrt (negatives, zeros, infinities, nan, perfect cubes)", "math", cube_roots,
         [(f(5),)], order=0),
    Case("np.float_power, np.cbrt of integers", "math", powers_of_ints, [(i64(4),)],
         order=0),
    Case("a.tolist()", "scalar types", tolist_sum, [(f(2, 3),)], order=1),
]  # fmt: skip

CASES = [c for c in TABLE if sl is not None or not c.scipy]


# The checks -----------------------------------------------------------------------------------


def _compiled(case: Case, backend: str, cache: dict[Any, Any] = {}) -> Any:  # noqa: B006
    key = (case.fn, backend)
    if key not in cache:
        cache[key] = myia(case.fn, backend=backend)
    return cache[key]


def _float_output(out: Any) -> bool:
    leaves = out if isinstance(out, tuple) else (out,)
    return all(np.result_type(x).kind == "f" for x in leaves)


def random_like(x: Any, rng: np.random.Generator) -> Any:
    if isinstance(x, tuple):
        return tuple(random_like(v, rng) for v in x)
    return np.asarray(rng.standard_normal(np.shape(x)), np.result_type(x))[()]


_LOSSES: dict[Any, Any] = {}


def contracted(fn: Any, backend: str = "numpy") -> Any:
    """``(args, ct) -> <fn(*args), ct>``, compiled once per function and backend."""
    if (fn, backend) not in _LOSSES:

        def loss(args, ct):
            return vdot(fn(*args), ct)

        _LOSSES[fn, backend] = myia(loss, backend=backend)
    return _LOSSES[fn, backend]


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"{c.name}-{i}") for i, c in enumerate(CASES)]
)
def test_values(case: Case) -> None:
    for seed, spec in enumerate(case.args):
        args = make_args(spec, seed)
        with np.errstate(all="ignore"):
            expected = as_myia_result(case.fn(*args))
        inferrer = RecordingInferrer()
        _, abstract = inferrer.infer(parse(case.fn), tuple(to_abstract(a) for a in args))
        check_abstract(abstract, expected)
        assert set(case.prims) <= inferrer.seen, set(case.prims) - inferrer.seen
        for backend in BACKENDS:
            with np.errstate(all="ignore"):
                got = _compiled(case, backend)(*args)
            check_value(got, expected, f"{case.name} on {backend}")


GRADS = [c for c in CASES if c.order > 0]


#: The gradients on the other backends take minutes: marked slow.
GRAD_BACKENDS = ["numpy"] + [pytest.param(b, marks=pytest.mark.slow) for b in BACKENDS[1:]]


@pytest.mark.parametrize("backend", GRAD_BACKENDS)
@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"{c.name}-{i}") for i, c in enumerate(GRADS)]
)
def test_gradients(case: Case, backend: str) -> None:
    for seed, spec in enumerate(case.args):
        args = make_args(spec, seed)
        out = case.fn(*args)
        if not _float_output(out):
            continue
        ct = random_like(as_myia_result(out), np.random.default_rng(seed))
        float_args = tuple(a for a in args)
        order = case.order if seed == 0 else 1
        f32 = any(np.result_type(a) == np.float32 for a in float_args)
        opts = dict(eps=1e-3, rtol=2e-2, atol=2e-2) if f32 else {}
        loss = contracted(case.fn, backend)
        check_grad(loss, args, ct, wrt=0, order=order, seed=seed, backend=backend, **opts)


def test_gradients_agree_on_every_backend() -> None:
    def nll(a, b):
        x = np.linalg.solve(a, b)
        return np.sum(x * b) + np.linalg.slogdet(a)[1] + np.sum(np.cumsum(np.sort(b, axis=0)))

    args = make_args((SPD, f(4, 2)), 0)
    expected = grad(nll, 0, 1, backend="numpy")(*args)
    for backend in BACKENDS[1:]:
        got = grad(nll, 0, 1, backend=backend)(*args)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)


def jax_loss(m, b):
    k = m @ m.T + 4.0 * np.eye(4)
    lo = np.linalg.cholesky(k)
    x = np.linalg.solve(k, b)
    return (
        np.sum(x * b)
        + 2.0 * np.sum(np.log(np.diagonal(lo)))
        + np.linalg.det(k) * 1e-3
        + np.sum(np.linalg.inv(k))
        + np.einsum("ij,jk->", m, b)
        + np.var(b, ddof=1)
        + np.sum(np.logaddexp(b, 0.5))
        + np.linalg.norm(m)
        + np.sum(np.cumsum(np.sort(b, axis=0), axis=0))
    )


@pytest.mark.skipif(jax is None, reason="JAX is not installed")
def test_gradients_match_jax() -> None:
    import jax.numpy as jnp

    args = make_args((f(4, 4), f(4, 2)), 3)
    ours = grad(jax_loss, 0, 1)(*args)
    with jax.enable_x64(True):
        # The same source with NumPy's names bound to JAX's.
        theirs = jax.grad(lambda m, b: _with_numpy(jnp, jax_loss)(m, b), (0, 1))(*args)
    for g, e in zip(ours, theirs):
        np.testing.assert_allclose(g, np.asarray(e), rtol=1e-8, atol=1e-10)


def _with_numpy(module: Any, fn: Any) -> Any:
    import types

    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": module})


# Errors ---------------------------------------------------------------------------------------


def bad_cholesky(a):
    return np.linalg.cholesky(a)  # ERROR


def bad_solve(a, b):
    return np.linalg.solve(a, b)  # ERROR


def bad_einsum(a, b):
    return np.einsum("ij,jk->ik", a, b)  # ERROR


def bad_cumsum(a):
    return np.cumsum(a, axis=2)  # ERROR


def bad_broadcast(a):
    return np.broadcast_to(a, (3, 2))  # ERROR


def bad_sort(a):
    return np.sort(a, axis=1)  # ERROR


def bad_tril(a):
    return np.tril(a)  # ERROR


@pytest.mark.parametrize(
    "fn, args, error",
    [
        (bad_cholesky, (np.ones((3, 4)),), MyiaShapeError),
        (bad_solve, (np.eye(3), np.ones((4, 2))), MyiaShapeError),
        (bad_einsum, (np.ones((2, 3)), np.ones((4, 2))), MyiaShapeError),
        (bad_cumsum, (np.ones((2, 3)),), MyiaShapeError),
        (bad_broadcast, (np.ones(3),), MyiaShapeError),
        (bad_sort, (np.ones(3),), MyiaShapeError),
        (bad_tril, (np.ones(3),), MyiaShapeError),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_errors_point_at_the_users_line(fn: Any, args: tuple[Any, ...], error: type) -> None:
    import inspect

    with pytest.raises(error) as info:
        myia(fn)(*args)
    lines, first = inspect.getsourcelines(fn)
    line = first + next(i for i, s in enumerate(lines) if s.rstrip().endswith("# ERROR"))
    frames = [x for x in info.value.frames if x.location is not None]
    assert any(x.location.filename == __file__ and x.location.line == line for x in frames), (
        info.value.frames
    )


def vsplit_vector(a):
    return np.vsplit(a, 2)


def dsplit_matrix(a):
    return np.dsplit(a, 2)


@pytest.mark.parametrize(
    "fn, arg", [(vsplit_vector, np.ones(4)), (dsplit_matrix, np.ones((2, 4)))]
)
def test_vsplit_and_dsplit_of_too_few_dimensions_raise_as_numpy(fn: Any, arg: Any) -> None:
    with pytest.raises(ValueError) as expected:
        fn(arg)
    with pytest.raises(ValueError, match=str(expected.value)):
        myia(fn)(arg)


def test_einsum_gradient_of_a_repeated_index_under_vmap() -> None:
    def f(m):
        return np.einsum("ii->", m) ** 2 + np.sum(np.einsum("iij->ij", m[:, :, None] * m) ** 3)

    xs = np.arange(18.0).reshape(2, 3, 3) / 7
    batched = myia(lambda xs: vmap(grad(f))(xs))(xs)
    np.testing.assert_allclose(batched, np.stack([grad(f)(x) for x in xs]), rtol=1e-12)


def test_einsum_gradient_with_many_repeated_indices_is_refused() -> None:
    # One identity matrix per repeated occurrence, up to three ("iiii" is three).
    x = np.arange(16.0).reshape(2, 2, 2, 2)
    assert np.array_equal(
        grad(lambda x: np.einsum("iiii->", x))(x),
        np.einsum("ijkl,ij,ik,il->ijkl", np.ones_like(x), *[np.eye(2)] * 3),
    )
    with pytest.raises(MyiaTypeError, match="more than 3 repeated indices"):
        grad(lambda x: np.einsum("iiiii->", x))(np.ones((2,) * 5))


# Coverage -------------------------------------------------------------------------------------


def _declared(*modules: Any) -> set[str]:
    from myia.primitives import Primitive

    return {
        p.name
        for m in modules
        for p in vars(m).values()
        if isinstance(p, Primitive) and p.impl.__module__ == m.__name__
    }


def test_every_new_primitive_is_in_the_table() -> None:
    covered = {p for c in TABLE for p in c.prims}
    # The gradients' own helpers are in tests/test_grad_primitives.py.
    missing = (
        _declared(linalg, array_extra, decompositions, tiling, special_prims)
        - covered
        - {"einsum_grad_spec", "untake_along_axis", "svd_full_gradient"}
        - {"untile", "unrepeat", "unpad", "triangular_matmul", "lower_half"}
    )
    assert not missing, f"primitives missing from the table: {sorted(missing)}"


# Special functions: SciPy optional, machine code and XLA -------------------------------------


@pytest.mark.skipif(ss is None, reason="SciPy is not installed")
def test_special_functions_without_scipy_are_refused_at_compile_time(monkeypatch) -> None:
    monkeypatch.setattr(special_prims, "_sp", None)  # as if SciPy were not installed
    with pytest.raises(MyiaTypeError, match="needs SciPy"):
        myia(_erf_of_array)(np.array([0.5, 1.5]))
    # math.erf and math.lgamma of Python floats are Python's; lgamma's derivative is digamma.
    assert myia(lambda v: math.erf(v) + math.lgamma(v))(1.5) == math.erf(1.5) + math.lgamma(1.5)
    assert grad(lambda v: math.erf(v))(0.5) == pytest.approx(2 / math.sqrt(math.pi) / math.e**0.25)
    with pytest.raises(MyiaTypeError, match="digamma .the derivative of gammaln"):
        grad(lambda v: math.lgamma(v))(1.5)


@pytest.mark.parametrize("backend", ["native"] + (["jax"] if jax is not None else []))
def test_dtype_comparisons_are_constants_on_compiled_backends(backend: str) -> None:
    # The comparisons fold at compile time: the native and XLA code keep one branch.
    for x in (np.array([1.5, -2.0]), np.array([[1.5, 2.0]], np.float32)):
        kw = {"background": False} if backend == "native" else {}
        check_value(myia(by_dtype, backend=backend, **kw)(x), as_myia_result(by_dtype(x)), backend)
    x = np.array([1.5, -2.0])
    g = grad(lambda x: np.sum(by_dtype(x)[0]), backend=backend)
    np.testing.assert_allclose(g(x), 2 * x, rtol=1e-12)


def _dtype_ordered(x):
    return x.dtype < np.float32


def _dtype_of_a_number(x):
    return np.issubdtype(x.dtype, 3)


@pytest.mark.parametrize(
    "fn, message",
    [(_dtype_ordered, "'<' is not defined on dtypes"), (_dtype_of_a_number, "not dtypes")],
)
def test_dtype_misuses_are_refused_at_the_users_line(fn: Any, message: str) -> None:
    with pytest.raises(MyiaTypeError, match=message) as info:
        myia(fn)(np.ones(2))
    assert "in " + fn.__name__ in str(info.value)


def _erf_of_array(x):
    return ss.erf(x)


def _special_loop(x, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + math.erf(x * i) + math.erfc(x) + math.lgamma(x + i)
        i = i + 1
    return s


@pytest.mark.skipif(jax is None or ss is None, reason="needs JAX and SciPy")
def test_special_functions_run_as_xla_and_machine_code() -> None:
    x = np.array([0.5, 1.5, 2.5])
    expected = grad(_special_sum)(x)
    g = grad(_special_sum, backend="jax")
    np.testing.assert_allclose(g(x), expected, rtol=1e-12)
    assert g.specialization(x).executable.jitted, g.specialization(x).executable.reason
    native = myia(_special_loop, backend="native")
    assert native(0.3, 10) == pytest.approx(_special_loop(0.3, 10), rel=1e-14)
    assert native.specialization(0.3, 10).executable.native
    # math.lgamma at a pole raises Python's error on every backend.
    for backend in ("numpy", "jax", "native"):
        with pytest.raises(ValueError, match="math domain error"):
            myia(_special_loop, backend=backend)(-1.0, 2)


def _special_sum(x):
    return np.sum(ss.erf(x) * ss.erfc(x) + ss.gammaln(x) * ss.digamma(x) + ss.polygamma(2, x))


# The Gaussian process of the gp_nll benchmark under XLA -----------------------------------------


def _gp_nll(log_ls, log_noise, x, y):
    n = x.shape[0]
    z = x / np.exp(log_ls)
    sq = np.sum(z * z, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (z @ z.T)
    k = np.exp(-0.5 * np.maximum(d2, 0.0)) + (np.exp(2.0 * log_noise) + 1e-6) * np.eye(n)
    lower = np.linalg.cholesky(k)
    alpha = sl.solve_triangular(lower, y, lower=True)
    return (0.5 * np.sum(alpha * alpha) + np.sum(np.log(np.diag(lower)))) / n


@pytest.mark.skipif(jax is None or sl is None, reason="needs JAX and SciPy")
def test_gaussian_process_gradient_is_one_xla_computation() -> None:
    rng = np.random.default_rng(0)
    args = (rng.uniform(-0.5, 0.5, 3), -1.2, rng.uniform(-2, 2, (12, 3)), rng.standard_normal(12))
    expected = grad(_gp_nll, 0, 1)(*args)
    for fn in (myia(_gp_nll, backend="jax"), grad(_gp_nll, 0, 1, backend="jax")):
        ex = fn.specialization(*args).executable
        assert ex.jitted, ex.reason
    got = grad(_gp_nll, 0, 1, backend="jax")(*args)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10)
    # Where NumPy raises (a matrix that is not positive definite), so does the jitted code.
    f = myia(_not_spd, backend="jax")
    assert f(2.0 * np.eye(3)) == myia(_not_spd)(2.0 * np.eye(3))
    assert f.specialization(np.eye(3)).executable.jitted
    for bad in (-np.eye(3), np.ones((3, 3))):
        with pytest.raises(Exception, match="not positive definite") as info:
            f(bad)
        assert type(info.value) is type(_error_of(_not_spd, bad))


@pytest.mark.skipif(jax is None or sl is None, reason="needs JAX and SciPy")
def test_singular_matrices_under_xla_give_numpys_results() -> None:
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    f = myia(inv, backend="jax")
    assert f.specialization(singular).executable.jitted
    with pytest.raises(Exception, match="Singular matrix") as info:
        f(singular)
    assert type(info.value) is type(_error_of(inv, singular))
    # BLAS's triangular solve gives infinities and NaNs (no error): so does the jitted code.
    t = np.tril(np.ones((3, 3)))
    t[1, 1] = 0.0
    with np.errstate(all="ignore"):
        expected = myia(solve_triangular)(t, np.ones((3, 2)))
        got = myia(solve_triangular, backend="jax")(t, np.ones((3, 2)))
    np.testing.assert_array_equal(got, expected)
    assert np.isnan(got).any()


def _not_spd(a):
    return np.sum(np.linalg.cholesky(a)) + np.sum(np.linalg.inv(a))


def _error_of(fn, *args):
    try:
        myia(fn, backend="numpy")(*args)
    except Exception as exc:  # noqa: BLE001 - the error NumPy's backend raises
        return exc
    raise AssertionError("no error")


def _quantiles_of_a_sequence(x):
    return (
        np.quantile(x, [0.1, 0.9]),
        np.percentile(x, (10, 90)),
        np.percentile(x, [25.0, 50.0], axis=0),
    )


def test_quantiles_given_as_a_list_or_tuple():
    # A literal list or a tuple of quantiles, as NumPy takes them: "unsupported operation
    # mul on ([f64], f64)" before.
    x = np.array([[3.0, -1.0], [2.5, 0.0], [7.0, 1.5]])
    got, want = myia(_quantiles_of_a_sequence)(x), _quantiles_of_a_sequence(x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    check_grad(lambda v: np.sum(np.quantile(v, [0.1, 0.9]) ** 2), x[:, 0])


def _averages_along_an_axis(x, w2, w3):
    return np.average(x, axis=0, weights=w2), np.average(x, axis=-1, weights=w3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_average_with_1d_weights_along_an_axis(backend):
    # 1-D weights apply along `axis`, as in NumPy: they were broadcast against the last axis
    # (axis=0 refused, axis=1 right by chance), and with no axis NumPy's TypeError.
    x, w2, w3 = np.array([[3.0, -1.0, 0.5], [2.5, 0.0, 4.0]]), np.array([1.0, 3.0]), np.ones(3)
    w3 = w3 + np.arange(3.0)
    got, want = (
        myia(_averages_along_an_axis, backend=backend)(x, w2, w3),
        _averages_along_an_axis(x, w2, w3),
    )
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    check_grad(
        lambda v, u: np.sum(_averages_along_an_axis(v, u, w3)[0] ** 2), x, w2, backend=backend
    )
    with pytest.raises(TypeError, match="Axis must be specified"):
        myia(lambda v, u: np.average(v, weights=u), backend=backend)(x, w3)
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        myia(lambda v, u: np.average(v, axis=0, weights=u), backend=backend)(x, w3)


# docs/numpy.md: generated from the table --------------------------------------------------------


def test_the_doc_is_the_table() -> None:
    assert DOC.read_text() == render_doc(TABLE), "regenerate it: python tests/test_numpy_more.py"


if __name__ == "__main__":
    DOC.write_text(render_doc(TABLE))
    print(f"wrote {DOC}")

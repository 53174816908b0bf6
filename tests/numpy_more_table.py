"""The table of tests/test_numpy_more.py: NumPy functions ML code uses, and their arguments.

Each entry of `TABLE` is a function written with NumPy (or SciPy), the NumPy names it covers,
its group (for docs/numpy.md), its argument specs (`A`: random arrays made from a seed by
`make_args`), the order of its gradient check and the primitives its inference must reach.
The functions of the later entries are in tests/numpy_more_cases.py; the checks are in
tests/test_numpy_more.py, and particular calls in tests/test_numpy_more_calls.py.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy_more_cases import (
    angles,
    angles_of_ints,
    array_of_tuple,
    array_split,
    bit_functions,
    broadcast_arrays,
    close,
    comparison_functions,
    cond,
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
    fabs,
    fabs_of_ints,
    heaviside,
    interp,
    interp_of_other_dtypes,
    inverse_hyperbolic,
    item,
    kron,
    lstsq,
    lstsq_rank,
    math_more,
    math_of_ints,
    matrix_power,
    matrix_rank,
    meshgrid,
    nan_extrema,
    nan_reductions,
    nan_reductions_of_ints,
    nan_reductions_of_nans,
    nan_to_num,
    norm_spectral,
    of_python_numbers,
    pad,
    pinv,
    polyval,
    polyval_of_ints,
    powers,
    powers_of_ints,
    products_more,
    ptp_average,
    qr,
    qr_r,
    quantiles,
    remainders,
    remainders_of_ints,
    reorder,
    repeat,
    rounding,
    scipy_stats,
    searchsorted,
    shapes_more,
    sign_tests,
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
    ufunc_accumulate_product,
    ufunc_outer,
    ufunc_reduce,
    windows,
)

try:
    import scipy.linalg as sl
    import scipy.special as ss
except ImportError:  # pragma: no cover - depends on the environment
    sl = ss = None

try:
    import jax
except ImportError:  # pragma: no cover - depends on the environment
    jax = None


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


def einsum_sublists(x, y):
    # Interleaved: each operand followed by its list of ints, the output's last.
    return np.einsum(x, [0, 1], y, [1, 2]), np.einsum(x, [0, 1], y, [1, 2], [2, 0])


def r_and_c(x, y):
    return np.r_[x, 2.0, y], np.c_[x, y], np.c_[np.c_[x, y], x], np.r_[np.c_[x, y], np.c_[y, x]]


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
    Case("np.linalg.matrix_rank", "linalg", matrix_rank,
         [(f(4, 3), np.outer(np.arange(1.0, 5.0), np.arange(1.0, 4.0)))], order=0),
    Case("np.linalg.cond", "linalg", cond, [(f(3, 3, kind="spd"),), (f(2, 3, 3, kind="spd"),)]),
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
    Case("np.einsum (interleaved sublists)", "products", einsum_sublists,
         [(f(3, 4), f(4, 2))], prims=("einsum_subscripts",)),
    Case("np.r_[a, b], np.c_[a, b]", "shape", r_and_c, [(f(3), f(3))]),
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
    Case("x[i:i + k] (windows: k known at compile time, i a loop's index)", "indexing", windows,
         [(f(5, 3),), (f(4, 4),)], prims=("dynamic_window",)),
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
    Case("np.fabs", "math", fabs, [(f(3, 4),), (f32(5),)]),
    Case("np.fabs of integers and booleans (float16 for int8, as NumPy)", "math", fabs_of_ints,
         [(i64(3),), (A((2, 2), "int", "int8"),)], order=0),
    Case("np.isclose, np.allclose", "tests", close, [(f(3, 4), f(4))], order=0),
    Case("np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert (np.bitwise_not), "
         "np.left_shift, np.right_shift", "tests", bit_functions,
         [(i64(3, 4), i64(4)), (A((5,), "int", "int8"), A((5,), "int", "uint8")),
          (np.array([True, False]), np.array([[True], [True]]))], order=0),
    Case("np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal, "
         "np.logical_xor", "tests", comparison_functions,
         [(f(3, 4), f(4)), (i64(3), f32(2, 3)), (A((4,), "int", "int8"), -1)], order=0),
    Case("np.signbit, np.array_equal (equal_nan), np.array_equiv", "tests", sign_tests,
         [(f(3, 4),), (f32(5),), (i64(2, 3),), (np.array([-0.0, 0.0, np.nan, -np.nan]),)],
         order=0),
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
    Case("scipy.stats.norm.logpdf, pdf, cdf; t.logpdf, pdf; multivariate_normal.logpdf, pdf",
         "scipy.stats", scipy_stats, [(f(3, 4), f(kind="pos")), (f32(5), f32(kind="pos"))],
         scipy=True),
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
    Case("np.add.outer, np.subtract.outer, np.multiply.outer, np.divide.outer, "
         "np.maximum.outer, np.minimum.outer", "products", ufunc_outer,
         [(f(3, kind="sep"), f(2, 1, kind="sep"))]),
    Case("np.add.reduce, np.multiply.reduce, np.maximum.reduce, np.minimum.reduce, "
         "np.add.accumulate", "math", ufunc_reduce, [(f(3, 4, kind="sep"),)]),
    Case("np.multiply.accumulate", "math", ufunc_accumulate_product, [(f(3, 4, kind="sep"),)],
         order=1),
    Case("np.broadcast_arrays", "shape", broadcast_arrays, [(f(3, 1), f(4), f()),
                                                            (f(2, 1, 3), f(4, 1), f32(3))]),
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

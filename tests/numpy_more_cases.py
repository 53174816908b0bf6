"""Functions of the table of tests/numpy_more_table.py: decompositions, statistics, shapes.

Written with NumPy as researchers write them. Eigenvectors and singular vectors are defined up
to their signs, so the functions that return them fix the signs (a function of the vectors
that does not depend on LAPACK's choice is what has a gradient).
"""

from __future__ import annotations

import numpy as np

try:
    from scipy import stats
except ImportError:  # pragma: no cover - depends on the environment
    stats = None


def qr(a):
    q, r = np.linalg.qr(a)
    return q, r


def qr_r(a):
    return np.linalg.qr(a, mode="r")


def eigh(a):
    w, v = np.linalg.eigh(a)
    return w, v * np.sign(v[..., :1, :])


def eigh_upper(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    return w, v * np.sign(v[..., :1, :])


def eigvalsh(a):
    return np.linalg.eigvalsh(a)


def svd(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    sign = np.sign(u[..., :1, :])
    return u * sign, s, vh * np.swapaxes(sign, -1, -2)


def svd_values(a):
    return np.linalg.svd(a, compute_uv=False), np.linalg.svdvals(a)


def matrix_rank(a, b):
    return np.linalg.matrix_rank(a), np.linalg.matrix_rank(b), np.linalg.matrix_rank(b, 1e-3)


def cond(a):
    return np.linalg.cond(a), np.linalg.cond(a, -2), np.linalg.cond(a, "fro"), np.linalg.cond(a, 1)


def broadcast_arrays(a, b, c):
    x, y, z = np.broadcast_arrays(a, b, c)
    return x * y + z


def ufunc_outer(a, b):
    return (
        np.add.outer(a, b)
        + np.subtract.outer(b, a).T * np.multiply.outer(a, b)
        + np.divide.outer(a, b + 3.0)
        + np.maximum.outer(a, b) * np.minimum.outer(a, b)
    )


def ufunc_reduce(a):
    return (
        np.add.reduce(a) + np.multiply.reduce(a) + np.maximum.reduce(a) * np.minimum.reduce(a),
        np.add.reduce(a, axis=None),
        np.add.accumulate(a),
    )


def ufunc_accumulate_product(a):
    return np.multiply.accumulate(a, axis=-1)


def svd_full_square(a):
    u, s, vh = np.linalg.svd(a)
    return u @ (s[..., :, None] * vh)


def pinv(a):
    return np.linalg.pinv(a)


def lstsq(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return x, residuals, s


def lstsq_rank(a, b):
    return np.linalg.lstsq(a, b)[2]


def matrix_power(a):
    return (
        np.linalg.matrix_power(a, 3),
        np.linalg.matrix_power(a, 0),
        np.linalg.matrix_power(a, -2),
    )


def norm_spectral(a):
    return np.linalg.norm(a, 2), np.linalg.norm(a, -2), np.linalg.norm(a, "nuc")


def tile(a):
    return np.tile(a, 2), np.tile(a, (2, 1, 3))


def repeat(a):
    return np.repeat(a, 2), np.repeat(a, 3, axis=1), a.repeat((1, 0, 2), axis=-1)


def pad(a):
    return (
        np.pad(a, 1),
        np.pad(a, ((0, 2), (1, 0)), constant_values=1.5),
        np.pad(a, (2, 3), mode="edge"),
        np.pad(a, 2, mode="reflect"),
        np.pad(a, ((1, 4), (2, 2)), mode="symmetric"),
        np.pad(a, ((3, 1), (0, 5)), mode="wrap"),
    )


def quantiles(a, q):
    return (
        np.median(a),
        np.median(a, axis=0),
        np.median(a, axis=1, keepdims=True),
        np.quantile(a, 0.3, axis=-1),
        np.quantile(a, q),
        np.quantile(a, q, axis=0, keepdims=True),
        np.percentile(a, 100.0 * q, axis=1),
        np.percentile(a, 90),
    )


def tensordot(a, b):
    return (
        np.tensordot(a, b),
        np.tensordot(a, b[0], axes=1),
        np.tensordot(a, b, axes=([2, 1], [1, 0])),
        np.tensordot(a, b, axes=0)[0, 0],
    )


def kron(a, b):
    return np.kron(a, b), np.kron(a[0], b), np.kron(a[0, 0], b[..., 0])


def array_of_tuple(x, y):
    return (
        np.array((x, y)),
        np.array(((x, 2.0 * y), (y, x))),
        np.array((x, y), dtype=np.float32),
        np.asarray((x, y)) * np.asarray(x),
        np.asarray([x, y], dtype=np.float32),
    )


def meshgrid(x, y, z):
    a, b = np.meshgrid(x, y)
    c, d = np.meshgrid(x, y, indexing="ij")
    e, f, g = np.meshgrid(x, y, z)
    return a, b, c, d, e, f, g


def cumprod(a):
    return np.cumprod(a), np.cumprod(a, axis=1), a.cumprod(axis=0)


def sinc(x):
    return np.sinc(x)


def nan_to_num(x):
    return np.nan_to_num(x), np.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0)


def searchsorted(a, v):
    s = np.sort(a)
    return np.searchsorted(s, v), np.searchsorted(s, v, side="right"), np.searchsorted(s, 0.5)


def array_split(x):
    a, b, c = np.array_split(x, 3, axis=1)
    d, e = np.array_split(x, [1])
    return a, b, c, d, e, np.array_split(x[0], 2)[1], np.array_split(x, 2, axis=1)[0]


def splits(x):
    a, b = np.hsplit(x, 2)
    c, d = np.vsplit(x, [1])
    e, f = np.dsplit(x, [1])
    (g,) = np.split(x, 1, axis=-1)
    return a, b, c, d, e, f, g, np.hsplit(x[0, 0], 2)[1]


def differences(x):
    return (
        np.diff(x),
        np.diff(x, 2, axis=0),
        np.diff(x, n=3, axis=-1),
        np.diff(x, 0),
        np.diff(x, 9),
        np.diff(x, prepend=0.5),
        np.diff(x, axis=0, append=x[:1]),
    )


def differences_of_ints(x):
    return np.diff(x), np.diff(x, 2, axis=0), np.diff(x > 0), np.diff(x > 0, 3)


def remainders(x, y):
    return (
        np.remainder(x, y),
        np.mod(x, -y),
        np.floor_divide(x, y),
        np.fmod(x, y),
        np.fmod(-x, y),
        np.hypot(x, y),
    )


def nan_extrema(x):
    y = np.where(x > 0.5, np.nan, x)  # NaN where x > 0.5
    return np.fmax(y, 0.1), np.fmin(0.1, y), np.fmax(x, y), np.count_nonzero(y > 0, axis=0)


def remainders_of_ints(a, b):
    return np.remainder(a, b), np.floor_divide(a, -b), np.fmod(-a, b), np.count_nonzero(a)


def windows(x):
    # Sliding windows: the start a loop's index, within its range, the length known at
    # compile time (elsewhere ``x[i:i + 2]`` is NumPy's slice, of an axis known at run time).
    s = x[0:2] * 0.0
    for t in range(2, x.shape[0] + 1):
        s = s + x[t - 2 : t] * x[t - 2 : t, ::-1] + x[:, t - 2 : t].sum()
    return s


def polyval(p, x):
    return (
        np.polyval(p, x),
        np.polyval(p, x[0]),
        np.polyval(p, 1.5),
        np.polyval([2.0, -1.0, 0.5], x),
        np.polyval(p[:1], x),
    )


def polyval_of_ints(p, x):
    return np.polyval(p, x), np.polyval(p, 2), np.polyval([3, 0, 1], x), np.polyval(p, 0.5)


def interp(x, xp, fp):
    xs = np.sort(xp)
    return (
        np.interp(x, xs, fp),
        np.interp(x[0], xs, fp),
        np.interp(x, xs, fp, left=-1.0, right=2.0),
        np.interp(xs, xs, fp),  # at the sample points: their values, exactly
        np.interp(0.25, [0.0, 1.0], [1.0, 3.0]),
        np.interp(x, xs[:1], fp[:1]),
    )


def interp_of_other_dtypes(x, xp, fp):
    # NumPy computes in float64 whatever the dtypes (a float32 x too).
    return np.interp(x, np.sort(xp), fp), np.interp(x.astype(np.float32), [-1, 0, 2], [1, 0, 3])


def trapezoid(y, x):
    return (
        np.trapezoid(y),
        np.trapezoid(y, dx=0.5, axis=0),
        np.trapezoid(y, x=x),
        np.trapezoid(y, x=np.cumsum(y * y, axis=0), axis=0),
        np.trapezoid(y[0], x),
        np.trapezoid(y[:, :1]),
    )


def trapezoid_of_ints(y):
    return np.trapezoid(y), np.trapezoid(y, dx=2, axis=0), np.trapezoid([1, 4, 9])


def convolve(a, v):
    return (
        np.convolve(a, v),
        np.convolve(a, v, mode="same"),
        np.convolve(a, v, mode="valid"),
        np.convolve(v, a, "same"),  # the longer first, as NumPy
        np.convolve(v, a, "valid"),
        np.convolve(a, v[:1]),
        np.convolve(a[:2], v[:2], "same"),
    )


def convolve_of_ints(a, v):
    return np.convolve(a, v), np.convolve(v, a, "same"), np.convolve(a, [1, -1], "valid")


def cross(a, b):
    return (
        np.cross(a, b),
        np.cross(a[0], b),
        np.cross(a, b, axis=0),
        np.cross(a.T, b.T, axisa=0, axisb=0),
        np.cross(a, b, axisc=0),
        np.cross([1.0, 0.0, 0.0], b[0]),
    )


def cross_of_2_vectors(a, b):
    # Deprecated by NumPy 2.0 (a DeprecationWarning), still computed.
    return np.cross(a[:, :2], b[:, :2]), np.cross(a[:, :2], b), np.cross(a, b[:, :2])


def cross_of_ints(a, b):
    return np.cross(a, b), np.cross(a[:, :2], b[:2])


def nan_reductions(x):
    # NaN where x > 0.5, at every other element: no slice of NaNs only (a finite gradient).
    parity = (np.arange(x.shape[0])[:, None] + np.arange(x.shape[1])) % 2
    y = np.where((x > 0.5) & (parity == 0), np.nan, x)
    return (
        np.nansum(y),
        np.nansum(y, axis=0),
        np.nansum(y, axis=1, keepdims=True),
        np.nanmean(y),
        np.nanmean(y, axis=-1),
        np.nanmean(y, axis=0, keepdims=True),
        np.nanmax(y),
        np.nanmax(y, axis=0),
        np.nanmin(y, axis=1, keepdims=True),
        np.nanmin(y),
    )


def nan_reductions_of_nans(x):
    # A slice of NaNs only: 0 for nansum, NaN for the others (NumPy also warns).
    y = np.where(x > 0.0, np.nan, x)
    y = np.where(np.arange(x.shape[-1]) == 0, np.nan, y)  # the first column NaNs only
    return (
        np.nansum(y, axis=0),
        np.nanmean(y, axis=0),
        np.nanmax(y, axis=0),
        np.nanmin(y, axis=0, keepdims=True),
        np.nanmax(y[:, 0]),
        np.nanmean(y[:, 0]),
    )


def nan_reductions_of_ints(a):
    return np.nansum(a), np.nanmean(a, axis=0), np.nanmax(a, axis=1), np.nanmin(a > 0)


def covariances(m, y):
    return (
        np.cov(m),
        np.cov(m, rowvar=False),
        np.cov(m, bias=True),
        np.cov(m, ddof=0),
        np.cov(m[0]),
        np.cov(m[0], y),
        np.cov(m, m[:1] * y),
        np.cov(m.T, rowvar=False, ddof=2),
    )


def correlations(m, y):
    return np.corrcoef(m), np.corrcoef(m, rowvar=False), np.corrcoef(m[0], y), np.corrcoef(y)


def covariances_of_other_dtypes(m):
    # float64 whatever m's dtype, as NumPy (and dtype=)
    return np.cov(m), np.corrcoef(m), np.cov(m, dtype=np.float32)


def spacings(a, b):
    return (
        np.logspace(a, b, 5),
        np.logspace(0.0, 2.0, 3),
        np.logspace(a, b, 4, endpoint=False, base=2.0),
        np.logspace(0, 1, 1),
        np.linspace(a, b, 1),
        np.linspace(a, b, 4, retstep=True)[1],
        np.linspace(a, 2.0 * b, 3)[-1],  # stop itself
        np.linspace(np.stack((a, b)), 3.0, 3),
        np.linspace(np.stack((a, b)), 3.0, 3, axis=1),
    )


def spacings_of_ints():
    return np.linspace(0, 10, 4, dtype=int), np.logspace(0, 3, 4), np.linspace(2, 2, 3)


def angles(x):
    return np.deg2rad(x), np.radians(x), np.rad2deg(x), np.degrees(x), np.deg2rad(180)


def angles_of_ints(a):
    return np.deg2rad(a), np.rad2deg(a), np.radians(a > 0)


def powers(x, y):
    return np.float_power(x, y), np.float_power(x, 2), np.cbrt(x), np.cbrt(-x), np.cbrt(8.0)


def cube_roots(x):
    # Negatives, zeros (-0.0 keeps its sign), infinities, nan, perfect cubes.
    special = np.array([-27.0, -0.0, 0.0, 64.0, np.inf, -np.inf, np.nan, 1e-300, 1e300])
    return np.cbrt(x), np.cbrt(special), np.cbrt(special.astype(np.float32))


def powers_of_ints(a):
    return np.float_power(a, 2), np.float_power(a, -1.5), np.cbrt(a), np.cbrt(a.astype(np.int8))


def tolist_sum(x):
    # a.tolist(): nested lists of Python numbers; here summed back (a list is a tuple in the
    # table's results).
    rows = x.tolist()
    total = 0.0
    for row in rows:
        for v in row:
            total = total + v * v
    return total, x[0, 0].tolist(), sum(x[0].tolist())


# Elementwise math and tests, shapes -----------------------------------------------------------


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


# Bits, comparisons, signs ---------------------------------------------------------------------


def bit_functions(x, y):
    return (
        np.bitwise_and(x, y),
        np.bitwise_or(x, 3),
        np.bitwise_xor(y, x),
        np.invert(x),
        np.bitwise_not(x > 0),
        np.left_shift(x, y * y),
        np.right_shift(x, 1),
        x << 3,
        np.right_shift(x.astype(np.uint8), np.int8(2)),
    )


def comparison_functions(x, y):
    return (
        np.less(x, y),
        np.less_equal(x, 0.5),
        np.greater(x, y),
        np.greater_equal(y, x),
        np.equal(x, x),
        np.not_equal(x, y),
        np.logical_xor(x, y),
        np.logical_xor(x > 0, 0),
    )


def sign_tests(x):
    return (
        np.signbit(x),
        np.signbit(-x),
        np.signbit(x * 0),
        np.array_equal(x, x),
        np.array_equal(x, -x),
        np.array_equal(x, x[:1]),
        np.array_equal(x / 0, x / 0, equal_nan=True),
        np.array_equal(x, x[..., :2]),
        np.array_equiv(x, x[..., :2]),
        np.array_equiv(x, x[:1]),
        np.array_equiv(x[:1], x[:1]),
    )


def fabs(x):
    return np.fabs(x), np.fabs(x * 2.0) * x


def fabs_of_ints(x):
    return np.fabs(x), np.fabs(x > 0), np.fabs(x.astype(np.int16)), np.fabs(x.astype(np.uint8))


def scipy_stats(x, s):
    d = x.shape[-1]
    return (
        stats.norm.logpdf(x, 0.5, s) + stats.norm.pdf(x) + stats.norm.cdf(x, 1.0, s),
        stats.t.logpdf(x, 2.0 + s, 0.1, s) + stats.t.pdf(x, 3.0),
        stats.multivariate_normal.logpdf(x, np.ones(d), np.eye(d) * s),
        stats.multivariate_normal.logpdf(x[..., 0], 0.5, s)
        + stats.multivariate_normal.pdf(x, None, np.diag(np.arange(1.0, d + 1.0)) + 0.1 * s),
    )

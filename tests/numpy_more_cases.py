"""Functions of the table of tests/test_numpy_more.py: decompositions, statistics, shapes.

Written with NumPy as researchers write them. Eigenvectors and singular vectors are defined up
to their signs, so the functions that return them fix the signs (a function of the vectors
that does not depend on LAPACK's choice is what has a gradient).
"""

from __future__ import annotations

import numpy as np


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


def windows(x, i):
    # Sliding windows: the start known at run time, the length at compile time.
    return x[i - 2 : i] * x[i - 3 : i - 1, ::-1], x[:, i - 2 : i]

"""NumPy's NaN-ignoring reductions and covariances, written in Myia's Python subset.

``np.nansum``, ``np.nanmean``, ``np.nanmax``, ``np.nanmin`` (with ``axis`` and ``keepdims``)
mask the NaNs of floats (integers have none: the plain reductions), ``np.cov`` and
``np.corrcoef`` of vectors and matrices (variables as rows or columns). `MAPPING` says what
the NumPy names mean; `mapping.py` merges it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..primitives import P
from .numpy_extra import as_array, np_array, np_atleast_2d
from .numpy_numeric import inexact
from .ops import refuse

# Variance and quantiles -----------------------------------------------------------------------


def np_var(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """``np.var`` and ``a.var``, with ``ddof`` (past the count, divided by 0 as NumPy's).

    With an integer `dtype`, NumPy's: the mean and the variance are cast to it (truncated).
    """
    a = as_array(a)
    if dtype is not None and np.issubdtype(dtype, np.integer):
        s = P.reduce_sum(a, axis, True, dtype)
        n = P.size(a) // P.size(s)
        d = a - P.astype(s / n, dtype)
        return P.astype(P.reduce_sum(d * d, axis, keepdims, dtype) / max(n - ddof, 0), dtype)
    m = P.reduce_mean(a, axis, True, dtype)
    d = a - m
    n = P.size(a) // P.size(m)
    return P.reduce_sum(d * d, axis, keepdims, dtype) / max(n - ddof, 0)


def np_std(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """``np.std`` and ``a.std``, with ``ddof`` (of an integer `dtype`, truncated to it)."""
    if dtype is not None and np.issubdtype(dtype, np.integer):
        v = np_var(a, axis, dtype, ddof, keepdims)
        if isinstance(v, np.ndarray):  # (NumPy's square root in place, of an array)
            raise TypeError(
                f"Cannot cast ufunc 'sqrt' output from dtype('float64') to "
                f"dtype('{P.dtype_of(v)}') with casting rule 'same_kind'"
            )
        return P.astype(P.sqrt(v), dtype)
    a = as_array(a)
    if ddof == 0 and P.size(a) == P.size(P.reduce_sum(a, axis, True, None)):
        # One value per deviation: the deviation is 0 whatever the value, and so is its
        # gradient. (The square root of the variance, 0, has an infinite slope: NaN.)
        d = a - P.reduce_mean(a, axis, True, dtype)
        return P.reduce_sum(P.abs_(d), axis, keepdims, dtype)
    return P.sqrt(np_var(a, axis, dtype, ddof, keepdims))


#: The virtual index of a quantile `q` among `n` sorted values, for the methods of Hyndman
#: and Fan that interpolate: ``n * q + alpha + q * (1 - alpha - beta) - 1``.
_ALPHA_BETA = {
    "interpolated_inverted_cdf": (0.0, 1.0),
    "hazen": (0.5, 0.5),
    "weibull": (0.0, 0.0),
    "median_unbiased": (1 / 3.0, 1 / 3.0),
    "normal_unbiased": (3 / 8.0, 3 / 8.0),
}
_DISCRETE = ("lower", "higher", "nearest", "inverted_cdf", "closest_observation")
_METHODS = (*_DISCRETE, "linear", "midpoint", "averaged_inverted_cdf", *_ALPHA_BETA)


def np_quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """``np.quantile`` (NumPy's methods): `q` a scalar or a vector, `axis` None or an int.

    From the sorted values (their gradient goes back through the permutation): the value at
    an index (the discrete methods, in `a`'s dtype) or NumPy's interpolation between the two
    nearest; a nan among the values gives nan, as in NumPy.
    """
    if method not in _METHODS:
        raise ValueError("not a valid method of np.quantile: " + method)
    a = as_array(a)
    if isinstance(q, (tuple, list)):
        q = np_array(q)  # (a literal list is a tuple: `sequence_argument`)
    if axis is None:
        x, ax = P.reshape(a, -1), 0
    else:
        x, ax = a, axis
    n = P.shape(x)[ax]
    if n == 0:  # (NumPy's error; its median is NaN, `np_median`)
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    srt = P.take_along_axis(x, P.argsort(x, ax), ax)
    last = P.take(srt, n - 1, ax)
    if method in _DISCRETE:
        vlo = P.take(srt, _discrete_index(method, n, q), ax)
        if P.ndim(q) != 0:
            vlo = P.moveaxis(vlo, ax, 0)
        r = P.where(last != last, last, vlo)
    else:
        pos, frac = _virtual_index(method, n, q)
        lo = P.floor(pos)
        ilo = P.astype(P.clip(lo, 0, n - 1), np.int64)
        ihi = P.astype(P.clip(lo + 1, 0, n - 1), np.int64)
        vlo = P.take(srt, ilo, ax)
        vhi = P.take(srt, ihi, ax)
        if P.ndim(q) == 0:
            r = P.where(last != last, last, _lerp(vlo, vhi, frac))
        else:
            lo_last, hi_last = P.moveaxis(vlo, ax, -1), P.moveaxis(vhi, ax, -1)
            r = P.where(last != last, last, P.moveaxis(_lerp(lo_last, hi_last, frac), -1, 0))
    if keepdims:
        kept = P.shape(P.reduce_sum(a, axis, True, None))
        return P.reshape(r, kept if P.ndim(q) == 0 else P.shape(q) + kept)
    return r


def _discrete_index(method, n, q):
    """The index of the value a discrete `method` picks for the quantile `q` of `n` values."""
    if method == "lower":
        return P.astype(P.floor(q * (n - 1.0)), np.int64)
    if method == "higher":
        return P.astype(P.ceil(q * (n - 1.0)), np.int64)
    if method == "nearest":
        return P.astype(P.rint(q * (n - 1.0)), np.int64)  # (halves to even, as np.around)
    if method == "inverted_cdf":
        v = q * n - 1.0
        below = P.floor(v)
        at = P.where(v - below == 0, below, below + 1)
    else:  # closest_observation: the nearest even order statistic (odd, from 0) at a tie
        v = q * n - 1.5
        below = P.floor(v)
        at = P.where((v - below == 0) & (below % 2 == 1), below, below + 1)
    return P.astype(P.maximum(at, 0), np.int64)


def _virtual_index(method, n, q):
    """The virtual index of the quantile `q` (a float) and the weight of the value after it.

    As NumPy's: past the last value (or before the first) the two values are the same, and the
    weight is the index less the position of the value taken, ``-1`` (or ``0``).
    """
    if method == "linear":
        v = q * (n - 1.0)
    elif method == "midpoint":
        v = (P.floor(q * (n - 1.0)) + P.ceil(q * (n - 1.0))) * 0.5
    elif method == "averaged_inverted_cdf":
        v = q * n - 1.0
    else:
        alpha, beta = _ALPHA_BETA[method]
        v = n * q + (alpha + q * (1 - alpha - beta)) - 1
    lo = P.floor(v)
    taken = P.where(v >= n - 1, -1.0, P.where(v < 0, 0.0, lo))
    frac = v - taken
    if method == "midpoint":
        frac = P.where(v % 1 == 0, 0.0, 0.5)
    elif method == "averaged_inverted_cdf":
        frac = P.where(frac == 0, 0.5, 1.0)
    return v, frac


def _lerp(a, b, t):
    """NumPy's interpolation from `a` to `b` by `t`: from `b` where ``t >= 0.5``."""
    d = b - a
    return P.where(t >= 0.5, b - d * (1 - t), a + d * t)


def np_percentile(
    a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False
):
    """``np.percentile`` (method "linear"): ``np.quantile(a, q / 100)``."""
    if isinstance(q, (tuple, list)):
        q = np_array(q)
    return np_quantile(a, q / 100.0, axis, None, False, method, keepdims)


def np_median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``np.median``: the mean of the two middle values for an even count (NaN of none)."""
    a = as_array(a)
    if (P.size(a) if axis is None else P.shape(a)[axis]) == 0:
        # NumPy's NaN (with a warning) where the axis is empty, in the dtype of the mean.
        shape = P.shape(P.reduce_sum(a, axis, keepdims, None))
        return P.full(shape, np.nan, P.dtype_of(P.reduce_mean(a, None, False, None)))
    return np_quantile(a, 0.5, axis, None, False, "linear", keepdims)


# NaN-ignoring reductions ------------------------------------------------------------------------


def np_nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    """``np.nansum``: the sum with NaNs as zeros (0 for a slice of NaNs only)."""
    if out is not None:
        refuse("np.nansum(out=...) is not supported in Myia code (values are immutable)")
    a = as_array(a)
    if inexact(a):
        a = P.where(a != a, 0, a)
    return P.reduce_sum(a, axis, keepdims, dtype)


def np_nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    """``np.nanmean``: the mean of the values that are not NaN (NaN for none, as NumPy).

    As NumPy, the sum of the values over their count is computed in float64 and given the
    dtype of the sum (float32 stays float32); integers: ``np.mean``.
    """
    if out is not None:
        refuse("np.nanmean(out=...) is not supported in Myia code (values are immutable)")
    a = as_array(a)
    if not inexact(a):
        return P.reduce_mean(a, axis, keepdims, dtype)
    known = a == a
    total = P.reduce_sum(P.where(known, a, 0), axis, keepdims, dtype)
    count = P.reduce_sum(known, axis, keepdims, None)
    mean = P.astype(total, np.float64) / P.maximum(count, 1)  # (no 0 / 0: NaN where none)
    return P.astype(P.where(count == 0, np.nan, mean), P.dtype_of(total))


def np_nanmax(a, axis=None, out=None, keepdims=False):
    """``np.nanmax``: the largest value that is not NaN (NaN for a slice of NaNs only).

    (NumPy also warns there.)
    """
    if out is not None:
        refuse("np.nanmax(out=...) is not supported in Myia code (values are immutable)")
    return _nan_extremum(P.reduce_max, -np.inf, a, axis, keepdims)


def np_nanmin(a, axis=None, out=None, keepdims=False):
    """``np.nanmin``: the smallest value that is not NaN (NaN for a slice of NaNs only).

    (NumPy also warns there.)
    """
    if out is not None:
        refuse("np.nanmin(out=...) is not supported in Myia code (values are immutable)")
    return _nan_extremum(P.reduce_min, np.inf, a, axis, keepdims)


def _nan_extremum(reduce, fill, a, axis, keepdims):
    """`reduce` (``reduce_max``, ``reduce_min``) of `a`, NaNs as `fill`; NaN for NaNs only."""
    a = as_array(a)
    if not inexact(a):
        return reduce(a, axis, keepdims)
    known = a == a
    m = reduce(P.where(known, a, fill), axis, keepdims)
    return P.where(P.reduce_sum(known, axis, keepdims, None) == 0, np.nan, m)


for _fn in (np_nansum, np_nanmean, np_nanmax, np_nanmin):
    _fn.sequence_argument = True  # type: ignore[attr-defined]


# Covariance and correlation ---------------------------------------------------------------------


def _variables(m, rowvar, dtype):
    """The variables of `m` as the rows of a matrix of `dtype` (``np.cov``'s ``X``)."""
    x = np_atleast_2d(P.astype(as_array(m), dtype))
    if not rowvar and P.shape(x)[0] != 1:
        return P.transpose(x, None)
    return x


def np_cov(
    m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None
):
    """``np.cov(m, y, rowvar, bias, ddof)``: the covariance matrix of variables.

    The variables are the rows of `m` (and `y`), or their columns (``rowvar=False``). As
    NumPy: float64 (or `dtype`) whatever `m`'s dtype; the centered products times
    ``1 / (N - ddof)`` (ddof 1, or 0 with `bias`; infinite where ``N - ddof <= 0``, where
    NumPy warns), squeezed (a scalar for one variable).
    """
    if fweights is not None or aweights is not None:
        refuse("np.cov(fweights=..., aweights=...) is not supported in Myia code")
    if dtype is None:
        dtype = np.float64
    if P.ndim(as_array(m)) > 2:
        raise ValueError("m has more than 2 dimensions")
    x = _variables(m, rowvar, dtype)
    if P.shape(x)[0] == 0:
        return P.zeros((0, 0), dtype)
    if y is not None:
        if P.ndim(as_array(y)) > 2:
            raise ValueError("y has more than 2 dimensions")
        x = P.concatenate((x, _variables(y, rowvar, dtype)), 0)
    if ddof is None:
        ddof = 0 if bias else 1
    fact = P.shape(x)[1] - ddof
    x = x - P.expand_dims(P.reduce_mean(x, 1, False, None), 1)
    c = P.dot(x, P.transpose(x, None))
    if fact <= 0:
        c = c * np.inf
    else:
        c = c * (1.0 / fact)
    return P.squeeze(c, None)


def np_corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """``np.corrcoef(x, y, rowvar)``: the correlation coefficients.

    As NumPy: ``np.cov`` over the products of the standard deviations, clipped to [-1, 1]
    (a scalar ``c / c`` for one variable).
    """
    c = np_cov(x, y, rowvar, False, None, None, None, dtype=dtype)
    if P.ndim(c) == 0:
        return c / c
    s = P.sqrt(P.diagonal(c, 0, 0, 1))
    c = c / P.expand_dims(s, 1)
    c = c / P.expand_dims(s, 0)
    return P.clip(c, -1, 1)


for _fn in (np_var, np_std, np_median):  # (a literal list as `a` is read as a tuple)
    _fn.sequence_argument = True  # type: ignore[attr-defined]
# ``np.quantile(x, [0.1, 0.9])``: the quantiles, an array of known length.
for _fn in (np_cov, np_corrcoef, np_quantile, np_percentile):
    _fn.sequence_argument = (0, 1)  # type: ignore[attr-defined]

MAPPING: dict[Any, Any] = {
    np.nansum: np_nansum,
    np.nanmean: np_nanmean,
    np.nanmax: np_nanmax,
    np.nanmin: np_nanmin,
    np.cov: np_cov,
    np.corrcoef: np_corrcoef,
    np.var: np_var,
    np.std: np_std,
    np.quantile: np_quantile,
    np.percentile: np_percentile,
    np.median: np_median,
}

METHODS: dict[str, Any] = {
    "var": np_var,
    "std": np_std,
}

"""SciPy's distributions (``scipy.stats.norm``, ``t``, ``multivariate_normal``) in Myia code.

A distribution of ``scipy.stats`` is an object whose methods Myia code calls
(``norm.logpdf(x, loc, scale)``); in Myia code it means a `Distribution`, a namespace of
functions written in Myia's Python subset with SciPy's signatures, so their gradients (with
respect to the points and to the parameters) are those of the formulas. As SciPy's, their
results are float64. `SCIPY` says what the objects of ``scipy.stats`` mean; `mapping.py`
merges it (once ``scipy.stats`` is imported: ``import myia`` imports no SciPy).
"""

from __future__ import annotations

import math
import types
from typing import Any

import numpy as np

from ..primitives import P
from .numpy_linalg import solve_triangular
from .ops import refuse

_LOG_2PI = math.log(2.0 * math.pi)


class Distribution(types.SimpleNamespace):
    """The methods of one of SciPy's distributions, as Myia code calls them."""

    def __repr__(self) -> str:
        return f"scipy.stats.{self.name}"


def _f64(x):
    """`x` as SciPy computes it: float64 (a Python number or a float32 array too).

    (SciPy computes ``log(scale)`` in the precision of `scale`, and so do these functions.)
    """
    return P.astype(x, "float64")


# The normal distribution ------------------------------------------------------------------------


def norm_logpdf(x, loc=0, scale=1):
    """``scipy.stats.norm.logpdf(x, loc, scale)``."""
    z = (_f64(x) - loc) / scale
    return -0.5 * z * z - 0.5 * _LOG_2PI - P.log(scale)


def norm_pdf(x, loc=0, scale=1):
    """``scipy.stats.norm.pdf(x, loc, scale)``."""
    return P.exp(norm_logpdf(x, loc, scale))


def norm_cdf(x, loc=0, scale=1):
    """``scipy.stats.norm.cdf(x, loc, scale)``."""
    return 0.5 * P.erfc((loc - _f64(x)) / scale / math.sqrt(2.0))


# Student's t distribution ------------------------------------------------------------------------


def t_logpdf(x, df, loc=0, scale=1):
    """``scipy.stats.t.logpdf(x, df, loc, scale)``."""
    df = _f64(df)
    y = (_f64(x) - loc) / scale
    half = 0.5 * (df + 1.0)
    norm_const = P.gammaln(half) - P.gammaln(0.5 * df) - 0.5 * P.log(df * math.pi)
    return norm_const - half * P.log1p(y * y / df) - P.log(scale)


def t_pdf(x, df, loc=0, scale=1):
    """``scipy.stats.t.pdf(x, df, loc, scale)``."""
    return P.exp(t_logpdf(x, df, loc, scale))


# The multivariate normal distribution -----------------------------------------------------------


def mvn_logpdf(x, mean=None, cov=1, allow_singular=False):
    """``scipy.stats.multivariate_normal.logpdf(x, mean, cov)``.

    The points are the last axis of `x` (a vector is one point; when the dimension is 1, a
    vector is that many points); the result has the other axes, without those of length 1
    (as SciPy's: a number for one point). `cov` is a matrix, a vector (its diagonal) or a
    number (times the identity), `mean` a vector (zero when None). By a Cholesky factor,
    so `cov` must be positive definite (SciPy's ``allow_singular`` is not taken).
    """
    if allow_singular:
        refuse("multivariate_normal.logpdf(allow_singular=True) is not supported in Myia code")
    cov = _f64(cov)
    if P.ndim(cov) == 2:
        d = P.shape(cov)[0]
    elif P.ndim(cov) == 1:
        d = P.shape(cov)[0]
    elif mean is None:
        d = 1
    else:
        d = P.shape(mean)[-1] if P.ndim(mean) > 0 else 1
    if P.ndim(cov) < 2:
        cov = P.eye(d, None, 0, "float64") * cov
    x = _f64(x)
    if P.ndim(x) == 0 or (P.ndim(x) == 1 and d == 1):
        x = P.reshape(x, (-1, 1))
    lead = P.shape(x)[:-1]
    dev = P.reshape(x, (-1, d)) if mean is None else P.reshape(x - mean, (-1, d))
    chol = P.cholesky(cov)
    z = solve_triangular(chol, P.swapaxes(dev, 0, 1), 0, True)
    maha = P.reduce_sum(z * z, 0, False, None)
    logdet = 2.0 * P.reduce_sum(P.log(P.diagonal(chol, 0, 0, 1)), -1, False, None)
    out = P.reshape(-0.5 * (d * _LOG_2PI + logdet + maha), lead)
    return np.squeeze(out)


def mvn_pdf(x, mean=None, cov=1, allow_singular=False):
    """``scipy.stats.multivariate_normal.pdf(x, mean, cov)``."""
    return P.exp(mvn_logpdf(x, mean, cov, allow_singular))


#: What SciPy's distributions mean in Myia code, by module and name (see `numpy_extra.SCIPY`).
SCIPY: dict[str, dict[str, Any]] = {
    "scipy.stats": {
        "norm": Distribution(name="norm", logpdf=norm_logpdf, pdf=norm_pdf, cdf=norm_cdf),
        "t": Distribution(name="t", logpdf=t_logpdf, pdf=t_pdf),
        "multivariate_normal": Distribution(
            name="multivariate_normal", logpdf=mvn_logpdf, pdf=mvn_pdf
        ),
    },
}

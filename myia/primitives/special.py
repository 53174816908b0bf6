"""Special functions, elementwise: ``erf``, ``erfc``, ``gammaln``, ``digamma``, ``polygamma``.

``math.erf``, ``math.erfc`` and ``math.lgamma`` compute the first three on Python floats; on
arrays and NumPy scalars, and for ``digamma`` and ``polygamma`` always, the functions are
SciPy's (``scipy.special``, imported by the first program that needs it). SciPy is optional:
where it is not installed, a program that needs it is refused at compile time
(`MyiaTypeError`), and so is the gradient of ``math.lgamma``, whose derivative is ``digamma``.

Derivatives, each written with these primitives so that every order is exact:
``erf' = 2/sqrt(pi) exp(-x^2)``, ``erfc' = -erf'``, ``gammaln' = digamma``,
``digamma' = polygamma(1, .)``, ``polygamma(n, .)' = polygamma(n + 1, .)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..abstract.data import AbstractScalar
from ..errors import MyiaTypeError
from ..grad.registry import bprop
from ..infer.registry import infer_rule
from ..infer.rulelib import const_value, elementwise
from .core import primitive
from .scalar import exp

#: ``scipy.special`` once imported (None: SciPy is not installed; False: not imported yet).
_sp: Any = False


def scipy_special() -> Any:
    """The module ``scipy.special``, imported at first use, or None where SciPy is not installed.

    ``import myia`` does not import SciPy (a second of imports): the programs that compute
    with it do.
    """
    global _sp
    if _sp is False:
        try:
            import scipy.special as sp
        except ImportError:  # pragma: no cover - depends on the environment
            sp = None
        _sp = sp
    return _sp


def _py(x: Any) -> bool:
    return type(x) in (bool, int, float)


def _scalar(r: Any) -> Any:
    return r[()] if type(r) is np.ndarray and r.ndim == 0 else r


@primitive
def erf(x):
    """Elementwise error function (``math.erf``, ``scipy.special.erf``)."""
    return math.erf(x) if _py(x) else scipy_special().erf(x)


@primitive
def erfc(x):
    """Elementwise complementary error function ``1 - erf(x)`` (``math.erfc``)."""
    return math.erfc(x) if _py(x) else scipy_special().erfc(x)


@primitive
def gammaln(x):
    """Elementwise ``log|Gamma(x)|`` (``math.lgamma``, ``scipy.special.gammaln``).

    On a Python float at a pole (0, -1, ...), ``math.lgamma`` raises as in Python; SciPy's
    gives ``inf`` on arrays.
    """
    return math.lgamma(x) if _py(x) else scipy_special().gammaln(x)


@primitive
def digamma(x):
    """Elementwise ``Gamma'(x) / Gamma(x)`` (``scipy.special.digamma``, ``psi``)."""
    r = scipy_special().digamma(x)
    return float(r) if _py(x) else r


@primitive
def polygamma(n, x):
    """Elementwise ``n``-th derivative of `digamma` (``scipy.special.polygamma``, `n` an int).

    As SciPy's, its results are float64 whatever the dtype of `x`.
    """
    r = scipy_special().polygamma(n, x)
    return float(r) if _py(x) else _scalar(np.asarray(r, np.float64))


def _needs_scipy(out: Any, what: str, why: str = "") -> Any:
    if scipy_special() is None:
        raise MyiaTypeError(
            f"{what}{why} needs SciPy (scipy.special), which is not installed: "
            "install scipy to use it"
        )
    return out


def _on_python_floats(out: Any) -> bool:
    return isinstance(out, AbstractScalar) and out.weak


@infer_rule(erf, erfc, gammaln)
def _infer_erf(x):
    out = elementwise("a special function", x, float_=True)
    if _on_python_floats(out):
        return out  # Python's math
    return _needs_scipy(out, "erf, erfc and gammaln of arrays")


@infer_rule(digamma)
def _infer_digamma(x):
    out = elementwise("digamma", x, float_=True)
    return _needs_scipy(out, "digamma", " (the derivative of gammaln and math.lgamma)")


@infer_rule(polygamma)
def _infer_polygamma(n, x):
    order = const_value(n, "the order of polygamma", int)
    if order < 0:
        raise MyiaTypeError(f"polygamma's order must be a nonnegative int, not {order}")
    out = elementwise("polygamma", x, float_=True)
    if not _on_python_floats(out):
        out = elementwise("polygamma", x, dtype="float64")
    return _needs_scipy(out, "polygamma", " (the derivatives of digamma)")


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


@bprop(erf)
def bprop_erf(x, out, dout):
    return (unbroadcast(dout * (_TWO_OVER_SQRT_PI * exp(-(x * x))), x),)


@bprop(erfc)
def bprop_erfc(x, out, dout):
    return (unbroadcast(dout * (-_TWO_OVER_SQRT_PI * exp(-(x * x))), x),)


@bprop(gammaln)
def bprop_gammaln(x, out, dout):
    return (unbroadcast(dout * digamma(x), x),)


@bprop(digamma)
def bprop_digamma(x, out, dout):
    return (unbroadcast(dout * polygamma(1, x), x),)


@bprop(polygamma)
def bprop_polygamma(n, x, out, dout):
    return (gzeros(n), unbroadcast(dout * polygamma(n + 1, x), x))


from .grad import gzeros, unbroadcast  # noqa: E402

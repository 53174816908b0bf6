"""SciPy's special functions of Python numbers are SciPy's, on every backend.

``scipy.special.gammaln(0.0)`` is ``inf`` (a NumPy float64), where ``math.lgamma(0.0)``
raises ``ValueError``: each keeps its library's behaviour in Myia code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from myia import grad, myia
from myia.testing import check_grad

ss = pytest.importorskip("scipy.special")

BACKENDS = ["numpy", "debug", "native"]
try:
    import jax  # noqa: F401

    BACKENDS.append("jax")
except ImportError:  # pragma: no cover - depends on the environment
    pass


def gammaln(v):
    return ss.gammaln(v)


def specials(v):
    return ss.gammaln(v) + ss.erf(v) + ss.erfc(v) + ss.digamma(v) + ss.polygamma(1, v)


def lgamma(v):
    return math.lgamma(v)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scipy_special_of_python_numbers_follows_scipy(backend):
    f = myia(gammaln, backend=backend)
    for x in (0.0, -1.0, 2.5, 3):
        got, expected = f(x), ss.gammaln(x)
        assert type(got) is type(expected) is np.float64
        # XLA's lgamma may differ from SciPy's in the last bits.
        assert got == pytest.approx(expected, rel=1e-14) or (
            math.isinf(got) and math.isinf(expected)
        )
    assert myia(specials, backend=backend)(1.5) == pytest.approx(specials(1.5), rel=1e-13)
    with pytest.raises(ValueError, match="math domain error"):
        myia(lgamma, backend=backend)(0.0)  # Python's math.lgamma raises at a pole


def test_scipy_special_gradients_of_python_numbers():
    check_grad(specials, 1.5, order=2)
    assert grad(specials)(1.5) == pytest.approx(grad(specials, backend="debug")(1.5), rel=1e-14)

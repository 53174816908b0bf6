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


def test_import_myia_imports_no_scipy_jax_or_numba(tmp_path):
    # SciPy is a second of imports: the programs that use it import it. A SciPy function
    # imported after Myia (as below) means what it meant.
    import subprocess
    import sys

    program = tmp_path / "program.py"
    program.write_text(
        "import sys, numpy as np, myia\n"
        "print(sorted(m for m in ('scipy', 'jax', 'numba', 'llvmlite') if m in sys.modules))\n"
        "from scipy.special import erf\n"
        "from scipy.linalg import cholesky\n"
        "def f(x):\n"
        "    return erf(x).sum() + cholesky(np.eye(2) * 4.0).sum()\n"
        "print(myia.myia(f)(np.array([0.5, 1.0])) == f(np.array([0.5, 1.0])))\n"
    )
    out = subprocess.run(
        [sys.executable, str(program)], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split("\n")[:2] == ["[]", "True"]

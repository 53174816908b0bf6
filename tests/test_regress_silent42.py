"""Python's answers where Myia gave NumPy's or refused: ``vmap`` of ``math`` functions, dict
views, ranges, ``tuple()``, ``np.var`` of integers, NumPy's unsigned scalars with Python ints.
"""

import math

import numpy as np
import pytest

from myia import grad, myia, vmap
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]


def _python(fn, *args):
    """``fn(*args)`` in Python: its result, or the type and message of its error."""
    try:
        return fn(*args)
    except Exception as e:
        return type(e), str(e)


def _myia(fn, *args, backend):
    try:
        return myia(fn, backend=backend)(*args)
    except Exception as e:
        return type(e), str(e)


# vmap of Python's math functions: Python's errors, per example --------------------------------

X = np.array([1.0, 0.0, -1.0, 2000.0])

MATH = [
    lambda x: math.log(x),
    lambda x: math.sqrt(x),
    lambda x: math.acos(x),
    lambda x: math.exp(x),
    lambda x: math.cosh(x),
    lambda x: math.atanh(x),
    lambda x: math.lgamma(x),
    lambda x: math.log(x, 2.0),
    lambda x: math.sin(x * math.inf),
    lambda x: 1.0 / float(x),
    lambda x: 1.0 // float(x),
    lambda x: 1.0 % float(x),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(MATH)))
def test_vmap_math_raises_as_python(k, backend):
    fn = MATH[k]
    want = _python(lambda xs: [fn(x) for x in xs], X)
    assert isinstance(want, tuple) and issubclass(want[0], ArithmeticError | ValueError)
    assert _myia(lambda xs: vmap(fn)(xs), X, backend=backend) == want


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_math_in_domain(backend):
    xs = np.array([0.5, 1.0, 3.0])
    f = myia(lambda xs: vmap(lambda x: math.log(x) + math.sqrt(x) / float(x))(xs), backend=backend)
    np.testing.assert_allclose(f(xs), [math.log(x) + math.sqrt(x) / x for x in xs])
    # NaN operands are no error (Python's math.log(nan) is nan)
    assert np.isnan(f(np.array([np.nan, 1.0]))[0])


def test_vmap_math_top_level_and_guarded():
    with pytest.raises(ValueError, match="math domain error"):
        vmap(lambda x: math.log(x))(np.arange(3.0))
    # A branch or loop that keeps the examples out of the domain is no error.
    guarded = vmap(lambda x: math.log(x) if x > 0 else 0.0)
    np.testing.assert_allclose(guarded(np.array([-1.0, 0.0, math.e])), [0.0, 0.0, 1.0])

    def shrink(x):
        while x > 1.0:
            x = math.sqrt(x) - 1.0
        return x

    xs = np.array([0.5, 9.0, 100.0, -4.0])
    np.testing.assert_allclose(vmap(shrink)(xs), [shrink(x) for x in xs])


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_vmap_math(backend):
    def loss(xs):
        return np.sum(vmap(lambda x: math.log(x) * math.sqrt(x))(xs))

    check_grad(loss, np.array([0.5, 1.5, 2.0]), backend=backend)
    g = myia(lambda xs: grad(loss)(xs), backend=backend)
    with pytest.raises(ValueError, match="math domain error"):
        g(np.array([0.5, -1.0]))


def test_vmap_math_loop_test_on_done_examples():
    def halve_logs(x):
        n = 0
        while math.log(x) > 0.0:
            x = x / 3.0
            n += 1
        return x

    xs = np.array([0.5, 10.0, 100.0])
    np.testing.assert_allclose(vmap(halve_logs)(xs), [halve_logs(x) for x in xs])
    with pytest.raises(ValueError, match="math domain error"):
        vmap(halve_logs)(np.array([2.0, -1.0]))

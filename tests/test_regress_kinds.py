"""Regression tests: the kinds of results (Python scalars, NumPy scalars, arrays).

``math``'s functions return Python floats and ints whatever scalar they receive, as in
Python; a compiled function never returns a 0-d array (API.md: "scalars as Python or NumPy
scalars, never 0-d arrays"), its gradients neither. Checked on every backend.
"""

import math
from dataclasses import dataclass

import numpy as np
import pytest

from myia import grad, myia, value_and_grad
from myia.testing import check_grad

try:
    import jax
except ImportError:  # pragma: no cover
    jax = None

BACKENDS = ["numpy", "debug", "native"] + (["jax"] if jax is not None else [])

SCALARS = [np.float64(0.75), np.float32(0.75), 0.75, np.float16(0.75), 2, np.int32(2)]


def _same(got, expected):
    assert type(got) is type(expected), (got, expected)
    if isinstance(got, (tuple, list)):
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            _same(a, b)
    elif isinstance(got, np.ndarray):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    else:
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)


MATH = [
    lambda x: math.sin(x),
    lambda x: math.cos(x) + math.tan(x),
    lambda x: math.sqrt(x),
    lambda x: math.exp(x) - math.expm1(x),
    lambda x: math.log(x) + math.log1p(x),
    lambda x: math.atan(x) + math.asin(x / 4) + math.acos(x / 4),
    lambda x: math.sinh(x) * math.cosh(x) + math.tanh(x),
    lambda x: math.asinh(x) + math.acosh(x + 1.0) + math.atanh(x / 4) + math.copysign(x, -0.0),
    lambda x: math.fabs(x),
    lambda x: math.atan2(x, 2.0),
    lambda x: math.pow(x, 3),
    lambda x: math.floor(x * 3),
    lambda x: math.ceil(x * 3),
    lambda x: math.isnan(x),
    lambda x: math.isinf(x),
    lambda x: math.isfinite(x),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", MATH)
def test_math_of_numpy_scalars_returns_python_numbers(backend, fn):
    f = myia(fn, backend=backend)
    for x in SCALARS:
        _same(f(x), fn(x))


@pytest.mark.parametrize("x", [np.float64(0.75), np.float32(0.75), 0.75])
def test_math_gradient_keeps_the_argument_kind(x):
    def f(x):
        return math.sin(x) * math.pow(x, 2.0) + math.sqrt(x)

    g = grad(f)(x)
    assert type(g) is type(x)
    expected = math.cos(x) * x**2 + 2 * x * math.sin(x) + 0.5 / math.sqrt(x)
    assert g == pytest.approx(expected, rel=1e-6 if type(x) is np.float32 else 1e-12)
    check_grad(f, np.float64(x))


# Results are never 0-d arrays -----------------------------------------------------------------

X0 = np.array(3.0)
X32 = np.array(3.0, np.float32)


@dataclass
class Holder:
    w: np.ndarray
    b: float


RESULTS = [
    (lambda x: x, (X0,)),
    (lambda x: x, (X32,)),
    (lambda x: (x, x * 2.0), (X0,)),
    (lambda x: [x, x], (X32,)),
    (lambda x: {"a": x, "b": 2.0}, (X0,)),
    (lambda h: Holder(h.w, h.b * 2.0), (Holder(X32, 1.5),)),
    (lambda x: np.reshape(x, ()), (np.ones(1, np.float32),)),
    (lambda x: x.astype(np.float32), (X0,)),
    (lambda x: np.zeros_like(x), (X32,)),
    (lambda x: np.sum(x, keepdims=False), (np.ones(3, np.float32),)),
    (lambda x: np.where(x > 1.0, x, 0.0), (X0,)),
    (lambda x: x[...], (X32,)),
    (lambda x, y: x if y > 0 else x * 2.0, (X0, 1.0)),
]


def _numpy_scalars(v):
    """Python's result with its 0-d arrays made NumPy scalars (the contract's kinds)."""
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return v[()]
    if isinstance(v, (tuple, list)):
        return type(v)(_numpy_scalars(e) for e in v)
    if isinstance(v, dict):
        return {k: _numpy_scalars(e) for k, e in v.items()}
    if isinstance(v, Holder):
        return Holder(_numpy_scalars(v.w), _numpy_scalars(v.b))
    return v


def _no_0d(v):
    if isinstance(v, np.ndarray):
        assert v.ndim > 0, repr(v)
    elif isinstance(v, (tuple, list)):
        for e in v:
            _no_0d(e)
    elif isinstance(v, dict):
        for e in v.values():
            _no_0d(e)
    elif isinstance(v, Holder):
        _no_0d(v.w)
        _no_0d(v.b)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", RESULTS)
def test_results_are_never_0d_arrays(backend, fn, args):
    got = myia(fn, backend=backend)(*args)
    _no_0d(got)
    expected = _numpy_scalars(fn(*args))
    if isinstance(got, Holder):
        _same(got.w, expected.w)
        _same(got.b, expected.b)
    elif isinstance(got, dict):
        assert got.keys() == expected.keys()
        for k in got:
            _same(got[k], expected[k])
    else:
        _same(got, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_of_0d_arrays_are_numpy_scalars(backend):
    def f(x, t, h):
        return x * t[0] * t[1] + np.sum(h.w * h.b) + x

    args = (X0, (X32, 2.0), Holder(np.array(4.0), 5.0))
    dx, dt, dh = grad(f, 0, 1, 2, backend=backend)(*args)
    _same(dx, np.float64(3.0 * 2.0 + 1.0))
    _same(dt, (np.float32(6.0), 9.0))
    _same(dh.w, np.float64(5.0))
    _same(dh.b, 4.0)
    _no_0d((dx, dt, dh.w, dh.b))
    # The identity and a function not reading its argument.
    _same(grad(lambda x: x, backend=backend)(X32), np.float32(1.0))
    _same(grad(lambda x, y: y * 2.0, 0, backend=backend)(X0, 1.0), np.float64(0.0))
    value, g = value_and_grad(lambda x: x, backend=backend)(X0)
    _same(value, np.float64(3.0))
    _same(g, np.float64(1.0))
    check_grad(f, *args)


def test_0d_arrays_inside_compiled_code_behave_as_numpy():
    # Inside, a 0-d array is a 0-d array: its shape, ndim and reshape are NumPy's.
    def f(x):
        y = np.reshape(x, (1,))
        return y * 2.0, x.ndim, x.shape

    got = myia(f)(X0)
    _same(got[0], np.array([6.0]))
    assert got[1:] == (0, ())


def test_loaded_programs_return_no_0d_arrays(tmp_path):
    from myia.saving import load, save

    def f(x):
        return x, x * 2.0

    path = tmp_path / "f.json"
    save(f, str(path), X32)
    _same(load(str(path))(X32), (np.float32(3.0), np.float32(6.0)))


# NumPy's functions on Python numbers -----------------------------------------------------------

# NumPy makes Python numbers NumPy scalars: np.log(0.0) is -inf (a float64) where math.log
# raises, np.power(-1.0, 0.5) is nan (not a complex), np.exp(1.0) is a float64.
UFUNCS_ON_NUMBERS = [
    (lambda x: np.log(x), (0.0,)),
    (lambda x: np.log(x), (-1.0,)),
    (lambda x: np.sqrt(x) + np.arcsin(x), (-2.0,)),
    (lambda x: np.log1p(x) * np.log2(x - 1.0), (-1.0,)),
    (lambda x: np.exp(x), (1000.0,)),
    (lambda x: np.arccosh(x) + np.arctanh(x) + np.arcsinh(x), (0.5,)),  # nan, not an error
    (lambda x: np.arctanh(x), (True,)),  # inf, a float16
    (lambda x, y: np.copysign(x, y), (2, -0.0)),
    (lambda x: np.exp(x), (2,)),
    (lambda x: np.power(x, 0.5), (-1.0,)),
    (lambda x, y: np.divide(x, y), (1.0, 0.0)),
    (lambda x, y: np.maximum(x, y), (2, 3)),
    (lambda x, y: np.add(x, y), (2, 3.5)),
    (lambda x: np.abs(x), (True,)),
    (lambda x: np.sin(x) + math.sin(x), (1.0,)),  # a float64 plus a float
    (lambda x, y: np.maximum(x, y), (np.float32(1.0), 2.0)),  # a weak Python float
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", UFUNCS_ON_NUMBERS)
def test_numpy_functions_on_python_numbers_follow_numpy(backend, fn, args):
    with np.errstate(all="ignore"):
        expected = fn(*args)
        got = myia(fn, backend=backend)(*args)
    assert type(got) is type(expected), (got, expected)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_numpy_functions_on_python_floats(backend):
    def f(x, y):
        return np.exp(x) * np.maximum(x, y) + np.arctan2(x, y) + np.log(y)

    dx, dy = grad(f, 0, 1, backend=backend)(1.0, 0.5)
    assert type(dx) is float and type(dy) is float  # the arguments' kinds
    check_grad(f, 1.0, 0.5, order=2, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "s,m",
    [
        (np.float64(2.0), np.ones((2, 2))),
        (np.float32(2.0), np.ones((2, 2), np.float32)),
        (np.float32(2.0), np.ones(3)),
        (2.0, np.ones(3)),
    ],
)
def test_gradient_of_a_scalar_broadcast_to_an_array(backend, s, m):
    # Under JAX, the gradient of a NumPy scalar was the array's sensitivity, unsummed.
    def f(s, m):
        return np.sum(s * m * m)

    ds, dm = grad(f, 0, 1, backend=backend)(s, m)
    _same(ds, type(s)(np.sum(m * m)))
    assert dm.shape == m.shape and dm.dtype == m.dtype

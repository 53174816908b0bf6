"""Python's answers where Myia gave another silently: ``vmap`` of loops that leave Python's
domain (NaN instead of Python's error, NaN gradients of examples that are done).
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


# vmap of a loop whose body leaves Python's domain for an example that continues ---------------


def logs_for(x, n):
    s = 0.0
    for i in range(n):
        s = s + math.log(x - i)
    return s


def roots_while(x):
    s = 0.0
    while x > 0.0:
        s = s + math.sqrt(x - 1.0)
        x = x - 1.0
    return s


def shrink(x):
    while x > 1.0:
        x = np.sqrt(x) - 1.0
    return x


LOOPS = [
    (lambda xs: vmap(roots_while)(xs), (np.array([5.0, 1.5, 3.0]),)),
    (lambda xs: vmap(logs_for, (0, None))(xs, 3), (np.array([5.0, 1.5, 3.0]),)),
    (lambda xs, ns: vmap(logs_for)(xs, ns), (np.array([5.0, 1.5, 3.0]), np.array([3, 2, 4]))),
    (lambda xs, ns: vmap(vmap(logs_for))(xs, ns), (np.array([[5.0, 1.5]]), np.array([[3, 3]]))),
    (lambda xs: vmap(grad(roots_while))(xs), (np.array([5.0, 1.5, 3.0]),)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(LOOPS)))
def test_vmap_of_a_loop_raises_as_python(k, backend):
    # The body ran with Python's errors off (its examples that were done may be out of its
    # domain): NaN where each example's call raises ValueError.
    fn, args = LOOPS[k]
    assert _myia(fn, *args, backend=backend) == (ValueError, "math domain error")


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_a_loop_in_domain_is_no_error(backend):
    xs, ns = np.array([5.0, 2.5, 3.5]), np.array([3, 1, 0])
    f = myia(lambda xs, ns: vmap(logs_for)(xs, ns), backend=backend)
    np.testing.assert_allclose(f(xs, ns), [logs_for(x, n) for x, n in zip(xs, ns)])
    g = myia(lambda xs: vmap(roots_while)(xs), backend=backend)
    xs = np.array([4.0, 1.0, -2.0])  # (each done at 0.0, out of the body's domain)
    np.testing.assert_allclose(g(xs), [roots_while(x) for x in xs])
    # an example that is done at once is out of the body's domain: no error
    h = myia(lambda xs: vmap(shrink)(xs), backend=backend)
    xs = np.array([0.5, 9.0, -4.0])
    np.testing.assert_allclose(h(xs), [shrink(x) for x in xs])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_a_vmap_of_a_loop_is_finite_where_examples_are_done(backend):
    # The body ran on the state of an example that was done (sqrt(-4)): its value was
    # discarded, its derivative (NaN) times 0 was not.
    xs = np.array([0.5, 9.0, 100.0, -4.0])
    g = myia(lambda xs: grad(lambda xs: np.sum(vmap(shrink)(xs)))(xs), backend=backend)
    np.testing.assert_allclose(g(xs), [grad(shrink)(x) for x in xs])


# min/max of NumPy's narrow floats and Python numbers: NumPy's promotion (NEP 50) ----------------
#
# As a branch returning either joins them (API.md: NumPy's promotion), the result has the
# NumPy float's dtype: the Python number is rounded to it, as ``np.minimum`` rounds it.

NARROW = [
    (lambda a: min(a, 16777217), np.float32(1e10)),
    (lambda a: max(a, 0.1), np.float32(0.05)),
    (lambda a: min(2.5, a), np.float32(7.0)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(NARROW)))
def test_min_max_of_narrow_floats_and_python_numbers_as_numpy(k, backend):
    fn, a = NARROW[k]
    got = _myia(fn, a, backend=backend)
    want = fn(a)  # Python picks the operand; NumPy's promotion gives it a's dtype
    assert type(got) is type(a) and got == type(a)(want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_min_max_of_a_narrow_float_and_a_python_number(backend):
    f = lambda a: min(a, 3) * max(0.5, a)  # noqa: E731
    for a in (np.float32(2.0), np.float32(5.0), np.float16(0.25)):
        g = grad(f, backend=backend)(a)
        assert type(g) is type(a) and g == grad(f, backend="debug")(a.astype(np.float64))
    check_grad(f, np.float32(2.0), backend=backend)


# vmap of int() of floats: Python's error at NaN and infinity, not any integer -----------------

TO_INT = [
    (lambda x: int(x), np.array([1.7, np.nan]), ValueError),
    (lambda x: int(x), np.array([-1.7, -np.inf]), OverflowError),
    (lambda x: math.floor(x), np.array([np.inf, 2.5]), OverflowError),
    (lambda x: round(x), np.array([0.5, np.nan]), ValueError),
    (lambda x: math.trunc(x) + 1, np.array([np.nan]), ValueError),
    (lambda x: int(x), np.array([1.5, np.nan], np.float32), ValueError),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(TO_INT)))
def test_vmap_of_int_of_a_float_raises_as_python(k, backend):
    fn, xs, error = TO_INT[k]
    want = _python(lambda xs: [fn(x) for x in xs], xs)
    assert want[0] is error
    assert _myia(lambda xs: vmap(fn)(xs), xs, backend=backend) == want
    finite = np.array([1.7, -2.5, 0.0], xs.dtype)
    got = myia(lambda xs: vmap(fn)(xs), backend=backend)(finite)
    assert np.array_equal(got, [fn(x) for x in finite])


# np.linalg.norm of integers: of their float64 values, not squared in their own dtype ----------

I8 = np.array([100, 100, -128], np.int8)
M8 = np.array([[100, 100], [-128, 3]], np.int8)
NORMS = [
    (lambda a: np.linalg.norm(a), I8),
    (lambda a: np.linalg.norm(a, 3), I8),
    (lambda a: np.linalg.norm(a, 1), I8),
    (lambda a: np.linalg.norm(a), M8),
    (lambda a: np.linalg.norm(a, "fro"), M8),
    (lambda a: np.linalg.norm(a, 1), M8),
    (lambda a: np.linalg.norm(a, axis=0), np.array([[2**40, 3], [2**40, 4]])),
    (lambda a: np.linalg.norm(a), np.array([True, True])),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(NORMS)))
def test_norm_of_integers_as_numpy(k, backend):
    fn, a = NORMS[k]
    want, got = fn(a), myia(fn, backend=backend)(a)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-12)

"""Python's answers where Myia gave others, found by running programs against CPython.

``math.floor``, ``math.ceil`` and ``round`` of a Python int went through a float:
``math.floor(2**63 - 1)`` was ``2**63``. ``math.hypot`` (and ``np.hypot``) ignored a NaN
beside a number (``hypot(1.0, nan)`` was ``sqrt(2)``), gave NaN for an infinity beside a NaN
(C's and Python's ``inf``), and was off by one ulp on a third of the inputs: it is now
correctly rounded, as Python's.

Everyday Python that Myia refused: ``x in range(...)``, ``(a, b) < (c, d)`` and the other
orders of tuples and lists, ``xs == ys`` of lists, ``max(xs, key=f)``, ``min(xs, default=d)``,
``xs.count(v)``, ``xs.index(v)``, ``math.degrees``, ``math.radians``, ``math.lcm``, ``math.prod``.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from myia import myia
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]


def _backend(name):
    if name == "jax":
        pytest.importorskip("jax")
    return name


def _same(got, want):
    """Equal values of the same kind (int or float), NaN equal to NaN."""
    assert isinstance(got, (int, np.integer)) == isinstance(want, int), (got, want)
    if isinstance(want, float) and math.isnan(want):
        return math.isnan(got)
    return got == want


# Integers rounded exactly ----------------------------------------------------------------------


def rounded(x):
    return math.floor(x), math.ceil(x), round(x), math.trunc(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_floor_ceil_and_round_of_a_python_int_are_the_int(backend):
    f = myia(rounded, backend=_backend(backend))
    for x in (2**63 - 1, -(2**63), 2**53 + 1, -(2**60) - 3, True, 7, 2.5, -2.5, 1e19):
        got, want = f(x), rounded(x)
        assert all(_same(g, w) for g, w in zip(got, want)), (x, got, want)
    # A NumPy int: Python's math.floor goes through a float (NumPy's ints have no __floor__).
    x = np.int64(2**63 - 1)
    got = myia(numpy_int_rounded, backend=backend)(x)
    assert got == numpy_int_rounded(x) == (2**63, 2**63, 2**63 - 1)


def numpy_int_rounded(x):
    return math.floor(x), math.ceil(x), round(x)


# hypot -----------------------------------------------------------------------------------------


def py_hypot(a, b):
    return math.hypot(a, b)


def np_hypot(a, b):
    return np.hypot(a, b)


NAN, INF = float("nan"), float("inf")
SPECIAL = [
    (1.0, NAN),
    (0.0, NAN),
    (NAN, -2.0),
    (INF, NAN),
    (NAN, -INF),
    (-0.0, -INF),
    (0.0, 0.0),
    (1e308, 1e308),
    (5e-324, 5e-324),
    (3, 4),
    (True, 2),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_hypot_as_python_nan_inf_and_correctly_rounded(backend):
    backend = _backend(backend)
    f, g = myia(py_hypot, backend=backend), myia(np_hypot, backend=backend)
    for a, b in SPECIAL:
        assert _same(f(a, b), math.hypot(a, b)), (a, b, f(a, b))
        assert _same(float(g(a, b)), float(np.hypot(a, b))), (a, b, g(a, b))
    rng = random.Random(0)
    xs = [rng.uniform(-10, 10) * 10 ** rng.randint(-300, 300) for _ in range(200)]
    ys = [x * rng.uniform(-3, 3) for x in xs[:100]] + [rng.uniform(-9, 9) for _ in range(100)]
    # Python's math.hypot is correctly rounded: every one of them, exactly.
    assert [f(x, y) for x, y in zip(xs[:40], ys[:40])] == [
        math.hypot(x, y) for x, y in zip(xs[:40], ys[:40])
    ]
    got = g(np.array(xs), np.array(ys))
    assert list(got) == [math.hypot(x, y) for x, y in zip(xs, ys)]
    x32, y32 = np.array([3.0, 1e30, -2.5], np.float32), np.array([4.0, 1e30, 1e-30], np.float32)
    got32 = g(x32, y32)
    assert got32.dtype == np.float32
    np.testing.assert_array_equal(got32, np.hypot(x32, y32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_hypot_gradients(backend):
    backend = _backend(backend)
    for a, b in [(3.0, 4.0), (1e-200, -2e-200), (1e200, 3e200), (0.5, 0.0)]:
        check_grad(py_hypot, a, b, backend=backend, eps=1e-6 * max(abs(a), abs(b)), atol=0.0)
    check_grad(
        summed_hypot, np.array([1.0, -2.0, 3.0]), np.array([0.5, 4.0, 1e-3]), backend=backend
    )


def summed_hypot(a, b):
    return np.sum(np.hypot(a, b))


# Refusals of everyday Python ------------------------------------------------------------------


def in_a_range(x, n):
    return x in range(0, n, 3), x not in range(n, -n, -2), x in range(n)


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_a_range(backend):
    # ``x in range(...)`` was a MyiaTypeError (no ``contains`` of a range).
    f = myia(in_a_range, backend=_backend(backend))
    for x in (-3, 0, 3, 4, 9, 2.0, 3.0, 3.5, -0.0, NAN, INF, True):
        for n in (0, 10, -4):
            assert f(x, n) == in_a_range(x, n), (x, n)


def ordered(a, b):
    return a < b, a <= b, a > b, a >= b, a == b, a != b


TUPLES = [
    ((1, 2), (1, 3)),
    ((1, 2), (1, 2)),
    ((1,), (1, 0)),
    ((2.5, NAN), (2.5, 0.0)),
    (((1, 2), 3), ((1, 1), 4)),
]
LISTS = [
    ([1, 2], [1, 3]),
    ([1, 2], [1, 2]),
    ([1.0], [1, 0]),
    ([], []),
    ([], [0]),
    ([2], [1, 5]),
    ([float("nan")], [float("nan")]),  # (two NaNs: one is equal to itself in Python's lists)
    ([1.5, 2.0], [1.5]),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_tuples_and_lists_are_ordered_and_lists_compared_as_python(backend):
    # ``(a, b) < (c, d)`` and ``xs == ys`` of lists were MyiaTypeErrors.
    backend = _backend(backend)
    for a, b in TUPLES + LISTS:
        assert myia(ordered, backend=backend)(a, b) == ordered(a, b), (a, b)


def with_keys(xs):
    return (
        max(xs, key=abs),
        min(xs, key=lambda v: (v - 1) ** 2),
        max(range(len(xs)), key=lambda i: xs[i]),
        max(xs, default=-1.0),
        min(xs, key=abs, default=7.0),
    )


def of_arguments(a, b, c):
    return max(a, b, c, key=abs), min(a, b, c, key=lambda v: -v)


def default_with_arguments(a, b):
    return max(a, b, default=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_and_min_with_key_and_default(backend):
    # ``max(xs, key=f)`` was "max_n() got an unexpected keyword argument 'key'".
    backend = _backend(backend)
    f = myia(with_keys, backend=backend)
    for xs in ([3.0, -5.0, 2.0, 5.0], [2.5, -2.5, 1.0]):
        assert f(xs) == with_keys(xs)
    with pytest.raises(ValueError, match="empty"):
        f([])
    assert myia(of_arguments, backend=backend)(1, -3, 3) == of_arguments(1, -3, 3) == (-3, 3)
    with pytest.raises(TypeError, match="Cannot specify a default for max"):
        myia(default_with_arguments, backend=backend)(1, 2)
    check_grad(of_arguments_summed, 1.5, -2.5, 0.25, backend=backend)


def of_arguments_summed(a, b, c):
    u, v = of_arguments(a, b, c)
    return u * 2.0 + v + max((a, b, c), key=lambda t: (t - 1.0) ** 2)


def angles(a):
    return math.degrees(a), math.radians(a)


def integer_math(a, b, c):
    return (
        math.lcm(a, b),
        math.lcm(a, b, c),
        math.lcm(),
        math.prod((a, b, c)),
        math.prod([], start=2),
    )


def product(xs, x):
    return math.prod(xs) * math.radians(x) + math.degrees(x) + math.prod((x, x), start=0.5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_math_degrees_radians_lcm_prod(backend):
    # Each was "math.degrees is not supported in Myia code".
    backend = _backend(backend)
    f = myia(angles, backend=backend)
    rng = random.Random(1)
    for a in [1.0, 2, -0.0, INF, True, 1e308, np.float32(1.5)] + [
        rng.uniform(-1e3, 1e3) for _ in range(9)
    ]:
        assert f(a) == angles(a), a
    g = myia(integer_math, backend=backend)
    for a, b, c in [(4, 6, 10), (-6, 4, 1), (0, 6, 10), (7, -4, 1)]:
        assert g(a, b, c) == integer_math(a, b, c), (a, b, c)
    check_grad(product, (1.5, -2.0), 0.7, backend=backend)


def counted(xs, t, v):
    return xs.count(v), xs.index(v), xs.index(v, -2), t.count(v), t.index(v, 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_count_and_index_of_lists_and_tuples(backend):
    # ``xs.count(v)`` and ``xs.index(v)`` were "unsupported operation getattr".
    f = myia(counted, backend=_backend(backend))
    xs, t = [1, 2, 1, 2], (2, 1, 2)
    for v in (1, 2):
        assert f(xs, t, v) == counted(xs, t, v), v
    with pytest.raises(ValueError, match="not in"):
        f(xs, t, 3)

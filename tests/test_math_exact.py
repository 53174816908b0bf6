"""``math.frexp``, ``ldexp``, ``modf``, ``fsum``, ``isqrt`` and ``dist`` as CPython's."""

from __future__ import annotations

import math

import numpy as np
import pytest

from myia import grad, myia
from myia.testing import check_grad

BACKENDS = ["debug", "numpy", "jax"]

INF = float("inf")
NAN = float("nan")


def same(a, b):
    """Equal as CPython's results: the same type, the sign of zeros, NaN for NaN."""
    if isinstance(a, tuple):
        return type(b) is tuple and len(a) == len(b) and all(map(same, a, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))


def frexp_parts(x):
    return math.frexp(x)


def scaled(x, i):
    return math.ldexp(x, i)


def parts(x):
    return math.modf(x)


def total(xs):
    return math.fsum(xs)


def root(n):
    return math.isqrt(n)


def distance(p, q):
    return math.dist(p, q)


FLOATS = [12.5, -0.3, 0.0, -0.0, 1.0, 0.5, 5e-324, -2.2250738585072014e-308, 1.7e308]
FLOATS += [INF, -INF, NAN]


@pytest.mark.parametrize("backend", BACKENDS)
def test_frexp_and_modf_as_python(backend):
    f, g = myia(frexp_parts, backend=backend), myia(parts, backend=backend)
    for x in FLOATS + [-2.0, 3.0, 7.75, -1e-310]:
        assert same(f(x), math.frexp(x)), x
        assert same(g(x), math.modf(x)), x
    assert same(f(3), math.frexp(3)) and same(g(np.float32(2.5)), math.modf(np.float32(2.5)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_ldexp_as_python_subnormals_included(backend):
    f = myia(scaled, backend=backend)
    cases = [(0.75, -1074), (0.75, -1075), (1.0, -1075), (3.0, -1076), (0.6, 1024), (1.0, 1023)]
    cases += [(-1.5, 10), (0.0, 5000), (INF, -3), (NAN, 2), (5e-324, 1074), (1.0, True)]
    for x, i in cases:
        assert same(f(x, i), math.ldexp(x, i)), (x, i)
    with pytest.raises(OverflowError, match="math range error") as info:
        f(1.0, 1024)
    assert "return math.ldexp(x, i)" in "".join(info.value.__notes__)
    with pytest.raises(TypeError, match="Expected an int as second argument to ldexp"):
        f(1.0, 2.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fsum_is_exactly_rounded(backend):
    f = myia(total, backend=backend)
    cases = [
        (0.1,) * 10,
        [1e100, 1.0, -1e100, 1e-100, 1e50, -1.0, -1e50],
        [2.0**53, -0.5, -(2.0**-54)],
        [1.0, 2.0**-53, 2.0**-105],
        [],
        (3, 0.25, np.float32(0.1)),
        [INF, 1.0, INF],
        [NAN, 1.0],
    ]
    rng = np.random.default_rng(0)
    for _ in range(20):
        xs = [float(v) for v in rng.standard_normal(6) * 10.0 ** rng.integers(-20, 20, 6)]
        cases.append(xs + [-v for v in xs[:3]])
    for xs in cases:
        assert same(f(xs), math.fsum(xs)), xs
    with pytest.raises(ValueError, match=r"-inf \+ inf in fsum") as info:
        f([INF, -INF])
    assert "return math.fsum(xs)" in "".join(info.value.__notes__)
    with pytest.raises(OverflowError, match="intermediate overflow in fsum"):
        f([1e308, 1e308])


@pytest.mark.parametrize("backend", BACKENDS)
def test_isqrt_of_ints(backend):
    f = myia(root, backend=backend)
    for n in [0, 1, 2, 3, 4, 15, 16, 17, 10**12 - 1, 10**12, 2**62 + 12345, True]:
        assert same(f(n), math.isqrt(n)), n
    with pytest.raises(ValueError, match="isqrt\\(\\) argument must be nonnegative") as info:
        f(-4)
    assert "return math.isqrt(n)" in "".join(info.value.__notes__)
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        f(4.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dist_is_correctly_rounded(backend):
    f = myia(distance, backend=backend)
    rng = np.random.default_rng(1)
    cases = [((1.0, 2.0, 3.0), (4.0, 6.5, 3.3)), ([0.0], [-2.5]), ((), ())]
    cases += [((1e300, 1e300), (0, 0))]
    cases += [((1e-320, 3e-320), (0.0, 0.0)), ((1.0, INF), (NAN, 0.0)), ((1.0, NAN), (1.0, 2.0))]
    for _ in range(30):
        n = int(rng.integers(2, 6))
        s = 10.0 ** rng.integers(-300, 300)
        cases.append((list(rng.standard_normal(n) * s), list(rng.standard_normal(n) * s)))
    for p, q in cases:
        p = [float(v) for v in p] if isinstance(p, list) else p
        q = [float(v) for v in q] if isinstance(q, list) else q
        assert same(f(p, q), math.dist(p, q)), (p, q)
    with pytest.raises(ValueError, match="both points must have the same number of dimensions"):
        f([1.0, 2.0], [1.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_against_finite_differences(backend):
    def mantissa(x):
        return math.frexp(x)[0] * 3.0

    def ldexp_x(x):
        return math.ldexp(x * x, -3)

    def fractional(x):
        return math.modf(x)[0] ** 2

    def fsum_of(x, y):
        return math.fsum([x, y * y, 1e-3 * x]) + math.fsum((x, 2.0 * y))

    def dist_of(x, y):
        return math.dist((x, 1.0, y), (0.5, y * y, -x))

    for x in (12.5, -0.3, 3.7):
        check_grad(mantissa, x, backend=backend)
        check_grad(ldexp_x, x, backend=backend)
        check_grad(fractional, x, backend=backend)
    check_grad(fsum_of, 1.5, -0.7, backend=backend)
    check_grad(dist_of, 1.5, -0.7, backend=backend)
    # The slopes themselves: 2 ** -e, 2 ** i, 1, ones, the unit vector.
    assert myia(grad(lambda x: math.frexp(x)[0]), backend=backend)(12.5) == 2.0**-4
    assert myia(grad(lambda x: math.ldexp(x, 5)), backend=backend)(0.3) == 32.0
    assert myia(grad(lambda x: math.modf(x)[0]), backend=backend)(-2.75) == 1.0
    assert myia(grad(total), backend=backend)((0.1, 0.2, 0.3)) == (1.0, 1.0, 1.0)
    g = myia(grad(distance), backend=backend)((1.0, 2.0), (4.0, 6.0))
    assert g == pytest.approx((-0.6, -0.8))

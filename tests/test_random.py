"""Random numbers in Myia code: a ``numpy.random.Generator`` passed as an argument.

Each draw calls the generator's own method, in program order: the numbers are those NumPy
draws when the same calls run in plain Python, and the generator passed in advances.
"""

import importlib.util
import math

import numpy as np
import pytest

from myia import grad, myia, value_and_grad
from myia.errors import MyiaTypeError


def _installed(name):
    return importlib.util.find_spec(name) is not None


BACKENDS = ["numpy", "debug"]
#: Every backend, for reproducibility and advancing (the optional ones when installed).
ALL_BACKENDS = [
    "numpy",
    "debug",
    pytest.param("jax", marks=pytest.mark.skipif(not _installed("jax"), reason="no jax")),
    pytest.param("native", marks=pytest.mark.skipif(not _installed("numba"), reason="no numba")),
]


def rng(seed=0):
    return np.random.default_rng(seed)


def assert_same(got, expected):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_same(g, e)
        return
    if isinstance(expected, list):
        assert list(got) == expected
        return
    assert type(got) is type(expected), (type(got), type(expected))
    if isinstance(expected, np.ndarray):
        assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def run_both(fn, *args, seed=0, backend="numpy"):
    """Run `fn` in Python and in Myia with generators seeded alike; compare, then return."""
    r1, r2 = rng(seed), rng(seed)
    expected = fn(r1, *args)
    got = myia(fn, backend=backend)(r2, *args)
    assert_same(got, expected)
    # Both generators advanced alike.
    assert r1.bit_generator.state == r2.bit_generator.state
    return got


# Each method, as NumPy draws ------------------------------------------------------------------


PROBS = np.array([0.1, 0.2, 0.3, 0.4])


def every_method(r, mu, a):
    return (
        r.random(),
        r.random(3),
        r.random((2, 2), dtype=np.float32),
        r.standard_normal(),
        r.standard_normal(4),
        r.normal(),
        r.normal(mu, 2.0),
        r.normal(mu, 2.0, size=5),
        r.normal(a, 1.5),
        r.uniform(),
        r.uniform(-1.0, mu, 3),
        r.integers(10),
        r.integers(-5, 5, size=4),
        r.integers(0, 3, size=(2, 2), dtype=np.int32),
        r.integers(1, 6, endpoint=True),
        r.choice(5),
        r.choice(a),
        r.choice(a, size=2, replace=False),
        r.choice(4, size=3, p=PROBS),
        r.permutation(6),
        r.permutation(a),
        r.exponential(),
        r.exponential(2.0, 3),
        r.gamma(2.0),
        r.gamma(a + 1.0, 2.0),
        r.beta(2.0, 3.0, size=2),
        r.binomial(10, 0.3),
        r.binomial(10, 0.3, size=3),
        r.poisson(3.0),
        r.poisson(a + 1.0),
        r.standard_exponential(2),
        r.standard_gamma(2.5, 2),
    )


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_every_method_draws_as_numpy(backend):
    run_both(every_method, 0.5, np.arange(4.0), backend=backend)


def shuffled(r, a):
    return r.shuffle(a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_shuffle_returns_the_shuffled_copy(backend):
    a = np.arange(10.0)
    got = myia(shuffled, backend=backend)(rng(3), a)
    expected = a.copy()
    rng(3).shuffle(expected)
    assert_same(got, expected)
    assert_same(a, np.arange(10.0))  # the argument is not modified


def bernoulli(r, p):
    return r.random(8) < p


@pytest.mark.parametrize("backend", BACKENDS)
def test_bernoulli_by_comparison(backend):
    run_both(bernoulli, 0.3, backend=backend)


# Advancing and reproducibility ----------------------------------------------------------------


def two_draws(r):
    return r.random(), r.standard_normal(3)


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_the_generator_advances(backend):
    f = myia(two_draws, backend=backend)
    r = rng(7)
    a1, z1 = f(r)
    a2, z2 = f(r)
    assert a1 != a2 and not np.array_equal(z1, z2)
    # Seeded alike, draws alike; and the same numbers as plain NumPy.
    b1, y1 = f(rng(7))
    assert (a1, list(z1)) == (b1, list(y1))
    p = rng(7)
    assert_same((a1, z1), two_draws(p))
    assert_same((a2, z2), two_draws(p))


def unused_draw(r):
    r.random()
    x = r.random(3)  # noqa: F841  (drawn, never read)
    return r.random()


def unused_in_expressions(r, x):
    y = r.random() + 1.0  # noqa: F841
    r.standard_normal(3) * 2.0
    return x * r.random()


def same_expression(r):
    return r.random() - r.random(), r.normal(0.0, 1.0, 2) + r.normal(0.0, 1.0, 2)


@pytest.mark.parametrize("backend", ALL_BACKENDS)
@pytest.mark.parametrize(
    "fn,args",
    [(unused_draw, ()), (unused_in_expressions, (2.0,)), (same_expression, ())],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_draws_are_never_dropped_nor_merged(fn, args, backend):
    got = run_both(fn, *args, backend=backend)
    if fn is same_expression:
        assert got[0] != 0.0


# Loops, branches, recursion, closures ---------------------------------------------------------


def in_loop(r, n):
    out = []
    for _ in range(n):
        out = out + [r.random()]
    k = 0
    total = 0.0
    while k < n:
        total = total + r.standard_normal()
        k = k + 1
    return out, total


def in_branches(r, x):
    if x > 0:
        a = r.random()
    else:
        a = r.standard_normal()
    b = r.random() if x > 1 else r.uniform(5.0, 6.0)
    return a, b


def recursive(r, n):
    if n == 0:
        return []
    return [r.random()] + recursive(r, n - 1)


def with_closure(r, x):
    def draw(scale):
        return r.normal(0.0, scale)

    fns = [draw, lambda s: r.uniform(0.0, s)]
    return draw(x * 0.5) + draw(x), [f(x) for f in fns]


CONTROL = [
    (in_loop, (5,)),
    (in_loop, (0,)),
    (in_branches, (0.5,)),
    (in_branches, (-1.0,)),
    (in_branches, (2.0,)),
    (recursive, (6,)),
    (with_closure, (2.0,)),
]


@pytest.mark.parametrize("backend", ALL_BACKENDS)
@pytest.mark.parametrize("fn,args", CONTROL, ids=lambda v: getattr(v, "__name__", ""))
def test_control_flow_draws_as_numpy(fn, args, backend):
    got = run_both(fn, *args, backend=backend)
    values = []
    for part in got if isinstance(got, tuple) else (got,):
        values.extend(part if isinstance(part, list) else [part])
    assert len(set(values)) == len(values)  # all distinct


# Moments ---------------------------------------------------------------------------------------


def _excess_kurtosis_beta(a, b):
    num = 6 * ((a - b) ** 2 * (a + b + 1) - a * b * (a + b + 2))
    return num / (a * b * (a + b + 2) * (a + b + 3))


# (method call, mean, variance, excess kurtosis) of each distribution.
N = 20000
DISTRIBUTIONS = {
    "random": (lambda r: r.random(N), 0.5, 1 / 12, -6 / 5),
    "standard_normal": (lambda r: r.standard_normal(N), 0.0, 1.0, 0.0),
    "normal": (lambda r: r.normal(2.0, 3.0, N), 2.0, 9.0, 0.0),
    "uniform": (lambda r: r.uniform(-1.0, 3.0, N), 1.0, 16 / 12, -6 / 5),
    "exponential": (lambda r: r.exponential(2.0, N), 2.0, 4.0, 6.0),
    "gamma": (lambda r: r.gamma(3.0, 2.0, N), 6.0, 12.0, 2.0),
    "beta": (lambda r: r.beta(2.0, 5.0, N), 2 / 7, 10 / (49 * 8), _excess_kurtosis_beta(2, 5)),
    "binomial": (lambda r: r.binomial(20, 0.3, N), 6.0, 4.2, (1 - 6 * 0.21) / 4.2),
    "poisson": (lambda r: r.poisson(4.0, N), 4.0, 4.0, 0.25),
    "integers": (lambda r: r.integers(0, 10, N), 4.5, 99 / 12, -6 * 101 / (5 * 99)),
    "choice": (lambda r: r.choice(10, N), 4.5, 99 / 12, -6 * 101 / (5 * 99)),
}


def _sampler(name):
    call = DISTRIBUTIONS[name][0]

    def sample(r):
        return call(r)

    return sample


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_moments(name, backend):
    _, mean, var, kurt = DISTRIBUTIONS[name]
    x = myia(_sampler(name), backend=backend)(rng(1234))
    assert x.shape == (N,)
    # Five standard errors: that of the mean is sqrt(var / N), that of the variance
    # sqrt((mu4 - var**2) / N), with mu4 = var**2 * (3 + excess kurtosis).
    mu4 = var**2 * (3 + kurt)
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / N)
    assert abs(x.var() - var) < 5 * math.sqrt((mu4 - var**2) / N)


def test_kolmogorov_smirnov():
    stats = pytest.importorskip("scipy.stats")
    cases = {
        "normal": stats.norm(2.0, 3.0).cdf,
        "uniform": stats.uniform(-1.0, 4.0).cdf,
        "exponential": stats.expon(scale=2.0).cdf,
        "gamma": stats.gamma(3.0, scale=2.0).cdf,
        "beta": stats.beta(2.0, 5.0).cdf,
    }
    for name, cdf in cases.items():
        x = myia(_sampler(name))(rng(99))
        result = stats.kstest(x, cdf)
        # The 0.1% critical value of the statistic for N samples.
        assert result.statistic < 1.95 / math.sqrt(N), name


def test_permutations_are_permutations():
    def perms(r, a):
        return r.permutation(10), r.permutation(a), r.choice(a, size=4, replace=False)

    p, q, c = myia(perms)(rng(0), np.arange(10.0) * 2)
    assert sorted(p) == list(range(10))
    assert sorted(q) == list(np.arange(10.0) * 2)
    assert len(set(c)) == 4


# Gradients ---------------------------------------------------------------------------------------


def reparameterized(mu, sigma, r):
    z = r.standard_normal(500)
    x = mu + sigma * z
    return np.mean(np.tanh(x) ** 2)


def reparameterized_normal(mu, sigma, r):
    x = r.normal(mu, sigma, 500) + r.uniform(mu, mu + sigma, 500) + r.exponential(sigma, 500)
    return np.mean(x**2)


def in_a_loop(mu, r, n):
    s = 0.0
    for _ in range(n):
        s = s + (mu + r.standard_normal()) ** 2
    return s


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [reparameterized, reparameterized_normal], ids=lambda f: f.__name__)
def test_gradient_of_reparameterized_estimator(fn, backend):
    d_mu, d_sigma = grad(fn, "mu", "sigma", backend=backend)(0.3, 1.2, rng(11))
    # Finite differences with the same samples: the generator seeded alike per evaluation.
    fd_mu = (fn(0.3 + 1e-6, 1.2, rng(11)) - fn(0.3 - 1e-6, 1.2, rng(11))) / 2e-6
    fd_sigma = (fn(0.3, 1.2 + 1e-6, rng(11)) - fn(0.3, 1.2 - 1e-6, rng(11))) / 2e-6
    assert d_mu == pytest.approx(fd_mu, rel=1e-5)
    assert d_sigma == pytest.approx(fd_sigma, rel=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_through_a_loop_of_draws(backend):
    r = rng(3)
    value, d = value_and_grad(in_a_loop, backend=backend)(0.7, r, 6)
    p = rng(3)
    zs = [p.standard_normal() for _ in range(6)]
    assert value == pytest.approx(sum((0.7 + z) ** 2 for z in zs))
    assert d == pytest.approx(sum(2 * (0.7 + z) for z in zs))
    assert r.bit_generator.state == p.bit_generator.state  # drawn once, in the forward pass


class CountingGenerator(np.random.Generator):
    """A generator that counts the draws of each method."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.calls = {}

    def _count(self, name):
        self.calls[name] = self.calls.get(name, 0) + 1

    def standard_normal(self, *args, **kwargs):
        self._count("standard_normal")
        return super().standard_normal(*args, **kwargs)

    def random(self, *args, **kwargs):
        self._count("random")
        return super().random(*args, **kwargs)


def dropout_loss(w, x, r):
    h = np.tanh(x @ w)
    mask = r.random(h.shape) < 0.5
    noise = r.standard_normal(h.shape)
    return np.sum((h * mask * 2.0 + 0.1 * noise) ** 2)


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_draws_run_once_under_grad(backend):
    w = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    x = np.linspace(0.0, 1.0, 6).reshape(2, 3)
    r = CountingGenerator(5)
    g = grad(dropout_loss, "w", backend=backend)(w, x, r)
    assert r.calls == {"random": 1, "standard_normal": 1}
    g2 = grad(dropout_loss, "w", backend=backend)(w, x, r)
    assert r.calls == {"random": 2, "standard_normal": 2}
    assert not np.array_equal(g, g2)
    # The gradient is that of the samples drawn (finite differences, re-seeded).
    i, j, h = 1, 2, 1e-6
    wp, wm = w.copy(), w.copy()
    wp[i, j] += h
    wm[i, j] -= h
    fd = (
        dropout_loss(wp, x, CountingGenerator(5)) - dropout_loss(wm, x, CountingGenerator(5))
    ) / (2 * h)
    assert g[i, j] == pytest.approx(fd, rel=1e-5)


# What Myia refuses -------------------------------------------------------------------------------


def legacy(x):
    return x + np.random.normal()


def legacy_seed(x):
    np.random.seed(0)
    return x


def makes_generator(x):
    r = np.random.default_rng(0)
    return x + r.random()


@pytest.mark.parametrize("fn", [legacy, legacy_seed], ids=lambda f: f.__name__)
def test_legacy_global_functions_are_refused(fn):
    with pytest.raises(MyiaTypeError, match=r"pass a generator, np.random.default_rng\(seed\)"):
        myia(fn)(1.0)


def test_a_generator_is_made_outside():
    with pytest.raises(MyiaTypeError, match="make the generator outside"):
        myia(makes_generator)(1.0)


def test_random_state_is_refused():
    def f(r):
        return r.random()

    with pytest.raises(MyiaTypeError, match="not a RandomState"):
        myia(f)(np.random.RandomState(0))


def test_no_gradient_with_respect_to_a_generator():
    def f(r, x):
        return x * r.random()

    with pytest.raises(MyiaTypeError, match="cannot differentiate with respect to r"):
        grad(f)(rng(), 1.0)
    assert grad(f, "x")(rng(0), 2.0) == rng(0).random()


def test_size_known_at_compile_time():
    def f(r, n):
        return r.random(n)

    with pytest.raises(MyiaTypeError, match="size of Generator.random must be known"):
        myia(f)(rng(), 3)


def test_jax_backend_runs_draws_on_the_host():
    pytest.importorskip("jax")
    f = myia(two_draws, backend="jax")
    assert_same(f(rng(2)), two_draws(rng(2)))
    assert not f.specialization(rng(2)).executable.jitted
    d = grad(dropout_loss, "w", backend="jax")(np.ones((3, 4)), np.ones((2, 3)), rng(4))
    assert_same(d, grad(dropout_loss, "w")(np.ones((3, 4)), np.ones((2, 3)), rng(4)))


def _gamma_of(k, rng):
    return np.sum(rng.gamma(k, 1.0, size=3))  # GAMMA


def _shifted_gamma(mu, rng):
    return np.sum(mu + rng.gamma(2.0, 1.0, size=3))


def test_the_gradient_through_a_non_reparameterized_sample_is_refused():
    # It was a silent zero: gamma and beta are drawn by rejection in NumPy.
    from myia import MyiaTypeError

    with pytest.raises(MyiaTypeError, match="Generator.gamma") as info:
        grad(_gamma_of)(2.0, np.random.default_rng(0))
    assert "# GAMMA" in str(info.value)
    # Parameters that do not depend on what is differentiated, and discrete samples, are fine.
    assert grad(_shifted_gamma)(2.0, np.random.default_rng(0)) == 3.0
    assert grad(lambda p, r: np.sum(r.binomial(5, 0.5, size=3) * p))(
        2.0, np.random.default_rng(0)
    ) == np.sum(np.random.default_rng(0).binomial(5, 0.5, size=3))


def _dropout_loss(w, x, rng):
    keep = rng.random((x.shape[0], w.shape[1])) >= 0.5
    return np.sum(np.tanh(x @ w) * keep)


def _dropout_loss_given(w, x, keep):
    return np.sum(np.tanh(x @ w) * keep)


def test_a_draw_does_not_stop_the_optimizer():
    # A draw is an effect: it is kept and runs once, but the code that uses its samples is
    # simplified as if they were an argument (the backpropagators inlined, no tuple of a
    # value and its backpropagator left), and the draw is a direct call of the method.
    w, x = np.ones((3, 2)), np.ones((4, 3))
    inside = grad(_dropout_loss, "w").generated_code(w, x, np.random.default_rng(0))
    given = grad(_dropout_loss_given, "w").generated_code(w, x, np.ones((4, 2), dtype=bool))
    assert "rng.random(size=(4, 2))" in inside
    body = [line for line in inside.splitlines() if "rng.random" not in line]
    assert len(body) <= len(given.splitlines()) + 1
    for plumbing in ("bwd", "fwd", "dead"):
        assert plumbing not in inside
    g = grad(_dropout_loss, "w")(w, x, np.random.default_rng(1))
    keep = np.random.default_rng(1).random((4, 2)) >= 0.5
    np.testing.assert_allclose(g, x.T @ ((1 - np.tanh(x @ w) ** 2) * keep))

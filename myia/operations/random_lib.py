"""The methods of ``numpy.random.Generator`` in Myia code, written in Myia's subset.

``rng.normal(mu, sigma, n)`` on a generator ``rng`` passed to Myia code calls `normal` here
with ``rng`` first (`myia.operations.ops`, attribute access). Each draw is the effectful
primitive `random_draw` (`myia.primitives.randomness`), which calls the generator's method.
``normal``, ``uniform`` and ``exponential`` are the arithmetic NumPy itself does on a
standard draw (``loc + scale * z``), so that they give the same numbers and their samples
are differentiable with respect to their parameters (the reparameterization trick).
"""

from __future__ import annotations

from ..primitives import P


def random(rng, size=None, dtype=None):
    return P.random_draw(rng, "random", (), size, dtype, ())


def standard_normal(rng, size=None, dtype=None):
    return P.random_draw(rng, "standard_normal", (), size, dtype, ())


def standard_exponential(rng, size=None, dtype=None):
    return P.random_draw(rng, "standard_exponential", (), size, dtype, ())


def normal(rng, loc=0.0, scale=1.0, size=None):
    return loc + scale * P.random_draw(rng, "standard_normal", (), size, None, (loc, scale))


def uniform(rng, low=0.0, high=1.0, size=None):
    return low + (high - low) * P.random_draw(rng, "random", (), size, None, (low, high))


def exponential(rng, scale=1.0, size=None):
    return scale * P.random_draw(rng, "standard_exponential", (), size, None, (scale,))


def standard_gamma(rng, shape, size=None, dtype=None):
    return P.random_draw(rng, "standard_gamma", (shape,), size, dtype, ())


def gamma(rng, shape, scale=1.0, size=None):
    return P.random_draw(rng, "gamma", (shape, scale), size, None, ())


def beta(rng, a, b, size=None):
    return P.random_draw(rng, "beta", (a, b), size, None, ())


def binomial(rng, n, p, size=None):
    return P.random_draw(rng, "binomial", (n, p), size, None, ())


def poisson(rng, lam=1.0, size=None):
    return P.random_draw(rng, "poisson", (lam,), size, None, ())


def integers(rng, low, high=None, size=None, dtype=None, endpoint=False):
    return P.random_draw(rng, "integers", (low, high, endpoint), size, dtype, ())


def choice(rng, a, size=None, replace=True, p=None):
    return P.random_draw(rng, "choice", (a, replace, p), size, None, ())


def permutation(rng, x):
    return P.random_draw(rng, "permutation", (x,), None, None, ())


def shuffle(rng, x):
    """``rng.shuffle(x)`` as a function: the shuffled copy of ``x`` (the same draws)."""
    return P.random_draw(rng, "permutation", (x,), None, None, ())


#: The methods by name.
METHODS = {
    name: globals()[name]
    for name in (
        "random", "standard_normal", "standard_exponential", "normal", "uniform",
        "exponential", "standard_gamma", "gamma", "beta", "binomial", "poisson", "integers",
        "choice", "permutation", "shuffle",
    )
}  # fmt: skip

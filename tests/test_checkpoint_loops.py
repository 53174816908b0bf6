"""``checkpoint(f, loops="sqrt")``: `f`'s loops run in checkpointed chunks of 1, 2, 3... steps.

Values and gradients are those of the same loops unchunked, checked against finite
differences at orders 1 and 2 and on every backend; the memory of the gradient, measured with
`tracemalloc` at two trip counts known only at run time, grows as their square root.
"""

from __future__ import annotations

import functools
import tracemalloc

import numpy as np
import pytest

from myia import MyiaTypeError, checkpoint, grad, hessian, myia
from myia.testing import _compiled as checked
from myia.testing import _grad as checked_grad
from myia.testing import check_grad

BACKENDS = [None, "debug", "jax", "native"]

# Its tests share compiled programs (`_unchunked`): one xdist worker runs them all.
pytestmark = pytest.mark.xdist_group(__name__)


def close(a, b, rtol=1e-9, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol, atol)


def decay(x, n):
    i = 0
    while i < n:
        x = x * 0.999 + 0.001 * np.sin(x)
        i = i + 1
    return x


def with_break(x, n):
    i = 0
    while i < n:
        if x > 3.0:
            break
        x = x * 1.1 + 0.05 * np.cos(x)
        i = i + 1
    return x * 2.0


def with_return(x, n):
    i = 0
    while i < n:
        x = x + 0.3 * np.sin(x) * x
        if x > 2.5:
            return x * x
        i = i + 1
    return x


def nested(x, n):
    i = 0
    while i < n:
        j = 0
        while j < i:
            x = x * 0.99 + 0.01 * np.tanh(x)
            j = j + 1
        x = np.sin(x) + x
        i = i + 1
    return x


def for_range(x, w, n):
    for i in range(n):
        if i % 3 == 0:
            x = x * w
        else:
            x = x + np.tanh(x * w)
    return x


def arrays(x, w, n):
    i = 0
    while i < n:
        x = np.tanh(x * w) + 0.5 * x
        i += 1
    return np.sum(x * x)


def in_closure(x, w, n):
    def inner(y):
        i = 0
        while i < n:
            y = y * w + (x if i > 2 else 0.1)
            i += 1
        return y

    return inner(x) * 2


PROGRAMS = [
    (in_closure, (0.5, 0.9, 7)),
    (decay, (0.7, 13)),
    (with_break, (0.4, 40)),
    (with_break, (0.4, 3)),
    (with_return, (0.5, 40)),
    (with_return, (0.5, 2)),
    (nested, (0.3, 7)),
    (for_range, (0.5, 1.3, 11)),
    (arrays, (np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 1.5, 5), 9)),
]


@pytest.mark.parametrize("fn, args", PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_values_and_gradients_are_the_loops(fn, args):
    chunked = checkpoint(fn, loops="sqrt")
    wrt = tuple(range(len(args) - 1))  # every argument but the trip count
    # The programs that check_grad compiles and checks below, compiled once.
    close(checked(chunked, None)(*args), myia(fn)(*args))
    got, want = checked_grad(chunked, wrt, None)(*args), grad(fn, *wrt)(*args)
    for a, b in zip(got, want) if len(args) > 2 else [(got, want)]:
        close(a, b)
    check_grad(chunked, *args, wrt=wrt)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 6, 7, 20])
def test_every_trip_count(n):
    """Chunks of 1, 2, 3...: a trip count at a chunk's end and one inside it."""
    chunked = checkpoint(decay, loops="sqrt")
    close(myia(chunked)(0.7, n), myia(decay)(0.7, n))
    close(grad(chunked)(0.7, n), grad(decay)(0.7, n))


@pytest.mark.parametrize(
    "fn, args",
    [
        (decay, (0.7, 9)),
        (with_break, (0.4, 40)),
        # Minutes to compile: the second order of two nested chunked loops.
        pytest.param(nested, (0.3, 5), marks=pytest.mark.slow),
    ],
)
def test_second_order(fn, args):
    check_grad(checkpoint(fn, loops="sqrt"), *args, wrt=0, order=2)


@functools.cache
def _unchunked(fn):
    """The value and the gradient of `fn` without checkpoints, compiled once for every backend."""
    return myia(fn), grad(fn)


@pytest.mark.parametrize("backend", BACKENDS)
def test_backends(backend):
    for fn, args in [(decay, (0.7, 13)), (with_break, (0.4, 40)), (nested, (0.3, 6))]:
        chunked = checkpoint(fn, loops="sqrt")
        value, gradient = _unchunked(fn)
        close(myia(chunked, backend=backend)(*args), value(*args))
        close(grad(chunked, backend=backend)(*args), gradient(*args))


@checkpoint(loops="sqrt")
def decorated(x, n):
    i = 0
    while i < n:
        x = np.sin(x) + 0.5 * x
        i = i + 1
    return x


def test_decorator_and_call_from_myia_code():
    def outer(x, n):
        return decorated(x * 2.0, n) * x

    check_grad(outer, 0.3, 25, wrt=0)
    check_grad(decorated, 0.3, 25, wrt=0)


def test_unknown_strategy():
    with pytest.raises(ValueError, match="loops"):
        checkpoint(decay, loops="binomial")


def _peak(fn, *args):
    tracemalloc.start()
    fn(*args)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def test_memory_grows_as_the_square_root():
    """16 times the iterations: about 4 times the memory chunked, 16 times without.

    Arrays of 8 kB, so that Python's free lists (which `tracemalloc` does not see) hold a
    negligible part of the memory.
    """
    x, w = np.linspace(-1.0, 1.0, 1000), np.linspace(0.5, 1.5, 1000)
    g = grad(checkpoint(arrays, loops="sqrt"))
    plain = grad(arrays)
    g(x, w, 3)
    plain(x, w, 3)
    small, large = 100, 1600
    peak = _peak(g, x, w, large)
    plain_peak = _peak(plain, x, w, large)
    assert plain_peak / _peak(plain, x, w, small) > 12
    assert peak / _peak(g, x, w, small) < 6
    assert peak < plain_peak / 8


def test_hessian_through_a_chunked_loop():
    def poly(v, n):
        i = 0
        while i < n:
            v = v * 0.9 + 0.1 * np.sin(v) * v[::-1]
            i = i + 1
        return np.sum(v * v)

    v = np.array([0.3, -0.2, 0.5])
    close(hessian(checkpoint(poly, loops="sqrt"))(v, 6), hessian(poly)(v, 6), rtol=1e-8)


def test_random_draws_are_refused_under_grad():
    """A chunk's recomputation would draw other numbers (as in any checkpointed function)."""

    def noisy(x, rng, n):
        i = 0
        while i < n:
            x = x + 0.01 * rng.normal()
            i = i + 1
        return x

    with pytest.raises(MyiaTypeError, match="random"):
        grad(checkpoint(noisy, loops="sqrt"))(0.5, np.random.default_rng(0), 5)


def test_variadic_function_at_the_top_level():
    """A function with ``*args`` and keywords, bound as Python binds them, is chunked too."""

    def affine(x, *ws, n=5):
        i = 0
        while i < n:
            x = np.sin(x) * ws[0] + ws[1]
            i += 1
        return x

    chunked = checkpoint(affine, loops="sqrt")
    close(myia(chunked)(0.5, 0.9, 0.1, n=7), myia(affine)(0.5, 0.9, 0.1, n=7))
    close(grad(chunked)(0.5, 0.9, 0.1, n=7), grad(affine)(0.5, 0.9, 0.1, n=7))

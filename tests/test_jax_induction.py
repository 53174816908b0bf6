"""Counters that step together are carried as one through a loop on the JAX backend.

The forward loop of a gradient steps its own counter and the size of the stack it pushes on
by one each iteration; `myia.compile.jax_induction` carries one of them through
``lax.while_loop`` and computes the other from it. The results are the NumPy backend's, with
counters that start at values known when tracing or only at run time, that step by other
constants, or that pass int64's bounds.
"""

from __future__ import annotations

import math

import pytest

from myia import grad, myia
from myia.testing import check_grad

jax = pytest.importorskip("jax")

import myia.compile.jax_induction as induction  # noqa: E402


@pytest.fixture
def merged(monkeypatch):
    """The counters left out of each ``while_loop`` traced: ``{left out: carried}``."""
    seen: list = []
    shared = induction.shared

    def spy(*args):
        out = shared(*args)
        seen.append({} if out is None else dict(out.deps))
        return out

    monkeypatch.setattr(induction, "shared", spy)
    return seen


def scalar_loop(x, n):
    y = x
    for _ in range(n):
        y = math.sin(y) * 0.5 + y * 0.5 + 0.1 * x
    return y


def from_k(x, k, n):
    i = k
    while i < n:
        x = math.sin(x) * x + 0.5
        i = i + 1
    return x


def two_counters(x, n):
    i = 0
    j = 10
    while i < n:
        x = x * 0.9 + j * 0.01
        i = i + 1
        j = j + 1
    return x


def other_steps(x, n):
    i = 0
    j = 0
    while i < n:
        x = x * 0.5 + math.cos(x) * j * 0.001
        i = i + 1
        j = j + 3
    return x


def down(x, n):
    i = n
    while i > 0:
        x = math.sin(x) + x * 0.5
        i = i - 1
    return x


def from_the_top(x):
    i = 9223372036854775807  # steps down from int64's top (the program runs on the host)
    while x < 10.0:
        x = x * 1.5 + (i % 7) * 0.01
        i = i - 1
    return x + (i - 9223372036854775000) * 0.001


@pytest.mark.parametrize(
    "fn,args",
    [
        (scalar_loop, (0.3, 100)),
        (scalar_loop, (0.3, 0)),
        (scalar_loop, (0.3, 1)),
        (from_k, (0.4, 3, 40)),  # the counter starts at a run-time value, the stack at 0
        (from_k, (0.4, -5, 7)),
        (from_k, (0.4, 9, 7)),
        (from_k, (0.4, 2**63 - 6, 2**63 - 1)),  # near int64's end, no overflow
        (two_counters, (0.5, 30)),
        (other_steps, (0.5, 30)),
        (down, (0.2, 25)),
        (from_the_top, (0.3,)),
    ],
)
def test_values_and_gradients_are_the_numpy_backends(fn, args, merged):
    ref = myia(grad(fn, "x"))(*args)
    assert myia(grad(fn, "x"), backend="jax")(*args) == pytest.approx(ref, rel=1e-12)
    if fn is not from_the_top:
        assert any(merged), "a loop of the gradient carries its counters as one"
    assert myia(fn, backend="jax")(*args) == pytest.approx(myia(fn)(*args), rel=1e-12)


def test_gradients_check_against_finite_differences():
    check_grad(from_k, 0.4, 3, 40, wrt="x", order=2, backend="jax")
    check_grad(other_steps, 0.5, 12, wrt="x", backend="jax")

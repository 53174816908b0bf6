"""The user's ``raise`` and ``assert`` in programs the JAX backend compiles as one computation.

XLA cannot raise: a path that raises flags the call (`jax_runtime.raise_flagged`), gives
zeros of the other paths' types, and the host runs the call again and raises the user's
error at their line. Each program is compared with the NumPy backend (values, gradients, the
exception and its message) on inputs that raise in the first, a middle and no iteration.
"""

from __future__ import annotations

import numpy as np
import pytest

from myia import grad, myia

pytest.importorskip("jax")


def validated(x, n):
    if n < 0:
        raise ValueError("negative n")
    s = 1.0
    for i in range(n):
        s = s * (1.0 + 0.1 * x[i])
    return s


def raises_in_loop(x, n):
    s = 0.0
    for i in range(n):
        if x[i] > 10:
            raise ValueError(f"x[{i}] is too large")
        s = s + x[i] ** 2
    return s


def asserts_in_loop(x, n):
    s = 0.0
    for i in range(n):
        assert x[i] > -5, "x is too small"
        s = s + np.sin(x[i]) * s + x[i]
    return s


def raises_in_nested_loop(x, n):
    s = 0.0
    for i in range(n):
        for j in range(n):
            if x[i] * x[j] > 50:
                raise ValueError("a pair is too large")
            s = s + x[i] * x[j]
    return s


def break_or_raise(x, n):
    s = 0.0
    for i in range(n):
        if x[i] < 0:
            break
        if x[i] > 10:
            raise ValueError("too large")
        s = s + x[i] * 3.0
    return s


def raises_in_nested_branch(x, n):
    s = 0.0
    for i in range(n):
        v = x[i]
        if v > 5:
            if v > 20:
                raise ValueError("huge")
            v = v * 0.5
        s = s + v * v
    return s


def last_value(x, n):
    for i in range(n):
        last = x[i] * 2.0
    return last


PROGRAMS = [
    validated,
    raises_in_loop,
    asserts_in_loop,
    raises_in_nested_loop,
    break_or_raise,
    raises_in_nested_branch,
    last_value,
]

X = np.array([1.5, -0.5, 3.0, 2.0, 4.5])
INPUTS = [
    (X, 5),
    (X, 0),
    (X, 1),
    (np.array([12.0, 1.0, 1.0, 1.0, 1.0]), 5),  # raises at the first iteration
    (np.array([1.0, 2.0, 25.0, 1.0, 1.0]), 5),  # in a middle one
    (np.array([1.0, -7.0, 1.0, 1.0, 1.0]), 5),
    (X, -1),
]


def _outcome(f, args):
    try:
        return "value", np.asarray(f(*args))
    except Exception as exc:
        return "error", (type(exc), str(exc).splitlines()[0])


@pytest.mark.parametrize("how", [myia, grad])
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_raise_under_xla_is_the_host_error(fn, how):
    ref, jax = how(fn), how(fn, backend="jax")
    for args in INPUTS:
        want, got = _outcome(ref, args), _outcome(jax, args)
        assert want[0] == got[0], (args, want, got)
        if want[0] == "value":
            np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-14)
        else:
            assert got[1] == want[1]
    ex = jax.specialization(X, 5).executable
    assert ex.jitted, ex.reason  # one XLA computation, its errors flagged


def test_a_loop_exit_that_raised_reads_nothing_from_the_others():
    """The exits of a loop are computed in the branch of the exit taken.

    The exit that raised reads a value of no type (what the raising path left): computed
    with the others, it made the whole loop unreachable, and the gradient zeros.
    """
    g = grad(raises_in_loop, backend="jax")
    np.testing.assert_allclose(g(X, 5), 2 * X)
    assert g.specialization(X, 5).executable.jitted

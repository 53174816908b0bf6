"""Hessians of loops batched over the tangents: stacks and environments in `vmap`.

``hessian(f)`` is ``vmap`` of the forward mode of ``grad(f)`` over the basis. The gradient of
a loop pushes its backpropagators on a stack; before batching, they become the values they
close over (``defunc``), from the innermost loop out, and loops return those values, not
closures (``retfunc``). The stacks and environments of sensitivities are then batched: every
column is computed by one program, not one run per column.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from benchmarks.hessian_while import f as roots  # nested value-dependent `while` loops
from myia import grad, hessian, jacfwd, jvp, myia, vmap

batching = importlib.import_module("myia.grad.batching")

BACKENDS = ["debug", "numpy", "jax"]


def roots_hessian(x):
    """The closed form: the Hessian of ``sum_i sqrt(1 + x_i^2 + x_{i+1}^2)``."""
    out = np.zeros((x.shape[0], x.shape[0]))
    for i in range(x.shape[0] - 1):
        y = math.sqrt(1.0 + x[i] ** 2 + x[i + 1] ** 2)
        u = x[i : i + 2]
        out[i : i + 2, i : i + 2] += np.eye(2) / y - np.outer(u, u) / y**3
    return out


def branchy(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        if x[i] > 0.0:
            s = s + x[i] * x[i] * x[i + 1]
        else:
            s = s + np.sin(x[i] * x[i + 1])
    return s


def with_break(x):
    s = 0.0
    for i in range(x.shape[0]):
        t = x[i]
        k = 0
        while True:
            t = np.tanh(t) + 0.5 * x[(i + 1) % x.shape[0]]
            k = k + 1
            if k >= 3:
                break
        s = s + t * t
    return s


def sliced(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        w = x[i : i + 2]
        s = s + np.sum(w * w) * x[i]
    return s


def rows(x):
    m = np.reshape(x[:4], (2, 2))
    s = x[4]
    i = 0
    while i < 2:
        s = s + np.tanh(m[i, :] @ m[:, i]) * np.sum(m[i, 1:])
        i = i + 1
    return s


def settle(x):  # a `while` whose test is two comparisons, one on a value
    s = 0.0
    t = abs(x[0]) * 0.5
    k = 0
    while t < 3.0 and k < 50:
        t = t + 0.3 * np.exp(-(abs(x[1]) + 0.1) * t) + 0.01
        s = s + t * x[2]
        k = k + 1
    return s + np.sum(x * x)


def closure_steps(x):  # a closure called in a `while True` left by `break`
    scale = x[1]

    def step(v):
        return v * scale + 0.1

    v = x[0]
    n = 0
    while True:
        v = step(v)
        n = n + 1
        if n >= 5:
            break
    return v * v + x[2] * v


def fd_hessian(fn, x, eps=1e-5):
    """Central differences of the gradient `fn` (compiled on the debug backend)."""
    g = myia(lambda z: grad(fn)(z), backend="debug")
    cols = [(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(x.shape[0])]
    return np.stack(cols, axis=1)


X = np.array([0.7, -1.3, 0.4, 2.1, -0.2])


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_of_nested_value_dependent_while_loops(backend):
    got = myia(lambda x: hessian(roots)(x), backend=backend)(X)
    np.testing.assert_allclose(got, roots_hessian(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "fn",
    [branchy, with_break, sliced, rows, settle, closure_steps],
    ids=["branch", "break", "slices", "rows", "settle", "closure"],
)
def test_hessian_of_loops_with_branches_and_break(fn, backend):
    got = myia(lambda x: hessian(fn)(x), backend=backend)(X)
    np.testing.assert_allclose(got, fd_hessian(fn, X), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got, got.T, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_jvp_of_grad_along_any_directions(backend):
    rng = np.random.default_rng(3)
    vs = rng.normal(size=(3, X.shape[0]))

    def hvps(x, vs):
        return vmap(lambda v: jvp(grad(roots), (x,), (v,))[1])(vs)

    got = myia(hvps, backend=backend)(X, vs)
    np.testing.assert_allclose(got, vs @ roots_hessian(X), rtol=1e-7, atol=1e-9)


def test_the_columns_are_one_batched_program(monkeypatch):
    # Before, the stacks of closures could not be batched: one run of jvp(grad(f)) per column.
    # The tag of the branch taken, pushed unbatched, is popped unbatched: the backward loop's
    # test is not batched either.
    looped = batching._looped

    def refused(g, f, *args):
        # (A primitive with no batching rule, `array_index_add`, runs once per example.)
        assert f.name.endswith(":example"), "the Hessian ran once per column"
        return looped(g, f, *args)

    monkeypatch.setattr(batching, "_looped", refused)
    got = myia(lambda x: hessian(roots)(x), backend="debug")(X)
    np.testing.assert_allclose(got, roots_hessian(X), rtol=1e-9, atol=1e-12)
    # (`sliced` still runs once per column: its loop's first iteration, peeled, has constants
    # where the others compute `i + 1`, and `defunc` does not take its closure for a copy.)
    for fn in (branchy, with_break, rows):
        got = myia(lambda x, fn=fn: hessian(fn)(x), backend="debug")(X)
        np.testing.assert_allclose(got, fd_hessian(fn, X), rtol=1e-6, atol=1e-7)


def test_a_loop_on_batched_values_still_runs_once_per_example():
    # The primal batched: the loops' trip counts vary per example, and so would the stacks'
    # depths: the gradient of the sum serves (or one run per example), with the same values.
    xs = np.stack([X, 0.5 * X, -X])
    got = myia(lambda xs: vmap(grad(roots))(xs), backend="debug")(xs)
    g = myia(lambda x: grad(roots)(x), backend="debug")
    np.testing.assert_allclose(got, np.stack([g(x) for x in xs]), rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_an_index_known_at_run_time_shared_by_the_examples(backend):
    # `x[i]`, `x[i, 1:]` and the gradient's `x[i] += v` with `i` an argument not batched.
    def pick(xs, i, j):
        return vmap(lambda x: x[i, 1:] * x[j, 0] + x[i, j], in_axes=0)(xs)

    def scatter(xs, i):
        return vmap(grad(lambda x: np.sum(x[i, :2] * x[i + 1, :2]) + x[i, -1] ** 2))(xs)

    rng = np.random.default_rng(5)
    xs = rng.normal(size=(4, 3, 3))
    got = myia(pick, backend=backend)(xs, 2, -1)
    np.testing.assert_allclose(got, [x[2, 1:] * x[-1, 0] + x[2, -1] for x in xs], rtol=1e-14)
    got = myia(scatter, backend=backend)(xs, 1)
    want = np.zeros_like(xs)
    want[:, 1, :2] += xs[:, 2, :2]
    want[:, 2, :2] += xs[:, 1, :2]
    want[:, 1, -1] += 2 * xs[:, 1, -1]
    np.testing.assert_allclose(got, want, rtol=1e-14)

    def constant(xs, i):  # the values added are the same in every example
        return vmap(grad(lambda x: 3.0 * x[i, 1] + np.sum(x[i + 1, 1:])))(xs)

    got = myia(constant, backend=backend)(xs, 0)
    want = np.zeros_like(xs)
    want[:, 0, 1] = 3.0
    want[:, 1, 1:] = 1.0
    np.testing.assert_allclose(got, want, rtol=1e-14)
    # (NumPy names the batched array's axis, one past the example's.)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 3"):
        myia(pick, backend=backend)(xs, 5, 0)


def test_jacfwd_of_jacfwd_through_while_loops_is_one_xla_computation():
    # Forward over forward, as JAX's `jacfwd(jacfwd(f))`: no stacks. Its loop reads the
    # bases (NumPy constants) at the loop's counter, which JAX traces: XLA compiles it all
    # (NumPy's indexing of a constant asked the traced counter for its value, and the whole
    # program ran as host code, about 15 times slower).
    h = myia(lambda x: jacfwd(jacfwd(roots))(x), backend="jax", background=False)
    np.testing.assert_allclose(h(X), roots_hessian(X), rtol=1e-9, atol=1e-12)
    assert h.specialization(X).executable.jitted
    np.testing.assert_allclose(h(-X), roots_hessian(-X), rtol=1e-9, atol=1e-12)

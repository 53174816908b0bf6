"""Differential fuzzing of the transformations on random programs (`fuzz_transforms`).

Each program's ``f(x, y)`` (loops, branches, recursion, closures; an array or a pair result)
is transformed at the top level and inside ``@myia`` code, on the ``debug``, ``numpy`` and
``jax`` backends in turn, and compared with references that do not use Myia's
transformations: ``vmap`` with a Python loop over the examples (``in_axes`` batching both
arguments, one, or an inner axis; ``out_axes`` 0 and -1); ``jvp``, ``vjp``, ``jacfwd`` and
``jacrev`` with central differences of the Python function (column by column for the
Jacobians); ``hessian`` with central differences of the gradient; ``vmap(grad)``, the
gradient of a ``vmap`` and the transformations of closures inside Myia code with per-example
central differences. Directions where differences at two step sizes disagree (a branch
boundary or a kink is near) are skipped. A larger run of the same checks found the bugs of
`test_regress_transforms_in_code`. Seeds are fixed.
"""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_transforms import Spec, inputs, load

from myia import grad, hessian, jacfwd, jacrev, jvp, myia, vjp, vmap

BACKENDS = ["debug", "numpy", "jax"]
SEEDS = [4, 6, 8]
B = 3  # examples in a batch


class NotSmooth(Exception):
    """Central differences at two step sizes disagree: a kink or a branch boundary is near."""


def leaves(t):
    if isinstance(t, tuple):
        return [a for x in t for a in leaves(x)]
    return [np.asarray(t, dtype=float)]


def tmap(fn, *ts):
    if isinstance(ts[0], tuple):
        return tuple(tmap(fn, *xs) for xs in zip(*ts))
    return fn(*ts)


def assert_close(got, want, tol=1e-7):
    g, w = leaves(got), leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def central(f, args, tangents, h):
    up = f(*(a + h * t for a, t in zip(args, tangents)))
    down = f(*(a - h * t for a, t in zip(args, tangents)))
    return tmap(lambda p, q: (np.asarray(p, float) - np.asarray(q, float)) / (2 * h), up, down)


def derivative(f, args, tangents):
    """The derivative of `f` at `args` along `tangents`, by central differences."""
    a, b = central(f, args, tangents, 1e-4), central(f, args, tangents, 1e-6)
    if not all(np.allclose(p, q, rtol=1e-3, atol=1e-5) for p, q in zip(leaves(a), leaves(b))):
        raise NotSmooth
    return central(f, args, tangents, 1e-5)


def jacobian(f, args, i):
    """JAX's Jacobian of `f` with respect to ``args[i]``: the output's shape, then the arg's."""
    shape = np.shape(args[i])
    cols = []
    for e in np.eye(max(1, int(np.prod(shape)))):
        ts = [np.zeros(np.shape(a)) if np.ndim(a) else 0.0 for a in args]
        ts[i] = e.reshape(shape) if shape else 1.0
        cols.append(derivative(f, args, ts))
    return tmap(lambda *c: np.stack(c, axis=-1).reshape(np.shape(c[0]) + shape), *cols)


def stacked(rows, axis=0):
    if isinstance(rows[0], tuple):
        return tuple(stacked(list(c), axis) for c in zip(*rows))
    return np.stack([np.asarray(r, float) for r in rows], axis=axis)


def mapped(f, in_axes, out_axes):
    """A function applying ``vmap(f, in_axes, out_axes)`` inside Myia code."""
    return lambda *args: vmap(f, in_axes=in_axes, out_axes=out_axes)(*args)


def setup(tmp_path, seed):
    m = load(seed, tmp_path)
    x, y = inputs(seed)
    xs, ys = zip(*(inputs(seed, p) for p in range(1, B + 1)))
    rng = np.random.default_rng(seed)
    tx = rng.normal(size=np.shape(x))
    ty = rng.normal(size=np.shape(y)) if np.ndim(y) else float(rng.normal())
    return m, x, y, list(xs), list(ys), tx, ty


@pytest.mark.parametrize("seed", SEEDS)
def test_vmap_is_a_loop_over_examples(tmp_path, seed):
    m, x, y, xs, ys, _, _ = setup(tmp_path, seed)
    spec = Spec(seed)
    X, Y = np.stack(xs), np.stack([np.asarray(v, float) for v in ys])
    cases = [((0, 0), (X, Y), list(zip(xs, ys))), ((0, None), (X, y), [(a, y) for a in xs])]
    cases.append(((None, 0), (x, Y), [(x, b) for b in ys]))
    if X.ndim == 3:  # the batch on an inner axis
        cases.append(((1, 0), (np.moveaxis(X, 0, 1), Y), list(zip(xs, ys))))
    for k, (in_axes, args, examples) in enumerate(cases):
        out = -1 if k % 2 and spec.out else 0
        out_axes = (out, 0) if spec.pair else out
        rows = [m.f(*e) for e in examples]
        want = (
            tuple(stacked([r[j] for r in rows], (out, 0)[j]) for j in range(2))
            if spec.pair
            else stacked(rows, out)
        )
        backend = BACKENDS[(seed + k) % 3]
        fn = myia(mapped(m.f, in_axes, out_axes), backend=backend)
        assert_close(fn(*args), want)
    assert_close(vmap(m.f, in_axes=(0, None))(X, y), stacked([m.f(a, y) for a in xs]))


@pytest.mark.parametrize("seed", SEEDS)
def test_forward_and_reverse_derivatives_against_differences(tmp_path, seed):
    m, x, y, _, _, tx, ty = setup(tmp_path, seed)
    backend = BACKENDS[seed % 3]

    try:
        want = derivative(m.f, (x, y), (tx, ty))
        assert_close(jvp(m.f, (x, y), (tx, ty)), (m.f(x, y), want), 1e-5)
        inside = myia(lambda x, y: jvp(m.f, (x, y), (tx, ty)), backend=backend)(x, y)
        assert_close(inside, (m.f(x, y), want), 1e-5)

    except NotSmooth:
        pass
    try:
        jx, jy = jacobian(m.f, (x, y), 0), jacobian(m.f, (x, y), 1)
    except NotSmooth:
        return
    assert_close(myia(lambda x, y: jacrev(m.f)(x, y), backend=backend)(x, y), jx, 1e-5)
    assert_close(jacfwd(m.f, 1)(x, y), jy, 1e-5)
    assert_close(
        myia(lambda x, y: jacfwd(m.f, (0, 1))(x, y), backend=backend)(x, y),
        tuple(zip(jx, jy)) if isinstance(jx, tuple) else (jx, jy),
        1e-5,
    )
    ct = tmap(lambda o: np.cos(np.asarray(o)) + 0.5, m.f(x, y))
    want = tuple(
        sum(np.tensordot(c, j, axes=np.ndim(c)) for c, j in zip(leaves(ct), leaves(jac)))
        for jac in (jx, jy)
    )
    assert_close(vjp(m.f, x, y)[1](ct), want, 1e-5)


@pytest.mark.parametrize("seed", SEEDS)
def test_hessian_and_gradients_of_batches(tmp_path, seed):
    m, x, y, xs, ys, _, _ = setup(tmp_path, seed)
    backend = BACKENDS[(seed + 1) % 3]
    g = grad(m.fs, "x", "y")
    try:
        want = jacobian(lambda a, b: g(a, b)[0], (x, y), 0)
    except NotSmooth:
        want = None
    if want is not None:
        assert_close(myia(lambda x, y: hessian(m.fs)(x, y), backend=backend)(x, y), want, 1e-5)
    X = np.stack(xs)
    try:
        per_example = [jacobian(m.fs, (a, y), 0) for a in xs]
    except NotSmooth:
        return
    want = np.stack(per_example)
    got = myia(lambda X, y: vmap(grad(m.fs), in_axes=(0, None))(X, y), backend=backend)(X, y)
    assert_close(got, want, 1e-5)

    def total(X, y):
        return np.sum(vmap(lambda a: m.fs(a, y))(X))

    assert_close(grad(total, backend=backend)(X, y), want, 1e-5)


@pytest.mark.parametrize("seed", SEEDS)
def test_transformations_of_closures_inside_myia_code(tmp_path, seed):
    m, x, y, xs, _, tx, _ = setup(tmp_path, seed)
    backend = BACKENDS[(seed + 2) % 3]
    X = np.stack(xs)

    def batched(X, y):
        return vmap(lambda a: m.f(a, y))(X)

    assert_close(myia(batched, backend=backend)(X, y), stacked([m.f(a, y) for a in xs]))
    zero = np.zeros(np.shape(y)) if np.ndim(y) else 0.0
    try:
        want = derivative(m.f, (x, y), (tx, zero))
    except NotSmooth:
        return

    def tangent(x, y):
        return jvp(lambda a: m.f(a, y), (x,), (tx,))[1]

    assert_close(myia(tangent, backend=backend)(x, y), want, 1e-5)

"""Forward mode (`jvp`): the tangent transform of typed graphs (`myia.grad.forward`).

Each tangent is checked against central finite differences (`check_jvp`), against JAX where
JAX can run the program, and on every backend; compositions with `grad` and `vmap`; the
tangent of a loop is a loop.
"""

from __future__ import annotations

import dataclasses
import tracemalloc

import numpy as np
import pytest
from opt_programs import applies, optimized

from myia import custom_bprop, grad, hessian, jacfwd, jvp, myia, vjp, vmap
from myia.errors import MyiaTypeError
from myia.opt.matcher import prim_of
from myia.primitives import P
from myia.testing import check_jvp

X = np.array([0.3, -1.2, 2.0])


def branchy(x, y):
    if x > 0:
        return x * y + np.sin(x)
    return y / (1.0 + x * x)


def while_loop(x, n):
    i = 0
    while i < n:
        x = x * 0.9 + np.tanh(x)
        i = i + 1
    return x


def until_small(x):
    # The trip count depends on the value.
    while x > 0.1:
        x = x * x * 0.5
    return x


def for_loop(x):
    acc = 0.0
    for k in range(4):
        acc = acc + np.cos(x * k)
    return acc


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def closure(x, y):
    def scale(z):
        return z * x

    return scale(y) + scale(np.exp(y))


def pair(p):
    a, b = p
    return (a * b, np.sqrt(a * a + b * b))


@dataclasses.dataclass(frozen=True)
class Point:
    x: float
    y: np.ndarray


def record(p):
    return Point(p.x * 2.0, np.tanh(p.y) * p.x)


def reductions(x):
    return np.prod(x) + np.max(x) * np.mean(x * x) + np.sum(np.exp(x))


def matrix(w, x):
    return np.tanh(x @ w)


W = np.array([[0.5, -0.3], [0.2, 0.8], [1.1, -0.4]])
XS = np.array([[1.0, 2.0, -0.5], [0.3, -0.7, 0.9]])


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (branchy, (0.7, 1.5)),
        (branchy, (-0.7, 1.5)),
        (while_loop, (0.5, 7)),
        (until_small, (1.7,)),
        (for_loop, (0.4,)),
        (power, (1.3, 5)),
        (closure, (0.4, 1.1)),
        (pair, ((1.5, -2.0),)),
        (reductions, (X,)),
        (matrix, (W, XS)),
    ],
)
def test_jvp_matches_finite_differences(fn, args):
    check_jvp(fn, *args)


def test_jvp_of_records_has_structured_tangents():
    p = Point(1.5, X)
    out, tan = check_jvp(record, p, tangents=(Point(1.0, np.ones(3)),))
    assert isinstance(tan, Point)
    np.testing.assert_allclose(tan.x, 2.0)
    np.testing.assert_allclose(tan.y, (1 - np.tanh(X) ** 2) * 1.5 + np.tanh(X))


def test_prod_with_a_zero_element():
    x = np.array([2.0, 0.0, 3.0])
    _, t = jvp(lambda v: np.prod(v), (x,), (np.array([1.0, 1.0, 1.0]),))
    assert t == pytest.approx(6.0)


@pytest.mark.parametrize("backend", ["numpy", "debug", "native", "jax"])
def test_jvp_on_every_backend(backend):
    check_jvp(while_loop, 0.5, 5, backend=backend)
    check_jvp(matrix, W, XS, backend=backend)


def _jax():
    return pytest.importorskip("jax")


def test_jvp_matches_jax():
    jax = _jax()
    t = (np.ones_like(W), np.zeros_like(XS))
    got = jvp(matrix, (W, XS), t)
    with jax.enable_x64(True):
        want = jax.jvp(lambda w, x: jax.numpy.tanh(x @ w), (W, XS), t)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def test_jvp_of_a_value_dependent_while_loop_matches_jax():
    # JAX's forward mode runs through lax.while_loop (its reverse mode does not).
    jax = _jax()
    lax = jax.lax

    def jax_until_small(x):
        return lax.while_loop(lambda x: x > 0.1, lambda x: x * x * 0.5, x)

    with jax.enable_x64(True):
        want = jax.jvp(jax_until_small, (1.7,), (1.0,))
    got = jvp(until_small, (1.7,), (1.0,))
    np.testing.assert_allclose(got, [float(want[0]), float(want[1])], rtol=1e-12)


def loss(x):
    return np.sum(np.tanh(x) * x) + np.prod(x)


def test_jvp_of_grad_and_grad_of_jvp():
    jax = _jax()
    v = np.array([1.0, 0.5, -2.0])
    with jax.enable_x64(True):
        jloss = lambda x: jax.numpy.sum(jax.numpy.tanh(x) * x) + jax.numpy.prod(x)  # noqa: E731
        hvp = jax.jvp(jax.grad(jloss), (X,), (v,))[1]
        gj = jax.grad(lambda x: jax.jvp(jloss, (x,), (v,))[1])(X)
    np.testing.assert_allclose(jvp(grad(loss), (X,), (v,))[1], hvp, rtol=1e-10)
    np.testing.assert_allclose(grad(lambda x: jvp(loss, (x,), (v,))[1])(X), gj, rtol=1e-10)


def test_vmap_of_jvp_and_jvp_of_vmap():
    xs = np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]])

    def tangent(x):
        return jvp(loss, (x,), (np.ones(3),))[1]

    got = vmap(tangent)(xs)
    want = np.array([jvp(loss, (x,), (np.ones(3),))[1] for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    batched = vmap(lambda x: np.sum(np.sin(x) * x))
    _, t = jvp(batched, (xs,), (np.ones_like(xs),))
    np.testing.assert_allclose(t, np.sum(np.cos(xs) * xs + np.sin(xs), axis=1), rtol=1e-12)


def _times(x, y):
    return x * y


def _d_jvp(x):  # D(y -> x * y)(3), by each transformation
    return jvp(_times, (x, 3.0), (0.0, 1.0))[1]


def _d_grad(x):
    return grad(_times, 1)(x, 3.0)


def _d_vjp(x):
    return vjp(_times, x, 3.0)[1](1.0)[1]


def _outer_jvp(x):
    return x * _d_jvp(x)


def _outer_grad(x):
    return x * _d_grad(x)


def _outer_vjp(x):
    return x * _d_vjp(x)


@pytest.mark.parametrize("outer", [_outer_jvp, _outer_grad, _outer_vjp])
def test_no_perturbation_confusion(outer):
    # D(x -> x * D(y -> x * y)(3))(5) == 10 in every nesting of grad, jvp and vjp.
    assert grad(outer)(5.0) == 10.0
    assert jvp(outer, (5.0,), (1.0,))[1] == 10.0
    assert vjp(outer, 5.0)[1](1.0)[0] == 10.0


def test_jvp_of_a_closure_inside_myia_code():
    # Its tangent function is called where the closure is defined: no confusion between the
    # perturbations of x (outer) and y (inner).
    assert jvp(lambda x: x * jvp(lambda y: x * y, (3.0,), (1.0,))[1], (5.0,), (1.0,))[1] == 10.0
    assert grad(lambda x: x * jvp(lambda y: x * y, (3.0,), (1.0,))[1])(5.0) == 10.0

    @myia
    def f(x):
        def g(y):
            return x * y * y

        return jvp(g, (2.0,), (1.0,))

    assert f(3.0) == (12.0, 12.0)


def test_hessian_through_a_while_loop_is_forward_over_reverse():
    def f(x):
        i = 0
        while i < 3:
            x = np.sin(x) * 1.5
            i = i + 1
        return np.sum(x * x)

    h = hessian(f)(X)
    eps = 1e-6
    fd = np.stack(
        [(grad(f)(X + eps * e) - grad(f)(X - eps * e)) / (2 * eps) for e in np.eye(3)], axis=1
    )
    np.testing.assert_allclose(h, fd, rtol=1e-5, atol=1e-7)
    j = jacfwd(lambda x: np.sin(x) * x)(X)
    np.testing.assert_allclose(j, np.diag(np.cos(X) * X + np.sin(X)), rtol=1e-12)


def _jvp_while(x, n):
    return jvp(while_loop, (x, n), (1.0, 0))


def test_the_tangent_of_a_loop_is_a_loop():
    # No stack in the optimized program: the tangent is carried along the loop.
    g = optimized(_jvp_while, 0.5, 4)
    prims = {prim_of(n) for n in applies(g)}
    assert P.stack_push not in prims and P.tanh in prims
    fn = myia(_jvp_while)
    fn(0.5, 10)  # compiled once
    tracemalloc.start()
    out = fn(0.5, 100_000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 1_000_000
    assert np.isfinite(out[1])


def test_jacfwd_inside_myia_code():
    fn = myia(lambda x: jacfwd(lambda v: np.tanh(v) * v)(x))
    want = np.diag((1 - np.tanh(X) ** 2) * X + np.tanh(X))
    np.testing.assert_allclose(fn(X), want, rtol=1e-12)


def _doubled(x):
    return x * 2.0


@custom_bprop(_doubled)
def _bprop_doubled(x, out, dout):
    return (dout * 3.0,)  # the derivative the user chose: 3, not 2


def test_jvp_follows_a_custom_bprop():
    # Forward mode transposes the user's backpropagator: both modes agree.
    _, t = jvp(lambda x: _doubled(x) + x, (2.0,), (0.25,))
    assert t == pytest.approx(0.25 * 3.0 + 0.25)
    assert grad(lambda x: _doubled(x) + x)(2.0) == pytest.approx(4.0)


def test_a_tangent_of_the_wrong_shape_is_refused():
    with pytest.raises(MyiaTypeError, match="tangent of argument 0"):
        jvp(lambda x: np.sum(x * x), (X,), (np.ones(4),))


# Every primitive's tangent: the table of tests/test_grad_primitives.py, in forward mode -------


def _cases():
    from test_grad_primitives import CASES

    return [pytest.param(c, id=f"{c.name}-{i}") for i, c in enumerate(CASES)]


@pytest.mark.parametrize("case", _cases())
def test_tangent_of_every_primitive(case):
    from test_grad_primitives import make_args

    opts = {k: v for k, v in case.options.items() if k in ("eps", "rtol", "atol")}
    for seed, spec in enumerate(case.args):
        check_jvp(case.fn, *make_args(spec, seed), seed=seed, **opts)


def test_jvp_of_a_numpy_function():
    assert jvp(np.sin, (1.0,), (2.0,)) == pytest.approx((np.sin(1.0), 2.0 * np.cos(1.0)))
    out = myia(lambda x: jvp(np.tanh, (x,), (np.ones(3),)))(X)
    np.testing.assert_allclose(out[1], 1 - np.tanh(X) ** 2)


def test_a_constant_factor_or_divisor_has_no_tangent_term():
    # As JAX's symbolic zeros: the tangent of exp(x) * 2.0 where exp(x) is inf is inf, not
    # inf + inf * 0 (nan); so for 2.0 * exp(x) and exp(x) / 2.0.
    x, t = np.array([1000.0, 0.0]), np.ones(2)
    for f in (lambda v: np.exp(v) * 2.0, lambda v: 2.0 * np.exp(v), lambda v: np.exp(v) / 2.0):
        _, d = jvp(f, (x,), (t,))
        assert d[0] == np.inf and np.isfinite(d[1])

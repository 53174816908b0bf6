"""The transformations of API.md's "More transformations": has_aux, stop_gradient, vjp, jvp,
jacrev, jacfwd, hessian, vmap and the tree utilities, at the top level and inside Myia code,
checked against finite differences (the project's checker), NumPy, and JAX where installed."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from myia import (
    MyiaTypeError,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    myia,
    stop_gradient,
    tree_leaves,
    tree_map,
    value_and_grad,
    vjp,
    vmap,
)
from myia.testing import check_grad


def _jax():
    """JAX, the reference where it is installed (it is optional)."""
    try:
        import jax
    except ImportError:  # pragma: no cover - depends on the environment
        pytest.skip("JAX is not installed")
    return jax


def close(a, b, rtol=1e-7, atol=1e-9):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol, atol)


# Programs a researcher writes -----------------------------------------------------------------


def mlp(w, x):
    return np.tanh(x @ w)


def scalar_loss(w, x):
    return np.sum(mlp(w, x) ** 2)


def until(x):
    """A loop whose trip count depends on the values (JAX cannot reverse-differentiate it)."""
    s = 0.0
    i = 0
    while s < 10.0:
        s = s + np.sum(x * x) * (i + 1)
        i += 1
    return s + np.prod(x)


def branchy(x, y):
    if np.sum(x) > 0:
        return np.sin(x) * y
    return np.cos(x) * y


W = np.array([[0.3, -0.2], [0.1, 0.5], [-0.4, 0.2]])
X = np.array([[1.0, 2.0, -1.0], [0.5, -0.3, 0.2]])
V3 = np.array([0.5, 1.0, 2.0])


# has_aux --------------------------------------------------------------------------------------


def with_aux(x, y):
    return x * x * y, {"square": x * x, "y": y}


def test_grad_has_aux_returns_the_gradient_and_aux():
    d, aux = grad(with_aux, has_aux=True)(3.0, 2.0)
    assert d == 12.0 and aux == {"square": 9.0, "y": 2.0}


def test_value_and_grad_has_aux_returns_the_pair_and_the_gradients():
    (value, aux), (dx, dy) = value_and_grad(with_aux, "x", "y", has_aux=True)(3.0, 2.0)
    assert (value, aux, dx, dy) == (18.0, {"square": 9.0, "y": 2.0}, 12.0, 9.0)


def test_has_aux_inside_myia_code_and_at_second_order():
    @myia
    def step(x):
        d, aux = grad(with_aux, has_aux=True)(x, 2.0)
        return d + aux["square"]

    assert step(3.0) == 21.0
    assert grad(lambda x: grad(with_aux, has_aux=True)(x, 2.0)[0])(3.0) == 4.0


def test_has_aux_with_arrays_matches_jax():
    jax = _jax()

    def loss(w, x):
        p = mlp(w, x)
        return np.sum(p * p), p

    (v, p), dw = value_and_grad(loss, has_aux=True)(W, X)

    def jloss(w, x):
        p = jax.numpy.tanh(x @ w)
        return jax.numpy.sum(p * p), p

    with jax.enable_x64(True):
        (jv, jp), jdw = jax.value_and_grad(jloss, has_aux=True)(W, X)
    close(v, jv)
    close(p, jp)
    close(dw, jdw)


def test_has_aux_needs_a_pair():
    with pytest.raises(MyiaTypeError, match="pair"):
        grad(lambda x: x * 2.0, has_aux=True)(1.0)


# stop_gradient --------------------------------------------------------------------------------


def test_stop_gradient_gives_a_zero_gradient_at_every_order():
    assert grad(lambda x: x * stop_gradient(x))(3.0) == 3.0
    assert grad(grad(lambda x: x * x * stop_gradient(x)))(3.0) == 6.0
    assert stop_gradient(2.5) == 2.5
    assert myia(lambda x: stop_gradient(x) + 1.0)(2.0) == 3.0


def test_stop_gradient_in_a_loop():
    def f(x):
        s = x
        for _ in range(3):
            s = s * stop_gradient(s) + x
        return s

    def frozen(x, c1, c2, c3):  # the same function with the stopped values as constants
        return ((x * c1 + x) * c2 + x) * c3 + x

    c1 = 2.0
    c2 = c1 * c1 + c1
    c3 = c2 * c2 + 2.0
    assert f(2.0) == frozen(2.0, c1, c2, c3)
    close(grad(f)(2.0), grad(frozen)(2.0, c1, c2, c3))


# vjp and jvp ----------------------------------------------------------------------------------


def test_vjp_matches_jax():
    jax = _jax()
    out, vjp_fn = vjp(branchy, V3, 3.0)
    ct = np.array([1.0, -2.0, 0.5])
    dx, dy = vjp_fn(ct)

    def jbranchy(x, y):
        return jax.numpy.where(jax.numpy.sum(x) > 0, jax.numpy.sin(x), jax.numpy.cos(x)) * y

    with jax.enable_x64(True):
        jout, jfn = jax.vjp(jbranchy, V3, 3.0)
        jdx, jdy = jfn(ct)
    close(out, jout)
    close(dx, jdx)
    close(dy, jdy)


def test_jvp_matches_jax_and_finite_differences():
    jax = _jax()
    t = (np.array([1.0, 0.0, -1.0]), 0.5)
    out, tangent = jvp(branchy, (V3, 3.0), t)

    def jbranchy(x, y):
        return jax.numpy.sin(x) * y

    with jax.enable_x64(True):
        jout, jt = jax.jvp(jbranchy, (V3, 3.0), t)
    close(out, jout)
    close(tangent, jt)
    eps = 1e-6
    fd = branchy(V3 + eps * t[0], 3.0 + eps * t[1]) - branchy(V3 - eps * t[0], 3.0 - eps * t[1])
    close(tangent, fd / (2 * eps), rtol=1e-6)


def test_jvp_through_a_value_dependent_loop():
    t = np.array([0.3, -0.1, 0.2])
    _, tangent = jvp(until, (V3,), (t,))
    close(tangent, np.dot(grad(until)(V3), t))


def test_vjp_and_jvp_inside_myia_code():
    @myia
    def f(x):
        y, pull = vjp(np.sin, x)
        _, push = jvp(lambda z: z * z * z, (x,), (1.0,))
        return y + pull(1.0)[0] + push

    x = 0.7
    assert math.isclose(f(x), math.sin(x) + math.cos(x) + 3 * x * x)


def _times(x, y):
    return x * y


def test_no_perturbation_confusion():
    # D(x -> x * D(y -> x * y)(3))(5) == 10, in the nestings Myia supports today.
    assert grad(lambda x: x * grad(lambda y: x * y)(3.0))(5.0) == 10.0
    assert jvp(lambda x: x * grad(lambda y: x * y)(3.0), (5.0,), (1.0,))[1] == 10.0
    assert jvp(lambda x: x * jvp(_times, (x, 3.0), (0.0, 1.0))[1], (5.0,), (1.0,))[1] == 10.0
    assert grad(lambda x: x * jvp(_times, (x, 3.0), (0.0, 1.0))[1])(5.0) == 10.0
    assert grad(lambda x: x * vjp(_times, x, 3.0)[1](1.0)[1])(5.0) == 10.0


def test_transformations_of_a_closure_inside_myia_code():
    assert jvp(lambda x: x * jvp(lambda y: x * y, (3.0,), (1.0,))[1], (5.0,), (1.0,))[1] == 10.0

    def reverse(x, w):
        g = lambda v: np.tanh(w * v)  # noqa: E731 - a closure: it reads w
        y, back = vjp(g, x)
        return back(np.ones_like(y))[0] + jacrev(g)(x).sum()

    def forward(x, w):
        g = lambda v: np.tanh(w * v)  # noqa: E731
        return jacfwd(g)(x).sum() + hessian(lambda v: np.sum(g(v)))(x).sum()

    x, w = np.array([0.1, -0.4, 0.8]), 0.7
    t = np.tanh(w * x)
    want = (1 - t**2) * w
    close(myia(reverse)(x, w), want + want.sum())
    close(reverse(x, w), want + want.sum())  # the same code at the top level
    want = want.sum() - np.sum(2 * w * w * t * (1 - t**2))
    close(myia(forward)(x, w), want)
    close(forward(x, w), want)
    # Gradients with respect to the variable the closures read, and to their argument.
    check_grad(lambda x, w: np.sum(reverse(x, w) ** 2), x, w)
    check_grad(lambda x, w: forward(x, w) ** 2, x, w)


def test_transformations_of_a_closure_inside_myia_code_match_jax():
    jax = _jax()
    jnp = jax.numpy

    def f(x, w):
        g = lambda v: np.tanh(w * v)  # noqa: E731
        y, back = vjp(g, x)
        return (
            back(np.ones_like(y))[0]
            + jacrev(g)(x).sum()
            + jacfwd(g)(x).sum()
            + hessian(lambda v: np.sum(g(v)))(x).sum()
        )

    def jf(x, w):
        g = lambda v: jnp.tanh(w * v)  # noqa: E731
        y, back = jax.vjp(g, x)
        return (
            back(jnp.ones_like(y))[0]
            + jax.jacrev(g)(x).sum()
            + jax.jacfwd(g)(x).sum()
            + jax.hessian(lambda v: jnp.sum(g(v)))(x).sum()
        )

    x, w = np.array([0.1, -0.4, 0.8]), 0.7
    with jax.enable_x64(True):
        want = jf(x, w)
        want_dw = jax.grad(lambda x, w: jnp.sum(jf(x, w)), 1)(x, w)
    close(myia(f)(x, w), want)
    close(grad(lambda x, w: np.sum(f(x, w)), 1)(x, w), want_dw)


# Jacobians and Hessians ---------------------------------------------------------------------


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_jacobians_match_jax(jac):
    jax = _jax()
    got = jac(mlp)(W, X)
    jfn = getattr(jax, jac.__name__)
    with jax.enable_x64(True):
        want = jfn(lambda w, x: jax.numpy.tanh(x @ w))(W, X)
    assert got.shape == want.shape == (2, 2, 3, 2)
    close(got, want)
    got_x = jac(mlp, argnums=1)(W, X)
    with jax.enable_x64(True):
        want_x = jfn(lambda w, x: jax.numpy.tanh(x @ w), argnums=1)(W, X)
    close(got_x, want_x)


def test_top_level_jacobians_compose_with_transformations():
    # `jacfwd(jacrev(f))`, `vmap(jacfwd(f))` at the top level: the inner Jacobian is
    # transformed as Myia code (it was parsed as its Python wrapper, a MyiaSyntaxError).
    def f(x):
        return np.sum(np.exp(x) * x[1])

    def row(x):
        return np.sin(x) * x[0]

    close(jacfwd(jacrev(f))(V3), hessian(f)(V3))
    close(jacrev(jacfwd(f))(V3), hessian(f)(V3))
    rows = np.stack([V3, -2 * V3])
    for inner in (row, myia(row)):  # a compiled `f` too: its Jacobian, not `f` itself, batched
        for jac in (jacfwd, jacrev):
            got = vmap(jac(inner))(rows)
            close(got, np.stack([jac(row)(r) for r in rows]))
            assert got.shape == (2, 3, 3)
    close(vmap(hessian(f))(rows), np.stack([hessian(f)(r) for r in rows]))


def test_a_top_level_vjp_fn_is_usable_in_myia_code():
    # `vmap(vjp_fn)` (the rows of a Jacobian, as in JAX) and Myia code calling `vjp_fn`
    # parsed its Python wrapper: a MyiaSyntaxError shown inside the package.
    def f(x):
        return np.sin(x) * np.sum(x**2)

    y, fn = vjp(f, V3)
    close(y, f(V3))
    (rows,) = vmap(fn)(np.eye(3))
    close(rows, jacrev(f)(V3))
    close(myia(lambda c: fn(c)[0] * 2.0)(V3), 2.0 * fn(V3)[0])


def two_outputs(w, x, s):
    y = np.tanh(x @ w) * s
    return y, {"energy": np.sum(y**2), "scale": s}


def _j_two_outputs(jnp):
    def f(w, x, s):
        y = jnp.tanh(x @ w) * s
        return y, {"energy": jnp.sum(y**2), "scale": s}

    return f


def same_tree(got, want):
    """`got` has `want`'s structure (tuples, dicts), and its leaves its shapes and values."""
    if isinstance(want, (tuple, dict)):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for k in want.keys() if isinstance(want, dict) else range(len(want)):
            same_tree(got[k], want[k])
        return
    assert np.shape(got) == np.shape(want), (np.shape(got), np.shape(want))
    close(got, want)


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
@pytest.mark.parametrize("argnums", [(0, 1), (2, 0), (1,), 2])
def test_jacobians_of_several_arguments_and_structured_outputs_match_jax(jac, argnums):
    # A tuple `argnums` gives a tuple of Jacobians; a tuple or dict output, a Jacobian per leaf.
    jax = _jax()
    got = jac(two_outputs, argnums=argnums)(W, X, 0.7)
    with jax.enable_x64(True):
        jfn = getattr(jax, jac.__name__)
        want = jfn(_j_two_outputs(jax.numpy), argnums=argnums)(W, X, 0.7)
    same_tree(got, jax.tree_util.tree_map(np.asarray, want))


@pytest.mark.parametrize("jac", [jacrev, jacfwd])
def test_jacobians_with_respect_to_a_dict_inside_myia_code_match_jax(jac):
    jax = _jax()
    params = {"w": W, "b": np.array([0.1, -0.2])}

    def layer(p, x):
        return {"out": np.tanh(x @ p["w"] + p["b"]), "norm": np.sum(p["b"] ** 2)}

    def j_layer(p, x):
        jnp = jax.numpy
        return {"out": jnp.tanh(x @ p["w"] + p["b"]), "norm": jnp.sum(p["b"] ** 2)}

    got = myia(lambda p, x: jac(layer, argnums=(0, 1))(p, x))(params, X)
    with jax.enable_x64(True):
        want = getattr(jax, jac.__name__)(j_layer, argnums=(0, 1))(params, X)
    same_tree(got, jax.tree_util.tree_map(np.asarray, want))


def test_hessian_of_several_arguments_is_a_nested_tuple_as_jax():
    jax = _jax()

    def loss(w, x, s):
        return np.sum(np.tanh(x @ w) ** 2) * s

    got = hessian(loss, argnums=(0, 2))(W, X, 0.7)
    with jax.enable_x64(True):
        jnp = jax.numpy
        want = jax.hessian(lambda w, x, s: jnp.sum(jnp.tanh(x @ w) ** 2) * s, argnums=(0, 2))(
            W, X, 0.7
        )
    same_tree(got, jax.tree_util.tree_map(np.asarray, want))
    inside = myia(lambda w, x, s: hessian(loss, argnums=(0, 2))(w, x, s))(W, X, 0.7)
    same_tree(inside, got)


def test_jacobians_of_several_arguments_against_finite_differences():
    # JAX aside: each block of jacrev((0, 1)) is the finite-difference Jacobian of that argument.
    jr = jacrev(two_outputs, argnums=(0, 1))(W, X, 0.7)
    jf = jacfwd(two_outputs, argnums=(0, 1))(W, X, 0.7)
    eps = 1e-6
    for i, arg in enumerate((W, X)):
        cols = []
        for e in np.eye(arg.size):
            up = [W, X, 0.7]
            down = [W, X, 0.7]
            up[i] = arg + eps * e.reshape(arg.shape)
            down[i] = arg - eps * e.reshape(arg.shape)
            cols.append((two_outputs(*up)[0] - two_outputs(*down)[0]) / (2 * eps))
        fd = np.moveaxis(np.array(cols), 0, -1).reshape((2, 2) + arg.shape)
        close(jr[0][i], fd, rtol=1e-6, atol=1e-8)
        close(jf[0][i], fd, rtol=1e-6, atol=1e-8)
        close(jr[1]["scale"][i], np.zeros(arg.shape))


def test_jacrev_of_list_outputs_and_inputs_matches_jax():
    jax = _jax()
    jnp = jax.numpy
    x = np.array([0.3, -0.2, 0.5])

    def f(v):
        return v, [np.sin(v), v**2]

    def g(vs):
        return np.sum(vs[0] * vs[1]) + np.sum(np.tanh(vs[1]))

    with jax.enable_x64(True):
        want_f = jax.jacrev(lambda v: (v, [jnp.sin(v), v**2]))(x)
        want_g = jax.jacrev(lambda vs: jnp.sum(vs[0] * vs[1]) + jnp.sum(jnp.tanh(vs[1])))(
            [x, 2 * x]
        )
    tree = jax.tree_util.tree_map
    same_tree(jacrev(f)(x), tree(np.asarray, want_f))
    got_g = jacrev(g)([x, 2 * x])
    assert isinstance(got_g, list) and len(got_g) == 2
    for a, b in zip(got_g, want_g):
        close(a, b)


def test_a_wrong_tangent_is_reported_at_the_users_line():
    def f(x):
        return jvp(lambda v: v * 2, (x,), (1,))  # the jvp's line

    with pytest.raises(MyiaTypeError, match="tangent of argument 0") as info:
        myia(f)(V3)
    assert "the jvp's line" in str(info.value)


def test_argnums_must_be_positions():
    with pytest.raises(TypeError, match="argnums"):
        jacrev(two_outputs, argnums=(0, "x"))
    with pytest.raises(ValueError, match="no argument at position 3"):
        jacfwd(two_outputs, argnums=(0, 3))(W, X, 0.7)


@pytest.mark.parametrize("jac", [jacrev, jacfwd, hessian], ids=lambda j: j.__name__)
def test_jacobians_with_respect_to_integers_are_type_errors_as_in_jax(jac):
    # jacrev gave zeros, jacfwd the derivative on the reals: JAX raises a TypeError.
    def f(n, x):
        return np.sum(jac(lambda m, y: m * y)(n, x))  # the jacobian's line

    for n in (np.arange(3), 2, True):
        with pytest.raises(MyiaTypeError, match="requires float arguments") as info:
            myia(f)(n, V3)
        assert "the jacobian's line" in str(info.value)
    with pytest.raises(MyiaTypeError, match="holds int64 values"):
        jac(lambda t: t[0] * t[1])((2.0, 3))
    close(jac(lambda m, y: np.sum(m * y), 1)(np.arange(3), V3), jax_like(jac, np.arange(3)))


def jax_like(jac, n):
    """The Jacobian of ``sum(n * y)`` w.r.t. float ``y`` (`n` an integer array)."""
    return np.zeros((3, 3)) if jac is hessian else n.astype(float)


def test_jacobian_of_a_scalar_function_is_its_gradient():
    close(jacrev(scalar_loss)(W, X), grad(scalar_loss)(W, X))
    close(jacfwd(scalar_loss)(W, X), grad(scalar_loss)(W, X))


def test_hessian_matches_jax():
    jax = _jax()
    got = hessian(scalar_loss)(W, X)
    with jax.enable_x64(True):
        want = jax.hessian(lambda w, x: jax.numpy.sum(jax.numpy.tanh(x @ w) ** 2))(W, X)
    assert got.shape == (3, 2, 3, 2)
    close(got, want)


def test_hessian_through_a_while_loop():
    # JAX refuses to differentiate this loop in reverse; finite differences of the gradient.
    h = hessian(until)(V3)
    eps = 1e-6
    fd = np.stack(
        [(grad(until)(V3 + eps * e) - grad(until)(V3 - eps * e)) / (2 * eps) for e in np.eye(3)]
    )
    close(h, fd, rtol=1e-5, atol=1e-6)
    close(h, h.T)


def test_hessian_inside_myia_code():
    h = myia(lambda x: hessian(until)(x))(V3)
    close(h, hessian(until)(V3))


# vmap -----------------------------------------------------------------------------------------


def test_vmap_matches_jax_with_in_and_out_axes():
    jax = _jax()
    a = np.arange(12.0).reshape(4, 3)
    b = np.arange(3.0)
    got = vmap(lambda u, v: u * v + np.sum(u), in_axes=(0, None))(a, b)
    close(got, a * b + a.sum(1, keepdims=True))
    got_t = vmap(lambda u: u * 2.0, in_axes=1, out_axes=1)(a)
    with jax.enable_x64(True):
        want_t = jax.vmap(lambda u: u * 2.0, in_axes=1, out_axes=1)(a)
    close(got_t, want_t)
    pair = vmap(lambda u: (np.sum(u), u * u))(a)
    close(pair[0], a.sum(1))
    close(pair[1], a * a)


def test_per_example_gradients_with_vmap_of_grad():
    jax = _jax()

    def loss(w, x):
        return np.sum(np.tanh(x @ w) ** 2)

    batch = np.random.default_rng(0).normal(size=(5, 3))
    got = vmap(grad(loss), in_axes=(None, 0))(W, batch)
    assert got.shape == (5, 3, 2)
    for i in range(5):
        close(got[i], grad(loss)(W, batch[i]))
    with jax.enable_x64(True):
        want = jax.vmap(
            jax.grad(lambda w, x: jax.numpy.sum(jax.numpy.tanh(x @ w) ** 2)), in_axes=(None, 0)
        )(W, batch)
    close(got, want)


def test_vmap_inside_myia_code_and_its_gradient():
    @myia
    def f(a):
        return np.sum(vmap(lambda u: np.sum(np.sin(u)))(a))

    a = np.arange(6.0).reshape(3, 2)
    close(f(a), np.sum(np.sin(a)))
    check_grad(lambda a: np.sum(vmap(lambda u: np.sum(np.sin(u) * u))(a)), a)


def test_vmap_inside_myia_code_maps_any_axis():
    a = np.arange(6.0).reshape(2, 3)
    got = myia(lambda a: vmap(lambda u: u * 2.0 + np.sum(u), in_axes=1, out_axes=1)(a))(a)
    close(got, a * 2.0 + a.sum(0, keepdims=True))


# Trees ----------------------------------------------------------------------------------------


@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: float


def test_tree_map_updates_dicts_and_dataclasses_everywhere():
    params = {"layer": Layer(np.ones(2), 1.0), "scale": (2.0, None)}
    grads = {"layer": Layer(np.full(2, 0.5), 1.0), "scale": (1.0, None)}

    def sgd(p, g):
        return tree_map(lambda a, b: a - 0.1 * b, p, g)

    for out in (sgd(params, grads), myia(sgd)(params, grads)):
        close(out["layer"].w, np.full(2, 0.95))
        assert out["layer"].b == 0.9 and out["scale"][0] == 1.9 and out["scale"][1] is None
    leaves = tree_leaves(params)
    assert len(leaves) == 3 and leaves[1] == 1.0 and leaves[2] == 2.0
    inside = myia(lambda p: tree_leaves(p))(params)
    assert isinstance(inside, tuple) and len(inside) == 3


def test_the_leaves_of_a_list_inside_myia_code_are_a_type_error():
    # A list was one leaf (tree_leaves((1.0, [2.0, 3.0])) gave (1.0, [2.0, 3.0])), and
    # jacfwd with respect to a list failed on that leaf inside its own code.
    for fn in (
        lambda t: tree_leaves((1.0, t)),
        lambda t: jacfwd(lambda xs: xs[0] * xs[1])(t),
        lambda t: hessian(lambda xs: xs[0] * xs[1])(t),
    ):
        with pytest.raises(MyiaTypeError, match="pass a tuple instead"):
            myia(fn)([2.0, 3.0])
    assert myia(lambda t: jacrev(lambda xs: xs[0] * xs[1])(t))([2.0, 3.0]) == [3.0, 2.0]


def test_jacfwd_of_a_list_nested_at_the_top_level_is_a_type_error_of_the_users_call():
    # The message said "inside Myia code" for a call at the top level.
    for kind in (jacfwd, hessian):
        for arg in (([1.0, 2.0], 3.0), {"w": [1.0]}, [[1.0], [2.0]]):
            with pytest.raises(MyiaTypeError, match="with respect to a list") as info:
                kind(lambda xs: 1.0)(arg)
            assert "inside Myia code" not in str(info.value)
    assert jacfwd(lambda xs: xs[0] * xs[1])((1.0, 2.0)) == (2.0, 1.0)
    assert jacrev(lambda xs: xs[0] * xs[1])([1.0, 2.0]) == [2.0, 1.0]


def _pair_product(xs, c):
    return (xs[0] * xs[1] * c, np.sum(xs[1]) * len(xs))


def test_jacfwd_and_hessian_of_a_list_at_the_top_level_give_lists_as_jax():
    # Refused before (vmap has no batched lists): the list is passed as a tuple, received
    # as a list, and its blocks of the Jacobian are lists again, as JAX's.
    got = jacfwd(lambda xs: xs[0] * xs[1])([1.0, 2.0])
    assert isinstance(got, list) and got == [2.0, 1.0]
    xs = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    jf, jr = jacfwd(_pair_product)(xs, 2.0), jacrev(_pair_product)(xs, 2.0)
    assert isinstance(jf, tuple) and all(isinstance(b, list) and len(b) == 2 for b in jf)
    for bf, br in zip(jf, jr):
        for f_, r_ in zip(bf, br):
            close(f_, r_)
    close(jf[0][0], np.diag([6.0, 8.0]))
    both = jacfwd(lambda xs, c: xs[0] * c + xs[1], (0, 1))([1.0, 2.0], 3.0)
    assert both == ([3.0, 1.0], 1.0)
    h = hessian(lambda xs: xs[0] ** 2 * xs[1])([1.0, 2.0])
    assert h == [[4.0, 2.0], [2.0, 0.0]]
    # A function that needs a list (``xs + [...]``) receives one.
    assert jacfwd(lambda xs: len(xs + [1.0]) * xs[0])([2.0]) == [2.0]


def test_a_vjp_fn_returned_from_myia_code_is_a_clear_error():
    # As under jax.jit, a function made in compiled code does not come back to Python.
    with pytest.raises(MyiaTypeError, match="cannot be returned to Python"):
        myia(lambda x: vjp(np.sin, x))(np.ones(2))


def test_check_grad_through_transformations():
    check_grad(lambda x: jvp(until, (x,), (np.ones(3),))[1], V3)
    check_grad(lambda x: np.sum(vjp(np.sin, x)[1](x)[0]), V3)

"""The transformations inside Myia code on every backend, against JAX (or NumPy loops).

Each program of `PROGRAMS` applies ``vmap``, ``jvp``, ``vjp``, ``jacfwd``, ``jacrev`` or
``hessian`` inside ``@myia`` code and runs on the ``debug``, ``numpy``, ``jax`` and ``native``
backends: its results must be JAX's (in float64), of the same dtypes and shapes. The programs
are those a differential fuzzing of the transformations found wrong (dtypes, empty arrays and
batches, dicts), and a few it found right.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import own_cache_dir  # noqa: F401 (a fixture)

from myia import MyiaTypeError, grad, hessian, jacfwd, jacrev, jvp, myia, vjp, vmap

# Its tests share the module's disk cache of machine code: one xdist worker runs them all.
pytestmark = pytest.mark.xdist_group(__name__)

jax = pytest.importorskip("jax")
jnp = jax.numpy
pytest.importorskip("numba")

BACKENDS = ["debug", "numpy", "jax", "native"]
RNG = np.random.default_rng(0)
A = RNG.normal(size=(4, 3))
V32 = RNG.normal(size=3).astype(np.float32)


def tanh2(y):
    return np.tanh(y) * 2.0


def summed(y):
    return np.sum(np.tanh(y)) * 2.0


def j_tanh2(y):
    return jnp.tanh(y) * 2.0


def j_summed(y):
    return jnp.sum(jnp.tanh(y)) * 2.0


def extrema(x):
    return np.argmax(x), np.argmin(x, axis=0), np.linalg.norm(x), x[0] > 0


def halving(x):
    while x > 1.0:
        x = x / 2.0
    return x


def sqrt_or_double(x):
    if x > 0:
        return np.sqrt(x)
    return x * 2.0


def steps(x):  # a loop whose body branches: run once per example
    while x < 10.0:
        if x > 3:
            x = x * 2.0
        else:
            x = x + 4.0
    return x


def layer(p, x):
    return np.sum(np.tanh(x @ p["w"]) + p["b"])


def j_layer(p, x):
    return jnp.sum(jnp.tanh(x @ p["w"]) + p["b"])


P = {"w": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}
W = RNG.normal(size=(3, 3))


# (name, program, arguments, expected (a function of JAX's numpy, and JAX))
PROGRAMS = [
    # The per-example loop stacked a primitive's scalar results as float64 (argmax: floats).
    (
        "vmap_of_argmax_norm_f32",
        lambda x: vmap(extrema)(x),
        (A.astype(np.float32),),
        lambda: tuple(np.array(c) for c in zip(*[extrema(r) for r in A.astype(np.float32)])),
    ),
    # float32 Jacobians: jacfwd's basis (and hessian's) was float64, jacrev's rows too.
    ("jacfwd_f32", lambda x: jacfwd(tanh2)(x), (V32,), lambda: jax.jacfwd(j_tanh2)(V32)),
    ("jacrev_f32", lambda x: jacrev(tanh2)(x), (V32,), lambda: jax.jacrev(j_tanh2)(V32)),
    ("hessian_f32", lambda x: hessian(summed)(x), (V32,), lambda: jax.hessian(j_summed)(V32)),
    # The Jacobian of an empty array: (0, 0) (jacfwd reshaped its columns to (0, -1)).
    ("jacfwd_empty", lambda x: jacfwd(tanh2)(x), (np.zeros(0),), lambda: np.zeros((0, 0))),
    ("jacrev_empty", lambda x: jacrev(tanh2)(x), (np.zeros(0),), lambda: np.zeros((0, 0))),
    # An empty batch: the loop test took the max of an empty axis, the per-example loop its
    # first example.
    ("vmap_empty_while", lambda x: vmap(halving)(x), (np.zeros(0),), lambda: np.zeros(0)),
    ("vmap_empty_branch", lambda x: vmap(sqrt_or_double)(x), (np.zeros(0),), lambda: np.zeros(0)),
    ("vmap_empty_per_example", lambda x: vmap(steps)(x), (np.zeros(0),), lambda: np.zeros(0)),
    (
        "vmap_grad_empty",
        lambda x: vmap(grad(sqrt_or_double))(x),
        (np.zeros(0),),
        lambda: np.zeros(0),
    ),
    (
        "vmap_per_example",
        lambda x: vmap(steps)(x),
        (np.array([1.0, 3.0, 8.0]),),
        lambda: np.array([10.0, 14.0, 16.0]),
    ),
    # Dicts: batched as tuples are (they were refused); in_axes given as dicts.
    (
        "vmap_dict_in_axes",
        lambda p, x: vmap(lambda d: {"y": layer(d, x)}, in_axes=({"w": 2, "b": None},))(p),
        ({"w": np.stack([P["w"], 2 * P["w"]], axis=-1), "b": P["b"]}, A),
        lambda: {"y": np.array([layer(P, A), layer({"w": 2 * P["w"], "b": P["b"]}, A)])},
    ),
    (
        "vmap_grad_dict",
        lambda p, x: vmap(grad(layer), in_axes=(None, 0))(p, x),
        (P, A),
        lambda: jax.vmap(jax.grad(j_layer), in_axes=(None, 0))(P, A),
    ),
    # out_axes None for results that are not batched (it was refused for every array).
    (
        "vmap_out_axes_none",
        lambda x, w: vmap(lambda u, w: (u * w, np.sum(w)), (0, None), (1, None))(x, w),
        (A, A[0]),
        lambda: jax.vmap(lambda u, w: (u * w, jnp.sum(w)), (0, None), (1, None))(A, A[0]),
    ),
    # Several arguments (a tuple `argnums`) and structured outputs: a tuple of Jacobians per
    # output leaf (they were refused).
    (
        "jacrev_argnums_dict_out",
        lambda p, x: jacrev(lambda q, v: {"y": np.tanh(v @ q["w"]), "l": layer(q, v)}, (0, 1))(
            p, x
        ),
        (P, A),
        lambda: jax.jacrev(lambda q, v: {"y": jnp.tanh(v @ q["w"]), "l": j_layer(q, v)}, (0, 1))(
            P, A
        ),
    ),
    (
        "jacfwd_argnums_tuple_out",
        lambda x, y: jacfwd(lambda u, v: (u * v, np.sum(u)), (1, 0))(x, y),
        (A[0], V32.astype(np.float64)),
        lambda: jax.jacfwd(lambda u, v: (u * v, jnp.sum(u)), (1, 0))(A[0], V32.astype(np.float64)),
    ),
    # A literal tuple `argnums` with scalar arguments: it was captured, as a variable, by the
    # function differentiated (refused: "grad of partial(picked, (i64, i64))").
    (
        "jacrev_argnums_of_scalars",
        lambda a, b: jacrev(lambda s, t: (s * t, s + t), argnums=(0, 1))(a, b),
        (2.0, 3.0),
        lambda: jax.jacrev(lambda s, t: (s * t, s + t), argnums=(0, 1))(2.0, 3.0),
    ),
    (
        "hessian_argnums_of_scalars",
        lambda a, b: hessian(lambda s, t: s**2 * t**3, argnums=(0, 1))(a, b),
        (2.0, 3.0),
        lambda: jax.hessian(lambda s, t: s**2 * t**3, argnums=(0, 1))(2.0, 3.0),
    ),
    # A transformation of a transformation of a closure inside Myia code: the closure that
    # ``jacrev`` batches calls the ``jvp`` of ``jacfwd``, which was not built yet (an
    # internal error).
    (
        "jacrev_of_jacfwd",
        lambda x: jacrev(jacfwd(lambda a: np.sin(a) * a[0]))(x),
        (A[0],),
        lambda: jax.jacrev(jax.jacfwd(lambda a: jnp.sin(a) * a[0]))(A[0]),
    ),
    # A transformation of a closure inside a function that is transformed in turn: the
    # function (the lambda of ``grad``, ``vmap``) did not see the closure's variables, and the
    # call was refused ("called away from where it is defined").
    (
        "grad_of_vmap_of_a_closure",
        lambda x, m: grad(lambda a: np.sum(vmap(lambda r: np.tanh(m @ r))(a)))(x),
        (A, W),
        lambda: jax.grad(lambda a: jnp.sum(jax.vmap(lambda r: jnp.tanh(W @ r))(a)))(A),
    ),
    (
        "vmap_of_vmap_of_a_closure",
        lambda x, m: vmap(lambda a: vmap(lambda r: m @ r)(a))(x),
        (A[None], W),
        lambda: jax.vmap(lambda a: jax.vmap(lambda r: W @ r)(a))(A[None]),
    ),
    (
        "grad_of_jvp_of_a_closure",
        lambda x, m: grad(lambda a: np.sum(jvp(lambda b: np.sin(m @ b), (a,), (a,))[1]))(x),
        (A[0], W),
        lambda: jax.grad(lambda a: jnp.sum(jax.jvp(lambda b: jnp.sin(W @ b), (a,), (a,))[1]))(
            A[0]
        ),
    ),
    # Found right.
    (
        "vmap_of_jvp",
        lambda x, t: vmap(lambda y, s: jvp(tanh2, (y,), (s,)))(x, t),
        (A, 2 * A),
        lambda: jax.vmap(lambda y, s: jax.jvp(j_tanh2, (y,), (s,)))(A, 2 * A),
    ),
    (
        "vjp_of_a_dict",
        lambda p, x: vjp(lambda q: layer(q, x), p)[1](2.0),
        (P, A),
        lambda: jax.vjp(lambda q: j_layer(q, A), P)[1](2.0),
    ),
    (
        "jacrev_of_vmap",
        lambda x: jacrev(lambda y: vmap(summed)(y))(x),
        (A,),
        lambda: jax.jacrev(jax.vmap(j_summed))(A),
    ),
]


def same(got, expected):
    if isinstance(expected, (tuple, list, dict)):
        assert type(got) is type(expected) and len(got) == len(expected), (got, expected)
        keys = expected.keys() if isinstance(expected, dict) else range(len(expected))
        for k in keys:
            same(got[k], expected[k])
        return
    expected = np.asarray(expected)
    assert np.asarray(got).dtype == expected.dtype, (got, expected)
    assert np.shape(got) == expected.shape, (got, expected)
    rtol = 1e-5 if expected.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


def _expected(make):
    with jax.enable_x64(True):
        return jax.tree_util.tree_map(np.asarray, make())


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,fn,args,expected", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_same_as_jax(name, fn, args, expected, backend):
    options = {"background": False} if backend == "native" else {}
    same(myia(fn, backend=backend, **options)(*args), _expected(expected))


@dataclasses.dataclass
class Affine:
    w: np.ndarray
    b: np.ndarray


def affine(m, x):
    return x @ m.w + m.b


def test_vmap_at_the_top_level_takes_dataclass_axes():
    # As JAX's in_axes=(Affine(None, 0), None): the dataclass was unhashable (a TypeError).
    m = Affine(P["w"], np.stack([P["b"], 2 * P["b"]]))
    got = vmap(affine, in_axes=(Affine(None, 0), None))(m, A)
    for k in range(2):
        np.testing.assert_allclose(got[k], A @ P["w"] + m.b[k])
    out = vmap(lambda r: Affine(r, r * 2.0), out_axes=Affine(1, 0))(A)
    np.testing.assert_allclose(out.w, A.T)
    np.testing.assert_allclose(out.b, A * 2.0)


def test_vmap_at_the_top_level_takes_dict_axes_and_keywords():
    d = {"b": A, "a": 2 * A.T}
    got = vmap(lambda d, c: d["a"] * c - d["b"], in_axes=({"a": 1, "b": 0}, None))(d, 3.0)
    np.testing.assert_allclose(got, 6 * A - A)
    np.testing.assert_allclose(vmap(lambda x, y: x * y)(A, y=A), A * A)  # keywords: axis 0
    np.testing.assert_allclose(vmap(lambda x, y: x * y, in_axes=(None,))(A[0], y=A), A[0] * A)
    with pytest.raises(MyiaTypeError, match="do not match"):
        vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": A})
    with pytest.raises(MyiaTypeError, match="do not match the result"):
        vmap(lambda x: x, out_axes={"a": 0})(A)  # a dict of axes for an array


def closure_of(m):
    return lambda r: np.sin(m * r)


def test_a_closure_made_elsewhere_is_transformed_with_the_values_it_reads():
    # Refused before ("called away from where it is defined"): the values the closure reads
    # are now passed, read from the call that made it (`myia.grad.escaped`).
    x, m = A[0], 2.0
    np.testing.assert_allclose(myia(lambda x, m: vmap(closure_of(m))(x))(x, m), np.sin(m * x))
    np.testing.assert_allclose(
        myia(lambda x, m: grad(lambda a: np.sum(vmap(closure_of(m))(a)))(x))(x, m),
        m * np.cos(m * x),
    )
    value, tangent = myia(lambda x, m: jvp(closure_of(m), (x,), (x,)))(x, m)
    np.testing.assert_allclose(value, np.sin(m * x))
    np.testing.assert_allclose(tangent, m * np.cos(m * x) * x)


def test_out_axes_none_for_a_batched_result_is_a_type_error():
    with pytest.raises(MyiaTypeError, match="depends on the batched arguments"):
        vmap(lambda x, w: (x, x * w), in_axes=(0, None), out_axes=(0, None))(A, A[0])
    with pytest.raises(MyiaTypeError, match="runs once per example"):
        vmap(steps, out_axes=None)(np.array([1.0, 8.0]))

"""Programs of JAX's test suite (api_test.py, batching_test.py...) whose answers were wrong.

Each is compared with JAX's answer (written out) and, for gradients, with finite differences.

Negative ``argnums`` (JAX's ``test_grad_negative_argnums``): ``-1`` is the last argument a call
passes by position. Myia counted back from the last *parameter*, so that a parameter with a
default the call did not pass was the one differentiated: ``grad(f, -1)(x, y)`` of ``def f(x,
y, z=3.0)`` gave the gradient with respect to ``z`` (and ``False`` for a boolean flag).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from myia import MyiaTypeError, grad, hessian, jvp, myia, value_and_grad, vjp, vmap
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]


def scaled(x, y, z=3.0, flag=False):
    return 1.0 * x * y * z


@pytest.mark.parametrize("backend", BACKENDS)
def test_negative_argnums_count_back_from_the_arguments_passed(backend):
    check_grad(scaled, 1.5, 2.0, backend=backend)
    assert grad(scaled, -1, backend=backend)(1.0, 2.0) == 3.0  # d/dy, as jax.grad
    assert grad(scaled, argnums=-1, backend=backend)(1.0, 2.0, 5.0) == 2.0  # d/dz
    assert grad(scaled, argnums=(-1, 0), backend=backend)(1.0, 2.0) == (3.0, 6.0)
    assert value_and_grad(scaled, -2, backend=backend)(1.0, 2.0, z=4.0) == (8.0, 8.0)
    partial = functools.partial(scaled, 1.0)
    assert grad(partial, -1, backend=backend)(2.0) == 3.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_negative_argnums_in_myia_code(backend):
    top = grad(scaled, -1)  # made at the top level, called in Myia code

    @myia(backend=backend)
    def f(a):
        return grad(scaled, -1)(a, 2.0), grad(scaled, -2)(a, 2.0, 5.0), top(a, 2.0)

    assert f(1.0) == (3.0, 5.0, 3.0)

    @myia(backend=backend)
    def batched(xs):
        return vmap(grad(scaled, -1))(xs, xs), vmap(top)(xs, xs)

    for got in batched(np.array([1.0, 2.0])):
        np.testing.assert_array_equal(got, [3.0, 6.0])
    np.testing.assert_array_equal(vmap(top)(np.array([1.0, 2.0]), np.ones(2)), [3.0, 6.0])


def test_a_negative_position_out_of_range_is_a_type_error():
    with pytest.raises(MyiaTypeError, match="position"):
        grad(scaled, -3)(1.0, 2.0)


# An integer of each example among slices: ``vmap(lambda i: x[:, i])`` ------------------------
#
# JAX's ``testGatherBatchedIndices`` and ``testNumpyIndexing``: the index ``(slice, i)``, `i`
# batched, had no batched form, and the loop once per example sliced the slice itself (a
# MyiaTypeError about ``getitem on (slice(None, None, None), i64)``), in the primal and in the
# gradient (whose ``array_index_add`` takes the same index).

X = np.arange(24.0).reshape(2, 3, 4) / 7.0
COLUMNS = np.array([0, 3, -1])


def column_sum(x, i):
    return np.sum(np.sin(x[:, i]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_an_integer_index_among_slices(backend):
    @myia(backend=backend)
    def f(x, i):
        return (
            vmap(lambda i: x[:, :, i])(i),
            vmap(lambda i: x[1, :, i])(i),
            vmap(lambda i: x[..., i])(i),
            vmap(lambda i: x[None, 0, :, i])(i),
            vmap(lambda i: x[np.array([0, 1]), 2, i])(i),  # an array index too: per example
        )

    got = f(X, COLUMNS)
    want = [
        np.stack([g(i) for i in COLUMNS])
        for g in (
            lambda i: X[:, :, i],
            lambda i: X[1, :, i],
            lambda i: X[..., i],
            lambda i: X[None, 0, :, i],
            lambda i: X[[0, 1], 2, i],
        )
    ]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    both = myia(lambda x, i: vmap(lambda x, i: x[:, i], in_axes=(2, 0))(x, i), backend=backend)
    np.testing.assert_array_equal(
        both(X, np.array([1, 0, 2, 1])), [X[:, i, k] for k, i in enumerate([1, 0, 2, 1])]
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_the_gradient_of_an_integer_index_among_slices(backend):
    x = X[0]
    check_grad(column_sum, x, 2, backend=backend)
    g = grad(column_sum, backend=backend)
    want = np.stack([g(x, int(i)) for i in COLUMNS])
    per_example = myia(
        lambda x, i: vmap(grad(column_sum), in_axes=(None, 0))(x, i), backend=backend
    )
    np.testing.assert_allclose(per_example(x, COLUMNS), want, rtol=1e-12)
    total = myia(
        lambda x, i: grad(lambda x: np.sum(vmap(lambda i: column_sum(x, i))(i)))(x),
        backend=backend,
    )
    np.testing.assert_allclose(total(x, COLUMNS), want.sum(0), rtol=1e-12)


# Forward over reverse of a recursive function at a Python float ----------------------------
#
# ``hessian`` is ``jacfwd(grad(f))``: its tangents are NumPy floats, the primal a Python float.
# The tangent graph of the gradient of a recursive function passed the two on together, and
# its recursive calls met the two kinds of float: a MyiaTypeError about ``powr`` "called with
# different argument types" (JAX's ``testHessian`` on a Python scalar).


def powr(x, n):
    if n == 0:
        return 1.0
    return x * powr(x, n - 1)


def cube(x):
    return powr(x, 3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_of_a_recursive_function_at_a_python_float(backend):
    check_grad(cube, 2.0, backend=backend)

    @myia(backend=backend)
    def f(x):
        return hessian(cube)(x), jvp(grad(cube), (x,), (np.float64(1.0),))

    assert f(2.0) == (12.0, (12.0, 12.0))  # 6 x, with 3 x ** 2 = 12 the gradient at 2


# Mistakes in the arguments of the transformations (JAX's test_vmap_in_axes_leaf_types, ----
# test_vmap_out_axes_leaf_types, test_jvp_non_tuple_arguments): an array as an axis was
# Python's TypeError "unhashable type" from inside Myia, jvp of non-tuples a TypeError at the
# top level and, in Myia code, a MyiaTypeError about "len on (f64)".


def test_vmap_axes_that_are_not_ints_are_a_type_error():
    x = np.ones(2)
    for axes in [dict(in_axes=(np.array([1.0, 2.0]),)), dict(out_axes=(x,)), dict(in_axes="a")]:
        with pytest.raises(MyiaTypeError, match="are ints, None, or tuples"):
            vmap(lambda v: v, **axes)(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_of_primals_that_are_not_tuples_is_a_type_error(backend):
    with pytest.raises(MyiaTypeError, match="primals and tangents are tuples"):
        jvp(np.sin, 1.0, 2.0)
    f = myia(lambda x: jvp(np.sin, x, 1.0), backend=backend)
    with pytest.raises(MyiaTypeError, match="primals and tangents are tuples") as info:
        f(1.0)
    assert "test_regress_jax_suite.py" in str(info.value)


# hessian of a function that is not scalar (JAX's test_hessian_on_pytrees): JAX's hessian is
# jacfwd(jacrev(f)), a Hessian per output element; Myia's raised "the function
# differentiated must return a float scalar" (hessian(lambda x: np.array(x) ** 2)((1.0, 2.0))).


def cubes(x):
    return x * x * x


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_of_a_function_that_is_not_scalar(backend):
    x = np.array([0.3, -1.2])
    got = myia(lambda x: hessian(cubes)(x), backend=backend)(x)
    want = np.zeros((2, 2, 2))  # d2 x_i ** 3 / dx_j dx_k is 6 x_i where i = j = k
    want[0, 0, 0], want[1, 1, 1] = 6 * x
    np.testing.assert_allclose(got, want, rtol=1e-12)


# out_axes as a dict (JAX's pytree prefixes): in_axes took dicts, out_axes raised "out_axes
# are ints, None, or tuples of them".


def parts_of(x):
    return {"rows": x * x, "total": np.sum(x), "kept": (x[0], 2.0)}


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_with_out_axes_a_dict(backend):
    x = np.arange(12.0).reshape(3, 4) / 5.0
    axes = {"total": 0, "rows": 1, "kept": (0, None)}
    got = myia(lambda x: vmap(parts_of, out_axes=axes)(x), backend=backend)(x)
    np.testing.assert_allclose(got["rows"], (x * x).T)
    np.testing.assert_allclose(got["total"], x.sum(1))
    np.testing.assert_allclose(got["kept"][0], x[:, 0])
    assert got["kept"][1] == 2.0
    top = vmap(parts_of, out_axes=axes)(x)
    np.testing.assert_allclose(top["rows"], (x * x).T)
    with pytest.raises(MyiaTypeError, match="do not match the result"):
        vmap(parts_of, out_axes={"rows": 0})(x)


# vjp's cotangent of another structure than the output (JAX's test_vjp_bad_cotangent_shape):
# an array for a tuple output was silently taken for each element (the gradient summed
# them), a scalar for an array broadcast; a tuple for an array was a MyiaTypeError about
# "mul on (f64 x 3 x 4, (f64 x 3 x 4, f64 x 3 x 4))".


def pair(r):
    return r, 2.0 * r


@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp_takes_a_cotangent_of_the_structure_of_the_output(backend):
    x = np.ones((3, 4))

    @myia(backend=backend)
    def pulled(x, ct):
        return vjp(pair, x)[1](ct)

    (got,) = pulled(x, (x, 3.0 * x))
    np.testing.assert_array_equal(got, 7.0 * x)
    for ct in [2.0 * x, (x, 1.0), (x, x, x)]:
        with pytest.raises(MyiaTypeError, match="the cotangent must have the s") as info:
            pulled(x, ct)
        assert "test_regress_jax_suite.py" in str(info.value)
    with pytest.raises(MyiaTypeError, match="the cotangent must have the structure"):
        vjp(pair, x)[1](2.0 * x)


# ``argnums`` past ``*args`` (autograd's ``elementwise_grad`` tests, JAX's argnums): a position
# is an argument of the call, one of those ``*args`` receives, not the tuple of them. Myia gave
# the tuple's gradient at the top level (``grad(f)(a)`` of ``def f(*args)`` was ``(da,)``);
# in Myia code it inferred the argument's type but returned the tuple (``grad(f)(a) * 2.0``
# raised "can't multiply sequence"), and refused positions past the first parameters.


def star_product(*args):
    return np.sum(args[0] * args[-1])


def first_and_rest(x, *rest):
    s = x * 1.0
    for r in rest:
        s = s * r
    return s


A3, B3 = np.arange(3.0), np.array([2.0, -1.0, 0.5])


@pytest.mark.parametrize("backend", BACKENDS)
def test_positions_past_star_args_are_the_arguments_it_receives(backend):
    np.testing.assert_allclose(grad(star_product, backend=backend)(A3), 2 * A3)
    np.testing.assert_allclose(grad(star_product, 1, backend=backend)(A3, B3), A3)
    da, db = grad(star_product, (0, 1), backend=backend)(A3, B3)
    np.testing.assert_allclose(da, B3)
    np.testing.assert_allclose(db, A3)
    assert grad(first_and_rest, 2, backend=backend)(2.0, 3.0, 4.0) == 6.0
    assert grad(first_and_rest, 0, 1, backend=backend)(2.0, 3.0, 4.0) == (12.0, 8.0)
    assert grad(first_and_rest, "rest", backend=backend)(2.0, 3.0, 4.0) == (8.0, 6.0)
    assert value_and_grad(first_and_rest, -1, backend=backend)(2.0, 3.0, 4.0) == (24.0, 6.0)
    check_grad(first_and_rest, 2.0, 3.0, 4.0, wrt=(0, 1, 2), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_positions_past_star_args_in_myia_code(backend):
    @myia(backend=backend)
    def uses(a, b):
        return grad(star_product)(a) * 2.0 + grad(star_product, 1)(a, b)

    np.testing.assert_allclose(uses(A3, B3), 4 * A3 + A3)

    @myia(backend=backend)
    def second(x, y):
        return grad(lambda v: grad(first_and_rest, 1)(x, v, v))(y)

    assert second(2.0, 3.0) == 2.0  # d/dv of d/dr1 (x * r1 * r2) = x * r2 at r2 = v: x

"""Arrays whose dimensions are known only at run time: joins of arrays of different shapes.

Two branches returning arrays of different shapes, or loop state whose shape changes between
iterations, join to an array type whose differing dimensions are unknown (``f64 x ? x 64``).
Each program is compared with Python/NumPy on every backend, and its gradient with finite
differences.
"""

from __future__ import annotations

import numpy as np
import pytest

from myia import grad, myia
from myia.abstract import AbstractArray, AbstractTuple, TypeMismatch, join, show
from myia.errors import MyiaShapeError, MyiaTypeError
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax", "native"]
W2 = np.array([[0.5, -0.1], [0.2, 0.3], [-0.4, 0.7]])


def same(a, b):
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# The lattice ----------------------------------------------------------------------------------


def test_join_of_arrays_of_different_shapes_has_unknown_dims():
    a = AbstractArray("float64", (2, 64))
    b = AbstractArray("float64", (3, 64))
    assert show(join(a, b)) == "f64 x ? x 64"
    assert join(join(a, b), a) == join(a, b)
    t = join(AbstractTuple((a, a)), AbstractTuple((b, a)))
    assert show(t) == "(f64 x ? x 64, f64 x 2 x 64)"


def test_different_ranks_or_dtypes_do_not_join():
    with pytest.raises(TypeMismatch, match="numbers of dimensions"):
        join(AbstractArray("float64", (2,)), AbstractArray("float64", (2, 1)))
    with pytest.raises(TypeMismatch, match="dtypes"):
        join(AbstractArray("float64", (2,)), AbstractArray("float32", (3,)))


# Branches -------------------------------------------------------------------------------------


def head_or_all(x, c):
    if c > 0:
        return x
    return x[:2]


def head_or_all_loss(x, c):
    y = head_or_all(x, c)
    return np.sum(y**2) + y.shape[0]


def rows_or_all(x, c, w):
    # Different numbers of rows: f64 x ? x 3, then matmul, reductions, indexing.
    if c > 0:
        y = x
    else:
        y = x[1:]
    z = np.tanh(y @ w)
    return np.sum(z * z[0]) + np.mean(z[-1]) + np.max(np.sum(z, axis=1))


def zeros_of_unknown(x, c):
    y = head_or_all(x, c)
    z = np.zeros(y.shape) + np.ones_like(y) * 2.0
    n = len(y)
    return np.sum(z * y) + n + y.size


def concat_unknown(x, c):
    y = head_or_all(x, c)
    z = np.concatenate([y, x, y])
    return np.sum(z * np.arange(1.0, 1.0 + 0 * z.shape[0] + z.shape[0]) * 0.0 + z**3)


def broadcast_unknown(x, c, w):
    y = head_or_all(x, c)
    return np.sum(np.sin(y[:, None] * w))


def rows(x, c):
    if c > 0:
        return x
    return x[1:]


def more_array_functions(x, c, w):
    y = rows(x, c)
    e = np.einsum("ij,jk->ik", y, w)
    b = np.broadcast_to(y[:, :1], (y.shape[0], 5))
    r = np.reshape(y, (-1,)) * np.arange(y.size)
    s = np.where(y > 0, y, 0.0) + np.cumsum(y, axis=0) + np.transpose(y).T
    return np.sum(e**2) + np.sum(b) + np.sum(r) + np.sum(s * y) + np.sum(y.T @ y)


def tuple_of_unknown(x, c):
    if c > 0:
        t = (x, x * 2.0)
    else:
        t = (x[:1], x * 3.0)
    return np.sum(t[0]) * np.sum(t[1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_branches_returning_different_shapes(backend):
    x = np.arange(1.0, 4.0)
    for c in (1.0, -1.0):
        same(myia(head_or_all, backend=backend)(x, c), head_or_all(x, c))
        same(myia(head_or_all_loss, backend=backend)(x, c), head_or_all_loss(x, c))
        same(myia(zeros_of_unknown, backend=backend)(x, c), zeros_of_unknown(x, c))
        same(myia(concat_unknown, backend=backend)(x, c), concat_unknown(x, c))
        same(myia(tuple_of_unknown, backend=backend)(x, c), tuple_of_unknown(x, c))
        w = np.linspace(-1.0, 1.0, 4).reshape(1, 4)
        same(myia(broadcast_unknown, backend=backend)(x, c, w), broadcast_unknown(x, c, w))
        m, w2 = np.linspace(-1.0, 1.0, 12).reshape(4, 3), W2
        same(myia(rows_or_all, backend=backend)(m, c, w2), rows_or_all(m, c, w2))
        args = (m, c, w2)
        same(myia(more_array_functions, backend=backend)(*args), more_array_functions(*args))


@pytest.mark.parametrize("c", [1.0, -1.0])
def test_gradients_through_branches_of_different_shapes(c):
    x = np.array([0.5, -1.5, 2.0])
    check_grad(head_or_all_loss, x, c, wrt=0)
    check_grad(zeros_of_unknown, x, c, wrt=0)
    check_grad(concat_unknown, x, c, wrt=0)
    check_grad(tuple_of_unknown, x, c, wrt=0)
    check_grad(broadcast_unknown, x, c, np.array([[0.3, -0.2]]), wrt=(0, 2))
    m, w2 = np.linspace(-1.0, 1.0, 12).reshape(4, 3), W2
    check_grad(rows_or_all, m, c, w2, wrt=(0, 2))
    check_grad(more_array_functions, m, c, w2, wrt=(0, 2))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_a_branch_on_every_backend(backend):
    x = np.array([0.5, -1.5, 2.0])
    for c in (1.0, -1.0):
        g = grad(head_or_all_loss, "x", backend=backend)(x, c)
        expected = 2 * x * (np.arange(3) < (3 if c > 0 else 2))
        same(g, expected)


# Loops and recursion --------------------------------------------------------------------------


def grow(x, n):
    y = x
    while y.shape[0] < n:
        y = np.concatenate([y, x])
    return np.sum(y)


def grow_weighted(x, n):
    y = x
    while y.shape[0] < n:
        y = np.concatenate([y * 0.5, np.sin(x)])
    return np.sum(y * y)


def rnn(h0, xs, w):
    # The state starts as (1, H) and is (B, H) after the first step.
    h = h0
    for i in range(xs.shape[0]):
        h = np.tanh(h + xs[i] @ w)
    return np.sum(h)


def rnn_growing(h0, x, n):
    # The state grows by a row at every step.
    h = h0
    for i in range(n):
        h = np.concatenate([np.tanh(h), x * i], axis=0)
    return np.sum(h * h)


def rec_grow(x, n):
    if n == 0:
        return np.sum(x * x)
    return rec_grow(np.concatenate([x, x[:1] * 2.0]), n - 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_loop_state_that_grows(backend):
    x = np.array([1.0, 2.0])
    for n in (0, 2, 7):
        same(myia(grow, backend=backend)(x, n), grow(x, n))
        same(myia(grow_weighted, backend=backend)(x, n), grow_weighted(x, n))
        same(myia(rec_grow, backend=backend)(x, n), rec_grow(x, n))
    h0, row = np.array([[0.1, -0.2]]), np.array([[0.3, 0.4]])
    for n in (0, 1, 4):
        same(myia(rnn_growing, backend=backend)(h0, row, n), rnn_growing(h0, row, n))
    h0, xs, w = np.zeros((1, 3)), np.linspace(-1, 1, 4 * 5 * 2).reshape(4, 5, 2), np.ones((2, 3))
    same(myia(rnn, backend=backend)(h0, xs, w), rnn(h0, xs, w))


def test_gradients_through_loops_whose_state_grows():
    x = np.array([1.0, -2.0])
    for n in (0, 3, 7):
        check_grad(grow, x, n, wrt=0)
        check_grad(grow_weighted, x, n, wrt=0)
        check_grad(rec_grow, x, n % 4, wrt=0)
    h0, row = np.array([[0.1, -0.2]]), np.array([[0.3, 0.4]])
    check_grad(rnn_growing, h0, row, 3, wrt=(0, 1))
    h0, xs, w = np.zeros((1, 3)), np.linspace(-1, 1, 4 * 5 * 2).reshape(4, 5, 2), np.ones((2, 3))
    check_grad(rnn, h0 + 0.1, xs, w * 0.3)


@pytest.mark.parametrize("backend", ["jax", "native", "debug"])
def test_gradient_of_grow_on_every_backend(backend):
    x = np.array([1.0, -2.0])
    same(grad(grow, "x", backend=backend)(x, 7), np.full(2, 4.0))
    same(grad(grow_weighted, "x", backend=backend)(x, 5), grad(grow_weighted, "x")(x, 5))


# One specialization per argument signature ------------------------------------------------------


def test_unknown_dims_are_not_argument_types():
    f = myia(head_or_all_loss)
    x = np.arange(3.0)
    f(x, 1.0)
    f(x, -1.0)
    f(x * 2, 1.0)
    assert [str(s) for s in f.compiled_signatures()] == ["(f64 x 3, f64)"]


# Errors ---------------------------------------------------------------------------------------


def mismatch_at_run_time(x, c, w):
    y = head_or_all(x, c)
    return y + w  # (2,) + (3,) when c <= 0


def ranks_differ(x, c):
    if c > 0:
        return x
    return x[None]


def tuple_lengths_differ(x, c):
    if c > 0:
        t = (x, x)
    else:
        t = (x,)
    return t


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_broadcasting_mismatch_at_run_time_is_an_error_at_the_users_line(backend):
    f = myia(mismatch_at_run_time, backend=backend)
    x = np.ones(3)
    same(f(x, 1.0, x), 2 * x)
    with pytest.raises(MyiaShapeError) as info:
        f(x, -1.0, x)
    assert "return y + w" in str(info.value)


def test_different_ranks_are_type_errors_at_the_users_line():
    with pytest.raises(MyiaTypeError, match="numbers of dimensions") as info:
        myia(ranks_differ)(np.ones(3), 1.0)
    assert "if c > 0:" in str(info.value)
    # Tuples of different lengths join: a union of the two, told apart by their lengths at
    # run time (tests/test_regress_tuple_union.py).
    f = myia(tuple_lengths_differ)
    assert len(f(np.ones(3), 1.0)) == 2
    assert len(f(np.ones(3), -1.0)) == 1


def squeeze_unknown(x, c):
    return np.squeeze(head_or_all(x, c)[None])


def squeeze_unknown_axis(x, c):
    return np.sum(np.squeeze(head_or_all(x, c)[None], axis=0) ** 2)


def diagonal_unknown(x, c):
    return np.sum(np.diagonal(rows(x, c)) ** 2)


def diagonal_unknown_offset(x, c):
    y = rows(x, c)
    return np.sum(np.diagonal(y, 1) * np.diagonal(y.T, -1)) + np.sum(np.diagonal(y, -1))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [diagonal_unknown, diagonal_unknown_offset, squeeze_unknown_axis])
def test_diagonal_and_squeeze_with_an_axis_on_unknown_dimensions(backend, fn):
    m = np.linspace(-1.0, 1.0, 12).reshape(3, 4) if fn is not squeeze_unknown_axis else W2[0]
    f = myia(fn, backend=backend)
    for c in (1.0, -1.0):
        same(f(m, c), fn(m, c))
    for c in (1.0, -1.0):
        check_grad(fn, m, c, wrt=0, backend=backend)


def test_squeeze_without_axis_on_an_unknown_dimension_says_to_pass_axis():
    # Which axes have size 1 decides the result's rank, which must be known at compile time.
    with pytest.raises(MyiaTypeError, match=r"axis=") as info:
        myia(squeeze_unknown)(np.ones(3), 1.0)
    assert "np.squeeze(head_or_all(x, c)[None])" in str(info.value)


def test_jax_runs_unknown_dimensions_on_the_host():
    # XLA's shapes are static: such a program runs as the host code, with the same results.
    f = myia(grow, backend="jax")
    x = np.array([1.0, 2.0])
    same(f(x, 7), grow(x, 7))
    executable = f.specialization(x, 7).executable
    assert not executable.jitted
    assert "known only at run time" in executable.reason


def sum_of_squares(xs):
    return sum(np.sum(a * a) for a in xs)


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_a_list_argument_of_arrays_of_different_shapes(backend):
    # The elements of a list have one type: here an array of unknown length.
    xs = [np.array([1.0, 2.0]), np.array([3.0, -1.0, 0.5])]
    f = myia(sum_of_squares, backend=backend)
    same(f(xs), sum_of_squares(xs))
    assert [str(s) for s in f.compiled_signatures()] == ["([f64 x ?])"]
    g = grad(sum_of_squares, backend=backend)(xs)
    assert isinstance(g, list) and len(g) == 2
    same(tuple(g), (2 * xs[0], 2 * xs[1]))


def rank_grows(x, n):
    y = x
    for _ in range(n):
        y = y[None]
    return np.sum(y)


def test_loop_state_whose_rank_grows_is_an_error_at_the_users_line():
    with pytest.raises(MyiaTypeError, match="changes at every iteration") as info:
        myia(rank_grows)(np.ones(2), 3)
    assert "y = y[None]" in str(info.value)


def test_second_order_through_unknown_dimensions():
    x = np.array([0.5, -1.5, 2.0])
    check_grad(head_or_all_loss, x, -1.0, wrt=0, order=2)
    check_grad(grow_weighted, x, 7, wrt=0, order=2)


def through_layers(weights, x):
    for w in weights:
        x = np.tanh(x @ w)
    return np.sum(x)


def test_a_loop_over_layers_of_different_sizes_keeps_known_shapes():
    # Each iteration of a loop over a tuple is its own context: x's shape changes at every
    # step, but the steps differ in the layer too, so nothing is widened (the demo's MLP).
    weights = (np.ones((8, 6)) / 8, np.ones((6, 4)) / 6, np.ones((4, 3)) / 4, np.ones((3, 2)))
    x = np.ones((5, 8))
    f = myia(through_layers)
    assert f(weights, x) == pytest.approx(through_layers(weights, x))
    assert "?" not in f.generated_code(weights, x)
    check_grad(through_layers, weights, x)
    pytest.importorskip("jax")
    executable = myia(through_layers, backend="jax").specialization(weights, x).executable
    assert executable.reason is None  # one XLA computation: no unknown dimension


def pool_by_reshape(x, pool):
    # The shape is built in a loop over a tuple: unknown dimensions when inferred, constants
    # once the optimizer folds it (the nodes typed before keep their unknown dimensions).
    shape = x.shape[:2]
    for i in (0, 1):
        shape += (x.shape[i + 2] // pool[i], pool[i])
    return np.sum(np.max(np.max(x.reshape(shape), axis=3), axis=4) ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shape_folded_after_inference_keeps_its_nodes_types(backend):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4))
    same(myia(pool_by_reshape, backend=backend)(x, (2, 2)), pool_by_reshape(x, (2, 2)))
    check_grad(pool_by_reshape, x, (2, 2), wrt=0, backend=backend)

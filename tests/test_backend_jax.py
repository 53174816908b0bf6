"""The JAX backend: the same results as the NumPy backend, jitted by XLA where it can be."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from myia import grad, hessian, myia, value_and_grad, vmap
from myia.errors import MyiaError
from myia.testing import _grad as checked_grad
from myia.testing import check_grad

jax = pytest.importorskip("jax")


@dataclasses.dataclass
class Point:
    x: float
    y: float


@dataclasses.dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray


@dataclasses.dataclass
class Tree:
    value: float
    left: Tree | None
    right: Tree | None


def scalar_arith(x, y):
    return x * y + x / 2.0 - y**2


def scalar_div(x, y):
    return x / y


def int_arith(a, b):
    return a * b + a - 3 * b


def math_fns(x):
    return math.tanh(x) * 2.0 + math.atan(x)


def array_math(x):
    return np.exp(np.sin(x)) + np.log(x * x + 1.0)


def broadcast(x, b):
    return x * 2.0 + b


def reductions(x):
    return np.sum(x, axis=0) + np.mean(x)


def reductions_max(x):
    return np.max(x, axis=1) - np.min(x), np.argmax(x, axis=1)


def matmul(W, x):
    return np.tanh(W @ x)


def reshape_transpose(x):
    return np.reshape(x, (4, 3)).T


def indexing(x):
    return x[1] + x[0, 2]


def softmax_loss(x):
    z = x - np.max(x, axis=1, keepdims=True)
    return np.sum(z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))) + np.argmax(x[0])


def mixed(x, n):
    return x + n


def invert(a):
    return (~a, a & a)


def tuples(x, y):
    return (x + y, (x * y, x - y))


def _shifted(x):
    if x > 0.5:
        y = x * 2.0
    else:
        y = np.sin(x) - 1.0
    return y + 1.0


def per_example_branch(xs):
    # The test of the batched `if` is a mask, negated for the other side (`logical_not`).
    return vmap(_shifted)(xs)


def picked_rows(a):
    return np.sin(a[[0, 2]]) + a[[True, False, True]]


def records_in(p):
    return p.x * p.y


def records_out(x, y):
    return Point(x + 1.0, y * 2.0)


def layer_apply(layer, x):
    return layer.W @ x + layer.b


def if_else(x, y):
    if x > y:
        return x - y
    return y * 2.0


def while_loop(x, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + x * i
        i = i + 1
    return s


def for_range(x, n):
    for i in range(n):
        x = x * 0.5 + i
    return x


def newton(a):
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def branch_in_loop(x, n):
    for i in range(n):
        if i % 2 == 0:
            x = x * 2.0
        else:
            x = x - 1.0
    return x


def loop_break(x, n):
    y = x
    for _ in range(n):
        y = y * 1.5
        if y > 10.0:
            break
    return y


def stepped_range(x, n):
    # No iteration returns the Python float x, the others a NumPy float64 (np.sin): x is
    # converted, in the XLA computation.
    y = x
    for _ in range(0, n, 2):
        y = np.sin(y) * 0.5 + y * 0.5
    return y


def cross_entropy(W, x, y):
    # np.take_along_axis and np.take with indices known at run time only: flagged where out
    # of bounds (NumPy raises, XLA clamps), in the XLA computation.
    z = x @ W
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.take_along_axis(logp, y[:, None], axis=1)) + np.sum(np.take(W, y[:2]))


def loss(W, b, x, y):
    h = np.tanh(W @ x + b)
    return np.sum((h - y) ** 2)


def softmax_xent(W, b, x, y):
    z = np.tanh(x @ W + b)
    z = z - np.max(z, axis=1, keepdims=True)
    return np.mean(np.sum(np.exp(z), axis=1) - np.sum(z * y, axis=1))


def train_step(W, b, x, y):
    loss, (dW, db) = value_and_grad(softmax_xent, "W", "b")(W, b, x, y)
    return loss, W - 0.1 * dW, b - 0.1 * db


def loop_loss(x, n):
    s = x
    for _ in range(n):
        s = np.sin(s) * s
    return np.sum(s)


def tree_sum(t):
    if t is None:
        return 0.0
    return t.value + tree_sum(t.left) + tree_sum(t.right)


def print_row(x):
    print(x[0, 0])
    return x[1] * 2.0


def printing(x):
    print(x)
    return x + 1.0


rng = np.random.default_rng(0)
A34 = rng.standard_normal((3, 4))
V4 = rng.standard_normal(4)
V3 = rng.standard_normal(3)
A34f = A34.astype(np.float32)
TREE = Tree(1.0, Tree(2.0, None, None), Tree(3.0, Tree(4.0, None, None), None))

# (function, arguments, whether it must run as one jitted XLA computation)
PROGRAMS = [
    (scalar_arith, (1.5, 2.5), True),  # `/` by 0.0 is flagged: the host raises ZeroDivisionError
    (int_arith, (3, 4), True),  # Python ints do not overflow: flagged past int64
    (int_arith, (2**62, 4), True),  # flagged: the host computes 2**64 + 2**62 - 12
    (int_arith, (np.int64(3), np.int64(4)), True),
    (math_fns, (0.7,), True),
    (array_math, (A34,), True),
    (array_math, (A34f,), True),
    (broadcast, (A34, V4), True),
    (broadcast, (A34, 1.5), True),
    (reductions, (A34,), True),
    (matmul, (A34, V4), True),
    (reshape_transpose, (A34,), True),
    (indexing, (A34,), True),  # constant indices, checked by inference
    (softmax_loss, (A34,), False),  # x[0] may raise IndexError
    (reductions_max, (A34,), True),
    (mixed, (A34f, np.arange(4)), False),  # NumPy promotes to float64, JAX to float32
    (mixed, (A34f, np.float32(2.0)), True),
    (invert, (True,), False),  # ~True is -2 in Python, False in XLA
    (invert, (np.array([True, False]),), True),
    (per_example_branch, (np.array([0.1, 0.7, 2.0, 0.3, -1.0]),), True),
    (picked_rows, (A34,), True),
    (tuples, (A34, 2.0), True),
    (tuples, (1, 2), True),  # Python ints: flagged past int64
    (records_in, (Point(1.5, 2.0),), True),
    (records_out, (A34, V4), True),
    (layer_apply, (Layer(A34, V3), V4), True),
    (if_else, (1.0, 2.0), True),  # lax.cond
    (while_loop, (2.0, 5), True),  # one lax.while_loop
    (while_loop, (2.0, 0), True),
    (for_range, (3.0, 4), True),
    (for_range, (A34, 3), True),
    (loop_loss, (V4, 5), True),
    (newton, (np.float64(2.0),), True),
    (newton, (2.0,), True),  # `a / y` on Python floats: flagged, the host raises
    (branch_in_loop, (V4, 4), True),  # lax.cond in a lax.while_loop
    (loop_break, (1.0, 10), True),  # two exits: by the break, by the end of the range
    (loop_break, (1.0, 3), True),
    (stepped_range, (0.3, 7), True),
    (stepped_range, (0.3, 0), True),
    (cross_entropy, (A34.T, A34, np.array([0, 2, -1])), True),
    (tree_sum, (TREE,), False),
    (printing, (2.0,), False),
]


def _same(got, expected):
    if isinstance(expected, np.ndarray):
        assert type(got) is np.ndarray, got
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-5 if got.dtype == np.float32 else 1e-12)
        return
    assert type(got) is type(expected), (got, expected)
    if isinstance(expected, tuple):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _same(g, e)
    elif dataclasses.is_dataclass(expected):
        for f in dataclasses.fields(expected):
            _same(getattr(got, f.name), getattr(expected, f.name))
    else:
        assert got == pytest.approx(expected, rel=1e-12), (got, expected)


def _jitted(fn, args):
    return fn.specialization(*args).executable.jitted


@pytest.mark.parametrize(
    "fn,args,jitted", PROGRAMS, ids=[f"{p[0].__name__}-{i}" for i, p in enumerate(PROGRAMS)]
)
def test_same_results_as_numpy(fn, args, jitted, capsys):
    expected = myia(fn, backend="numpy")(*args)
    f = myia(fn, backend="jax")
    _same(f(*args), expected)
    _same(f(*args), expected)  # the second call runs the compiled computation
    if jitted:
        assert _jitted(f, args), f.specialization(*args).executable.reason
    else:
        assert not _jitted(f, args)


def test_effects_run_on_the_host(capsys):
    f = myia(printing, backend="jax")
    assert f(2.0) == 3.0
    assert capsys.readouterr().out == "2.0\n"


def test_take_out_of_bounds_raises_as_numpy():
    g = grad(cross_entropy, backend="jax")
    expected = grad(cross_entropy)(A34.T, A34, np.array([0, 2, -1]))
    np.testing.assert_allclose(g(A34.T, A34, np.array([0, 2, -1])), expected, rtol=1e-12)
    for y, bad in (([0, 3, 1], 3), ([0, 1, -4], -4), ([12, 0, 0], 12)):
        with pytest.raises(IndexError, match=f"index {bad} is out of bounds"):
            myia(cross_entropy, backend="jax")(A34.T, A34, np.array(y))
        with pytest.raises(IndexError, match=f"index {bad} is out of bounds"):
            g(A34.T, A34, np.array(y))


def test_host_errors_are_the_numpy_backends():
    f = myia(scalar_div, backend="jax")
    assert f(1.0, 4.0) == 0.25
    with pytest.raises(ZeroDivisionError):
        f(1.0, 0.0)


@pytest.mark.parametrize("wrt", [("W",), ("W", "b")])
def test_gradient_of_straight_line_code_is_jitted(wrt):
    args = (A34, V3, V4, V3)
    expected = grad(loss, *wrt, backend="numpy")(*args)
    g = grad(loss, *wrt, backend="jax")
    _same(g(*args), expected)
    assert _jitted(g, args), g.specialization(*args).executable.reason


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_training_step_is_jitted(dtype):
    x, W, b = rng.standard_normal((5, 4)), rng.standard_normal((4, 3)), V3
    y = np.eye(3)[[0, 1, 2, 0, 1]]
    args = tuple(a.astype(dtype) for a in (W, b, x, y))
    expected = myia(train_step, backend="numpy")(*args)
    f = myia(train_step, backend="jax")
    got = f(*args)
    assert type(got[0]) is type(expected[0])
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5 if dtype == np.float32 else 1e-12)
    assert _jitted(f, args), f.specialization(*args).executable.reason


def test_gradient_of_a_loop_runs():
    args = (V4, 3)
    expected = grad(loop_loss, "x", backend="numpy")(*args)
    g = grad(loop_loss, "x", backend="jax")
    _same(g(*args), expected)
    # The backward pass reads the stack of the loop's values, a buffer in XLA.
    assert _jitted(g, args), g.specialization(*args).executable.reason


def test_float64_is_kept_and_jax_config_unchanged():
    before = jax.config.jax_enable_x64
    f = myia(array_math, backend="jax")
    out = f(A34)
    assert out.dtype == np.float64
    assert jax.config.jax_enable_x64 == before


def test_keep_on_device_round_trip():
    f = myia(matmul, backend="jax", keep_on_device=True)
    out = f(A34, V4)
    assert isinstance(out, jax.Array)
    assert out.dtype == np.float64
    h = myia(broadcast, backend="jax", keep_on_device=True)
    x = h(A34, V4)
    y = h(x, V4)  # a jax.Array argument
    np.testing.assert_allclose(np.asarray(y), (A34 * 2.0 + V4) * 2.0 + V4)
    assert len(h.compiled_signatures()) == 1


def test_jax_arrays_into_host_code(capsys):
    f = myia(print_row, backend="jax", keep_on_device=True)
    x = jax.numpy.asarray(A34)
    np.testing.assert_allclose(f(x), A34[1] * 2.0)
    assert not _jitted(f, (x,))


def test_device_option():
    f = myia(matmul, backend="jax", device="cpu")
    np.testing.assert_allclose(f(A34, V4), np.tanh(A34 @ V4))
    with pytest.raises(MyiaError, match="no 'tpu' device"):
        myia(matmul, backend="jax", device="tpu")


def test_other_backends_take_no_option():
    with pytest.raises(ValueError, match="takes no option"):
        myia(matmul, backend="numpy", keep_on_device=True)


def test_lowered_text_is_stablehlo():
    f = myia(matmul, backend="jax")
    text = f.lowered_text(A34, V4)
    assert "stablehlo.tanh" in text and "tensor<3x4xf64>" in text
    with pytest.raises(ValueError, match="runs on the host"):
        myia(printing, backend="jax").lowered_text(1.0)
    with pytest.raises(ValueError, match="does not use XLA"):
        myia(matmul, backend="numpy").lowered_text(A34, V4)


# Control flow and the gradients of loops in XLA ------------------------------------------------


def decay(x):
    y = x
    while y > 1.0:
        y = y * 0.99 + math.sin(y) * 0.001
    return y


def nested_loops(x, n):
    s = x
    for _ in range(n):
        for _ in range(n):
            s = s * 0.9 + math.sin(s) * 0.1
    return s


def with_break(x):
    y = x
    while True:
        y = y * 1.5
        if y > 100.0:
            break
    return y


def log_loop(x, n):
    for _ in range(n):
        x = math.log(x) + 1.0
    return x


def row_sum(x, n):
    s = np.zeros(x.shape[1])
    for i in range(n):
        s = s + x[i] * 2.0
    return s


def rnn_loss(x, Wx, Wh, b):
    h = np.zeros((x.shape[1], Wh.shape[0]))
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ Wx + h @ Wh + b)
    return np.sum(h * h)


def _check_grad(fn, wrt, jitted, *calls):
    """Compile ``grad(fn, *wrt)`` once per backend; check it on each tuple of arguments."""
    numpy, g = grad(fn, *wrt, backend="numpy"), grad(fn, *wrt, backend="jax")
    for args in calls:
        expected = numpy(*args)
        _same(g(*args), expected)
        _same(g(*args), expected)
        assert _jitted(g, args) == jitted, g.specialization(*args).executable.reason
    return g


@pytest.mark.parametrize("a", [2.0, 0.5, 1e6])
def test_gradient_of_a_value_dependent_while_loop_is_jitted(a):
    # JAX refuses reverse-mode of lax.while_loop; Myia's stack is a buffer in the XLA code.
    g = _check_grad(newton, ("a",), True, (a,))
    assert g.specialization(a).executable.capacities == [64]


@pytest.mark.parametrize("a", [2.0, 1e6])
def test_second_order_of_a_while_loop(a):
    expected = grad(grad(newton, "a"), "a", backend="numpy")(a)
    gg = grad(grad(newton, "a"), "a", backend="jax")
    assert gg(a) == pytest.approx(expected, rel=1e-12)
    # The sensitivities of the stacks are stacks too: buffers in the XLA computation.
    assert _jitted(gg, (a,)), gg.specialization(a).executable.reason


def sin_loop(x, n):
    for _ in range(n):
        x = math.sin(x) * 1.1
    return x


@pytest.mark.parametrize(
    "fn,args", [(sin_loop, (0.3, 4)), (sin_loop, (0.3, 0)), (decay, (10.0,)), (newton, (3.0,))]
)
def test_second_order_of_loops_is_jitted(fn, args):
    gg = grad(grad(fn, 0), 0, backend="jax")
    expected = grad(grad(fn, 0), 0, backend="debug")(*args)
    assert gg(*args) == pytest.approx(expected, rel=1e-10)
    assert _jitted(gg, args), gg.specialization(*args).executable.reason
    check_grad(fn, *args, wrt=0, order=2, backend="jax")


@pytest.mark.parametrize(
    "fn,args", [(with_break, (2.0,)), (with_break, (200.0,)), (loop_break, (1.0, 10))]
)
def test_second_order_of_loops_with_break_is_jitted(fn, args):
    # The first order pushes closures holding stacks (its backward passes) on stacks of any
    # values: their layout is fixed by the first push and joined by later ones.
    gg = grad(grad(fn, 0), 0, backend="jax")
    expected = grad(grad(fn, 0), 0, backend="numpy")(*args)
    assert gg(*args) == pytest.approx(expected, rel=1e-12)
    assert _jitted(gg, args), gg.specialization(*args).executable.reason
    assert gg(*args) == pytest.approx(expected, rel=1e-12)


def test_second_order_of_a_loop_with_break_against_finite_differences():
    check_grad(with_break, 2.0, wrt=0, order=2, backend="jax")


def test_loop_exceeding_its_first_stack_capacity():
    g = _check_grad(decay, ("x",), True, (10.0,))  # 230 iterations: 64 rows are not enough
    executable = g.specialization(10.0).executable
    assert executable.capacities == [64, 256]
    _same(g(5.0), grad(decay, "x", backend="numpy")(5.0))  # fewer iterations: same capacity
    assert executable.capacities == [64, 256] and len(g.compiled_signatures()) == 1


def test_nested_loops():
    f = myia(nested_loops, backend="jax")
    _same(f(0.3, 3), myia(nested_loops, backend="numpy")(0.3, 3))
    assert _jitted(f, (0.3, 3))
    # The backward loop exits where the outer or the inner loop started: environments of
    # different keys and arguments, joined in one XLA computation.
    _check_grad(nested_loops, ("x",), True, (0.3, 3), (0.3, 0))


def test_break():
    f = myia(with_break, backend="jax")
    _same(f(2.0), myia(with_break, backend="numpy")(2.0))
    assert _jitted(f, (2.0,))
    # The stack of the backpropagators holds their numbers; calling one is a lax.switch.
    # 200.0: no iteration after the first.
    _check_grad(with_break, ("x",), True, (2.0,), (200.0,))
    # Two exits whose backward passes are different functions: a union, called by lax.switch.
    _check_grad(loop_break, ("x",), True, (1.0, 10), (1.0, 3))


def test_branch_in_loop_gradient():
    _check_grad(branch_in_loop, ("x",), True, (1.5, 4), (1.5, 0))


def test_python_errors_in_a_jitted_loop_are_raised():
    f = myia(log_loop, backend="jax")
    assert f(3.0, 3) == myia(log_loop, backend="numpy")(3.0, 3)
    assert _jitted(f, (3.0, 3))
    with pytest.raises(ValueError, match="math domain error"):
        f(0.5, 3)  # log of a negative number at the third iteration


def test_index_in_a_jitted_loop():
    f = myia(row_sum, backend="jax")
    _same(f(A34, 3), myia(row_sum, backend="numpy")(A34, 3))
    assert _jitted(f, (A34, 3))
    with pytest.raises(IndexError):
        f(A34, 4)


def test_rnn_gradient_is_jitted():
    x = rng.standard_normal((6, 2, 3))
    Wx, Wh, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 4)), V4
    _check_grad(rnn_loss, ("Wx", "Wh", "b"), True, (x, Wx, Wh, b))


def test_gradient_of_newton_is_one_xla_computation():
    g = grad(newton, "a", backend="jax")
    assert g(2.0) == pytest.approx(grad(newton, "a", backend="numpy")(2.0), rel=1e-12)
    text = g.lowered_text(2.0)
    # The forward loop and the backward loop, each one stablehlo.while.
    assert text.count("stablehlo.while") == 2
    assert "tensor<64xf64>" in text  # the stack of the iterates, 64 rows


def test_array_results_are_writable():
    f = myia(array_math, backend="jax")
    out = f(A34)
    assert _jitted(f, (A34,)) and out.flags.writeable


def nested_rnn(W, h, n, m):
    for _ in range(n):
        for _ in range(m):
            h = np.tanh(W @ h) + h * 0.1
        h = h * 0.5
    return np.sum(h)


def search(x, n):
    s = x
    for _ in range(n):
        y = s
        while y < 10.0:
            y = y * 1.3 + 0.1
        s = s + math.sin(y) * 0.1
        if s > 5.0:
            break
    return s


def nested_break(x, n):
    s = x
    for _ in range(n):
        for j in range(n):
            s = s * 1.1 + 0.01 * j
            if s > 3.0:
                break
    return s


def triple_loop(x, n):
    for i in range(n):
        for _ in range(i):
            for _ in range(2):
                x = math.sin(x) * 1.1 + 0.1
    return x


W33 = rng.standard_normal((3, 3)) * 0.5

LOOP_GRADIENTS = [
    (nested_rnn, ("W", "h"), (W33, V3, 3, 2)),
    (nested_rnn, ("W", "h"), (W33, V3, 2, 0)),
    (search, ("x",), (1.0, 6)),  # a while loop in a for loop, and a break
    (search, ("x",), (4.9, 6)),  # the break at the first iteration
    (nested_break, ("x",), (1.0, 4)),  # a break out of the inner loop
    (nested_break, ("x",), (0.1, 3)),
    (triple_loop, ("x",), (0.3, 4)),
]


@pytest.mark.parametrize(
    "fn,wrt,args",
    LOOP_GRADIENTS,
    ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(LOOP_GRADIENTS)],
)
def test_gradients_of_nested_loops_and_breaks_are_jitted(fn, wrt, args):
    # The gradient that check_grad compiles (once per function): the cases of a function
    # run the one compiled program, each on its own path through the loops.
    g = checked_grad(fn, wrt, "jax")
    got = g(*args)
    assert _jitted(g, args), g.specialization(*args).executable.reason
    expected = checked_grad(fn, wrt, "debug")(*args)
    if len(wrt) == 1:
        got, expected = (got,), (expected,)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    check_grad(fn, *args, wrt=wrt, backend="jax")


def test_stacks_grow_after_calls_that_fit():
    g = grad(decay, "x", backend="jax")
    numpy = grad(decay, "x", backend="numpy")
    _same(g(1.5), numpy(1.5))  # 41 iterations: 64 rows
    _same(g(1.2), numpy(1.2))
    _same(g(10.0), numpy(10.0))  # 230 iterations: compiled again with 256 rows
    assert g.specialization(1.5).executable.capacities == [64, 256]
    _same(g(1.5), numpy(1.5))


def test_errors_flagged_after_calls_that_succeeded():
    f = myia(log_loop, backend="jax")
    for _ in range(3):
        assert f(3.0, 3) == myia(log_loop, backend="numpy")(3.0, 3)
    with pytest.raises(ValueError, match="math domain error"):
        f(0.5, 3)


def newton_hessian(a):
    return hessian(newton)(a)


def test_hessian_of_a_while_loop_is_jitted():
    h = myia(newton_hessian, backend="jax")
    assert h(2.0) == pytest.approx(myia(newton_hessian, backend="numpy")(2.0), rel=1e-12)
    assert _jitted(h, (2.0,)), h.specialization(2.0).executable.reason


def _second_by_finite_differences(fn, args, eps=1e-5):
    """The second derivative in the first argument: central differences of the gradient."""
    g = grad(fn, 0, backend="numpy")
    x, rest = args[0], args[1:]
    return (g(x + eps, *rest) - g(x - eps, *rest)) / (2 * eps)


# A branch in a loop's body, a search loop (a while loop in a for loop, and a break) and a
# break out of an inner loop: the closures of each exit of a loop are copies of one function
# in the generated code, made one function (`jax_copies`), so that they join as one closure.
SECOND_ORDER_LOOPS = [
    (nested_loops, (0.3, 3)),
    (branch_in_loop, (1.5, 4)),
    (search, (1.0, 6)),
    (nested_break, (1.0, 4)),
]


@pytest.mark.slow  # large XLA computations: one to seven minutes each on 2 loaded cores
@pytest.mark.parametrize(
    "fn,args",
    SECOND_ORDER_LOOPS,
    ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(SECOND_ORDER_LOOPS)],
)
def test_second_order_of_nested_loops_and_branches_is_one_xla_computation(fn, args):
    # The backward passes of the exits are unions, their environments hold the arguments of
    # different functions under one key, and a loop's function-valued variables start unset:
    # all joined in one XLA computation.
    gg = grad(grad(fn, 0), 0, backend="jax")
    got = gg(*args)
    assert _jitted(gg, args), gg.specialization(*args).executable.reason
    expected = grad(grad(fn, 0), 0, backend="debug")(*args)
    assert got == pytest.approx(expected, rel=1e-10, abs=1e-12)
    assert got == pytest.approx(_second_by_finite_differences(fn, args), rel=1e-5, abs=1e-6)


def test_cumsum_of_small_integers_has_numpys_dtype():
    # jax.numpy's cumsum keeps uint8 and int32 (and wrapped around: 250 + 3 + 7 was 4) where
    # NumPy's gives uint64 and int64; the values then computed on were those.
    def f(x):
        return np.cumsum(x) * 1.0, np.cumsum(x) + 1

    for x in (np.array([250, 3, 7], np.uint8), np.array([100, 100, 100], np.int8)):
        got, want = myia(f, backend="jax")(x), f(x)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


def test_a_loop_counter_times_small_integers_wraps_as_numpy():
    # Under JAX the counter is a strong int64, which widened x * i of an int8 x: 100 * 2
    # was 200, not NumPy's -56, once read as floats.
    def f(x):
        s = 0.0
        for i in range(3):
            s = s + np.sum((x * i).astype(np.float64)) + np.sum((x + i * 50) * 1.0)
        return s

    x = np.array([100, 100], np.int8)
    with np.errstate(over="ignore"):
        want = f(x)
    assert myia(f, backend="jax")(x) == want

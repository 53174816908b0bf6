"""`myia.checkpoint`: a function whose forward pass a gradient recomputes instead of storing.

Gradients through checkpointed calls are checked against finite differences (the project's
checker) and against the same program without `checkpoint`, on every backend; the memory
the forward pass keeps is measured with `tracemalloc`.
"""

from __future__ import annotations

import dataclasses
import sys
import tracemalloc

import numpy as np
import pytest

from myia import (
    ArithmeticData,
    MyiaTypeError,
    checkpoint,
    grad,
    hessian,
    jacfwd,
    jvp,
    myia,
    value_and_grad,
    vmap,
)
from myia.testing import check_grad

BACKENDS = [None, "debug", "jax", "native"]


def close(a, b, rtol=1e-9, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol, atol)


# Programs a researcher writes -----------------------------------------------------------------


def block(x, y):
    """A branch and a loop: what the backward pass recomputes."""
    if np.sum(x) > 0:
        z = np.sin(x) * y
    else:
        z = np.cos(x) * y
    k = 0
    while k < 3:
        z = z * np.tanh(z + x)
        k += 1
    return z


@checkpoint
def layer(h, w):
    return np.tanh(h @ w) + h


def two_blocks(x, y):
    return np.sum(checkpoint(block)(x, y) * checkpoint(block)(y, x))


def two_blocks_plain(x, y):
    return np.sum(block(x, y) * block(y, x))


def closure_inside(x, y):
    g = checkpoint(lambda u: np.sin(u * y) * x)
    return np.sum(g(x) + g(y))


def closure_inside_plain(x, y):
    def g(u):
        return np.sin(u * y) * x

    return np.sum(g(x) + g(y))


def decorated_layers(h, w):
    i = 0
    while i < 4:
        h = layer(h, w)
        i += 1
    return np.sum(h * h)


X = np.array([0.3, -0.2, 0.5])
Y = np.array([0.7, 0.1, -0.4])
H = np.array([[0.2, -0.1, 0.4], [0.3, 0.5, -0.6]])
W = np.array([[0.1, 0.2, -0.3], [0.4, -0.2, 0.1], [0.0, 0.3, 0.2]]) * 0.5


# Values ---------------------------------------------------------------------------------------


def test_checkpoint_computes_the_function_at_the_top_level_and_in_myia_code():
    assert checkpoint(np.sin) is not None
    close(checkpoint(block)(X, Y), block(X, Y))
    close(myia(two_blocks)(X, Y), two_blocks_plain(X, Y))
    close(myia(closure_inside)(X, Y), closure_inside_plain(X, Y))
    assert checkpoint(block) is checkpoint(block)  # one function: gradients compile once
    assert checkpoint(block).__name__ == "block"


def test_checkpoint_of_a_transformed_or_compiled_function_at_the_top_level():
    # `checkpoint(vmap(f))` called from Python ran the Myia code of `vmap` as Python (a
    # TypeError from inside Myia): it calls the transformed function, and Myia code (a
    # gradient) still recomputes it.
    def f(x):
        return np.sin(x) * np.sum(x**2)

    rows = np.stack([X, Y])
    close(checkpoint(vmap(f))(rows), np.stack([f(X), f(Y)]))
    close(checkpoint(jacfwd(f))(X), jacfwd(f)(X))
    close(checkpoint(myia(f))(X), f(X))
    close(checkpoint(vmap(f), loops="sqrt")(rows), np.stack([f(X), f(Y)]))
    want = grad(lambda r: np.sum(vmap(f)(r) ** 2))(rows)
    close(grad(lambda r: np.sum(checkpoint(vmap(f))(r) ** 2))(rows), want)
    assert checkpoint(vmap(f)).__name__ == "f"


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_through_checkpoints_match_finite_differences(backend):
    check_grad(two_blocks, X, Y, backend=backend)
    check_grad(closure_inside, X, Y, backend=backend)
    check_grad(decorated_layers, H, W, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_through_checkpoints_equal_those_without(backend):
    for ck, plain in ((two_blocks, two_blocks_plain), (closure_inside, closure_inside_plain)):
        close(grad(ck, backend=backend)(X, Y), grad(plain, backend=backend)(X, Y))
    f = checkpoint(lambda x: np.sum(block(x, x)))
    close(grad(f)(X), grad(lambda x: np.sum(block(x, x)))(X))


def test_checkpoint_as_the_function_differentiated():
    def f(x):
        return np.sin(x) * x + x * x

    assert grad(checkpoint(f))(1.3) == grad(f)(1.3)
    v, g = value_and_grad(checkpoint(f))(1.3)
    assert v == f(1.3) and g == grad(f)(1.3)


def test_higher_order_gradients_through_checkpoints():
    check_grad(two_blocks, X, Y, order=2)
    check_grad(closure_inside, X, Y, order=2)

    def f(x):
        return np.sin(x) * x * x

    for order in (2, 3):
        g, h = checkpoint(f), f
        for _ in range(order):
            g, h = grad(g), grad(h)
        close(g(0.7), h(0.7))


def test_checkpoint_composes_with_the_other_transformations():
    def h_ck(x):
        return np.sum(checkpoint(block)(x, x) ** 2)

    def h_plain(x):
        return np.sum(block(x, x) ** 2)

    close(hessian(h_ck)(X), hessian(h_plain)(X))
    close(jvp(h_ck, (X,), (Y,)), jvp(h_plain, (X,), (Y,)))
    xs = np.stack([X, Y])
    close(vmap(grad(h_ck))(xs), vmap(grad(h_plain))(xs))


def test_checkpoint_of_a_recursive_function():
    @checkpoint
    def power(x, n):
        if n == 0:
            return 1.0
        return x * power(x, n - 1)

    def f(x):
        return power(x, 5) + x

    close(grad(f)(1.1), 5 * 1.1**4 + 1)
    check_grad(f, 1.1)


def pair(x, y):
    return np.sin(x) * y, x * y


def test_a_checkpointed_function_returning_a_tuple_called_twice():
    def prog(x, y, z):
        a, b = checkpoint(pair)(x, y)
        c, _ = checkpoint(pair)(z, 2.0)
        return a + b * c

    assert myia(prog)(0.3, 0.7, 0.2) == prog(0.3, 0.7, 0.2)
    check_grad(prog, 0.3, 0.7, 0.2)


@dataclasses.dataclass
class Linear(ArithmeticData):
    w: np.ndarray
    b: np.ndarray

    def __call__(self, x):
        return np.tanh(x @ self.w + self.b)


def test_checkpoint_of_a_callable_model():
    m = Linear(np.eye(3) * 0.5 + 0.1, np.ones(3) * 0.1)
    x = np.array([[1.0, -0.5, 0.2], [0.3, 0.4, -1.0]])

    def loss(m, x):
        h = checkpoint(m)(x)
        return np.sum(checkpoint(m)(h) ** 2)

    def plain(m, x):
        return np.sum(m(m(x)) ** 2)

    check_grad(loss, m, x)
    close(grad(loss)(m, x).w, grad(plain)(m, x).w)
    wrapped = checkpoint(m)  # at the top level: a function calling the model
    close(wrapped(x), m(x))


def test_checkpoint_of_a_myia_function_and_with_aux():
    @myia
    def f(x):
        return x * np.sin(x)

    close(grad(checkpoint(f))(0.5), grad(lambda x: x * np.sin(x))(0.5))

    def with_aux(x):
        return checkpoint(lambda u: u * u)(x), x + 1.0

    assert grad(with_aux, has_aux=True)(3.0) == (6.0, 4.0)


def test_keywords_to_a_checkpoint_made_in_myia_code_are_an_error_at_the_call():
    def scaled(x, k=2.0):
        return x * k

    def f(x):
        return checkpoint(scaled)(x, k=3.0)

    with pytest.raises(MyiaTypeError, match="unexpected keyword argument 'k'") as info:
        grad(f)(1.0)
    assert "checkpoint(scaled)(x, k=3.0)" in str(info.value)
    kept = checkpoint(scaled)  # at the top level: the function's own signature
    assert grad(lambda x: kept(x, k=3.0) + kept(x))(1.0) == 5.0


# Effects --------------------------------------------------------------------------------------


def noisy(x, rng):
    return x * rng.normal()  # the draw


def test_a_checkpointed_function_that_draws_random_numbers_is_refused():
    def f(x, rng):
        return checkpoint(noisy)(x, rng)

    with pytest.raises(MyiaTypeError, match="draws random numbers") as info:
        grad(f)(2.0, np.random.default_rng(0))
    assert "the draw" in str(info.value)
    # Without a gradient, nothing is recomputed: the draw is made once.
    assert myia(f)(2.0, np.random.default_rng(0)) == noisy(2.0, np.random.default_rng(0))


# Memory ---------------------------------------------------------------------------------------


def step(x, w):
    a = np.tanh(x * w)
    b = np.sin(a) * a
    c = np.exp(-b * b)
    return c * x + a


checkpointed_step = checkpoint(step)


def steps(k, x, w):
    i = 0
    while i < k:
        x = step(x, w)
        i = i + 1
    return x


checkpointed_steps = checkpoint(steps)


def loss_plain(x, w, n):
    return np.sum(steps(n, x, w))


def loss_per_step(x, w, n):
    i = 0
    while i < n:
        x = checkpointed_step(x, w)
        i = i + 1
    return np.sum(x)


def loss_sqrt(x, w, n, k):
    """``n / k`` checkpointed chunks of ``k`` steps: about ``n / k + k`` arrays kept."""
    j = 0
    while j < n // k:
        x = checkpointed_steps(k, x, w)
        j = j + 1
    return np.sum(x)


def _peak(fn, *args):
    fn(*args)  # compiled, warm
    native = sys.modules.get("myia.compile.native_backend")
    if native is not None:
        # Machine code an earlier test compiles in a thread would be measured too.
        native.wait_all()
    tracemalloc.start()
    try:
        out = fn(*args)
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_checkpointed_steps_keep_their_inputs_alone():
    """A loop of 144 steps over arrays of 40 kB, each step keeping 6 intermediate values.

    Without checkpointing, the forward pass keeps every step's intermediate values (about
    6 arrays per step); checkpointing each step keeps its input alone (1 array per step), and
    12 checkpointed chunks of 12 steps keep 12 chunk inputs plus one chunk's values, while the
    backward pass recomputes it: O(sqrt n) arrays.
    """
    x = np.linspace(-1.0, 1.0, 5_000)
    w, n = 0.9, 144
    size = x.nbytes
    g_plain, m_plain = _peak(grad(loss_plain, 0), x, w, n)
    g_step, m_step = _peak(grad(loss_per_step, 0), x, w, n)
    g_sqrt, m_sqrt = _peak(grad(loss_sqrt, 0), x, w, n, 12)
    close(g_step, g_plain)
    close(g_sqrt, g_plain)
    assert m_plain > 5 * n * size
    assert m_step < 1.3 * n * size
    assert m_sqrt < 0.7 * m_step
    assert m_step < 0.25 * m_plain


def grow(x, a):
    """Steps until ``x`` passes 100: the trip count is known only at run time."""
    while x < 100.0:
        x = x * (1.0 + a) + a * x * x * 1e-3
    return x


@checkpoint
def grow_chunk(x, a, k):
    """At most `k` steps of `grow`'s loop."""
    j = 0
    while j < k and x < 100.0:
        x = x * (1.0 + a) + a * x * x * 1e-3
        j = j + 1
    return x


def grow_chunked(x, a):
    while x < 100.0:
        x = grow_chunk(x, a, 100)
    return x


def test_a_long_while_loop_in_checkpointed_chunks_keeps_almost_nothing():
    """The gradient of 20,000 iterations of a value-dependent ``while`` loop.

    Without checkpointing the forward pass keeps every iteration's values (a few MB); in
    checkpointed chunks of 100 iterations it keeps 200 chunk inputs, and one chunk's values
    while it is recomputed.
    """
    a = 2.3e-4
    plain, m_plain = _peak(grad(grow, "a"), 1.0, a)
    chunked, m_chunked = _peak(grad(grow_chunked, "a"), 1.0, a)
    close(chunked, plain)
    assert m_plain > 1e6
    assert m_chunked < 0.1e6


def test_checkpoints_save_memory_at_the_second_order_too():
    """The second-order gradient's forward pass runs the first-order gradient: its checkpointed
    calls (the first order's two runs of each step) are checkpointed in turn."""
    x = np.linspace(-1.0, 1.0, 5_000)
    n = 48

    def second(loss):
        return grad(lambda w, x, n: grad(loss, 1)(x, w, n))

    _, m_plain = _peak(second(loss_plain), 0.9, x, n)
    _, m_step = _peak(second(loss_per_step), 0.9, x, n)
    assert m_step < 0.3 * m_plain
    check_grad(decorated_layers, H, W, order=2)
    check_grad(loss_per_step, X, 1.3, 3, wrt=(0, 1), order=2)

"""NumPy arguments and array results of jitted programs on the JAX backend.

A large NumPy argument that XLA's CPU client would copy slowly (not 64-byte aligned, or not
C-contiguous) is copied by Myia into aligned memory of its own, which XLA reads in place; the
user's array is never written. Once a program is traced, its calls take the fast path
(`myia.compile.jax_fast`), also where results are arrays: a call that flags an error or
outgrows its stacks there goes the general way.
"""

from __future__ import annotations

import gc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from myia import grad, myia
from myia.compile.jax_values import ALIGNED_BYTES, ALIGNMENT, aligned

jax = pytest.importorskip("jax")

rng = np.random.default_rng(0)


def _address(x: np.ndarray) -> int:
    return x.__array_interface__["data"][0]


def _misaligned(shape: tuple[int, ...], dtype: str = "float64") -> np.ndarray:
    """A C-contiguous array of `shape` at 16 bytes past a 64-byte boundary."""
    itemsize = np.dtype(dtype).itemsize
    size = int(np.prod(shape))
    buffer = np.empty(size + 2 * ALIGNMENT // itemsize, dtype)
    start = ((16 - _address(buffer)) % ALIGNMENT) // itemsize
    out = buffer[start : start + size].reshape(shape)
    out[...] = rng.standard_normal(shape).astype(dtype)
    assert _address(out) % ALIGNMENT == 16
    return out


def rnn_loss(x, Wx, Wh, b):
    h = np.zeros((x.shape[1], Wh.shape[0]))
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ Wx + h @ Wh + b)
    return np.sum(h * h)


def rows_loss(W, h, n):
    for _ in range(n):
        h = np.tanh(W @ h) + h * 0.1
    return np.sum(h * h)


def row(x, i):
    return x[i] * 2.0


def test_large_misaligned_arrays_are_copied_aligned():
    x = _misaligned((50, 32, 32))
    assert x.nbytes >= ALIGNED_BYTES
    copy = aligned(x)
    assert copy is not x and _address(copy) % ALIGNMENT == 0 and copy.flags.c_contiguous
    assert copy.dtype == x.dtype and np.array_equal(copy, x)
    for dtype in ("float32", "int8", "complex128", "bool"):
        y = _misaligned((1100, 128), dtype)
        assert y.nbytes >= ALIGNED_BYTES
        out = aligned(y)
        assert _address(out) % ALIGNMENT == 0 and out.dtype == y.dtype
        assert np.array_equal(out, y)
    transposed = np.ascontiguousarray(rng.standard_normal((64, 512))).T
    out = aligned(transposed)
    assert out.flags.c_contiguous and np.array_equal(out, transposed)


def test_small_or_aligned_arrays_are_passed_as_they_are():
    small = _misaligned((8, 8))
    assert aligned(small) is small
    x = aligned(_misaligned((50, 32, 32)))
    assert aligned(x) is x


def test_gradient_with_large_misaligned_arguments():
    x, Wx = _misaligned((50, 32, 32)), _misaligned((32, 64))
    Wh, b = rng.standard_normal((64, 64)) / 8, rng.standard_normal(64) * 0.1
    before = x.copy()
    g = grad(rnn_loss, "Wx", "Wh", "b", backend="jax")
    expected = grad(rnn_loss, "Wx", "Wh", "b", backend="numpy")(x, Wx, Wh, b)
    for _ in range(3):  # traced, then the fast path
        out = g(x, Wx, Wh, b)
        for a, e in zip(out, expected):
            assert a.flags.writeable
            np.testing.assert_allclose(a, e, rtol=1e-9, atol=1e-12)
    executable = g.specialization(x, Wx, Wh, b).executable
    assert executable.jitted and executable.fast is not None
    assert np.array_equal(x, before)
    # A strided view (not C-contiguous) is copied too.
    xt = np.ascontiguousarray(np.transpose(x, (0, 2, 1))).transpose(0, 2, 1)
    assert not xt.flags.c_contiguous
    for a, e in zip(g(xt, Wx, Wh, b), out):
        np.testing.assert_array_equal(a, e)


def test_array_results_leave_the_fast_path_when_stacks_overflow():
    W, h = rng.standard_normal((8, 8)) / 4, rng.standard_normal(8)
    g = grad(rows_loss, "W", backend="jax")
    numpy = grad(rows_loss, "W", backend="numpy")
    for n in (3, 3, 100, 5, 100):
        np.testing.assert_allclose(g(W, h, n), numpy(W, h, n), rtol=1e-9, atol=1e-12)
    executable = g.specialization(W, h, 3).executable
    assert executable.fast is not None and executable.capacities == [64, 128]


def test_array_results_leave_the_fast_path_for_errors():
    f = myia(row, backend="jax")
    x = rng.standard_normal((4, 3))
    for _ in range(3):
        np.testing.assert_array_equal(f(x, 1), x[1] * 2.0)
    assert f.specialization(x, 1).executable.fast is not None
    with pytest.raises(IndexError):
        f(x, 7)
    np.testing.assert_array_equal(f(x, -1), x[-1] * 2.0)


def scaled(w, x):
    a = w * 2.0
    return a, x, a


def test_large_results_are_writable_and_their_own():
    # A large result is XLA's buffer handed over as a writable array (`jax_values.writable`):
    # writing it changes neither the arguments, nor another call's results.
    w, x = rng.standard_normal((300, 300)), rng.standard_normal((200, 100))
    f = myia(scaled, backend="jax")
    first = f(w, x)
    second = f(w, x)
    for a in (*first, *second):
        assert type(a) is np.ndarray and a.flags.writeable
    first[0][...] = 0.0
    first[1][0, 0] = 123.0
    np.testing.assert_array_equal(first[2], w * 2.0)  # the same value twice: two arrays
    np.testing.assert_array_equal(second[0], w * 2.0)
    assert second[1][0, 0] == x[0, 0] != 123.0
    np.testing.assert_array_equal(f(w, x)[0], w * 2.0)
    del f, second
    gc.collect()
    assert not first[0].any() and first[1][0, 0] == 123.0


def step_results(w, v, k, big):
    a = w * 2.0
    return (
        np.sum(a),  # a float64 scalar
        (a, v.astype(np.float32) + 1.0, v.astype(np.float32)),
        (k + 1, np.ones(3, dtype=np.int64) * k, k > 0),  # a Python int and bool, an int array
        big + 1.0,  # large: handed over apart
        v[::-1] * 3.0,
    )


@pytest.mark.parametrize("keep", [False, True])
def test_small_results_packed_by_dtype_come_back_as_their_own(keep):
    # The small results of a call come back in one result per dtype (`jax_values.Packing`),
    # where they come back to NumPy: the user gets the same values and kinds as on the
    # NumPy backend, each array writable, apart from the others and from later calls.
    w, v, big = rng.standard_normal((3, 4)), rng.standard_normal(5), rng.standard_normal(9000)
    f = myia(step_results, backend="jax", keep_on_device=keep)
    ref = myia(step_results, backend="numpy")
    first = f(w, v, 4, big)
    second = f(w, v, 4, big)
    expected = ref(w, v, 4, big)
    for got in (first, second):
        flat, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected)
        assert len(flat) == len(want)
        for x, y in zip(flat, want):
            np.testing.assert_allclose(np.asarray(x), y, rtol=1e-6)
            assert np.asarray(x).dtype == np.asarray(y).dtype and np.shape(x) == np.shape(y)
            if keep:  # scalars too: 0-d arrays, as JAX returns them
                assert isinstance(x, jax.Array)
            elif isinstance(y, np.ndarray):
                assert isinstance(x, np.ndarray)
            else:
                assert type(x) is type(y)
    ex = f.specialization(w, v, 4, big).executable
    assert ex.jitted, ex.reason
    packing = ex.packing
    if keep:
        assert packing is None
        return
    assert len(packing.groups) == 3  # float64, float32 and int64 arrays
    a, v32, v32b = first[1]
    for x in (a, v32, v32b, first[2][1], first[4]):
        assert x.flags.writeable
    a[...] = 0.0
    v32[...] = -7.0
    np.testing.assert_array_equal(first[4], v[::-1] * 3.0)
    np.testing.assert_array_equal(v32b, v.astype(np.float32))
    np.testing.assert_array_equal(second[1][0], w * 2.0)
    np.testing.assert_array_equal(f(w, v, 4, big)[1][1], v.astype(np.float32) + 1.0)
    assert not a.any() and (v32 == -7.0).all()


def weighted(params, x):
    (W, b), scale = params
    return np.sum(np.tanh(x @ W + b)) * scale


def test_misaligned_arguments_are_copied_into_copies_reused_from_call_to_call():
    # A call that waits for its results gives its aligned copies back (`Staging`): the next
    # call copies its own arguments into them, whatever their values.
    W, b = _misaligned((200, 200)), rng.standard_normal(200)
    f = myia(weighted, backend="jax")
    for _ in range(3):
        x = _misaligned((100, 200))
        got = f(((W, b), 2.0), x)
        assert got == pytest.approx(weighted(((W, b), 2.0), x), rel=1e-12)
    staging = f.specialization(((W, b), 2.0), x).executable.staging
    assert sum(len(s.free) for s in staging.values()) == 2  # W's and x's
    # Calls from several threads at once take different copies.
    xs = [_misaligned((100, 200)) for _ in range(4)]
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda x: f(((W, b), 2.0), x), xs * 5))
    for x, out in zip(xs * 5, outs):
        assert out == pytest.approx(weighted(((W, b), 2.0), x), rel=1e-12)
    # Results kept on the device are not waited for: their calls copy afresh.
    k = myia(weighted, backend="jax", keep_on_device=True)
    assert float(k(((W, b), 2.0), x)) == pytest.approx(weighted(((W, b), 2.0), x), rel=1e-12)
    assert not any(s.free for s in k.specialization(((W, b), 2.0), x).executable.staging.values())


def train(W, x, step):
    # A step whose scalar results (the loss, the step count) a training loop feeds back.
    loss = np.mean(np.tanh(x @ W) ** 2)
    return W - 0.1 * grad(lambda V: np.mean(np.tanh(x @ V) ** 2))(W), loss, step + 1


def count_down(x, n):
    s = x
    for _ in range(n):
        s = s * 1.5
    return s, n - 1, n > 1


def test_scalar_results_kept_on_the_device_and_taken_back_as_scalars():
    # With `keep_on_device=True`, scalar results are 0-d `jax.Array`s (the call does not
    # wait to read them back); fed back, each is the scalar of its dtype, as a NumPy
    # scalar is: one more signature than the Python scalar it replaces, then none.
    W, x = rng.standard_normal((4, 3)), rng.standard_normal((5, 4))
    f = myia(train, backend="jax", keep_on_device=True)
    ref = myia(train, backend="numpy")
    state, expected = (W, 0.0, 0), (W, 0.0, 0)
    for _ in range(4):
        state = f(state[0], x, state[2])
        expected = ref(expected[0], x, expected[2])
        assert all(isinstance(v, jax.Array) for v in state)
        assert state[1].shape == state[2].shape == ()
        np.testing.assert_allclose(np.asarray(state[0]), expected[0], rtol=1e-12)
        assert float(state[1]) == pytest.approx(expected[1], rel=1e-12)
        assert int(state[2]) == expected[2]
    assert state[2].dtype == np.int64 and state[1].dtype == np.float64
    assert len(f.compiled_signatures()) == 2  # the int 0, then int64 scalars
    g = myia(count_down, backend="jax", keep_on_device=True)
    s, n, more = g(2.0, 3)
    while more:  # a kept int is a loop's trip count, a kept bool a Python test
        s, n, more = g(s, n)
    assert float(s) == pytest.approx(2.0 * 1.5**6) and int(n) == 0
    assert g.specialization(s, n).executable.jitted
    # In a tuple, and into host code (NumPy scalars there; its results kept too).
    h = myia(weighted, backend="jax", keep_on_device=True)
    Wb = (jax.numpy.asarray(W[:, :3]), jax.numpy.asarray(np.ones(3)))  # float32 here
    got = h((Wb, jax.numpy.asarray(2.0)), x)
    assert isinstance(got, jax.Array) and got.shape == ()
    assert float(got) == pytest.approx(weighted(((W[:, :3], np.ones(3)), 2.0), x), rel=1e-5)
    p = myia(print_scaled, backend="jax", keep_on_device=True)
    got = p(jax.numpy.asarray(3.0))
    assert isinstance(got, jax.Array) and got.shape == () and float(got) == 6.0
    assert not p.specialization(jax.numpy.asarray(3.0)).executable.jitted


def squared_and_halved(n):
    return n * n, n // 2


def test_python_int_too_large_for_int64_kept_on_the_device_is_the_exact_int():
    # XLA flags the overflow and the host computes Python's exact int, which no jax.Array
    # holds: it comes back as that int (putting it on the device raised OverflowError).
    f = myia(squared_and_halved, backend="jax", keep_on_device=True)
    big, half = f(2**40)
    assert type(big) is int and big == 2**80
    assert isinstance(half, jax.Array) and int(half) == 2**39
    small, _ = f(3)
    assert isinstance(small, jax.Array) and int(small) == 9


def mod_loop(a, n):
    while n > 0:
        a = a % 7
        n = n - 1
    return a


def test_python_int_past_int64_after_small_ones_is_pythons():
    # Compiled for small ints, a call with an int past int64 raised JAX's OverflowError
    # (parsing the argument): it runs on the host, with Python's ints.
    f = myia(mod_loop, backend="jax")
    assert f(5, 3) == 5 and f(5, 3) == 5  # (the second call: the fast path)
    for a in (2**70, -(2**70), 2**63):
        assert f(a, 3) == mod_loop(a, 3)
    assert f(9, 2) == 2


def print_scaled(a):
    print(a)
    return a * 2.0


def doubled_dict(d):
    return {"w": d["w"] * 2.0, "n": np.sum(d["w"])}


def doubled_list(xs):
    return [x * 2.0 for x in xs]


def test_dicts_and_lists_of_results_kept_on_the_device_and_fed_back():
    # The host code computes them: they came back as NumPy arrays, and a dict or a list
    # holding jax.Arrays was refused as an argument ("no Myia type").
    f = myia(doubled_dict, backend="jax", keep_on_device=True)
    out = f({"w": np.ones(3)})
    assert isinstance(out["w"], jax.Array) and isinstance(out["n"], jax.Array)
    assert out["n"].shape == () and float(out["n"]) == 3.0
    np.testing.assert_allclose(f(out)["w"], np.full(3, 4.0))
    g = myia(doubled_list, backend="jax", keep_on_device=True)
    out = g([np.ones(3), np.zeros(3)])
    assert all(isinstance(x, jax.Array) for x in out)
    np.testing.assert_allclose(g(out)[0], np.full(3, 4.0))
    assert len(g.compiled_signatures()) == 1  # jax.Arrays or not: one signature

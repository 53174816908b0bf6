"""Arrays in native whole programs: loops over NumPy arrays, and their gradients, as one call.

A program whose functions take, compute and return float arrays (`myia.compile.native_arrays`)
is machine code whole: its loop stacks of arrays are typed lists, its constant arrays globals
of the module. Numba's ``tanh`` and matrix products round as NumPy's do not always: results
agree with the NumPy backend's to 1e-12 relative.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import own_cache_dir  # noqa: F401 (a fixture)

from myia import grad, myia
from myia.testing import check_grad

# Its tests share the module's disk cache of machine code: one xdist worker runs them all.
pytestmark = pytest.mark.xdist_group(__name__)

numba = pytest.importorskip("numba")


def rnn(h, W, b, n):
    for _ in range(n):
        h = np.tanh(W @ h + b)
    return np.sum(h)


def rnn_loss(h, W, b, n):
    s = 0.0
    for _ in range(n):
        h = np.tanh(W @ h + b)
        s = s + np.sum(h * h)
    return s


def halves(x, n):
    s = 0.0
    for i in range(n):
        y = np.concatenate((x[2:4], x[0:2])) * 0.5
        x = np.exp(-y) + x.reshape((2, 2)).T.reshape((4,)) * 0.25 + np.zeros(4)
        s = s + np.sum(x) * i
    return s


def cumulative(x, n):
    for _ in range(n):
        x = np.cumsum(x) * 0.1
    return np.sum(x)


def _same(got, want):
    assert type(got) is type(want)
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, np.ndarray):
        assert got.shape == want.shape and got.dtype == want.dtype
        assert got.flags.writeable
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    else:
        assert got == pytest.approx(want, rel=1e-12, abs=1e-14)


def _whole(f, args):
    ex = f.specialization(*args).executable
    assert ex.whole.fn is not None, ex.whole.reason
    return ex


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=4), rng.normal(size=(4, 4)) / 2, rng.normal(size=4) * 0.1


@pytest.mark.parametrize("n", [0, 1, 4])
def test_gradient_of_an_rnn_loop_is_one_native_call(n):
    h, W, b = _data()
    g = grad(rnn, "W", "b", backend="native", background=False)
    want = grad(rnn, "W", "b")(h, W, b, n)
    _same(g(h, W, b, n), want)
    ex = _whole(g, (h, W, b, n))
    assert "_List" in ex.whole.source  # the stack of the loop's arrays
    assert "cache=False" not in ex.whole.source  # no recursion: cached on disk
    # The host code is not called: a program whose host code fails shows it.
    ex.host.fn = None
    _same(g(h, W, b, n), want)


def test_rnn_gradients_agree_with_finite_differences(monkeypatch):
    # The machine code is made at the first call: the checker's calls run it.
    monkeypatch.setenv("MYIA_NATIVE_BACKGROUND", "0")
    # Every argument at once: the gradients with respect to some of them are compared with
    # the numpy backend's in `test_gradient_of_an_rnn_loop_is_one_native_call` (one native
    # compilation of a few seconds each).
    h, W, b = _data(1)
    check_grad(rnn_loss, h, W, b, 3, wrt=(0, 1, 2), backend="native")
    g = grad(rnn_loss, "h", "W", "b", backend="native", background=False)
    _same(g(h, W, b, 3), grad(rnn_loss, "h", "W", "b")(h, W, b, 3))
    _whole(g, (h, W, b, 3))


@pytest.mark.parametrize("n", [0, 3])
def test_slices_concatenate_reshape_and_zeros(n):
    x = np.array([0.3, -0.2, 0.7, 0.1])
    f = myia(halves, backend="native", background=False)
    _same(f(x, n), myia(halves)(x, n))
    g = grad(halves, "x", backend="native", background=False)
    _same(g(x, n), grad(halves, "x")(x, n))
    _whole(g, (x, n))
    check_grad(halves, x, n, wrt=0, backend="native")


def test_a_numpy_function_numba_does_not_take_runs_on_the_host():
    x = np.array([0.3, -0.2, 0.7, 0.1])
    g = grad(cumulative, "x", backend="native", background=False)
    _same(g(x, 3), grad(cumulative, "x")(x, 3))
    ex = g.specialization(x, 3).executable
    assert ex.whole.fn is None and "np.cumsum" in ex.whole.reason


def test_constant_arrays_are_in_the_source():
    h, W, b = _data()
    g = grad(rnn, "W", "b", backend="native", background=False)
    g(h, W, b, 2)
    source = _whole(g, (h, W, b, 2)).whole.source
    # The zero sensitivities of W and b: the source keys the disk cache.
    assert "ndarray = np.zeros((4, 4), dtype=np.float64)" in source


def test_arrays_of_another_layout_run_on_the_host_without_compiling():
    # A Fortran-ordered or read-only array is another Numba type: compiling for it in the
    # call would hold the call for seconds; the host code runs that call instead.
    h, W, b = _data()
    f = myia(rnn, backend="native", background=False)
    want = f(h, W, b, 3)
    ex = _whole(f, (h, W, b, 3))
    entry = getattr(ex.backend.load(ex.whole.source), ex.whole.entry)
    compiled = len(entry.overloads)
    read_only = W.copy()
    read_only.flags.writeable = False
    for other in (np.asfortranarray(W), read_only, W.T.T):
        assert f(h, other, b, 3) == pytest.approx(want, rel=1e-12)
    assert len(entry.overloads) == compiled


def test_large_arrays_stay_numpy_code():
    # NumPy's loops (SIMD tanh) beat Numba's on large arrays: such programs are not whole.
    rng = np.random.default_rng(2)
    h, W, b = rng.normal(size=64), rng.normal(size=(64, 64)) / 8, rng.normal(size=64)
    g = grad(rnn, "W", "b", backend="native", background=False)
    _same(g(h, W, b, 2), grad(rnn, "W", "b")(h, W, b, 2))
    ex = g.specialization(h, W, b, 2).executable
    assert ex.whole.fn is None and "arrays" in ex.whole.reason

"""The JAX backend's compilation in a thread (``background=True``, `jax_background`).

The first call of a program runs the host code, then a thread traces and compiles it with
XLA from a copy of that call's arguments; calls run the host code until it is done, and the
XLA computation after. The results are the same either way (to rounding), errors are
raised at the user's line either way, and a program JAX cannot take stays on the host with
the reason. The test suite runs the backend with ``background=False`` elsewhere
(``MYIA_JAX_BACKGROUND=0`` in conftest.py).
"""

from __future__ import annotations

import math
import threading
import traceback

import numpy as np
import pytest

from benchmarks.scalar_loop import scalar_loop
from myia import MyiaError, grad, myia
from myia.compile.jax_background import wait_all
from myia.testing import check_grad

jax = pytest.importorskip("jax")


def loss(W, x):
    return np.sum(np.tanh(x @ W) ** 2)


def step(W, x):
    return W - 0.1 * grad(loss)(W, x)


def newton(a):
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def checked_log(x, n):
    s = 0.0
    for i in range(n):
        s = s + math.log(x - i)
    return s


def executable(fn, *args):
    return fn.specialization(*args).executable


def test_first_call_runs_the_host_code_then_xla_computes():
    rng = np.random.default_rng(0)
    W, x = rng.normal(size=(4, 3)), rng.normal(size=(5, 4))
    f = myia(step, backend="jax", background=True)
    expected = myia(step, backend="numpy")(W, x)
    first = f(W, x)
    ex = executable(f, W, x)
    assert not ex.traced  # the host code computed it
    np.testing.assert_allclose(first, expected, rtol=1e-12)
    wait_all()
    second = f(W, x)
    assert ex.traced and ex.jitted and ex.pending is None
    np.testing.assert_allclose(second, expected, rtol=1e-12)
    assert f(W, x).dtype == np.float64


def test_loop_gradient_stacks_are_sized_by_the_thread_then_grow(monkeypatch):
    g = grad(scalar_loop, "x", backend="jax", background=True)
    reference = grad(scalar_loop, "x", backend="numpy")
    assert g(0.3, 100) == pytest.approx(reference(0.3, 100), rel=1e-12)
    wait_all()
    ex = executable(g, 0.3, 100)
    assert g(0.3, 100) == pytest.approx(reference(0.3, 100), rel=1e-12)
    assert ex.traced and ex.capacity >= 100
    # A longer loop than the first call's: stacks grown (traced again, in this thread).
    assert g(0.4, 3000) == pytest.approx(reference(0.4, 3000), rel=1e-12)
    assert ex.capacity >= 3000
    monkeypatch.setenv("MYIA_JAX_BACKGROUND", "1")  # the default outside the tests
    check_grad(scalar_loop, 0.3, 20, wrt="x", backend="jax")


def count_up(a):
    s = a[0]
    while s < 10.0:
        s = s + 1.0
    return s


def test_arrays_changed_after_the_first_call_are_not_read_by_the_thread():
    f = myia(count_up, backend="jax", background=True)
    a = np.zeros(2)
    assert f(a) == 10.0
    ex = executable(f, a)
    a[:] = -np.inf  # the user's next step, while the thread compiles: a loop without end
    ex.pending.thread.join(timeout=120)
    assert not ex.pending.thread.is_alive()
    a[:] = 0.5
    assert f(a) == 10.5
    assert ex.traced and ex.jitted


def test_programs_compiled_by_several_threads_at_once():
    fns = [grad(newton, backend="jax", background=True) for _ in range(3)]
    fns.append(grad(scalar_loop, "x", backend="jax", background=True))
    for g in fns[:3]:
        g(2.0)
    fns[3](0.3, 50)
    wait_all()
    for g in fns[:3]:
        assert g(2.0) == pytest.approx(0.5 / math.sqrt(2.0), rel=1e-9)
        assert executable(g, 2.0).traced
    assert fns[3](0.3, 50) == pytest.approx(grad(scalar_loop, "x")(0.3, 50), rel=1e-12)


def test_calls_from_several_threads_while_xla_compiles():
    g = grad(newton, backend="jax", background=True)
    g(2.0)  # Myia's stages (in one thread), and the thread compiling starts
    out, errors = [], []

    def work(a):
        try:
            for _ in range(20):
                out.append((a, g(a)))
        except Exception as exc:  # pragma: no cover - the failure the test looks for
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(a,)) for a in (2.0, 3.0, 5.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wait_all()
    assert not errors
    for a, v in out + [(7.0, g(7.0))]:
        assert v == pytest.approx(0.5 / math.sqrt(a), rel=1e-9)


def test_errors_are_raised_at_the_users_line_before_and_after():
    f = myia(checked_log, backend="jax", background=True)
    with pytest.raises(ValueError, match="math domain error") as info:
        f(2.0, 5)  # the first call, on the host: the thread starts all the same
    assert "math.log(x - i)" in "".join(traceback.format_exception(info.value))
    wait_all()
    assert f(10.0, 3) == pytest.approx(checked_log(10.0, 3), rel=1e-12)
    assert executable(f, 10.0, 3).traced
    with pytest.raises(ValueError, match="math domain error") as info:
        f(2.0, 5)  # flagged by XLA, raised by the host
    assert "math.log(x - i)" in "".join(traceback.format_exception(info.value))


def test_keep_on_device_results_are_jax_arrays_before_and_after():
    f = myia(loss, backend="jax", background=True, keep_on_device=True)
    W, x = np.ones((4, 3)), np.full((5, 4), 0.1)
    first = f(W, x)
    assert isinstance(first, jax.Array)
    wait_all()
    second = f(W, x)
    assert isinstance(second, jax.Array)
    assert float(second) == pytest.approx(float(first), rel=1e-12)


def test_a_program_jax_cannot_trace_stays_on_the_host_with_the_reason():
    f = myia(loss, backend="jax", background=True)
    W, x = np.ones((4, 3)), np.full((5, 4), 0.1)
    ex = executable(f, W, x)

    def refused(leaves):
        raise TypeError("not traceable")

    ex._run = refused
    first = f(W, x)
    wait_all()
    assert f(W, x) == pytest.approx(first, rel=1e-12)
    assert not ex.jitted and "not traceable" in ex.reason


def test_background_false_compiles_at_the_first_call():
    g = grad(newton, backend="jax", background=False)
    g(2.0)
    assert executable(g, 2.0).traced


def test_lowered_text_and_export_wait_for_the_thread():
    f = myia(newton, backend="jax", background=True)
    f(2.0)
    assert "stablehlo.while" in f.lowered_text(2.0)
    ex = executable(f, 2.0)
    assert ex.traced and ex.pending is None


def test_background_is_not_an_option_of_the_numpy_backend():
    with pytest.raises((ValueError, MyiaError)):
        myia(loss, backend="numpy", background=True)(np.ones((4, 3)), np.ones((5, 4)))


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_first_calls_from_several_threads_compile_once(backend):
    # Myia's stages share caches: first calls in several threads were internal errors.
    g = grad(newton, backend=backend)
    out, errors = [], []

    def work(a):
        try:
            out.append((a, g(a)))
        except Exception as exc:  # pragma: no cover - the failure the test looks for
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(a,)) for a in (2.0, 3.0, 5.0, 7.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(out) == 4 and len(g.compiled_signatures()) == 1
    for a, v in out:
        assert v == pytest.approx(0.5 / math.sqrt(a), rel=1e-9)


def model_step(params, x):
    W, b = params
    return W - 0.1 * grad(lambda W: np.sum(np.tanh(x @ W + b) ** 2))(W)


def test_a_model_kept_on_the_device_reaches_the_host_code_as_numpy_arrays():
    # Its host code computed with the jax.Arrays of the tuple: JAX's operations one by one,
    # each compiled (seconds on a GPU).
    f = myia(model_step, backend="jax", background=True, keep_on_device=True)
    params = (jax.numpy.ones((4, 3)), jax.numpy.zeros(3))
    x = jax.numpy.full((5, 4), 0.1)  # (beside the tuple: only it was made NumPy's)
    ex = executable(f, params, x)
    seen, host = [], ex.host

    def spy(args):
        seen.append(args)
        return host(args)

    ex.host = spy
    first = f(params, x)
    assert isinstance(first, jax.Array)
    assert seen and all(type(a) is np.ndarray for a in (*seen[0][0], seen[0][1]))
    wait_all()
    np.testing.assert_allclose(np.asarray(f(params, x)), np.asarray(first), rtol=1e-12)

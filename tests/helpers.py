"""Helpers for the language tests: run a function with Myia and with Python, compare."""

from __future__ import annotations

import dataclasses
import gc
import inspect
import math
import os
import threading
import time
import tracemalloc
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from myia import grad, myia
from myia.frontend import parse
from myia.primitives import KeywordArgument
from myia.vm import Closure, DebugVM

# Hypothesis profile for the language tests: modest example counts, no deadline (the
# interpreter parses a function on its first call).
examples = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

small_ints = st.integers(min_value=-20, max_value=20)
floats = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False, allow_infinity=False)
numbers = st.one_of(small_ints, floats)


def assert_same(got: Any, expected: Any, promote: bool = False) -> None:
    """Check that `got` equals `expected` in value *and* kind (int stays int, etc.).

    With `promote`, an int or bool may come back as a float of the same value: in typed code,
    a value that is an int on one path and a float on another is a float (NumPy's promotion),
    and so are the elements of a list holding ints and floats.
    """
    if promote and type(expected) in (int, bool) and type(got) is float:
        assert got == expected, f"{got!r} != {expected!r}"
        return
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f"{got!r} is not an array"
        assert got.shape == expected.shape, (got.shape, expected.shape)
        assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, equal_nan=True)
        return
    assert type(got) is type(expected), f"{got!r}: {type(got)} != {type(expected)}"
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected), (got, expected)
        for g, e in zip(got, expected):
            assert_same(g, e, promote)
    elif isinstance(expected, dict):
        assert list(got) == list(expected), (got, expected)
        for k in expected:
            assert_same(got[k], expected[k], promote)
    elif dataclasses.is_dataclass(expected):
        for f in dataclasses.fields(expected):
            assert_same(getattr(got, f.name), getattr(expected, f.name), promote)
    elif isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == expected, f"{got!r} != {expected!r}"


_vm = DebugVM()
_compiled: dict[Any, Any] = {}


def interpret(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run `fn` in the reference interpreter on its parsed graph (no type inference)."""
    call_args = [*args, *(KeywordArgument(k, v) for k, v in kwargs.items())]
    return _vm.call(Closure(parse(fn), None), call_args)


def compiled(fn: Any, backend: str = "numpy") -> Any:
    """``myia(fn, backend=...)``, made once per function so that its specializations are reused."""
    key = (fn, backend)
    if key not in _compiled:
        _compiled[key] = myia(fn, backend=backend)
    return _compiled[key]


def run_vm(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run `fn` with the frontend and the interpreter alone."""
    return interpret(fn, *args, **kwargs)


def run_myia(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run `fn` through the whole pipeline (``myia(fn)``: generated code)."""
    return compiled(fn)(*args, **kwargs)


def run_debug(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run `fn` through the whole pipeline on the reference interpreter's backend."""
    return compiled(fn, "debug")(*args, **kwargs)


def make_check(run: Any) -> Any:
    """Return ``check(fn, *args, **kwargs)``: compare ``run(fn, ...)`` with Python's ``fn(...)``.

    When Python raises, `run` must raise an exception of the same class and message.
    """

    def check(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            expected = fn(*args, **kwargs)
        except Exception as exc:
            try:
                run(fn, *args, **kwargs)
            except type(exc) as got:
                assert str(got) == str(exc)
                return got
            raise AssertionError(f"{run.__name__} did not raise {exc!r}") from None
        got = run(fn, *args, **kwargs)
        assert_same(got, expected, promote=run is not run_vm)
        return got

    return check


@pytest.fixture(params=["vm", "myia", "debug"])
def check(request: Any) -> Any:
    """Compare a function run by Myia with plain Python, in three modes.

    ``vm``: the frontend and the reference interpreter alone, on the parsed graph; ``myia``:
    the whole pipeline (inference, specialization, optimization) and the generated code of
    the default backend; ``debug``: the whole pipeline on the reference interpreter's
    backend. A test marked ``@pytest.mark.xfail_pipeline(reason)`` is expected to fail in the
    pipeline modes only; with ``run=False``, it is not even run there (it would take too long
    to fail).
    """
    if request.param in ("myia", "debug"):
        marker = request.node.get_closest_marker("xfail_pipeline")
        if marker is not None:
            reason = marker.args[0] if marker.args else marker.kwargs.get("reason", "")
            if not marker.kwargs.get("run", True):
                pytest.xfail(f"[NOTRUN] {reason}")
            request.applymarker(pytest.mark.xfail(reason=reason, strict=False))
        return make_check(run_myia if request.param == "myia" else run_debug)
    return make_check(run_vm)


def line_of(fn: Any, marker: str) -> int:
    """The line number, in `fn`'s file, of the first line of `fn`'s source containing `marker`."""
    lines, first = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if marker in line:
            return first + i
    raise AssertionError(f"marker {marker!r} not found in the source of {fn.__name__}")


def scalar_loop(x, n):
    """The ``scalar_loop`` workload of BENCHMARKS.md: a long chain of scalar operations."""
    y = x
    for _ in range(n):
        y = math.sin(y) * 0.5 + y * 0.5 + 0.1 * x
    return y


@pytest.fixture(autouse=True, scope="module")
def own_cache_dir(tmp_path_factory):
    """A disk cache of machine code of the test module's own (not the user's).

    Autouse in the modules that import it.
    """
    old = os.environ.get("MYIA_CACHE_DIR")
    os.environ["MYIA_CACHE_DIR"] = str(tmp_path_factory.mktemp("myia-cache"))
    yield
    if old is None:
        del os.environ["MYIA_CACHE_DIR"]
    else:
        os.environ["MYIA_CACHE_DIR"] = old


def time_ratio(fn: Any, large: tuple[Any, ...], small: tuple[Any, ...], rounds: int = 5) -> float:
    """The least time of ``fn(*large)`` over the least time of ``fn(*small)``, measured in
    turns (large, small, large...), so that a machine busy for a while slows both alike.

    The times are this thread's CPU time (`fn` runs in it: the NumPy and debug backends), which
    other processes on a loaded machine do not lengthen as they do the wall clock's.
    """
    best = {0: math.inf, 1: math.inf}
    for _ in range(rounds):
        for k, args in enumerate((large, small)):
            start = time.thread_time()
            fn(*args)
            best[k] = min(best[k], time.thread_time() - start)
    return best[0] / best[1]


# The collector's work of a call, apart from other threads' ------------------------------------
#
# The process of a test run has other threads: machine code that earlier tests' programs
# load or compile in the background (`myia.compile.native_backend`), JAX's. They allocate
# while a test watches the collector, and their objects may be in reference cycles: these
# helpers count only what the calls of the test do, in its thread.


def background_done() -> None:
    """Wait until the machine code that earlier programs compile in threads is ready."""
    from myia.compile.native_backend import wait_all

    wait_all()


def collector_passes(fn: Any, *args: Any) -> list[int]:
    """The generations of the collector's passes that started in this thread during
    ``fn(*args)`` (a pass runs in the thread whose allocation triggers it)."""
    me, seen = threading.get_ident(), []

    def spy(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and threading.get_ident() == me:
            seen.append(info["generation"])

    gc.callbacks.append(spy)
    try:
        fn(*args)
    finally:
        gc.callbacks.remove(spy)
    return seen


# The frame under which `cycles_made_by` runs the calls, of a file name of its own: an object
# whose allocation (tracemalloc's traceback) went through it was made by the calls.
_CALLS = "<cycles_made_by>"
_namespace: dict[str, Any] = {}
exec(compile("def run(calls):\n    calls()\n", _CALLS, "exec"), _namespace)
_run_calls = _namespace["run"]
_FRAMES = 500  # (deeper, a traceback is cut: such an object counts, whichever its thread)


def cycles_made_by(calls: Any) -> list[Any]:
    """The objects that ``calls()`` left in reference cycles, run with the collector paused.

    The collector's pass after the calls finds every unreachable cycle of the process; only
    the objects that the calls allocated (in this thread) are returned. (An object that
    CPython takes from a free list, a list or a tuple, keeps the traceback of its first
    allocation: a cycle of such objects alone may be missed; a closure's, of a function and
    a cell, is not.)
    """
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    tracing = tracemalloc.is_tracing()  # (as with PYTHONTRACEMALLOC: its frames then)
    if not tracing:
        tracemalloc.start(_FRAMES)
    try:
        _run_calls(calls)
        gc.set_debug(gc.DEBUG_SAVEALL)
        first = len(gc.garbage)
        gc.collect()
        found = gc.garbage[first:]
        del gc.garbage[first:]
        gc.set_debug(0)
        ours = []
        for o in found:
            tb = tracemalloc.get_object_traceback(o)
            if tb is not None and (
                (tb.total_nframe or 0) > len(tb) or any(f.filename == _CALLS for f in tb)
            ):
                ours.append(o)
    finally:
        gc.set_debug(0)
        if not tracing:
            tracemalloc.stop()
        if enabled:
            gc.enable()
    return ours


def rnn_gradient_as_numpy() -> tuple[Any, tuple[Any, ...]]:
    """`rnn`'s gradient on the jax backend, checked against the NumPy backend's.

    On a sequence of 9 steps, batch 4, 3 inputs, 5 hidden; returns the jax backend's
    gradient function and its arguments.
    """
    from benchmarks.rnn import rnn_loss

    rng = np.random.default_rng(0)
    x, Wx, Wh = (rng.normal(size=s) for s in ((9, 4, 3), (3, 5), (5, 5)))
    args = (x, Wx, Wh, np.linspace(-0.1, 0.1, 5))
    g = grad(rnn_loss, "Wx", "Wh", "b", backend="jax")
    want = grad(rnn_loss, "Wx", "Wh", "b", backend="numpy")(*args)
    for got, w in zip(g(*args), want):
        np.testing.assert_allclose(got, w, rtol=1e-12, atol=1e-12)
    return g, args

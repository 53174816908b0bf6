"""The pieces every workload shares: what an implementation is, timing, checks, failures.

A workload module (``scalar_loop.py``, ...) builds a `Problem` (its inputs, generated from a
fixed seed) and, for each framework, an `Impl`: a primal function, a gradient function, the
inputs converted for that framework, and how to read results back as NumPy arrays. The runner
(``run.py``) checks every implementation's results against the hand-written NumPy reference,
then times those that agree.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Every framework the suite knows, in table order. ``hand`` is plain Python/NumPy with
#: hand-written gradients (the floor); the others are imported only where installed.
FRAMEWORKS = ("myia", "torch", "jax", "autograd", "hand")

#: The module each framework needs (``None``: always there).
MODULES = {"myia": None, "torch": "torch", "jax": "jax", "autograd": "autograd", "hand": None}


def available(framework: str) -> bool:
    """Whether `framework` can be imported here (peers are an optional extra)."""
    module = MODULES[framework]
    return module is None or importlib.util.find_spec(module) is not None


@dataclass
class Options:
    """What the command line decides for every workload."""

    quick: bool = False
    backend: str | None = None  # None: Myia's default backend
    budget: float = 2.0  # seconds of timed calls per function (after warm-up)
    min_calls: int = 5  # timed samples at least, whatever the budget
    device: str | None = None  # "gpu": Myia and JAX on JAX's GPU, at the GPU sizes

    def myia_options(self) -> dict[str, Any]:
        """Keyword options for `myia`, `grad` and `value_and_grad`.

        On a device, Myia's arrays stay there between calls (``keep_on_device``), as JAX's do.
        """
        options: dict[str, Any] = {} if self.backend is None else {"backend": self.backend}
        if self.device is not None:
            options.update(device=self.device, keep_on_device=True)
        return options


@dataclass
class Problem:
    """One workload's inputs (a pool cycled through by successive calls) and tolerances."""

    name: str
    sizes: str  # the sizes, in words, for the table's title
    inputs: list[tuple]  # argument tuples in NumPy/Python form
    params: dict[str, Any] = field(default_factory=dict)  # sizes and constants, by name
    rtol: float = 1e-8  # relative error (max norm) allowed between frameworks
    check_count: int = 3  # inputs of the pool on which every framework is checked
    notes: list[str] = field(default_factory=list)  # lines printed under the table


@dataclass
class Impl:
    """One framework's version of a workload (a table row)."""

    label: str  # the row's name, e.g. "jax (jit)"
    framework: str
    primal: Callable[..., Any] | None  # None: the framework has no such function here
    grad: Callable[..., Any] | None
    inputs: list[tuple]  # the problem's inputs converted for this framework
    value: Callable[[Any], float]  # primal result -> float
    grads: Callable[[Any], list[np.ndarray]]  # gradient result -> NumPy arrays (fixed order)
    compilations: Callable[[], int] | None = None  # compilations of `grad` so far
    note: str = ""  # what this row measures, where it is not the obvious
    main: bool = True  # the framework's row in the summary (False: a variant)
    primal_failure: str | None = None  # why `primal` is None
    grad_failure: str | None = None  # why `grad` is None


def myia_impl(
    p: Problem,
    opts: Options,
    primal: Callable[..., Any],
    grads: Callable[[Any], list[np.ndarray]],
    wrt: Sequence[str] = (),
    step: Callable[..., Any] | None = None,
    note: str = "",
) -> list[Impl]:
    """Myia's row, compiled with the suite's options.

    The primal is `primal` compiled by `myia`; the gradient is ``grad(primal, *wrt)``, or
    `step` compiled by `myia` where the workload's function differentiates itself.
    """
    from myia import grad, myia

    options = opts.myia_options()
    g = myia(step, **options) if step is not None else grad(primal, *wrt, **options)
    f = myia(primal, **options)
    inputs = p.inputs
    if opts.device is not None:  # the inputs' arrays on the device once, results waited for
        from benchmarks.peers import jax_module, jax_ready

        jax = jax_module()
        device = jax.devices(opts.device)[0]
        inputs = [_map_arrays(lambda a: jax.device_put(a, device), args) for args in inputs]
        f, g_timed = jax_ready(f), jax_ready(g)
        g_timed.compiled_signatures = g.compiled_signatures  # type: ignore[attr-defined]
        g = g_timed
    return [
        Impl(
            "myia",
            "myia",
            f,
            g,
            inputs,
            float,
            grads,
            compilations=lambda: len(g.compiled_signatures()),
            note=note,
        )
    ]


def _map_arrays(fn: Callable[[np.ndarray], Any], value: Any) -> Any:
    """`value` with `fn` applied to the NumPy arrays in its tuples (other leaves as they are)."""
    if isinstance(value, np.ndarray):
        return fn(value)
    if type(value) is tuple:
        return tuple(_map_arrays(fn, v) for v in value)
    return value


@dataclass
class Row:
    """The measurements of one implementation (one row of a table)."""

    label: str
    framework: str
    note: str = ""
    main: bool = True
    primal: float | None = None  # median seconds per call
    grad: float | None = None
    primal_first: float | None = None  # seconds of the first call (compile included)
    grad_first: float | None = None
    # Where the backend compiles in a thread while the first calls run the host code (Myia's
    # jax and native backends): seconds from the first call until that code was ready.
    primal_ready: float | None = None
    grad_ready: float | None = None
    new_input_grad: float | None = None  # median first call of grad on a new pool input
    compilations: int | None = None
    error: float | None = None  # max relative error against the reference
    check: str = ""  # "ok", "reference", or why the check failed
    primal_failure: str | None = None
    grad_failure: str | None = None
    memory: dict[str, float] | None = None  # peak memory of grad (bytes, per iteration)
    calls: dict[str, int] = field(default_factory=dict)  # timed calls per function

    @property
    def ok(self) -> bool:
        return self.check in ("ok", "reference")


# Failures -------------------------------------------------------------------------------------


def _short(path: str) -> str:
    """`path` relative to the current directory where it is inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def describe_failure(exc: BaseException) -> str:
    """One line: the exception's type and first line, where it was raised, the user's line."""
    message = str(getattr(exc, "message", None) or exc).strip().splitlines()
    text = f"{type(exc).__name__}: {message[0] if message else ''}"
    inner = exc.__cause__ if exc.__cause__ is not None else exc
    tb = traceback.extract_tb(inner.__traceback__)
    where = []
    if tb:
        frame = tb[-1]
        where.append(f"raised at {_short(frame.filename)}:{frame.lineno}")
    location = getattr(exc, "location", None)
    if location is not None:
        where.append(f"user code {_short(location.filename)}:{location.line}")
    return text + (f" ({'; '.join(where)})" if where else "")


def attempt(fn: Callable[[], Any]) -> tuple[Any, float, str | None]:
    """Call `fn` once: (result, seconds, None), or (None, seconds, failure description)."""
    t0 = time.perf_counter()
    try:
        out = fn()
    except Exception as exc:  # every failure becomes a table cell, never a crash
        return None, time.perf_counter() - t0, describe_failure(exc)
    return out, time.perf_counter() - t0, None


# Checks ---------------------------------------------------------------------------------------


def relative_error(got: Sequence[Any], want: Sequence[Any]) -> float:
    """Return the largest, over the arrays, of max |got - want| / max |want| (max norms)."""
    if len(got) != len(want):
        return float("inf")
    worst = 0.0
    for g, w in zip(got, want):
        g = np.asarray(g, dtype=np.float64)
        w = np.asarray(w, dtype=np.float64)
        if g.shape != w.shape:
            return float("inf")
        scale = max(float(np.max(np.abs(w), initial=0.0)), 1e-300)
        err = float(np.max(np.abs(g - w), initial=0.0)) / scale
        if not np.isfinite(err):
            return float("inf")
        worst = max(worst, err)
    return worst


def directional_check(
    f: Callable[[list[np.ndarray]], float],
    grads: list[np.ndarray],
    point: list[np.ndarray],
    seed: int = 1,
    eps: float = 1e-6,
) -> float:
    """Relative error between <grads, v> and central differences of `f` along a random v."""
    rng = np.random.default_rng(seed)
    v = [rng.normal(size=np.shape(p)) for p in point]
    plus = [np.asarray(p, np.float64) + eps * d for p, d in zip(point, v)]
    minus = [np.asarray(p, np.float64) - eps * d for p, d in zip(point, v)]
    fd = (f(plus) - f(minus)) / (2 * eps)
    dot = sum(float(np.sum(np.asarray(g, np.float64) * d)) for g, d in zip(grads, v))
    return abs(fd - dot) / max(abs(dot), abs(fd), 1e-300)


# Timing ---------------------------------------------------------------------------------------


def time_calls(
    fn: Callable[..., Any], inputs: list[tuple], budget: float, min_samples: int
) -> tuple[float, int]:
    """Median seconds per call of `fn` over `inputs` (cycled), after warm-up.

    Calls shorter than a millisecond are timed in batches (the batch's time divided by its
    size) so that the clock's resolution does not matter. Returns (median, calls made).
    """
    return time_interleaved([(fn, inputs)], budget, min_samples)[0]


class _Timed:
    """The samples of one function timed by `time_interleaved`."""

    def __init__(self, fn: Callable[..., Any], inputs: list[tuple]):
        self.fn, self.inputs = fn, inputs
        # Warm-up: one call per input (every input has been seen once already by the checks).
        t0 = time.perf_counter()
        for args in inputs:
            fn(*args)
        per_call = (time.perf_counter() - t0) / len(inputs)
        self.batch = max(1, min(1000, int(1e-3 / max(per_call, 1e-9))))
        self.samples: list[float] = []
        self.calls = 0

    def sample(self, until: float) -> None:
        """Time batches of calls until the clock reads `until` (one batch at least)."""
        fn, inputs, n = self.fn, self.inputs, len(self.inputs)
        while True:
            t0 = time.perf_counter()
            for _ in range(self.batch):
                fn(*inputs[self.calls % n])
                self.calls += 1
            t1 = time.perf_counter()
            self.samples.append((t1 - t0) / self.batch)
            if t1 >= until or len(self.samples) >= 10_000:
                return


def time_interleaved(
    jobs: Sequence[tuple[Callable[..., Any], list[tuple]]],
    budget: float,
    min_samples: int,
    turn: float = 0.02,
) -> list[tuple[float, int]]:
    """`time_calls` of several functions in turns: (median, calls made) of each.

    Each function is timed for about `turn` seconds in its turn, round after round, until
    `budget` seconds per function are spent and each has `min_samples` samples. Every
    function is thus timed across the same span of time: on a shared machine whose speed
    drifts, their ratios hold even where their absolute times do not.
    """
    timed = [_Timed(fn, inputs) for fn, inputs in jobs]
    end = time.perf_counter() + budget * len(timed)
    while True:
        for t in timed:
            t.sample(time.perf_counter() + turn)
        enough = all(len(t.samples) >= min_samples for t in timed)
        if enough and time.perf_counter() >= end:
            break
        if all(len(t.samples) >= 10_000 for t in timed):
            break
    return [(statistics.median(t.samples), t.calls) for t in timed]


def format_time(seconds: float | None) -> str:
    """Format a duration with a unit, to three significant digits (``12.3 ms``)."""
    if seconds is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if seconds >= scale or unit == "ns":
            value = seconds / scale
            digits = 0 if value >= 100 else 1 if value >= 10 else 2
            return f"{value:.{digits}f} {unit}"
    return f"{seconds:.3g} s"


def format_bytes(n: float | None) -> str:
    """Format a size in B, kB, MB or GB (powers of 1000)."""
    if n is None:
        return "—"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def background_wait() -> bool:
    """Wait until the code Myia's backends compile in threads is ready; whether any was.

    The jax backend's XLA computations and the native backend's machine code are compiled
    in threads while the first calls run the host code; timed calls run the compiled code.
    """
    waited = False
    for name in ("myia.compile.jax_background", "myia.compile.native_backend"):
        module = sys.modules.get(name)
        if module is not None and module.wait_all():
            waited = True
    return waited

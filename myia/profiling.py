"""``myia.profile``: where a compiled program spends its time, per line of the user's source.

``profile(f)(*args)`` runs ``f`` (a function, or what `myia`, `grad` or `value_and_grad`
returned) once, as the NumPy backend's code generated with one line per user's line at most
(no expression of one line written inside another's), with a line tracer on that code, and
attributes the time of each generated line to the user's line it computes: the forward pass
and the gradient of a line (its backward pass) apart. The result is returned; the table is
printed (sorted by time) and kept as data (`Profile.rows`).

Only generated code is traced (Myia's own functions and the user's Python are not), and the
time between two line events is the line's: a NumPy call inside a line counts for that line.
The tracer costs about a microsecond per generated line executed: it inflates the lines of
scalar code (each a few hundred nanoseconds untraced) more than those of array code, so read
the table as a ranking, and `Profile.overhead` gives the measured factor.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .compile.backend import MODULES, PythonExecutable
from .compile.codegen import CodeGenerator
from .compile.runtime import _calls_to
from .vm.tracebacks import _GRADIENT, user_frames


@dataclass
class Row:
    """The time of one user's line, in one pass."""

    filename: str
    line: int
    function: str
    backward: bool
    seconds: float
    hits: int
    source: str


@dataclass
class Profile:
    """The result of `profile`: rows sorted by time, and the run's total."""

    rows: list[Row]
    total: float
    overhead: float

    def table(self) -> str:
        """The rows as a table, the most expensive first."""
        out = [f"{'time':>10} {'%':>6} {'hits':>8}  pass      line"]
        for r in self.rows:
            share = 100.0 * r.seconds / self.total if self.total else 0.0
            kind = "backward" if r.backward else "forward"
            where = f"{r.filename}:{r.line} ({r.function})"
            out.append(f"{r.seconds * 1e3:8.3f}ms {share:5.1f}% {r.hits:8d}  {kind:8}  {where}")
            if r.source:
                out.append(f"{'':37}{r.source}")
        traced = f"traced; about {self.overhead:.1f}x untraced"
        out.append(f"total {self.total * 1e3:.3f} ms ({traced})")
        return "\n".join(out)


class _Tracer:
    """Accumulates the time between line events of generated code, per generated line."""

    def __init__(self) -> None:
        self.times: dict[tuple[str, int], float] = {}
        self.hits: dict[tuple[str, int], int] = {}
        self.last: tuple[str, int] | None = None
        self.t = 0.0

    def global_trace(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "call" and frame.f_code.co_filename in MODULES:
            self.tick(None)
            return self.local_trace
        return None

    def local_trace(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            self.tick((frame.f_code.co_filename, frame.f_lineno))
        elif event == "return":
            self.tick(None)
        return self.local_trace

    def tick(self, where: tuple[str, int] | None) -> None:
        now = time.perf_counter()
        if self.last is not None:
            self.times[self.last] = self.times.get(self.last, 0.0) + now - self.t
        if where is not None:
            self.hits[where] = self.hits.get(where, 0) + 1
        self.last = where
        self.t = now


def _rows(tracer: _Tracer) -> list[Row]:
    merged: dict[tuple[str, int, str, bool], Row] = {}
    for (filename, lineno), seconds in tracer.times.items():
        module = MODULES.get(filename)
        node = module.nodes.get(lineno) if module is not None else None
        if node is None:
            continue  # a ``def`` or ``while`` line: its test counts with it
        frames = user_frames(_calls_to(node, module, None))
        if not frames or frames[-1].location is None:
            continue
        frame = frames[-1]
        loc = frame.location
        backward = frame.function.endswith(_GRADIENT)
        function = frame.function.removesuffix(_GRADIENT)
        key = (loc.filename, loc.line, function, backward)
        row = merged.get(key)
        if row is None:
            row = merged[key] = Row(
                loc.filename, loc.line, function, backward, 0.0, 0, loc.source_line()
            )
        row.seconds += seconds
        row.hits += tracer.hits.get((filename, lineno), 0)
    return sorted(merged.values(), key=lambda r: -r.seconds)


def profile(fn: Callable[..., Any], *, show: bool = True) -> Callable[..., Any]:
    """``profile(f)(*args)``: run ``f(*args)`` compiled, and report the time per user's line.

    `fn` is a function (compiled on the NumPy backend) or a function `myia`, `grad` or
    `value_and_grad` returned with the NumPy backend. The returned callable returns the
    result, prints the table unless `show` is false, and keeps the last `Profile` in its
    attribute ``last``.
    """
    from .api import MyiaFunction

    f = fn if isinstance(fn, MyiaFunction) else MyiaFunction(fn, backend="numpy")
    if f.backend.name != "numpy":
        raise ValueError("profile: the NumPy backend's generated code is what is profiled")

    def run(*args: Any) -> Any:
        # The program compiled with one generated line per user's line at most.
        graph = f.specialization(*args).graph
        program = PythonExecutable(CodeGenerator(graph, split_lines=True).generate())
        bound = f._arguments(args, {})
        untraced = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            program(bound)
            untraced = min(untraced, time.perf_counter() - start)
        tracer = _Tracer()
        old = sys.gettrace()
        sys.settrace(tracer.global_trace)
        start = time.perf_counter()
        try:
            result = program(bound)
        finally:
            sys.settrace(old)
        total = time.perf_counter() - start
        tracer.tick(None)
        run.last = Profile(_rows(tracer), total, total / untraced if untraced else 1.0)  # type: ignore[attr-defined]
        if show:
            print(run.last.table())  # type: ignore[attr-defined]
        return result

    run.last = None  # type: ignore[attr-defined]
    return run

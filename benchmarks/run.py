"""The runner: every workload, every installed framework, checks first, then timings.

``python -m benchmarks [--quick] [--backend NAME] [--only W,...] [--frameworks F,...]
[--json PATH] [--markdown PATH]``. See ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

from benchmarks import report
from benchmarks.harness import (
    FRAMEWORKS,
    Impl,
    Options,
    Problem,
    Row,
    attempt,
    available,
    background_wait,
    describe_failure,
    relative_error,
    time_calls,
    time_interleaved,
)
from benchmarks.threads import configured_threads

#: The workloads, in table order: (name, module, keyword arguments of its `problem`).
WORKLOADS = {
    "scalar_loop": ("benchmarks.scalar_loop", {}),
    "newton_sqrt": ("benchmarks.newton_sqrt", {}),
    "tree_rnn": ("benchmarks.tree_rnn", {}),
    "rnn": ("benchmarks.rnn", {}),
    "mlp_step_small": ("benchmarks.mlp_step", {"size": "small"}),
    "mlp_step_large": ("benchmarks.mlp_step", {"size": "large"}),
    "gp_nll": ("benchmarks.gp_nll", {}),
    "per_example_grads": ("benchmarks.per_example_grads", {}),
    "hvp": ("benchmarks.hvp", {}),
    "hessian_while": ("benchmarks.hessian_while", {}),
    "det": ("benchmarks.det", {}),
}

#: The frameworks whose memory is measured in a quick run, their main rows only (a child
#: process each: importing a peer, or Numba for the hand-written variants, takes seconds).
QUICK_MEMORY = ("myia", "hand")

#: Largest relative error allowed between the hand-written gradient and central differences.
FD_TOLERANCE = 1e-5


def _first_and_checked(
    fn: Any, inputs: list[tuple], count: int, convert: Any
) -> tuple[float | None, float | None, str | None, list]:
    """Call `fn` on the first `count` inputs.

    Return the first call's time, the time from it until the code compiled in the
    background was ready (None where none was), the failure, and the results.
    """
    results: list = []
    first = ready = None
    for i, args in enumerate(inputs[:count]):
        out, seconds, failure = attempt(lambda args=args: fn(*args))
        if failure is None:
            _, _, failure = attempt(lambda out=out: results.append(convert(out)))
        if failure is not None:
            return first, ready, failure, results
        if i == 0:
            first = seconds
            t0 = time.perf_counter()
            if background_wait():
                ready = seconds + time.perf_counter() - t0
    return first, ready, None, results


def run_impl(impl: Impl, problem: Problem) -> tuple[Row, list, list]:
    """First calls and the checked results of one implementation (no timing yet)."""
    row = Row(impl.label, impl.framework, impl.note, main=impl.main)
    row.primal_failure = impl.primal_failure
    row.grad_failure = impl.grad_failure
    count = min(problem.check_count, len(impl.inputs))
    values: list = []
    grads: list = []
    if impl.primal is not None:
        row.primal_first, row.primal_ready, row.primal_failure, values = _first_and_checked(
            impl.primal, impl.inputs, count, lambda out: [impl.value(out)]
        )
        if row.primal_failure:
            impl.primal = None
    if impl.grad is not None:
        row.grad_first, row.grad_ready, row.grad_failure, grads = _first_and_checked(
            impl.grad, impl.inputs, count, impl.grads
        )
        if row.grad_failure:
            impl.grad = None
    return row, values, grads


def check_rows(module: Any, problem: Problem, results: list[tuple[Row, list, list]]) -> None:
    """Set each row's `check`: its results against the hand-written reference's."""
    reference = next((r for r in results if r[0].framework == "hand"), None)
    if reference is None or (not reference[1] and not reference[2]):
        for row, _, _ in results:
            row.check = "no reference"
        return
    ref_row, ref_values, ref_grads = reference
    fd = module.reference_check(problem)
    ref_row.error = fd
    ref_row.check = (
        "reference"
        if fd < FD_TOLERANCE
        else f"wrong: hand gradient vs finite differences, rel err {fd:.1e}"
    )
    for row, values, grads in results:
        if row is ref_row:
            continue
        errors = [relative_error(v, w) for v, w in zip(values, ref_values)]
        errors += [relative_error(g, w) for g, w in zip(grads, ref_grads)]
        if not errors:
            row.check = "not run"
            continue
        row.error = max(errors)
        row.check = "ok" if row.error <= problem.rtol else f"wrong: rel err {row.error:.1e}"


def first_calls(impl: Impl, row: Row, problem: Problem) -> None:
    """The gradient's first calls on inputs of the pool it has not seen (new tree shapes)."""
    seen = min(problem.check_count, len(impl.inputs))
    if impl.grad is not None and problem.params.get("new_input_column"):
        firsts = []
        for args in impl.inputs[seen:]:
            _, seconds, failure = attempt(lambda args=args: impl.grad(*args))
            if failure:
                row.grad_failure = failure
                impl.grad = None
                break
            firsts.append(seconds)
        row.new_input_grad = statistics.median(firsts) if firsts else None


def time_impls(pairs: list[tuple[Impl, Row]], opts: Options) -> None:
    """Steady-state medians of every primal and gradient, timed in turns (after the checks).

    A function that fails while timed is timed again alone, so that its failure is its own.
    """
    background_wait()  # steady state: the code compiled in the background is in
    jobs = [(impl, row, kind) for impl, row in pairs for kind in ("primal", "grad")]
    jobs = [(impl, row, kind) for impl, row, kind in jobs if getattr(impl, kind) is not None]
    try:
        results = time_interleaved(
            [(getattr(impl, kind), impl.inputs) for impl, _, kind in jobs],
            opts.budget,
            opts.min_calls,
        )
    except Exception:
        results = []
        for impl, row, kind in jobs:
            try:
                results.append(
                    time_calls(getattr(impl, kind), impl.inputs, opts.budget, opts.min_calls)
                )
            except Exception as exc:
                setattr(row, f"{kind}_failure", describe_failure(exc))
                results.append((None, 0))
    for (_, row, kind), (median, calls) in zip(jobs, results):
        if median is not None:
            setattr(row, kind, median)
            row.calls[kind] = calls
    for impl, row in pairs:
        if impl.compilations is not None:
            try:
                row.compilations = impl.compilations()
            except Exception:
                row.compilations = None


def run_workload(
    name: str, opts: Options, frameworks: Sequence[str], memory: bool
) -> tuple[Problem, list[Row]]:
    """Build, check and time every framework's implementation of workload `name`."""
    module_name, kwargs = WORKLOADS[name]
    module = importlib.import_module(module_name)
    if opts.device == "gpu" and getattr(module, "GPU_SIZES", False):
        kwargs = {**kwargs, "gpu": True}
    problem = module.problem(opts.quick, **kwargs)
    results: list[tuple[Row, list, list]] = []
    impls: list[Impl | None] = []
    for fw in frameworks:
        built, _, failure = attempt(lambda fw=fw: module.BUILDERS[fw](problem, opts))
        if failure:
            row = Row(fw, fw, check="fails", primal_failure=failure, grad_failure=failure)
            results.append((row, [], []))
            impls.append(None)
            continue
        for impl in built:
            results.append(run_impl(impl, problem))
            impls.append(impl)
    check_rows(module, problem, results)
    timed = [(impl, row) for (row, _, _), impl in zip(results, impls) if impl and row.ok]
    for impl, row in timed:
        first_calls(impl, row, problem)
    time_impls(timed, opts)
    if memory and hasattr(module, "memory_problem"):
        from benchmarks.memory import measure_in_child

        for row, _, _ in results:
            if opts.quick and (row.framework not in QUICK_MEMORY or not row.main):
                continue
            if row.ok and row.grad is not None:
                row.memory = measure_in_child(name, row.label, row.framework, opts)
    return problem, [r for r, _, _ in results]


def header(opts: Options, argv: Sequence[str], frameworks: Sequence[str]) -> dict[str, Any]:
    """When, where and how the run was made."""
    import numpy

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    versions = {"python": platform.python_version(), "numpy": numpy.__version__}
    for fw, module in (("torch", "torch"), ("jax", "jax"), ("autograd", "autograd")):
        if fw in frameworks:
            try:
                versions[fw] = importlib.metadata.version(module)
            except importlib.metadata.PackageNotFoundError:
                versions[fw] = "?"
    missing = [fw for fw in FRAMEWORKS if fw not in frameworks and not available(fw)]
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            cwd=os.path.dirname(os.path.abspath(__file__)),
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "myia"],
            capture_output=True,
            text=True,
            timeout=10,
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        ).stdout.strip()
        if commit and dirty:
            commit += " (with uncommitted changes to myia/)"
    except (OSError, subprocess.SubprocessError):
        commit = ""
    from myia import myia

    backend = opts.backend or getattr(myia(lambda x: x), "backend", "default")
    backend = str(getattr(backend, "name", backend))
    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "machine": f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
        "versions": versions,
        "commit": commit,
        "backend": backend + ("" if opts.backend else " (the default)"),
        "threads": configured_threads(),
        "mode": ("quick" if opts.quick else "full")
        + (f", {device_name(opts.device)}" if opts.device else ""),
        "command": "python -m benchmarks" + "".join(f" {a}" for a in argv),
        "not_installed": missing,
        "frameworks": list(frameworks),
    }


def device_name(kind: str) -> str:
    """JAX's first device of `kind`, in words (on a GPU, the sizes are the GPU sizes)."""
    import jax

    device = jax.devices(kind)[0]
    sizes = ", GPU sizes" if kind == "gpu" else ""
    return f"on {getattr(device, 'device_kind', device)} (JAX {jax.__version__}){sizes}"


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Myia's benchmark suite: every workload of BENCHMARKS.md, for Myia and "
        "the peers that are installed, checked against each other, then timed.",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, few calls (CI)")
    parser.add_argument("--backend", help="Myia backend (default: Myia's default backend)")
    parser.add_argument(
        "--device",
        choices=("gpu", "cpu"),
        help="gpu: Myia (backend jax, arrays kept on the device) and JAX on JAX's GPU, at the "
        "GPU sizes (mlp_step batch 4096, rnn T = 1000); cpu: the same on JAX's CPU device, at "
        "the usual sizes",
    )
    parser.add_argument("--only", help="comma-separated workloads (default: all)")
    parser.add_argument("--frameworks", help="comma-separated frameworks (default: installed)")
    parser.add_argument("--budget", type=float, help="seconds of timed calls per function")
    parser.add_argument("--min-calls", type=int, help="timed samples per function, at least")
    parser.add_argument(
        "--threads", type=int, default=1, help="thread pool size of every framework (default 1)"
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the memory measures")
    parser.add_argument("--json", help="also write the results as JSON to this file")
    parser.add_argument("--markdown", help="also write the report to this Markdown file")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite, print the tables; 0 unless a framework computed a wrong result."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    opts = Options(quick=args.quick, backend=args.backend, device=args.device)
    if opts.device is not None:
        opts.backend = opts.backend or "jax"
        if opts.backend != "jax":
            print("--device needs Myia's jax backend")
            return 2
    opts.budget = args.budget if args.budget is not None else (0.05 if args.quick else 2.0)
    opts.min_calls = args.min_calls if args.min_calls is not None else (2 if args.quick else 5)
    workloads = args.only.split(",") if args.only else list(WORKLOADS)
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        print(f"unknown workload(s): {', '.join(unknown)}; choose among {', '.join(WORKLOADS)}")
        return 2
    default = ("myia", "jax", "hand") if opts.device else FRAMEWORKS  # peers on that device
    wanted = args.frameworks.split(",") if args.frameworks else list(default)
    unknown = [f for f in wanted if f not in FRAMEWORKS]
    if unknown:
        print(f"unknown framework(s): {', '.join(unknown)}; choose among {', '.join(FRAMEWORKS)}")
        return 2
    frameworks = [f for f in FRAMEWORKS if f in wanted and available(f)]
    if "hand" not in frameworks:
        frameworks.append("hand")  # the reference every check compares with
    start = time.perf_counter()
    info = header(opts, argv, frameworks)
    print(report.format_header(info), flush=True)
    sections = []
    for name in workloads:
        t0 = time.perf_counter()
        problem, rows = run_workload(name, opts, frameworks, memory=not args.no_memory)
        section = {"workload": name, "problem": problem, "rows": rows}
        sections.append(section)
        print(report.format_section(section), flush=True)
        print(f"({name}: {time.perf_counter() - t0:.1f} s)\n", flush=True)
    print(report.format_summary(sections, frameworks))
    info["duration_s"] = round(time.perf_counter() - start, 1)
    print(f"total: {info['duration_s']} s")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(report.format_markdown(info, sections, frameworks))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(to_json(info, sections), f, indent=1)
    wrong = [
        (s["workload"], r.label)
        for s in sections
        for r in s["rows"]
        if r.check.startswith("wrong")
    ]
    for workload, label in wrong:
        print(f"WRONG RESULT: {workload} / {label}")
    return 1 if wrong else 0


def to_json(info: dict[str, Any], sections: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the run as plain data."""
    return {
        "header": info,
        "workloads": [
            {
                "workload": s["workload"],
                "sizes": s["problem"].sizes,
                "notes": s["problem"].notes,
                "rows": [dataclasses.asdict(r) for r in s["rows"]],
            }
            for s in sections
        ],
    }

"""Time the gradients of several frameworks on one workload in turns, in one process.

``python -m benchmarks.interleaved WORKLOAD [FRAMEWORKS] [ROUNDS] [--backend NAME] [--cpu]``
(frameworks default to ``myia,hand``, rounds to 15, Myia's backend to its default): each round
times one batch of gradient calls of each framework in turn, cycling through the workload's inputs,
and the medians over the rounds are printed with their ratio to the first framework. On a shared
machine, drift (another process, the CPU's clock) affects every framework alike this way, where the
suite's run measures one framework after the other; the workloads whose time varies from run to run
(`mlp_step` large: BLAS-bound, a few calls per second) are compared so. One thread per framework,
as in the suite. ``--cpu`` times the process's CPU time (all its threads, XLA's included)
instead of the wall clock: on a machine where more processes run than it has cores, the wall
clock counts the time the process waited for a core.
"""

from __future__ import annotations

import importlib
import statistics
import sys
import time
from typing import Any

from benchmarks.threads import limit_threads


def interleaved(
    workload: str,
    frameworks: list[str],
    rounds: int = 15,
    backend: str | None = None,
    clock: Any = time.perf_counter,
) -> dict[str, float]:
    """Median seconds per gradient call of each framework, timed in turns."""
    from benchmarks.harness import Options, background_wait
    from benchmarks.run import WORKLOADS

    module_name, kwargs = WORKLOADS[workload]
    module = importlib.import_module(module_name)
    problem = module.problem(False, **kwargs)
    opts = Options(backend=backend)
    impls = [module.BUILDERS[fw](problem, opts)[0] for fw in frameworks]
    for impl in impls:  # warm-up: compilation and caches
        for args in impl.inputs:
            impl.grad(*args)
    background_wait()  # the code compiled in the background is in
    # Calls per batch: about 0.2 s of the slowest framework.
    t0 = time.perf_counter()
    impls[0].grad(*impls[0].inputs[0])
    per_batch = max(1, int(0.2 / max(time.perf_counter() - t0, 1e-7)))
    times: dict[str, list[float]] = {impl.label: [] for impl in impls}
    for _ in range(rounds):
        for impl in impls:
            inputs = impl.inputs
            t0 = clock()
            for k in range(per_batch):
                impl.grad(*inputs[k % len(inputs)])
            times[impl.label].append((clock() - t0) / per_batch)
    return {label: statistics.median(ts) for label, ts in times.items()}


def main(argv: list[str]) -> None:
    backend = None
    clock = time.perf_counter
    if "--cpu" in argv:
        clock = time.process_time
        argv = [a for a in argv if a != "--cpu"]
    if "--backend" in argv:
        i = argv.index("--backend")
        backend = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    workload = argv[0]
    frameworks = argv[1].split(",") if len(argv) > 1 else ["myia", "hand"]
    rounds = int(argv[2]) if len(argv) > 2 else 15
    limit_threads(["--threads", "1"])  # before NumPy or a peer is imported
    medians = interleaved(workload, frameworks, rounds, backend, clock)
    first = next(iter(medians.values()))
    for label, t in medians.items():
        print(f"{label:12s} {t * 1e6:10.2f} µs   {t / first:6.2f}x the first")


if __name__ == "__main__":
    main(sys.argv[1:])

"""Where a first call's time goes: parse, infer, specialize (with the gradient), optimize, emit.

Run: ``python benchmarks/compile_profile.py``. For the gradient of ``scalar_loop`` and for
``mlp_step`` (small), it prints the first call's time without a profiler, then the cumulative
time of each stage of `myia.api` ``compile`` under cProfile, as a share of the whole (the
profiler slows everything down alike). Specialization includes building, inferring and
specializing the gradient graph (``grad_call``); the inference row counts that inner
inference too.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

STAGES = [
    "infer/engine.py:infer",
    "infer/specialize.py:specialize",
    "infer/spec_grads.py:grad_call",
    "grad/api.py:build_grad_graph",
    "grad/activity.py:analyze",
    "opt/passes.py:optimize",
    "compile/codegen.py:generate",
]


def profile(name: str, make, args: tuple) -> None:
    """Print the stages of the first call of ``make()(*args)``."""
    t0 = time.perf_counter()
    make()(*args)
    plain = time.perf_counter() - t0
    pr = cProfile.Profile()
    fn = make()
    pr.enable()
    fn(*args)
    pr.disable()
    cumulative = {
        f"{file.split('/myia/')[-1]}:{func}": stats[3]
        for (file, _, func), stats in pstats.Stats(pr).stats.items()  # type: ignore[attr-defined]
    }
    total = cumulative["api.py:compile"]
    print(f"{name}: first call {plain * 1e3:.0f} ms")
    for stage in STAGES:
        if stage in cumulative:
            print(f"  {stage:34s} {cumulative[stage] / total * 100:5.1f}%")


def main() -> None:
    from benchmarks.mlp_step import mlp_step, problem
    from benchmarks.scalar_loop import scalar_loop
    from myia import grad, myia

    profile("grad(scalar_loop)", lambda: grad(scalar_loop, "x"), (0.3, 1000))
    profile("myia(mlp_step) small", lambda: myia(mlp_step), problem(False, "small").inputs[0])


if __name__ == "__main__":
    main()

"""The time of gradients with and without a million unrelated objects alive in the process.

Python's collector runs a pass over the youngest objects every 700 objects made that may hold
others (tuples, lists, dicts, functions, cells...) and not yet freed, and a pass over all of
them when enough have survived: the objects a gradient keeps for its backward pass (a
backpropagator closure per call of a recursion) trigger passes, and a full pass walks every
object alive in the process, other libraries' included. This script times two gradients that
keep many objects:

- ``det``: the gradient of `benchmarks.det` at ell = 6 (a recursion: about 1,900 calls);
- ``hessian``: the Hessian of `benchmarks.hessian_while` at 8 variables (a gradient of a
  gradient through value-dependent ``while`` loops),

with 10^6 lists alive (``[[i] for i in range(10**6)]``; a dict of numbers would not do: the
collector does not follow dicts holding only numbers and strings), hidden from the collector
or not (see `CASES`), in turns, and prints the mean times per call (every pass of the
collector included) and the collector's passes per call (generations 0, 1, 2).

With ``--cells``, closures keep their free variables in cells, as Myia's generated code did
before (`myia.compile.codegen.CodeGenerator.closure_defaults`): a closure is then 2 + (its
free variables) objects instead of 2.

Run: ``python benchmarks/gc_pressure.py [--cells] [ROUNDS]`` (default 7 rounds).
"""

from __future__ import annotations

import gc
import sys
import time

import numpy as np

from benchmarks.det import det
from benchmarks.hessian_while import f as hessian_f
from myia import grad, hessian
from myia.compile.codegen import CodeGenerator

#: "alone": the lists hidden from the collector; "crowded": shown to it again, as objects
#: another library just made (the collector has not counted them as old yet); "crowded,
#: settled": after a full pass, which counts them.
CASES = ("alone", "crowded", "crowded, settled")


def _programs() -> list[tuple[str, object, tuple]]:
    rng = np.random.default_rng(0)
    return [
        ("det (ell = 6)", grad(det), (rng.normal(size=(6, 6)),)),
        ("hessian_while (n = 8)", hessian(hessian_f), (rng.normal(size=8) * 2.0,)),
    ]


def _time(fn, args, budget: float) -> tuple[float, int, list[int]]:
    """Return the seconds and number of calls of `fn` in `budget` s, and the passes meanwhile."""
    before = [s["collections"] for s in gc.get_stats()]
    calls = 0
    t0 = time.perf_counter()
    end = t0 + budget
    while time.perf_counter() < end or calls < 3:
        fn(*args)
        calls += 1
    seconds = time.perf_counter() - t0
    after = [s["collections"] for s in gc.get_stats()]
    return seconds, calls, [b - a for a, b in zip(before, after)]


def main() -> None:
    argv = sys.argv[1:]
    if "--cells" in argv:
        argv.remove("--cells")
        CodeGenerator.closure_defaults = False
    rounds = int(argv[0]) if argv else 7
    programs = _programs()
    for _, fn, args in programs:
        fn(*args)  # compile
    junk = [[i] for i in range(10**6)]
    gc.collect()
    # (program, case) -> [seconds, calls, passes of generations 0, 1, 2]
    total: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for crowded in CASES:
            if crowded == "alone":
                gc.freeze()  # the lists are ignored by the collector
                gc.collect()
            else:
                gc.unfreeze()  # the collector walks the lists again
                if crowded == "crowded, settled":
                    gc.collect()  # its count of old objects includes them
            for name, fn, args in programs:
                seconds, calls, passes = _time(fn, args, 0.5)
                acc = total.setdefault((name, crowded), [0.0] * 5)
                for k, v in enumerate([seconds, calls, *passes]):
                    acc[k] += v
    gc.unfreeze()
    del junk
    mode = "parameter defaults" if getattr(CodeGenerator, "closure_defaults", False) else "cells"
    print(f"closures: {mode}; {rounds} rounds of 0.5 s per program and case, in turns")
    print("| program | " + " | ".join(CASES) + " | passes per call (gen. 0, 1, 2) |")
    print("| --- " * (len(CASES) + 2) + "|")
    for name, _, _ in programs:
        cells = []
        for case in CASES:
            t = total[(name, case)]
            cells.append(f"{t[0] / t[1] * 1e3:.2f} ms")
        passes = "; ".join(
            ", ".join(f"{x / total[(name, c)][1]:.2g}" for x in total[(name, c)][2:])
            for c in CASES
        )
        print(f"| {name} | {' | '.join(cells)} | {passes} |")


if __name__ == "__main__":
    main()

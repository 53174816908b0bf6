"""Memory and time of the gradient of a scalar ``while`` loop, per iteration.

Run: ``python benchmarks/grad_loop_memory.py [n ...]`` (default: 1000 10000). Peak memory is
measured with `tracemalloc`, which also slows the run down.
"""

from __future__ import annotations

import sys
import time
import tracemalloc

from myia import grad


def loop(x, n):
    i = 0
    while i < n:
        x = x * 0.999999 + 0.000001
        i = i + 1
    return x


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10000]
    g = grad(loop)
    g(1.0, 10)  # compile once
    for n in sizes:
        tracemalloc.start()
        t0 = time.perf_counter()
        g(1.0, n)
        dt = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"n={n:>8}  {dt:7.2f} s  peak {peak / 1e6:7.1f} MB  {peak / n:7.0f} B/iteration")


if __name__ == "__main__":
    main()

"""Memory and time of the gradient of a scalar ``while`` loop, per iteration.

Run: ``python benchmarks/grad_loop_memory.py [n ...]`` (default: 1000 10000). Peak memory is
measured with `tracemalloc`, which also slows the run down; the time is that of a second call,
untraced. Two versions: the loop as it is, and the loop run in chunks of `CHUNK` iterations,
each a call of a `myia.checkpoint`-ed function (the backward pass recomputes one chunk at a
time: the forward pass keeps one value per chunk).
"""

from __future__ import annotations

import sys
import time
import tracemalloc

from myia import checkpoint, grad

CHUNK = 1000


def loop(x, n):
    i = 0
    while i < n:
        x = x * 0.999999 + 0.000001
        i = i + 1
    return x


@checkpoint
def chunk(x, i, n, k):
    """At most `k` iterations of `loop`'s body, from iteration `i`."""
    j = 0
    while j < k and i < n:
        x = x * 0.999999 + 0.000001
        i = i + 1
        j = j + 1
    return x, i


def loop_checkpointed(x, n):
    i = 0
    while i < n:
        x, i = chunk(x, i, n, CHUNK)
    return x


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10000]
    for fn in (loop, loop_checkpointed):
        g = grad(fn)
        g(1.0, 10)  # compile once
        for n in sizes:
            tracemalloc.start()
            g(1.0, n)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            t0 = time.perf_counter()
            g(1.0, n)
            dt = time.perf_counter() - t0
            print(
                f"{fn.__name__:>17} n={n:>8}  {dt:7.2f} s  peak {peak / 1e6:7.3f} MB  "
                f"{peak / n:7.1f} B/iteration"
            )


if __name__ == "__main__":
    main()

"""Memory and time of the gradient of a scalar ``while`` loop, per iteration.

Run: ``python benchmarks/grad_loop_memory.py [n ...]`` (default: 1000 10000). Peak memory is
measured with `tracemalloc`, which also slows the run down; the time is that of a second call,
untraced. Three versions: the loop as it is; the loop rewritten by hand in chunks of `CHUNK`
iterations, each a call of a `myia.checkpoint`-ed function (the backward pass recomputes one
chunk at a time: the forward pass keeps one value per chunk); and the loop as it is, chunked
by ``checkpoint(loop, loops="sqrt")`` (chunks of 1, 2, 3... iterations: O(sqrt n) memory for
a trip count known only at run time). Each line gives the gradient's time and peak, and the
peak of the primal (the same function under `myia`), which the gradient's is compared with.
"""

from __future__ import annotations

import sys
import time
import tracemalloc

from myia import checkpoint, grad, myia

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


loop_chunked = checkpoint(loop, loops="sqrt")
loop_chunked.__name__ = "loop_chunked"


def _peak(fn, *args) -> int:
    tracemalloc.start()
    fn(*args)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10000]
    for fn in (loop, loop_checkpointed, loop_chunked):
        g, primal = grad(fn), myia(fn)
        g(1.0, 10)  # compile once
        primal(1.0, 10)
        for n in sizes:
            peak, primal_peak = _peak(g, 1.0, n), _peak(primal, 1.0, n)
            t0 = time.perf_counter()
            g(1.0, n)
            dt = time.perf_counter() - t0
            print(
                f"{fn.__name__:>17} n={n:>8}  {dt:7.2f} s  peak {peak / 1e6:7.3f} MB  "
                f"{peak / n:7.1f} B/iteration  (primal's peak {primal_peak / 1e6:.3f} MB)",
                flush=True,
            )


if __name__ == "__main__":
    main()

"""Where the time of a call of Myia's jax backend goes, beside JAX's own `jit` of the same step.

``python -m benchmarks.jax_overhead [--device gpu] [--size small|large] [--batch N]``: the
`mlp_step` workload's loss and step; per call, the minimum over repeats of: JAX's `jit`; Myia's
whole call; Myia's XLA computation called directly (with and without the backend's context);
and a cProfile of Myia's calls, to read the host's share.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from typing import Any

import numpy as np

from benchmarks import mlp_step
from benchmarks.peers import jax_module


def best(fn: Any, n: int = 200, repeats: int = 10) -> float:
    """Minimum over `repeats` of the mean time of `n` calls, in µs."""
    fn()
    out = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        out = min(out, (time.perf_counter() - t0) / n * 1e6)
    return round(out, 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--size", default="small")
    parser.add_argument("--batch", type=int, default=None)
    args = parser.parse_args()
    jax = jax_module()
    from myia import myia

    p = mlp_step.problem(False, args.size)
    params, x, y = p.inputs[0]
    if args.batch:
        rng = np.random.default_rng(0)
        x = rng.normal(size=(args.batch, x.shape[1])).astype(np.float32)
        y = np.eye(y.shape[1], dtype=np.float32)[rng.integers(0, y.shape[1], size=args.batch)]
    device = jax.devices(args.device)[0]
    put = lambda v: jax.tree_util.tree_map(lambda a: jax.device_put(a, device), v)  # noqa: E731
    jargs = (put(params), put(x), put(y))
    ready = jax.block_until_ready
    for name, fn in (("loss", mlp_step.mlp_loss), ("step", mlp_step.mlp_step)):
        m = myia(fn, backend="jax", device=args.device, keep_on_device=True)
        ready(m(*jargs))
        ex = m.specialization(*jargs).executable
        leaves = ex._leaves(jargs)

        def direct(ex: Any = ex, leaves: Any = leaves) -> None:
            with ex.backend.context():
                out = ex.fn(ex.capacity, *leaves)
            ready(out)

        def bare(ex: Any = ex, leaves: Any = leaves) -> None:
            ready(ex.fn(ex.capacity, *leaves))

        def whole(m: Any = m) -> None:
            ready(m(*jargs))

        def context(ex: Any = ex) -> None:
            with ex.backend.context():
                pass

        with ex.backend.context():
            compiled = ex.fn.lower(ex.capacity, *leaves).compile()

        def aot(compiled: Any = compiled, leaves: Any = leaves) -> None:
            ready(compiled(*leaves))

        row = {"myia call": best(whole), "myia XLA fn + context": best(direct)}
        row["AOT-compiled, no context"] = best(aot)
        with ex.backend.context():
            row["myia XLA fn, in context"] = best(bare)
        row["context alone"] = best(context)
        row["packed"] = ex.packed
        print(name, row, flush=True)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(200):
            whole()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    impl = mlp_step.build_jax(p, None)[0]
    jargs2 = (put(params), put(x), put(y))
    print(
        "jax loss",
        best(lambda: impl.primal(*jargs2)),
        "jax step",
        best(lambda: impl.grad(*jargs2)),
    )


if __name__ == "__main__":
    main()

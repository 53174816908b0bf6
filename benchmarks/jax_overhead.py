"""Where the time of a call of Myia's jax backend goes, beside JAX's own `jit` of the same step.

``python -m benchmarks.jax_overhead [--workload mlp_step|gp_nll|scalar_loop] [--device gpu]
[--size small|large] [--batch N] [--calls N]``: the workload's loss and step (`mlp_step`,
the default; the size and batch are its) or loss and gradient (`gp_nll`, `scalar_loop`:
its arguments, a Python float and int, passed as they are); per call, the
minimum over repeats (of N calls, 200 by default) of: JAX's `jit`; Myia's whole call;
Myia's XLA computation called directly (with and without the backend's context); and a
cProfile of Myia's calls, to read the host's share.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from typing import Any

import numpy as np

from benchmarks import gp_nll, mlp_step, scalar_loop
from benchmarks.harness import Options, background_wait
from benchmarks.peers import jax_module
from myia.api import array_key


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


def _workload(args: argparse.Namespace) -> tuple[Any, list[tuple[str, Any]], Any]:
    """The arguments, the (name, Myia function) pairs and JAX's `Impl` of ``--workload``."""
    from myia import grad, myia

    options = {"backend": "jax", "device": args.device, "keep_on_device": True}
    if args.workload == "scalar_loop":
        p = scalar_loop.problem(False)
        fns = [
            ("loss", myia(scalar_loop.scalar_loop, **options)),
            ("grad", grad(scalar_loop.scalar_loop, "x", **options)),
        ]
        return p.inputs[0], fns, scalar_loop.build_jax(p, Options())[0]
    if args.workload == "gp_nll":
        p = gp_nll.problem(False)
        fns = [
            ("loss", myia(gp_nll.gp_nll, **options)),
            ("grad", grad(gp_nll.gp_nll, "log_ls", "log_noise", **options)),
        ]
        return p.inputs[0], fns, gp_nll.build_jax(p, Options())[0]
    p = mlp_step.problem(False, args.size)
    params, x, y = p.inputs[0]
    if args.batch:
        rng = np.random.default_rng(0)
        x = rng.normal(size=(args.batch, x.shape[1])).astype(np.float32)
        y = np.eye(y.shape[1], dtype=np.float32)[rng.integers(0, y.shape[1], size=args.batch)]
    fns = [
        ("loss", myia(mlp_step.mlp_loss, **options)),
        ("step", myia(mlp_step.mlp_step, **options)),
    ]
    return (params, x, y), fns, mlp_step.build_jax(p, Options())[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--workload", default="mlp_step", choices=["mlp_step", "gp_nll", "scalar_loop"]
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--size", default="small")
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--calls", type=int, default=200, help="calls per timed repeat")
    args = parser.parse_args()
    calls = args.calls
    jax = jax_module()
    values, fns, impl = _workload(args)
    device = jax.devices(args.device)[0]
    put = lambda v: jax.tree_util.tree_map(lambda a: jax.device_put(a, device), v)  # noqa: E731
    scalars = args.workload == "scalar_loop"  # Python scalars, passed as they are
    jargs = values if scalars else tuple(put(v) for v in values)

    def ready(out: Any) -> Any:  # a Python float is computed already (see `jax_ready`)
        return out if type(out) is float else jax.block_until_ready(out)

    for name, m in fns:
        ready(m(*jargs))
        background_wait()  # XLA's computation compiled in a thread: the next call runs it
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

        def dispatch(m: Any = m) -> None:
            m(*jargs)

        row = {"myia call": best(whole, calls), "myia XLA fn + context": best(direct, calls)}
        row["myia call, not waited for (the host's time)"] = best(dispatch, calls)
        ready(m(*jargs))
        row["myia key"] = best(lambda: array_key(jargs), calls)
        row["AOT-compiled, no context"] = best(aot, calls)
        with ex.backend.context():
            row["myia XLA fn, in context"] = best(bare, calls)
        row["context alone"] = best(context, calls)
        row["packed"] = ex.packed
        print(name, row, flush=True)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(calls):
            whole()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    jargs2 = values if scalars else tuple(put(v) for v in values)
    print(
        "jax loss",
        best(lambda: impl.primal(*jargs2), calls),
        f"jax {fns[1][0]}",
        best(lambda: impl.grad(*jargs2), calls),
        f"jax {fns[1][0]}, not waited for",
        best(lambda: impl.grad.jitted(*jargs2), calls),
    )


if __name__ == "__main__":
    main()

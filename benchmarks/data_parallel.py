"""The ``mlp_step`` large step data-parallel on 1, 2 and 4 XLA host devices (batch 1024).

``python benchmarks/data_parallel.py [ROUNDS] [PASSES] [DEVICES...]`` runs, for each number
of devices (1, 2 and 4 by default), in turns, PASSES times (3), a fresh process whose JAX
has that many CPU devices (``XLA_FLAGS``); each compiles ``myia(mlp_step, backend="jax",
mesh=mesh, batch_argnums=(1, 2))`` (layers 784-1024-1024-10, float32, batch 1024), checks
its loss against the NumPy backend's, and times (medians of ROUNDS calls, 10):

- the call: NumPy parameters and batch in, NumPy results out;
- the call with ``keep_on_device=True``: the parameters stay on the devices between steps
  (the new parameters, ``jax.Array`` values, are the next call's), the batch comes from NumPy;
- XLA's computation alone: the arguments already placed on the devices, the results waited
  for (``block_until_ready``).

Host devices share the machine's cores: more of them split the work, not the cores, so no
speed-up is expected on a small machine; the figures show what partitioning and the
all-reduce cost.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BATCH = 1024
LAYERS = (784, 1024, 1024, 10)


def _inputs():
    rng = np.random.default_rng(0)
    params = tuple(
        (
            (rng.normal(size=(a, c)) / np.sqrt(a)).astype(np.float32),
            (rng.normal(size=c) * 0.1).astype(np.float32),
        )
        for a, c in zip(LAYERS, LAYERS[1:])
    )
    x = rng.normal(size=(BATCH, LAYERS[0])).astype(np.float32)
    y = np.eye(LAYERS[-1], dtype=np.float32)[rng.integers(0, LAYERS[-1], size=BATCH)]
    return params, x, y


def child(rounds: int) -> dict:
    """In a process with its devices: check, then time the step over all of them."""
    import jax
    from jax.sharding import Mesh

    from benchmarks.mlp_step import mlp_step
    from myia import myia

    mesh = Mesh(np.array(jax.devices()), ("data",))
    step = myia(mlp_step, backend="jax", mesh=mesh, batch_argnums=(1, 2))
    params, x, y = _inputs()
    loss, _ = step(params, x, y)
    expected, _ = myia(mlp_step, backend="numpy")(params, x, y)
    executable = step.specialization(params, x, y).executable
    assert executable.jitted, executable.reason
    calls = []
    for _ in range(rounds):
        start = time.perf_counter()
        step(params, x, y)
        calls.append(time.perf_counter() - start)
    kept = myia(mlp_step, backend="jax", mesh=mesh, batch_argnums=(1, 2), keep_on_device=True)
    on_device = kept(params, x, y)[1]
    kept_calls = []
    for _ in range(rounds):
        start = time.perf_counter()
        jax.block_until_ready(kept(on_device, x, y))
        kept_calls.append(time.perf_counter() - start)
    leaves = executable._leaves((params, x, y))
    xla = []
    with executable.backend.context():
        for _ in range(rounds):
            start = time.perf_counter()
            jax.block_until_ready(executable.fn(executable.capacity, *leaves))
            xla.append(time.perf_counter() - start)
    return {
        "devices": len(jax.devices()),
        "loss_error": abs(float(loss) - float(expected)) / abs(float(expected)),
        "all_reduce": "all-reduce" in executable.compiled_text((params, x, y)),
        "call": statistics.median(calls),
        "kept": statistics.median(kept_calls),
        "xla": statistics.median(xla),
    }


def run(devices: int, rounds: int) -> dict:
    """`child` in a fresh process with `devices` host devices."""
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    code = f"import json, benchmarks.data_parallel as d; print(json.dumps(d.child({rounds})))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
    )
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> None:
    rounds = int(argv[0]) if argv else 10
    passes = int(argv[1]) if len(argv) > 1 else 3
    counts = [int(a) for a in argv[2:]] or [1, 2, 4]
    print(f"mlp_step large, layers {'-'.join(map(str, LAYERS))}, float32, batch {BATCH}")
    print(f"medians of {rounds} calls; {passes} passes over the device counts in turns")
    results: dict[int, list[dict]] = {n: [] for n in counts}
    for _ in range(passes):  # in turns: the drift of a shared machine affects each alike
        for n in counts:
            r = run(n, rounds)
            assert r["loss_error"] < 1e-5, r
            results[n].append(r)
    print(
        "| host devices | per device | call (NumPy in and out) | call (parameters kept on the "
        "devices) | XLA computation | all-reduce |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for n, rs in results.items():
        call = [1e3 * r["call"] for r in rs]
        xla = [1e3 * r["xla"] for r in rs]
        kept = [1e3 * r["kept"] for r in rs]
        print(
            f"| {n} | {BATCH // n} rows | {statistics.median(call):.0f} ms "
            f"({min(call):.0f} to {max(call):.0f}) | {statistics.median(kept):.0f} ms "
            f"({min(kept):.0f} to {max(kept):.0f}) | {statistics.median(xla):.0f} ms "
            f"({min(xla):.0f} to {max(xla):.0f}) | {'yes' if rs[0]['all_reduce'] else 'no'} |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])

"""The first call of a program in a new process, with and without the disk cache.

Run: ``python -m benchmarks.disk_cache [ROUNDS] [WORKLOAD]`` from the repository root, with
WORKLOAD one of:

- ``mlp_step`` (the default): ``myia(mlp_step)`` (small) on the NumPy backend;
- ``scalar_loop_native``: ``grad(scalar_loop)`` (n = 1000) with ``backend="native"``, its
  machine code loaded or compiled by a thread while the first calls run the host code.

Each round starts three processes on a fresh cache directory: one with the cache off, one
that fills it (*cold*), one that loads the program from it (*warm*: Myia's graphs and the
machine code). Each times ``import myia``, its first call (compile and call; argument
building excluded), its second call and, for the native backend, the CPU time of the first
call's thread (which the machine's load does not inflate) and the time from the first call
until the machine code is ready (`myia.compile.native_backend.wait_all`). It prints the
median and the range of each. On a loaded machine, set ``OPENBLAS_NUM_THREADS=1`` (or
``OMP_NUM_THREADS=1``): NumPy's threads waiting for cores would dominate the step's time.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILDREN = {
    "mlp_step": """
import json, time
t = time.perf_counter()
import myia
imported = time.perf_counter() - t
from myia import disk_cache
from benchmarks.mlp_step import mlp_step, problem
args = problem(False).inputs[0]
f = myia.myia(mlp_step)
t0 = time.perf_counter()
f(*args)
t1 = time.perf_counter()
f(*args)
t2 = time.perf_counter()
print(json.dumps({"import": imported, "first": t1 - t0, "second": t2 - t1,
                  "hit": disk_cache.STATS["hit"]}))
""",
    "scalar_loop_native": """
import json, time
t = time.perf_counter()
import myia
imported = time.perf_counter() - t
from myia import disk_cache
from myia.compile.native_backend import wait_all
from benchmarks.scalar_loop import scalar_loop
g = myia.grad(scalar_loop, "x", backend="native")
c0 = time.thread_time()
t0 = time.perf_counter()
g(0.3, 1000)
t1 = time.perf_counter()
cpu = time.thread_time() - c0
g(0.3, 1000)
t2 = time.perf_counter()
wait_all()
t3 = time.perf_counter()
ex = g.specialization(0.3, 1000).executable
assert ex.whole.fn is not None, ex.whole.reason
print(json.dumps({"import": imported, "first": t1 - t0, "first_cpu": cpu, "second": t2 - t1,
                  "ready": t3 - t0, "hit": disk_cache.STATS["hit"]}))
""",
}


def child(workload: str, cache: str) -> dict:
    env = dict(os.environ, MYIA_CACHE_DIR=cache, MYIA_CACHE_PROGRAMS="1", PYTHONPATH=ROOT)
    out = subprocess.run(
        [sys.executable, "-c", CHILDREN[workload]],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _ms(values: list[float]) -> str:
    med = statistics.median(values) * 1e3
    return f"{med:7.1f} ms ({min(values) * 1e3:.1f}-{max(values) * 1e3:.1f})"


def main(rounds: int, workload: str) -> None:
    runs: dict[str, list[dict]] = {"cache off": [], "cold cache": [], "warm cache": []}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as d:
            runs["cache off"].append(child(workload, ""))
            runs["cold cache"].append(child(workload, d))
            warm = child(workload, d)
            assert warm["hit"] == 1, warm
            runs["warm cache"].append(warm)
    print(f"{workload}, a new process (median and range of {rounds}; load {os.getloadavg()}):")
    for name, rs in runs.items():
        line = f"  {name:10}  import myia {_ms([r['import'] for r in rs])}"
        line += f"   first call {_ms([r['first'] for r in rs])}"
        if "first_cpu" in rs[0]:
            line += f"   its CPU time {_ms([r['first_cpu'] for r in rs])}"
        line += f"   second {_ms([r['second'] for r in rs])}"
        if "ready" in rs[0]:
            line += f"   machine code ready {_ms([r['ready'] for r in rs])}"
        print(line)


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 5,
        sys.argv[2] if len(sys.argv) > 2 else "mlp_step",
    )

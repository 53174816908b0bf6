"""The first call of ``mlp_step`` (small) in a new process, with and without the disk cache.

Run: ``python -m benchmarks.disk_cache [ROUNDS]`` from the repository root. Each round starts
three processes on a fresh cache directory: one with the cache off, one that fills it, one
that loads the program from it; each times its first call of ``myia(mlp_step)`` (import and
argument building excluded) and its second call (the step alone). It prints the medians.
On a loaded machine, set ``OPENBLAS_NUM_THREADS=1`` (or ``OMP_NUM_THREADS=1``): NumPy's
threads waiting for cores would dominate the step's time.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = """
import json, time
import myia
from myia import disk_cache
from benchmarks.mlp_step import mlp_step, problem
args = problem(False).inputs[0]
f = myia.myia(mlp_step)
t0 = time.perf_counter()
f(*args)
t1 = time.perf_counter()
f(*args)
t2 = time.perf_counter()
print(json.dumps({"first": t1 - t0, "second": t2 - t1, "hit": disk_cache.STATS["hit"]}))
"""


def child(cache: str) -> dict:
    env = dict(os.environ, MYIA_CACHE_DIR=cache, MYIA_CACHE_PROGRAMS="1", PYTHONPATH=ROOT)
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, cwd=ROOT, capture_output=True, text=True
    )
    if out.returncode:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(rounds: int) -> None:
    runs: dict[str, list[dict]] = {"cache off": [], "cold cache": [], "warm cache": []}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as d:
            runs["cache off"].append(child(""))
            runs["cold cache"].append(child(d))
            warm = child(d)
            assert warm["hit"] == 1, warm
            runs["warm cache"].append(warm)
    print(f"mlp_step small, first call in a new process (median of {rounds}):")
    for name, rs in runs.items():
        first = statistics.median(r["first"] for r in rs)
        second = statistics.median(r["second"] for r in rs)
        print(f"  {name:10}  first call {first * 1e3:7.1f} ms   second {second * 1e3:6.2f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)

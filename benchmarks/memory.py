"""Peak memory of one gradient call, measured in a child process per framework.

``python -m benchmarks.memory WORKLOAD LABEL FRAMEWORK N [BACKEND]`` builds the framework's
implementation of the workload at size N, calls its gradient once (compilation, caches), then
measures the second call: the growth of the process's resident memory at its peak (Linux's
``VmHWM`` after resetting it through ``/proc/self/clear_refs``, above ``VmRSS`` just before the
call, freed memory first handed back with ``malloc_trim``). This counts every allocation (the
interpreter's, NumPy's, PyTorch's and XLA's alike). Where ``/proc`` cannot be used, Python's
``tracemalloc`` peak is reported instead (it misses allocations made outside Python's allocator).
Prints one line of JSON: ``{"peak": bytes, "per_iteration": bytes, "method": ...}``.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import json
import os
import subprocess
import sys
import tracemalloc
from typing import Any

from benchmarks.harness import Options


def _status(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    raise OSError(f"{key} not in /proc/self/status")


def peak_growth(fn: Any) -> tuple[int, str]:
    """Peak memory growth of calling `fn` (bytes) and how it was measured."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        base = _status("VmRSS:")
        fn()
        return _status("VmHWM:") - base, "peak RSS growth"
    except OSError:
        tracemalloc.start()
        fn()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return peak, "tracemalloc peak"


def measure(workload: str, label: str, framework: str, n: int, backend: str | None) -> dict:
    """Build `label`'s implementation of `workload` at size `n`, and measure its gradient."""
    from benchmarks.run import WORKLOADS

    module = importlib.import_module(WORKLOADS[workload][0])
    problem = module.memory_problem(n)
    impls = module.BUILDERS[framework](problem, Options(backend=backend))
    impl = next(i for i in impls if i.label == label)
    args = impl.inputs[0]
    impl.grad(*args)
    peak, method = peak_growth(lambda: impl.grad(*args))
    return {"peak": peak, "per_iteration": peak / n, "n": n, "method": method}


def measure_in_child(workload: str, label: str, framework: str, opts: Options) -> dict | None:
    """Run `measure` in a fresh Python process (``None`` if it failed)."""
    from benchmarks.run import WORKLOADS

    module = importlib.import_module(WORKLOADS[workload][0])
    n = module.memory_size(opts.quick)
    cmd = [sys.executable, "-m", "benchmarks.memory", workload, label, framework, str(n)]
    if opts.backend:
        cmd.append(opts.backend)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=root)
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError):
        return None


if __name__ == "__main__":
    workload, label, framework, size = sys.argv[1:5]
    backend = sys.argv[5] if len(sys.argv) > 5 else None
    print(json.dumps(measure(workload, label, framework, int(size), backend)))

"""The size of every framework's thread pool, set before NumPy or a peer is imported.

On a small machine shared with other work, multi-threaded pools make timings erratic (a
PyTorch pool spinning against OpenBLAS's can slow small operations a hundredfold), so the
suite runs every framework on one thread unless ``--threads N`` says otherwise. The variables
are inherited by the memory measure's child processes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

#: The variable that carries ``--threads`` to the code that imports the peers.
THREADS_VARIABLE = "MYIA_BENCH_THREADS"


def threads_argument(argv: Sequence[str]) -> int:
    """Return the value of ``--threads N`` or ``--threads=N`` in `argv` (default 1)."""
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if arg.startswith("--threads="):
            return int(arg.split("=", 1)[1])
    return 1


def limit_threads(argv: Sequence[str]) -> int:
    """Size the thread pools of NumPy's BLAS, PyTorch and XLA from `argv`; return the size."""
    n = threads_argument(argv)
    os.environ[THREADS_VARIABLE] = str(n)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    if n == 1:
        flags = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flags).strip()
    return n


def configured_threads() -> int | None:
    """Return the pool size set by `limit_threads` (``None``: the frameworks' defaults)."""
    value = os.environ.get(THREADS_VARIABLE)
    return int(value) if value else None

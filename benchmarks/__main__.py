"""``python -m benchmarks``: run Myia's benchmark suite (see ``benchmarks/README.md``).

The thread pools of every framework are sized here, before NumPy or a peer is imported:
``--threads N`` (default 1) sets OpenBLAS's, OpenMP's (PyTorch) and XLA's (JAX).
"""

import sys

from benchmarks.threads import limit_threads

if __name__ == "__main__":
    limit_threads(sys.argv[1:])

    from benchmarks.run import main

    sys.exit(main())

"""``python -m benchmarks``: run Myia's benchmark suite (see ``benchmarks/README.md``)."""

import sys

from benchmarks.run import main

if __name__ == "__main__":
    sys.exit(main())

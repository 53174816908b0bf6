"""Test configuration: every specialized graph is verified (structure and types).

Nothing is written to the user's cache: the native backend's modules go to a directory of
the tests, and compiled programs are not cached on disk (test_disk_cache.py turns that cache
on in directories of its own).

The tests run in parallel processes with pytest-xdist (``-n 2 --dist loadgroup``, as in the
README): each process has a cache directory of its own and BLAS on one thread, a test marked
``serial`` (it compares timings) runs while the other processes wait (`_SerialLock`), and
the tests of a module marked ``xdist_group`` (they share compiled programs) run in one process.
"""

import fcntl
import gc
import os
import tempfile
from pathlib import Path

import pytest

WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
os.environ["MYIA_CACHE_DIR"] = os.path.join(
    tempfile.gettempdir(), f"myia-tests-{os.getuid()}" + (f"-{WORKER}" if WORKER else "")
)
os.environ["MYIA_CACHE_PROGRAMS"] = "0"
# The JAX backend compiles a program at its first call, as with ``background=False``: its
# tests test XLA's computation (those of the compilation in a thread pass background=True).
os.environ.setdefault("MYIA_JAX_BACKGROUND", "0")
if WORKER:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core each (read by NumPy's import)

import myia.api  # noqa: E402

myia.api.VERIFY = True
# Verification after each optimizer pass (which names the pass that broke a graph) costs more
# than the compilation it checks: it runs in the tests of the optimizer, of the passes'
# whole pipeline on random programs, and of higher-order gradients (``MYIA_VERIFY_PASSES=1``:
# in every test). The others verify the program before and after the optimizer.
VERIFY_PASSES_ALWAYS = myia.api.VERIFY_PASSES
VERIFY_PASSES_IN = (
    "test_opt",
    "test_fuzz",
    "test_backend_differential",
    "test_grad_higher_order",
    "test_hiorder",
    "test_checkpoint",
)

# The `check` fixture of the language tests (run in the interpreter alone, then in the whole
# pipeline, and compare with Python): see tests/helpers.py.
from helpers import check  # noqa: E402, F401


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "serial: compares timings: runs while the other xdist workers wait"
    )
    # pytest-xdist's own (for runs without it): tests that share compiled programs.
    config.addinivalue_line("markers", "xdist_group(name): tests that one xdist worker runs")


class _SerialLock:
    """A lock shared by the workers of one run: each test holds it shared, a ``serial`` test
    holds it alone. The gate makes a waiting serial test go before the other workers' next
    tests (no starvation)."""

    def __init__(self, directory: Path):
        self.gate = open(directory / "serial.gate", "a")  # held for the run
        self.lock = open(directory / "serial.lock", "a")

    def acquire(self, serial: bool) -> None:
        fcntl.flock(self.gate, fcntl.LOCK_EX)
        fcntl.flock(self.lock, fcntl.LOCK_EX if serial else fcntl.LOCK_SH)
        if not serial:
            fcntl.flock(self.gate, fcntl.LOCK_UN)

    def release(self) -> None:
        fcntl.flock(self.lock, fcntl.LOCK_UN)
        fcntl.flock(self.gate, fcntl.LOCK_UN)


_LOCK: list[_SerialLock] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Under xdist, hold `_SerialLock` over a test's setup, call and teardown."""
    if not WORKER:
        return (yield)
    if not _LOCK:
        # The workers' base temporary directories are popen-gw0, popen-gw1... of the run's.
        _LOCK.append(_SerialLock(Path(item.config.option.basetemp).parent))
    _LOCK[0].acquire(item.get_closest_marker("serial") is not None)
    try:
        return (yield)
    finally:
        _LOCK[0].release()


def pytest_runtest_setup(item):
    module = getattr(item, "module", None)
    name = module.__name__.rpartition(".")[2] if module is not None else ""
    myia.api.VERIFY_PASSES = VERIFY_PASSES_ALWAYS or name.startswith(VERIFY_PASSES_IN)


def pytest_collection_finish(session):
    # What imports and the test modules made lives as long as the process (NumPy's, JAX's and
    # Myia's modules and registries, the tests' compiled functions): the collector's full
    # passes, which a long run of compilations triggers often, need not walk it again.
    if os.environ.get("MYIA_TEST_GC_FREEZE", "1") != "0":
        gc.collect()
        gc.freeze()

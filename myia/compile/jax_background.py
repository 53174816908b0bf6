"""XLA's compilation of a program in a thread while its calls run as host code.

With the JAX backend's ``background=True`` (the default), the first call of a program XLA
can take runs the host code (the NumPy backend's), then starts a thread (`Pending`) that
traces the program, has XLA compile it and runs it once, on a copy of that call's
arguments: what a first call does otherwise (it sizes the stacks of loop gradients and
checks the result dtypes). Calls run the host code until the thread is done; the next one
takes its outcome (`jax_backend.JaxExecutable`): the XLA computation from then on, or the
host code for the reason tracing gave. A first call then costs Myia's own stages and a run
of the host code, not XLA's compilation (seconds for a gradient through loops).

Tracing reads and writes the state of the trace under way (`jax_runtime.Trace`, the lags
of `jax_lags`): one program is traced at a time, in any thread (`TRACING`).
"""

from __future__ import annotations

import atexit
import threading
import time
from typing import Any

import numpy as np

#: Held while JAX traces a program (the trace's state is global): one trace at a time.
TRACING = threading.RLock()

#: The threads compiling programs (`Pending`), for `wait_all`.
_THREADS: list[threading.Thread] = []


def wait_all() -> bool:
    """Wait until every program being compiled in the background is compiled (or refused).

    The next call of each then runs its XLA computation (a benchmark's timed calls, a test
    of the computation itself). Return whether some was under way.
    """
    waited = bool(_THREADS)
    while _THREADS:
        _THREADS.pop().join()
    return waited


# A process that ends while XLA compiles in a thread waits for it: JAX's client torn down
# under a compilation can crash the interpreter's exit (seen on a GPU).
atexit.register(wait_all)


class Pending:
    """A program being traced and compiled by a thread, from the leaves of its first call.

    ``run(leaves)`` is the executable's first run (`jax_backend.JaxExecutable._run`); its
    outcome is `result` (the leaves of the results, and the error flag) or `error` (what
    tracing raised), once `done`.
    """

    def __init__(self, run: Any, leaves: list[Any]):
        # The user may change their arrays once the call has returned: the thread reads
        # copies.
        self.leaves = [np.array(x) if isinstance(x, np.ndarray) else x for x in leaves]
        self.run = run
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._work, name="myia-xla compile", daemon=True)
        _THREADS.append(self.thread)
        self.thread.start()

    def _work(self) -> None:
        # The caller goes on first: else it would wait for the interpreter until the
        # thread's first switch (5 ms) before leaving its call.
        time.sleep(0.002)
        try:
            self.result = self.run(self.leaves)
        except Exception as exc:  # the program runs on the host (the executable says why)
            self.error = exc
        self.leaves = []

    @property
    def done(self) -> bool:
        """Whether the thread has finished."""
        return not self.thread.is_alive()

    def wait(self) -> None:
        """Wait until the thread has finished."""
        self.thread.join()

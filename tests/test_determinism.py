"""Compiling a program gives the same code in every run.

The order in which Myia visits a function's options, a closure's free variables or a union's
types must not come from iterating a set (whose order follows ``PYTHONHASHSEED`` and the
addresses of objects): it would change the generated code, the specializations made first and
the first error reported. tests/determinism_child.py prints the generated code of a few such
programs; two processes with different hash seeds must print the same text.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD = Path(__file__).resolve().parent / "determinism_child.py"
TIMEOUT = 300  # seconds: a few compilations on a loaded 2-core machine


def _env(seed: int) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = str(seed)
    env["MYIA_CACHE_PROGRAMS"] = "0"  # compiled here, not loaded from the disk cache
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def test_generated_code_same_under_two_hash_seeds():
    procs = [
        subprocess.Popen(
            [sys.executable, str(CHILD)],
            env=_env(seed),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2)
    ]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=TIMEOUT)
        assert p.returncode == 0, err[-4000:]
        outs.append(out)
    assert outs[0].count("#####") == 4 and "def " in outs[0]
    assert outs[0] == outs[1]

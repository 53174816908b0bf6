"""Python's `ast.parse`, safe to call while other threads parse.

CPython 3.11 keeps the depth counter of its AST constructor in one place per interpreter: a
parse in another thread (the native backend compiles in the background, and Numba parses
code of its own) can change it in the middle of this one, which then fails with a spurious
``SystemError: AST constructor recursion depth mismatch`` (CPython issue 106905). Myia's own
parses take one lock; a parse that another library's disturbed is parsed again.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()

#: How many times a parse disturbed by another thread is tried again.
RETRIES = 8


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, never failing for another thread's parse."""
    for _ in range(RETRIES):
        try:
            with _LOCK:
                return ast.parse(source, filename)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc):
                raise
    with _LOCK:
        return ast.parse(source, filename)

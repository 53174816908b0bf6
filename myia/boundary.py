"""The boundary where Myia's errors reach the user, with no frames from inside Myia.

A `MyiaError` for a user mistake already carries its own traceback of the user's program
(`MyiaError.frames`); the Python frames of the compiler under it only hide it. `boundary`
wraps an entry point (``myia``, ``grad``, a compiled function's call) so that such an error
is re-raised with its Python traceback cut at the call and its cause and context dropped;
so is an exception that the user's program raised at run time (a division by zero, its own
``raise``), which carries the Myia traceback of the user's frames (`errors.program_error`).
The wrapper is compiled under the file name ``<myia>``, so that the one frame it adds
names no file of the package. An internal error (`MyiaInternalError`) keeps its cause: that
traceback is what a bug report needs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .errors import MyiaError, MyiaInternalError, is_program_error

F = TypeVar("F", bound=Callable[..., Any])
E = TypeVar("E", bound=BaseException)

_SOURCE = """
def myia_entry(*args, **kwargs):
    try:
        return call(*args, **kwargs)
    except MyiaError as exc:
        raise trimmed(exc)
    except BaseException as exc:
        if is_program_error(exc):
            raise trimmed(exc)
        raise
"""


#: `boundary` of a compiled function's call, with its fast path: where the types of the
#: arguments are those of the last call that found a direct function (`MyiaFunction._direct`:
#: the machine code of the whole program, `myia.compile.backend.Executable.direct`), that
#: function runs on them with no other layer; an error it raises runs the call again as
#: usual, which reports it at the user's line.
_CALL_SOURCE = """
def myia_entry(self, *args, **kwargs):
    direct = self._direct
    if direct is not None and not kwargs:
        n = len(args)
        if n == 1:
            hit = direct[0] == (type(args[0]),)
        elif n == 2:
            hit = direct[0] == (type(args[0]), type(args[1]))
        else:
            hit = direct[0] == tuple(map(type, args))
        if hit:
            try:
                return direct[1](*args)
            except Exception:
                pass
    try:
        return call(self, *args, **kwargs)
    except MyiaError as exc:
        raise trimmed(exc)
    except BaseException as exc:
        if is_program_error(exc):
            raise trimmed(exc)
        raise
"""


def trimmed(exc: E) -> E:
    """`exc` with no Python traceback, and no cause or context unless it is internal."""
    exc.__traceback__ = None
    if not isinstance(exc, MyiaInternalError):
        exc.__cause__ = None
        exc.__suppress_context__ = True
    return exc


def boundary(fn: F, source: str = _SOURCE) -> F:
    """`fn` as an entry point: a `MyiaError` it raises reaches the caller trimmed."""
    namespace = {
        "call": fn,
        "MyiaError": MyiaError,
        "trimmed": trimmed,
        "is_program_error": is_program_error,
    }
    exec(compile(source, "<myia>", "exec"), namespace)
    return functools.wraps(fn)(namespace["myia_entry"])  # type: ignore[return-value]


def boundary_call(fn: F) -> F:
    """`boundary` of the method ``__call__`` of `myia.api.MyiaFunction`, with its fast path."""
    return boundary(fn, _CALL_SOURCE)

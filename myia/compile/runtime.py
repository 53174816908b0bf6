"""What generated code needs at run time, and the errors it raises, mapped to the user's source.

A Python exception raised inside generated code is turned into what the reference interpreter
raises for it (`myia.vm.debug_vm`): an exception the program raised (``raise``, ``assert``)
or a run-time error (division by zero, an index out of range) propagates as itself with the
Myia traceback as a note; a `TypeError` is a `MyiaTypeError`, a `ValueError` on arrays a
`MyiaShapeError`. The traceback is read off the generated frames: each generated line knows
the node it computes, and each node where it came from in the user's source.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from ..abstract.data import AbstractArray
from ..errors import Frame as ErrorFrame
from ..errors import MyiaError, MyiaInternalError, MyiaShapeError, MyiaTypeError
from ..ir.node import Node
from ..vm.debug_vm import RECURSION_LIMIT, _format_traceback, _in_package


def dead(*args: Any) -> Any:
    """Stands for a branch that type inference proved is never taken."""
    raise MyiaInternalError("a branch proved unreachable was taken")


def _user_frames(
    tb: types.TracebackType | None, modules: dict[str, Any]
) -> list[tuple[Node, str]]:
    """The nodes of generated code on traceback `tb`, outermost first, with their function."""
    out = []
    while tb is not None:
        code = tb.tb_frame.f_code
        module = modules.get(code.co_filename)
        if module is not None:
            node = module.nodes.get(tb.tb_lineno)
            if node is not None:
                out.append((node, code.co_name))
        tb = tb.tb_next
    return out


def error_frames(tb: types.TracebackType | None, modules: dict[str, Any]) -> list[ErrorFrame]:
    """The user's frames of a traceback through generated code, from the entry point down."""
    frames: list[ErrorFrame] = []
    sites = _user_frames(tb, modules)
    user = [
        (n, f)
        for n, f in sites
        if (loc := n.debug.find_location()) is not None and not _in_package(loc.filename)
    ]
    for node, _ in user or sites:
        g = node.graph
        name = g.name.split(":")[0] if g is not None else "?"
        name = name.lstrip("▶◀")
        new = ErrorFrame(name, node.debug.find_location())
        if frames and frames[-1].function == name:
            frames[-1] = new
        else:
            frames.append(new)
    return frames


#: The messages of the `ValueError`s that Python's scalar functions raise (``math.sqrt(-1)``).
_SCALAR_VALUE_ERRORS = frozenset(["math domain error", "math range error"])


def translate_error(exc: Exception, modules: dict[str, Any]) -> Exception:
    """The exception to raise for `exc`, raised by generated code (see the module docstring)."""
    if isinstance(exc, MyiaError):
        return exc
    sites = _user_frames(exc.__traceback__, modules)
    frames = error_frames(exc.__traceback__, modules)
    last = sites[-1][0] if sites else None
    fn = last.inputs[0] if last is not None and last.is_apply else None
    effect = fn is not None and fn.is_constant and getattr(fn.value, "effect", False)
    if not effect and isinstance(exc, (TypeError, AttributeError)):
        return MyiaTypeError(f"{type(exc).__name__}: {exc}", frames)
    if not effect and isinstance(exc, ValueError) and last is not None and last.is_apply:
        # A line may inline scalar calls (``v * math.sqrt(s)``): their errors stay themselves.
        scalar_error = str(exc) in _SCALAR_VALUE_ERRORS
        if not scalar_error and any(
            isinstance(i.abstract, AbstractArray) for i in last.inputs[1:]
        ):
            return MyiaShapeError(f"{type(exc).__name__}: {exc}", frames)
    exc.add_note(_format_traceback(frames))
    return exc


class DeepRecursion:
    """A context in which generated code may recurse `RECURSION_LIMIT` deep.

    Python 3.11 runs a call from Python code to a Python function without growing the C
    stack, so only the interpreter's recursion limit bounds non-tail recursion; it is raised
    while generated code that may recurse runs, and put back afterwards.
    """

    LIMIT = RECURSION_LIMIT

    def __enter__(self) -> None:
        self.old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(self.old, self.LIMIT))

    def __exit__(self, *exc: Any) -> None:
        sys.setrecursionlimit(self.old)

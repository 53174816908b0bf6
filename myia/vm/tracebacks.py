"""Tracebacks of run-time errors: the user's frames, Myia's recursion limit, and their text.

Shared by the reference interpreter, the stepping debugger and the compiled backends'
runtime, so that a run-time error reads the same wherever the program runs.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from ..errors import Frame as ErrorFrame
from ..errors import MyiaRecursionError
from ..frontend.blocks import Unbound
from ..ir.node import Location

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@functools.lru_cache(maxsize=1024)
def _in_package(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep)


#: How many calls of each end of a very deep traceback are shown.
_KEPT = 1000


def _unbound_error(value: Unbound) -> UnboundLocalError:
    """Python's error for reading a local variable before any assignment."""
    return UnboundLocalError(
        f"cannot access local variable {value.name!r} where it is not associated with a value"
    )


#: The deepest recursion a program may reach (calls not in tail position being evaluated at
#: once), on every backend: far deeper than Python's default of 1000, so that a recursion
#: over a long list or a deep tree runs, yet a recursion with no base case stops within a
#: second with `RecursionError`, as in Python.
RECURSION_LIMIT = 200_000


#: Words of the messages of NumPy's `ValueError`s about shapes ("operands could not be
#: broadcast together with shapes...", "cannot reshape array of size 6 into shape (4,)").
_SHAPE_WORDS = ("shape", "broadcast", "dimension", "axis", "axes", "size", "aligned", "operand")


def is_shape_error(exc: BaseException) -> bool:
    """Whether `exc`, a `ValueError` raised by an operation on arrays, is about their shapes.

    Those are `MyiaShapeError`s (inference reports them before running where shapes are
    known); a `ValueError` about the values (``np.power`` of integers to a negative power,
    ``np.linalg.LinAlgError: Singular matrix``) is a run-time error of the program, raised
    as itself, as NumPy does.
    """
    message = str(exc).lower()
    return isinstance(exc, ValueError) and any(w in message for w in _SHAPE_WORDS)


def recursion_error(exc: RecursionError, frames: list[ErrorFrame]) -> MyiaRecursionError:
    """The `MyiaRecursionError` of a recursion that went past `RECURSION_LIMIT` levels."""
    hint = f"(Myia's limit is {RECURSION_LIMIT} levels: does the recursion reach its base case?)"
    return MyiaRecursionError(str(exc), frames[-_SHOWN:], f"{_format_traceback(frames)}\n{hint}")


def _format_traceback(frames: list[ErrorFrame]) -> str:
    """The Myia traceback of `frames`; a frame repeated in a row is shown once, as Python does.

    Of a longer list of frames than ``2 * _SHOWN`` (a deep mutual recursion), the first and
    the last `_SHOWN` are shown.
    """
    lines: list[str] = []
    last, repeats = None, 0
    texts: dict[tuple[Any, ...], str] = {}  # a deep recursion repeats a few frames
    for f in frames:
        key = (f.function, f.location, f.detail)
        text = texts.get(key)
        if text is None:
            text = texts[key] = f.format()
        if text == last:
            repeats += 1
            continue
        if repeats:
            lines.append(f"  [Previous frame repeated {repeats} more times]")
        last, repeats = text, 0
        lines.append(text)
    if repeats:
        lines.append(f"  [Previous frame repeated {repeats} more times]")
    if len(lines) > 2 * _SHOWN:  # a mutual recursion: its first and last frames
        lines = [*lines[:_SHOWN], f"  [{len(lines) - 2 * _SHOWN} more frames]", *lines[-_SHOWN:]]
    return "Myia traceback (most recent call last):\n" + "\n".join(lines)


_SHOWN = 10


def user_frames(calls: list[tuple[str, Location | None]]) -> list[ErrorFrame]:
    """The frames of a run-time error's traceback, from ``(graph name, location)`` pairs.

    The pairs are the calls from the entry point down to the failing node, with the calls
    that inlining made part of one graph (`DebugInfo.call_chain`). Frames in Myia's library
    code are left out (unless the program itself is library code, which has no others); the
    blocks of one function (its branches and loops) are one frame; a frame of a backward
    pass (the graph ``◀f``) says that it is in the gradient of its line.
    """
    user = [(n, loc) for n, loc in calls if loc is None or not _in_package(loc.filename)]
    # The graph that calls a gradient (``∇f``, at the ``def``): no line of the user's calls.
    user = [(n, loc) for k, (n, loc) in enumerate(user) if k + 1 == len(user) or n[:1] != "∇"]
    frames: list[ErrorFrame] = []
    for name, loc in user or calls:
        while name.startswith("vmap(") and name.endswith(")"):
            name = name[5:-1]  # the batched graph of a block (`myia.grad.batching`): its own
        base = name.split(":")[0]
        function = base.lstrip("▶◀∂")
        if base.startswith("◀"):
            if frames and frames[-1].location == loc:
                # The backward pass of an operation of the line before (``1.0 / x``).
                function = frames.pop().function.removesuffix(_GRADIENT)
            function += _GRADIENT
        new = ErrorFrame(function, loc)
        if frames and frames[-1].function == function and ":" in name:
            frames[-1] = new  # a block of the function of the frame before
        else:
            frames.append(new)
    return frames


_GRADIENT = " (in the gradient of this line)"

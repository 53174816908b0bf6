"""What generated code needs at run time, and the errors it raises, mapped to the user's source.

A Python exception raised inside generated code is turned into what the reference interpreter
raises for it (`myia.vm.debug_vm`): an exception the program raised (``raise``, ``assert``)
or a run-time error (division by zero, an index out of range) propagates as itself with the
Myia traceback as a note; a `TypeError` is a `MyiaTypeError`, a `ValueError` on arrays about
their shapes a `MyiaShapeError` (`is_shape_error`; one about their values, ``np.power`` of
integers to a negative power, propagates as itself). The traceback is read off the generated
frames: each generated line knows the node it computes, and each node where it came from in
the user's source.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from ..abstract.data import AbstractArray
from ..errors import Frame as ErrorFrame
from ..errors import MyiaError, MyiaInternalError, MyiaShapeError, MyiaTypeError, program_error
from ..ir.node import Node
from ..vm.tracebacks import (
    _KEPT,
    RECURSION_LIMIT,
    _format_traceback,
    _in_package,
    is_shape_error,
    recursion_error,
    user_frames,
)


def dead(*args: Any) -> Any:
    """Stands for a branch that type inference proved is never taken."""
    raise MyiaInternalError("a branch proved unreachable was taken")


def _user_frames(
    tb: types.TracebackType | None, modules: dict[str, Any]
) -> list[tuple[Node, Any, Any]]:
    """The nodes of generated code on traceback `tb`, outermost first, with their context.

    Each comes with its module and the graph of the generated function running it.
    """
    out = []
    lines: dict[int, list[str]] = {}
    while tb is not None:
        code = tb.tb_frame.f_code
        module = modules.get(code.co_filename)
        if module is not None:
            node = module.nodes.get(tb.tb_lineno)
            if node is not None:
                if node in module.inner:
                    text = lines.get(id(module))
                    if text is None:
                        text = lines[id(module)] = module.source.splitlines()
                    node = _innermost(node, module.inner[node], tb, text[tb.tb_lineno - 1])
                out.append((node, module, module.functions.get(code.co_name)))
        tb = tb.tb_next
    return out


def _innermost(
    node: Node, inner: list[tuple[Node, str]], tb: types.TracebackType, line: str
) -> Node:
    """The node of `node`'s line whose operation raised, or was running, at `tb`.

    A line computes its node and those written inside its expression (`Module.inner`, each
    with its text): the columns of the instruction running (``co_positions``) tell which of
    them it is, the narrowest whose text holds them (``s + x[i]`` in a loop's jump is at the
    line of its body, not at the ``for``). Generated code runs as fast: nothing is recorded
    before an error.
    """
    try:
        pos = list(tb.tb_frame.f_code.co_positions())[tb.tb_lasti // 2]
    except (IndexError, ValueError):  # pragma: no cover - no positions (python -X no_debug_ranges)
        return node
    first, last, start, end = pos
    if first != tb.tb_lineno or last != first or start is None or end is None:
        return node
    raw = line.encode()
    start, end = len(raw[:start].decode(errors="ignore")), len(raw[:end].decode(errors="ignore"))
    best: tuple[int, Node] | None = None
    for n, text in inner:
        at = line.find(text)
        while 0 <= at <= start:
            if end <= at + len(text):
                if best is None or len(text) < best[0]:
                    best = (len(text), n)
                break
            at = line.find(text, at + 1)
    return best[1] if best is not None else node


def error_frames(tb: types.TracebackType | None, modules: dict[str, Any]) -> list[ErrorFrame]:
    """The user's frames of a traceback through generated code, from the entry point down."""
    sites = _user_frames(tb, modules)
    if len(sites) > 2 * _KEPT:
        # A runaway recursion (200,000 frames): its first and last calls, as it is shown.
        skipped = ErrorFrame(f"[{len(sites) - 2 * _KEPT} more calls]", None)
        return [*_frames_of(sites[:_KEPT]), skipped, *_frames_of(sites[-_KEPT:])]
    return _frames_of(sites)


def _frames_of(sites: list[tuple[Node, Any, Any]]) -> list[ErrorFrame]:
    calls: list[tuple[str, Any]] = []
    chains: dict[tuple[int, int], list[tuple[str, Any]]] = {}  # a recursion repeats lines
    for node, module, fn in sites:
        key = (id(node), id(module), id(fn))
        chain = chains.get(key)
        if chain is None:
            chain = chains[key] = _calls_to(node, module, fn)
        calls.extend(chain)
    return user_frames(calls)


def _calls_to(node: Node, module: Any, fn: Any) -> list[tuple[str, Any]]:
    """The calls down to `node` within one generated function (`DebugInfo.call_chain`).

    A node of Myia's library code in a block written inside a user's function (a branch of
    an inlined ``max``) is reached through the jumps that enter its block, up to the call
    that inlining left a site on (the user's ``max(xs)``), in function `fn`'s graph, which
    runs it (a block may be written in several functions).
    """
    g = node.graph
    chain = _line_chain(node)
    seen: set[Any] = set()
    while True:
        via = module.entries.get((fn, g))
        if via is None and fn is None:
            via = next((v for (_, b), v in module.entries.items() if b is g), None)
        if via is None or g in seen:
            break
        seen.add(g)
        g = via.graph
        chain = [*via.debug.call_chain(g.name), *chain]
    out: list[tuple[str, Any]] = []
    for name, loc in chain:
        if out and out[-1][1] == loc and out[-1][0].split(":")[0] == name.split(":")[0]:
            continue  # graphs of one function inlined in one another
        out.append((name, loc))
    return out or [(g.name if g is not None else "?", node.debug.find_location())]


#: The messages of the `ValueError`s that Python's scalar functions raise (``math.sqrt(-1)``).
_SCALAR_VALUE_ERRORS = frozenset(["math domain error", "math range error"])


def translate_error(exc: BaseException, modules: dict[str, Any]) -> BaseException:
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
        scalar_error = str(exc) in _SCALAR_VALUE_ERRORS or not is_shape_error(exc)
        if not scalar_error and any(
            isinstance(i.abstract, AbstractArray) for i in last.inputs[1:]
        ):
            return MyiaShapeError(f"{type(exc).__name__}: {exc}", frames)
    if isinstance(exc, RecursionError):
        return recursion_error(exc, frames)
    program_error(exc, _format_traceback(frames))
    return exc


def _line_chain(node: Node) -> list[tuple[str, Any]]:
    """The calls down to the node of a generated line, or to one computed in the same line.

    A line computes its node and the single-use nodes written inside its expression: where
    the node itself has no line of the user's (a sum of sensitivities that AD made), the
    first of those that has one is shown, or rather one of a line inside its statement (a
    loop's accumulated sensitivity is at the line of the ``for``, the ``1 / sqrt(x)`` of
    the gradient of its body at the line of the ``sqrt``).
    """
    g = node.graph
    chain = node.debug.call_chain(g.name if g is not None else "?")
    if _has_user_line(chain):
        return chain
    todo = [node]
    seen = {node}
    found: list[list[tuple[str, Any]]] = []
    while todo and len(seen) < 64:
        n = todo.pop(0)
        for i in n.inputs:
            if i.is_apply and i.graph is g and i not in seen:
                seen.add(i)
                todo.append(i)
                inner = i.debug.call_chain(g.name)  # type: ignore[union-attr]
                if _has_user_line(inner):
                    found.append(inner)
    return min(found, key=_span, default=chain)  # (the first of the narrowest)


def _span(chain: list[tuple[str, Any]]) -> int:
    """How many lines the statement of the last user line of `chain` spans."""
    loc = next(loc for _, loc in reversed(chain) if not _in_package(loc.filename))
    return (loc.end_line or loc.line) - loc.line


def _has_user_line(chain: list[tuple[str, Any]]) -> bool:
    return any(not _in_package(loc.filename) for _, loc in chain)


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

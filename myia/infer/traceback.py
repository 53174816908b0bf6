"""Tracebacks of inference errors: the user's abstract call stack, with argument types."""

from __future__ import annotations

import os
from typing import Any

from ..abstract.data import show
from ..errors import Frame

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_internal(filename: str | None) -> bool:
    """Whether `filename` is a file of the Myia package (library code, not the user's)."""
    return filename is not None and os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep)


def user_name(graph_name: str) -> str:
    """How an error message names a graph: its function, and whether AD made it.

    ``f:if_true`` (a block of ``f``) is ``f``; ``▶f`` (the forward pass that AD made of
    ``f``) is ``f``; ``◀f`` (its backward pass) is "the backward pass of f".
    """
    base = graph_name.split(":")[0]
    name = base.lstrip("▶◀∂")
    return f"the backward pass of {name}" if base.startswith("◀") else name


def called_name(graph_name: str) -> str:
    """How a message about a call of the graph named `graph_name` names the function.

    As `user_name`, but a lambda is ``<lambda>``, as Python names it (``f:lambda``).
    """
    if graph_name.split(":")[-1] == "lambda":
        return "<lambda>"
    return user_name(graph_name)


def error_frames(calls: Any) -> list[Frame]:
    """One frame per user-level call on the inference stack, outermost first.

    Each shows the function's name, the location and text of the node being inferred, and
    the types of the arguments of the function. Frames of blocks of the same function
    collapse into one; frames inside Myia's own library are left out; the frame of a
    backward pass (``◀f``) says that it is in the gradient of its line.
    """
    frames: list[Frame] = []
    last_fn = None
    for ctx, node, values in calls:
        if ctx.graph.flags.get("cases"):
            continue  # an operation made per length of a union of tuples: its caller's line
        base = ctx.graph.name.split(":")[0]
        name = base.lstrip("▶◀∂")
        if base.startswith("◀"):  # a backward pass that AD made
            name += " (in the gradient of this line)"
        loc = None
        if node is not None:
            loc = node.debug.find_location()
        if loc is None:
            loc = ctx.graph.debug.find_location()
        if loc is not None and is_internal(loc.filename):
            # Myia's own code parsed into a user's function (``jvp(f, ...)``'s body, at its
            # call site): the user's function is the frame, at the call (or its own line).
            chain = node.debug.call_chain(name) if node is not None else []
            users = [where for _, where in chain if not is_internal(where.filename)]
            loc = users[-1] if users else ctx.graph.debug.find_location()
            if loc is None or is_internal(loc.filename):
                continue
        frame = Frame(name, loc, _arguments(node, values))
        if name == last_fn and frames and ":" in ctx.graph.name:
            frames[-1] = frame
        else:
            frames.append(frame)
        last_fn = name
    return frames


def _arguments(node: Any, values: dict[Any, Any]) -> str | None:
    """The abstract values of the arguments of the call `node`, as far as they are known."""
    if node is None or not node.is_apply or len(node.inputs) < 2:
        return None
    shown = []
    for inp in node.inputs[1:]:
        if inp in values:
            shown.append(show(values[inp]))
        elif inp.is_constant:
            shown.append(repr(inp.value))
        else:
            shown.append("?")
    return "argument types: " + ", ".join(shown)

"""Defaults of nested functions that are not constants: ``def inner(y, k=x * 2)``.

Python evaluates a default once, where the ``def`` is, in the enclosing scope. Myia does the
same: the value is computed in the enclosing block and stored in a hidden variable, which the
nested function reads as a free variable (its value where the function is defined). The
parameter's default is a marker, `NOT_GIVEN`; the body starts with
``k = <hidden variable> if k is NOT_GIVEN else k``, a test known at compile time for each call.

A function that is a default of the function compiled (``def layer(x, act=np.tanh)``) is such
a default too, its value a constant: a call from Python that does not pass it passes
`NOT_GIVEN` (`given_or_not`), as a function is no argument Myia takes from Python.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..ir.node import Constant, DebugInfo, Graph, Node
from ..primitives import P


class NotGiven:
    """The default of a parameter whose default value is computed where its function is.

    The class itself is the marker: a constant whose abstract value is the class.
    """


NOT_GIVEN = NotGiven


def hoist(parent: Any, fp: Any, block: Any, graph: Graph) -> None:
    """Move the defaults of `graph` that are not constants into hidden variables of `block`."""
    for name, node in list(graph.defaults.items()):
        if node.is_constant:
            continue
        hidden = f"$default:{graph.name}:{name}"
        block.write(hidden, node)
        parent.locals.add(hidden)
        graph.defaults[name] = Constant(NOT_GIVEN, DebugInfo(name, node.debug.location))
        fp.late_defaults[name] = hidden


def of_function(fn: Any, node: Any, graph: Graph, fp: Any, location: Any) -> None:
    """Give `graph`, parsed from ``def`` `node` of function `fn`, the defaults of `fn`.

    They are constants; a function's is given where it is not passed (`NOT_GIVEN`).
    """
    from .resolve import to_node

    values = list(fn.__defaults__ or ())
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    given = list(zip(positional[len(positional) - len(values) :], values))
    kwdefaults = fn.__kwdefaults__ or {}
    given += [(a, kwdefaults[a.arg]) for a in args.kwonlyargs if a.arg in kwdefaults]
    for a, v in given:
        debug = DebugInfo(a.arg, location(a))
        if is_function(v):
            fp.late_defaults[a.arg] = to_node(
                v, a.arg, location(a), getattr(node, "name", "<lambda>")
            )
            v = NOT_GIVEN
        graph.defaults[a.arg] = Constant(v, debug)


def is_function(value: Any) -> bool:
    """Whether default `value` is a function (a constant given only where not passed)."""
    return callable(value) and not isinstance(value, type) and not dataclasses.is_dataclass(value)


def given_or_not(value: Any, default: Any) -> Any:
    """What a call from Python passes for a parameter with `default`: `NOT_GIVEN` for it."""
    return NOT_GIVEN if value is default and is_function(default) else value


def bind(fp: Any, entry: Any) -> None:
    """At the start of `fp`'s function, give the parameters not passed their default."""
    for name, hidden in fp.late_defaults.items():
        param = entry.read(name)
        cond = entry.apply(P.is_, param, Constant(NOT_GIVEN), debug=param.debug.derive())
        value = fp.select(
            entry,
            fp.node,
            cond,
            lambda b, h=hidden: h if isinstance(h, Node) else b.read(h),
            lambda b, p=param: p,
        )
        entry.write(name, value)

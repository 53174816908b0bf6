"""Defaults of nested functions that are not constants: ``def inner(y, k=x * 2)``.

Python evaluates a default once, where the ``def`` is, in the enclosing scope. Myia does the
same: the value is computed in the enclosing block and stored in a hidden variable, which the
nested function reads as a free variable (its value where the function is defined). The
parameter's default is a marker, `NOT_GIVEN`; the body starts with
``k = <hidden variable> if k is NOT_GIVEN else k``, a test known at compile time for each call.
"""

from __future__ import annotations

from typing import Any

from ..ir.node import Constant, DebugInfo, Graph
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


def bind(fp: Any, entry: Any) -> None:
    """At the start of `fp`'s function, give the parameters not passed their default."""
    for name, hidden in fp.late_defaults.items():
        param = entry.read(name)
        cond = entry.apply(P.is_, param, Constant(NOT_GIVEN), debug=param.debug.derive())
        value = fp.select(
            entry, fp.node, cond, lambda b, h=hidden: b.read(h), lambda b, p=param: p
        )
        entry.write(name, value)

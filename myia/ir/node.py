"""The graph IR: `Graph`, `Apply`, `Parameter` and `Constant`.

A `Graph` is a function: a list of `Parameter` nodes and an `output` node. Its body is the set
of `Apply` nodes reachable from the output that belong to it. An `Apply` calls its first input
on the others. A `Constant` holds any value, including another `Graph` (a closure when that
graph uses nodes of an enclosing graph, its *free variables*) or a `Primitive`.

Nodes point at their inputs directly (use-def); def-use information (``uses``) and all other
analyses are computed on demand by `myia.ir.analysis`. Every node carries a `DebugInfo` with
the name it had in the user's source and where it came from, which survives transformations so
that errors can point at the user's line.
"""

from __future__ import annotations

import itertools
import linecache
from dataclasses import dataclass
from typing import Any

_ids = itertools.count()


@dataclass(frozen=True)
class Location:
    """A span in a source file (lines are 1-based, columns 0-based)."""

    filename: str
    line: int
    column: int = 0
    end_line: int | None = None
    end_column: int | None = None

    def source_line(self) -> str:
        """Return the stripped text of the first line of the span."""
        return linecache.getline(self.filename, self.line).strip()

    def source_text(self) -> str | None:
        """Return the exact text of the span when it is on one line, else None."""
        if self.end_line != self.line or self.end_column is None:
            return None
        return linecache.getline(self.filename, self.line)[self.column : self.end_column]

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}"


class DebugInfo:
    """Where a node or graph comes from: its source name, location, and origin.

    ``origin`` links a node created by a transformation (cloning, AD, optimization) to the
    node it was derived from, so that the location of the user's code is never lost.

    ``site``, on a node copied into a caller by inlining, is the call it was inlined at: the
    call's `DebugInfo`, the name of the caller's graph and that of the graph inlined. Errors
    raised at run time by the copy show the user's line of the call (`call_chain`), not
    only the line of Myia's library code where the copy comes from.
    """

    __slots__ = ("name", "location", "origin", "id", "site")

    def __init__(
        self,
        name: str | None = None,
        location: Location | None = None,
        origin: DebugInfo | None = None,
    ):
        self.name = name
        self.location = location
        self.origin = origin
        self.id = next(_ids)
        self.site: tuple[DebugInfo, str, str] | None = None

    def call_chain(self, function: str) -> list[tuple[str, Location]]:
        """Where this node is, as calls: ``(function, location)`` pairs, outermost first.

        A node of `function` has one pair, its own location. A node inlined into `function`
        has the call it was inlined at (in `function`), then where it is in the function
        inlined, and so on for nodes inlined several times. Pairs with no location are left
        out.
        """
        info: DebugInfo | None = self
        backward = False
        while info is not None:
            backward = backward or isinstance(info, BackwardInfo)
            if backward:
                function = "◀" + function.lstrip("▶◀")
            if info.site is not None:
                call, caller, callee = info.site
                inner = info.origin.call_chain(callee) if info.origin is not None else []
                if backward or (not inner and _backward(info.origin)):
                    # (The copy of a call of a backpropagator, where it has no line itself.)
                    caller = "◀" + caller.lstrip("▶◀")
                return [*call.call_chain(caller), *inner]
            if info.location is not None:
                return [(function, info.location)]
            info = info.origin
        return []

    def find_location(self) -> Location | None:
        """Return this info's location or the nearest one among its origins."""
        info: DebugInfo | None = self
        while info is not None:
            if info.location is not None:
                return info.location
            info = info.origin
        return None

    def find_name(self) -> str | None:
        """Return this info's name or the nearest one among its origins."""
        info: DebugInfo | None = self
        while info is not None:
            if info.name is not None:
                return info.name
            info = info.origin
        return None

    def derive(self) -> DebugInfo:
        """Return a fresh `DebugInfo` whose origin is this one."""
        return DebugInfo(origin=self)


def _backward(info: DebugInfo | None) -> bool:
    """Whether `info` derives from a `BackwardInfo`."""
    while info is not None:
        if isinstance(info, BackwardInfo):
            return True
        info = info.origin
    return False


class BackwardInfo(DebugInfo):
    """The `DebugInfo` of a call of a backpropagator, made by the gradient transform.

    It derives from the node whose backward pass it computes: an error in it is in the
    gradient of that node's line, which `DebugInfo.call_chain` says by naming the function
    ``◀f``.
    """

    __slots__ = ()


class Node:
    """Base class of the IR's nodes.

    Attributes:
        inputs: the nodes this node uses (empty except for `Apply`).
        graph: the graph the node belongs to (None for constants).
        abstract: the inferred abstract value, set by type inference.
        debug: a `DebugInfo`.

    """

    __slots__ = ("inputs", "graph", "abstract", "debug")

    inputs: list[Node]
    graph: Graph | None

    def __init__(self, inputs: list[Node], graph: Graph | None, debug: DebugInfo | None):
        self.inputs = inputs
        self.graph = graph
        self.abstract: Any = None
        self.debug = debug if debug is not None else DebugInfo()

    is_apply = False
    is_parameter = False
    is_constant = False

    def is_constant_graph(self) -> bool:
        """Whether this is a `Constant` holding a `Graph`."""
        return False

    @property
    def location(self) -> Location | None:
        return self.debug.find_location()


class Apply(Node):
    """A call: ``inputs[0](*inputs[1:])``, evaluated in `graph`."""

    __slots__ = ()
    is_apply = True

    def __init__(self, inputs: list[Node], graph: Graph, debug: DebugInfo | None = None):
        super().__init__(list(inputs), graph, debug)

    @property
    def fn(self) -> Node:
        return self.inputs[0]

    @property
    def args(self) -> list[Node]:
        return self.inputs[1:]

    def __repr__(self) -> str:
        return f"Apply#{self.debug.id}({self.debug.find_name() or ''})"


class Parameter(Node):
    """A parameter of `graph`."""

    __slots__ = ()
    is_parameter = True

    def __init__(self, graph: Graph, name: str | None = None, debug: DebugInfo | None = None):
        super().__init__([], graph, debug if debug is not None else DebugInfo(name))

    def __repr__(self) -> str:
        return f"Parameter({self.debug.find_name()})"


class Constant(Node):
    """A constant value. It belongs to no graph."""

    __slots__ = ("value",)
    is_constant = True

    def __init__(self, value: Any, debug: DebugInfo | None = None):
        super().__init__([], None, debug)
        self.value = value

    def is_constant_graph(self) -> bool:
        return isinstance(self.value, Graph)

    def __repr__(self) -> str:
        return f"Constant({self.value!r})"


class Graph:
    """A function of the IR.

    Attributes:
        parameters: the positional parameters.
        output: the node whose value the graph returns.
        defaults: default values of parameters, by name (nodes evaluated in the scope where
            the graph is defined, so either constants or free variables of the graph).
        kwonly: names of keyword-only parameters (they come last in `parameters`).
        flags: free-form markers set by passes (e.g. ``"core"`` for library code).
        debug: the `DebugInfo` of the function (its name and where it is defined).

    """

    def __init__(self, name: str | None = None, location: Location | None = None):
        self.parameters: list[Parameter] = []
        self.output: Node | None = None
        self.defaults: dict[str, Node] = {}
        self.kwonly: int = 0
        self.flags: dict[str, Any] = {}
        self.debug = DebugInfo(name, location)

    @property
    def name(self) -> str:
        return self.debug.find_name() or f"graph{self.debug.id}"

    def add_parameter(self, name: str | None = None, debug: DebugInfo | None = None) -> Parameter:
        """Create a new parameter at the end of the parameter list and return it."""
        p = Parameter(self, name, debug)
        self.parameters.append(p)
        return p

    def apply(self, fn: Any, *args: Any, debug: DebugInfo | None = None) -> Apply:
        """Create an `Apply` in this graph; non-node arguments become constants."""
        inputs = [a if isinstance(a, Node) else Constant(a) for a in (fn, *args)]
        return Apply(inputs, self, debug)

    def return_(self, node: Node) -> None:
        """Set the output of the graph."""
        self.output = node

    @property
    def param_names(self) -> list[str]:
        return [p.debug.find_name() or f"_{i}" for i, p in enumerate(self.parameters)]

    def __repr__(self) -> str:
        return f"Graph({self.name})"


def is_constant(node: Node, value_type: type | tuple[type, ...] | None = None) -> bool:
    """Whether `node` is a Constant, optionally holding a value of `value_type`."""
    return node.is_constant and (value_type is None or isinstance(node.value, value_type))


def is_apply_of(node: Node, fn: Any) -> bool:
    """Whether `node` is an Apply whose function is the constant `fn`."""
    return node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is fn

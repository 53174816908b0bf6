"""Which loop stacks of a program the native backend makes typed buffers.

The loop stacks of gradients (persistent linked cells on the NumPy backend) become typed
growable buffers (`myia.compile.native_source`) when they hold tuples of Python scalars, and
when every Python int pushed surely fits in an int64 array: the host code pushes on the same
buffers, and its Python ints have no bound. `typed_stacks` says whether a program's stacks
can be typed, and why not.

A Python int surely fits when it is a constant, a loop counter's step (``i + 1``) of an int
that fits, or a parameter that receives only such ints at every call of its function (a loop
counter, passed from one iteration to the next): the parameters of the entry (the user's
ints) and of functions used as values may hold any int.

`unshare_empty_stacks` gives each use of an empty stack of elements not known yet its own
node, typed where it is used.
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import BOTTOM, AbstractFunction, AbstractScalar, AbstractStack, AbstractTuple
from ..ir.analysis import Scopes, reachable_graphs
from ..ir.node import Apply, Graph, Node
from ..primitives import P, Primitive
from .native_arrays import flat_element
from .native_source import _leaves

#: Primitives that may touch a typed stack (any other use keeps the linked cells).
_STACK_USERS = frozenset(
    [P.stack_new, P.stack_of_functions, P.stack_push, P.stack_pop, P.stack_empty,
     P.make_tuple, P.tuple_getitem, P.switch, P.seq, P.identity]
)  # fmt: skip

_INT64 = range(-(2**63), 2**63)


def _contains_stack(a: Any) -> bool:
    if isinstance(a, AbstractStack):
        return True
    if isinstance(a, AbstractTuple):
        return any(map(_contains_stack, a.elements))
    return False


def empty_element(a: Any) -> bool:
    """Whether a stack of elements of type `a` is always empty (⊥, or no function)."""
    return a is BOTTOM or (isinstance(a, AbstractFunction) and not a.options)


def _flat_stacks(a: Any, arrays: bool = False) -> bool:
    """Whether the stacks in type `a` hold tuples of Python scalars (or nothing yet).

    With `arrays`, tuples of Python scalars and arrays (`native_arrays.flat_element`).
    """
    if isinstance(a, AbstractStack):
        if arrays and flat_element(a.element):
            return True
        return empty_element(a.element) or _leaves(a.element, "x", [])
    if isinstance(a, AbstractTuple):
        return all(_flat_stacks(e, arrays) for e in a.elements)
    return True


def python_int(a: Any) -> bool:
    """Whether values of type `a` are Python ints (unbounded on the host)."""
    return isinstance(a, AbstractScalar) and a.weak and a.dtype == "int64"


def counter_step(node: Apply) -> bool:
    """Whether `node` adds a small constant to an int, or subtracts one (``i + 1``)."""
    if node.inputs[0].value not in (P.add, P.sub) or len(node.inputs) != 3:  # type: ignore[attr-defined]
        return False
    return any(
        i.is_constant and type(i.value) is int and abs(i.value) <= 2**16 for i in node.inputs[1:]
    )


def _prim(node: Node) -> Any:
    fn = node.inputs[0] if node.is_apply else None
    return fn.value if fn is not None and fn.is_constant else None


def _called_graphs(fn: Node) -> list[Graph] | None:
    """The graphs that a call of `fn` enters, when they are named where it is called."""
    if fn.is_constant and isinstance(fn.value, Graph):
        return [fn.value]
    if _prim(fn) is P.switch and all(
        b.is_constant and isinstance(b.value, Graph) for b in fn.inputs[2:]
    ):
        return [b.value for b in fn.inputs[2:]]
    return None


def _int_constant(value: Any) -> bool:
    if type(value) is tuple:
        return all(map(_int_constant, value))
    return not isinstance(value, int) or isinstance(value, bool) or value in _INT64


class IntBounds:
    """Which nodes of a program hold Python ints that surely fit in int64 (see the module)."""

    def __init__(self, graphs: list[Graph], scopes: Scopes):
        #: parameter -> the arguments passed to it (None: somewhere it is not known).
        incoming: dict[Node, list[Node] | None] = {p: [] for g in graphs for p in g.parameters}
        applies = [n for g in graphs for n in scopes.toposort(g) if n.is_apply]
        uses: dict[Node, list[tuple[Node, int]]] = {}
        for node in applies:
            for i, inp in enumerate(node.inputs):
                uses.setdefault(inp, []).append((node, i))
            callees = _called_graphs(node.inputs[0])
            for c in callees or ():
                args, params = node.inputs[1:], c.parameters
                for k, p in enumerate(params):
                    known = incoming.get(p)
                    if known is not None and len(args) == len(params):
                        known.append(args[k])
                    else:
                        incoming[p] = None

        def called(user: Node, i: int) -> bool:
            """Whether input `i` of `user` is only called where its calls were read above."""
            if i == 0:
                return True
            return (
                i >= 2
                and _called_graphs(user) is not None
                and all(k == 0 for _, k in uses.get(user, ()))
            )

        # A graph used as a value may be called with anything.
        for c, us in uses.items():
            if c.is_constant and isinstance(c.value, Graph):
                if not all(called(user, i) for user, i in us):
                    for p in c.value.parameters:
                        incoming[p] = None
        # The greatest set of parameters whose arguments all fit, given that they do; the
        # parameters of a graph never called (the entry) take the user's arguments.
        self.params = {p for p, args in incoming.items() if args}
        changed = True
        while changed:
            changed = False
            for p in list(self.params):
                if not all(self.fits(a) for a in incoming[p] or ()):
                    self.params.discard(p)
                    changed = True

    def fits(self, node: Node) -> bool:
        """Whether the Python ints in the value of `node` surely fit in int64."""
        a = node.abstract
        if node.is_constant:
            return _int_constant(node.value)
        if node.is_parameter:
            return node in self.params or not _holds_ints(a)
        if python_int(a):
            operands = [i for i in node.inputs[1:] if not i.is_constant]
            return counter_step(node) and all(map(self.fits, operands))  # type: ignore[arg-type]
        if isinstance(a, AbstractTuple) and _prim(node) is P.make_tuple:
            return all(map(self.fits, node.inputs[1:]))
        return not _holds_ints(a)


def _holds_ints(a: Any) -> bool:
    if isinstance(a, AbstractTuple):
        return any(map(_holds_ints, a.elements))
    return python_int(a)


def typed_stacks(graphs: list[Graph], scopes: Scopes, arrays: bool = False) -> str | None:
    """None if the stacks of the program can be typed buffers, else why not.

    With `arrays` (the machine code of a whole program), stacks may hold arrays too.
    """
    for p in (p for g in graphs for p in g.parameters):
        if _contains_stack(p.abstract) and not _flat_stacks(p.abstract, arrays):
            return "a stack holds values other than tuples of Python scalars"
    bounds: IntBounds | None = None
    for node in (n for g in graphs for n in scopes.toposort(g)):
        if not node.is_apply:
            continue
        a = node.abstract
        touches = [a, *(i.abstract for i in node.inputs[1:])]
        if not any(_contains_stack(t) for t in touches):
            continue
        fn = node.inputs[0]
        # Graphs (called, jumped to or as function values) lower stacks as this generator
        # does; primitives other than the stack's own would see a buffer, not cells.
        if fn.is_constant and isinstance(fn.value, Primitive) and fn.value not in _STACK_USERS:
            return f"a stack is used by {fn.value.name}"
        if not all(_flat_stacks(t, arrays) for t in touches):
            return "a stack holds values other than tuples of Python scalars"
        if fn.is_constant and fn.value is P.stack_push:
            bounds = bounds or IntBounds(graphs, scopes)
            if not bounds.fits(node.inputs[2]):
                return "a stack holds Python ints that may not fit in int64"
    return None


def is_empty_new(node: Node) -> bool:
    """Whether `node` makes an empty stack of elements not known yet (⊥)."""
    if not (node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is P.stack_new):
        return False
    a = node.abstract
    return isinstance(a, AbstractStack) and a.element is BOTTOM


def unshare_empty_stacks(entry: Graph) -> None:
    """Give each use of an empty stack of unknown elements its own node.

    Optimization merges the empty stacks of a program into one node; typed, they are
    stacks of different element types, each made where it is used.
    """
    graphs = reachable_graphs(entry)
    scopes = Scopes(graphs)
    for g in graphs:
        for node in scopes.toposort(g):
            if not node.is_apply:
                continue
            for i, inp in enumerate(node.inputs):
                if i and is_empty_new(inp):
                    fresh = Apply(list(inp.inputs), node.graph, inp.debug.derive())
                    fresh.abstract = inp.abstract
                    node.inputs[i] = fresh

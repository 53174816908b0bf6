"""Operations on a union of tuples of different lengths, made once per length.

Two branches making tuples of different lengths (``t = (x,) if c else (x, y)``) join as a
union of the two (`myia.abstract.lattice.join`): at run time `t` is one of them, told apart
by its length. No operation takes the union itself: ``len(t)``, ``t[0]``, ``t + (z,)``,
``for v in t`` and ``sum(t)`` are made once per length, on the tuple of that length, the
one `t` holds chosen at run time::

    op(a, t, b) => cases_1(t)
    cases_k(u) = switch(tuple_len_is(u, n_k), λ(u): op(a, u, b), cases_k+1)(u)

Each branch is narrowed to the tuples of its length (`myia.infer.narrow`), so that its
``op`` is the operation on one tuple type, and the results of the branches join (``len(t)``
is an int known at run time). The last length needs no test; where the union also holds
other values (``(x,) | None``), they are the last case, and an operation that does not take
them is the error a union gets (test it first: ``if t is not None``).
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import AbstractTuple, AbstractUnion, AbstractValue
from ..ir.node import Apply, Constant, DebugInfo, Graph
from ..primitives import P

#: The most lengths a recursive function's result may have (`Inferrer._widen`): a recursion
#: that returns a tuple one longer at every level would have a type per level.
MAX_LENGTHS = 8


def lengths_of_any(a: AbstractValue) -> tuple[int, ...]:
    """The lengths of the tuples that a value of type `a` may be (one for a tuple)."""
    if isinstance(a, AbstractTuple):
        return (len(a.elements),)
    return lengths_of(a)[0] if tuple_union(a) else ()


def tuple_union(a: AbstractValue) -> bool:
    """Whether `a` is a union holding tuples (of different lengths)."""
    return isinstance(a, AbstractUnion) and any(isinstance(o, AbstractTuple) for o in a.options)


def case_position(args: list[AbstractValue]) -> int | None:
    """The position of the first argument that is a union of tuples, if any."""
    return next((i for i, a in enumerate(args) if tuple_union(a)), None)


def lengths_of(a: AbstractValue) -> tuple[tuple[int, ...], bool]:
    """The lengths of the tuples of union `a`, in order, and whether it holds other values."""
    assert isinstance(a, AbstractUnion)
    lengths = sorted(len(o.elements) for o in a.options if isinstance(o, AbstractTuple))
    return tuple(lengths), len(lengths) < len(a.options)


def case_call(node: Apply, k: int, lengths: tuple[int, ...], others: bool) -> Apply:
    """The call standing for `node`, whose argument `k` is a union of tuples of `lengths`.

    It is a node of `node`'s graph that no other node uses: inference and specialization
    read it in place of `node` (as they do the calls ``f(*t)`` is written out as).
    """
    subject = node.inputs[k + 1]
    where = node.debug

    def graph() -> tuple[Graph, Any]:
        """A graph of the cases, and its parameter: the tuple."""
        g = Graph()
        g.debug = DebugInfo(origin=node.graph.debug)
        g.flags["cases"] = True
        return g, g.add_parameter(debug=DebugInfo(origin=subject.debug))

    def case(n: int | None) -> Graph:
        """``λ(u): op(..., u, ...)``: `node` on the tuple of length `n` (None: the rest)."""
        g, u = graph()
        inputs = [u if i is subject else i for i in node.inputs]
        g.output = Apply(inputs, g, DebugInfo(origin=where))
        return g

    # From the last case to the first: each tests one length, else goes on to the next.
    tests = list(lengths) if others else list(lengths[:-1])
    nxt = case(None if others else lengths[-1])
    for n in reversed(tests):
        g, u = graph()
        test = g.apply(P.tuple_len_is, u, n, debug=DebugInfo(origin=where))
        sw = g.apply(P.switch, test, case(n), nxt, debug=DebugInfo(origin=where))
        g.output = Apply([sw, u], g, DebugInfo(origin=where))
        nxt = g
    return Apply([Constant(nxt), subject], node.graph, DebugInfo(origin=where))


def dispatches(inferrer: Any, fn: Any, args: list[AbstractValue]) -> bool:
    """Whether callee `fn` (an operation or a primitive) does not take `args` as they are.

    An operation that resolves on the union's kind (``isinstance``, ``is None``), and a
    primitive whose type rule takes it (``switch``, ``make_tuple``), take the union itself.
    """
    from ..errors import MyiaTypeError
    from ..operations.core import Operation
    from ..primitives import Primitive
    from .calls import bind_primitive_args
    from .registry import INFER_RULES

    try:
        if isinstance(fn, Operation):
            inferrer.resolve(fn, args)
        elif isinstance(fn, Primitive):
            if fn is P.apply_star:
                return True  # ``f(*t)``: written out for each length of `t`
            rule = INFER_RULES.get(fn)
            if rule is None:
                return False
            rule(*bind_primitive_args(fn, args, inferrer.calls))
        else:
            return False
    except MyiaTypeError:
        return True
    except Exception:
        return False
    return False

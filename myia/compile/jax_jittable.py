"""Which programs the JAX backend compiles as one XLA computation (`jittable`).

A program is jitted when its arguments and results are arrays and scalars in tuples and
records, it has no effect but errors (flagged, and raised by the host), its primitives are
total or have their Python errors flagged (`jax_codegen.flagged`), and its dtypes promote in
JAX as in NumPy. Otherwise it runs as host code (`jax_backend.JaxExecutable`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import (
    AbstractArray,
    AbstractRecord,
    AbstractScalar,
    AbstractTuple,
    has_unknown_dims,
)
from ..ir.analysis import Scopes, reachable_graphs
from ..ir.node import Graph
from ..opt.effects import ARRAY_TOTAL, TOTAL
from ..primitives import P, Primitive
from .jax_codegen import flagged
from .jax_lower import number_kind
from .jax_values import leaf


def _flat_type(a: Any) -> bool:
    """Whether values of abstract type `a` are arrays and scalars in tuples and records."""
    if leaf(a):
        return True
    if isinstance(a, AbstractTuple):
        return all(map(_flat_type, a.elements))
    if isinstance(a, AbstractRecord):
        return all(map(_flat_type, a.fields))
    return False


#: Primitives that only warn on NumPy floats (``x ** -1`` of an integer array raises).
_FLOAT_TOTAL = frozenset([P.pow_, P.floordiv, P.mod])


def _is_switch(node: Any) -> bool:
    f = node.inputs[0] if node.is_apply else None
    return f is not None and f.is_constant and f.value is P.switch


#: Primitives that move values without computing on them.
_STRUCTURAL = frozenset(
    [P.make_tuple, P.tuple_getitem, P.tuple_concat, P.tuple_setitem, P.make_record,
     P.record_getattr, P.record_setattr, P.record_from_fields, P.identity, P.seq, P.switch,
     P.env_setitem, P.env_getitem, P.partial]
)  # fmt: skip

#: Primitives that raise only for shapes their type rules refuse (splits and the
#: sensitivities of joins, tiles and pads: slices and sums of static shapes).
_SHAPED = frozenset([P.split, P.unconcatenate, P.unstack, P.untile, P.unrepeat, P.unpad])

#: Primitives that promote no dtypes: integer arguments that are indices, and the sum of a
#: sensitivity cast to its argument's dtype (`unbroadcast`, `jax_lower._unbroadcast`).
_UNPROMOTED = frozenset([P.take, P.take_along_axis, P.untake_along_axis, P.unbroadcast])


def _strong_dtype(a: Any) -> str | None:
    if isinstance(a, AbstractArray) or (isinstance(a, AbstractScalar) and not a.weak):
        return a.dtype
    return None


#: Reductions that raise only on an empty array (shapes are known at compile time).
_NONEMPTY_TOTAL = frozenset([P.reduce_max, P.reduce_min, P.argmax, P.argmin])


def _may_raise(prim: Primitive, node: Any) -> bool:
    if prim in TOTAL or _checked_by_inference(prim, node):
        return False
    if prim in _NONEMPTY_TOTAL:
        x = node.inputs[1].abstract
        if isinstance(x, AbstractScalar):
            return False  # ``np.max`` of a number is that number
        return not (isinstance(x, AbstractArray) and all(d is not None and d > 0 for d in x.shape))
    out = node.abstract
    # On NumPy values these only warn; on Python scalars they raise.
    numpy = isinstance(out, AbstractArray) or (isinstance(out, AbstractScalar) and not out.weak)
    if prim in ARRAY_TOTAL:
        return not numpy
    if prim in _FLOAT_TOTAL:
        return not (numpy and np.dtype(out.dtype).kind == "f")
    return True


def _checked_by_inference(prim: Primitive, node: Any) -> bool:
    """Whether `node` cannot raise: what would make it raise is known, and was checked.

    ``float`` of a number or 0-d array; ``int`` of an int or a bool; ``np.arange`` of
    constants (its type rule computed it); the `_SHAPED` primitives (their type rules
    checked the static shapes); ``np.take`` of constant indices in range; the gathers of
    ``np.sort`` (indices ``np.argsort`` made).
    """
    args = node.inputs[1:]
    if prim is P.to_float:
        a = args[0].abstract
        if isinstance(a, AbstractScalar):
            return a.dtype != "str"
        return isinstance(a, AbstractArray) and not a.shape
    if prim is P.to_int:
        # ``int(x)`` of an int or a bool (that of a float is flagged, `jax_codegen.flagged`).
        return number_kind(args[0].abstract) in ("b", "i")
    if prim is P.arange:
        return all(a.is_constant for a in args)
    if prim in _SHAPED:
        return True
    if prim is P.take:
        a, indices, axis = args
        if not (
            indices.is_constant and axis.is_constant and isinstance(a.abstract, AbstractArray)
        ):
            return False
        shape = a.abstract.shape
        n = int(np.prod(shape)) if axis.value is None else shape[axis.value]  # type: ignore[attr-defined]
        idx = np.asarray(indices.value)  # type: ignore[attr-defined]
        return idx.dtype.kind in "iu" and bool(np.all((idx >= -n) & (idx < n)))
    if prim in (P.take_along_axis, P.untake_along_axis):
        indices = args[1] if prim is P.take_along_axis else args[2]
        made_by = indices.inputs[0] if indices.is_apply else None
        return made_by is not None and made_by.is_constant and made_by.value is P.argsort  # type: ignore[attr-defined]
    return False


#: Primitives whose JAX code cannot raise (stacks are buffers, see `jax_runtime.JaxStack`;
#: the generated code pops only non-empty stacks) or that only move sensitivities.
_JAX_SAFE = frozenset(
    [P.stack_new, P.stack_of_functions, P.stack_push, P.stack_pop, P.stack_empty,
     P.stack_unpush, P.env_sens, P.env_getsens, P.env_delitem, P.gmaterialize]
)  # fmt: skip


def jittable(graph: Graph) -> str | None:
    """None if `graph` can be one XLA computation, else the reason why not (for the docs).

    Branches and loops are rewritten by `JaxGenerator`; recursion is refused there. The
    primitives must be total, or have their Python errors flagged (`jax_codegen.flagged`).
    """
    graphs = reachable_graphs(graph)
    scopes = Scopes(graphs)
    if not all(_flat_type(p.abstract) for p in graph.parameters):
        return "an argument is not made of arrays and scalars"
    if not _flat_type(graph.output.abstract):
        return "its result is not made of arrays and scalars"
    nodes = [n for g in graphs for n in scopes.toposort(g)]
    messages = _messages(nodes)
    for node in nodes:
        if not node.is_apply or node in messages:
            continue
        if has_unknown_dims(node.abstract):
            # XLA's shapes are static: a loop's state or a branch's result may not change.
            return "an array's dimension is known only at run time (arrays of different shapes)"
        fn = node.inputs[0]
        if (fn.is_constant and isinstance(fn.value, Graph)) or _is_switch(fn):
            continue  # a jump or a call: control flow, rewritten by `JaxGenerator`
        if not (fn.is_constant and isinstance(fn.value, Primitive)):
            continue  # a call of a function value: traced as the function it is
        prim = fn.value
        if prim is P.switch:
            continue
        if prim.effect and prim not in (P.raise_, P.assert_):  # type: ignore[attr-defined]
            # (An error is flagged: the host runs the call again and raises it.)
            return f"it calls {prim.name} (an effect)"
        if prim is P.tuple_len_is:
            # XLA's values have one structure: a tuple's length must be known.
            return "a tuple's length is known at run time only (tuples of different lengths)"
        how = None if prim in _JAX_SAFE else flagged(node)
        if how in ("narrow", "power") and _int_out_of_range(node):
            # A constant Python int besides the one flagged (``np.clip(a, -1, k)``).
            return f"{prim.name} of a Python int out of the range of its dtype (NumPy raises)"
        if prim in _JAX_SAFE or how not in (None, "power"):
            continue
        if prim is not P.seq and how is None and _may_raise(prim, node):
            return f"{prim.name} may raise an exception here"
        strong = {_strong_dtype(i.abstract) for i in node.inputs[1:]} - {None, "bool"}
        # Floats of several widths promote to the widest in JAX as in NumPy; an int with a
        # float does not (float32 in JAX, float64 in NumPy), nor signed with unsigned ints.
        floats = all(np.dtype(d).kind == "f" for d in strong)
        if len(strong) > 1 and not floats and prim not in _STRUCTURAL | _UNPROMOTED:
            return f"{prim.name} mixes dtypes {sorted(strong)} (JAX promotes them otherwise)"
        if _int_out_of_range(node):
            return f"{prim.name} of a Python int out of the range of its dtype (NumPy raises)"
    return None


#: Primitives that make strings at run time (f-strings).
_STRINGS = frozenset([P.format_, P.str_concat])


def _messages(nodes: list[Any]) -> set[Any]:
    """The strings made at run time among `nodes` that only messages of errors read.

    An error is flagged, and the host raises it, with its message, from its own code: the
    XLA computation makes no string (`jax_lower.JAX_LOWER`: an empty one).
    """
    made = {n for n in nodes if n.is_apply and _calls(n, _STRINGS)}
    readers = [n for n in nodes if n.is_apply and not _calls(n, _STRINGS | {P.raise_, P.assert_})]
    todo = [i for n in readers for i in n.inputs if i in made]
    read_elsewhere: set[Any] = set()
    while todo:  # what another string reads is read where that string is
        s = todo.pop()
        if s not in read_elsewhere:
            read_elsewhere.add(s)
            todo.extend(i for i in s.inputs if i in made)
    return made - read_elsewhere


def _calls(node: Any, prims: Any) -> bool:
    f = node.inputs[0]
    return f.is_constant and f.value in prims


def _int_out_of_range(node: Any) -> bool:
    """Whether a constant Python int of `node` does not fit its integer dtype.

    NumPy raises ``OverflowError`` there (``np.int32(5) + 2**31``), or compares exactly
    (``np.uint8(250) > -3``); XLA would wrap it.
    """
    dtype = _strong_dtype(node.abstract)
    if dtype == "bool":  # a comparison: of its operands' dtype
        strong = [_strong_dtype(i.abstract) for i in node.inputs[1:]]
        dtype = next((d for d in strong if d not in (None, "bool")), None)
    if dtype is None or np.dtype(dtype).kind not in "iu":
        return False
    info = np.iinfo(dtype)
    return any(
        i.is_constant and type(i.value) is int and not info.min <= i.value <= info.max
        for i in node.inputs[1:]
    )

"""Binding a call's argument nodes to a callee's parameters, in order.

A call site's arguments are positional nodes and keyword nodes (``make_kwarg``); the callee (a
primitive, a graph or a dataclass) wants them positional, with defaults filled in, a ``*args``
tuple and a ``**kwargs`` dict built. Used by specialization.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from ..abstract.data import AbstractDict, AbstractFunction
from ..abstract.lattice import broaden, constant_abstract
from ..errors import MyiaTypeError
from ..ir.node import Apply, Constant, Graph, Node
from ..operations.core import Operation
from ..primitives import P, Primitive
from ..records import field_names, is_namedtuple_class
from .traceback import error_frames


def _is_kwarg(node: Node) -> bool:
    return node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is P.make_kwarg


def _same_input(a: Node, b: Node) -> bool:
    """Whether two bound arguments are the same: one node, equal constants, or alike calls.

    Two calls are alike when they apply one primitive to the same arguments (the tuple of a
    ``*args``).
    """
    if a is b:
        return True
    if a.is_apply and b.is_apply:
        return (
            a.graph is b.graph
            and len(a.inputs) == len(b.inputs)
            and a.inputs[0].is_constant
            and all(map(_same_input, a.inputs, b.inputs))
        )
    if a.is_constant and b.is_constant:
        try:
            return type(a.value) is type(b.value) and bool(a.value == b.value)
        except Exception:
            return False
    return False


def _split_nodes(refs: list[Node], originals: list[Node]) -> tuple[list[Node], dict[str, Node]]:
    pos: list[Node] = []
    kws: dict[str, Node] = {}
    for r, o in zip(refs, originals):
        if o.is_apply and o.inputs[0].is_constant and o.inputs[0].value is P.make_kwarg:
            kws[o.inputs[1].value] = r.inputs[2]
        else:
            pos.append(r)
    return pos, kws


def bind_primitive_nodes(prim: Primitive, refs: list[Node], originals: list[Node], node: Node):
    """Positional argument nodes for a primitive call (keywords bound, defaults filled)."""
    pos, kws = _split_nodes(refs, originals)
    if not kws and len(pos) == len(prim.signature.parameters):
        return pos
    bound = prim.signature.bind(*pos, **kws)
    out = []
    for name, p in prim.signature.parameters.items():
        if name in bound.arguments:
            v = bound.arguments[name]
            out.extend(v if p.kind is inspect.Parameter.VAR_POSITIONAL else [v])
        elif p.default is not inspect.Parameter.empty:
            c = Constant(p.default, node.debug.derive())
            c.abstract = constant_abstract(p.default)
            out.append(c)
    return out


def bind_graph_nodes(
    g: Graph, refs: list[Node], originals: list[Node], caller: Graph | None = None
) -> list[Node]:
    """Positional argument nodes for a call to graph `g` from graph `caller`."""
    pos, kws = _split_nodes(refs, originals)
    names = g.param_names
    vararg = g.flags.get("vararg", False)
    kwarg = g.flags.get("kwarg", False)
    if len(pos) == len(names) and not kws and not vararg and not kwarg:
        return pos
    npos = len(names) - g.kwonly - (1 if vararg else 0) - (1 if kwarg else 0)
    values: dict[str, Node] = dict(zip(names[:npos], pos))
    if vararg:
        extra = pos[npos:]
        tup = Apply([Constant(P.make_tuple), *extra], caller)  # type: ignore[arg-type]
        from ..abstract.data import AbstractTuple

        tup.abstract = AbstractTuple(tuple(e.abstract for e in extra))
        tup.inputs[0].abstract = AbstractFunction(frozenset([P.make_tuple]))
        values[names[npos]] = tup
    if kwarg:
        rest = {k: v for k, v in kws.items() if k not in names}
        keys = Constant(tuple(rest))
        keys.abstract = constant_abstract(tuple(rest))
        d = Apply([Constant(P.make_dict), keys, *rest.values()], caller)  # type: ignore[arg-type]
        d.abstract = AbstractDict(tuple(rest), tuple(v.abstract for v in rest.values()))
        d.inputs[0].abstract = AbstractFunction(frozenset([P.make_dict]))
        kws = {k: v for k, v in kws.items() if k in names}
        values[names[-1]] = d
    values.update(kws)
    out = []
    for name in names:
        if name in values:
            out.append(values[name])
        else:
            d = g.defaults[name]
            if not d.is_constant:
                raise MyiaTypeError(
                    f"the default value of {name} in {g.name} must be a constant", error_frames([])
                )
            c = Constant(d.value, d.debug.derive())
            c.abstract = constant_abstract(d.value)
            out.append(c)
    return out


@dataclasses.dataclass(frozen=True)
class TupleDefault:
    """A field's default that is a tuple holding functions (``(np.tanh, relu)``).

    Its items are the constant nodes (`field_default`) and tuples that Myia code writing the
    tuple out would build: a call leaving the field out builds it with ``make_tuple``.
    """

    items: tuple[Any, ...]


def _default_node(value: Any, name: str, owner: str) -> Any:
    from ..frontend.resolve import _holds_functions, to_node

    if type(value) is list and _holds_functions(value):
        raise MyiaTypeError(
            f"the default of {name} is a list holding functions, which Myia takes only as a "
            "tuple: default_factory=lambda: (np.tanh,) (a list literal in Myia code works)",
            error_frames([]),
        )
    if type(value) is tuple and _holds_functions(value):
        items = [_default_node(v, name, owner) for v in value]
        return TupleDefault(
            tuple(i if isinstance(i, (Constant, TupleDefault)) else Constant(i) for i in items)
        )
    if callable(value) and not isinstance(value, type):
        node = to_node(value, name, None, owner)
        if isinstance(node.value, (Graph, Primitive, Operation)):
            return node
    return value


def field_default(cache: dict[tuple[type, str], Any], cls: type, f: dataclasses.Field) -> Any:
    """The default of field `f` of dataclass `cls`: its value, or the nodes of its functions.

    A function default (``act: Callable = np.tanh``, ``field(default_factory=lambda: relu)``)
    is the constant node Myia code naming that function would be
    (`myia.frontend.resolve.to_node`: a parsed graph, a primitive), and a tuple holding
    functions a `TupleDefault`, so that a call leaving the field out is inferred and
    specialized as one passing the function explicitly. It is read once per compilation
    (`cache`, the inferrer's): inference and specialization see the same value and graphs.
    """
    key = (cls, f.name)
    if key not in cache:
        has_default = f.default is not dataclasses.MISSING
        value = f.default if has_default else f.default_factory()  # type: ignore[misc]
        cache[key] = _default_node(value, f"{cls.__name__}.{f.name}", cls.__name__)
    return cache[key]


def bind_record_nodes(
    cls: type,
    refs: list[Node],
    originals: list[Node],
    node: Node,
    cache: dict[tuple[type, str], Any],
    ref: Callable[[Any], Node],
):
    """Field nodes, in order, for a call to dataclass `cls`.

    `ref` gives the specialized node of a default holding functions (`field_default`: a
    constant node, a `TupleDefault`).
    """
    pos, kws = _split_nodes(refs, originals)
    bound = inspect.signature(cls).bind(*pos, **kws)
    out = []
    if is_namedtuple_class(cls):  # (its defaults are values: no default factories)
        for name in field_names(cls):
            if name in bound.arguments:
                out.append(bound.arguments[name])
                continue
            c = Constant(cls._field_defaults[name], node.debug.derive())  # type: ignore[attr-defined]
            c.abstract = broaden(constant_abstract(c.value))
            out.append(c)
        return out
    for f in dataclasses.fields(cls):
        if f.name in bound.arguments:
            out.append(bound.arguments[f.name])
            continue
        value = field_default(cache, cls, f)
        if isinstance(value, (Constant, TupleDefault)):
            out.append(ref(value))
            continue
        c = Constant(value, node.debug.derive())
        c.abstract = broaden(constant_abstract(value))
        out.append(c)
    return out

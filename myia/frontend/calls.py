"""Calls: ``f(a, k=v)``, and calls that spread a tuple or a dict (``f(a, *t, k=v, **d)``).

A call with positional and keyword arguments only is ``f(a, make_kwarg("k", v))``. A call
with a ``*`` or ``**`` argument is ``apply_star(f, args, kws...)``: `args` the tuple of the
positional arguments (``(a,) + t``), and each `kws` a dict of keyword arguments, in order (the
keywords written in the call, and each ``**d``). Type inference knows the tuple's length and
the dicts' keys: it binds them as a call written out (``f(args[0], ..., k=kws["k"])``), so
that defaults, ``*args`` and ``**kwargs`` parameters and keywords bind as in Python
(`myia.infer.engine.Inferrer.star_call`).
"""

from __future__ import annotations

import ast
from typing import Any

from ..ir.clone import Cloner
from ..ir.node import Constant, Graph, Node
from ..operations import ops
from ..primitives import P
from . import partials


def parse_call(fp: Any, block: Any, node: ast.Call) -> Node:
    """The node of call `node` in `block` of function parser `fp`."""
    fn = fp.expr(block, node.func)
    if node.keywords and fn.is_constant and fn.value is P.partial:
        return partials.parse(fp, block, node, fn)
    spread = any(isinstance(a, ast.Starred) for a in node.args) or any(
        kw.arg is None for kw in node.keywords
    )
    if spread:
        return _spread_call(fp, block, node, fn)
    sequences = _sequence_positions(fn)
    args: list[Node] = [
        fp.expr(block, _as_tuple(a) if i in sequences else a) for i, a in enumerate(node.args)
    ]
    if _at_call_site(fn):
        bound = _bind_at_call_site(fp, block, fn.value, args, node)
        if bound is not None:
            # Its body goes where it is called (``jvp(lambda y: x * y, ...)``: the function
            # transformed may be a closure, whose transformation reads its variables there).
            return _inline_at(_variant(fn.value, bound), bound, block.graph, fp.dbg(node))
    by_name = _sequence_names(fn, sequences)
    for kw in node.keywords:
        value = fp.expr(block, _as_tuple(kw.value) if kw.arg in by_name else kw.value)
        args.append(block.apply(P.make_kwarg, kw.arg, value, debug=fp.dbg(kw.value)))
    return block.apply(fn, *args, debug=fp.dbg(node))


def _inline_at(graph: Graph, args: list[Node], into: Graph, call: Any) -> Node:
    """`graph`'s body copied into `into` at the call of debug info `call`: its output.

    The copies keep the call as their site (`myia.ir.node.DebugInfo`): an error in them
    shows the user's line of the call.
    """
    cloner = Cloner()
    out = cloner.inline(graph, args, into)
    site = (call, into.name, graph.name)
    for orig, copy in cloner.nodes.items():
        if copy.graph is into and copy.debug.origin is orig.debug:
            copy.debug.site = site
    return out


def _at_call_site(fn: Node) -> bool:
    """Whether `fn` is a function of Myia's flagged ``at_call_site``, inlined where called."""
    return fn.is_constant and isinstance(fn.value, Graph) and fn.value.flags.get("at_call_site")


def _bind_at_call_site(
    fp: Any, block: Any, graph: Graph, args: list[Node], node: ast.Call
) -> list[Node] | None:
    """One node per parameter of `graph` for call `node` of it (None: bound when inferred).

    Positional arguments, keywords naming positional or keyword-only parameters, constant
    defaults, and a ``*args`` parameter (the tuple of the extra positional arguments) bind
    here; a ``**kwargs`` parameter is bound when inferred.
    """
    if graph.flags.get("kwarg"):
        return None
    vararg = bool(graph.flags.get("vararg"))
    npos = len(graph.parameters) - vararg - graph.kwonly
    params = graph.parameters[:npos]
    if len(args) > len(params) and not vararg:
        return None
    names = [p.debug.name for p in params]
    kwnames = [p.debug.name for p in graph.parameters[npos + vararg :]]
    given: dict[str, Node] = dict(zip(names, args))
    for kw in node.keywords:
        if kw.arg not in (*names, *kwnames) or kw.arg in given:
            return None
        given[kw.arg] = fp.expr(block, kw.value)
    bound = []
    for name in (*names, *kwnames):
        if name in given:
            bound.append(given[name])
        elif isinstance(graph.defaults.get(name), Constant) and not _late(graph, name):
            bound.append(graph.defaults[name])
        else:
            return None
    if vararg:
        bound.insert(npos, block.apply(P.make_tuple, *args[npos:], debug=fp.dbg(node)))
    return [_folded(b) for b in bound]


def _variant(graph: Graph, bound: list[Node]) -> Graph:
    """The graph inlined for `bound`: `graph`, or the variant its ``variants`` flag names.

    The flag ``(name, {value: fn})`` says that where parameter `name` is given the constant
    `value` (``has_aux=True``), function `fn` (of the same parameters) is inlined instead: a
    body with no branch on the option, whose closures read the function transformed where
    it is defined.
    """
    variants = graph.flags.get("variants")
    if variants is None:
        return graph
    name, fns = variants
    names = [p.debug.name for p in graph.parameters]
    given = bound[names.index(name)]
    if not given.is_constant:
        return graph
    for value, fn in fns.items():
        if type(given.value) is type(value) and given.value == value:
            from .parser import parse

            return parse(fn)
    return graph


def _folded(node: Node) -> Node:
    """`node`, or the constant it is when it makes a tuple of constants (``argnums=(0, 1)``).

    The body bound reads it as a constant: a closure it makes does not capture it.
    """
    if not (node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is P.make_tuple):
        return node
    items = [_folded(i) for i in node.inputs[1:]]
    if not all(i.is_constant for i in items):
        return node
    return Constant(tuple(i.value for i in items), node.debug)


def _late(graph: Graph, name: str) -> bool:
    """Whether parameter `name`'s default is computed in the body (`myia.frontend.defaults`)."""
    from .defaults import NOT_GIVEN

    return graph.defaults[name].value is NOT_GIVEN


def _sequence_positions(fn: Node) -> tuple[int, ...]:
    """The positions of the arguments `fn` only reads, sequences (``np.concatenate``'s first)."""
    if fn.is_constant and isinstance(fn.value, Graph):
        return fn.value.flags.get("sequence_argument") or ()
    return ()


def _sequence_names(fn: Node, positions: tuple[int, ...]) -> set[str]:
    """The names of the parameters at `positions`: ``np.tensordot(a, b, axes=[[1], [0]])``."""
    if not positions:
        return set()
    params = fn.value.parameters
    return {params[i].debug.name for i in positions if i < len(params)}


def _as_tuple(a: ast.expr) -> ast.expr:
    """A literal list as a tuple: ``np.concatenate([a, b])`` joins arrays of different shapes.

    Nested literal lists too: ``np.array([[a, b], [c, d]])``.
    """
    if not isinstance(a, ast.List):
        return a
    return ast.copy_location(ast.Tuple(elts=[_as_tuple(e) for e in a.elts], ctx=ast.Load()), a)


def _spread_call(fp: Any, block: Any, node: ast.Call, fn: Node) -> Node:
    """``f(a, *t, b, k=v, **d)``: ``apply_star(f, (a,) + t + (b,), {"k": v}, d)``."""
    parts: list[Node] = []
    pending: list[Node] = []
    for a in node.args:
        if isinstance(a, ast.Starred):
            if pending:
                parts.append(block.apply(P.make_tuple, *pending, debug=fp.dbg(a)))
                pending = []
            parts.append(block.apply(ops.star_tuple, fp.expr(block, a.value), debug=fp.dbg(a)))
        else:
            pending.append(fp.expr(block, a))
    if pending or not parts:
        parts.append(block.apply(P.make_tuple, *pending, debug=fp.dbg(node)))
    args = parts[0]
    for p in parts[1:]:
        args = block.apply(ops.add, args, p, debug=fp.dbg(node))
    dicts: list[Node] = []
    keys: list[str] = []
    values: list[Node] = []
    for kw in node.keywords:
        if kw.arg is not None:
            keys.append(kw.arg)
            values.append(fp.expr(block, kw.value))
            continue
        if keys:
            dicts.append(block.apply(P.make_dict, tuple(keys), *values, debug=fp.dbg(node)))
            keys, values = [], []
        dicts.append(fp.expr(block, kw.value))
    if keys:
        dicts.append(block.apply(P.make_dict, tuple(keys), *values, debug=fp.dbg(node)))
    return block.apply(P.apply_star, fn, args, *dicts, debug=fp.dbg(node))

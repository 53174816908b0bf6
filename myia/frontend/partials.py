"""``functools.partial(f, a, key=v)`` with keywords, lowered to a closure.

A partial application with positional arguments only is the `partial` primitive. One that
binds keywords becomes a closure over the values bound, whose parameters are those of `f`
left free (with their defaults), in order::

    functools.partial(f, a, c=v)    # def f(x, y, z=1.0, c=0.0, d=2.0)
    # becomes (a and v evaluated where the partial is made):
    (lambda $a0, $k_c: lambda y, z=1.0, *, d=2.0: f($a0, y, z, c=$k_c, d=d))(a, v)

As in Python, the parameters after the first one bound by a keyword are keyword-only.

`f` must be a function known at compile time (its parameters are read when parsing).
"""

from __future__ import annotations

import ast
from typing import Any

from ..ir.node import Graph


def parse(fp: Any, block: Any, node: ast.Call, fn: Any) -> Any:
    """Parse call `node` of ``functools.partial`` with keywords, in `block` of parser `fp`."""
    if not node.args:
        raise fp.error(node, "functools.partial needs a function")
    target = fp.expr(block, node.args[0])
    if not (target.is_constant and isinstance(target.value, Graph)):
        raise fp.error(
            node,
            "functools.partial with keyword arguments needs a function known at compile time",
        )
    g = target.value
    if g.flags.get("vararg") or any(kw.arg is None for kw in node.keywords):
        raise fp.error(node, "functools.partial with keywords of a function taking *args")
    names = g.param_names
    npos = len(names) - g.kwonly
    bound = node.args[1:]
    keys = [kw.arg for kw in node.keywords]
    for k in keys:
        if k not in names or names.index(k) < len(bound):
            raise fp.error(node, f"{g.name}() got an unexpected keyword argument {k!r}")
    # As in Python, positional arguments fill the parameters up to the first one bound by a
    # keyword; the parameters after it can only be given by keyword.
    first = min(names.index(k) for k in keys)
    free = names[len(bound) : min(first, npos)]
    after = [n for n in names[first:] if n not in keys]
    pos_names = [f"$a{i}" for i in range(len(bound))]
    key_names = [f"$k_{k}" for k in keys]
    defaults = [_default(fp, node, g, n) for n in free]
    while defaults and defaults[0] is None:
        defaults.pop(0)
    if None in defaults:
        raise fp.error(node, f"a parameter of {g.name} without a default follows one with")
    call = ast.Call(
        func=ast.Constant(value=g),
        args=[*(_load(n) for n in pos_names), *(_load(n) for n in free)],
        keywords=[
            *(ast.keyword(arg=k, value=_load(n)) for k, n in zip(keys, key_names)),
            *(ast.keyword(arg=n, value=_load(n)) for n in after),
        ],
    )
    args = _arguments(free, defaults)
    args.kwonlyargs = [ast.arg(arg=n) for n in after]
    args.kw_defaults = [_default(fp, node, g, n) for n in after]
    inner = ast.Lambda(args=args, body=call)
    outer = ast.FunctionDef(
        name="<partial>",
        args=_arguments([*pos_names, *key_names], []),
        body=[ast.Return(value=inner)],
        decorator_list=[],
        returns=None,
        type_params=[],
    )
    for n in ast.walk(outer):
        if "lineno" in n._attributes and not hasattr(n, "lineno"):
            ast.copy_location(n, node)
    graph = Graph(f"{fp.graph.name}:partial", fp.loc(node))
    fp.parse_nested(outer, block, graph)
    args = [fp.expr(block, a) for a in bound] + [fp.expr(block, kw.value) for kw in node.keywords]
    return block.apply(graph, *args, debug=fp.dbg(node))


def _default(fp: Any, node: ast.Call, g: Graph, name: str) -> ast.expr | None:
    d = g.defaults.get(name)
    if d is None:
        return None
    if not d.is_constant:
        raise fp.error(node, f"the default of {name!r} in {g.name} must be a constant")
    return ast.Constant(value=d.value)


def _load(name: str) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Load())


def _arguments(names: list[str], defaults: list[ast.expr]) -> ast.arguments:
    return ast.arguments(
        posonlyargs=[],
        args=[ast.arg(arg=n) for n in names],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=defaults,
    )

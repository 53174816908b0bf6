"""Comprehensions and generator expressions, lowered to loops.

A comprehension is a function of its own in Python 3 (its loop variables do not leak), whose
first iterable is evaluated in the enclosing scope. Myia lowers it to exactly that: a nested
function holding ``for`` loops that fold the elements into an accumulator, called on the first
iterable. ``[f(x) for x in xs if p(x)]`` becomes::

    def <listcomp>($src):
        $acc = []
        for x in $src:
            if p(x):
                $acc = $acc + [f(x)]
        return $acc
    <listcomp>(xs)

The loops are ordinary loops of the IR (a run-time bound stays a run-time bound). What is
accumulated depends on the comprehension:

- a list comprehension gives a list;
- a generator expression gives a tuple when it has one ``for``, no ``if`` and iterates over
  something whose length is known at compile time (a tuple, or ``zip``/``enumerate`` of
  tuples), and a list otherwise; ``sum``, ``max``, ``tuple``... consume it like any sequence
  (it is evaluated eagerly);
- a dict comprehension gives a dict; as every dict of Myia, its keys must be known at compile
  time (it iterates over a dict's items or a tuple of distinct constants, such as strings;
  a `range` or a tuple of integers is a loop, whose keys are not constants).

Set comprehensions are rejected (Myia has no sets).
"""

from __future__ import annotations

import ast
from typing import Any

COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

ACC = "$acc"
SRC = "$src"


def _name(id_: str, ctx: ast.expr_context) -> ast.Name:
    return ast.Name(id=id_, ctx=ctx)


def _call(fn: Any, *args: ast.expr) -> ast.Call:
    """A call of `fn` (a value: a graph or an operation) as an AST node."""
    return ast.Call(func=ast.Constant(value=fn), args=list(args), keywords=[])


def _assign_acc(value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[_name(ACC, ast.Store())], value=value)


def lower(
    node: ast.ListComp | ast.GeneratorExp | ast.DictComp, lib: Any, captured: list[str]
) -> ast.FunctionDef:
    """The function a comprehension stands for, to be called on its first iterable.

    The function takes the first iterable, then the variables of the enclosing function that
    the comprehension reads (`captured`), as parameters: its loops are closed graphs, whose
    accumulator may change type from one iteration to the next (a tuple that grows). `lib`
    maps the names of the library functions the lowering calls (``comp_start``, ``comp_add``,
    ``comp_end``, ``dict_comp_add``, ``dict_comp_make``) to their values.
    """
    gens = node.generators
    if isinstance(node, ast.ListComp):
        start: ast.expr = ast.List(elts=[], ctx=ast.Load())
        add: ast.stmt = _assign_acc(
            ast.BinOp(
                left=_name(ACC, ast.Load()),
                op=ast.Add(),
                right=ast.List(elts=[node.elt], ctx=ast.Load()),
            )
        )
        result: ast.expr = _name(ACC, ast.Load())
    elif isinstance(node, ast.GeneratorExp):
        add = _assign_acc(_call(lib["comp_add"], _name(ACC, ast.Load()), node.elt))
        if len(gens) == 1 and not gens[0].ifs:
            start = _call(lib["comp_start"], _name(SRC, ast.Load()))
            result = _call(lib["comp_end"], _name(ACC, ast.Load()), _name(SRC, ast.Load()))
        else:
            start = ast.List(elts=[], ctx=ast.Load())
            result = _name(ACC, ast.Load())
    else:
        start = ast.Tuple(
            elts=[ast.Tuple(elts=[], ctx=ast.Load()), ast.Tuple(elts=[], ctx=ast.Load())],
            ctx=ast.Load(),
        )
        add = _assign_acc(
            _call(lib["dict_comp_add"], _name(ACC, ast.Load()), node.key, node.value)
        )
        result = _call(lib["dict_comp_make"], _name(ACC, ast.Load()))
    body: list[ast.stmt] = [add]
    for i, gen in reversed(list(enumerate(gens))):
        if gen.is_async:
            raise SyntaxError("async comprehensions")
        for cond in reversed(gen.ifs):
            body = [ast.If(test=cond, body=body, orelse=[])]
        source = _name(SRC, ast.Load()) if i == 0 else gen.iter
        body = [ast.For(target=gen.target, iter=source, body=body, orelse=[])]
    kind = {ast.ListComp: "listcomp", ast.GeneratorExp: "genexpr", ast.DictComp: "dictcomp"}
    fdef = ast.FunctionDef(
        name=f"<{kind[type(node)]}>",
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=SRC), *(ast.arg(arg=n) for n in captured)],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body=[_assign_acc(start), *body, ast.Return(value=result)],
        decorator_list=[],
        returns=None,
        type_params=[],
    )
    _locate(fdef, node)
    return fdef


def read_names(node: ast.AST) -> list[str]:
    """The names a comprehension reads and does not bind itself, in order of first use.

    Its first iterable is left out: it is evaluated in the enclosing scope.
    """
    bound = {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    first = node.generators[0].iter  # type: ignore[attr-defined]
    skip = set(map(id, ast.walk(first)))
    out: list[str] = []
    for n in ast.walk(node):
        if (
            isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)
            and id(n) not in skip
            and n.id not in bound
            and n.id not in out
        ):
            out.append(n.id)
    return out


def parse(fp: Any, block: Any, node: ast.expr) -> Any:
    """Parse comprehension `node` in `block` of function parser `fp`: the call of its function."""
    from ..ir.node import Graph
    from .parser import parse as parse_function

    if isinstance(node, ast.SetComp):
        raise fp.error(node, "set comprehensions are not supported by Myia (it has no sets)")
    graph = Graph(f"{fp.graph.name}:{type(node).__name__.lower()}", fp.loc(node))
    captured = [n for n in read_names(node) if fp.binds(n)]
    names = ("comp_start", "comp_add", "comp_end", "dict_comp_add", "dict_comp_make")
    lib = {n: parse_function(getattr(_lib(), n)) for n in names}
    fp.parse_nested(lower(node, lib, captured), block, graph)
    args = [fp.expr(block, node.generators[0].iter)]
    for name in captured:
        args.append(fp.expr(block, ast.copy_location(ast.Name(name, ast.Load()), node)))
    return block.apply(graph, *args, debug=fp.dbg(node))


def _lib() -> Any:
    from ..operations import lib

    return lib


def _locate(new: ast.AST, origin: ast.AST) -> None:
    """Give the nodes made by the lowering the location of the comprehension."""
    for n in ast.walk(new):
        if "lineno" in n._attributes and not hasattr(n, "lineno"):
            ast.copy_location(n, origin)

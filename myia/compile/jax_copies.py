"""Copies of one function in the JAX backend's generated code, made one function.

The optimizer copies a graph where it inlines the graph that makes it: the closure a loop
makes at its exit is a graph per place the exit was inlined at, and the code generator writes
a function (a maker ``mk_g`` and its ``def``) per graph. The copies compute the same thing,
but as Python functions they have different code: where the JAX code joins them (the
backward passes of the exits of a loop, joined after the loop), `jax_skeletons.merge` can only
make them a union, holding the data of every alternative, and a call of the union traces
every copy (each a loop, of loops...) in a ``lax.switch``. The second-order gradient of a
loop with a branch in its body held 4 copies of each backward loop that way, and XLA took
minutes to compile them.

`without_copies` finds the top-level functions of the generated source that are the same
but for their names: the same syntax, their own variables renamed in the order they occur,
the same globals (by value: the types and constants the generator names) and calls of
functions that are copies of one another. This is the coarsest partition that the syntax
refines, computed by refining one class until it is stable (as a minimal automaton is): a
function calling a copy of itself is a copy of a function calling it. Each copy is then
dropped, and its uses call the first function of its class, so that the closures it makes
are closures of one code, which `jax_skeletons.merge` joins as values of one function.
"""

from __future__ import annotations

import ast
from typing import Any

from .. import pyast
from ..records import field_values, is_record_value


def without_copies(source: str, globals_: dict[str, Any], entry: str) -> str:
    """`source` with each top-level function that copies an earlier one replaced by it."""
    tree = pyast.parse(source)
    fns = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    names = {f.name for f in fns}
    taken = names | set(globals_)
    shapes = {f.name: _Shape(f, names, globals_, taken) for f in fns}
    classes = {f.name: 0 for f in fns}
    count = 1
    while True:
        index: dict[Any, int] = {}
        new = {}
        for name, shape in shapes.items():
            key = (classes[name], shape.key, tuple(classes[n] for n in shape.calls))
            new[name] = index.setdefault(key, len(index))
        classes = new
        if len(index) == count:
            break
        count = len(index)
    first: dict[int, str] = {classes[entry]: entry} if entry in classes else {}
    for f in fns:
        first.setdefault(classes[f.name], f.name)
    alias = {f.name: first[classes[f.name]] for f in fns if first[classes[f.name]] != f.name}
    if not alias:
        return source
    tree.body = [s for s in tree.body if not (isinstance(s, ast.FunctionDef) and s.name in alias)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in alias:
            node.id = alias[node.id]
    return ast.unparse(tree) + "\n"


class _Shape:
    """The syntax of a top-level function, its names replaced by what they stand for.

    Its own variables (parameters, names assigned, nested functions and their parameters)
    are numbered in the order they occur; a global is its value (`_value_key`); other names
    (builtins) are themselves; a top-level function is a mark, its name is put in `calls`
    (in order: its class is compared). A function that binds a name of a global or of a
    top-level function (in `taken`) is a class of its own.
    """

    def __init__(
        self, fn: ast.FunctionDef, names: set[str], globals_: dict[str, Any], taken: set[str]
    ):
        self.names, self.globals = names, globals_
        self.own = _bound(fn)
        self.numbers: dict[str, int] = {}
        #: The top-level functions named, in the order they occur.
        self.calls: list[str] = []
        if self.own & taken:
            self.key: Any = ("alone", fn.name)
        else:
            self.key = (self.node(fn.args), self.node(fn.body))

    def name(self, name: str | None) -> Any:
        if name is None:
            return None
        if name in self.own:
            return ("var", self.numbers.setdefault(name, len(self.numbers)))
        if name in self.names:
            self.calls.append(name)
            return ("fn",)
        if name in self.globals:
            return ("global", _value_key(self.globals[name]))
        return ("builtin", name)

    def node(self, node: Any) -> Any:
        if isinstance(node, list):
            return tuple(self.node(x) for x in node)
        if not isinstance(node, ast.AST):
            return _value_key(node)
        if isinstance(node, ast.Name):
            return ("Name", self.name(node.id), type(node.ctx).__name__)
        if isinstance(node, (ast.arg, ast.keyword)):
            rest = [self.node(getattr(node, f)) for f in node._fields if f != "arg"]
            own = node.arg in self.own
            return (type(node).__name__, self.name(node.arg) if own else node.arg, *rest)
        parts: list[Any] = [type(node).__name__]
        for field in node._fields:
            value = getattr(node, field)
            if field == "name" and isinstance(node, (ast.FunctionDef, ast.ExceptHandler)):
                parts.append(self.name(value))
            elif field == "names" and isinstance(node, ast.Nonlocal):
                parts.append(tuple(map(self.name, value)))
            else:
                parts.append(self.node(value))
        return tuple(parts)


def _bound(fn: ast.FunctionDef) -> set[str]:
    """The names `fn` and the functions nested in it bind."""
    out: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.FunctionDef) and node is not fn:
            out.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.Nonlocal):
            out.update(node.names)
    return out


def _value_key(value: Any) -> Any:
    """What `value` is, for comparing constants: equal keys for values that act the same.

    Numbers by type and repr (``0.0`` and ``-0.0`` apart), tuples and frozen dataclasses
    (Myia's abstract types, ranges) by their parts, anything else by identity.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return (type(value), value)
    if isinstance(value, float):
        return (float, repr(value))
    if type(value) is tuple:
        return (tuple, tuple(map(_value_key, value)))
    if is_record_value(value) and (
        isinstance(value, tuple)  # (a named tuple)
        or type(value).__dataclass_params__.frozen  # type: ignore[attr-defined]
    ):
        return (type(value), tuple(_value_key(v) for v in field_values(value)))
    return ("id", id(value))

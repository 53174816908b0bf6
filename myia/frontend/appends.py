"""``xs.append(v)`` on a list the function builds: rebinding, ``xs = list_append(xs, v)``.

Myia's values are immutable, so a list cannot grow in place; but where no other name, data
structure or closure can see the list a function built, growing it and rebinding its name
to a longer list are the same to the program. `rewrite` rewrites such statements before the
function is parsed (so that every analysis of its assignments sees the rebinding); a
statement ``xs.append(v)`` where the two could differ stays, and the parser refuses it with
the reason (`myia.frontend.subset`). The name must be:

- a local variable (not a parameter: the caller's list would not grow), every assignment of
  which is a new list: a list display, a list comprehension, ``list(...)``, or
  ``xs + [...]``;
- never copied as a whole: not the value of another assignment, an element of a tuple, list
  or dict display, nor read by a nested ``def`` or ``lambda`` (Myia's closures capture the
  values variables have where they are defined);
- while it grows (before its last append, or in a loop that appends to it), read only by
  ``xs.append``, ``xs[i]``, ``len(xs)`` and ``xs = xs + [...]``: anything else (a call
  ``f(xs)``, an element of a comprehension ``[xs for ...]``, ``for v in xs``) could keep the
  list, which Python's later appends would grow and Myia's would not.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from .scope import bound_names, walk_scope

#: The functions whose nodes were rewritten: the node given, and its rewritten copy.
_rewritten: dict[int, tuple[ast.AST, ast.AST]] = {}


def append_call(stmt: ast.stmt) -> tuple[str, ast.expr] | None:
    """``(name, value)`` of a statement ``name.append(value)``, else None."""
    if not isinstance(stmt, ast.Expr):
        return None
    call = stmt.value
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "append"
        and isinstance(call.func.value, ast.Name)
        and len(call.args) == 1
        and not isinstance(call.args[0], ast.Starred)
        and not call.keywords
    ):
        return None
    return call.func.value.id, call.args[0]


def _is_new_list(value: ast.expr, name: str) -> bool:
    if isinstance(value, (ast.List, ast.ListComp)):
        return True
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return value.func.id == "list"
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        left = value.left
        return (isinstance(left, ast.Name) and left.id == name) or _is_new_list(left, name)
    return False


def why_not(function: ast.FunctionDef | ast.Lambda, name: str) -> str | None:
    """Why ``name.append(v)`` in `function` may not rebind `name` (None: it may)."""
    args = function.args
    params = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    if name in params:
        return f"{name} is a parameter, the caller's list"
    scope = walk_scope(function.body)
    assigned = False
    appends = [n for n in scope if isinstance(n, ast.stmt) and _appends_to(n, name)]
    last = max(((n.lineno, n.col_offset) for n in appends), default=(0, 0))
    loops = [
        (n.lineno, n.end_lineno or n.lineno)
        for n in scope
        if isinstance(n, (ast.For, ast.While)) and any(_appends_to(s, name) for s in ast.walk(n))
    ]

    def after(n: ast.AST) -> bool:
        """Whether `n` runs after every append to the list (a copy there sees it whole)."""
        line = getattr(n, "lineno", 0)
        return (line, getattr(n, "col_offset", 0)) > last and not any(
            a <= line <= b for a, b in loops
        )

    for n in scope:
        if after(n) and not isinstance(n, (ast.Assign, ast.AnnAssign, ast.For, ast.AugAssign)):
            continue
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if any(isinstance(x, ast.Name) and x.id == name for x in ast.walk(t)):
                    if not (isinstance(t, ast.Name) and _is_new_list(n.value, name)):
                        return f"{name} is assigned a value that may be another list"
                    assigned = True
            if isinstance(n.value, ast.Name) and n.value.id == name and not after(n):
                return f"another name refers to the list {name}"
        elif isinstance(n, (ast.For, ast.AugAssign, ast.NamedExpr)):
            if any(isinstance(x, ast.Name) and x.id == name for x in ast.walk(n.target)):
                return f"{name} is assigned a value that may be another list"
        elif isinstance(n, (ast.Tuple, ast.List, ast.Set)):
            if any(isinstance(e, ast.Name) and e.id == name for e in n.elts):
                return f"a data structure holds the list {name}"
        elif isinstance(n, ast.Dict):
            if any(isinstance(e, ast.Name) and e.id == name for e in n.values):
                return f"a data structure holds the list {name}"
        elif isinstance(n, (ast.FunctionDef, ast.Lambda)):
            if _reads(n, name):
                return f"a nested function reads {name}"
    if not assigned:
        return f"{name} is not a list this function builds"
    for n in _whole_reads(function, name):
        if not after(n):
            return f"{name} is read as a whole while it grows (line {n.lineno})"
    return None


def _whole_reads(function: ast.FunctionDef | ast.Lambda, name: str) -> list[ast.Name]:
    """The reads of `name` in `function` that may keep the list itself.

    All but ``name.append``, ``name[i]``, ``len(name)`` and ``name = name + [...]``, in the
    function's comprehensions too (nested functions are `_reads`'s).
    """
    parents: dict[ast.AST, ast.AST] = {}
    reads: list[ast.Name] = []
    stack: list[ast.AST] = [function]
    while stack:
        node = stack.pop()
        if node is not function and isinstance(node, (ast.FunctionDef, ast.Lambda)):
            continue
        for child in ast.iter_child_nodes(node):
            parents[child] = node
            stack.append(child)
            if isinstance(child, ast.Name) and child.id == name:
                if isinstance(child.ctx, ast.Load):
                    reads.append(child)

    def keeps_nothing(n: ast.Name) -> bool:
        p = parents.get(n)
        if isinstance(p, ast.Attribute) and p.attr == "append":
            return True
        if isinstance(p, ast.Subscript) and p.value is n:
            return True
        if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "len":
            return True
        if isinstance(p, ast.BinOp) and p.left is n:  # xs = xs + [...]
            top = parents.get(p)
            return isinstance(top, ast.Assign) and all(
                isinstance(t, ast.Name) and t.id == name for t in top.targets
            )
        return False

    return [n for n in reads if not keeps_nothing(n)]


def _appends_to(stmt: ast.AST, name: str) -> bool:
    found = append_call(stmt) if isinstance(stmt, ast.stmt) else None
    return found is not None and found[0] == name


def _reads(function: ast.FunctionDef | ast.Lambda, name: str) -> bool:
    """Whether `function`, nested, reads the enclosing function's variable `name`."""
    args = function.args
    params = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    body = function.body if isinstance(function.body, list) else [function.body]
    if name in params or name in bound_names(walk_scope(body)):
        return False  # a local variable of its own
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        for stmt in body
        for n in ast.walk(stmt)
    )


def rewrite(function: Any, list_append: Any) -> Any:
    """`function` (an AST node) with ``xs.append(v)`` written ``xs = list_append(xs, v)``.

    Only the statements that may rebind ``xs`` (`why_not`) are rewritten, on a copy of the
    node; `function` itself is returned where there is none.
    """
    if not any(append_call(n) is not None for n in ast.walk(function) if isinstance(n, ast.stmt)):
        return function
    cached = _rewritten.get(id(function))
    if cached is not None and cached[0] is function:
        return cached[1]
    new = copy.deepcopy(function)
    _rewrite_scope(new, list_append)
    _rewritten[id(function)] = (function, new)
    return new


def _rewrite_scope(function: Any, list_append: Any) -> None:
    """Rewrite the statements of `function`'s own scope, then those of its nested functions."""
    if not isinstance(function.body, list):
        return  # a lambda: no statements
    allowed: dict[str, bool] = {}
    lists = [function.body]
    for n in walk_scope(function.body):
        if isinstance(n, ast.FunctionDef):
            _rewrite_scope(n, list_append)
        elif isinstance(n, ast.stmt):
            lists += [
                getattr(n, f) for f in ("body", "orelse") if isinstance(getattr(n, f, None), list)
            ]
    for stmts in lists:
        for k, stmt in enumerate(stmts):
            found = append_call(stmt)
            if found is None:
                continue
            name, value = found
            if name not in allowed:
                allowed[name] = why_not(function, name) is None
            if allowed[name]:
                stmts[k] = _assignment(stmt, name, value, list_append)


def _assignment(stmt: ast.stmt, name: str, value: ast.expr, list_append: Any) -> ast.Assign:
    call = stmt.value  # type: ignore[attr-defined]
    new_call = ast.Call(
        func=ast.Constant(value=list_append),
        args=[ast.Name(id=name, ctx=ast.Load()), value],
        keywords=[],
    )
    ast.copy_location(new_call, call)
    target = ast.Name(id=name, ctx=ast.Store())
    ast.copy_location(target, call.func.value)
    out = ast.Assign(targets=[target], value=new_call)
    return ast.copy_location(out, stmt)

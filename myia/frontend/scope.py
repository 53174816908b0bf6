"""The scope of a function being parsed: the AST nodes of its own body, and the names it binds.

A nested ``def`` or ``lambda`` is a scope of its own; a comprehension too, but for its first
iterable (evaluated where the comprehension is written).
"""

from __future__ import annotations

import ast

from . import comprehensions


def walk_scope(body: list[ast.stmt] | ast.expr) -> list[ast.AST]:
    """Return the AST nodes of one function's own scope (nested functions' bodies excluded)."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(body)) if isinstance(body, list) else [body]
    while stack:
        n = stack.pop()
        out.append(n)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(n, comprehensions.COMPREHENSIONS):
            # Its own scope, but for its first iterable (evaluated where it is written).
            stack.append(n.generators[0].iter)
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(n))))
    return out


def bound_names(scope: list[ast.AST]) -> list[str]:
    """Every binding of a name in a scope, in order (repetitions kept)."""
    out = []
    for n in scope:
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.append(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(n.name)
    return out


def attribute_chain(node: ast.expr) -> str | None:
    """``"a.b.c"`` for the expression ``a.b.c``, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])

"""Closures that would read a variable after it is assigned again: refused.

Myia's closures capture the values variables have where the closure is defined; Python's
read them when it is called. The two agree unless the enclosing function assigns a variable
the closure reads and then uses the closure again, without defining it anew:

    def f(x):                        for _ in range(3):          # g used in a loop that
        v = x                            v = g(1.0) + v          # assigns v
        def g(a):
            return a * v
        v = v + 1.0
        return g(1.0)                # Python reads the new v

`check(fn_node)` finds such a use in a function's body and returns it with a message, so
that the parser raises `MyiaSyntaxError` at the user's line instead of computing with the
old value (each function's body is checked when it is parsed, nested ones too).
"""

from __future__ import annotations

import ast
from typing import Any

from .scope import walk_scope

LOOPS = (ast.For, ast.While)


def _params(node: ast.FunctionDef | ast.Lambda) -> set[str]:
    a = node.args
    names = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    names |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    return names


def _free_reads(node: ast.FunctionDef | ast.Lambda) -> set[str]:
    """The names a function (and the functions in it) reads and does not bind itself."""
    body = node.body if isinstance(node, ast.FunctionDef) else [node.body]
    own = _params(node) | _stores(body)
    reads: set[str] = set()
    for n in walk_scope(body):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            reads.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.Lambda)) and n is not node:
            reads |= _free_reads(n)
    return reads - own


def _stores(body: list[ast.stmt] | list[ast.expr]) -> set[str]:
    """The names a scope binds (nested functions' own bindings excluded)."""
    out: set[str] = set()
    for n in walk_scope(body):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, ast.FunctionDef):
            out.add(n.name)
    return out


def _uses(stmt: ast.AST, name: str) -> ast.Name | None:
    """The first read of `name` in `stmt` (in its own scope or in a function it defines)."""
    for n in ast.walk(stmt):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
            return n
    return None


def _closures(stmt: ast.stmt) -> list[tuple[str, ast.AST]]:
    """The closures `stmt` names: ``def g`` and ``g = lambda ...``."""
    if isinstance(stmt, ast.FunctionDef):
        return [(stmt.name, stmt)]
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Lambda)
    ):
        return [(stmt.targets[0].id, stmt.value)]
    return []


def _late_use(stmts: list[ast.stmt], g: str, free: set[str], changed: set[str]):
    """A read of closure `g` in `stmts` after one of `free` is assigned again.

    `changed`: the names of `free` assigned since `g` was defined. Returns ``(use, name)``
    or ``(None, changed)`` with the names changed at the end of `stmts`.
    """
    changed = set(changed)
    for s in stmts:
        if g in _stores([s]) and not isinstance(s, (ast.If, *LOOPS)):
            return None, set()  # `g` is another closure from here on
        assigned = _stores([s]) & free
        if isinstance(s, ast.If):
            after: set[str] = set(changed)
            for arm in (s.body, s.orelse):
                use, out = _late_use(arm, g, free, changed)
                if use is not None:
                    return use, out
                after |= out
            changed = after
            continue
        if isinstance(s, LOOPS) and assigned and g not in _stores(s.body):
            use = _uses(s, g)
            if use is not None:  # a later iteration reads the new value
                return use, sorted(assigned)[0]
        if changed:
            use = _uses(s, g)
            if use is not None:
                return use, sorted(changed)[0]
        changed |= assigned
    return None, changed


def check(node: ast.FunctionDef | ast.Lambda) -> tuple[ast.Name, str] | None:
    """``(use, message)``: a use of a closure after a variable it reads changed, or None."""
    if isinstance(node, ast.Lambda):
        return None
    scope = walk_scope(node.body)
    bodies = [node.body]
    bodies += [b for n in scope if isinstance(n, (*LOOPS, ast.If)) for b in (n.body, n.orelse)]
    stores = [n for n in scope if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    for body in bodies:
        for k, s in enumerate(body):
            for g, fn in _closures(s):
                # (A variable with no value yet where `g` is defined: the parser's error.)
                before = _params(node) | {n.id for n in stores if n.lineno < s.lineno}
                free = _free_reads(fn) & _stores(node.body) & before
                if not free:
                    continue
                use, name = _late_use(body[k + 1 :], g, free, set())
                if use is not None:
                    return use, _message(g, name)
    return None


def loop_reads(node: ast.FunctionDef | ast.Lambda, fp: Any) -> list[str]:
    """The variables that function `node` reads and that a loop it is defined in assigns.

    `fp` is the parser of the function `node` is defined in (its enclosing parsers hold the
    loops being parsed). A closure made in one iteration of such a loop and kept for a
    later one (``fs = fs + [lambda v: v * k]``, ``[lambda v: v * k for k in ...]``) would
    read, in Python, the values of the later iteration; inference refuses it
    (`myia.infer.loop_types`). Defaults (``lambda v, k=k: ...``) are read where the
    function is defined, in Myia as in Python: they are not reads.
    """
    names = _free_reads(node)
    out: set[str] = set()
    while fp is not None and names:
        for loop in fp.loop_stmts:
            out |= names & _stores([loop])
        names = {n for n in names if not fp.is_local(n)}
        fp = fp.parent
    return sorted(out)


def _message(g: str, name: str) -> str:
    return (
        f"{g} reads {name!r}, which is assigned again after {g} is defined, and {g} is used "
        "after that: Myia closures capture the values variables have where they are defined, "
        f"not when called (pass {name!r} as an argument, or define {g} again after assigning "
        f"{name!r})"
    )

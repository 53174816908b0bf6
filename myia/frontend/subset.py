"""What is outside the subset of Python that Myia compiles, and how to say so.

The parser raises a `MyiaSyntaxError` at the line of any statement or expression it has no
rule for; this module names the common ones, and recognizes the mutation of lists, dicts and
sets written as a method call statement (``xs.append(v)``), with the functional form to use.
"""

from __future__ import annotations

import ast

UNSUPPORTED_STATEMENTS: dict[type, str] = {
    ast.Global: "global declarations",
    ast.Nonlocal: "nonlocal declarations",
    ast.Try: "try statements",
    ast.With: "with statements",
    ast.AsyncWith: "async with statements",
    ast.AsyncFor: "async for loops",
    ast.AsyncFunctionDef: "async functions",
    ast.ClassDef: "class definitions inside a function",
    ast.Import: "import statements",
    ast.ImportFrom: "import statements",
    ast.Delete: "del statements",
    ast.Match: "match statements",
}
if hasattr(ast, "TryStar"):
    UNSUPPORTED_STATEMENTS[ast.TryStar] = "try statements"

# Methods of lists, dicts and sets that mutate them, and how to write the same in Myia.
MUTATING_METHODS: dict[str, str] = {
    "append": "write {obj} = {obj} + [value]",
    "extend": "write {obj} = {obj} + values",
    "insert": "build a new list with + and slices",
    "remove": "build a new list",
    "pop": "read the item and build a new list or dict without it",
    "clear": "assign an empty value",
    "sort": "build a sorted copy",
    "reverse": "write {obj} = {obj}[::-1]",
    "update": "build a new dict",
    "setdefault": "build a new dict",
    "popitem": "build a new dict",
    "add": "build a new value",
    "discard": "build a new value",
}


def mutating_call_message(statement: ast.expr) -> str | None:
    """Return the error for an expression statement ``obj.append(v)``, or None if it is not one.

    Only the names of the methods that mutate a list, dict or set are recognized: the result
    of the statement is discarded, so it could only be meant for its effect on ``obj``, which
    Myia's values (immutable) cannot have.
    """
    if not (isinstance(statement, ast.Call) and isinstance(statement.func, ast.Attribute)):
        return None
    method = statement.func.attr
    if method not in MUTATING_METHODS:
        return None
    return mutation_message(ast.unparse(statement.func.value), method)


def mutation_message(obj: str, method: str) -> str:
    """The error for ``obj.method(...)``, a method that mutates a list, dict or set."""
    hint = MUTATING_METHODS[method].format(obj=obj)
    return (
        f"{obj}.{method}(...) mutates {obj}, which Myia does not allow "
        f"(values are immutable): {hint}"
    )

"""Where a Python function's source is: the AST node its code object was compiled from.

The node is found from the code object alone (file, first line, columns), never from the
function's name: see `find_code`.
"""

from __future__ import annotations

import ast
import linecache
import types

from .. import pyast
from ..errors import MyiaSyntaxError, at
from ..ir.node import Location


def no_source_error(
    fn: types.FunctionType, location: Location | None = None, function: str = "<module>"
) -> MyiaSyntaxError:
    """The error for a function whose source Python cannot find.

    Myia compiles a function from its source: one made by ``exec`` or ``eval``, or typed in
    an interactive session, cannot be compiled. The error points at `location` (where the
    function is used), or else at the function's first line.
    """
    code = fn.__code__
    frames = (
        at(location, function)
        if location
        else at(Location(code.co_filename, code.co_firstlineno), fn.__name__)
    )
    return MyiaSyntaxError(
        f"Myia needs the source code of {fn.__qualname__} to compile it, and Python cannot "
        f"find it (defined in {code.co_filename}: by exec or eval, or in an interactive "
        "session?); define the function in a file",
        frames,
    )


_module_asts: dict[str, tuple[list[str], ast.Module | None]] = {}


def module_ast(filename: str) -> ast.Module | None:
    """The AST of source file `filename` (as `linecache` has it), or None without a source.

    Parsed once per version of the file's text (notebook cells are in `linecache` too).
    """
    linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    if not lines:
        return None
    cached = _module_asts.get(filename)
    if cached is not None and cached[0] == lines:
        return cached[1]
    try:
        tree: ast.Module | None = pyast.parse("".join(lines), filename)
    except (SyntaxError, ValueError):
        tree = None
    _module_asts[filename] = (list(lines), tree)
    return tree


def find_code(tree: ast.Module, code: types.CodeType) -> ast.AST | None:
    """The ``def`` or ``lambda`` of `tree` that `code` was compiled from, or None."""
    line = code.co_firstlineno
    if code.co_name != "<lambda>":
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == code.co_name:
                first = n.decorator_list[0].lineno if n.decorator_list else n.lineno
                if line in (first, n.lineno):
                    return n
        return None
    spans = [
        (a, b, c, d)
        for a, b, c, d in code.co_positions()
        if None not in (a, b, c, d) and (a, c) < (b, d)
    ]
    best = None
    for n in ast.walk(tree):
        if not isinstance(n, ast.Lambda) or n.lineno != line:
            continue
        body = n.body
        start = (body.lineno, body.col_offset)
        end = (body.end_lineno, body.end_col_offset)
        if all(start <= (a, c) and (b, d) <= end for a, b, c, d in spans):
            if best is None or start >= (best.body.lineno, best.body.col_offset):
                best = n
    return best

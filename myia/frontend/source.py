"""Where a Python function's source is: the AST node its code object was compiled from.

The node is found from the code object alone (file, first line, columns), never from the
function's name: see `find_code`.
"""

from __future__ import annotations

import ast
import linecache
import os
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
_MYIA_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def module_ast(filename: str) -> ast.Module | None:
    """The AST of source file `filename` (as `linecache` has it), or None without a source.

    Parsed once per version of the file's text (notebook cells are in `linecache` too).
    Myia's own files are read once: they do not change while Myia runs.
    """
    if not (filename.startswith(_MYIA_DIR) and filename in _module_asts):
        linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    if not lines:
        return None
    cached = _module_asts.get(filename)
    if cached is not None and cached[0] == lines:
        return cached[1]
    if cached is not None:
        _indexes.pop(id(cached[1]), None)  # the file changed: its old AST's index goes
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
        # The module's own statements first (`ast.walk` meets them before any nested node):
        # most functions are defined there, and need no walk.
        for n in tree.body:
            if _defines(n, code.co_name, line):
                return n
        for n in _index(tree)[0].get(code.co_name, ()):
            if _defines(n, code.co_name, line):
                return n
        return None
    lambdas = _index(tree)[1]
    spans = [
        (a, b, c, d)
        for a, b, c, d in code.co_positions()
        if None not in (a, b, c, d) and (a, c) < (b, d)
    ]
    best = None
    for n in lambdas.get(line, ()):
        body = n.body
        start = (body.lineno, body.col_offset)
        end = (body.end_lineno, body.end_col_offset)
        if all(start <= (a, c) and (b, d) <= end for a, b, c, d in spans):
            if best is None or start >= (best.body.lineno, best.body.col_offset):
                best = n
    return best


def _defines(n: ast.AST, name: str, line: int) -> bool:
    """Whether `n` is the ``def`` of `name` whose code starts at `line` (first decorator's)."""
    if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) or n.name != name:
        return False
    first = n.decorator_list[0].lineno if n.decorator_list else n.lineno
    return line in (first, n.lineno)


#: By module AST (its id, the AST kept alive with it): its ``def``s by name and its lambdas by
#: line, in the order of `ast.walk`. `find_code` runs for every function parsed, and walking
#: the whole module each time was a tenth of the parser's time.
_indexes: dict[int, tuple[ast.Module, dict[str, list], dict[int, list]]] = {}


def _index(tree: ast.Module) -> tuple[dict[str, list], dict[int, list]]:
    cached = _indexes.get(id(tree))
    if cached is not None and cached[0] is tree:
        return cached[1], cached[2]
    defs: dict[str, list] = {}
    lambdas: dict[int, list] = {}
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault(n.name, []).append(n)
        elif isinstance(n, ast.Lambda):
            lambdas.setdefault(n.lineno, []).append(n)
    _indexes[id(tree)] = (tree, defs, lambdas)
    return defs, lambdas

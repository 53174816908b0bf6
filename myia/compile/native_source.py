"""The source of the native backend's module: helper templates, checked math, the disk cache.

`myia.compile.native_backend` writes the loops it outlines; this module writes what they
call (typed stacks, ``math`` and Python-int arithmetic that raise where Python does), checks
the code of a loop before it is outlined (`_Kernel`), and says where modules are cached.
"""

from __future__ import annotations

import ast
import atexit
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..abstract.data import AbstractScalar, AbstractTuple
from .native_arena import arena_helper_source

#: Version of the layout of the generated native modules (part of the cache key).
_FORMAT = "myia-native-2"

#: The options of every compiled function: Python's exceptions on division by zero.
_JIT = 'njit(cache=True, error_model="python", nogil=True)'

#: The helpers (stack operations, checked math): inlined into the loops by Numba, which then
#: drops the tuples and reference counts of a stack between two pushes (and compiles faster).
_INLINE = 'njit(cache=True, error_model="python", nogil=True, inline="always")'

#: Names the machine code may read besides its own helpers and arguments.
_BUILTINS = {
    "abs",
    "bool",
    "float",
    "int",
    "min",
    "max",
    "True",
    "False",
    "None",
    "AssertionError",
    "RecursionError",
}

#: The checked arithmetic, as host code (Python ints do not overflow) and as machine code.
_INT_HOST = """
def _iadd(a, b):
    return a + b

def _isub(a, b):
    return a - b

def _imul(a, b):
    return a * b

def _ineg(a):
    return -a

def _iabs(a):
    return abs(a)

def _istep(a, c):
    return a + c
"""

_INT_NATIVE = """
@{jit}
def _iadd(a, b):
    if abs(float(a) + float(b)) > 9.2e18:
        raise OverflowError("int64")
    return a + b

@{jit}
def _isub(a, b):
    if abs(float(a) - float(b)) > 9.2e18:
        raise OverflowError("int64")
    return a - b

@{jit}
def _imul(a, b):
    if abs(float(a) * float(b)) > 9.2e18:
        raise OverflowError("int64")
    return a * b

@{jit}
def _ineg(a):
    if a == -9223372036854775807 - 1:
        raise OverflowError("int64")
    return -a

@{jit}
def _iabs(a):
    if a == -9223372036854775807 - 1:
        raise OverflowError("int64")
    return abs(a)

@{jit}
def _istep(a, c):
    if c > 0 and a > 9223372036854775807 - c or c < 0 and a < -9223372036854775807 - 1 - c:
        raise OverflowError("int64")
    return a + c
"""

#: The checked helpers of arithmetic on Python ints (their results are Python ints too).
INT_HELPERS = frozenset(["_iadd", "_isub", "_imul", "_ineg", "_iabs", "_istep"])


#: The directory that stands for a cache turned off, made at first use.
_PRIVATE: Path | None = None


def cache_dir() -> Path:
    """The directory of Myia's disk cache (``MYIA_CACHE_DIR``, default ``~/.cache/myia``).

    ``MYIA_CACHE_DIR=`` (empty) turns the cache off: machine code then goes to a directory
    of this process's own, which nothing reads again.
    """
    env = os.environ.get("MYIA_CACHE_DIR")
    if env:
        return Path(env)
    if env == "":
        global _PRIVATE
        if _PRIVATE is None:
            _PRIVATE = Path(tempfile.mkdtemp(prefix="myia-native-"))
            atexit.register(shutil.rmtree, _PRIVATE, True)
        return _PRIVATE
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "myia"


def _weak_leaf(a: Any) -> bool:
    return isinstance(a, AbstractScalar) and a.weak and a.dtype in ("float64", "int64", "bool")


def _leaves(a: Any, path: str, out: list[tuple[str, str]]) -> bool:
    """Collect the leaves of element type `a` as ``(access path, dtype)``; False if not flat."""
    if _weak_leaf(a):
        out.append((path, a.dtype))
        return True
    if isinstance(a, AbstractTuple):
        return all(_leaves(e, f"{path}[{i}]", out) for i, e in enumerate(a.elements))
    return False


def stack_helper_source(k: int, element: Any, whole: bool = False) -> str:
    """The source of ``_snew_k``, ``_spush_k`` and ``_spop_k``: stacks of `element` values.

    A stack is a pair or a triple whose second item is its height `n`. Of Python floats
    only, it is ``(buffer, n)``: one 2-D array whose row 0 holds, in its first cell, how far
    the buffer was written (shared by the versions of the buffer), and whose rows 1 to `n`
    the stack, one column per leaf: in machine code a loop then carries one array, whose
    reference count Numba leaves alone. Otherwise it is ``(arrays, n, used)`` (`_arrays_source`).
    A push on an older version, or on a full buffer, copies to a buffer of twice the size
    (``_sgrow_k``, apart: a push that writes in place returns the buffer it was given, so that
    a loop's machine code counts no reference to it). With `whole` (the machine code of a
    whole program), a stack is a region of the program's arena instead
    (`myia.compile.native_arena`).
    """
    leaves: list[tuple[str, str]] = []
    _leaves(element, "x", leaves)
    if whole:
        return arena_helper_source(k, element, leaves)
    if any(d != "float64" for _, d in leaves):
        return _arrays_source(k, element, leaves)
    m = len(leaves)
    width = max(m, 1)  # the header's column, also for elements of no leaf (empty tuples)
    write = "\n".join(f"    buf[n + 1, {i}] = {p}" for i, (p, _) in enumerate(leaves))
    grown = write.replace("buf[", "new[")

    def rebuild(t: Any, it: Any) -> str:
        if isinstance(t, AbstractTuple):
            return "(" + "".join(rebuild(e, it) + ", " for e in t.elements) + ")"
        return f"float(buf[n, {next(it)}])"

    top = rebuild(element, iter(range(m)))
    return (
        f"def _snew_{k}():\n    return (np.zeros((1, {width}), np.float64), 0)\n\n"
        f"def _sgrow_{k}(s, x):\n    buf, n = s\n    cap = max(8, 2 * n)\n"
        f"    new = np.zeros((cap + 1, {width}), np.float64)\n"
        f"    if n > 0:\n        new[1 : n + 1] = buf[1 : n + 1]\n"
        f"{grown}\n    new[0, 0] = n + 1\n    return (new, n + 1)\n\n"
        f"def _spush_{k}(s, x):\n    buf, n = s\n"
        f"    if buf[0, 0] != n or n + 1 == buf.shape[0]:\n        return _sgrow_{k}(s, x)\n"
        f"{write}\n    buf[0, 0] = n + 1\n    return (s[0], n + 1)\n\n"
        f"def _spop_{k}(s):\n    buf, n = s\n    if n == 0:\n"
        f"        raise IndexError('pop from an empty stack')\n"
        f"    return ({top}, (buf, n - 1))\n"
    )


def _arrays_source(k: int, element: Any, leaves: list[tuple[str, str]]) -> str:
    """The source of ``_snew_k``, ``_spush_k`` and ``_spop_k``: stacks of `element` values.

    A stack is ``(arrays, n, used)``: one array per leaf of the element, its first `n` rows
    the stack; `used` (shared by the versions of a buffer) says how far it was written, and
    a push on an older version, or on a full buffer, copies to a buffer of twice the size.
    """
    m = len(leaves)
    arrs = ", ".join(f"a{i}" for i in range(m)) + ","
    conv = {"float64": "float", "int64": "int", "bool": "bool"}
    dt = {"float64": "np.float64", "int64": "np.int64", "bool": "np.bool_"}
    grow = "\n".join(
        f"    b{i} = np.empty(cap, {dt[d]})\n    if n > 0:\n        b{i}[:n] = a{i}[:n]\n"
        f"    b{i}[n] = {p}"
        for i, (p, d) in enumerate(leaves)
    )
    news = ", ".join(f"b{i}" for i in range(m)) + ","
    write = "\n".join(f"    a{i}[n] = {p}" for i, (p, _) in enumerate(leaves))

    def rebuild(t: Any, it: Any) -> str:
        if isinstance(t, AbstractTuple):
            return "(" + "".join(rebuild(e, it) + ", " for e in t.elements) + ")"
        i, d = next(it)
        return f"{conv[d]}(a{i}[n])"

    top = rebuild(element, iter(enumerate(d for _, d in leaves)))
    empty = ", ".join(f"np.empty(0, {dt[d]})" for _, d in leaves) + ","
    return (
        f"def _snew_{k}():\n    return (({empty}), 0, np.zeros(1, np.int64))\n\n"
        f"def _sgrow_{k}(s, x):\n    data, n, used = s\n    {arrs} = data\n"
        f"    cap = max(8, 2 * n)\n{grow}\n    used = np.zeros(1, np.int64)\n"
        f"    used[0] = n + 1\n    return (({news}), n + 1, used)\n\n"
        f"def _spush_{k}(s, x):\n    data, n, used = s\n    {arrs} = data\n"
        f"    if used[0] != n or n == a0.shape[0]:\n        return _sgrow_{k}(s, x)\n"
        f"{write}\n    used[0] = n + 1\n    return (s[0], n + 1, s[2])\n\n"
        f"def _spop_{k}(s):\n    data, n, used = s\n    if n == 0:\n"
        f"        raise IndexError('pop from an empty stack')\n    {arrs} = data\n"
        f"    n -= 1\n    return ({top}, (data, n, used))\n"
    )


_DEF = re.compile(r"^\s*def \w+\((.*)\):$")
_ASSIGN = re.compile(r"^\s*([\w, ]+?),? = ")
_WALRUS = re.compile(r"\((\w+) :=")
_WORD = re.compile(r"\b[A-Za-z_]\w*\b")


class _Kernel(ast.NodeTransformer):
    """Checks the names an outlined loop reads, and makes its math raise where Python's does.

    A small constant added to a Python int, a loop counter's step (``k + 1``), is computed
    by ``_istep``, which raises ``OverflowError`` past int64 (the host then computes with
    Python's ints), and ``1 - k`` by ``_isub``; `ints` are the variables that hold Python
    ints wherever assigned.
    """

    def __init__(self, local: set[str], helpers: set[str], ints: set[str] = frozenset()):
        self.local = local
        self.helpers = helpers
        self.ints = ints
        self.steps = False
        self.math: set[tuple[str, int]] = set()
        self.loaded: set[str] = set()
        self.stored: set[str] = set()
        self.bad: str | None = None

    def visit_Name(self, node: ast.Name) -> Any:
        if isinstance(node.ctx, ast.Store):
            self.stored.add(node.id)
        else:
            self.loaded.add(node.id)
            if node.id not in self.local and node.id not in self.helpers | _BUILTINS:
                self.bad = self.bad or f"the loop reads {node.id}"
        return node

    def visit_Call(self, node: ast.Call) -> Any:
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "math":
            node.args = [self.visit(a) for a in node.args]
            if node.keywords:
                self.bad = self.bad or "a math function with keywords"
            self.math.add((f.attr, len(node.args)))
            return ast.Call(ast.Name(f"_m_{f.attr}", ast.Load()), node.args, [])
        return self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        self.bad = self.bad or f"the loop reads an attribute ({ast.unparse(node)})"
        return node

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            self.math.add(("pow", 2))
            return ast.Call(ast.Name("_m_pow", ast.Load()), [node.left, node.right], [])
        step = self._step(node)
        if step is not None:
            self.steps = True
            call = ast.Call(ast.Name("_istep", ast.Load()), [step[0], ast.Constant(step[1])], [])
            return ast.copy_location(call, node)
        left = node.left
        if (
            isinstance(node.op, ast.Sub)
            and isinstance(left, ast.Constant)
            and self._int(node.right)
        ):
            if type(left.value) is int:  # ``1 - k``: checked as any difference
                self.steps = True
                call = ast.Call(ast.Name("_isub", ast.Load()), [left, node.right], [])
                return ast.copy_location(call, node)
        return node

    def _int(self, node: ast.AST) -> bool:
        """Whether expression `node` surely computes a Python int."""
        if isinstance(node, ast.Name):
            return node.id in self.ints
        f = node.func if isinstance(node, ast.Call) else None
        return isinstance(f, ast.Name) and f.id in INT_HELPERS

    def _step(self, node: ast.BinOp) -> tuple[ast.AST, int] | None:
        """``(x, c)`` of ``x + c``, ``c + x`` or ``x - c`` on a Python int `x`."""
        if not isinstance(node.op, (ast.Add, ast.Sub)):
            return None
        pairs = [(node.left, node.right)]
        if isinstance(node.op, ast.Add):
            pairs.append((node.right, node.left))
        for x, c in pairs:
            if isinstance(c, ast.Constant) and type(c.value) is int and self._int(x):
                return x, c.value if isinstance(node.op, ast.Add) else -c.value
        return None


def _math_helper(name: str, arity: int) -> str:
    """A checked ``math`` function: raises where its Python twin may (non-finite results)."""
    args = ", ".join(f"a{i}" for i in range(arity))
    finite = " and ".join(f"math.isfinite(a{i})" for i in range(arity))
    if name == "pow":
        call = "a0 ** a1"
    else:
        call = f"math.{name}({args})"
    if name in ("floor", "ceil", "trunc"):
        check = f"if not ({finite}):\n        raise ValueError('math')\n    return {call}"
    elif arity == 1:
        # CPython's rule: a NaN from a number (sin(inf), log(-inf)), or an infinity from a
        # finite number, raises.
        check = (
            f"r = {call}\n    if not math.isfinite(r) and (math.isfinite(a0) or "
            "(math.isnan(r) and not math.isnan(a0))):\n"
            "        raise ValueError('math')\n    return r"
        )
    else:
        check = (
            f"r = {call}\n    if not math.isfinite(r) and {finite}:\n"
            "        raise ValueError('math')\n    return r"
        )
    return f"@{_INLINE}\ndef _m_{name}({args}):\n    {check}\n"

"""NumPy arrays in the machine code of a whole program: their types, constants, ops and stacks.

A whole program (`myia.compile.native_whole`) may take, compute and return arrays of
``float64``, ``int64`` and ``bool`` of a known rank, with the NumPy functions Numba
computes as NumPy does (`NUMPY`: elementwise arithmetic, ``tanh``, ``exp``..., ``@``,
``concatenate``, ``reshape``, basic slices, ``full``/``zeros``, sums). Its code is the
NumPy backend's, with three rewrites (`ArrayKernel`):

- ``gadd_arrays(x, y, zero)`` => ``x + y`` (the zero it skips on the host adds nothing);
- ``np.add.reduce(x, axis=None, keepdims=False)`` => ``np.sum(x)`` (and ``max``, ``min``);
- ``gmaterialize(x)`` of an array => ``np.copy(x)`` (written by the generator: the user may
  write into what they receive, and a constant of the machine code is read-only).

Constant arrays (the zero sensitivities of a gradient) are module-level globals, written
in the module's source (`constant_source`): Numba freezes them, read-only, into the machine
code, and the source, which keys the disk cache, says their values.

The loop stacks of a gradient that hold arrays are typed lists of their elements
(`list_stack_source`). Anything else (another dtype, another NumPy function, an
attribute) keeps the program off machine code whole
(`myia.compile.native_closures.NotWhole`), running as it did.
"""

from __future__ import annotations

import ast
import inspect
import math
from typing import Any

import numpy as np

from ..abstract.data import AbstractArray, AbstractScalar, AbstractTuple
from ..primitives.windows import window_offset
from .native_source import _Kernel

#: The dtypes of the arrays a whole program may hold.
DTYPES = frozenset(["float64", "int64", "bool"])

#: The NumPy functions the machine code of a whole program may call.
NUMPY = frozenset(
    """abs absolute add arccos arcsin arctan concatenate copy cos cosh divide dot exp expm1
    full log log1p log2 log10 maximum minimum multiply negative ones outer reshape sin sinh
    sqrt square subtract sum tan tanh true_divide zeros float64 int64 bool_ arcsinh arccosh
    arctanh copysign""".split()
)

#: Reductions over all axes, ``np.<ufunc>.reduce(x, axis=None, keepdims=False)``, and
#: what Numba computes them with.
_REDUCE = {"add": "sum", "maximum": "max", "minimum": "min"}

#: Array methods and attributes the machine code may use.
_METHODS = frozenset(["reshape", "copy"])
_ATTRIBUTES = frozenset(["T", "shape"])

#: The imports of a module with stacks of arrays.
LIST_IMPORT = "from numba import types as _nt\nfrom numba.typed import List as _List\n"

#: The most elements of a constant array written in the module's source.
MAX_CONSTANT = 1 << 12

_NUMBA = {"float64": "_nt.float64", "int64": "_nt.int64", "bool": "_nt.boolean"}


#: The most elements of an array a whole program holds. Machine code saves the ~1 µs of
#: each NumPy call; on larger arrays NumPy's own loops win (its ``tanh`` and ``exp`` are
#: SIMD, Numba's call libm per element): `rnn`'s gradient (32×64 states) ran 1.17 times the
#: NumPy backend's time whole.
MAX_ELEMENTS = 1 << 10


def native_array(a: Any) -> bool:
    """Whether values of type `a` are arrays a whole program may hold.

    Not 0-d ones: NumPy's operations on those make scalars, Numba's make arrays. Not those
    whose shape is not known, or of more than `MAX_ELEMENTS` elements.
    """
    if not (isinstance(a, AbstractArray) and a.dtype in DTYPES and len(a.shape) > 0):
        return False
    if any(d is None for d in a.shape):
        return False
    return math.prod(a.shape) <= MAX_ELEMENTS


def has_array(a: Any) -> bool:
    """Whether values of type `a` (tuples) hold an array."""
    if isinstance(a, AbstractTuple):
        return any(map(has_array, a.elements))
    return isinstance(a, AbstractArray)


def flat_element(a: Any) -> bool:
    """Whether stack elements of type `a` are tuples of Python scalars and native arrays."""
    if isinstance(a, AbstractTuple):
        return all(map(flat_element, a.elements))
    if native_array(a):
        return True
    return isinstance(a, AbstractScalar) and a.weak and a.dtype in DTYPES


def numba_type(a: Any) -> str:
    """The expression of the Numba type of values of `a` (arrays C-contiguous)."""
    if isinstance(a, AbstractTuple):
        return "_nt.Tuple((" + "".join(numba_type(e) + ", " for e in a.elements) + "))"
    if isinstance(a, AbstractArray):
        return f'_nt.Array({_NUMBA[a.dtype]}, {len(a.shape)}, "C")'
    return _NUMBA[a.dtype]


def list_stack_source(k: int, element: Any) -> str:
    """The source of ``_snew_k``, ``_spush_k`` and ``_spop_k``: stacks of `element` values.

    A stack is ``(items, n)``: a typed list whose first `n` items are the stack. A push on
    an older version (the list is longer than `n`) copies those `n` items to a new list
    first, so stacks stay persistent. Its arrays are pushed C-contiguous (a slice is
    copied), the layout Numba computes fastest with.
    """

    def own(t: Any, path: str) -> str:
        if isinstance(t, AbstractTuple):
            return (
                "("
                + "".join(own(e, f"{path}[{i}]") + ", " for i, e in enumerate(t.elements))
                + ")"
            )
        if isinstance(t, AbstractArray):
            return f"np.ascontiguousarray({path})"
        return path

    return (
        f"def _snew_{k}():\n    return (_List.empty_list(_T{k}), 0)\n\n"
        f"def _spush_{k}(s, x):\n    items, n = s\n"
        f"    if len(items) != n:\n        old = items\n"
        f"        items = _List.empty_list(_T{k})\n"
        f"        for i in range(n):\n            items.append(old[i])\n"
        f"    items.append({own(element, 'x')})\n    return (items, n + 1)\n\n"
        f"def _spop_{k}(s):\n    items, n = s\n    if n == 0:\n"
        f"        raise IndexError('pop from an empty stack')\n"
        f"    return (items[n - 1], (items, n - 1))\n\n\n"
        f"_T{k} = {numba_type(element)}\n"
    )


def creation(name: str, a: Any, args: list[str]) -> str | None:
    """The machine code's ``zeros``, ``ones`` or ``full`` of `args` making an array of type `a`.

    (None: not an array of the machine code; a 0-d one is a scalar.)
    """
    if not (native_array(a) and a.shape):
        return None
    dtype = "np.bool_" if a.dtype == "bool" else f"np.{a.dtype}"
    values = args[:2] if name == "full" else args[:1]
    return f"np.{name}({', '.join(values)}, dtype={dtype})"


#: ``a`` with ``v`` added at basic index ``i`` (a slice, an int), written into ``a``.
ADD_AT_SOURCE = "def _add_at(a, i, v):\n    a[i] += v\n    return a\n"


#: The offset of a window (`myia.primitives.windows.window_start`), or IndexError.
WINDOW_START_SOURCE = (
    inspect.getsource(window_offset)
    + """
def _window_start(start, size, n):
    s = window_offset(start, size, n)
    if s < 0:
        raise IndexError("a window does not fit in its axis")
    return s
"""
)


def window_source(axis: int, add: bool, inplace: bool = False) -> tuple[str, str]:
    """The name and source of the helper of a window along `axis` (or of its sensitivity)."""
    colons = ":, " * axis
    if add:
        name = f"_window_add{'_inplace' if inplace else ''}_{axis}"
        body = (
            f"    size = v.shape[{axis}]\n"
            f"    s = _window_start(start, size, a.shape[{axis}])\n"
            f"    out = {'a' if inplace else 'np.copy(a)'}\n"
            f"    out[{colons}s:s + size] += v\n"
            "    return out\n"
        )
        return name, f"def {name}(a, start, v):\n{body}"
    name = f"_window_{axis}"
    body = (
        f"    s = _window_start(start, size, a.shape[{axis}])\n    return a[{colons}s:s + size]\n"
    )
    return name, f"def {name}(a, start, size):\n{body}"


def basic_index(node: Any) -> bool:
    """Whether index `node` is a constant slice of ints, or an int (one element each time)."""
    if node.is_constant:
        return slice_text(node.value) is not None or type(node.value) is int
    a = node.abstract
    return isinstance(a, AbstractScalar) and a.dtype == "int64"


def slice_text(value: Any) -> str | None:
    """The machine code's expression of a constant slice of ints (None: another value)."""
    if type(value) is not slice:
        return None
    parts = (value.start, value.stop, value.step)
    if not all(p is None or type(p) is int for p in parts):
        return None
    return f"slice({', '.join(map(repr, parts))})"


def _number(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return repr(bool(v))
    if isinstance(v, (int, np.integer)):
        return repr(int(v))
    f = float(v)
    return repr(f) if math.isfinite(f) else f"float({str(f)!r})"


def constant_key(value: Any) -> Any:
    """The key of constant `value` among a program's globals: its value, for a small array."""
    if isinstance(value, np.ndarray) and value.size <= MAX_CONSTANT:
        return ("array", str(value.dtype), value.shape, value.tobytes())
    return None


def constant_source(name: str, value: Any) -> str | None:
    """The module-level assignment of constant `value` to `name` (None: not machine code)."""
    if isinstance(value, np.ndarray):
        dtype = str(value.dtype)
        if dtype not in DTYPES or value.size > MAX_CONSTANT:
            return None
        np_dtype = "np.bool_" if dtype == "bool" else f"np.{dtype}"
        if not value.any():
            return f"{name} = np.zeros({value.shape!r}, dtype={np_dtype})"
        items = ", ".join(_number(v) for v in value.ravel())
        return f"{name} = np.array([{items}], dtype={np_dtype}).reshape({value.shape!r})"
    if isinstance(value, (np.floating, np.integer, np.bool_)) and str(value.dtype) in DTYPES:
        return f"{name} = {_number(value)}"
    return None


class ArrayKernel(_Kernel):
    """Checks the code of a whole program's function, its NumPy code too, rewritten for Numba.

    `gadd` is the name of ``gadd_arrays`` in the module (None: not read).
    """

    def __init__(
        self, local: set[str], helpers: set[str], gadd: str | None, ints: set[str] = frozenset()
    ):
        super().__init__(local, helpers, ints)
        self.gadd = gadd
        #: The names of ``(d := e)`` (a value read twice): typed by `e`, checked itself.
        self.walrus: set[str] = set()

    def visit_NamedExpr(self, node: ast.NamedExpr) -> Any:
        node.value = self.visit(node.value)
        self.walrus.add(node.target.id)
        self.local.add(node.target.id)
        return node

    def _bad(self, why: str) -> None:
        self.bad = self.bad or why

    def visit_Call(self, node: ast.Call) -> Any:
        f = node.func
        if isinstance(f, ast.Name) and f.id == self.gadd and len(node.args) == 3:
            left, right = self.visit(node.args[0]), self.visit(node.args[1])
            return ast.BinOp(left, ast.Add(), right)
        if (
            isinstance(f, ast.Attribute)
            and f.attr == "reduce"
            and isinstance(f.value, ast.Attribute)
            and _is_np(f.value.value)
        ):
            kw = {k.arg: k.value for k in node.keywords}
            if (
                f.value.attr in _REDUCE
                and len(node.args) == 1
                and set(kw) <= {"axis", "keepdims"}
                and all(isinstance(v, ast.Constant) and not v.value for v in kw.values())
            ):
                fn = ast.Attribute(ast.Name("np", ast.Load()), _REDUCE[f.value.attr], ast.Load())
                return ast.Call(fn, [self.visit(node.args[0])], [])
            self._bad(f"the program computes {ast.unparse(f)} along axes")
            return node
        if isinstance(f, ast.Attribute) and _is_np(f.value):
            if f.attr not in NUMPY:
                self._bad(f"the program calls np.{f.attr}")
            node.args = [self.visit(a) for a in node.args]
            for k in node.keywords:
                if k.arg != "dtype":
                    self._bad(f"the program calls np.{f.attr} with {k.arg}=")
                k.value = self.visit(k.value)
            return node
        if isinstance(f, ast.Attribute) and f.attr in _METHODS:
            f.value = self.visit(f.value)
            node.args = [self.visit(a) for a in node.args]
            if node.keywords:
                self._bad(f"the program calls .{f.attr} with keywords")
            return node
        return super().visit_Call(node)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        if _is_np(node.value) and node.attr in NUMPY:
            return node  # a dtype (np.float64)
        if node.attr in _ATTRIBUTES and not _is_np(node.value):
            node.value = self.visit(node.value)
            return node
        return super().visit_Attribute(node)


def hoist_named(fn: ast.FunctionDef) -> set[str]:
    """Make each ``(d := e)`` of a simple statement of `fn` an assignment ``d = e`` before it.

    Numba cannot type some of them (``((d := v * w)[0:2], d[2:4])``). The program's
    expressions are pure: computing ``e`` first changes nothing. Returns the names so bound.
    """
    names: set[str] = set()

    class Hoist(ast.NodeTransformer):
        def __init__(self) -> None:
            self.before: list[ast.stmt] = []

        def visit_NamedExpr(self, e: ast.NamedExpr) -> ast.expr:
            value = self.visit(e.value)
            self.before.append(ast.Assign([ast.Name(e.target.id, ast.Store())], value))
            names.add(e.target.id)
            return ast.Name(e.target.id, ast.Load())

    def walk(body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for st in body:
            for field in ("body", "orelse"):
                if isinstance(getattr(st, field, None), list):
                    setattr(st, field, walk(getattr(st, field)))
            if isinstance(st, (ast.Assign, ast.Return, ast.Expr)):
                hoist = Hoist()
                st = hoist.visit(st)
                out += hoist.before
            out.append(st)
        return out

    fn.body = walk(fn.body)
    ast.fix_missing_locations(fn)
    return names


def _is_np(e: ast.expr) -> bool:
    return isinstance(e, ast.Name) and e.id == "np"

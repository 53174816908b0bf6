"""Recursive dataclasses in the machine code of a whole program: a tree as arrays, one per field.

Numba has no recursive types. A value of a recursive dataclass (``Tree`` with
``Optional["Tree"]`` children) that a whole program (`myia.compile.native_whole`) takes is
converted once per call, before the call, by a walk on the host (`Table`): its nodes are
numbered in the order of the walk, and each field of the class is one array, indexed by the
node's number:

- a field of the class's own type (or of it or None) holds the child's number, -1 for None;
- a field of an array (of one shape, `native_arrays.DTYPES`) is an array of one more axis;
- a field of a number is an array of numbers.

In the machine code, a value of the class (or of it or None) is then its number, an int64:
``t.left`` is ``_rc[c][k][t]`` (``_rc`` the tuple of each class's arrays, a hidden first
argument of every function, ``c`` the class's position, ``k`` the field's) and ``t is
None`` is ``t < 0``. Values of the class that the program makes or returns, and fields of
other types, are not machine code (`myia.compile.native_closures.NotWhole`).
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from .. import pyast
from ..abstract.data import (
    AbstractConstant,
    AbstractRecord,
    AbstractScalar,
    AbstractUnion,
    SelfRef,
)
from .native_arrays import DTYPES, native_array
from .native_closures import NotWhole

#: The hidden argument of every function: the arrays of the records of the call.
RC = "_rc"


def _self_ref(f: Any, cls: type) -> bool:
    """Whether field type `f` is the class's own (`SelfRef`), or it or None."""
    if isinstance(f, SelfRef):
        return f.cls is cls
    if isinstance(f, AbstractUnion) and len(f.options) == 2:
        refs = [o for o in f.options if isinstance(o, SelfRef) and o.cls is cls]
        nones = [o for o in f.options if o == AbstractConstant(None)]
        return len(refs) == 1 and len(nones) == 1
    return False


def _is_recursive(a: Any) -> bool:
    return isinstance(a, AbstractRecord) and any(_self_ref(f, a.cls) for f in a.fields)


def recursive_record(a: Any) -> AbstractRecord | None:
    """The recursive record of values of type `a` (the record, or it or None), else None."""
    if _is_recursive(a):
        return a
    if isinstance(a, AbstractUnion) and len(a.options) == 2:
        recs = [o for o in a.options if _is_recursive(o)]
        if len(recs) == 1 and AbstractConstant(None) in a.options:
            return recs[0]
    return None


class Layout:
    """The arrays of a recursive record class: the kind of each field, ``(kind, dtype, shape)``."""

    def __init__(self, record: AbstractRecord):
        self.record = record
        self.names = record.names
        self.kinds: list[tuple[str, str, tuple[int, ...]]] = []
        for name, f in zip(self.names, record.fields):
            if _self_ref(f, record.cls):
                self.kinds.append(("ref", "int64", ()))
            elif native_array(f) and None not in f.shape:
                self.kinds.append(("array", f.dtype, tuple(f.shape)))
            elif isinstance(f, AbstractScalar) and f.dtype in DTYPES:
                self.kinds.append(("number", f.dtype, ()))
            else:
                raise NotWhole(f"field {name} of a {record.cls.__name__} is of type {f}")


class Records:
    """The recursive record classes a whole program reads, in the order it first reads them."""

    def __init__(self) -> None:
        self.layouts: dict[type, Layout] = {}

    def layout(self, record: AbstractRecord) -> tuple[int, Layout]:
        """The position of `record`'s class in ``_rc``, and its layout."""
        layout = self.layouts.get(record.cls)
        if layout is None:
            layout = self.layouts[record.cls] = Layout(record)
        elif layout.record != record:
            raise NotWhole(f"a {record.cls.__name__} has fields of several types")
        return list(self.layouts).index(record.cls), layout

    def getattr(self, a: Any, x: str, name: str) -> str | None:
        """The read of field `name` of `x`, a value of type `a` (None: not a recursive one)."""
        record = recursive_record(a)
        if record is None or record is not a:
            return None
        c, layout = self.layout(record)
        return f"{RC}[{c}][{layout.names.index(name)}][{x}]"

    def is_none(self, a: Any, x: str) -> str | None:
        """The test that `x` (of type `a`) is None (None: not a recursive record's)."""
        record = recursive_record(a)
        if record is None:
            return None
        self.layout(record)
        return f"({x} < 0)"

    def converter(self, params: list[Any]) -> Any:
        """A function of the host: the user's arguments to the machine code's (see the module).

        `params` are the types of the entry's parameters; the machine code takes ``_rc``
        first, then each record as its number.
        """
        for a in params:
            record = recursive_record(a)
            if record is not None:
                self.layout(record)
        order = list(self.layouts)
        slots = [
            order.index(r.cls) if (r := recursive_record(a)) is not None else None for a in params
        ]
        layouts = [self.layouts[c] for c in order]

        def convert(args: tuple[Any, ...]) -> tuple[Any, ...]:
            tables = [Table(layout) for layout in layouts]
            new = [a if s is None else tables[s].add(a) for a, s in zip(args, slots)]
            return (tuple(t.arrays() for t in tables), *new)

        return convert


class Table:
    """The nodes of the values of a record class given to one call, walked on the host.

    The nodes are numbered breadth first (a node shared by two parents is numbered twice:
    its fields are read the same from both). The walk is a function written for the class
    (`_walker`): a read of each field, no loop over the fields.
    """

    def __init__(self, layout: Layout):
        self.layout = layout
        self.nodes: list[Any] = []
        self.columns: tuple[list[Any], ...] = tuple([] for _ in layout.names)
        self._walk = _walker(layout)

    def add(self, value: Any) -> int:
        """The number of `value` (-1 for None), its nodes numbered and read."""
        if value is None:
            return -1
        if type(value) is not self.layout.record.cls:
            raise TypeError(f"not a {self.layout.record.cls.__name__}")
        k = len(self.nodes)
        self.nodes.append(value)
        self._walk(self.nodes, k, *self.columns)
        return k

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays of the fields (a stack of the arrays of an array field)."""
        out = []
        for col, (_, dtype, shape) in zip(self.columns, self.layout.kinds):
            arr = np.array(col, dtype=np.bool_ if dtype == "bool" else dtype)
            if arr.shape != (len(col), *shape):
                raise TypeError("a field's value is not of its type's shape")
            out.append(arr)
        return tuple(out)


_WALKERS: dict[Any, Any] = {}


def _walker(layout: Layout) -> Any:
    """The walk of the nodes of `layout`'s class from node `i` of `nodes`, filling the columns.

    ``walk(nodes, i, c_0, ..., c_m)`` appends each node's field values to the columns (for a
    field of the class, the number of the child, appended to `nodes`, or -1).
    """
    key = (layout.names, tuple(k for k, _, _ in layout.kinds))
    walk = _WALKERS.get(key)
    if walk is None:
        cols = [f"c{j}" for j in range(len(layout.names))]
        lines = [f"def walk(nodes, i, {', '.join(cols)}):", "    while i < len(nodes):"]
        lines += ["        v = nodes[i]", "        i += 1"]
        for j, (name, (kind, _, _)) in enumerate(zip(layout.names, layout.kinds)):
            if kind == "ref":
                lines += [
                    f"        x = v.{name}",
                    "        if x is None:",
                    f"            c{j}.append(-1)",
                    "        else:",
                    f"            c{j}.append(len(nodes))",
                    "            nodes.append(x)",
                ]
            else:
                lines.append(f"        c{j}.append(v.{name})")
        scope: dict[str, Any] = {}
        exec(compile("\n".join(lines) + "\n", "<myia record walk>", "exec"), scope)
        walk = _WALKERS[key] = scope["walk"]
    return walk


def thread_hidden(functions: dict[str, ast.FunctionDef], names: list[str]) -> None:
    """Give every function `names` as its first arguments, passed on in its calls of the others."""
    for fn in functions.values():
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in functions:
                    node.args[:0] = [ast.Name(n, ast.Load()) for n in names]
        fn.args.args[:0] = [ast.arg(n) for n in names]


#: The hidden argument of every function of a recursive program: the depth of its call.
DP = "_dp"

#: The deepest recursion of machine code: deeper, it raises `RecursionError` and the host
#: code runs the call (the machine code's frames are on the C stack, which a recursion of
#: unbounded depth would overflow).
MAX_DEPTH = 2000


def thread_depth(functions: dict[str, ast.FunctionDef], entry: str) -> None:
    """Count the depth of the calls of a recursive program, raising past `MAX_DEPTH`.

    Every function takes ``_dp`` after the hidden arguments `thread_hidden` gave it, passes
    ``_dp + 1`` to the functions it calls and raises `RecursionError` past `MAX_DEPTH`; the
    entry becomes an inner function, called with a depth of 0 by a new entry of its name
    and arguments.
    """
    hidden = {RC, "_fe"}
    for fn in functions.values():
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in functions:
                    k = sum(1 for a in node.args[:2] if isinstance(a, ast.Name) and a.id in hidden)
                    one = ast.BinOp(ast.Name(DP, ast.Load()), ast.Add(), ast.Constant(1))
                    node.args.insert(k, one)
        k = sum(1 for a in fn.args.args[:2] if a.arg in hidden)
        fn.args.args.insert(k, ast.arg(DP))
        check = pyast.parse(
            f"if {DP} > {MAX_DEPTH}:\n    raise RecursionError('maximum recursion depth exceeded')"
        ).body[0]
        fn.body.insert(0, check)
        ast.fix_missing_locations(fn)
    fn = rename_entry(functions, entry, "_dp_")
    params = [a.arg for a in fn.args.args]
    args = ["0" if p == DP else p for p in params]
    params.remove(DP)
    source = f"def {entry}({', '.join(params)}):\n    return {fn.name}({', '.join(args)})\n"
    wrapper = pyast.parse(source).body[0]
    assert isinstance(wrapper, ast.FunctionDef)
    functions[entry] = wrapper


def rename_entry(functions: dict[str, ast.FunctionDef], entry: str, prefix: str) -> Any:
    """Rename function `entry` of `functions` to a new name starting with `prefix`.

    Its calls are renamed too; the caller writes a new `entry` around it. Return it.
    """
    taken = {n.id for f in functions.values() for n in ast.walk(f) if isinstance(n, ast.Name)}
    inner = f"{prefix}{entry}"
    while inner in taken or inner in functions:
        inner = "_" + inner
    for fn in functions.values():
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id == entry:
                    node.func.id = inner
    fn = functions.pop(entry)
    fn.name = inner
    functions[inner] = fn
    return fn

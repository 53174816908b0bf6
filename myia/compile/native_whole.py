"""The whole program as machine code: one call from Python runs every function natively.

Outlining loops (`myia.compile.native_backend`) leaves the code around them to Python: for a
short program (the gradient of ``newton_sqrt`` runs a few iterations forward and back) the
calls between Python and machine code, the tuples they pass and the stacks made in Python
cost more than the loops. When every function of the program takes and returns Python
scalars, arrays (`native_arrays`), typed stacks, function values (`native_closures`,
`native_fenvs`), environments (`native_envs`), trees (`native_records`) and tuples of them,
and reads nothing but its own variables, the helpers, its constants and the other
functions, the program's source (written without outlining) is
compiled whole: the entry function is one Numba function, and a call of the program is one
call of it. Stacks are then made, pushed and popped in machine code, with no object of
Python's between two calls.

The host code stays: the program falls back to it when Numba refuses the module, and
re-runs on it when the machine code raises (the functions so compiled have no effect, so
running again is safe), so that errors are the NumPy backend's, at the user's line.
"""

from __future__ import annotations

import ast
import threading
import time
from typing import Any

import numpy as np

from .. import pyast
from ..abstract.data import (
    BOTTOM,
    AbstractFunction,
    AbstractScalar,
    AbstractStack,
    AbstractTuple,
)
from .lower import gadd_arrays
from .native_arena import ARENA_IMPORT, GROW_SOURCE, reserve_counted_loops, thread_arena
from .native_arrays import (
    DTYPES,
    LIST_IMPORT,
    MAX_ELEMENTS,
    ArrayKernel,
    constant_source,
    hoist_named,
    native_array,
)
from .native_closures import NotWhole, opaque_type
from .native_fenvs import FE, env_entry
from .native_records import RC, recursive_record, thread_depth, thread_hidden
from .native_regions import compile_only
from .native_source import (
    _BUILTINS,
    _FORMAT,
    _INLINE,
    _INT_NATIVE,
    _JIT,
    _math_helper,
    _weak_leaf,
)
from .native_stacks import python_int


def _native_type(a: Any, typed_stacks: bool, inner: bool = True) -> bool:
    """Whether values of type `a` cross machine code: Python scalars, typed stacks, tuples.

    With `inner` (values inside the program), function values (`native_closures`) and
    constant environments and records too.
    """
    if isinstance(a, AbstractStack):
        return typed_stacks and a.element is not BOTTOM
    if isinstance(a, AbstractTuple):
        return all(_native_type(e, typed_stacks, inner) for e in a.elements)
    if native_array(a) or (inner and recursive_record(a) is not None):
        return True
    if isinstance(a, AbstractScalar) and a.dtype in DTYPES:
        return True  # a NumPy scalar (made one again out of the machine code: `_scalars`)
    if inner and (isinstance(a, AbstractFunction) or opaque_type(a)):
        return True
    return _weak_leaf(a)


def _ints(types: dict[str, list[Any]], name: str) -> bool:
    """Whether variable `name` holds ints (int64 in machine code) wherever it is assigned."""
    values = types.get(name)
    return bool(values) and all(
        isinstance(a, AbstractScalar) and a.dtype == "int64" for a in values
    )


def _check(
    fn: ast.FunctionDef, gen: Any, names: set[str], types: dict, gadd: str | None
) -> tuple[Any, str | None]:
    """`fn` with its math made checked, and why it cannot be machine code (None if it can)."""
    for node in ast.walk(fn):
        if node is not fn and isinstance(node, (ast.FunctionDef, ast.Lambda)):
            return fn, "a function makes a closure"
    if fn.args.defaults or fn.args.kwonlyargs or fn.args.vararg or fn.args.kwarg:
        return fn, "a function has default or variable arguments"
    ints = {n for n, ts in types.items() if ts and all(map(python_int, ts))}
    checker = ArrayKernel(set(types), names | {"slice", RC, FE, "_istep"}, gadd, ints)
    copy = pyast.parse(ast.unparse(fn)).body[0]
    assert isinstance(copy, ast.FunctionDef)
    checker.walrus |= hoist_named(copy)
    checker.local |= checker.walrus
    new = checker.visit(copy)
    if checker.bad:
        return new, checker.bad
    gen.int_helpers |= checker.steps
    used = checker.loaded | checker.stored | {a.arg for a in fn.args.args}
    used -= names | _BUILTINS | checker.walrus | {"slice", RC, FE}
    for name in used:
        if not all(_native_type(a, gen.stack_reason is None) for a in types.get(name, [None])):
            return new, (
                f"{name} is not a scalar, an array (of a known shape, at most {MAX_ELEMENTS} "
                "elements), a typed stack or a tuple of them"
            )
    gen.math |= checker.math
    return new, None


def whole_source(gen: Any, entry: str, checked: set[str]) -> tuple[str | None, str | None]:
    """The source of the module that runs program `gen` whole as machine code, or why not.

    `gen` is a `NativeGenerator` that generated the program without outlining its loops;
    `entry` is the name of its entry function, `checked` the names of the checked
    arithmetic on Python ints.
    """
    if not entry:
        return None, "it has no loop to compile to machine code"
    if gen.stack_reason is not None and gen.stack_types:
        return None, f"stacks: {gen.stack_reason}"
    if not _native_type(gen.entry.output.abstract, False, inner=False):
        return None, "the program's result is not Python scalars, arrays and tuples of them"
    for g in gen.graphs:
        for node in gen.scopes.toposort(g):
            if node.is_apply and gen.int_overflow(node):
                return None, "arithmetic on Python ints that may overflow int64"
    tree = pyast.parse("\n".join(gen.lines))
    if not all(isinstance(s, ast.FunctionDef) for s in tree.body):
        return None, "the program defines more than functions"
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    types = gen._local_types()
    helpers = {f"_s{op}_{k}" for k in gen.stack_types.values() for op in ("new", "push", "pop")}
    helpers.add("_add_at")
    helpers |= {  # the windows' (`native_lowering._window`)
        f.name
        for h in gen.helper_source
        for f in ast.parse(h).body
        if isinstance(f, ast.FunctionDef) and f.name.startswith("_window")
    }
    helpers |= {f"_fnew_{k}" for k, _ in gen.closures.env_lists.values()}
    helpers |= checked
    # The constants the program reads: numbers and small arrays, in the module's source.
    consts = {n: constant_source(n, v) for n, v in gen.globals.items()}
    consts = {n: src for n, src in consts.items() if src is not None}
    helpers |= set(consts)
    gadd = next((n for n, v in gen.globals.items() if v is gadd_arrays), None)
    ok = dict(functions)
    out: dict[str, Any] = {}
    while True:
        out, why = {}, {}
        for name, fn in ok.items():
            out[name], why[name] = _check(fn, gen, helpers | set(ok), types, gadd)
        bad = [n for n, w in why.items() if w is not None]
        if not bad:
            break
        if entry in bad:
            return None, why[entry]
        for n in bad:
            del ok[n]
    if entry not in ok:  # pragma: no cover - the entry is one of the module's functions
        return None, "the entry is not a function"
    read = {n.id for f in out.values() for n in ast.walk(f) if isinstance(n, ast.Name)}
    hidden = ([FE] if gen.closures.env_lists else []) + ([RC] if gen.records.layouts else [])
    thread_hidden(out, hidden)
    recursive = _recursive(out)
    if recursive:
        thread_depth(out, entry)
    if gen.closures.env_lists:
        # The lists of environments of function values of their own class (`native_fenvs`).
        source = env_entry(out, entry, len(gen.closures.env_lists))
        out[entry] = pyast.parse(source).body[0]
    arena = [k for k in gen.stack_types.values() if k not in gen.list_stacks]
    if arena:
        # The stacks of scalars are regions of an arena, which every function receives;
        # they make room for the pushes of counted loops before the loops.
        ks = arena
        reserve = {f"_spush_{k}": f"_sreserve_{k}" for k in ks}
        out = {
            n: reserve_counted_loops(fn, reserve, lambda v: _ints(types, v))
            for n, fn in out.items()
        }
        users = {f"_s{op}_{k}" for k in ks for op in ("push", "pop", "reserve")}
        functions, why = thread_arena(out, entry, users, _JIT)
        if why is not None:
            return None, why
    else:
        functions = [f"@{_JIT}\n{ast.unparse(fn)}\n" for fn in out.values()]
    head = f"# {_FORMAT}\nimport math\n\nimport numpy as np\nfrom numba import njit\n"
    if gen.list_stacks or gen.closures.env_lists:
        head += LIST_IMPORT
    parts = [head + (ARENA_IMPORT if arena else "")]
    parts += [consts[n] for n in sorted(consts) if n in read]
    if arena:
        parts.append(f"@{_JIT}{GROW_SOURCE}")
    parts += [
        f"@{_INLINE}\n" + h.replace("\n\ndef ", f"\n\n@{_INLINE}\ndef ")
        for h in gen.helper_source + gen.closures.env_source
    ]
    parts += [_math_helper(n, a) for n, a in sorted(gen.math)]
    if gen.int_helpers:
        parts.append(_INT_NATIVE.format(jit=_INLINE))
    source = "\n\n".join(parts + functions)
    if recursive:
        # Numba's disk cache loads recursive functions wrong (numba#6061: the machine code
        # loaded crashes): these modules are compiled in each process.
        source = source.replace("cache=True", "cache=False")
    return source, None


def _recursive(functions: dict[str, ast.FunctionDef]) -> bool:
    """Whether some function of `functions` calls itself, directly or through others."""
    calls = {
        name: {
            n.func.id
            for n in ast.walk(fn)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in functions
        }
        for name, fn in functions.items()
    }
    for start in calls:
        seen: set[str] = set()
        todo = list(calls[start])
        while todo:
            name = todo.pop()
            if name == start:
                return True
            if name not in seen:
                seen.add(name)
                todo.extend(calls[name])
    return False


def _scalars(a: Any) -> Any:
    """The conversion of a result of type `a` whose NumPy scalars Numba returns as Python's.

    (None: nothing to convert.)
    """
    if isinstance(a, AbstractScalar) and not a.weak and a.dtype in DTYPES:
        return np.bool_ if a.dtype == "bool" else getattr(np, a.dtype)
    if isinstance(a, AbstractTuple):
        items = [_scalars(e) for e in a.elements]
        if any(items):
            return lambda t: tuple(x if c is None else c(x) for c, x in zip(items, t))
    return None


def _converting(fn: Any, convert: Any, out: Any) -> Any:
    """`fn` on the arguments converted by `convert` (`native_records`), its result by `out`."""
    if out is None:

        def call(*args: Any) -> Any:
            return fn(*convert(args))
    elif convert is None:

        def call(*args: Any) -> Any:
            return out(fn(*args))
    else:

        def call(*args: Any) -> Any:
            return out(fn(*convert(args)))

    call.dispatcher = fn  # type: ignore[attr-defined]
    return call


class WholeProgram:
    """The machine code of a whole program, loaded or compiled when it is first called.

    `make` returns the generator of the program written without outlining and its entry's
    name (None: the program has no loop to compile); the source is written from it when it
    is first needed, by the thread that compiles it or where `source` or `reason` is read.
    With the backend's ``background=True`` a thread loads or compiles it while the calls
    run the host code (whose loops then stay Python: compiling them too would only slow
    the thread down); otherwise the first call waits for it. `fn` is the Numba dispatcher
    once it is ready, compiled for the program's signature (shared by the programs of the
    same source, which is its key in the disk cache).
    """

    def __init__(self, make: Any, checked: set[str], backend: Any, threads: list):
        self._make = make
        self._checked = checked
        self._source: str | None = None
        self._reason: str | None = None
        self._lock = threading.Lock()
        self.entry = ""
        #: The host's conversion of the arguments (recursive records, `native_records`).
        self.convert: Any = None
        #: The conversion of the results (NumPy scalars: `_scalars`).
        self.convert_out: Any = None
        self.backend = backend
        #: The dispatcher of the entry function, once compiled.
        self.fn: Any = None
        #: Whether the machine code is still to be made (the outlined loops wait for it).
        self.pending = make is not None
        self.thread: threading.Thread | None = None
        #: Where the thread is recorded (for `myia.compile.native_backend.wait_all`).
        self.threads = threads

    def _write(self) -> None:
        """Write the source (once), or the reason why there is none."""
        with self._lock:
            make, self._make = self._make, None
            if make is None:
                if self._source is None and self._reason is None:
                    self._reason = "it has no loop to compile to machine code"
                return
            try:
                gen, self.entry = make()  # its parses are `pyast`'s, safe in a thread
                self.convert = gen.convert
                self.convert_out = _scalars(gen.entry.output.abstract)
                self._source, self._reason = whole_source(gen, self.entry, self._checked)
            except NotWhole as exc:
                self._reason = str(exc)
            except Exception as exc:  # pragma: no cover - a construct the generator mishandles
                self._reason = (
                    "the program's code could not be written without outlining "
                    f"({type(exc).__name__})"
                )

    @property
    def source(self) -> str | None:
        """The source of the module Numba compiles (None: see `reason`)."""
        self._write()
        return self._source

    @property
    def reason(self) -> str | None:
        """Why the program is not machine code whole (None while it may be)."""
        self._write()
        return self._reason

    def start(self, args: tuple[Any, ...]) -> None:
        """Make the machine code for the types of `args`: in a thread, or now."""
        if not self.backend.background:
            self.install(args)
        elif self.thread is None:
            self.thread = threading.Thread(
                target=self._install_later, args=(args,), name="myia-native program", daemon=True
            )
            self.threads.append(self.thread)
            self.thread.start()

    def _install_later(self, args: tuple[Any, ...]) -> None:
        # The thread lets the caller go on first: else the caller would wait for the
        # interpreter until the thread's first switch (5 ms) before leaving its first call.
        time.sleep(0.002)
        self.install(args)

    def install(self, args: tuple[Any, ...]) -> None:
        """Write the source; load or compile the module and the entry for the types of `args`."""
        try:
            source = self.source
            if source is not None:
                try:
                    numba = self.backend.numba
                    fn = getattr(self.backend.load(source), self.entry)
                    convert = self.convert
                    if convert is not None:
                        args = convert(args)
                    compile_only(fn, tuple(numba.typeof(a) for a in args))
                    if convert is not None or self.convert_out is not None:
                        fn = _converting(fn, convert, self.convert_out)
                except Exception as exc:  # Numba refuses the program: its loops are outlined
                    self._reason = f"Numba could not compile the program ({type(exc).__name__})"
                else:
                    self.fn = fn
        finally:
            self.pending = False  # the host code runs the calls from now on, if no `fn`

    def direct(self) -> tuple[Any, bool]:
        """The entry's dispatcher once ready, and whether that is final (`Executable.direct`)."""
        done = not self.pending  # read first: `fn` is set before `pending` is cleared
        return self.fn, done

    def wait(self) -> None:
        """Wait until the machine code started in the background is ready (or refused)."""
        if self.thread is not None:
            self.thread.join()

"""Host code with regions of machine code: the native backend's programs Numba cannot take whole.

A program that recurses over trees runs as the NumPy backend's generated code. A node's
array work (``tanh(W @ concat(hl, hr) + b)``, and the backward pass's before and after the
children's) costs a NumPy call per operation, several µs on small arrays. `outline` makes
each run of such statements one function (`myia.compile.regions.Outliner`), compiled by
``numba.njit``: one call of machine code (Numba's dispatch) per run::

    try:
        h, v_7 = region0(W_2, b_2, v_5, v_6)       # machine code
    except Exception:
        h, v_7 = region0_host(W_2, b_2, v_5, v_6)  # the same statements, as NumPy code

Until a region's machine code is ready (loaded from the disk cache or compiled in a thread,
as the backend's loops are), ``region0`` is a `_RegionStub` that runs ``region0_host``. A
region Numba refuses runs as ``region0_host`` for good; arguments of other types than those
it was compiled for (it compiles once, for the types of its first call) and errors of its
machine code run ``region0_host`` for that call, which raises the error at the user's line.

Only regions of float arrays are outlined, of NumPy functions Numba computes as NumPy does
(`NUMPY`); a sum of sensitivities (``gadd_arrays``) is an addition there (`_for_numba`).
Their results are NumPy's up to rounding (Numba's ``tanh`` and matrix products are not
NumPy's own).

The JAX backend's host code (a program that is not one XLA computation) has its regions
outlined here too, where Numba is installed and none of its arrays is large enough for
a region jitted by XLA (`myia.compile.jax_regions`).
"""

from __future__ import annotations

import ast
import math
import threading
from typing import Any

from .. import pyast
from ..abstract.data import AbstractArray, AbstractScalar
from .lower import gadd_arrays
from .regions import Outliner, Pure

#: NumPy functions the machine code of a region may call (Numba computes them as NumPy).
NUMPY = frozenset(
    """abs absolute add arccos arcsin arctan concatenate cos cosh divide dot exp expm1 log
    log1p maximum minimum multiply negative outer sin sinh sqrt square subtract tan tanh
    true_divide log2 log10 arcsinh arccosh arctanh copysign""".split()
)

#: The fewest operations a region computes: a call of machine code costs Numba's dispatch
#: (about a NumPy call on small arrays), so one operation does not pay.
MIN_OPERATIONS = 2

#: The most elements of the largest array of a region: on large arrays, NumPy's own loops
#: (vectorized ``exp``, ``tanh``...) cost as much as machine code, and a call of NumPy no
#: more than Numba's dispatch.
MAX_ELEMENTS = 1 << 12

#: The NumPy functions Numba computes one element at a time through ``libm`` (NumPy's own
#: loops are vectorized: several times faster per element), and the most elements a region
#: may compute them on (`_Shapes`): ``tanh`` of a vector of 16, not of a 32 x 64 batch.
TRANSCENDENTAL = frozenset(
    "arccos arcsin arctan cos cosh exp expm1 log log1p log2 log10 sin sinh tan tanh "
    "arcsinh arccosh arctanh".split()
)
MAX_TRANSCENDENTAL = 256

#: The options of a region's machine code (NumPy's semantics on arrays).
_JIT = 'njit(cache=True, error_model="numpy", nogil=True)'

_HEADER = """# myia-native-regions-1
import numpy as np
from numba import njit
"""


#: Held while a region compiles for new types (the only time its compilation is enabled).
_COMPILE_LOCK = threading.Lock()


def compile_only(fn: Any, types: tuple[Any, ...]) -> None:
    """Compile dispatcher `fn` for `types`, and for no other types during a call.

    Arguments of other types (a Fortran-ordered or read-only array) then raise, and the host
    code runs that call: compiling in the call would hold it for seconds. Programs of the
    same source share the module, and so its dispatchers: each adds its types.
    """
    with _COMPILE_LOCK:
        fn.disable_compile(False)
        try:
            fn.compile(types)
        finally:
            fn.disable_compile()


def _floats(dtypes: set[str]) -> bool:
    return len(dtypes) == 1 and dtypes <= {"float64", "float32"}


def outline(
    source: str, types: dict[str, Any], globals_: dict[str, Any], filename: str
) -> tuple[Any, str, list[str]]:
    """`source` with its regions called as machine code (see the module).

    Each region's host code (``region<i>_host``) is put in `globals_`. Return the code of
    the rewritten module (with the lines of `source`), the source of the module of the
    regions' machine code, and the regions' names.
    """
    tree = pyast.parse(source)
    pure = Pure(dict(types), globals_, NUMPY.__contains__)
    shapes = _Shapes(pure.types)
    outliner = Outliner(
        pure.types,
        pure,
        max_elements=MAX_ELEMENTS,
        min_operations=MIN_OPERATIONS,
        dtypes_ok=_floats,
        global_inputs=True,
        fallback=True,
        rewrite=lambda run: _for_numba(run, globals_, pure.types),
        accept=lambda run: not shapes.too_large(run) and not shapes.zero_dimensional(run),
    )
    for s in tree.body:
        if isinstance(s, ast.FunctionDef):
            outliner.function(s)
    names, parts = [], [_HEADER]
    for name, fn in outliner.regions:
        mod = ast.Module([fn], [])
        ast.fix_missing_locations(mod)
        if name.endswith("_host"):
            exec(compile(mod, filename, "exec"), globals_)
        else:
            names.append(name)
            parts.append(f"@{_JIT}\n{ast.unparse(fn)}\n")
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec"), "\n\n".join(parts), names


class _Shapes:
    """The shapes of a region's expressions, where the types of its variables tell them."""

    def __init__(self, types: dict[str, Any]):
        self.types = types

    def __call__(self, e: ast.expr) -> tuple[int, ...] | None:
        """The shape of `e`'s value (``()`` for a scalar), or None if not known."""
        if isinstance(e, ast.Name):
            a = self.types.get(e.id)
            if isinstance(a, AbstractArray):
                return None if None in a.shape else a.shape
            return () if isinstance(a, AbstractScalar) else None
        if isinstance(e, ast.Constant):
            return ()
        if isinstance(e, ast.NamedExpr):
            return self(e.value)
        if isinstance(e, ast.UnaryOp):
            return self(e.operand)
        if isinstance(e, ast.BinOp):
            a, b = self(e.left), self(e.right)
            if a is None or b is None:
                return None
            if isinstance(e.op, ast.MatMult):
                return _matmul_shape(a, b)
            return _broadcast(a, b)
        if isinstance(e, ast.Call) and len(e.args) == 1 and not e.keywords:
            f = e.func
            if isinstance(f, ast.Attribute) and f.attr in NUMPY:
                return self(e.args[0])
        return None

    def zero_dimensional(self, run: list[ast.stmt]) -> bool:
        """Whether `run` reads or writes a 0-d array.

        Numba's result would be a Python float, where NumPy's is a NumPy scalar.
        """
        for n in (n for s in run for n in ast.walk(s)):
            if isinstance(n, ast.Name):
                a = self.types.get(n.id)
                if isinstance(a, AbstractArray) and a.shape == ():
                    return True
        return False

    def too_large(self, run: list[ast.stmt]) -> bool:
        """Whether `run` computes a transcendental function on many (or unknown) elements."""
        for n in (n for s in run for n in ast.walk(s)):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                if n.func.attr in TRANSCENDENTAL:
                    shape = self(n.args[0]) if n.args else None
                    if shape is None or math.prod(shape) > MAX_TRANSCENDENTAL:
                        return True
            elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow):
                shape = self(n)
                if shape is None or math.prod(shape) > MAX_TRANSCENDENTAL:
                    return True
        return False


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape NumPy broadcasts `a` and `b` to (None if it cannot)."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
        return None
    return tuple(max(x, y) for x, y in zip(a, b))


def _matmul_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape of ``x @ y`` for `x` of shape `a` and `y` of shape `b` (matrices, vectors)."""
    if len(a) == 2 and len(b) == 2:
        return (a[0], b[1])
    if len(a) == 2 and len(b) == 1:
        return (a[0],)
    if len(a) == 1 and len(b) == 2:
        return (b[1],)
    return () if len(a) == len(b) == 1 else None


def _for_numba(
    run: list[ast.stmt], globals_: dict[str, Any], types: dict[str, Any]
) -> list[ast.stmt]:
    """The statements of a region as Numba compiles them.

    Each ``(d := e)`` is an assignment ``d = e`` before its statement (Numba cannot type
    some of them: ``((d := v @ W)[0:16], d[16:32])``); a region's statements are pure, so
    computing ``e`` first changes nothing. ``gadd_arrays(x, y, zero)`` is ``x + y``: the
    zero it skips on the host adds nothing, and is not an input. In a region of float32
    arrays, a number written in the code is ``np.float32(c)``: NumPy computes
    ``x * 0.1`` in float32, Numba in float64.
    """
    dtypes = {
        a.dtype
        for n in (n for s in run for n in ast.walk(s))
        if isinstance(n, ast.Name) and isinstance(a := types.get(n.id), AbstractArray)
    }
    single = dtypes == {"float32"}

    class Rewrite(ast.NodeTransformer):
        def __init__(self) -> None:
            self.before: list[ast.stmt] = []

        def visit_NamedExpr(self, e: ast.NamedExpr) -> ast.expr:
            value = self.visit(e.value)
            self.before.append(ast.Assign([ast.Name(e.target.id, ast.Store())], value))
            return ast.Name(e.target.id, ast.Load())

        def visit_Call(self, e: ast.Call) -> ast.expr:
            self.generic_visit(e)
            if isinstance(e.func, ast.Name) and globals_.get(e.func.id) is gadd_arrays:
                return ast.BinOp(e.args[0], ast.Add(), e.args[1])
            return e

        def visit_Constant(self, e: ast.Constant) -> ast.expr:
            if single and type(e.value) in (int, float):
                f32 = ast.Attribute(ast.Name("np", ast.Load()), "float32", ast.Load())
                return ast.copy_location(ast.Call(f32, [e], []), e)
            return e

    body: list[ast.stmt] = []
    for s in run:
        rewrite = Rewrite()
        s = rewrite.visit(s)
        body += [ast.copy_location(b, s) for b in rewrite.before] + [s]
    return body


class _RegionStub:
    """A region whose machine code is not ready: its host code runs meanwhile.

    Its first call loads or compiles the machine code for the types of its arguments (in a
    thread, with the backend's ``background=True``), which then replaces it in the module.
    """

    def __init__(self, regions: NativeRegions, name: str):
        self.regions, self.name = regions, name
        self.host = regions.globals[f"{name}_host"]

    def __call__(self, *args: Any) -> Any:
        self.regions.start(self.name, args)
        return self.host(*args)


class NativeRegions:
    """The regions of a program's host code, and their machine code once it is made."""

    def __init__(self, source: str, names: list[str], globals_: dict[str, Any], backend: Any):
        self.source, self.names, self.globals, self.backend = source, names, globals_, backend
        #: Why some region runs as host code (None: all are machine code or pending).
        self.reason: str | None = None
        self._module: Any = None
        self._started: set[str] = set()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        for name in names:
            globals_[name] = _RegionStub(self, name)

    @property
    def ready(self) -> bool:
        """Whether the machine code of every region called so far is made (or refused)."""
        return not any(isinstance(self.globals[n], _RegionStub) for n in self._started)

    def wait(self) -> None:
        """Wait until the regions being loaded or compiled in threads are ready."""
        for t in list(self._threads):
            t.join()

    def start(self, name: str, args: tuple[Any, ...]) -> None:
        """Load or compile region `name` for the types of `args` (once)."""
        with self._lock:
            if name in self._started:
                return
            self._started.add(name)
        if not self.backend.background:
            self.install(name, args)
            return
        from .native_backend import _THREADS

        t = threading.Thread(
            target=self.install, args=(name, args), name=f"myia-native {name}", daemon=True
        )
        _THREADS.append(t)
        self._threads.append(t)
        t.start()

    def install(self, name: str, args: tuple[Any, ...]) -> None:
        """Make the machine code of region `name` for the types of `args`; put it in place."""
        try:
            if self._module is None:
                self._module = self.backend.load(self.source)
            fn = getattr(self._module, name)
            compile_only(fn, tuple(self.backend.numba.typeof(a) for a in args))
        except Exception as exc:
            # Numba refuses the region (or the module did not load): its host code runs.
            self.globals[name] = self.globals[f"{name}_host"]
            self.reason = f"a region stays NumPy code ({type(exc).__name__}: {exc})"
            return
        self.globals[name] = fn

"""Regions of array work in host code: the outliner the JAX and native backends share.

A program that runs as the NumPy backend's generated code (a tree recursion, a program
taking lists) still has straight-line array work: `Outliner` rewrites that code so that
each maximal run of statements of a function computing arrays from arrays (NumPy code: no
call of a function of the program, nothing that Python may raise) is one function, called
from the host code, that a backend compiles (``jax.jit`` in `jax_regions`, ``numba.njit``
in `native_regions`). In a tree recursion, a node's body ``tanh(W @ concat(hl, hr) + b)``
is one region, and its backward pass two (before and after the calls of the children's
backward passes).

A region's inputs are the variables it reads (arrays, NumPy scalars), its outputs those it
assigns that the function reads elsewhere, all arrays. An array element of a tuple the
function holds (``v[2]``, the sensitivity a child's backpropagator returned) is read into a
variable of its own before the region (`Outliner.lift`), so that the region takes it.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from ..abstract.data import AbstractArray, AbstractScalar, AbstractTuple
from .lower import gadd_arrays

#: Array methods a region may call.
_METHODS = frozenset(["reshape", "astype", "transpose", "sum", "T", "shape", "ndim", "dtype"])

#: NumPy functions that never raise on arrays of checked shapes but have another meaning in
#: ``jax.numpy`` or none.
_NOT_NUMPY = frozenset(["array", "asarray", "copy", "frombuffer", "random", "linalg", "fft"])


def _elements(a: Any, unknown: int = 0) -> int:
    """The number of elements of the largest array of a value of type `a`.

    A dimension known at run time only counts as `unknown`.
    """
    if isinstance(a, AbstractArray):
        return int(np.prod([d if d is not None else unknown for d in a.shape]))
    if isinstance(a, AbstractTuple):
        return max((_elements(e, unknown) for e in a.elements), default=0)
    return 0


def _array_type(a: Any) -> bool:
    """Whether a variable of type `a` is an array, or a tuple of arrays, on the host."""
    if isinstance(a, AbstractArray):
        return True
    if isinstance(a, AbstractTuple):
        return bool(a.elements) and all(map(_array_type, a.elements))
    return False


def _dtypes(a: Any) -> set[str]:
    """The dtypes of the arrays and scalars of a value of type `a`."""
    if isinstance(a, (AbstractArray, AbstractScalar)):
        return {a.dtype}
    if isinstance(a, AbstractTuple):
        return set().union(*map(_dtypes, a.elements))
    return set()


def _input_type(a: Any) -> bool:
    """Whether a region may read a variable of type `a` (arrays, NumPy scalars)."""
    if isinstance(a, AbstractScalar):
        return not a.weak and a.dtype not in ("str",)
    return _array_type(a)


class Pure:
    """Whether an expression is array work a region can compute (see the module's doc).

    `numpy_function` says whether the backend computes ``np.<name>`` as NumPy does.
    """

    def __init__(
        self,
        types: dict[str, Any],
        globals_: dict[str, Any],
        numpy_function: Callable[[str], bool],
    ):
        self.types, self.globals, self.numpy_function = types, globals_, numpy_function

    def name(self, n: str, local: set[str]) -> bool:
        if n in local:
            return True
        if n in self.types:
            return _input_type(self.types[n])
        v = self.globals.get(n)
        if n == "np" or v is gadd_arrays:
            return True
        if isinstance(v, np.ndarray):
            return v.dtype.kind in "biuf"
        return isinstance(v, (np.generic, float, int, bool))

    def __call__(self, e: ast.expr, local: set[str]) -> bool:
        if isinstance(e, ast.Name):
            return self.name(e.id, local)
        if isinstance(e, ast.Constant):
            return isinstance(e.value, (int, float, bool, type(None)))
        if isinstance(e, ast.NamedExpr):
            ok = self(e.value, local)
            local.add(e.target.id)
            return ok
        if isinstance(e, ast.BinOp):
            return self(e.left, local) and self(e.right, local)
        if isinstance(e, ast.UnaryOp):
            return not isinstance(e.op, ast.Not) and self(e.operand, local)
        if isinstance(e, (ast.Tuple, ast.List)):
            return all(self(x, local) for x in e.elts)
        if isinstance(e, ast.Slice):
            return all(x is None or self.constant(x) for x in (e.lower, e.upper, e.step))
        if isinstance(e, ast.Subscript):
            # Constant indices only: XLA clamps an index out of bounds where NumPy raises.
            return self(e.value, local) and self.constant(e.slice)
        if isinstance(e, ast.Attribute):
            if isinstance(e.value, ast.Name) and e.value.id == "np":
                return e.attr not in _NOT_NUMPY and self.numpy_function(e.attr)
            return e.attr in _METHODS and self(e.value, local)
        if isinstance(e, ast.Call):
            f = e.func
            if isinstance(f, ast.Name) and self.globals.get(f.id) is not gadd_arrays:
                return False
            if isinstance(f, ast.Attribute) and not self(f, local):
                return False
            return all(self(a, local) for a in e.args) and all(
                self(k.value, local) for k in e.keywords
            )
        return False

    def constant(self, e: ast.expr) -> bool:
        if isinstance(e, ast.Constant):
            return isinstance(e.value, (int, type(None)))
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            return self.constant(e.operand)
        if isinstance(e, ast.Slice):
            return all(x is None or self.constant(x) for x in (e.lower, e.upper, e.step))
        if isinstance(e, ast.Tuple):
            return all(self.constant(x) for x in e.elts)
        return False


def _computes(stmts: list[ast.stmt]) -> bool:
    """Whether `stmts` compute something (an operation, not only names moved)."""
    return any(
        isinstance(n, (ast.Call, ast.BinOp, ast.UnaryOp)) for s in stmts for n in ast.walk(s)
    )


def _names(nodes: list[ast.AST], ctx: type = ast.Load) -> set[str]:
    """The variables `nodes` read (`ctx` ``ast.Load``) or assign (``ast.Store``)."""
    return {
        n.id
        for x in nodes
        for n in ast.walk(x)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)
    }


def one_dtype(dtypes: set[str]) -> bool:
    """Whether a region computes on one dtype (booleans aside).

    JAX promotes mixed dtypes otherwise than NumPy does (``float32 + int64``).
    """
    return len(dtypes - {"bool"}) <= 1


def _read_first(run: list[ast.stmt]) -> set[str]:
    """The variables `run` reads before it assigns them (``y = f(y)`` reads `y`)."""
    assigned: set[str] = set()
    read: set[str] = set()
    for s in run:
        value = s.value if isinstance(s, ast.Assign) else s
        # A name an assignment expression sets is read after it, in the same statement.
        inner = {n.target.id for n in ast.walk(value) if isinstance(n, ast.NamedExpr)}
        read |= _names([value]) - assigned - inner
        assigned |= inner | {
            n.id for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
    return read


class Outliner:
    """The rewriting of the functions of a generated module with their regions outlined.

    `outline` makes a region of a run of statements when its largest array has at least
    `min_elements` elements and at most `max_elements` (None: no bound), it computes at
    least `min_operations` operations, and `dtypes_ok` takes its dtypes. With
    `global_inputs`, the arrays and scalars it reads from the module's globals are inputs
    too (a region compiled in a module of its own). With `fallback`, its call is ``try:
    outs = region(ins)`` ``except Exception: outs = region_host(ins)``, ``region_host``
    being its code as it was (`regions` lists both). `rewrite` gives the statements a
    region compiles from those of the run (a copy), for the backend's compiler; `accept`,
    whether a run pays as a region.
    """

    def __init__(
        self,
        types: dict[str, Any],
        pure: Pure,
        *,
        min_elements: int = 0,
        max_elements: int | None = None,
        min_operations: int = 1,
        dtypes_ok: Callable[[set[str]], bool] = one_dtype,
        global_inputs: bool = False,
        fallback: bool = False,
        rewrite: Callable[[list[ast.stmt]], list[ast.stmt]] | None = None,
        accept: Callable[[list[ast.stmt]], bool] | None = None,
    ):
        self.types, self.globals = types, pure.globals
        self.pure = pure
        self.min_elements, self.max_elements = min_elements, max_elements
        self.min_operations = min_operations
        self.dtypes_ok, self.global_inputs, self.fallback = dtypes_ok, global_inputs, fallback
        self.rewrite, self.accept = rewrite, accept
        self.regions: list[tuple[str, ast.FunctionDef]] = []

    def statement(self, s: ast.stmt) -> bool:
        """Whether `s` is a statement a region holds: an array assigned from array work."""
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1):
            return False
        t = s.targets[0]
        if not (isinstance(t, ast.Name) and _array_type(self.types.get(t.id))):
            return False
        if not self.pure(s.value, set()):
            return False
        return self.one_dtype(s.value, _dtypes(self.types[t.id]))

    def one_dtype(self, e: ast.expr, dtypes: set[str]) -> bool:
        """Whether `dtypes_ok` takes the dtypes `e` computes on, with `dtypes`."""
        dtypes = set(dtypes)
        for n in _names([e]):
            if n in self.types:
                dtypes |= _dtypes(self.types[n])
            elif isinstance(self.globals.get(n), (np.ndarray, np.generic)):
                dtypes.add(self.globals[n].dtype.name)
        return self.dtypes_ok(dtypes)

    def function(self, fn: ast.FunctionDef) -> None:
        self.fn = fn
        fn.body = self.block(fn.body)

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        run: list[ast.stmt] = []
        for s in stmts:
            if (
                run
                and isinstance(s, ast.Delete)
                and all(isinstance(t, ast.Name) for t in s.targets)
            ):
                run.append(s)  # `outline` deletes, after the region, what the host still holds
                continue
            lifted, undo = self.lift(s)
            if self.statement(s):
                out += lifted  # read before the run: they read no variable it assigns
                run.append(s)
                continue
            if isinstance(s, ast.Return):
                hoisted = self.returned(s)  # in one region with the statements before it
                if hoisted:
                    out += lifted
                    run += hoisted
                else:
                    undo()
            else:
                undo()
            out += self.outline(run)
            run = []
            if isinstance(s, (ast.If, ast.While)):
                s.body = self.block(s.body)
                s.orelse = self.block(s.orelse)
            elif isinstance(s, ast.FunctionDef):
                outer = self.fn
                self.function(s)
                self.fn = outer
            out.append(s)
        return out + self.outline(run)

    def lift(self, s: ast.stmt) -> tuple[list[ast.stmt], Callable[[], None]]:
        """Read the array elements of tuples that `s` reads into variables of their own.

        ``v[2]``, where `v` is a tuple that a region cannot take (it holds a function, an
        environment) and its element 2 an array, becomes ``_e1``, assigned ``v[2]`` by a
        statement returned; and a function that puts `s` back as it was.
        """
        lifted: list[ast.stmt] = []
        undo: list[tuple[ast.AST, str, int | None, ast.expr]] = []
        if not isinstance(s, (ast.Assign, ast.Return)) or s.value is None:
            return lifted, lambda: None

        def visit(parent: ast.AST) -> None:
            for field, value in ast.iter_fields(parent):
                if parent is s and field != "value":
                    continue  # the targets of an assignment
                items = value if isinstance(value, list) else [value]
                for i, e in enumerate(items):
                    if not isinstance(e, ast.AST) or isinstance(e, ast.Lambda):
                        continue
                    if self._tuple_array(e):
                        name = self.fresh("e")
                        self.types[name] = self._element_type(e)
                        read = ast.Assign([ast.Name(name, ast.Store())], e)
                        lifted.append(ast.copy_location(read, s))
                        new = ast.Name(name, ast.Load())
                        if isinstance(value, list):
                            value[i] = new
                            undo.append((parent, field, i, e))
                        else:
                            setattr(parent, field, new)
                            undo.append((parent, field, None, e))
                    else:
                        visit(e)

        visit(s)

        def restore() -> None:
            for parent, field, i, e in reversed(undo):
                if i is None:
                    setattr(parent, field, e)
                else:
                    getattr(parent, field)[i] = e

        return lifted, restore

    def _tuple_array(self, e: ast.AST) -> bool:
        """Whether `e` is ``v[i]``: `v` a tuple no region takes, its element `i` an array."""
        if not (
            isinstance(e, ast.Subscript)
            and isinstance(e.value, ast.Name)
            and isinstance(e.slice, ast.Constant)
            and type(e.slice.value) is int
        ):
            return False
        t = self.types.get(e.value.id)
        return (
            isinstance(t, AbstractTuple)
            and not _input_type(t)
            and -len(t.elements) <= e.slice.value < len(t.elements)
            and isinstance(t.elements[e.slice.value], AbstractArray)
        )

    def _element_type(self, e: Any) -> Any:
        return self.types[e.value.id].elements[e.slice.value]

    def returned(self, s: ast.Return) -> list[ast.stmt]:
        """The array work a return computes (its value, or items of its tuple), as a region."""
        run: list[ast.stmt] = []

        def hoist(e: ast.expr) -> ast.expr:
            if (
                isinstance(e, (ast.Call, ast.BinOp))
                and self.pure(e, set())
                and self._arrays(e)
                and self.one_dtype(e, set())
            ):
                name = self.fresh("r")
                run.append(ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], e), s))
                return ast.Name(name, ast.Load())
            return e

        if isinstance(s.value, ast.Tuple):
            s.value.elts = [hoist(e) for e in s.value.elts]
        elif s.value is not None:
            s.value = hoist(s.value)
        return run

    def _arrays(self, e: ast.expr) -> bool:
        """Whether expression `e` reads an array variable (its value is then an array)."""
        return any(isinstance(self.types.get(n), AbstractArray) for n in _names([e]))

    def fresh(self, base: str) -> str:
        """A name no generated variable has (generated names never start with ``_``)."""
        self.count = getattr(self, "count", 0) + 1
        name = f"_{base}{self.count}"
        self.types[name] = None
        return name

    def outline(self, run: list[ast.stmt]) -> list[ast.stmt]:
        """``del``s of the run aside, its statements as a region's call, or as they were."""
        kept = [s for s in run if not isinstance(s, ast.Delete)]
        deleted = [(t.id, s) for s in run if isinstance(s, ast.Delete) for t in s.targets]
        called = self._outline(kept)
        if called is kept:
            return run
        # A variable the region assigns and returns not is its own: no longer the host's.
        inner = {n.id for s in kept for n in ast.walk(s) if isinstance(n, ast.Name)}
        inner -= _read_first(kept) | _names(called, ast.Store)
        for name, s in deleted:
            if name not in inner:
                called.append(ast.copy_location(ast.Delete([ast.Name(name, ast.Del())]), s))
        return called

    def _outline(self, run: list[ast.stmt]) -> list[ast.stmt]:
        if not run or not _computes(run):
            return run
        assigned: list[str] = []
        for s in run:
            for n in ast.walk(s):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    assigned.append(n.id)
                elif isinstance(n, ast.NamedExpr):
                    assigned.append(n.target.id)
        inside = {id(n) for s in run for n in ast.walk(s)}
        later = {
            n.id
            for n in ast.walk(self.fn)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in inside
        }
        outputs = [n for n in dict.fromkeys(assigned) if n in later]
        if not outputs:
            return run
        names = set(assigned) | _names(run)
        if max((_elements(self.types.get(n)) for n in names), default=0) < self.min_elements:
            return run  # arrays too small for a call of compiled code to pay
        if self.max_elements is not None:
            big = self.max_elements + 1  # an unknown dimension may be large
            if max((_elements(self.types.get(n), big) for n in names), default=0) >= big:
                return run  # arrays large enough for NumPy's calls to cost nothing
        operations = sum(
            isinstance(n, (ast.Call, ast.BinOp, ast.UnaryOp)) for s in run for n in ast.walk(s)
        )
        if operations < self.min_operations or (self.accept and not self.accept(run)):
            return run
        # The statements compiled: `rewrite`'s (the fallback runs `run` as it was, reading
        # the inputs it shares with them and the module's globals).
        body = self.rewrite(copy.deepcopy(run)) if self.rewrite else run
        inputs = sorted(
            n
            for n in _read_first(body)
            if n != "np"
            and (n not in self.globals or (self.global_inputs and self._global_input(n)))
        )
        name = f"region{len(self.regions) // (2 if self.fallback else 1)}"
        args = ast.arguments(
            posonlyargs=[],
            args=[ast.arg(n) for n in inputs],
            kwonlyargs=[],
            kw_defaults=[],
            defaults=[],
        )

        def function(fn: str, stmts: list[ast.stmt]) -> ast.FunctionDef:
            ret = ast.Return(ast.Tuple([ast.Name(n, ast.Load()) for n in outputs], ast.Load()))
            return ast.FunctionDef(fn, copy.deepcopy(args), [*stmts, ret], [], None)

        def assign(fn: str) -> ast.stmt:
            call = ast.Call(
                ast.Name(fn, ast.Load()), [ast.Name(n, ast.Load()) for n in inputs], []
            )
            target = ast.Tuple([ast.Name(n, ast.Store()) for n in outputs], ast.Store())
            # At the line of the run's first statement: tracebacks read the original source.
            return ast.copy_location(ast.Assign([target], call), run[0])

        self.regions.append((name, function(name, body)))
        if not self.fallback:
            return [assign(name)]
        host = f"{name}_host"
        self.regions.append((host, function(host, copy.deepcopy(run))))
        handler = ast.ExceptHandler(ast.Name("Exception", ast.Load()), None, [assign(host)])
        return [ast.copy_location(ast.Try([assign(name)], [handler], [], []), run[0])]

    def _global_input(self, n: str) -> bool:
        """Whether global `n` is a value a region takes as an input (an array, a scalar)."""
        v = self.globals.get(n)
        return isinstance(v, (np.ndarray, np.generic, float, int, bool)) and v is not None

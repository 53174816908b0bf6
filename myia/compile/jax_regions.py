"""Host code with jitted regions: the JAX backend's programs that are not one XLA computation.

A program that recurses (a tree recursion: a function of the program that calls itself), or
takes or returns values that are not arrays and scalars (a tree, a list), runs on the host as
the NumPy backend's generated code. Its array work is still compiled by XLA: `outline`
rewrites that code so that each maximal run of statements of a function computing arrays
from arrays (straight-line NumPy code: no call of a function of the program, nothing that
Python may raise) is one function compiled by ``jax.jit``, called from the host code. In a
tree recursion, a node's body ``tanh(W @ concat(hl, hr) + b)`` is one region, and its
backward pass two (before and after the calls of the children's backward passes).

A region's inputs are the variables it reads (arrays, NumPy scalars), its outputs those it
assigns that the function reads elsewhere, all arrays (``jax.Array``s, which the next region
takes without a copy). Its shapes are those of its arrays, not of the recursion: a region is
compiled once for every shape of the data it computes on, whatever the tree. A region that
JAX fails to trace runs as the NumPy code it was (`Region`).
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from ..abstract.data import AbstractArray, AbstractScalar, AbstractTuple
from .lower import gadd_arrays

#: Array methods a region may call.
_METHODS = frozenset(["reshape", "astype", "transpose", "sum", "T", "shape", "ndim", "dtype"])

#: NumPy functions that never raise on arrays of checked shapes but have another meaning in
#: ``jax.numpy`` or none.
_NOT_NUMPY = frozenset(["array", "asarray", "copy", "frombuffer", "random", "linalg", "fft"])


#: The fewest elements of the largest array a region computes for it to be outlined: a
#: region's call costs a ``jax.jit`` dispatch (several µs, far more on a loaded machine), which
#: NumPy's few operations on small arrays do not (``tree_rnn``'s vectors of 16: 28 times
#: slower with regions on this machine).
MIN_ELEMENTS = 1 << 14


def _elements(a: Any) -> int:
    """The number of elements of the largest array of a value of type `a`."""
    if isinstance(a, AbstractArray):
        return int(np.prod([d if d is not None else 0 for d in a.shape]))
    if isinstance(a, AbstractTuple):
        return max(map(_elements, a.elements), default=0)
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


class _Pure:
    """Whether an expression is array work a region can compute (see the module's doc)."""

    def __init__(self, types: dict[str, Any], globals_: dict[str, Any], jnp: Any):
        self.types, self.globals, self.jnp = types, globals_, jnp

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
                return e.attr not in _NOT_NUMPY and hasattr(self.jnp, e.attr)
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


def _loads(nodes: list[ast.AST]) -> set[str]:
    return {
        n.id
        for x in nodes
        for n in ast.walk(x)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


class _Outliner:
    def __init__(self, types: dict[str, Any], globals_: dict[str, Any], jnp: Any):
        self.types, self.globals = types, globals_
        self.pure = _Pure(types, globals_, jnp)
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
        """Whether `e` computes on one dtype (booleans aside) with `dtypes`.

        JAX promotes mixed dtypes otherwise than NumPy does (``float32 + int64``).
        """
        dtypes = set(dtypes)
        for n in _loads([e]):
            if n in self.types:
                dtypes |= _dtypes(self.types[n])
            elif isinstance(self.globals.get(n), (np.ndarray, np.generic)):
                dtypes.add(self.globals[n].dtype.name)
        return len(dtypes - {"bool"}) <= 1

    def function(self, fn: ast.FunctionDef) -> None:
        self.fn = fn
        fn.body = self.block(fn.body)

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        run: list[ast.stmt] = []
        for s in stmts:
            if self.statement(s):
                run.append(s)
                continue
            if isinstance(s, ast.Return):
                run += self.returned(s)  # in one region with the statements before it
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
        return any(isinstance(self.types.get(n), AbstractArray) for n in _loads([e]))

    def fresh(self, base: str) -> str:
        """A name no generated variable has (generated names never start with ``_``)."""
        self.count = getattr(self, "count", 0) + 1
        name = f"_{base}{self.count}"
        self.types[name] = None
        return name

    def outline(self, run: list[ast.stmt]) -> list[ast.stmt]:
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
        names = set(assigned) | _loads(run)
        if max((_elements(self.types.get(n)) for n in names), default=0) < MIN_ELEMENTS:
            return run  # arrays too small for a jit dispatch to pay
        inputs = sorted(
            n for n in _loads(run) if n not in assigned and n not in self.globals and n != "np"
        )
        name = f"region{len(self.regions)}"
        ret = ast.Return(ast.Tuple([ast.Name(n, ast.Load()) for n in outputs], ast.Load()))
        args = ast.arguments(
            posonlyargs=[],
            args=[ast.arg(n) for n in inputs],
            kwonlyargs=[],
            kw_defaults=[],
            defaults=[],
        )
        self.regions.append((name, ast.FunctionDef(name, args, [*run, ret], [], None)))
        call = ast.Call(ast.Name(name, ast.Load()), [ast.Name(n, ast.Load()) for n in inputs], [])
        target = ast.Tuple([ast.Name(n, ast.Store()) for n in outputs], ast.Store())
        # At the line of the run's first statement: tracebacks read the original source.
        return [ast.copy_location(ast.Assign([target], call), run[0])]


class Region:
    """A region of array work: its ``jax.jit`` compilation, or its NumPy code if JAX fails."""

    def __init__(self, jitted: Any, host: Any):
        self.jitted, self.host = jitted, host
        self.fn = jitted

    def __call__(self, *args: Any) -> Any:
        try:
            return self.fn(*args)
        except Exception:
            if self.fn is self.host:
                raise
            self.fn = self.host
            return self.host(*args)


def outline(
    source: str,
    types: dict[str, Any],
    globals_: dict[str, Any],
    jax: Any,
    math_: Any,
    filename: str,
) -> tuple[Any, int]:
    """`source` with its regions of array work called as jitted functions (see the module).

    The regions are put in `globals_` (`Region`s named ``region0``...). Return the code of
    the rewritten module, compiled with the lines of `source` (tracebacks read `source`), and
    the number of regions.
    """
    jnp = jax.numpy
    tree = ast.parse(source)
    outliner = _Outliner(dict(types), globals_, jnp)
    for s in tree.body:
        if isinstance(s, ast.FunctionDef):
            outliner.function(s)
    traced = dict(globals_, np=jnp, math=math_)
    host = dict(globals_)
    for name, fn in outliner.regions:
        mod = ast.Module([fn], [])
        ast.fix_missing_locations(mod)
        code = compile(mod, filename, "exec")
        exec(code, traced)
        exec(code, host)
        globals_[name] = Region(jax.jit(traced[name]), host[name])
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec"), len(outliner.regions)

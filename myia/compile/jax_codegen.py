"""Code generation for the JAX backend: the NumPy backend's code with JAX's control flow.

`JaxGenerator` is the code generator of `myia.compile.codegen` with the stacks of loop
gradients as `myia.compile.jax_runtime.JaxStack`s. Its output is then rewritten as a Python
syntax tree (`myia.compile.jax_structure`), so that the code traced by ``jax.jit`` has no
Python control flow on values:

- a loop ``while cond: body`` becomes ``jax_while(cond_, body_, state, types)`` (one
  ``lax.while_loop``), its state the variables the body assigns and reads again;
- a state machine ``while True: if _state == 0: ... elif ...`` (a loop with branches in its
  body, several loops, ``break``) becomes one ``lax.while_loop`` whose body is a
  ``lax.switch`` over the states; a ``continue`` returns the new state, a ``return`` leaves
  the loop with the number of its exit, and the exit's expression is computed after the loop;
- ``if c: ... else: ...`` becomes ``return jax_cond(c, then_, else_)`` (``lax.cond``); an arm
  that falls through gets the statements that follow (so both arms return); ``a if c else b``
  becomes a ``lax.cond`` too.

Nothing is unrolled: each loop is one ``lax.while_loop`` whatever its trip count. What cannot
be written so (a loop whose state holds a function) fails when JAX traces it, and the program
runs as the NumPy backend's code (`myia.compile.jax_backend`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import (
    BOTTOM,
    AbstractArray,
    AbstractRecord,
    AbstractScalar,
    AbstractStack,
    AbstractTuple,
)
from ..primitives import P, Primitive
from ..primitives.stack import EMPTY_STACK
from . import jax_checks as chk
from . import jax_control as ctl
from . import jax_runtime as rt
from . import runtime
from .codegen import CodeGenerator, Module
from .jax_copies import without_copies
from .jax_lower import JAX_LOWER, LINALG_ERRORS, number_kind
from .jax_structure import Structure, Unsupported

#: Primitives computed on Python floats whose Python errors the JAX code flags.
_FLOAT_OPS = frozenset(
    "truediv floordiv mod pow exp log log1p log2 log10 expm1 sqrt sin cos tan asin acos sinh cosh "
    "atan2 hypot gammaln acosh atanh".split()
)


#: The checks of the flagged operations that read their operands only, by primitive name
#: (the others flag a result that is not finite, `jax_checks.check_float`).
_FLOAT_CHECKS = {
    "truediv": ("check_divide", chk.check_divide),
    "sin": ("check_bounded", chk.check_bounded),
    "cos": ("check_bounded", chk.check_bounded),
    "to_int": ("check_to_int", chk.check_to_int),
}


def _weak(a: Any, kind: str) -> bool:
    return isinstance(a, AbstractScalar) and a.weak and np.dtype(a.dtype).kind in kind


_INT64 = np.iinfo(np.int64)

#: Arithmetic on Python ints, which XLA computes in int64 (`jax_checks.check_int`).
_INT_OPS = frozenset(["add", "sub", "mul", "neg", "abs"])


def int_step(node: Any) -> tuple[Any, int | None, int | None] | None:
    """``(x, lo, hi)`` of ``x + c``, ``c + x``, ``x - c``, ``c - x`` on Python ints, `c` small.

    The result fits in int64 where ``lo <= x <= hi``; a bound that int64 always meets is None.
    """
    if node.inputs[0].value not in (P.add, P.sub) or len(node.inputs) != 3:
        return None
    if not _weak(node.abstract, "iu"):
        return None
    a, b = node.inputs[1:]
    for x, c in ((a, b), (b, a)):
        if c.is_constant and type(c.value) is int and abs(c.value) <= 2**16:
            if not _weak(x.abstract, "iu"):
                return None
            if node.inputs[0].value is P.add:
                lo, hi = _INT64.min - c.value, _INT64.max - c.value
            elif c is b:  # x - c
                lo, hi = _INT64.min + c.value, _INT64.max + c.value
            else:  # c - x
                lo, hi = c.value - _INT64.max, c.value - _INT64.min
            lo = lo if lo > _INT64.min else None
            hi = hi if hi < _INT64.max else None
            return x, lo, hi
    return None


_COMPARISONS = frozenset(["eq", "ne", "lt", "le", "gt", "ge"])


def _compared_int(node: Any) -> Any:
    """The Python int that comparison `node` compares with a Python float (None if none)."""
    if len(node.inputs) != 3:
        return None
    a, b = node.inputs[1:]
    for x, y in ((a, b), (b, a)):
        if _weak(x.abstract, "iu") and _weak(y.abstract, "f"):
            return x
    return None


#: Operations where NumPy converts a Python int to its other operands' integer dtype (and
#: raises where it does not fit, or compares exactly). ``np.clip`` raises for some bounds
#: past the dtype and clips to others: the host, which runs a flagged call again, knows which.
_NARROW_OPS = frozenset(
    ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "bitwise_and", "bitwise_or",
     "bitwise_xor", "maximum", "minimum", "clip", *_COMPARISONS]
)  # fmt: skip


def narrow_ints(node: Any) -> list[tuple[Any, int, int]]:
    """``(x, lo, hi)`` for each Python int operand `x` of `node` that must fit a narrower dtype.

    Another operand is of an integer dtype narrower than int64 (``np.int32(5) + k``,
    ``np.maximum(a, k)``), which `x` fits where ``lo <= x <= hi``. NumPy raises
    `OverflowError` where it does not (or compares the values exactly); XLA would wrap `x`
    around into the dtype. Empty where `node` has no such operand (a constant `x` is checked
    when compiling: `jax_backend`).
    """
    args = node.inputs[1:]
    dtypes = []
    for y in args:
        t = y.abstract
        if isinstance(t, AbstractScalar) and t.weak:
            continue
        dtype = getattr(t, "dtype", None)
        if dtype is not None and np.dtype(dtype).kind in "iu" and np.dtype(dtype) != np.int64:
            dtypes.append(np.dtype(dtype))
    if not dtypes:
        return []
    info = np.iinfo(dtypes[0])
    return [
        (x, int(info.min), int(info.max))
        for x in args
        if not x.is_constant and _weak(x.abstract, "iu")
    ]


def _int_power(node: Any) -> bool:
    """Whether `node` is ``a ** b`` of NumPy integers (not Python ints: their ``**`` is exact)."""
    out = node.abstract
    strong = isinstance(out, AbstractArray) or (isinstance(out, AbstractScalar) and not out.weak)
    return strong and np.dtype(out.dtype).kind in "iu"


def flagged(node: Any) -> str | None:
    """How the JAX code flags the Python errors of `node` (None if it does not).

    ``"float"``: an operation on Python floats (`jax_checks.check_float`), or ``int(x)`` of
    a float (`jax_checks.check_to_int`: Python raises for ``nan`` and ``inf``); ``"divisor"``:
    an integer division (`jax_checks.check_divisor`); ``"index"``: array indexing
    (`jax_checks.check_index`), ``"index_add"`` its gradient (`jax_lower.index_add`),
    ``"take"``: ``np.take`` and ``np.take_along_axis`` (`jax_checks.check_take`),
    ``"window"`` a window ``x[i:i + k]`` or its gradient (`jax_lower.dynamic_window`);
    ``"finite"``: a factorization or solve NumPy may refuse (`jax_lower.LINALG_ERRORS`);
    ``"exact"``: a comparison of a Python int with a Python float (`jax_checks.check_exact`:
    Python compares them exactly, XLA the int rounded to a float); ``"int"``: arithmetic on
    Python ints (`jax_checks.check_int`, `check_step` where a constant is added: past int64,
    Python's int goes on where XLA's wraps around); ``"narrow"``: a Python int with a value
    of a narrower integer dtype (`narrow_ints`, `jax_checks.check_step`); ``"power"``:
    ``a ** b`` of NumPy integers (`jax_checks.check_power`: NumPy raises for a negative
    exponent, and XLA's power is NumPy's for exponents under 64 only), where a Python int
    operand is also checked as a ``"narrow"`` one is; ``"raise"``: ``raise``, ``assert`` and
    `P.python_errors` (their lowerings flag: `jax_runtime.raise_flagged`, `assert_flagged`).
    """
    fn = node.inputs[0]
    if not (fn.is_constant and hasattr(fn.value, "name")):
        return None
    name, out = fn.value.name, node.abstract
    if name in ("raise", "assert", "python_errors"):
        return "raise"
    ins = [i.abstract for i in node.inputs[1:]]
    if name in _COMPARISONS and _compared_int(node) is not None:
        return "exact"
    if name in _INT_OPS and _weak(out, "iu") and all(_weak(a, "iub") for a in ins):
        return "int"
    if name in _FLOAT_OPS and _weak(out, "f") and all(isinstance(a, AbstractScalar) for a in ins):
        return "float"
    if name == "to_int" and number_kind(ins[0]) == "f":
        return "float"
    if name in ("floordiv", "mod") and _weak(out, "iu") and all(_weak(a, "iub") for a in ins):
        return "divisor"
    if name == "array_getitem":
        return "index"
    if name in ("take", "take_along_axis"):
        # Not the gathers of ``np.sort`` (indices that ``np.argsort`` made are in bounds).
        made = node.inputs[2].inputs[0] if node.inputs[2].is_apply else None
        by_argsort = made is not None and made.is_constant and made.value is P.argsort
        return None if by_argsort and name == "take_along_axis" else "take"
    if name in ("array_index_add", "array_index_add_inplace"):
        return "index_add"
    if name in ("dynamic_window", "window_add", "window_add_inplace"):
        return "window"  # flagged by their lowerings (`jax_lower.dynamic_window`)
    if name in LINALG_ERRORS:
        return "finite"
    if name == "pow" and _int_power(node):
        return "power"
    if name in _NARROW_OPS and narrow_ints(node):
        return "narrow"
    return None


#: Primitives whose implementation, called on traced values, computes what it computes on
#: NumPy values (the others need a lowering to run under JAX).
_IMPL_TRACEABLE = frozenset(
    [P.env_sens, P.gmaterialize, P.zeros, P.ones, P.full, P.seq, P.stack_new,
     P.stack_of_functions, P.stack_push, P.stack_pop, P.stack_empty, P.stack_unpush,
     P.env_delitem]
)  # fmt: skip


def _has_python_scalar(a: Any) -> bool:
    """Whether a value of type `a` holds a Python number (an array while JAX traces it)."""
    if isinstance(a, AbstractScalar):
        return a.weak
    if isinstance(a, AbstractTuple):
        return any(map(_has_python_scalar, a.elements))
    if isinstance(a, AbstractRecord):
        return any(map(_has_python_scalar, a.fields))
    return False


def _zeros_by_type(a: Any) -> bool:
    """Whether ``gzeros`` of a value of type `a` is the zero of the type (`placeholder`)."""
    if isinstance(a, (AbstractScalar, AbstractArray, AbstractStack)):
        return True
    if isinstance(a, AbstractTuple):
        return all(map(_zeros_by_type, a.elements))
    return False


#: Arithmetic that Python computes on bools as on ints (``True + True`` is 2), where XLA's
#: is logical (``True + True`` is True): its boolean operands are cast to int64 first.
_BOOL_ARITH = {
    P.add: "({0} + {1})",
    P.sub: "({0} - {1})",
    P.mul: "({0} * {1})",
    P.floordiv: "({0} // {1})",
    P.mod: "({0} % {1})",
    P.pow_: "({0} ** {1})",
    P.neg: "(-{0})",
    P.abs_: "abs({0})",
}


def _bools_as_ints(node: Any) -> bool:
    """Whether `node` computes an int from bools only (Python's ``True + True``)."""
    out = node.abstract
    if not isinstance(out, AbstractScalar) or out.dtype == "bool":
        return False
    return all(
        isinstance(x.abstract, AbstractScalar) and x.abstract.dtype == "bool"
        for x in node.inputs[1:]
    )


class JaxGenerator(CodeGenerator):
    """The NumPy backend's generator, with stacks and tests as the JAX runtime's."""

    #: JAX's control flow reads a closure's values in its cells (`jax_skeletons.split`).
    closure_defaults = False

    def count_level(self, indent: int, tail: Any) -> None:
        """Count a level of recursion; past `RECURSION_LIMIT`, flag the call.

        XLA cannot raise: the flag ends the loop, and the host runs the call again and raises
        Python's `RecursionError` (a `MyiaRecursionError` at the user's line).
        """
        check, limit = self.global_value(rt.check, "check"), runtime.RECURSION_LIMIT
        self.emit(indent, f"_depth = {check}(_depth + 1 > {limit}, _depth + 1)", tail)

    def call(self, node: Any) -> str:
        fn, *args = node.inputs
        if not fn.is_constant:
            return super().call(node)
        v = fn.value
        if v in (P.stack_new, P.stack_of_functions):
            return self.global_value(rt.EMPTY, "EMPTY_STACK")
        how = flagged(node)
        if v in (P.stack_push, P.stack_pop, P.stack_empty) or how == "index":
            a = [self.expr(x) for x in args]
            if v is P.stack_push:
                element = (
                    node.abstract.element if isinstance(node.abstract, AbstractStack) else None
                )
                el = self.global_value(element, "T_elem")
                return f"{self.global_value(rt.stack_push, 'stack_push')}({a[0]}, {a[1]}, {el})"
            if v is P.stack_pop:
                return f"{self.global_value(rt.stack_pop, 'stack_pop')}({a[0]})"
            if v is P.stack_empty:
                return f"{self.global_value(rt.stack_empty, 'stack_empty')}({a[0]})"
            return f"{self.global_value(chk.check_index, 'check_index')}({a[0]}, {a[1]})"
        if how == "take":
            a = [self.expr(x) for x in args]
            along = ", True" if v is P.take_along_axis else ""
            return f"{self.global_value(chk.check_take, 'check_take')}({', '.join(a)}{along})"
        if v is P.stack_unpush:
            d = self.expr(args[0])
            t = self.global_value(args[1].abstract, "T_sens")
            return f"{self.global_value(rt.stack_unpush, 'stack_unpush')}({d}, {t})"
        if v is P.gzeros and _zeros_by_type(args[0].abstract):
            a = node.abstract
            if isinstance(a, AbstractStack) and a.element is BOTTOM:
                return self.global_value(rt.EMPTY, "EMPTY_STACK")
            return f"placeholder({self.global_value(a, 'T_sens')})"
        if v is P.env_getsens:
            env, key = self.expr(args[0]), self.expr(args[1])
            t = self.global_value(node.abstract, "T_sens")
            return f"{self.global_value(ctl.env_getsens, 'env_getsens')}({env}, {key}, {t})"
        if v is P.env_sens:
            a = ", ".join(self.expr(x) for x in args)
            return f"{self.global_value(ctl.env_sens, 'env_sens')}({a})"
        if v is P.to_bool and args and isinstance(args[0].abstract, AbstractScalar):
            if not args[0].abstract.weak:
                # ``bool(x)`` of a NumPy value, as a traced boolean.
                x = self.expr(args[0])
                return x if args[0].abstract.dtype == "bool" else f"np.not_equal({x}, 0)"
        lower = JAX_LOWER.get(v) if isinstance(v, Primitive) else None
        if v in _BOOL_ARITH and _bools_as_ints(node):
            text = _BOOL_ARITH[v].format(*(f"np.asarray({self.expr(x)}, 'int64')" for x in args))
        else:
            text = lower([self.expr(x) for x in args], node, self) if lower else None
        if text is None:
            text = super().call(node)
        if isinstance(v, Primitive) and v not in _IMPL_TRACEABLE:
            impl = self.global_values.get(id(v.impl))
            if (
                impl is not None
                and text.startswith(impl + "(")
                and any(not x.is_constant and _has_python_scalar(x.abstract) for x in args)
            ):
                # The primitive's implementation dispatches on Python types, which a traced
                # value does not have (a Python float is an array while tracing).
                raise Unsupported(f"{v.name} has no JAX lowering here")
        if how == "float":
            a = ", ".join(self.expr(x) for x in args)  # variables: see `inlined`
            name, check = _FLOAT_CHECKS.get(v.name, ("check_float", chk.check_float))
            return f"{self.global_value(check, name)}({text}, {a})"
        if how == "finite":
            check = LINALG_ERRORS[v.name]
            return f"{self.global_value(check, check.__name__)}({text})"
        if how == "divisor":
            d, n = self.expr(args[1]), self.expr(args[0])
            return f"{self.global_value(chk.check_divisor, 'check_divisor')}({text}, {d}, {n})"
        if how == "exact":
            n = self.expr(_compared_int(node))
            return f"{self.global_value(chk.check_exact, 'check_exact')}({text}, {n})"
        if how == "power":
            check = self.global_value(chk.check_power, "check_power")
            text = f"{check}({text}, {self.expr(args[1])})"
        if how in ("narrow", "power") and narrow_ints(node):
            check = self.global_value(chk.check_step, "check_step")
            dtype = getattr(node.abstract, "dtype", None)
            if dtype is not None and np.dtype(dtype).kind in "iu":
                # A Python int traced (a loop's counter) is a strong int64 under JAX, which
                # widens ``x * k`` of an int8 `x`; NumPy computes in int8, wrapping around.
                # The int64 result cast back is NumPy's: integer + - * ** & | ^ wrap alike,
                # and the maximum, minimum or clip of values in range is in range.
                text = f"({text}).astype({dtype!r})"
            for x, lo, hi in narrow_ints(node):
                text = f"{check}({text}, {self.expr(x)}, {lo}, {hi})"
            return text
        if how == "power":
            return text
        if how == "int":
            step = int_step(node)
            if step is not None:
                x, lo, hi = step
                check = self.global_value(chk.check_step, "check_step")
                return f"{check}({text}, {self.expr(x)}, {lo}, {hi})"
            a = ", ".join(self.expr(x) for x in args)
            return f"{self.global_value(chk.check_int, 'check_int')}({v.name!r}, {text}, {a})"
        return text

    def inlined(self, node: Any) -> bool:
        """As the NumPy backend's, but an operand of a flagged node is a variable (read twice)."""
        if not super().inlined(node):
            return False
        user = self.uses[node][0][0]
        return flagged(user) not in ("float", "divisor", "exact", "int", "power")

    def constant(self, node: Any) -> str:
        if node.value is EMPTY_STACK:
            return self.global_value(rt.EMPTY, "EMPTY_STACK")
        return super().constant(node)

    def generate(self) -> Module:
        module = super().generate()
        types = {name: node.abstract for node, name in self.names.names.items()}
        helpers = {
            "jax_while": ctl.jax_while,
            "jax_switch": ctl.jax_switch,
            "jax_select": ctl.jax_select,
            "jax_cond": ctl.jax_cond,
            "jax_not": ctl.jax_not,
            "placeholder": rt.placeholder,
        }
        for name in helpers:
            self.names.used.add(name)
        rewriter = Structure(types, self.names, module.globals)
        module.globals.update(helpers)
        source = without_copies(module.source, module.globals, module.entry)
        module.source = rewriter.module(source)
        return module

"""What Python's builtins, `math` and NumPy functions mean inside Myia code.

The frontend looks up every global object a user's function refers to in `MAPPING`; a function
found there is replaced by the Myia operation, primitive or library function it maps to.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import math
import operator
import sys
from typing import Any

import numpy as np

from ..primitives import P
from . import everyday as ev
from . import lib, ops, scipy_stats
from . import math_exact as mx
from . import number_lib as nb
from . import numpy_division as nd
from . import numpy_extra as nx
from . import numpy_lib as nl
from . import numpy_logic as nlg
from . import numpy_numeric as nn
from . import numpy_shapes as nsh
from . import numpy_stats as ns
from . import scalar_forms as sf
from .core import Array, NoMatch, Operation


def _by_arity(name: str, *callees: Any) -> Operation:
    def dispatch(*kinds: Any) -> Any:
        n = len(kinds)
        if 1 <= n <= len(callees) and callees[n - 1] is not None:
            return callees[n - 1]
        raise NoMatch

    return Operation(name, dispatch, f"Python's ``{name}``.")


_PYTHON_NUMBERS = (bool, int, float)


def _narrow_int(k: Any) -> bool:
    """Whether kind `k` is a NumPy integer that int64 holds, narrower than int64."""
    return ops.is_number(k) and k in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32)


def _minmax(
    name: str, prim: Any, pick: Any, pick_int64: Any, pick_uint64: Any, fold: Any, fold_n: Any
) -> Operation:
    def dispatch(first: Any, *rest: Any) -> Any:  # (at least one argument, as in Python)
        if not rest:
            return fold
        if len(rest) == 1 and ops.is_number(first) and ops.is_number(rest[0]):
            if first in _PYTHON_NUMBERS and rest[0] in _PYTHON_NUMBERS:
                return prim
            a, b = first, rest[0]
            if (a is int and _narrow_int(b)) or (b is int and _narrow_int(a)):
                return pick_int64  # (a Python int wrapped around into uint8 is another)
            if (a is int and b is np.uint64) or (b is int and a is np.uint64):
                return pick_uint64
            return pick  # (NumPy's maximum and minimum propagate NaN; Python's compare)
        # Of arrays, Python compares (``b > a``) and takes the truth value of the result,
        # which is an error for more than one element: no elementwise ``np.maximum``.
        return fold_n

    return Operation(name, dispatch, f"Python's ``{name}``.")


_NONE = type(None)


def _round(x: Any, ndigits: Any = _NONE) -> Any:
    """``round(x)`` and ``round(x, ndigits)``, by the kind of `x`, as Python's ``__round__``.

    With `ndigits`: a Python float is rounded as Python does, its exact decimal value
    (`P.round_decimal`); a Python int (or bool) stays an int, a multiple of ``10 **
    -ndigits`` (halves to even); a NumPy scalar is NumPy's ``np.round``. Of an array, Python's
    TypeError at run time.
    """
    if not ops.is_numeric(x):
        raise NoMatch(f"type {ops._kind_name(x)} doesn't define __round__ method")
    if ndigits is _NONE:  # (not given, or None)
        return lib.round_
    if not (
        ndigits in (int, bool) or (ops.is_number(ndigits) and issubclass(ndigits, np.integer))
    ):
        raise NoMatch(f"'{ops._kind_name(ndigits)}' object cannot be interpreted as an integer")
    if x is float:
        return lib.round_float
    if x in (int, bool):
        return lib.round_int
    if x is Array:
        return lib.round_
    return nx.np_round


def _pow(base: Any, exp: Any, *mod: Any) -> Any:
    """``pow(base, exp)`` is ``base ** exp``; ``pow(base, exp, mod)`` of Python ints only.

    As Python's: ``mod`` None is no modulus, a float (or a NumPy number, an array) with `mod`
    is a TypeError, refused at compile time; `nb.pow_mod` computes the modular power of ints
    (and bools).
    """
    if not mod:
        return ops.pow_
    if len(mod) > 1:
        raise NoMatch(f"pow expected at most 3 arguments, got {2 + len(mod)}")
    if mod[0] is _NONE:
        return nb.pow_no_modulus
    mod = mod[0]
    kinds = (base, exp, mod)
    if all(k in (int, bool) for k in kinds):
        return nb.pow_mod
    if all(k in _PYTHON_NUMBERS for k in kinds):
        raise NoMatch("pow() 3rd argument not allowed unless all arguments are integers")
    names = ", ".join(f"'{ops._kind_name(k) if k is Array else _qualified(k)}'" for k in kinds)
    raise NoMatch(f"unsupported operand type(s) for ** or pow(): {names}")


def _qualified(cls: Any) -> str:
    """``int``, ``numpy.int64``: a class's name as Python's messages write it."""
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def _scalar_conversion(name: str, prim: Any, strings: bool = False) -> Operation:
    def dispatch(*kinds: Any) -> Any:
        if len(kinds) == 1 and (ops.is_numeric(kinds[0]) or (strings and kinds[0] is str)):
            return prim
        raise NoMatch

    return Operation(name, dispatch, f"Python's ``{name}``.")


def _sequence(name: str, fn: Any) -> Operation:
    def dispatch(*kinds: Any) -> Any:
        if len(kinds) <= 1:
            return fn
        raise NoMatch

    return Operation(name, dispatch, f"Python's ``{name}``.")


def _typed(op: Operation, cls: type) -> Operation:
    """Mark `op` as standing for class `cls` where a class is expected (``isinstance``)."""
    op.pytype = cls  # type: ignore[attr-defined]
    return op


def _numpy_scalar(cls: type) -> Operation:
    """``np.float32(x)`` and the other NumPy scalar types called as casts (on arrays too)."""
    cast = sf.numpy_cast(np.dtype(cls).name)

    def dispatch(*kinds: Any) -> Any:
        if len(kinds) == 1 and ops.is_numeric(kinds[0]):
            return cast
        raise NoMatch

    return _typed(Operation(cls.__name__, dispatch, f"NumPy's ``{cls.__name__}``."), cls)


def _issubdtype(a: Any, b: Any) -> Any:
    """``np.issubdtype(x.dtype, np.floating)``: a constant, the dtypes known at compile time."""
    try:
        sub = np.issubdtype(python_class(a), python_class(b))
    except TypeError:
        raise NoMatch(f"np.issubdtype() of {a!r} and {b!r}: not dtypes") from None
    return lib.true_2 if sub else lib.false_2


BUILTINS: dict[Any, Any] = {
    builtins.len: ops.len_,
    builtins.abs: ops.abs_,
    builtins.range: _by_arity("range", lib.range1, lib.range2, lib.range3),
    builtins.zip: lib.zip_,
    builtins.map: lib.map_,
    builtins.enumerate: lib.enumerate_,
    builtins.reversed: lib.reversed_,
    builtins.sum: lib.sum_,
    builtins.max: _minmax(
        "max", P.maximum, sf.max2, sf.max2_int64, sf.max2_uint64, lib.max_iter, sf.max_n
    ),
    builtins.min: _minmax(
        "min", P.minimum, sf.min2, sf.min2_int64, sf.min2_uint64, lib.min_iter, sf.min_n
    ),
    builtins.float: _typed(_scalar_conversion("float", P.to_float, strings=True), float),
    builtins.int: _typed(_scalar_conversion("int", P.to_int), int),
    builtins.bool: _typed(ops.truth, bool),
    builtins.isinstance: ops.isinstance_,
    builtins.tuple: _typed(_sequence("tuple", lib.tuple_), tuple),
    builtins.list: _typed(_sequence("list", lib.list_), list),
    builtins.dict: _typed(Operation("dict", lambda *kinds: lib.dict_, "Python's ``dict``."), dict),
    builtins.any: lib.any_,
    builtins.round: Operation("round", _round, "Python's ``round``."),
    builtins.divmod: nb.divmod_,
    builtins.pow: Operation("pow", _pow, "Python's ``pow``."),
    builtins.getattr: ops.getattr_builtin,
    builtins.hasattr: ops.hasattr_,
    dataclasses.is_dataclass: ops.is_dataclass_,
    dataclasses.replace: ops.dataclass_replace,
    builtins.all: lib.all_,
    builtins.print: lib.print_,
    builtins.breakpoint: P.breakpoint_,
    builtins.repr: lib.repr_,
    builtins.format: lib.format_,
    builtins.sorted: ev.sorted_,
    builtins.str: _typed(_scalar_conversion("str", lib.str_, strings=True), str),
    builtins.slice: _typed(_by_arity("slice", ev.slice1, ev.slice2, ev.slice3), slice),
    functools.partial: P.partial,
}

#: The functions of the `operator` module: Python's operators (``functools.reduce(operator.mul,
#: ...)``, ``f = operator.add``).
OPERATOR: dict[Any, Any] = {
    operator.add: ops.add,
    operator.sub: ops.sub,
    operator.mul: ops.mul,
    operator.truediv: ops.truediv,
    operator.floordiv: ops.floordiv,
    operator.mod: ops.mod,
    operator.pow: ops.pow_,
    operator.matmul: ops.matmul,
    operator.and_: ops.and_,
    operator.or_: ops.or_,
    operator.xor: ops.xor,
    operator.lshift: ops.lshift,
    operator.rshift: ops.rshift,
    operator.eq: ops.eq,
    operator.ne: ops.ne,
    operator.lt: ops.lt,
    operator.le: ops.le,
    operator.gt: ops.gt,
    operator.ge: ops.ge,
    operator.neg: ops.neg,
    operator.pos: ops.pos,
    operator.abs: ops.abs_,
    operator.invert: ops.invert,
    operator.not_: ops.not_,
}

MATH: dict[Any, Any] = {
    **{
        getattr(math, name): nb.math_function(prim)
        for name, prim in [
            ("exp", P.exp),
            ("log1p", P.log1p),
            ("log2", P.log2),
            ("log10", P.log10),
            ("expm1", P.expm1),
            ("sqrt", P.sqrt),
            ("sin", P.sin),
            ("cos", P.cos),
            ("tan", P.tan),
            ("asin", P.asin),
            ("acos", P.acos),
            ("atan", P.atan),
            ("sinh", P.sinh),
            ("cosh", P.cosh),
            ("tanh", P.tanh),
            ("asinh", P.asinh),
            ("acosh", P.acosh),
            ("atanh", P.atanh),
            ("fabs", P.abs_),
            ("erf", P.erf),
            ("erfc", P.erfc),
            ("lgamma", P.gammaln),
        ]
    },
    math.atan2: nb.math_function2(P.atan2),
    math.copysign: nb.math_function2(P.copysign),
    math.pow: nb.math_pow,
    math.log: nb.math_log,
    math.floor: nb.math_floor,
    math.isnan: nb.math_isnan,
    math.isinf: nb.math_isinf,
    math.isfinite: nb.math_isfinite,
    math.ceil: nb.math_ceil,
    math.trunc: nb.math_trunc,
    math.fmod: nb.math_fmod,
    math.hypot: nb.math_function2(nx.np_hypot),
    math.isclose: ev.math_isclose,
    math.factorial: ev.math_factorial,
    math.comb: ev.math_comb,
    math.perm: ev.math_perm,
    math.gcd: ev.math_gcd,
    math.lcm: ev.math_lcm,
    math.prod: ev.math_prod,
    math.degrees: ev.math_degrees,
    math.radians: ev.math_radians,
    math.frexp: mx.math_frexp,
    math.ldexp: mx.math_ldexp,
    math.modf: mx.math_modf,
    math.fsum: mx.math_fsum,
    math.isqrt: mx.math_isqrt,
    math.dist: mx.math_dist,
}

NUMPY: dict[Any, Any] = {
    np.exp: P.exp,
    np.log: P.log,
    np.log1p: P.log1p,
    np.expm1: P.expm1,
    np.sqrt: P.sqrt,
    np.sin: P.sin,
    np.cos: P.cos,
    np.tan: P.tan,
    np.arcsin: P.asin,
    np.arccos: P.acos,
    np.arctan: P.atan,
    np.arctan2: P.atan2,
    np.sinh: P.sinh,
    np.cosh: P.cosh,
    np.tanh: P.tanh,
    np.arcsinh: P.asinh,
    np.arccosh: P.acosh,
    np.arctanh: P.atanh,
    np.copysign: P.copysign,
    np.floor: P.floor,
    np.ceil: P.ceil,
    np.sign: P.sign,
    np.abs: P.abs_,
    np.absolute: P.abs_,
    np.maximum: P.maximum,
    np.minimum: P.minimum,
    np.add: P.add,
    np.subtract: P.sub,
    np.multiply: P.mul,
    np.divide: P.truediv,
    np.power: P.pow_,
    np.negative: P.neg,
    np.logical_and: P.logical_and,
    np.logical_or: P.logical_or,
    np.logical_not: P.logical_not,
    np.clip: nl.np_clip,
    np.where: nl.np_where,
    np.matmul: P.matmul,
    np.dot: nl.np_dot,
    np.sum: nl.np_sum,
    np.prod: nl.np_prod,
    np.mean: nl.np_mean,
    np.max: nl.np_max,
    np.amax: nl.np_max,
    np.min: nl.np_min,
    np.amin: nl.np_min,
    np.argmax: nl.np_argmax,
    np.argmin: nl.np_argmin,
    np.transpose: nl.np_transpose,
    np.swapaxes: nl.np_swapaxes,
    np.reshape: nl.np_reshape,
    np.expand_dims: nl.np_expand_dims,
    np.squeeze: nl.np_squeeze,
    np.concatenate: nl.np_concatenate,
    np.stack: nl.np_stack,
    np.split: nl.np_split,
    np.take: nl.np_take,
    np.zeros: nl.np_zeros,
    np.ones: nl.np_ones,
    np.full: nl.np_full,
    np.zeros_like: nl.np_zeros_like,
    np.ones_like: nl.np_ones_like,
    np.full_like: nl.np_full_like,
    np.arange: nl.np_arange,
    np.shape: P.shape,
    np.ndim: P.ndim,
    np.size: P.size,
    np.issubdtype: ops.StaticOperation("issubdtype", _issubdtype, static=(0, 1)),
}

NUMPY_SCALARS: dict[Any, Any] = {
    cls: _numpy_scalar(cls)
    for cls in (
        np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
        np.uint8, np.uint16, np.uint32, np.uint64, np.bool_,
    )
}  # fmt: skip


def _ufuncs(mapping: dict[Any, Any]) -> dict[Any, Any]:
    """`mapping` with NumPy's ufuncs computing on NumPy scalars where given Python numbers."""
    return {
        k: sf.numpy_ufunc(v, k.nin) if isinstance(k, np.ufunc) and k.nin in (1, 2) else v
        for k, v in mapping.items()
    }


MAPPING: dict[Any, Any] = {
    **BUILTINS,
    **OPERATOR,
    **MATH,
    **_ufuncs(NUMPY),
    **NUMPY_SCALARS,
    **_ufuncs(nx.MAPPING),
    **_ufuncs(nd.MAPPING),
    **_ufuncs(nlg.MAPPING),
    **_ufuncs(nn.MAPPING),
    **_ufuncs(ns.MAPPING),
    **_ufuncs(nsh.MAPPING),
    functools.partial: P.partial,
}

ARRAY_ATTRIBUTES: dict[str, Any] = {
    "shape": nl.array_shape,
    "ndim": nl.array_ndim,
    "size": nl.array_size,
    "dtype": nl.array_dtype,
    "T": nl.array_T,
}

ARRAY_METHODS: dict[str, Any] = {
    "sum": nl.np_sum,
    "prod": nl.np_prod,
    "mean": nl.np_mean,
    "max": nl.np_max,
    "min": nl.np_min,
    "argmax": nl.np_argmax,
    "argmin": nl.np_argmin,
    "transpose": nl.array_transpose,
    "swapaxes": nl.np_swapaxes,
    "reshape": nl.array_reshape,
    "flatten": nl.array_flatten,
    "ravel": nl.array_flatten,
    "squeeze": nl.np_squeeze,
    "take": nl.np_take,
    "clip": nl.array_clip,
    "dot": nl.np_dot,
    "astype": nl.array_astype,
    "copy": nl.array_copy,
    "item": nl.array_item,
    "tolist": nl.array_tolist,
    **nx.METHODS,
    **ns.METHODS,
}


# The builtin classes that map to an operation (``int``, ``float``, ``bool``...), by operation.
_CLASSES: dict[int, type] = {id(v): k for k, v in MAPPING.items() if isinstance(k, type)}


def python_class(value: Any) -> Any:
    """Return the Python class a constant stands for: `value`, or the builtin class it maps to."""
    return _CLASSES.get(id(value), value)


def refusal(obj: Any) -> str | None:
    """Why `obj` (a function Myia refuses) is refused, and what to use instead, or None."""
    try:
        return nx.REFUSED.get(obj)
    except TypeError:
        return None


#: The SciPy modules whose functions are not yet in `MAPPING` (see `numpy_extra.SCIPY`).
_SCIPY_PENDING: dict[str, dict[str, Any]] = {**nx.SCIPY, **scipy_stats.SCIPY}


def _add_scipy() -> bool:
    """Add to `MAPPING` the functions of the SciPy modules imported since; whether any were."""
    added = False
    for name, meanings in list(_SCIPY_PENDING.items()):
        module = sys.modules.get(name)
        fns = [getattr(module, attr, None) for attr in meanings]
        if module is not None and None not in fns:  # (not while it is being imported)
            MAPPING.update(_ufuncs(dict(zip(fns, meanings.values()))))
            del _SCIPY_PENDING[name]
            added = True
    return added


def lookup(obj: Any) -> Any:
    """Return what `obj` means in Myia code, or None if it has no special meaning."""
    try:
        found = MAPPING.get(obj)
    except TypeError:
        return None
    if found is None and _SCIPY_PENDING and _add_scipy():
        found = MAPPING.get(obj)
    return found

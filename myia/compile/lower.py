"""How the Python backend writes each primitive: a Python expression per call.

`LOWER` maps a primitive to a function ``(args, node) -> str | None`` that returns the Python
expression computing ``node`` (a call of the primitive) from its arguments' expressions
`args`, or None to fall back on calling the primitive's implementation (always correct: it
is what the reference interpreter runs). The expressions use the argument types that
inference attached to the node's inputs (`Node.abstract`): a Python scalar (a *weak* scalar)
computes with `math`, a NumPy scalar or array with `numpy`.

The third argument, the generator, gives names to Python values the expression needs
(``ctx.global_value(value, name)``). Every expression is parenthesized, so that the
generator can nest them freely.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..abstract.data import (
    NONE,
    AbstractArray,
    AbstractDict,
    AbstractList,
    AbstractRecord,
    AbstractScalar,
    AbstractTuple,
    AbstractUnion,
)
from ..infer.rulelib import as_dtype
from ..ir.node import Apply, Node, is_apply_of
from ..primitives import P, Primitive, special
from ..primitives.grad import EMPTY_ENV, NO_ZERO, EnvInstance, zero_of_type
from ..primitives.lazy_sens import lazy_zeros
from ..primitives.randomness import METHODS as RANDOM_METHODS
from ..primitives.stack import EMPTY_STACK, STACK
from ..records import field_names, is_namedtuple_class

Lowering = Callable[[list[str], Apply, Any], "str | None"]

LOWER: dict[Primitive, Lowering] = {}

#: Primitives that the generator may move into their single user's expression: pure,
#: cheap and never calling back into Myia code.
INLINABLE: set[Primitive] = set()

#: For some primitives, the positions of the inputs whose values their lowering never reads
#: (only their types): the generator does not keep such values alive for them.
UNREAD: dict[Primitive, Callable[[Apply], tuple[int, ...]]] = {}


def _is_weak(node: Node) -> bool:
    a = node.abstract
    return isinstance(a, AbstractScalar) and a.weak


def _is_numpy(node: Node) -> bool:
    a = node.abstract
    return isinstance(a, AbstractArray) or (isinstance(a, AbstractScalar) and not a.weak)


def lowering(*prims: Primitive, inline: bool = True) -> Callable[[Lowering], Lowering]:
    """Register the decorated function as the lowering of `prims`."""

    def deco(fn: Lowering) -> Lowering:
        for p in prims:
            LOWER[p] = fn
            if inline:
                INLINABLE.add(p)
        return fn

    return deco


def _binary(op: str) -> Lowering:
    def lower(args: list[str], node: Apply, ctx: Any) -> str:
        return f"({args[0]} {op} {args[1]})"

    return lower


for _prim, _op in [
    (P.add, "+"),
    (P.sub, "-"),
    (P.mul, "*"),
    (P.truediv, "/"),
    (P.floordiv, "//"),
    (P.mod, "%"),
    (P.pow_, "**"),
    (P.eq, "=="),
    (P.ne, "!="),
    (P.lt, "<"),
    (P.le, "<="),
    (P.gt, ">"),
    (P.ge, ">="),
    (P.bitwise_and, "&"),
    (P.bitwise_or, "|"),
    (P.bitwise_xor, "^"),
    (P.left_shift, "<<"),
    (P.right_shift, ">>"),
]:
    lowering(_prim)(_binary(_op))


@lowering(P.neg)
def _neg(args: list[str], node: Apply, ctx: Any) -> str:
    return f"(-{args[0]})"


@lowering(P.to_bool)
def _to_bool(args: list[str], node: Apply, ctx: Any) -> str:
    a = node.inputs[1].abstract
    if isinstance(a, AbstractScalar) and a.weak and a.dtype == "bool":
        return args[0]
    return f"bool({args[0]})"


# Unary math: `math.f` on Python scalars, `np.f` on NumPy values (the primitive's own rule).
_MATH = {
    "exp": ("math.exp", "np.exp"),
    "log": ("math.log", "np.log"),
    "log1p": ("math.log1p", "np.log1p"),
    "log2": ("math.log2", "np.log2"),
    "log10": ("math.log10", "np.log10"),
    "expm1": ("math.expm1", "np.expm1"),
    "sqrt": ("math.sqrt", "np.sqrt"),
    "sin": ("math.sin", "np.sin"),
    "cos": ("math.cos", "np.cos"),
    "tan": ("math.tan", "np.tan"),
    "asin": ("math.asin", "np.arcsin"),
    "acos": ("math.acos", "np.arccos"),
    "atan": ("math.atan", "np.arctan"),
    "sinh": ("math.sinh", "np.sinh"),
    "cosh": ("math.cosh", "np.cosh"),
    "tanh": ("math.tanh", "np.tanh"),
    "asinh": ("math.asinh", "np.arcsinh"),
    "acosh": ("math.acosh", "np.arccosh"),
    "atanh": ("math.atanh", "np.arctanh"),
}


def _unary(py: str, numpy: str) -> Lowering:
    def lower(args: list[str], node: Apply, ctx: Any) -> str | None:
        x = node.inputs[1]
        if _is_weak(x):
            return f"{py}({args[0]})"
        if _is_numpy(x):
            return f"{numpy}({args[0]})"
        return None

    return lower


for _name, (_py, _np) in _MATH.items():
    lowering(getattr(P, _name))(_unary(_py, _np))


@lowering(P.erf, P.erfc, P.gammaln)
def _special(args: list[str], node: Apply, ctx: Any) -> str | None:
    """``math``'s function on Python floats (Numba compiles it in loops), else SciPy's."""
    name = node.inputs[0].value.name  # type: ignore[attr-defined]
    if _is_weak(node.inputs[1]):
        return f"math.{'lgamma' if name == 'gammaln' else name}({args[0]})"
    sp = special.scipy_special() if _is_numpy(node.inputs[1]) else None
    if sp is not None:
        return f"{ctx.global_value(getattr(sp, name), name)}({args[0]})"
    return None


def _extremum(numpy: str) -> Lowering:
    def lower(args: list[str], node: Apply, ctx: Any) -> str | None:
        if _is_numpy(node):  # (Python numbers: Python's max and min, the implementation)
            return f"{numpy}({args[0]}, {args[1]})"
        return None

    return lower


@lowering(P.copysign)
def _copysign(args: list[str], node: Apply, ctx: Any) -> str | None:
    """``math.copysign`` of Python numbers, else ``np.copysign``."""
    if _is_weak(node.inputs[1]) and _is_weak(node.inputs[2]):
        return f"math.copysign({args[0]}, {args[1]})"
    if _is_numpy(node):
        return f"np.copysign({args[0]}, {args[1]})"
    return None


lowering(P.maximum)(_extremum("np.maximum"))
lowering(P.minimum)(_extremum("np.minimum"))


@lowering(P.transpose)
def _transpose(args: list[str], node: Apply, ctx: Any) -> str | None:
    axes = node.inputs[2]
    if not (isinstance(node.abstract, AbstractArray) and node.abstract.shape):
        return None  # a 0-d result is a scalar (the implementation)
    if axes.is_constant and axes.value in (None, ()):  # type: ignore[attr-defined]
        return f"{args[0]}.T"
    if (
        axes.is_constant
        and isinstance(axes.value, tuple)
        and all(type(i) is int for i in axes.value)
    ):  # type: ignore[attr-defined]
        return f"{args[0]}.transpose({axes.value!r})"  # type: ignore[attr-defined]
    return None


@lowering(P.array_getitem)
def _array_getitem(args: list[str], node: Apply, ctx: Any) -> str | None:
    # An array result is what NumPy's indexing gives (a 0-d one is made a scalar instead).
    if isinstance(node.abstract, AbstractArray) and node.abstract.shape:
        return f"{args[0]}[{args[1]}]"
    return None


@lowering(P.identity, P.narrow, P.stop_gradient)
def _identity(args: list[str], node: Apply, ctx: Any) -> str:
    return args[0]


@lowering(P.convert)
def _convert(args: list[str], node: Apply, ctx: Any) -> str | None:
    if node.inputs[1].abstract == node.abstract:
        return args[0]
    return None


@lowering(P.switch)
def _switch(args: list[str], node: Apply, ctx: Any) -> str:
    return f"({args[1]} if {args[0]} else {args[2]})"


@lowering(P.make_tuple)
def _make_tuple(args: list[str], node: Apply, ctx: Any) -> str:
    if len(args) == 1:
        return f"({args[0]},)"
    return f"({', '.join(args)})"


@lowering(P.tuple_getitem, P.list_getitem)
def _getitem(args: list[str], node: Apply, ctx: Any) -> str:
    return f"{args[0]}[{args[1]}]"


@lowering(P.tuple_concat)
def _tuple_concat(args: list[str], node: Apply, ctx: Any) -> str:
    return f"({args[0]} + {args[1]})"


@lowering(P.tuple_len, P.list_len)
def _len(args: list[str], node: Apply, ctx: Any) -> str:
    return f"len({args[0]})"


@lowering(P.tuple_len_is)
def _len_is(args: list[str], node: Apply, ctx: Any) -> str:
    return f"(type({args[0]}) is tuple and len({args[0]}) == {args[1]})"


@lowering(P.make_list)
def _make_list(args: list[str], node: Apply, ctx: Any) -> str:
    return f"[{', '.join(args)}]"


@lowering(P.record_getattr)
def _record_getattr(args: list[str], node: Apply, ctx: Any) -> str | None:
    name = node.inputs[2]
    if name.is_constant and isinstance(name.value, str) and name.value.isidentifier():
        return f"{args[0]}.{name.value}"
    return None


@lowering(P.is_none)
def _is_none(args: list[str], node: Apply, ctx: Any) -> str:
    return f"({args[0]} is None)"


@lowering(P.logical_not)
def _not(args: list[str], node: Apply, ctx: Any) -> str:
    # ``np`` is the backend's NumPy (``jax.numpy`` under XLA): a batched test's mask.
    if _is_weak(node.inputs[1]):
        return f"(not {args[0]})"
    return f"np.logical_not({args[0]})"


@lowering(P.matmul)
def _matmul(args: list[str], node: Apply, ctx: Any) -> str | None:
    if all(isinstance(i.abstract, AbstractArray) for i in node.inputs[1:]):
        return f"({args[0]} @ {args[1]})"
    return None


@lowering(P.make_record)
def _make_record(args: list[str], node: Apply, ctx: Any) -> str | None:
    cls = node.inputs[1]
    if not cls.is_constant:
        return None
    new = ctx.global_value(record_constructor(cls.value), f"new_{cls.value.__name__}")
    return f"{new}({', '.join(args[1:])})"


_CONSTRUCTORS: dict[type, Callable[..., Any]] = {}


def record_constructor(cls: type) -> Callable[..., Any]:
    """A fast function building an instance of dataclass `cls` from all its fields' values.

    Like `make_record`'s implementation, it does not call ``__init__`` (nor
    ``__post_init__``, which the program ran where it made the instance): a record is its
    fields.
    """
    fn = _CONSTRUCTORS.get(cls)
    if fn is None and is_namedtuple_class(cls):
        fn = _CONSTRUCTORS[cls] = _namedtuple_constructor(cls)
    if fn is None:
        names = field_names(cls)
        params = [f"_{i}" for i in range(len(names))]
        if hasattr(cls, "__slots__") or not names:
            body = [f"    _set(o, {n!r}, {p})" for n, p in zip(names, params)]
        else:
            body = ["    d = o.__dict__"] + [f"    d[{n!r}] = {p}" for n, p in zip(names, params)]
        head = [f"def new({', '.join(params)}):", "    o = _new(cls)"]
        src = "\n".join([*head, *body, "    return o"])
        scope: dict[str, Any] = {"_new": object.__new__, "_set": object.__setattr__, "cls": cls}
        exec(src, scope)
        fn = _CONSTRUCTORS[cls] = scope["new"]
    return fn


def _namedtuple_constructor(cls: type) -> Callable[..., Any]:
    """`record_constructor` of a named tuple class: ``tuple.__new__`` of its fields' values."""
    params = ", ".join(f"_{i}" for i in range(len(field_names(cls))))
    src = f"def new({params}):\n    return _new(cls, ({params}{',' if params else ''}))"
    scope: dict[str, Any] = {"_new": tuple.__new__, "cls": cls}
    exec(src, scope)
    return scope["new"]


@lowering(P.apply_star, inline=False)
def _apply_star(args: list[str], node: Apply, ctx: Any) -> str:
    ctx.deep = True
    return f"{args[0]}(*{args[1]})"


@lowering(P.partial, inline=False)
def _partial(args: list[str], node: Apply, ctx: Any) -> str:
    return f"{ctx.global_value(functools.partial, 'partial')}({', '.join(args)})"


@lowering(P.print_, inline=False)
def _print(args: list[str], node: Apply, ctx: Any) -> str:
    f = node.inputs[4]
    file = "" if f.is_constant and f.value is None else f", file={args[3]}.get()"
    return f"{ctx.global_value(print, 'print')}(*{args[0]}, sep={args[1]}, end={args[2]}{file})"


@lowering(P.random_draw, inline=False)
def _random_draw(args: list[str], node: Apply, ctx: Any) -> str | None:
    """``rng.random(size=(32, 64))``: the generator's method called by name, with keywords.

    When the sample shape comes from ``like`` (a ``size`` of None, arrays of parameters), the
    primitive's implementation computes it.
    """
    method, params, size, dtype, like = node.inputs[2:]
    if not all(i.is_constant for i in (method, size, dtype, like)):
        return None
    if size.value is None and like.value:  # type: ignore[attr-defined]
        return None
    names, sized, _ = RANDOM_METHODS[method.value]  # type: ignore[attr-defined]
    kw = [f"{name}={args[2]}[{k}]" for k, name in enumerate(names)]
    if sized:
        kw.append(f"size={args[3]}")
    if dtype.value is not None:  # type: ignore[attr-defined]
        kw.append(f"dtype={ctx.global_value(as_dtype(dtype.value), 'dtype')}")  # type: ignore[attr-defined]
    return f"{args[0]}.{method.value}({', '.join(kw)})"  # type: ignore[attr-defined]


@lowering(P.format_)
def _format(args: list[str], node: Apply, ctx: Any) -> str | None:
    conv = node.inputs[2]
    if not conv.is_constant:
        return None
    value = args[0]
    if conv.value:
        fn = {"r": repr, "s": str, "a": ascii}[conv.value]
        value = f"{ctx.global_value(fn, fn.__name__)}({value})"
    return f"{ctx.global_value(format, 'format')}({value}, {args[2]})"


@lowering(P.str_concat)
def _str_concat(args: list[str], node: Apply, ctx: Any) -> str:
    return f"({' + '.join(args)})" if args else "''"


@lowering(P.abs_)
def _abs(args: list[str], node: Apply, ctx: Any) -> str:
    return f"abs({args[0]})"


def _const_args(node: Apply, first: int) -> bool:
    return all(i.is_constant for i in node.inputs[first:])


def _reduction(fn: str) -> Lowering:
    def lower(args: list[str], node: Apply, ctx: Any) -> str | None:
        if not isinstance(node.inputs[1].abstract, AbstractArray) or not _const_args(node, 2):
            return None
        if len(node.inputs) > 4 and node.inputs[4].value is not None:
            return None  # an explicit dtype: the implementation converts it
        axis, keepdims = node.inputs[2].value, node.inputs[3].value
        return f"{fn}({args[0]}, axis={axis!r}, keepdims={keepdims!r})"

    return lower


# The ufuncs' reduce methods are what np.sum, np.max and np.min call (same dtypes and
# results), without their Python wrappers (a few microseconds a call).
for _prim, _fn in [
    (P.reduce_sum, "np.add.reduce"),
    (P.reduce_mean, "np.mean"),
    (P.reduce_max, "np.maximum.reduce"),
    (P.reduce_min, "np.minimum.reduce"),
]:
    lowering(_prim)(_reduction(_fn))


@lowering(P.astype)
def _astype(args: list[str], node: Apply, ctx: Any) -> str | None:
    # The method, whatever spells the dtype (``np.float32``, ``float``, ``"float32"``): the
    # primitive's own code makes a NumPy array of its argument, which no tracer passes.
    a, out = node.inputs[1].abstract, node.abstract
    if isinstance(a, AbstractArray) and a.shape and isinstance(out, AbstractArray):
        name = np.dtype(out.dtype).name
        return f"{args[0]}.astype(np.{'bool_' if name == 'bool' else name})"
    return None


@lowering(P.concatenate)
def _concatenate(args: list[str], node: Apply, ctx: Any) -> str | None:
    if _const_args(node, 2) and type(node.inputs[2].value) is int:  # type: ignore[attr-defined]
        return f"np.concatenate({args[0]}, {args[1]})"
    return None


@lowering(P.stack_list)
def _stack_list(args: list[str], node: Apply, ctx: Any) -> str | None:
    return f"np.stack({args[0]}, axis={args[1]})"


@lowering(P.concatenate_list)
def _concatenate_list(args: list[str], node: Apply, ctx: Any) -> str | None:
    return f"np.concatenate({args[0]}, axis={args[1]})"


@lowering(P.swapaxes)
def _swapaxes(args: list[str], node: Apply, ctx: Any) -> str | None:
    a = node.inputs[1].abstract
    if isinstance(a, AbstractArray) and len(a.shape) == 2 and _const_args(node, 2):
        return f"{args[0]}.T"
    return f"np.swapaxes({args[0]}, {args[1]}, {args[2]})"


@lowering(P.unbroadcast)
def _unbroadcast(args: list[str], node: Apply, ctx: Any) -> str | None:
    """Sum the broadcast axes away, with the axes known at compile time."""
    d, x = node.inputs[1].abstract, node.inputs[2].abstract
    if not (isinstance(d, AbstractArray) and isinstance(x, AbstractArray)):
        return None
    if x.dtype[0] != "f" or not x.shape or not d.shape or None in d.shape + x.shape:
        return None
    ds, xs = d.shape, x.shape
    expr = args[0]
    if ds != xs:
        lead = len(ds) - len(xs)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, n in enumerate(xs) if n == 1 and ds[i + lead] != 1
        )
        if lead == 0:  # the axes summed stay, as the ones of x's shape
            expr = f"np.add.reduce({expr}, axis={axes!r}, keepdims=True)"
        else:
            expr = f"np.add.reduce({expr}, axis={axes!r})"
            if tuple(n for i, n in enumerate(ds) if i not in axes) != xs:
                expr = f"np.reshape({expr}, {xs!r})"
    if d.dtype != x.dtype:
        expr = f"np.asarray({expr}, dtype=np.{x.dtype})"
    return expr


# Stacks and environments of the gradient transform, in their runtime representations.


@lowering(P.stack_new, P.stack_of_functions)
def _stack_new(args: list[str], node: Apply, ctx: Any) -> str:
    return ctx.global_value(EMPTY_STACK, "EMPTY_STACK")


@lowering(P.stack_push)
def _stack_push(args: list[str], node: Apply, ctx: Any) -> str:
    return f"({args[1]}, {args[0]}, {ctx.global_value(STACK, 'STACK')})"


@lowering(P.stack_pop)
def _stack_pop(args: list[str], node: Apply, ctx: Any) -> str:
    # A cell starts with the top and the rest: read by index, it is its own pop.
    users = ctx.uses.get(node, [])
    if all(u is not None and _is_getitem(u, i) for u, i in users):
        return args[0]
    return f"{args[0]}[:2]"


def _is_getitem(user: Apply, i: int) -> bool:
    fn = user.inputs[0]
    return i == 1 and fn.is_constant and fn.value is P.tuple_getitem


@lowering(P.stack_empty)
def _stack_empty(args: list[str], node: Apply, ctx: Any) -> str:
    return f"({args[0]} is {ctx.global_value(EMPTY_STACK, 'EMPTY_STACK')})"


@lowering(P.reshape, P.expand_dims)
def _reshape(args: list[str], node: Apply, ctx: Any) -> str | None:
    # The result's shape is known here: the method, not the function (several us a call).
    a, out = node.inputs[1].abstract, node.abstract
    if isinstance(a, AbstractArray) and isinstance(out, AbstractArray) and a.shape and out.shape:
        if None not in out.shape:  # (else a dimension is known at run time only)
            return f"{args[0]}.reshape({out.shape!r})"
    return None


def _static_parts(node: Apply) -> list[int] | None:
    """The sizes along the axis of the parts ``unconcatenate`` cuts, known from types."""
    d, arrays, axis = (i.abstract for i in node.inputs[1:4])
    ax = getattr(node.inputs[3], "value", None)
    if not (isinstance(d, AbstractArray) and isinstance(arrays, AbstractTuple) and d.shape):
        return None
    if type(ax) is not int or d.dtype[0] not in "fc":
        return None
    ax %= len(d.shape)
    if not all(isinstance(a, AbstractArray) and a.dtype == d.dtype for a in arrays.elements):
        return None
    sizes = [a.shape[ax] for a in arrays.elements]
    return None if None in sizes else sizes


@lowering(P.unconcatenate)
def _unconcatenate(args: list[str], node: Apply, ctx: Any) -> str | None:
    # Slices of the sensitivity, at offsets known here (views: arrays are never mutated).
    sizes = _static_parts(node)
    if sizes is None:
        return None
    ax = node.inputs[3].value % len(node.inputs[1].abstract.shape)  # type: ignore[attr-defined]
    src = args[0]
    if not src.isidentifier():
        name = ctx.names.fresh("d")
        first, src = f"({name} := {src})", name
    else:
        first = src
    parts, start = [], 0
    for k, n in enumerate(sizes):
        parts.append(f"{first if k == 0 else src}[{':, ' * ax}{start}:{start + n}]")
        start += n
    return f"({', '.join(parts)},)"


UNREAD[P.unconcatenate] = lambda node: (2,) if _static_parts(node) is not None else ()


@lowering(P.broadcast_like)
def _broadcast_like(args: list[str], node: Apply, ctx: Any) -> str | None:
    # Shapes and dtypes known here: a new array of the shape of `like` (never a view: the
    # result may be a gradient handed to the user).
    d, like = node.inputs[1].abstract, node.inputs[2].abstract
    if not (isinstance(like, AbstractArray) and like.shape and None not in like.shape):
        return None
    if isinstance(d, AbstractScalar):
        return f"np.full({like.shape!r}, {args[0]}, dtype=np.{like.dtype})"
    if isinstance(d, AbstractArray) and d.dtype == like.dtype:
        return f"({args[0]} + np.zeros({like.shape!r}, dtype=np.{like.dtype}))"
    if isinstance(d, AbstractArray):
        return f"np.broadcast_to({args[0]}, {like.shape!r}).astype(np.{like.dtype})"
    return None


def _static_broadcast(node: Apply) -> tuple[int, ...]:
    d, like = node.inputs[1].abstract, node.inputs[2].abstract
    if isinstance(like, AbstractArray) and like.shape and None not in like.shape:
        if isinstance(d, (AbstractScalar, AbstractArray)):
            return (2,)
    return ()


UNREAD[P.broadcast_like] = _static_broadcast


@lowering(P.gzeros)
def _gzeros(args: list[str], node: Apply, ctx: Any) -> str | None:
    # The zero of a type known here: no dispatch on the value at run time.
    a = node.inputs[1].abstract
    if isinstance(a, AbstractArray) and a.shape and None not in a.shape:
        return f"np.zeros({a.shape!r}, dtype=np.{a.dtype})"
    if isinstance(a, AbstractArray) and a.shape == ():  # a 0-d array's sensitivity: a scalar
        return f"np.{a.dtype}(0)"
    if (
        isinstance(a, (AbstractList, AbstractDict))
        or (isinstance(a, AbstractRecord) and a.cls is not None)
        or (isinstance(a, AbstractTuple) and zero_of_type(a) is NO_ZERO)
    ):
        # A data structure's zero is lazy: no dispatch on the value's type at run time.
        return f"{ctx.global_value(lazy_zeros, 'lazy_zeros')}({args[0]})"
    if isinstance(a, AbstractUnion) and all(
        o == NONE or (isinstance(o, AbstractRecord) and o.cls is not None) for o in a.options
    ):
        # An optional record (a subtree): None is its own zero.
        x = args[0]
        if not x.isidentifier():
            return None
        return f"(None if {x} is None else {ctx.global_value(lazy_zeros, 'lazy_zeros')}({x}))"
    return None


UNREAD[P.gzeros] = lambda node: (1,) if _known_array(node.inputs[1].abstract) else ()


def _known_array(a: Any) -> bool:
    """Whether `a` is an array type whose every dimension is known at compile time."""
    return isinstance(a, AbstractArray) and None not in a.shape


@lowering(P.gadd)
def _gadd(args: list[str], node: Apply, ctx: Any) -> str | None:
    # Arrays one of which may be the zero `zero_of_type` shares (a leaf of a tree gives it
    # as its weights' sensitivity): adding it is skipped (see `gadd_numbers`).
    a = node.abstract
    if not _known_array(a) or node.inputs[1].abstract != a:
        return None
    if node.inputs[2].abstract != a:
        return None
    z = ctx.global_value(zero_of_type(a), "zeros")
    return f"{ctx.global_value(gadd_arrays, 'gadd_arrays')}({args[0]}, {args[1]}, {z})"


def gadd_arrays(x: Any, y: Any, zero: Any) -> Any:
    """``x + y``, where `zero` (a shared, read-only zero array) adds nothing."""
    return x if y is zero else y if x is zero else x + y


def _basic_index_type(a: Any) -> bool:
    """Whether every index of type `a` is basic: an integer, or a tuple of integers."""
    if isinstance(a, AbstractTuple):
        return all(_basic_index_type(e) for e in a.elements) and bool(a.elements)
    return isinstance(a, AbstractScalar) and a.dtype.startswith(("int", "uint"))


@lowering(P.array_index_add)
def _array_index_add(args: list[str], node: Apply, ctx: Any) -> str | None:
    # An element read (``A[i, j]``): no dispatch on the index at run time.
    if not (_known_array(node.abstract) and _basic_index_type(node.inputs[2].abstract)):
        return None
    return f"{ctx.global_value(index_add_basic, 'index_add_basic')}({', '.join(args)})"


@lowering(P.gadd_owned)
def _gadd_owned(args: list[str], node: Apply, ctx: Any) -> str:
    return f"({args[0]} + {args[1]})"


@lowering(P.array_index_add_inplace)
def _array_index_add_inplace(args: list[str], node: Apply, ctx: Any) -> str | None:
    if not (_known_array(node.abstract) and _basic_index_type(node.inputs[2].abstract)):
        return None
    a = node.abstract
    z = node.inputs[1]
    if is_apply_of(z, P.gzeros) and ctx.inlined(z):  # type: ignore[attr-defined]
        # Written into a new zero array: one element set, not read and added.
        fn = ctx.global_value(index_set_zeros, "index_set_zeros")
        return f"{fn}({a.shape!r}, np.{a.dtype}, {args[1]}, {args[2]})"
    fn = ctx.global_value(index_add_basic_inplace, "index_add_basic_inplace")
    return f"{fn}({', '.join(args)})"


def index_add_basic(a: np.ndarray, index: Any, v: Any) -> np.ndarray:
    """A copy of `a` with `v` added at basic index `index` (integers)."""
    out = a.copy()
    out[index] += v
    return out


def index_add_basic_inplace(a: np.ndarray, index: Any, v: Any) -> np.ndarray:
    """`a` with `v` added at basic index `index` (integers), written into `a`."""
    a[index] += v
    return a


def index_set_zeros(shape: tuple[int, ...], dtype: Any, index: Any, v: Any) -> np.ndarray:
    """Zeros of `shape` and `dtype` with `v` at basic index `index` (integers)."""
    a = np.zeros(shape, dtype)
    a[index] = v
    return a


@lowering(P.gzeros_unread)
def _gzeros_unread(args: list[str], node: Apply, ctx: Any) -> str:
    return "None"  # never read (see the primitive's docstring)


UNREAD[P.gzeros_unread] = lambda node: (1,)


@lowering(P.env_setitem)
def _env_setitem(args: list[str], node: Apply, ctx: Any) -> str:
    env = ctx.global_value(EnvInstance, "Env")
    base = node.inputs[1]
    if (base.is_constant and base.value is EMPTY_ENV) or (  # type: ignore[attr-defined]
        base.is_apply and base.inputs[0].is_constant and base.inputs[0].value is P.env_new  # type: ignore[attr-defined]
    ):
        return f"{env}({{{args[1]}: {args[2]}}})"
    return f"{env}({{**{args[0]}.contents, {args[1]}: {args[2]}}})"


@lowering(P.env_sens)
def _env_sens(args: list[str], node: Apply, ctx: Any) -> str:
    return f"{args[0]}.contents[{args[1]}]"  # the type argument only gives the result's


@lowering(P.env_getitem)
def _env_getitem(args: list[str], node: Apply, ctx: Any) -> str:
    return f"{args[0]}.contents.get({args[1]}, {args[2]})"


@lowering(P.env_new)
def _env_new(args: list[str], node: Apply, ctx: Any) -> str:
    return ctx.global_value(EMPTY_ENV, "EMPTY_ENV")


from . import lower_numpy  # noqa: E402, F401  (its lowerings join the table)

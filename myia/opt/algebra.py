"""Constant folding and algebraic simplification of scalars and arrays.

Only exact identities are applied, for every value of the types involved (NaN, infinities
and the sign of zero included), and only where the result has the type of the expression
(``x * 1`` where ``x`` is ``f32 x 3`` and ``1`` a Python int is ``x``; ``x * ones((2, 3))`` where
``x`` is ``f32 x 3`` broadcasts and is kept):

- ``x * 1``, ``1 * x``, ``x / 1``, ``x ** 1``, ``x - 0``, ``x + (-0.0)``, ``-(-x)`` are ``x``;
- ``x + 0`` and ``0 + x`` are ``x`` for integers only (for floats ``-0.0 + 0.0`` is ``0.0``);
- ``x * 0`` is ``0`` for integers and booleans only (for floats ``inf * 0`` is ``nan``).

Constant folding evaluates a pure primitive on constant arguments at compile time when the
result is a scalar, None, a string or a small tuple of those (arrays are left to run time:
folding them would store them in the program); if the primitive raises (``1 // 0``) the node
is kept, to raise at run time as Python would. A node whose value inference already knows
(``is_none(None)``, ``tuple_len(t)``, ``x.shape``) becomes that constant.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ..abstract.data import (
    ANYTHING,
    AbstractArray,
    AbstractConstant,
    AbstractScalar,
    AbstractTuple,
)
from ..abstract.lattice import FUNCTION
from ..ir.node import Apply, Graph, Node
from ..primitives import P, Primitive
from ..primitives.structure import convert_value
from ..records import is_record_value
from .effects import droppable
from .matcher import NO_VALUE, Rewrite, args_of, prim_of, rewrite, value_of
from .sweep import same_type

#: Primitives never folded or replaced by their known value: effects are excluded by their
#: flag; these build values that must stay distinct at run time, or sequence effects.
NO_FOLD = frozenset(
    [
        P.seq,
        P.apply_star,
        P.partial,
        P.make_list,
        P.make_dict,
        P.make_record,
        P.make_kwarg,
        P.env_new,
        P.env_setitem,
        P.env_add,
        P.grad_of,
        P.vmap_of,
        P.jvp_of,
        P.record_setattr,
        P.record_from_fields,
        P.dict_setitem,
        P.list_setitem,
        P.array_index_add,
    ]
)

_PLAIN = (bool, int, float, complex, str, type(None), slice, type(Ellipsis))


def _plain(v: Any, depth: int = 0) -> bool:
    """Whether `v` is a plain data value that can be stored in a constant."""
    if isinstance(v, _PLAIN) or isinstance(v, (np.generic, np.dtype)):
        return True
    if type(v) is tuple and depth < 3 and len(v) <= 16:
        return all(_plain(x, depth + 1) for x in v)
    return isinstance(v, type)


def _known(a: Any, depth: int = 0) -> Any:
    """Return the value that abstract value `a` gives its node, or `NO_VALUE`."""
    if isinstance(a, AbstractScalar):
        if a.value is ANYTHING:
            return NO_VALUE
        try:
            return convert_value(a.value, a)
        except Exception:
            return NO_VALUE
    if isinstance(a, AbstractConstant):
        v = a.value
        if a == FUNCTION:  # a function type, erased (convert's type argument)
            return NO_VALUE
        return v if isinstance(v, (*_PLAIN, type, np.dtype)) else NO_VALUE
    if isinstance(a, AbstractTuple) and depth < 3 and len(a.elements) <= 16:
        items = [_known(e, depth + 1) for e in a.elements]
        return NO_VALUE if any(x is NO_VALUE for x in items) else tuple(items)
    return NO_VALUE


def _foldable(node: Apply) -> Primitive | None:
    prim = prim_of(node)
    if prim is None or prim.effect or prim in NO_FOLD:
        return None
    return prim


@rewrite(Primitive)
def known_value(node: Apply, opt: Any) -> Node | None:
    """Replace a computation whose value inference knows by that value.

    prim(args...) => c  (inference knows the value c: ``tuple_len(t)``, ``is_none(None)``)
    prim(a) => seq(a, c)  (computing ``a`` may raise: ``x[i].shape``, ``i`` out of range)
    """
    if _foldable(node) is None:
        return None
    v = _known(node.abstract)
    if v is NO_VALUE:
        return None
    out = opt.const(v, like=node, abstract=node.abstract)
    for arg in reversed(node.inputs[1:]):
        if _may_raise(arg, node.graph):
            out = opt.apply(P.seq, arg, out, like=node, abstract=node.abstract)
    return out


def _may_raise(node: Node, graph: Any) -> bool:
    """Whether `node` is a primitive of `graph` that may raise (an index out of range).

    A call of a graph, or a structure of values (``tuple_len(make_tuple(...))``), is not
    kept alive for its value's sake: what it computes runs where it is used.
    """
    prim = prim_of(node)
    return prim is not None and not prim.effect and not droppable(node, graph)


@rewrite(Primitive)
def fold_constants(node: Apply, opt: Any) -> Node | None:
    """Compute a pure primitive on constants at compile time.

    prim(c1, ..., cn) => prim.impl(c1, ..., cn)  (pure, scalar result, did not raise)
    """
    prim = _foldable(node)
    if prim is None or prim in (P.switch, P.make_tuple, P.tuple_getitem):
        return None
    values = []
    for i in node.inputs[1:]:
        v = value_of(i)
        if v is NO_VALUE or isinstance(v, Graph) or not (_plain(v) or type(v) is np.ndarray):
            return None
        values.append(v)
    if isinstance(node.abstract, AbstractArray):
        return None
    try:
        with np.errstate(all="raise"):
            result = prim.impl(*values)
    except Exception:
        return None
    if not _plain(result) or type(result) is np.ndarray:
        return None
    return opt.const(result, like=node, abstract=node.abstract)


@rewrite(P.record_getattr)
def getattr_constant(node: Apply, opt: Any) -> Node | None:
    """Take a field of a constant record.

    record_getattr(c, name) => c.name  (a constant record, a plain field: a range's zero)
    """
    r, name = (value_of(x) for x in node.inputs[1:])
    if r is NO_VALUE or not is_record_value(r) or type(name) is not str:
        return None
    v = getattr(r, name, NO_VALUE)
    if v is NO_VALUE or not _plain(v) or type(v) is np.ndarray:
        return None
    return opt.const(v, like=node, abstract=node.abstract)


@rewrite(P.tuple_getitem)
def getitem_constant(node: Apply, opt: Any) -> Node | None:
    """Take an element of a constant tuple.

    tuple_getitem(c, i) => c[i]  (a constant tuple and index)
    """
    t, i = (value_of(x) for x in node.inputs[1:])
    if type(t) is not tuple or type(i) not in (int, slice):
        return None
    try:
        v = t[i]
    except IndexError:
        return None
    return opt.const(v, like=node, abstract=node.abstract)


@rewrite(P.make_tuple)
def make_tuple_constant(node: Apply, opt: Any) -> Node | None:
    """Make a constant of a tuple of constants.

    make_tuple(c1, ..., cn) => (c1, ..., cn)  (plain constants: numbers, None, strings)
    """
    values = [value_of(i) for i in node.inputs[1:]]
    if len(values) > 16 or not all(v is not NO_VALUE and _plain(v) for v in values):
        return None
    return opt.const(tuple(values), like=node, abstract=node.abstract)


@rewrite(P.make_record)
def make_record_constant(node: Apply, opt: Any) -> Node | None:
    """Make a constant of an immutable record of constants.

    make_record(cls, c1, ..., cn) => cls(c1, ..., cn)  (cls a frozen dataclass, plain c1...cn:
    the zero of a ``range``)

    A frozen record of plain values cannot be changed, so one object serves every run.
    """
    cls = value_of(node.inputs[1])
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        return None
    if not cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        return None
    values = [value_of(i) for i in node.inputs[2:]]
    if len(values) > 16 or not all(v is not NO_VALUE and _plain(v) for v in values):
        return None
    try:
        record = cls(*values)
    except Exception:
        return None
    return opt.const(record, like=node, abstract=node.abstract)


# Algebraic identities -------------------------------------------------------------------------


def _scalar_value(node: Node) -> Any:
    """Return the number `node` holds everywhere (a constant scalar or uniform array)."""
    v = value_of(node)
    if v is NO_VALUE:
        bl = node.inputs[1:] if prim_of(node) is P.broadcast_like else None
        if bl is not None:
            return _scalar_value(bl[0])
        return NO_VALUE
    if isinstance(v, (bool, int, float, np.number, np.bool_)):
        return v
    if type(v) is np.ndarray and v.size > 0 and v.size <= 1024:
        first = v.flat[0]
        return first if bool(np.all(v == first)) else NO_VALUE
    return NO_VALUE


def _is(node: Node, target: float) -> bool:
    v = _scalar_value(node)
    if v is NO_VALUE:
        return False
    try:
        return bool(v == target) and not (target == 0 and math.copysign(1.0, float(v)) < 0)
    except (TypeError, ValueError, OverflowError):
        return False


def _is_negative_zero(node: Node) -> bool:
    v = _scalar_value(node)
    try:
        return v is not NO_VALUE and float(v) == 0.0 and math.copysign(1.0, float(v)) < 0
    except (TypeError, ValueError):
        return False


def _integral(a: Any) -> bool:
    """Whether `a` is a scalar or array of integers or booleans."""
    return isinstance(a, (AbstractScalar, AbstractArray)) and (
        a.dtype.startswith(("int", "uint")) or a.dtype == "bool"
    )


def _keep(x: Node, node: Apply) -> Node | None:
    """`x` if it has the type of `node` (no broadcasting or promotion lost), else None."""
    return x if same_type(x.abstract, node.abstract) else None


@rewrite(P.mul)
def mul_one(node: Apply, opt: Any) -> Node | None:
    """Drop a multiplication by one.

    mul(x, 1) => x;  mul(1, x) => x
    """
    x, y = node.inputs[1:]
    if _is(y, 1):
        return _keep(x, node)
    if _is(x, 1):
        return _keep(y, node)
    return None


@rewrite(P.where)
def where_same(node: Apply, opt: Any) -> Node | None:
    """Drop a choice between a value and itself (a batched loop's unchanged variables).

    where(c, x, x) => x
    """
    _, x, y = node.inputs[1:]
    return _keep(x, node) if x is y else None


@rewrite(P.mul)
def mul_zero_integer(node: Apply, opt: Any) -> Node | None:
    """Replace a multiplication of integers by zero with zero.

    mul(x, 0) => 0;  mul(0, x) => 0  (integer or boolean scalars only: exact)
    """
    x, y = node.inputs[1:]
    a = node.abstract
    if not (isinstance(a, AbstractScalar) and _integral(x.abstract) and _integral(y.abstract)):
        return None
    if _is(x, 0) or _is(y, 0):
        return opt.const(convert_value(0, a), like=node, abstract=a)
    return None


@rewrite(P.add)
def add_zero(node: Apply, opt: Any) -> Node | None:
    """Drop an addition of zero where it is exact.

    add(x, 0) => x;  add(0, x) => x  (integers; for floats only x + (-0.0))
    """
    x, y = node.inputs[1:]
    exact = _integral(node.abstract)
    if (exact and _is(y, 0)) or _is_negative_zero(y):
        return _keep(x, node)
    if (exact and _is(x, 0)) or _is_negative_zero(x):
        return _keep(y, node)
    return None


@rewrite(P.sub)
def sub_zero(node: Apply, opt: Any) -> Node | None:
    """Drop a subtraction of zero.

    sub(x, 0) => x
    """
    x, y = node.inputs[1:]
    return _keep(x, node) if _is(y, 0) else None


@rewrite(P.gt, P.ge, P.lt, P.le)
def compare_difference(node: Apply, opt: Any) -> Node | None:
    """Compare two Python integers directly, not their difference with zero.

    gt(sub(a, b), 0) => gt(a, b)  (and ge, lt, le; a, b Python ints, which do not overflow)

    The condition of a ``for`` loop over a ``range`` with step 1 is ``stop - i > 0``.
    """
    d, zero = node.inputs[1:]
    ab = args_of(d, P.sub)
    if ab is None or not _is(zero, 0):
        return None
    if not all(_python_int(x.abstract) for x in (*ab, zero)):
        return None
    return opt.apply(node.inputs[0].value, *ab, like=node)  # type: ignore[attr-defined]


def _python_int(a: Any) -> bool:
    return isinstance(a, AbstractScalar) and a.weak and a.dtype.startswith("int")


@rewrite(P.truediv)
def div_one(node: Apply, opt: Any) -> Node | None:
    """Drop a division by one.

    truediv(x, 1) => x  (x a float: the type of the quotient)
    """
    x, y = node.inputs[1:]
    return _keep(x, node) if _is(y, 1) else None


@rewrite(P.pow_)
def pow_one(node: Apply, opt: Any) -> Node | None:
    """Drop a power of one.

    pow(x, 1) => x
    """
    x, y = node.inputs[1:]
    return _keep(x, node) if _is(y, 1) else None


@rewrite(P.neg)
def neg_neg(node: Apply, opt: Any) -> Node | None:
    """Drop a double negation.

    neg(neg(x)) => x
    """
    inner = node.inputs[1]
    if prim_of(inner) is P.neg:
        return _keep(inner.inputs[1], node)
    return None


@rewrite(P.neg)
def neg_broadcast(node: Apply, opt: Any) -> Node | None:
    """Negate a value before broadcasting it, not after.

    neg(broadcast_like(x, like)) => broadcast_like(neg(x), like)

    A broadcast number is negated once, and the broadcast can then move into the operation
    that uses it (`broadcast_operand`).
    """
    bl = args_of(node.inputs[1], P.broadcast_like)
    if bl is None or not isinstance(bl[0].abstract, (AbstractScalar, AbstractArray)):
        return None
    new = opt.apply(P.broadcast_like, opt.apply(P.neg, bl[0], like=node), bl[1], like=node)
    return new if same_type(new.abstract, node.abstract) else None


@rewrite(P.mul)
def mul_neg_constant(node: Apply, opt: Any) -> Node | None:
    """Negate the constant factor of a product, not the array.

    mul(neg(x), c) => mul(x, -c);  mul(c, neg(x)) => mul(-c, x)  (c a float constant)

    ``(-x) * c`` and ``x * (-c)`` are the same numbers (the sign of a product is exact); the
    negation of `c` is folded, which saves a pass over `x` (a gradient's ``-dx * 2.0``).
    """
    x, y = node.inputs[1:]
    for k, (a, c) in enumerate(((x, y), (y, x))):
        inner = args_of(a, P.neg)
        v = value_of(c)
        if inner is None or type(v) is not float:
            continue
        args = [inner[0], opt.const(-v, like=c)]
        new = opt.apply(P.mul, *(args if k == 0 else args[::-1]), like=node)
        if same_type(new.abstract, node.abstract):
            return new
    return None


@rewrite(P.tril, P.triu)
def triangle_of_sum(node: Apply, opt: Any) -> Node | None:
    """Take a triangle once: of a sum, not of its terms too.

    tril(add(x, tril(y, k)), k) => tril(add(x, y), k)  (y of the sum's shape; triu alike)
    tril(add(x, seq(s, tril(y, k))), k) => tril(add(x, seq(s, y)), k)

    The triangle of each element of the sum is its own: ``tril(y)`` zeroes the elements
    that the outer triangle zeroes anyway (infinities and NaNs included).
    """
    prim, k = node.inputs[0].value, node.inputs[2]
    terms = args_of(node.inputs[1], P.add)
    if terms is None or not k.is_constant:
        return None
    for i, term in enumerate(terms):
        befores = []  # the term may be sequenced after statements (seq(s, tril(y))): kept
        while prim_of(term) is P.seq:
            befores.append(term)
            term = term.inputs[2]
        inner = args_of(term, prim)
        if inner is None or value_of(inner[1]) != k.value or inner[0].abstract != node.abstract:
            continue
        arg = inner[0]
        for before in reversed(befores):
            arg = opt.apply(P.seq, before.inputs[1], arg, like=before)
        args = list(terms)
        args[i] = arg
        new = opt.apply(P.add, *args, like=node.inputs[1])
        if same_type(new.abstract, node.inputs[1].abstract):
            return opt.apply(prim, new, k, like=node)
    return None


@rewrite(P.add, P.sub, P.mul, P.truediv, P.eq, P.ne, P.lt, P.le, P.gt, P.ge, P.maximum, P.minimum)
def broadcast_operand(node: Apply, opt: Any) -> Node | None:
    """Let an elementwise operation broadcast its operand itself.

    op(broadcast_like(y, like), x) => op(y, x)  (the result's shape and dtype unchanged)

    The same for the second operand. The gradients of reductions broadcast a sensitivity to
    the shape of their input, which the operation that uses it would do anyway.
    """
    x, y = node.inputs[1:]
    for k, arg in ((1, x), (2, y)):
        bl = args_of(arg, P.broadcast_like)
        if bl is not None and isinstance(bl[0].abstract, (AbstractScalar, AbstractArray)):
            args = [x, y]
            args[k - 1] = bl[0]
            new = opt.apply(node.inputs[0], *args, like=node)
            if same_type(new.abstract, node.abstract):
                return new
    return None


@rewrite(P.reshape, P.astype)
def reshape_same(node: Apply, opt: Any) -> Node | None:
    """Drop a reshape or a cast to what the array already is.

    reshape(x, shape) => x;  astype(x, dtype) => x  (x already of that shape and dtype)
    """
    return _keep(node.inputs[1], node)


FOLD: list[Rewrite] = [
    known_value,
    getitem_constant,
    getattr_constant,
    make_tuple_constant,
    make_record_constant,
    fold_constants,
]

ALGEBRA: list[Rewrite] = [
    mul_one,
    where_same,
    mul_zero_integer,
    add_zero,
    sub_zero,
    compare_difference,
    div_one,
    pow_one,
    neg_neg,
    neg_broadcast,
    mul_neg_constant,
    triangle_of_sum,
    broadcast_operand,
    reshape_same,
]

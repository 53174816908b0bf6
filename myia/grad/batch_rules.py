"""The batching rules of primitives (`myia.grad.batch_registry`).

Batched values have their batch axis first. Each rule states the batched form of its
primitive, from the per-example types of its arguments (``node.inputs[i].abstract``): NumPy
aligns shapes from the right, so an unbatched operand already broadcasts against a batched
one; a batched operand of fewer dimensions than another gets axes after its batch axis.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import ANYTHING, AbstractArray, AbstractScalar
from ..ir.node import Constant
from ..primitives import PRIMITIVES, P
from .batch_registry import batch_rule
from .batch_types import batched_type


def _rank(a: Any) -> int:
    return len(a.shape) if isinstance(a, AbstractArray) else 0


def _const(node: Any, i: int) -> Any:
    """The constant argument `i` of `node` (ANYTHING where it is not a constant)."""
    arg = node.inputs[i + 1]
    return arg.value if arg.is_constant else ANYTHING


def _lifted(b: Any, v: Any, a: Any, r: int) -> Any:
    """Batched `v` (per-example type `a`) with axes after the batch axis up to rank `r`."""
    k = r - _rank(a)
    return b.apply(P.expand_dims, v, tuple(range(1, k + 1))) if k > 0 else v


# Elementwise ----------------------------------------------------------------------------------

_ELEMENTWISE = [
    *"add sub mul truediv floordiv mod pow pow_ieee eq ne lt le gt ge".split(),
    *"logical_not logical_and logical_or bitwise_and bitwise_or bitwise_xor".split(),
    *"left_shift right_shift invert neg abs exp log log_ieee log1p log2 log10 expm1".split(),
    *"sqrt sin cos tan asinh acosh atanh copysign".split(),
    *"asin acos atan sinh cosh tanh floor ceil sign atan2 maximum minimum where clip".split(),
    *"rint erf erfc gammaln digamma polygamma round_decimal".split(),
]


@batch_rule(*[PRIMITIVES[name] for name in _ELEMENTWISE])
def batch_elementwise(b, node, args, bts):
    """``f(x, y)``: batched operands of lower rank get axes after the batch axis."""
    abstracts = [i.abstract for i in node.inputs[1:]]
    if any(bt not in (True, False) for bt in bts):
        return None
    r = max(_rank(a) for a in abstracts)
    vals = [_lifted(b, v, a, r) if bt else v for v, a, bt in zip(args, abstracts, bts)]
    op = node.inputs[0].value
    out = b.apply(op, *vals)
    if _raises_in_python(op, node):
        out = b.apply(P.python_errors, out, op.name, *vals, *[None] * (2 - len(vals)))
    return out, True


#: The elementwise primitives that raise on Python numbers where NumPy gives ``inf`` or
#: ``nan`` (``math.log(0.0)``: ValueError, ``1.0 / 0.0``: ZeroDivisionError).
_PYTHON_RAISES = frozenset(
    "truediv floordiv mod exp log log1p log2 log10 expm1 sqrt sin cos tan asin acos sinh "
    "cosh acosh atanh gammaln".split()
)


def _raises_in_python(op: Any, node: Any) -> bool:
    """Whether `node`, ``op`` of Python numbers, may raise Python's error (`P.python_errors`)."""
    ins = [i.abstract for i in node.inputs[1:]]
    return (
        op.name in _PYTHON_RAISES
        and len(ins) <= 2
        and all(isinstance(a, AbstractScalar) and a.weak for a in (node.abstract, *ins))
    )


# (A batched `P.python_errors` is one too: its operation is a constant, its operands arrays.)
batch_rule(P.python_errors)(batch_elementwise)


@batch_rule(P.astype, P.stop_gradient, P.identity)
def batch_first_only(b, node, args, bts):
    """``astype(x, dtype)``: the first argument batched, the others constants."""
    if any(bts[1:]):
        return None
    return b.apply(node.inputs[0].value, *args), bts[0]


# Structure ------------------------------------------------------------------------------------


@batch_rule(P.make_tuple)
def batch_make_tuple(b, node, args, bts):
    return b.apply(P.make_tuple, *args), tuple(bts)


@batch_rule(P.tuple_getitem)
def batch_tuple_getitem(b, node, args, bts):
    i = _const(node, 1)
    if bts[1] or not isinstance(i, int):
        return None
    bt = bts[0][i] if isinstance(bts[0], tuple) else bts[0]
    return b.apply(P.tuple_getitem, args[0], i), bt


@batch_rule(P.make_record, P.make_dict)
def batch_make_record(b, node, args, bts):
    """A record or dict, batched as its fields are (its first argument describes it)."""
    return b.apply(node.inputs[0].value, *args), tuple(bts[1:])


@batch_rule(P.record_getattr, P.dict_getitem)
def batch_record_getattr(b, node, args, bts):
    """A field of a record (a value of a dict), by a constant name (key)."""
    name = _const(node, 1)
    names = getattr(
        node.inputs[1].abstract,
        "names" if node.inputs[0].value is P.record_getattr else "keys",
        None,
    )
    if bts[1] or not isinstance(name, str) or names is None:
        return None
    bt = bts[0][names.index(name)] if isinstance(bts[0], tuple) else bts[0]
    return b.apply(node.inputs[0].value, args[0], name), bt


@batch_rule(P.dict_values)
def batch_dict_values(b, node, args, bts):
    return b.apply(P.dict_values, args[0]), bts[0]


@batch_rule(P.dict_from_values, P.record_from_fields)
def batch_from_values(b, node, args, bts):
    """A dict or record of the keys (the class) of the first, the values of the second."""
    return b.apply(node.inputs[0].value, *args), bts[1]


@batch_rule(P.record_fields)
def batch_record_fields(b, node, args, bts):
    return b.apply(P.record_fields, args[0]), bts[0]


@batch_rule(P.dict_setitem, P.record_setattr)
def batch_setitem(b, node, args, bts):
    """``d`` with ``d[key]`` (``r`` with ``r.name``) replaced by ``v``, batched or not."""
    key = _const(node, 2)
    a = node.inputs[1].abstract
    keys = getattr(a, "keys", None) or getattr(a, "names", None)
    if bts[1] or not isinstance(key, str) or keys is None or key not in keys:
        return None
    old = bts[0] if isinstance(bts[0], tuple) else (bts[0],) * len(keys)
    new = tuple(bts[2] if k == key else bt for k, bt in zip(keys, old))
    return b.apply(node.inputs[0].value, *args), new


@batch_rule(P.gadd)
def batch_gadd(b, node, args, bts):
    """Sensitivities added leaf by leaf: per example where both are batched alike."""
    from .batching import full

    if bts[0] == bts[1]:
        return b.apply(P.gadd, *args), bts[0]
    a = node.abstract
    if full(a) is False:
        return None  # an environment or a lazy sensitivity: once per example
    x, y = (b.full(v, bt, a) for v, bt in zip(args, bts))
    return b.apply(P.gadd, x, y), full(a)


@batch_rule(P.gmaterialize)
def batch_gmaterialize(b, node, args, bts):
    """A sensitivity built: its batched leaves are built already."""
    return b.apply(P.gmaterialize, args[0]), bts[0]


@batch_rule(P.seq)
def batch_seq(b, node, args, bts):
    return b.apply(P.seq, *args), bts[1]


# Shapes ---------------------------------------------------------------------------------------


def _shift(axis: Any, r: int) -> Any:
    """Per-example `axis` (int, tuple or None: all) of a rank-`r` value, in the batched value."""
    if axis is None:
        return tuple(range(1, r + 1))
    if isinstance(axis, tuple):
        return tuple(a % r + 1 for a in axis)
    return axis % r + 1 if r else axis


@batch_rule(P.reduce_sum, P.reduce_prod, P.reduce_mean, P.reduce_max, P.reduce_min)
def batch_reduction(b, node, args, bts):
    """``reduce(x, axis, ...)``: the axes shifted past the batch axis (None: all but it)."""
    axis = _const(node, 1)
    if any(bts[1:]) or axis is ANYTHING or bts[0] is not True:
        return None
    r = _rank(node.inputs[1].abstract)
    if r == 0:
        return None
    return b.apply(node.inputs[0].value, args[0], _shift(axis, r), *args[2:]), True


@batch_rule(P.expand_dims)
def batch_expand_dims(b, node, args, bts):
    axis = _const(node, 1)
    if bts[1] or axis is ANYTHING:
        return None
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = tuple(a + 1 if a >= 0 else a for a in axes)
    return b.apply(P.expand_dims, args[0], out if isinstance(axis, tuple) else out[0]), True


@batch_rule(P.squeeze)
def batch_squeeze(b, node, args, bts):
    a = node.inputs[1].abstract
    axis = _const(node, 1)
    if bts[1] or axis is ANYTHING or not isinstance(a, AbstractArray):
        return None
    if axis is None:
        if any(d is None for d in a.shape):
            return None
        axis = tuple(i for i, d in enumerate(a.shape) if d == 1)
    return b.apply(P.squeeze, args[0], _shift(axis, len(a.shape))), True


@batch_rule(P.reshape)
def batch_reshape(b, node, args, bts):
    """``reshape(x, shape)``: to the batch size followed by the per-example result's shape."""
    out = node.abstract
    if bts[1] or not isinstance(out, AbstractArray) or any(d is None for d in out.shape):
        return None
    return b.apply(P.reshape, args[0], (b.n, *out.shape)), True


@batch_rule(P.broadcast_to)
def batch_broadcast_to(b, node, args, bts):
    out = node.abstract
    if bts[1] or not isinstance(out, AbstractArray) or any(d is None for d in out.shape):
        return None
    r = len(out.shape)
    x = _lifted(b, args[0], node.inputs[1].abstract, r)
    return b.apply(P.broadcast_to, x, (b.n, *out.shape)), True


@batch_rule(P.transpose)
def batch_transpose(b, node, args, bts):
    axes = _const(node, 1)
    r = _rank(node.inputs[1].abstract)
    if bts[1] or axes is ANYTHING:
        return None
    axes = tuple(reversed(range(r))) if axes is None else axes
    return b.apply(P.transpose, args[0], (0, *(a % r + 1 for a in axes))), True


@batch_rule(P.swapaxes, P.moveaxis)
def batch_two_axes(b, node, args, bts):
    a1, a2 = _const(node, 1), _const(node, 2)
    r = _rank(node.inputs[1].abstract)
    if any(bts[1:]) or not isinstance(a1, int) or not isinstance(a2, int):
        return None
    return b.apply(node.inputs[0].value, args[0], a1 % r + 1, a2 % r + 1), True


@batch_rule(P.array_getitem)
def batch_array_getitem(b, node, args, bts):
    """``x[index]`` with a constant index: every example's whole batch axis first.

    Literal lists in the index (``x[[0, 2]]``, ``x[:, [1, 3]]``) are NumPy's integer (or
    boolean) array indices, as constant arrays. Where the index's arrays and ints are not
    adjacent (``x[[0, 2], :, 1]``), NumPy puts their axes first, before the batch axis,
    which is moved back in front.
    """
    if isinstance(bts[1], tuple) and batched_index(bts[1]):
        return _batch_integer_index(b, node, args, bts)
    index = _static_index(node.inputs[2])
    if index is ANYTHING and not bts[1] and bts[0] is True:
        return _batch_shared_index(b, node, args)
    if bts[1] or index is ANYTHING or bts[0] is not True:
        return None
    index = _as_integer_arrays(index if isinstance(index, tuple) else (index,))
    basic = (int, slice, type(None), type(Ellipsis))
    if index is None or any(not isinstance(i, (*basic, np.ndarray)) for i in index):
        return None
    out = b.apply(P.array_getitem, args[0], (slice(None), *index))
    advanced = [k for k, i in enumerate(index) if isinstance(i, (int, np.ndarray))]
    if any(isinstance(i, np.ndarray) for i in index) and advanced[-1] - advanced[0] >= len(
        advanced
    ):
        k = np.broadcast(*(np.asarray(index[j]) for j in advanced)).ndim
        out = b.apply(P.moveaxis, out, k, 0)
    return out, True


def _shared_index(b, a: Any, ia: Any, index: Any) -> tuple[Any, int] | None:
    """``(slice(None), *index)`` for the batch, `index` integers and slices known at run time.

    Also the number of its integers; None where `index` (of type `ia`, into an array of type
    `a`) holds anything else. (An integer out of range is reported by NumPy on the batched
    array's axis, one past the example's: checking it on the example's axis first, a bound
    check per loop iteration, slowed the loops of ``hessian_while`` down several times on XLA.)
    """
    elements = getattr(ia, "elements", None)
    types = elements if elements is not None else (ia,)
    if not isinstance(a, AbstractArray) or len(types) > len(a.shape):
        return None
    ints = 0
    for e in types:
        if isinstance(e, AbstractScalar) and e.dtype.startswith(("int", "uint")):
            ints += 1
        elif not (_slice_like(e) and isinstance(e.value, slice)):
            return None
    items = (
        [b.apply(P.tuple_getitem, index, k) for k in range(len(types))]
        if elements is not None
        else [index]
    )
    return b.apply(P.make_tuple, Constant(slice(None)), *items), ints


def _batch_shared_index(b, node, args):
    """``x[i, j:k]`` with integers and slices known at run time, the same in every example."""
    shared = _shared_index(b, node.inputs[1].abstract, node.inputs[2].abstract, args[1])
    if shared is None:
        return None
    return b.apply(P.array_getitem, args[0], shared[0]), True


def _as_integer_arrays(index: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """`index` with its boolean masks as the integer arrays of their true positions.

    That is NumPy's meaning of a mask; None where `index` holds a boolean scalar (an axis of
    length 0 or 1).
    """
    out: list[Any] = []
    for i in index:
        if isinstance(i, (bool, np.bool_)):
            return None
        if isinstance(i, np.ndarray) and i.dtype == np.bool_:
            out += np.nonzero(i)
        else:
            out.append(i)
    return tuple(out)


def _static_index(node: Any) -> Any:
    """The value of index `node` known at compile time (ANYTHING where it is not).

    A literal list of constants (``make_list``, typed with its values) is an array.
    """
    from ..abstract.data import AbstractList

    if node.is_constant:
        v = node.value
        return np.asarray(v) if isinstance(v, list) else v
    a = node.abstract
    if isinstance(a, AbstractList) and a.value is not ANYTHING:
        probe = np.asarray(a.value)
        return probe if probe.dtype.kind in "iub" else ANYTHING
    if node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is P.make_tuple:
        items = tuple(_static_index(i) for i in node.inputs[1:])
        return ANYTHING if any(i is ANYTHING for i in items) else items
    return ANYTHING


def batched_index(bt: tuple[Any, ...]) -> bool:
    return any(x is True for x in bt) and all(x in (True, False) for x in bt)


def _batch_integer_index(b, node, args, bts):
    """``x[i, :, j]`` with integers `i`, `j` of each example: ``x[arange(n), i, :, j]``.

    The batch's own index, ``arange(n)``, joins the integers as NumPy's advanced indices,
    whose common axis comes first (before the slices' axes) whether they are adjacent or not.
    Only integer scalars, slices, None and Ellipsis: an array index per example would
    broadcast against the batch's.
    """
    a, index = node.inputs[1].abstract, node.inputs[2].abstract
    elements = getattr(index, "elements", None)
    if not isinstance(a, AbstractArray) or elements is None:
        return None
    for e, bt in zip(elements, bts[1]):
        integer = isinstance(e, AbstractScalar) and e.dtype.startswith(("int", "uint"))
        if bt and not integer:
            return None
        if not bt and not (integer or _slice_like(e)):
            return None
    x = b.full(args[0], bts[0], a)
    items = [b.apply(P.tuple_getitem, args[1], k) for k in range(len(elements))]
    batch = Constant(np.arange(b.n))
    return b.apply(P.array_getitem, x, b.apply(P.make_tuple, batch, *items)), True


def _slice_like(e: Any) -> bool:
    """Whether an index of type `e` is a slice, None or Ellipsis."""
    from ..abstract.data import AbstractConstant

    if not isinstance(e, AbstractConstant):
        return False
    return isinstance(e.value, slice) or e.value is None or e.value is Ellipsis


@batch_rule(P.array_index_add)
def batch_array_index_add(b, node, args, bts):
    """``x[index] += v`` at integers and slices every example shares: past the batch axis."""
    a, ia, va = (i.abstract for i in node.inputs[1:])
    if bts[1] or bts[2] not in (True, False):
        return None
    shared = _shared_index(b, a, ia, args[1])
    if shared is None:
        return None
    index, ints = shared
    x = b.full(args[0], bts[0], a)
    v = _lifted(b, args[2], va, len(a.shape) - ints) if bts[2] else args[2]
    return b.apply(P.array_index_add, x, index, v), True


@batch_rule(P.dynamic_window)
def batch_dynamic_window(b, node, args, bts):
    """A window at a start every example shares: along its axis past the batch axis."""
    axis = _const(node, 3)
    if any(bts[1:]) or bts[0] is not True or not isinstance(axis, int):
        return None  # one start per example: run once per example
    r = _rank(node.inputs[1].abstract)
    return b.apply(P.dynamic_window, args[0], args[1], args[2], axis % r + 1), True


@batch_rule(P.window_add)
def batch_window_add(b, node, args, bts):
    """``window_add(a, i, v, axis)``, `i` shared: `a` and `v` batched, the axis shifted."""
    axis = _const(node, 3)
    if bts[1] or bts[3] or not isinstance(axis, int) or not (bts[0] or bts[2]):
        return None
    a_abs, v_abs = node.inputs[1].abstract, node.inputs[3].abstract
    if not all(isinstance(t, AbstractArray) and None not in t.shape for t in (a_abs, v_abs)):
        return None
    a, v = args[0], args[2]
    if not bts[0]:
        a = b.apply(P.broadcast_to, a, (b.n, *a_abs.shape))
    if not bts[2]:
        v = b.apply(P.broadcast_to, v, (b.n, *v_abs.shape))
    return b.apply(P.window_add, a, args[1], v, axis % len(a_abs.shape) + 1), True


@batch_rule(P.concatenate, P.stack)
def batch_join(b, node, args, bts):
    """``concatenate(xs, axis)``: every array batched, the axis shifted."""
    axis = _const(node, 1)
    xs = node.inputs[1].abstract
    if bts[1] or not isinstance(axis, int) or not hasattr(xs, "elements"):
        return None
    r = _rank(xs.elements[0]) + (node.inputs[0].value is P.stack)
    arrays = b.full(args[0], bts[0], xs)
    return b.apply(node.inputs[0].value, arrays, axis % r + 1), True


# Products -------------------------------------------------------------------------------------


@batch_rule(P.matmul)
def batch_matmul(b, node, args, bts):
    """``x @ y``: vectors as matrices, then batch axes aligned for NumPy's stacking."""
    ax, ay = (i.abstract for i in node.inputs[1:])
    rx, ry = _rank(ax), _rank(ay)
    if rx == 0 or ry == 0:
        return None
    x, y = args
    if rx == 1 and ry == 2 and bts == [True, False]:
        return b.apply(P.matmul, x, y), True  # the rows of one matrix product
    if rx == 2 and ry == 1 and bts == [False, True]:
        return b.apply(P.matmul, y, b.apply(P.transpose, x, (1, 0))), True
    if rx == 1:
        x = b.apply(P.expand_dims, x, -2)
    if ry == 1:
        y = b.apply(P.expand_dims, y, -1)
    r = max(rx, ry, 2)
    if bts[0]:
        x = _lifted(b, x, AbstractArray(ax.dtype, (0,) * max(rx, 2)), r)
    if bts[1]:
        y = _lifted(b, y, AbstractArray(ay.dtype, (0,) * max(ry, 2)), r)
    out = b.apply(P.matmul, x, y)
    if ry == 1:
        out = b.apply(P.squeeze, out, -1)
    if rx == 1:
        out = b.apply(P.squeeze, out, -1 if ry == 1 else -2)
    return out, True


@batch_rule(P.dot)
def batch_dot(b, node, args, bts):
    """``dot(x, y)``: ``matmul`` where they agree (up to matrices)."""
    if max(_rank(i.abstract) for i in node.inputs[1:]) > 2:
        return None
    return batch_matmul(b, node, args, bts)


# Gradients ------------------------------------------------------------------------------------


@batch_rule(P.unbroadcast)
def batch_unbroadcast(b, node, args, bts):
    """``unbroadcast(d, x)``: summed over the axes of one example along which `x` broadcast."""
    ad, ax = (i.abstract for i in node.inputs[1:])
    sd = ad.shape if isinstance(ad, AbstractArray) else ()
    sx = ax.shape if isinstance(ax, AbstractArray) else ()
    if bts[0] is not True or None in sd or None in sx or not ax.dtype.startswith("float"):
        return None
    lead = len(sd) - len(sx)
    axes = [*range(lead), *(i + lead for i, d in enumerate(sx) if d == 1 and sd[i + lead] != 1)]
    d = args[0]
    if axes:
        d = b.apply(P.reduce_sum, d, tuple(a + 1 for a in axes), False, None)
        d = b.apply(P.reshape, d, (b.n, *sx))
    return b.apply(P.astype, d, np.dtype(ax.dtype)), True


@batch_rule(P.to_bool, P.to_float, P.to_int)
def batch_to_scalar(b, node, args, bts):
    """``bool(x)``, ``float(x)``, ``int(x)`` of a scalar: a cast of the batch's array.

    ``int(x)`` of a float raises Python's error where an example is NaN or infinite
    (`P.python_errors`), where the cast would give any integer.
    """
    a, ax = node.abstract, node.inputs[1].abstract
    if _rank(ax) or not hasattr(a, "dtype"):
        return None
    out = b.apply(P.astype, args[0], np.dtype(a.dtype))
    op = node.inputs[0].value
    if op is P.to_int and np.dtype(getattr(ax, "dtype", "int64")).kind == "f":
        out = b.apply(P.python_errors, out, op.name, args[0], None)
    return out, True


@batch_rule(P.broadcast_like)
def batch_broadcast_like(b, node, args, bts):
    """``broadcast_like(d, like)``: `d` broadcast to the batch and one example's shape."""
    ad, al = (i.abstract for i in node.inputs[1:])
    if (
        not hasattr(al, "dtype")
        or not hasattr(ad, "dtype")
        or any(bt not in (True, False) for bt in bts)
    ):
        return None
    shape = al.shape if isinstance(al, AbstractArray) else ()
    if None in shape:
        return None
    d = _lifted(b, args[0], ad, len(shape)) if bts[0] else args[0]
    d = b.apply(P.broadcast_to, d, (b.n, *shape))
    return b.apply(P.astype, d, np.dtype(al.dtype)), True


@batch_rule(P.einsum_grad_spec)
def batch_einsum_grad_spec(b, node, args, bts):
    """``einsum_grad_spec(subscripts, xs, i)``: a constant of the examples' ranks, unbatched."""
    from ..primitives.array_extra import einsum_grad_spec

    sub, xs, i = _const(node, 0), node.inputs[2].abstract, _const(node, 2)
    if bts[0] or bts[2] or not isinstance(sub, str) or not hasattr(xs, "elements"):
        return None
    probes = tuple(np.empty((1,) * _rank(x)) for x in xs.elements)
    return Constant(einsum_grad_spec.impl(sub, probes, i)), False


@batch_rule(P.einsum)
def batch_einsum(b, node, args, bts):
    """``einsum(subscripts, xs)``: a new index for the batch, on the batched operands and out."""
    import string

    from ..primitives.array_extra import parse_einsum

    sub, xs = _const(node, 0), node.inputs[2].abstract
    if bts[0] or not isinstance(sub, str) or not hasattr(xs, "elements"):
        return None
    ins, out = parse_einsum(sub, tuple(_rank(x) for x in xs.elements))
    used = set("".join(ins) + out)
    letter = next((c for c in string.ascii_letters if c not in used), None)
    if letter is None:
        return None
    obts = [bts[1][i] if isinstance(bts[1], tuple) else bts[1] for i in range(len(ins))]
    ins = [letter + s if bt else s for s, bt in zip(ins, obts)]
    return b.apply(P.einsum, f"{','.join(ins)}->{letter}{out}", args[1]), True


# Stacks (a loop's gradient) -------------------------------------------------------------------
# Every stack of the batched program holds batched elements (`myia.grad.batching.Batcher.full`):
# the examples push and pop together (a push under a condition that varies per example is a
# choice between two stacks, which `where` refuses), so a stack's depth is not batched.


@batch_rule(P.stack_push)
def batch_stack_push(b, node, args, bts):
    """``stack_push(s, x)``: `x` batched as the elements of the stacks of its type."""
    s = b.full(args[0], bts[0], node.inputs[1].abstract)
    target = b.stack_element(node.abstract, bts[1])
    x = b.widen(args[1], bts[1], target, node.inputs[2].abstract)
    return b.apply(P.stack_push, s, x), True


@batch_rule(P.stack_pop)
def batch_stack_pop(b, node, args, bts):
    """``stack_pop(s)``: the top, batched as the elements of the stacks of its type."""
    s = b.full(args[0], bts[0], node.inputs[1].abstract)
    return b.apply(P.stack_pop, s), (b.stack_element(node.inputs[1].abstract), True)


@batch_rule(P.stack_empty)
def batch_stack_empty(b, node, args, bts):
    """``stack_empty(s)``: the same for every example."""
    return b.apply(P.stack_empty, args[0]), False


@batch_rule(P.stack_unpush)
def batch_stack_unpush(b, node, args, bts):
    """``stack_unpush(d, x)``: the rest of `d` and its top, or zeros of `x` batched alike."""
    d = b.full(args[0], bts[0], node.inputs[1].abstract)
    target = b.stack_element(node.inputs[1].abstract, bts[1])
    x = b.widen(args[1], bts[1], target, node.inputs[2].abstract)
    return b.apply(P.stack_unpush, d, x), (True, target)


@batch_rule(P.env_setitem, P.env_getitem, P.env_getsens, P.env_delitem, P.env_add)
def batch_env(b, node, args, bts):
    """An environment of sensitivities: batched ones (as stacks), the key as it is."""
    from .batching import full

    vals = [
        v if i == 2 else b.full(v, bt, n.abstract)
        for i, (v, bt, n) in enumerate(zip(args, bts, node.inputs[1:]), 1)
    ]
    return b.apply(node.inputs[0].value, *vals), full(node.abstract)


@batch_rule(P.env_sens)
def batch_env_sens(b, node, args, bts):
    """``env_sens(env, key, typ)``: the batched value, of the batched `typ`."""
    from ..errors import MyiaTypeError
    from .batching import CannotBatch, full

    if bts[1] or bts[2]:
        return None
    try:
        typ = batched_type(_const(node, 2), b.n, 0)
    except MyiaTypeError:
        raise CannotBatch("a sensitivity of a type with no batched form") from None
    env = b.full(args[0], bts[0], node.inputs[1].abstract)
    return b.apply(P.env_sens, env, args[1], typ), full(node.abstract)


@batch_rule(P.gzeros, P.gzeros_unread)
def batch_gzeros(b, node, args, bts):
    """The zero sensitivity of a batched value: batched zeros."""
    from .batching import full

    x = b.full(args[0], bts[0], node.inputs[1].abstract)
    return b.apply(node.inputs[0].value, x), full(node.abstract)

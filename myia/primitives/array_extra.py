"""More array primitives: ``einsum``, ``cumsum``, sorting, diagonals and ``broadcast_to``.

Each is one NumPy call with its type and shape rule and its backpropagator, written with
primitives that have their own (the gradient of ``einsum`` is an ``einsum``; those of
``take_along_axis`` and ``diagonal`` are their adjoints, which come in pairs), so gradients of
any order are gradients of primitives.
"""

from __future__ import annotations

import string

import numpy as np

from ..abstract.data import ANYTHING, AbstractArray, AbstractList, AbstractTuple, show
from ..abstract.lattice import constant_abstract, promote
from ..errors import MyiaShapeError, MyiaTypeError
from ..grad.registry import bprop, nondifferentiable
from ..infer.kinds import static_value
from ..infer.registry import infer_rule
from ..infer.rulelib import (
    array_result,
    as_array,
    broadcast_shapes,
    const_value,
    normalize_axis,
    shape_str,
    shape_value,
)
from .core import primitive


def _scalar(x):
    return x[()] if type(x) is np.ndarray and x.ndim == 0 else x


# Einstein summation ---------------------------------------------------------------------------


def parse_einsum(subscripts: str, ndims: tuple[int, ...]) -> tuple[list[str], str]:
    """Return the subscripts of the operands and of the output, in explicit form.

    An ellipsis becomes letters that the subscripts do not use (aligned on the right, as NumPy
    broadcasts them); the implicit output is the ellipsis then the letters used once, sorted.
    Raise `MyiaShapeError` for subscripts that do not match the operands.
    """
    if not isinstance(subscripts, str):
        raise MyiaTypeError(f"einsum's subscripts must be a string, not {subscripts!r}")
    s = subscripts.replace(" ", "")
    lhs, arrow, out = s.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(ndims):
        raise MyiaShapeError(
            f"einsum: the subscripts {subscripts!r} name {len(ins)} operands, got {len(ndims)}"
        )
    used = set(s) - set(".,->")
    if not all(c in string.ascii_letters for c in used):
        raise MyiaTypeError(f"einsum: invalid subscripts {subscripts!r}")
    free = [c for c in string.ascii_letters if c not in used]
    ell = []
    for sub, n in zip(ins, ndims):
        k = n - len(sub.replace("...", "")) if "..." in sub else 0
        if k < 0 or ("..." not in sub and len(sub) != n):
            raise MyiaShapeError(
                f"einsum: the subscripts {sub!r} do not match an operand of {n} dimensions"
            )
        ell.append(k)
    e = max(ell, default=0)
    if e > len(free):
        raise MyiaShapeError("einsum: too many dimensions")
    fill = "".join(free[:e])
    explicit = [sub.replace("...", fill[e - k :]) for sub, k in zip(ins, ell)]
    if arrow:
        if "..." not in out and any(ell):
            out = "..." + out
        out = out.replace("...", fill)
    else:
        counts = "".join(explicit)
        out = fill + "".join(sorted(c for c in used if counts.count(c) == 1))
    if len(set(out)) != len(out) or not set(out) <= set("".join(explicit)):
        raise MyiaShapeError(f"einsum: invalid output subscripts in {subscripts!r}")
    return explicit, out


@primitive
def einsum(subscripts, operands):
    """``np.einsum(subscripts, *operands)`` (optimized contraction order)."""
    return _scalar(np.einsum(subscripts, *operands, optimize=len(operands) > 1))


#: The most repeated occurrences of indices in one operand whose gradient is an einsum
#: (``"ii"`` has one, ``"iii"`` and ``"iijj"`` two): each is one identity matrix.
REPEATS = 3


@primitive
def einsum_grad_spec(subscripts, operands, i):
    """How the sensitivity of operand `i` of ``einsum(subscripts, operands)`` is an einsum.

    ``(spec, ties)``: ``spec`` is the einsum of the other operands, the output's sensitivity
    and a mask of the shape of operand `i` (which stands for the indices that only it has):
    ``"jk,ik,ij->ij"`` for operand 0 of ``"ij,jk->ik"``. An index repeated in operand `i`
    is a fresh one at each occurrence after its first (at axis q); the mask is then zero
    where axis q's index differs from that of the first occurrence's axis p, and ``ties``
    holds for each such pair ``(p, q, axes)``, where ``axes`` are the others (the identity
    matrix of axes p and q is expanded there): ``",ia->ia"`` and ``((0, 1, ()),)`` for the
    trace ``"ii->"``. Without repeated indices the mask is ones. A compile-time constant.
    """
    ins, out = parse_einsum(subscripts, tuple(np.ndim(x) for x in operands))
    sub = ins[i]
    used = set("".join(ins)) | set(out)
    fresh = (c for c in string.ascii_letters if c not in used)
    mask, ties = [], []
    for q, c in enumerate(sub):
        if c not in mask:
            mask.append(c)
            continue
        f = next(fresh, None)
        if f is None or len(ties) == REPEATS:
            raise MyiaTypeError(
                f"the gradient of einsum with more than {REPEATS} repeated indices in one "
                f"operand ({subscripts!r}) is not supported: take np.diagonal first"
            )
        mask.append(f)
        p = sub.index(c)
        ties.append((p, q, tuple(k for k in range(len(sub)) if k not in (p, q))))
    mask_sub = "".join(mask)
    spec = ",".join(ins[:i] + ins[i + 1 :] + [out, mask_sub]) + "->" + mask_sub
    return spec, tuple(ties)


def _einsum_shape(subscripts, arrays):
    ins, out = parse_einsum(subscripts, tuple(len(a.shape) for a in arrays))
    sizes: dict[str, int | None] = {}
    for sub, a in zip(ins, arrays):
        for c, d in zip(sub, a.shape):
            if d is None or sizes.get(c, 1) is None:
                # Known at run time only (NumPy checks it): a known size other than 1 wins.
                if c not in sizes or sizes[c] == 1 or (d is not None and d != 1):
                    sizes[c] = d
                continue
            if sizes.get(c, 1) not in (1, d) and d != 1:
                shown = ", ".join(shape_str(x.shape) for x in arrays)
                raise MyiaShapeError(
                    f"Incompatible shapes in einsum {subscripts!r}: index {c!r} has sizes "
                    f"{sizes[c]} and {d} (operands {shown})"
                )
            if d != 1 or c not in sizes:
                sizes[c] = d
    return tuple(sizes[c] for c in out)


def _operands(operands, what):
    if not isinstance(operands, AbstractTuple) or not operands.elements:
        raise MyiaTypeError(f"{what} expects arrays, not {show(operands)}")
    return [as_array(x, what) for x in operands.elements]


@infer_rule(einsum)
def _infer_einsum(subscripts, operands):
    subs = const_value(subscripts, "einsum's subscripts", str)
    arrays = _operands(operands, "einsum")
    dt = promote(*((a.dtype, False) for a in arrays))[0]
    return array_result(dt, _einsum_shape(subs, arrays))


@infer_rule(einsum_grad_spec)
def _infer_einsum_grad_spec(subscripts, operands, i):
    subs = const_value(subscripts, "einsum's subscripts", str)
    arrays = _operands(operands, "einsum")
    k = const_value(i, "an operand's position", int)
    probes = tuple(np.broadcast_to(np.empty((), "V0"), (1,) * len(a.shape)) for a in arrays)
    return constant_abstract(einsum_grad_spec.impl(subs, probes, k))


nondifferentiable(einsum_grad_spec)


@primitive
def product_spec(name, a, b, axes=2):
    """How ``np.tensordot(a, b, axes)`` or ``np.kron(a, b)`` is an einsum (a constant).

    ``(subscripts, a_shape, b_shape, out_shape)``: the einsum of `a` and `b` reshaped to
    ``a_shape`` and ``b_shape`` (ones prepended, for ``kron``), reshaped to ``out_shape``.
    """
    sa, sb = np.shape(a), np.shape(b)
    if name == "kron":
        d = max(len(sa), len(sb))
        sa, sb = (1,) * (d - len(sa)) + sa, (1,) * (d - len(sb)) + sb
        la, lb = string.ascii_letters[:d], string.ascii_letters[d : 2 * d]
        subs = f"{la},{lb}->" + "".join(x + y for x, y in zip(la, lb))
        return subs, sa, sb, tuple(x * y for x, y in zip(sa, sb))
    if isinstance(axes, int):
        if not 0 <= axes <= min(len(sa), len(sb)):
            raise MyiaShapeError(f"np.tensordot: axes={axes} for shapes {sa} and {sb}")
        ia, ib = list(range(len(sa) - axes, len(sa))), list(range(axes))
    else:
        ia, ib = ([x] if isinstance(x, int) else list(x) for x in axes)
        if len(ia) != len(ib):
            raise MyiaShapeError(f"np.tensordot: axes {axes} do not pair up")
        ia = [normalize_axis(i, len(sa), sa) for i in ia]
        ib = [normalize_axis(i, len(sb), sb) for i in ib]
    for i, j in zip(ia, ib):
        if sa[i] != sb[j]:
            raise MyiaShapeError(
                f"np.tensordot: axis {i} of {shape_str(sa)} and axis {j} of {shape_str(sb)} differ"
            )
    letters = iter(string.ascii_letters)
    la = [next(letters) for _ in sa]
    lb = [next(letters) for _ in sb]
    for i, j in zip(ia, ib):
        lb[j] = la[i]
    out = [c for k, c in enumerate(la) if k not in ia] + [
        c for k, c in enumerate(lb) if k not in ib
    ]
    subs = f"{''.join(la)},{''.join(lb)}->{''.join(out)}"
    shape = tuple(sa[k] for k in range(len(sa)) if k not in ia) + tuple(
        sb[k] for k in range(len(sb)) if k not in ib
    )
    return subs, sa, sb, shape


@infer_rule(product_spec)
def _infer_product_spec(name, a, b, axes):
    kind = const_value(name, "a product's name", str)
    a, b = as_array(a, f"np.{kind}"), as_array(b, f"np.{kind}")
    ax = const_value(axes, f"the axes of np.{kind}", (int, tuple))
    probe_a = np.broadcast_to(np.empty((), "V0"), a.shape)
    probe_b = np.broadcast_to(np.empty((), "V0"), b.shape)
    return constant_abstract(product_spec.impl(kind, probe_a, probe_b, ax))


nondifferentiable(product_spec)


@primitive
def einsum_subscripts(sublists, out):
    """The subscripts of ``np.einsum(a, [0, 1], b, [1, 2], [0, 2])`` (a constant string).

    `sublists` has a tuple of ints (or ``...``) per operand, `out` the output's (or None);
    the ints, in ``range(52)`` as NumPy's, are letters.
    """

    def letters(sub):
        if not isinstance(sub, tuple):
            sub = (sub,)
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, (int, np.integer)) and not isinstance(s, bool) and 0 <= s < 52:
                out.append(string.ascii_letters[s])
            else:
                raise ValueError(f"einsum: subscript {s!r} is not within the valid range [0, 52)")
        return "".join(out)

    spec = ",".join(letters(s) for s in sublists)
    return spec if out is None else f"{spec}->{letters(out)}"


@infer_rule(einsum_subscripts)
def _infer_einsum_subscripts(sublists, out):
    subs = tuple(_sublist(e) for e in getattr(sublists, "elements", ()))
    last = _sublist(out)
    try:
        return constant_abstract(einsum_subscripts.impl(subs, last))
    except ValueError as exc:
        raise MyiaTypeError(str(exc)) from None


def _sublist(a):
    """The value of an einsum sublist: a list of ints (literal), a tuple of them, or None."""
    v = getattr(a, "value", ANYTHING) if isinstance(a, AbstractList) else static_value(a)
    if v is ANYTHING or not (v is None or isinstance(v, (tuple, int))):
        raise MyiaTypeError(
            f"einsum's sublists must be lists of ints written in the call, not {show(a)}"
        )
    return v


nondifferentiable(einsum_subscripts)


def _einsum_sens(subscripts, operands, dout, i):
    spec, ties = einsum_grad_spec(subscripts, operands, i)
    x = operands[i]
    n = len(ties)
    if n == 0:
        mask = ones_like(x)
    elif n == 1:
        mask = ones_like(x) * _tie(x, ties[0])
    elif n == 2:
        mask = ones_like(x) * _tie(x, ties[0]) * _tie(x, ties[1])
    else:
        mask = ones_like(x) * _tie(x, ties[0]) * _tie(x, ties[1]) * _tie(x, ties[2])
    d = einsum(spec, operands[:i] + operands[i + 1 :] + (dout, mask))
    return unbroadcast(d, x)


def _tie(x, tie):
    """Ones where axes p and q of `x` have the same index, else zeros (``tie = (p, q, axes)``).

    The identity matrix of their sizes, with axes of size 1 at ``axes``, the others.
    """
    p, q, axes = tie
    return expand_dims(eye(shape(x)[p], shape(x)[q], 0, dtype_of(x)), axes)


@bprop(einsum)
def bprop_einsum(subscripts, operands, out, dout):
    n = len(operands)
    if n == 1:
        return (gzeros(subscripts), (_einsum_sens(subscripts, operands, dout, 0),))
    if n == 2:
        d0 = _einsum_sens(subscripts, operands, dout, 0)
        return (gzeros(subscripts), (d0, _einsum_sens(subscripts, operands, dout, 1)))
    if n == 3:
        d0 = _einsum_sens(subscripts, operands, dout, 0)
        d1 = _einsum_sens(subscripts, operands, dout, 1)
        return (gzeros(subscripts), (d0, d1, _einsum_sens(subscripts, operands, dout, 2)))
    d0 = _einsum_sens(subscripts, operands, dout, 0)
    d1 = _einsum_sens(subscripts, operands, dout, 1)
    d2 = _einsum_sens(subscripts, operands, dout, 2)
    d3 = _einsum_sens(subscripts, operands, dout, 3)
    return (gzeros(subscripts), (d0, d1, d2, d3))


# Cumulative sums ------------------------------------------------------------------------------


@primitive
def cumsum(a, axis, reverse=False):
    """``np.cumsum(a, axis)`` along an int `axis`; from the end of the axis if `reverse`."""
    if not reverse:
        return np.cumsum(a, axis=axis)
    return np.flip(np.cumsum(np.flip(a, axis), axis=axis), axis)


@infer_rule(cumsum)
def _infer_cumsum(a, axis, reverse):
    a = as_array(a, "cumsum")
    if not a.shape:
        raise MyiaShapeError("cumsum of a 0-d array: flatten it (axis=None)")
    normalize_axis(const_value(axis, "the axis of cumsum", int), len(a.shape), a.shape)
    const_value(reverse, "reverse of cumsum", (bool, int))
    return AbstractArray(np.cumsum(np.ones(1, a.dtype)).dtype.name, a.shape)


@bprop(cumsum)
def bprop_cumsum(a, axis, reverse, out, dout):
    return (unbroadcast(cumsum(dout, axis, not reverse), a), gzeros(axis), gzeros(reverse))


# Sorting and gathers along an axis ------------------------------------------------------------


@primitive
def argsort(a, axis=-1):
    """``np.argsort(a, axis, kind="stable")``: int64 indices."""
    return np.argsort(a, axis=axis, kind="stable")


@primitive
def take_along_axis(a, indices, axis):
    """``np.take_along_axis(a, indices, axis)``."""
    return np.take_along_axis(a, indices, axis)


@primitive
def untake_along_axis(d, a, indices, axis):
    """The sensitivity of `a` in ``take_along_axis(a, indices, axis)`` whose output's is `d`.

    Zeros of `a`'s shape with `d` added where `indices` read (repeated indices add up).
    """
    out = np.zeros(np.shape(a), np.result_type(d))
    idx = np.asarray(indices)
    full = list(np.ix_(*(np.arange(n) for n in idx.shape)))
    ax = axis % out.ndim
    full = [np.broadcast_to(g, idx.shape) for g in full]
    full[ax] = idx
    np.add.at(out, tuple(full), d)
    return out


def _along(a, indices, axis, what):
    a, idx = as_array(a, what), as_array(indices, what)
    if not idx.dtype.startswith(("int", "uint")):
        raise MyiaTypeError(f"{what}'s indices must be integers, not {show(indices)}")
    ax = normalize_axis(const_value(axis, f"the axis of {what}", int), len(a.shape), a.shape)
    if len(idx.shape) != len(a.shape):
        raise MyiaShapeError(
            f"{what}: indices {shape_str(idx.shape)} and array {shape_str(a.shape)} must "
            "have the same number of dimensions"
        )
    other = [d for i, d in enumerate(a.shape) if i != ax]
    iother = [d for i, d in enumerate(idx.shape) if i != ax]
    broadcast_shapes(what, tuple(other), tuple(iother))
    return a, idx, ax


@infer_rule(argsort)
def _infer_argsort(a, axis):
    a = as_array(a, "argsort")
    if not a.shape:
        raise MyiaShapeError("argsort of a 0-d array")
    normalize_axis(const_value(axis, "the axis of argsort", int), len(a.shape), a.shape)
    return AbstractArray("int64", a.shape)


@infer_rule(take_along_axis)
def _infer_take_along_axis(a, indices, axis):
    a, idx, ax = _along(a, indices, axis, "take_along_axis")
    shape = broadcast_shapes("take_along_axis", a.shape[:ax] + (1,) + a.shape[ax + 1 :], idx.shape)
    return AbstractArray(a.dtype, shape[:ax] + (idx.shape[ax],) + shape[ax + 1 :])


@infer_rule(untake_along_axis)
def _infer_untake_along_axis(d, a, indices, axis):
    d, a = as_array(d, "take_along_axis"), as_array(a, "take_along_axis")
    return AbstractArray(d.dtype, a.shape)


@bprop(take_along_axis)
def bprop_take_along_axis(a, indices, axis, out, dout):
    return (untake_along_axis(dout, a, indices, axis), gzeros(indices), gzeros(axis))


@bprop(untake_along_axis)
def bprop_untake_along_axis(d, a, indices, axis, out, dout):
    dd = unbroadcast(take_along_axis(dout, indices, axis), d)
    return (dd, gzeros(a), gzeros(indices), gzeros(axis))


nondifferentiable(argsort)


@primitive
def searchsorted(a, v, right=False):
    """``np.searchsorted(a, v, side)`` of a sorted vector `a`: int64 indices of `v`'s shape."""
    return np.searchsorted(a, v, "right" if right else "left")


@infer_rule(searchsorted)
def _infer_searchsorted(a, v, right):
    a, v = as_array(a, "np.searchsorted"), as_array(v, "np.searchsorted")
    if len(a.shape) != 1:
        raise MyiaShapeError(
            f"np.searchsorted expects a sorted vector, not an array of shape {shape_str(a.shape)}"
        )
    const_value(right, "the side of np.searchsorted", (bool, int))
    return array_result("int64", v.shape)


nondifferentiable(searchsorted)


# Diagonals ------------------------------------------------------------------------------------


@primitive
def diagonal(a, offset=0, axis1=0, axis2=1):
    """``np.diagonal(a, offset, axis1, axis2)`` (a copy, not a read-only view)."""
    return np.diagonal(a, offset, axis1, axis2).copy()


@primitive
def undiagonal(d, a, offset=0, axis1=0, axis2=1):
    """Zeros of `a`'s shape with `d` on the diagonal ``diagonal(a, offset, axis1, axis2)``."""
    out = np.zeros(np.shape(a), np.result_type(d))
    view = np.diagonal(out, offset, axis1, axis2)
    view.flags.writeable = True  # a view of `out`, which is ours
    view[...] = d
    return out


def _diagonal_shape(a, offset, axis1, axis2):
    a = as_array(a, "diagonal")
    if len(a.shape) < 2:
        raise MyiaShapeError(f"diagonal expects 2 or more dimensions, not {shape_str(a.shape)}")
    k = const_value(offset, "the offset of diagonal", int)
    n = len(a.shape)
    i = normalize_axis(const_value(axis1, "an axis of diagonal", int), n, a.shape)
    j = normalize_axis(const_value(axis2, "an axis of diagonal", int), n, a.shape)
    if i == j:
        raise MyiaShapeError("diagonal: axis1 and axis2 cannot be the same")
    di, dj = a.shape[i], a.shape[j]
    if di is None or dj is None:
        size = None  # known only at run time, as the dimensions it comes from
    else:
        size = max(0, min(di, dj - k) if k >= 0 else min(di + k, dj))
    return a, tuple(d for x, d in enumerate(a.shape) if x not in (i, j)) + (size,)


@infer_rule(diagonal)
def _infer_diagonal(a, offset, axis1, axis2):
    a, shape = _diagonal_shape(a, offset, axis1, axis2)
    return AbstractArray(a.dtype, shape)


@infer_rule(undiagonal)
def _infer_undiagonal(d, a, offset, axis1, axis2):
    a, shape = _diagonal_shape(a, offset, axis1, axis2)
    d = as_array(d, "diagonal")
    broadcast_shapes("diagonal", shape, d.shape)
    return AbstractArray(d.dtype, a.shape)


@bprop(diagonal)
def bprop_diagonal(a, offset, axis1, axis2, out, dout):
    da = unbroadcast(undiagonal(dout, a, offset, axis1, axis2), a)
    return (da, gzeros(offset), gzeros(axis1), gzeros(axis2))


@bprop(undiagonal)
def bprop_undiagonal(d, a, offset, axis1, axis2, out, dout):
    dd = unbroadcast(diagonal(dout, offset, axis1, axis2), d)
    return (dd, gzeros(a), gzeros(offset), gzeros(axis1), gzeros(axis2))


# Broadcasting ---------------------------------------------------------------------------------


@primitive
def broadcast_to(a, shape):
    """``np.broadcast_to(a, shape)`` (a new array: Myia's arrays are never read-only views)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return _scalar(np.array(np.broadcast_to(a, shape)))


def _as_tuple(s):
    return (s,) if isinstance(s, int) else tuple(s) if isinstance(s, (tuple, list)) else s


@infer_rule(broadcast_to)
def _infer_broadcast_to(a, shape):
    a = as_array(a, "broadcast_to")
    s = shape_value(shape, "broadcast_to", normalize=_as_tuple)
    ok = len(a.shape) <= len(s) and all(
        d in (1, n, None) for d, n in zip(reversed(a.shape), reversed(s))
    )
    if not ok:
        raise MyiaShapeError(
            f"cannot broadcast an array of shape {shape_str(a.shape)} to shape {shape_str(s)}"
        )
    return array_result(a.dtype, s)


@bprop(broadcast_to)
def bprop_broadcast_to(a, shape_, out, dout):
    return (unbroadcast(dout, a), gzeros(shape_))


# Reordering and rounding ----------------------------------------------------------------------


@primitive
def flip(a, axis=None):
    """``np.flip(a, axis)`` (a new array)."""
    return np.flip(a, axis).copy()


@primitive
def roll(a, shift, axis=None):
    """``np.roll(a, shift, axis)``."""
    return np.roll(a, shift, axis)


@primitive
def moveaxis(a, source, destination):
    """``np.moveaxis(a, source, destination)`` (a new array)."""
    return np.moveaxis(a, source, destination).copy()


@primitive
def rint(x):
    """``np.rint``: to the nearest integer, halves to even (no derivative)."""
    return np.rint(x)


def _probe(a, what, fn):
    a = as_array(a, what)
    try:
        out = fn(np.broadcast_to(np.empty((), "V0"), a.shape))
    except (ValueError, TypeError, IndexError) as exc:
        raise MyiaShapeError(f"{what} of an array of shape {shape_str(a.shape)}: {exc}") from None
    return AbstractArray(a.dtype, out.shape)


@infer_rule(flip)
def _infer_flip(a, axis):
    ax = const_value(axis, "the axis of flip")
    return _probe(a, "flip", lambda p: np.flip(p, ax))


@infer_rule(roll)
def _infer_roll(a, shift, axis):
    const_value(shift, "the shift of roll")
    ax = const_value(axis, "the axis of roll")
    a = as_array(a, "roll")
    if ax is not None:
        for i in ax if isinstance(ax, tuple) else (ax,):
            normalize_axis(i, len(a.shape), a.shape)
    return a


@infer_rule(moveaxis)
def _infer_moveaxis(a, source, destination):
    src = const_value(source, "the source of moveaxis")
    dst = const_value(destination, "the destination of moveaxis")
    return _probe(a, "moveaxis", lambda p: np.moveaxis(p, src, dst))


@infer_rule(rint)
def _infer_rint(x):
    if isinstance(x, AbstractArray):
        return AbstractArray(np.rint(np.ones(1, x.dtype)).dtype.name, x.shape)
    x = as_array(x, "rint")
    return array_result(np.rint(np.ones(1, x.dtype)).dtype.name, ())


@bprop(flip)
def bprop_flip(a, axis, out, dout):
    return (unbroadcast(flip(dout, axis), a), gzeros(axis))


@bprop(roll)
def bprop_roll(a, shift, axis, out, dout):
    return (unbroadcast(roll(dout, -shift, axis), a), gzeros(shift), gzeros(axis))


@bprop(moveaxis)
def bprop_moveaxis(a, source, destination, out, dout):
    da = unbroadcast(moveaxis(dout, destination, source), a)
    return (da, gzeros(source), gzeros(destination))


nondifferentiable(rint)


from .array import dtype_of, expand_dims, ones_like, shape  # noqa: E402
from .grad import gzeros, unbroadcast  # noqa: E402
from .linalg import eye  # noqa: E402

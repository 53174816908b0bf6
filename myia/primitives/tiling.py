"""Copies of an array's elements: ``np.tile``, ``np.repeat`` and ``np.pad``, with their adjoints.

Each is one NumPy call whose arguments other than the array are compile-time constants (the
shape of the result depends on them). Each reads every element of its result from one
element of the array (or from a constant, for padding), along each axis by a fixed map of
indices, so its gradient is the adjoint: the sensitivities of the copies of an element add
up into it. The adjoints (``untile``, ``unrepeat``, ``unpad``) are primitives whose own
gradients are the copies again: gradients of any order are gradients of primitives.
"""

from __future__ import annotations

import numpy as np

from ..abstract.data import AbstractArray
from ..errors import MyiaShapeError, MyiaTypeError
from ..grad.registry import bprop
from ..infer.registry import infer_rule
from ..infer.rulelib import as_array, const_value, normalize_axis, shape_str
from .core import primitive

#: The modes of ``np.pad`` that copy elements of the array (and "constant").
PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _tile_layout(shape: tuple[int, ...], reps) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """`shape` and `reps` with as many entries, NumPy's way (ones prepended)."""
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    d = max(len(shape), len(reps))
    return (1,) * (d - len(shape)) + tuple(shape), (1,) * (d - len(reps)) + reps


def _repeat_map(n: int, repeats) -> np.ndarray:
    return np.repeat(np.arange(n), repeats)


def _pad_widths(pad_width, ndim: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (ndim, 2))


def _add_along(d: np.ndarray, index: np.ndarray, n: int, axis: int) -> np.ndarray:
    """Zeros of length `n` along `axis`, with ``d[..., k, ...]`` added at ``index[k]``."""
    shape = list(d.shape)
    shape[axis] = n
    out = np.zeros(shape, d.dtype)
    np.add.at(np.moveaxis(out, axis, 0), index, np.moveaxis(d, axis, 0))
    return out


# The copies -----------------------------------------------------------------------------------


@primitive
def tile(a, reps):
    """``np.tile(a, reps)`` (`reps` an int or a tuple of ints)."""
    return np.tile(a, reps)


@primitive
def repeat(a, repeats, axis=None):
    """``np.repeat(a, repeats, axis)`` (`repeats` an int or a tuple of ints)."""
    return np.repeat(a, repeats, axis)


@primitive
def pad(a, pad_width, mode="constant", constant_values=0):
    """``np.pad(a, pad_width, mode)``, `mode` one of `PAD_MODES`."""
    if mode == "constant":
        return np.pad(a, pad_width, mode, constant_values=constant_values)
    return np.pad(a, pad_width, mode)


# The adjoints ---------------------------------------------------------------------------------


@primitive
def untile(d, a, reps):
    """The sensitivity of `a` in ``tile(a, reps)`` whose output's is `d`: the tiles' sum."""
    shape, r = _tile_layout(np.shape(a), reps)
    split = [k for pair in zip(r, shape) for k in pair]
    summed = np.reshape(d, split).sum(axis=tuple(range(0, 2 * len(shape), 2)))
    return np.reshape(summed, np.shape(a))


@primitive
def unrepeat(d, a, repeats, axis=None):
    """The sensitivity of `a` in ``repeat(a, repeats, axis)`` whose output's is `d`."""
    return unrepeat_of(np.asarray(d), a, repeats, axis, _add_along)


def unrepeat_of(d, a, repeats, axis, add_along):
    """`unrepeat` of array `d`, its sums made by `add_along` (the JAX backend's, traced)."""
    if axis is None:
        n = int(np.prod(np.shape(a)))
        return add_along(d, _repeat_map(n, repeats), n, 0).reshape(np.shape(a))
    ax = axis % np.ndim(a)
    n = np.shape(a)[ax]
    return add_along(d, _repeat_map(n, repeats), n, ax)


@primitive
def unpad(d, a, pad_width, mode="constant"):
    """The sensitivity of `a` in ``pad(a, pad_width, mode, c)`` whose output's is `d`."""
    return unpad_of(np.asarray(d), a, pad_width, mode, _add_along)


def unpad_of(d, a, pad_width, mode, add_along):
    """`unpad` of array `d`, its sums made by `add_along` (the JAX backend's, traced)."""
    widths = _pad_widths(pad_width, d.ndim)
    if mode == "constant":
        return d[tuple(slice(b, b + n) for (b, _), n in zip(widths, np.shape(a)))].copy()
    for ax, ((b, e), n) in enumerate(zip(widths, np.shape(a))):
        d = add_along(d, np.pad(np.arange(n), (b, e), mode), n, ax)
    return d


# Shapes ---------------------------------------------------------------------------------------


def _int_tuple(v, what: str) -> tuple[int, ...] | int:
    if isinstance(v, bool) or not (
        isinstance(v, int) or (isinstance(v, tuple) and all(type(x) is int for x in v))
    ):
        raise MyiaTypeError(f"{what} must be an int or a tuple of ints, not {v!r}")
    if (v if isinstance(v, int) else min(v, default=0)) < 0:
        raise MyiaShapeError(f"{what} must not be negative, got {v!r}")
    return v


@infer_rule(tile)
def _infer_tile(a, reps):
    a = as_array(a, "np.tile")
    r = _int_tuple(const_value(reps, "reps of np.tile"), "reps of np.tile")
    shape, r = _tile_layout(a.shape, r)
    return AbstractArray(a.dtype, tuple(s * k for s, k in zip(shape, r)))


def _repeat_shape(a: AbstractArray, repeats, axis) -> tuple[int, ...]:
    what = "repeats of np.repeat"
    r = _int_tuple(const_value(repeats, what + " (the result's shape depends on it)"), what)
    ax = const_value(axis, "the axis of np.repeat", (int, type(None)))
    shape = (int(np.prod(a.shape)),) if ax is None else a.shape
    ax = 0 if ax is None else normalize_axis(ax, len(a.shape), a.shape)
    if not shape:
        raise MyiaShapeError("np.repeat of a 0-d array along an axis")
    n = shape[ax]
    if not isinstance(r, int) and len(r) not in (1, n):
        raise MyiaShapeError(f"np.repeat: {len(r)} repeats for an axis of length {n}")
    return shape[:ax] + (len(_repeat_map(n, r)),) + shape[ax + 1 :]


@infer_rule(repeat)
def _infer_repeat(a, repeats, axis):
    a = as_array(a, "np.repeat")
    return AbstractArray(a.dtype, _repeat_shape(a, repeats, axis))


def _pad_shape(a: AbstractArray, pad_width, mode) -> tuple[int, ...]:
    m = const_value(mode, "the mode of np.pad", str)
    if m not in PAD_MODES:
        raise MyiaTypeError(
            f"np.pad(mode={m!r}) is not supported; the modes are {', '.join(PAD_MODES)}"
        )
    w = const_value(pad_width, "pad_width of np.pad")
    try:
        widths = np.broadcast_to(np.asarray(w, dtype=np.int64), (len(a.shape), 2))
    except (ValueError, TypeError):
        raise MyiaShapeError(
            f"np.pad: pad_width {w!r} does not fit an array of shape {shape_str(a.shape)}"
        ) from None
    if (widths < 0).any():
        raise MyiaShapeError(f"np.pad: negative pad_width {w!r}")
    if m != "constant" and any(n == 0 and (b or e) for n, (b, e) in zip(a.shape, widths)):
        raise MyiaShapeError(f"np.pad(mode={m!r}) of an empty axis")
    return tuple(int(n + b + e) for n, (b, e) in zip(a.shape, widths))


@infer_rule(pad)
def _infer_pad(a, pad_width, mode, constant_values):
    a = as_array(a, "np.pad")
    const_value(constant_values, "constant_values of np.pad", (int, float, bool))
    return AbstractArray(a.dtype, _pad_shape(a, pad_width, mode))


@infer_rule(untile, unrepeat, unpad)
def _infer_adjoint(d, a, *static):
    d, a = as_array(d, "a copy's gradient"), as_array(a, "a copy's gradient")
    return AbstractArray(d.dtype, a.shape)


# Backpropagators ------------------------------------------------------------------------------


@bprop(tile)
def bprop_tile(a, reps, out, dout):
    return (unbroadcast(untile(dout, a, reps), a), gzeros(reps))


@bprop(untile)
def bprop_untile(d, a, reps, out, dout):
    return (unbroadcast(tile(dout, reps), d), gzeros(a), gzeros(reps))


@bprop(repeat)
def bprop_repeat(a, repeats, axis, out, dout):
    return (unbroadcast(unrepeat(dout, a, repeats, axis), a), gzeros(repeats), gzeros(axis))


@bprop(unrepeat)
def bprop_unrepeat(d, a, repeats, axis, out, dout):
    dd = unbroadcast(repeat(dout, repeats, axis), d)
    return (dd, gzeros(a), gzeros(repeats), gzeros(axis))


@bprop(pad)
def bprop_pad(a, pad_width, mode, constant_values, out, dout):
    da = unpad(dout, a, pad_width, mode)
    return (da, gzeros(pad_width), gzeros(mode), gzeros(constant_values))


@bprop(unpad)
def bprop_unpad(d, a, pad_width, mode, out, dout):
    dd = unbroadcast(pad(dout, pad_width, mode, 0), d)
    return (dd, gzeros(a), gzeros(pad_width), gzeros(mode))


from .grad import gzeros, unbroadcast  # noqa: E402

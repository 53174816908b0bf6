"""Sliding windows: ``x[i:i + k]`` with a start known at run time and a length known statically.

A slice whose bounds are known only at run time has a shape known only at run time, which
Myia refuses for arrays. But where its stop minus its start is known at compile time (the
same expression plus an int, ``x[i:i + k]``, ``X[t - k:t]``: `myia.frontend.windows`), the
slice is a *window* of that length: ``dynamic_window(x, i, k, axis)``, of a known shape.

NumPy gives a shorter array where the window does not fit (``x[8:11]`` of 10 elements has
2); JAX's ``lax.dynamic_slice`` moves the start instead. The parser makes a slice a window
only where it provably fits (`myia.frontend.windows.WindowFacts`), and NumPy's slice (of
an axis known at run time only) elsewhere; a window that does not fit anyway raises
`IndexError` at the user's line, whatever the backend, never a value NumPy would not give.
A negative start counts from the end, as in NumPy, where NumPy's slice has the window's
length (``x[-3:-1]``).

The gradient of a window is its sensitivity added into zeros at the window
(``window_add``, a dynamic update of a slice), whose own gradient is the window again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import AbstractArray, AbstractConstant, AbstractScalar, show
from ..errors import MyiaShapeError, MyiaTypeError
from ..grad.registry import bprop
from ..infer.registry import infer_rule
from ..infer.rulelib import as_array, const_value, normalize_axis, shape_str
from .core import primitive


def window_offset(start: int, size: int, n: int) -> int:
    """The offset of the window ``[start:start + size]`` in an axis of `n` elements, or -1.

    As NumPy reads the slice (a negative start counts from the end); -1 where NumPy's slice
    would not have `size` elements. Numba compiles it as it is (`native_arrays`).
    """
    if size == 0:
        return 0
    if start >= 0:
        if start + size <= n:
            return start
    elif start >= -n and start + size < 0:
        return start + n
    return -1


def window_start(start: Any, size: int, n: int, axis: int = 0) -> int:
    """`window_offset`, with `IndexError` where the window does not fit."""
    start = int(start)
    offset = window_offset(start, size, n)
    if offset >= 0:
        return offset
    stop = start + size
    got = len(range(n)[start:stop])
    raise IndexError(
        f"the window [{start}:{stop}] of length {size} does not fit in axis {axis} of size "
        f"{n} (NumPy's slice would have {got} elements; Myia's windows have a fixed length)"
    )


def _window_index(axis: int, s: int, size: int) -> tuple[slice, ...]:
    return (slice(None),) * axis + (slice(s, s + size),)


@primitive
def dynamic_window(a, start, size, axis):
    """``a[..., start:start + size]`` along `axis`, `size` a constant: see `window_start`."""
    s = window_start(start, size, a.shape[axis], axis)
    return a[_window_index(axis, s, size)]


@primitive
def window_add(a, start, v, axis):
    """A copy of `a` with `v` added at the window of `v`'s length at `start` along `axis`."""
    size = np.shape(v)[axis]
    s = window_start(start, size, a.shape[axis], axis)
    out = np.array(a, copy=True)
    out[_window_index(axis, s, size)] += v
    return out


@primitive
def window_add_inplace(a, start, v, axis):
    """`window_add` written into `a`, which nothing else reads (`myia.opt.inplace`)."""
    size = np.shape(v)[axis]
    s = window_start(start, size, a.shape[axis], axis)
    a[_window_index(axis, s, size)] += v
    return a


def window_length(length: Any, step: Any) -> int | None:
    """The length of a slice (stop - start) if known at compile time, an int, with no step.

    `length` is the abstract value of ``make_slice``'s fourth input, which the frontend
    gives where the bounds share terms (`myia.frontend.windows`).
    """
    if not (isinstance(step, AbstractConstant) and step.value is None):
        return None
    if not isinstance(length, AbstractScalar) or not length.dtype.startswith(("int", "uint")):
        return None
    k = length.value
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 0:
        return None
    return int(k)


def _start(start: Any) -> None:
    if not (isinstance(start, AbstractScalar) and start.dtype.startswith(("int", "uint"))):
        raise MyiaTypeError(f"the start of a window must be an integer, not {show(start)}")


@infer_rule(dynamic_window)
def _infer_dynamic_window(a, start, size, axis):
    a = as_array(a, "a window")
    _start(start)
    k = const_value(size, "the length of a window", int)
    if k < 0:
        raise MyiaShapeError(f"a window's length must not be negative, got {k}")
    if not a.shape:
        raise MyiaShapeError("a window of a zero-dimensional array")
    ax = normalize_axis(const_value(axis, "the axis of a window", int), len(a.shape))
    return AbstractArray(a.dtype, a.shape[:ax] + (k,) + a.shape[ax + 1 :])


@infer_rule(window_add, window_add_inplace)
def _infer_window_add(a, start, v, axis):
    a = as_array(a, "window_add")
    v = as_array(v, "window_add")
    _start(start)
    ax = normalize_axis(const_value(axis, "the axis of a window", int), len(a.shape))
    if len(v.shape) != len(a.shape) or any(
        x != y and None not in (x, y) for i, (x, y) in enumerate(zip(a.shape, v.shape)) if i != ax
    ):
        raise MyiaShapeError(
            f"window_add of a window of shape {shape_str(v.shape)} into {shape_str(a.shape)}"
        )
    return a


@bprop(dynamic_window)
def bprop_dynamic_window(a, start, size, axis, out, dout):
    return (window_add(gzeros(a), start, dout, axis), gzeros(start), gzeros(size), gzeros(axis))


@bprop(window_add, window_add_inplace)
def bprop_window_add(a, start, v, axis, out, dout):
    dv = dynamic_window(dout, start, shape(v)[axis], axis)
    return (dout, gzeros(start), dv, gzeros(axis))


from .array import shape  # noqa: E402
from .grad import gzeros  # noqa: E402

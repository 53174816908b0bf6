"""NumPy's polynomials, interpolation, convolution, spacings, angles: Myia's Python subset.

``np.polyval`` (Horner's scheme, a loop), ``np.interp``, ``np.trapezoid``, ``np.convolve`` (a
loop over the shorter vector's elements, each a window of the other), ``np.cross``,
``np.linspace`` and ``np.logspace``, ``np.deg2rad`` and its aliases, ``np.float_power`` and
``np.cbrt``. Being Myia code over primitives, each has its gradient, every backend and
``vmap``. `MAPPING` says what the NumPy names mean; `mapping.py` merges it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..primitives import P
from .numpy_extra import as_array, np_diff
from .ops import refuse
from .scalar_forms import numpy_scalar


def _float_of(x):
    """The float NumPy's math functions give `x` (itself for floats; float16 for int8, bool)."""
    return P.dtype_of(P.exp(x))


def inexact(x):
    return np.issubdtype(P.dtype_of(x), np.inexact)


# Polynomials, interpolation, integration --------------------------------------------------------


def np_polyval(p, x):
    """``np.polyval(p, x)``: ``p[0] * x**(n-1) + ... + p[n-1]`` by Horner's scheme (a loop).

    `p` an array (or a literal list) of coefficients, the highest power first (along its first
    axis: rows of coefficients broadcast with `x`); `x` a number or an array. As NumPy, the
    result starts from ``zeros_like(x)``: its dtype is that of ``x * p[0]`` (a Python number
    `x` a NumPy scalar), and no coefficient gives ``zeros_like(x)``.
    """
    p = as_array(p)
    x = numpy_scalar(as_array(x))
    y = P.zeros_like(x, None)
    n = P.shape(p)[0]
    if n == 0:
        return y
    y = y * x + p[0]  # (the dtype and shape of every later step)
    for i in range(1, n):
        y = y * x + p[i]
    return y


def np_interp(x, xp, fp, left=None, right=None, period=None):
    """``np.interp(x, xp, fp, left, right)``: piecewise linear, in float64 as NumPy.

    `xp` increasing; `x` a number (the result a float64 scalar) or an array. Below ``xp[0]``
    `left` (``fp[0]``), above ``xp[-1]`` `right` (``fp[-1]``); at a sample point its value,
    exactly; between two, NumPy's ``slope * (x - xp[j]) + fp[j]`` (and its fallbacks where
    that is nan). Its gradient: the slope in `x`, the weights in `fp`.
    """
    if period is not None:
        refuse(
            "np.interp(period=...) is not supported in Myia code: map x and xp into one "
            "period (np.mod) and sort them first"
        )
    x = P.astype(as_array(x), np.float64)
    xp = P.astype(as_array(xp), np.float64)
    fp = P.astype(as_array(fp), np.float64)
    if P.ndim(xp) != 1 or P.ndim(fp) != 1:
        raise ValueError("object too deep for desired array")
    n = P.shape(xp)[0]
    if P.shape(fp)[0] != n:
        raise ValueError("fp and xp are not of the same length.")
    if n == 0:
        raise ValueError("array of sample points is empty")
    first = fp[0]
    last = fp[n - 1]
    lo = first if left is None else left
    hi = last if right is None else right
    if n == 1:
        inside = P.zeros_like(x, None) + first  # (fp[0] at x's shape, nan x too, as NumPy)
    else:
        j = P.clip(P.searchsorted(xp, x, True) - 1, 0, n - 2)
        x0 = P.take(xp, j, 0)
        x1 = P.take(xp, j + 1, 0)
        y0 = P.take(fp, j, 0)
        y1 = P.take(fp, j + 1, 0)
        slope = (y1 - y0) / (x1 - x0)
        r = slope * (x - x0) + y0
        r = P.where(r != r, slope * (x - x1) + y1, r)
        r = P.where((r != r) & (y0 == y1), y0, r)
        inside = P.where(x == x0, y0, P.where(x == xp[n - 1], last, r))
    return P.where(x < xp[0], lo, P.where(x > xp[n - 1], hi, inside))


def np_trapezoid(y, x=None, dx=1.0, axis=-1):
    """``np.trapezoid(y, x, dx, axis)`` (``np.trapz``): the trapezoidal rule along `axis`.

    ``sum(d * (y[1:] + y[:-1]) / 2.0)``, as NumPy, with `d` the spacing `dx` or the differences
    of `x` (a vector along `axis`, or an array of `y`'s dimensions).
    """
    y = as_array(y)
    yy = P.moveaxis(y, axis, -1)
    if x is None:
        d = dx
    else:
        x = as_array(x)
        if P.ndim(x) == 1:
            d = np_diff(x)
        elif P.ndim(x) == P.ndim(y):
            d = P.moveaxis(np_diff(x, 1, axis), axis, -1)
        else:
            refuse(
                "np.trapezoid(y, x): x must be a vector or have y's number of dimensions in "
                "Myia code (np.broadcast_to it)"
            )
    return P.reduce_sum(d * (yy[..., 1:] + yy[..., :-1]) / 2.0, -1, False, None)


# Convolution and cross products -----------------------------------------------------------------


def np_convolve(a, v, mode="full"):
    """``np.convolve(a, v, mode)`` of vectors: ``mode`` "full", "same" or "valid".

    NumPy's correlation of the longer with the reversed shorter: one window of the (padded)
    longer per element of the shorter, summed in a loop (its memory is the result's; its
    gradient adds each window's sensitivity). Integers stay integers.
    """
    a = as_array(a)
    v = as_array(v)
    if P.ndim(a) != 1 or P.ndim(v) != 1:
        raise ValueError("object too deep for desired array")
    if P.shape(a)[0] == 0:
        raise ValueError("a cannot be empty")
    if P.shape(v)[0] == 0:
        raise ValueError("v cannot be empty")
    if P.shape(v)[0] > P.shape(a)[0]:
        a, v = v, a
    n = P.shape(a)[0]
    m = P.shape(v)[0]
    if mode == "full":
        before, length = m - 1, n + m - 1
    elif mode == "same":
        before, length = m // 2, n
    elif mode == "valid":
        before, length = 0, n - m + 1
    else:
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    dt = P.dtype_of(a[0] * v[0])
    after = length + m - 1 - before - n
    padded = P.concatenate((P.zeros((before,), dt), P.astype(a, dt), P.zeros((after,), dt)), 0)
    out = P.zeros((length,), dt)
    for k in range(m):
        out = out + v[m - 1 - k] * padded[k : k + length]
    return out


def np_cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``np.cross(a, b)``: cross products of 3-vectors along `axisa`/`axisb` (batches broadcast).

    The vectors along `axisc` of the result; `axis` sets all three. 2-vectors (deprecated
    by NumPy 2.0, which still computes them) have a zero third component: two of them give
    the scalar ``a0 * b1 - a1 * b0``, as NumPy.
    """
    a = as_array(a)
    b = as_array(b)
    if P.ndim(a) < 1 or P.ndim(b) < 1:
        raise ValueError("At least one array has zero dimension")
    if axis is not None:
        axisa, axisb, axisc = axis, axis, axis
    a = P.moveaxis(a, axisa, -1)
    b = P.moveaxis(b, axisb, -1)
    na = P.shape(a)[-1]
    nb = P.shape(b)[-1]
    if (na != 2 and na != 3) or (nb != 2 and nb != 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    dt = P.dtype_of(a[..., :1] * b[..., :1])
    a = P.astype(a, dt)
    b = P.astype(b, dt)
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    c2 = a0 * b1 - a1 * b0
    if na == 2 and nb == 2:
        return c2
    if na == 2:
        b2 = b[..., 2]
        c0 = a1 * b2
        c1 = -(a0 * b2)
    elif nb == 2:
        a2 = a[..., 2]
        c0 = -(a2 * b1)
        c1 = a2 * b0
    else:
        a2, b2 = a[..., 2], b[..., 2]
        c0 = a1 * b2 - a2 * b1
        c1 = a2 * b0 - a0 * b2
    return P.moveaxis(P.stack((c0, c1, c2), -1), -1, axisc)


# Spacings ------------------------------------------------------------------------------------


def np_linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``np.linspace``: `num` (known at compile time) values from `start` to `stop`.

    As NumPy: ``arange(num) * step + start`` (``(arange(num) / div) * delta`` where the step
    is zero), the last value `stop` itself with `endpoint`, in the float of the bounds;
    bounds that are arrays add their axes after the samples' (at `axis`); ``retstep`` adds
    the step (nan for one sample); an integer `dtype` floors.
    """
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = num - 1 if endpoint else num
    dt = P.dtype_of((stop - start) * 1.0)
    delta = P.astype(stop, dt) - P.astype(start, dt)
    idx = P.arange(0, num, None, dt)
    if P.ndim(delta) > 0:
        idx = P.reshape(idx, (num,) + P.shape(P.reduce_sum(delta, None, True, None)))
    if div > 0:
        step = delta / div
        y = P.where(step == 0, (idx / div) * delta, idx * step)
    else:
        step = delta * np.nan
        y = idx * delta
    y = y + P.astype(start, dt)
    if endpoint and num > 1:
        y = P.where(idx == num - 1, P.astype(stop, dt), y)
    if axis != 0:
        y = P.moveaxis(y, 0, axis)
    if dtype is not None:
        if np.issubdtype(dtype, np.integer):
            y = P.floor(y)
        y = P.astype(y, dtype)
    if retstep:
        return y, step
    return y


def np_logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``np.logspace``: ``base ** np.linspace(start, stop, num, endpoint)``.

    A Python number `base` adapts to the bounds' float (float32 bounds, float32 values), as
    in NumPy; a scalar `base` only (an array is refused at compile time).
    """
    if P.ndim(base) > 0:
        refuse("np.logspace with an array base is not supported in Myia code: a scalar base")
    r = P.pow_(base, np_linspace(start, stop, num, endpoint, False, None, axis))
    if dtype is None:
        return r
    return P.astype(r, dtype)


# Angles and powers ---------------------------------------------------------------------------

_DEG2RAD = 0.017453292519943295  # pi / 180, as NumPy's npy_deg2rad
_RAD2DEG = 57.29577951308232  # 180 / pi


def np_deg2rad(x):
    """``np.deg2rad`` and ``np.radians``: ``x * (pi / 180)`` (integers: in NumPy's float)."""
    if not inexact(x):
        return P.astype(P.astype(x, np.float64) * _DEG2RAD, _float_of(x))
    return x * _DEG2RAD


def np_rad2deg(x):
    """``np.rad2deg`` and ``np.degrees``: ``x * (180 / pi)`` (integers: in NumPy's float)."""
    if not inexact(x):
        return P.astype(P.astype(x, np.float64) * _RAD2DEG, _float_of(x))
    return x * _RAD2DEG


def np_float_power(x1, x2):
    """``np.float_power``: ``x1 ** x2`` in float64 (nan for a negative base and a fraction)."""
    return P.pow_(P.astype(x1, np.float64), P.astype(x2, np.float64))


def np_cbrt(x):
    """``np.cbrt``: the real cube root (of negatives too), exact for perfect cubes.

    ``|x| ** (1/3)`` refined by one Newton step ``(2y + |x| / y**2) / 3`` (no overflow: no
    cube), the sign of `x` (``-0.0`` too); 0, infinities and nan are themselves. Integers
    are computed in float64, in NumPy's float.
    """
    if not inexact(x):
        return P.astype(_cbrt(P.astype(x, np.float64)), _float_of(x))
    return _cbrt(x)


def _cbrt(x):
    ax = P.abs_(x)
    edge = (ax == 0) | (ax == np.inf)
    safe = P.where(edge, 1.0, ax)  # (no 0 / 0 in the branch not taken, nor in its gradient)
    y = safe ** (1.0 / 3.0)
    y = (y + y + safe / (y * y)) / 3.0
    r = P.where(edge, ax, y)
    return P.where(x < 0, -r, P.where(x == 0, x, r))


for _fn in (np_polyval, np_convolve, np_cross, np_trapezoid):
    _fn.sequence_argument = (0, 1)  # type: ignore[attr-defined]  # np.polyval([1, 2], x)
np_interp.sequence_argument = (0, 1, 2)  # type: ignore[attr-defined]

MAPPING: dict[Any, Any] = {
    np.polyval: np_polyval,
    np.interp: np_interp,
    np.trapezoid: np_trapezoid,
    np.convolve: np_convolve,
    np.cross: np_cross,
    np.linspace: np_linspace,
    np.logspace: np_logspace,
    np.deg2rad: np_deg2rad,
    np.radians: np_deg2rad,
    np.rad2deg: np_rad2deg,
    np.degrees: np_rad2deg,
    np.float_power: np_float_power,
    np.cbrt: np_cbrt,
}
if hasattr(np, "trapz"):  # (removed in NumPy 2.4)
    MAPPING[np.trapz] = np_trapezoid

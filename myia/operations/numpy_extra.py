"""More NumPy (and optional SciPy) functions, written in Myia's Python subset.

``einsum``, ``cumsum``, sorting, quantiles, ``var``/``std``, diagonals and triangles, copies
(``tile``, ``repeat``, ``pad``) and a few shorthands (``np.linalg`` is
in `numpy_linalg`). Each gives NumPy's signature to primitives (see
`myia.primitives.array_extra` and `myia.primitives.tiling`) or is written with them, so its
gradient is exact and costs nothing after optimization. `MAPPING`, `SCIPY` and `METHODS` say
what ``np.<name>``, SciPy's functions and ``a.<method>`` mean; `mapping.py` merges them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..primitives import P
from .number_lib import hypot_float64
from .numpy_lib import reshape_in_order
from .numpy_linalg import LINALG, cho_factor, cho_solve, scipy_cholesky, solve_triangular
from .numpy_logic import np_all, np_any
from .numpy_ufuncs import UFUNC_METHODS

# Products -------------------------------------------------------------------------------------


def np_tensordot(a, b, axes=2):
    """``np.tensordot(a, b, axes)`` (an einsum: its gradient is einsums)."""
    subs, sa, sb, shape = P.product_spec("tensordot", a, b, axes)
    return P.einsum(subs, (a, b))


def np_kron(a, b):
    """``np.kron(a, b)``: the einsum of every pair of elements, reshaped."""
    subs, sa, sb, shape = P.product_spec("kron", a, b, 0)
    return P.reshape(P.einsum(subs, (P.reshape(a, sa), P.reshape(b, sb))), shape)


def np_outer(a, b):
    """``np.outer(a, b)`` (of the flattened arrays)."""
    return P.expand_dims(P.reshape(a, -1), 1) * P.expand_dims(P.reshape(b, -1), 0)


def np_trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """``np.trace`` and ``a.trace``."""
    return P.reduce_sum(P.diagonal(a, offset, axis1, axis2), -1, False, dtype)


# Reductions and statistics --------------------------------------------------------------------


def as_array(a):
    """A literal list or a tuple (of numbers or arrays) as NumPy's array of it."""
    if isinstance(a, (tuple, list)):
        return np_array(a)
    return a


def np_cumsum(a, axis=None, dtype=None):
    """``np.cumsum`` and ``a.cumsum`` (``axis`` None flattens).

    With `dtype`, the sums are of that dtype, as NumPy's: integers narrower than int64 wrap
    around (the int64 sums cast back: the same, modulo their range), booleans are ``or``.
    """
    if isinstance(axis, tuple):
        raise TypeError("'tuple' object cannot be interpreted as an integer")
    a = as_array(a)
    if dtype is not None:
        a = P.astype(a, dtype)
    if axis is None:
        s = P.cumsum(P.reshape(a, -1), 0, False)
    else:
        s = P.cumsum(a, axis, False)
    if dtype is not None:
        return P.astype(s, dtype)
    return s


def np_cumprod(a, axis=None, dtype=None):
    """``np.cumprod`` and ``a.cumprod``: its gradient is exact with zeros (no division)."""
    if isinstance(axis, tuple):
        raise TypeError("'tuple' object cannot be interpreted as an integer")
    a = as_array(a)
    if dtype is None:  # NumPy's: that of the product (small integers and bools as int64)
        dtype = P.dtype_of(P.reduce_prod(a, None, False, None))
    a = P.astype(a, dtype)
    if axis is None:
        flat = P.reshape(a, -1)
        return P.exclusive_cumprod(flat, 0, False) * flat
    return P.exclusive_cumprod(a, axis, False) * a


# Sorting --------------------------------------------------------------------------------------


def np_argsort(a, axis=-1, kind=None):
    """``np.argsort`` and ``a.argsort`` (stable; ``axis`` None flattens)."""
    if axis is None:
        return P.argsort(P.reshape(a, -1), 0)
    return P.argsort(a, axis)


def np_sort(a, axis=-1, kind=None):
    """``np.sort`` (``axis`` None flattens); its gradient goes back through the permutation."""
    if axis is None:
        flat = P.reshape(a, -1)
        return P.take_along_axis(flat, P.argsort(flat, 0), 0)
    return P.take_along_axis(a, P.argsort(a, axis), axis)


def np_searchsorted(a, v, side="left", sorter=None):
    """``np.searchsorted(a, v, side)`` (no ``sorter``; no derivative)."""
    if side == "right":
        return P.searchsorted(a, v, True)
    return P.searchsorted(a, v, False)


def np_take_along_axis(arr, indices, axis):
    """``np.take_along_axis(arr, indices, axis)`` (``axis`` an int)."""
    return P.take_along_axis(arr, indices, axis)


# Elementwise ----------------------------------------------------------------------------------


def np_square(x):
    """``np.square`` (of booleans: int8, as NumPy, which has no boolean loop)."""
    if P.dtype_of(x) == np.bool_:
        x = P.astype(x, np.int8)
    return x * x


def np_logaddexp(x, y):
    """``np.logaddexp``: ``log(exp(x) + exp(y))`` without overflow.

    Integers and booleans are computed in float64, rounded to the float NumPy's math
    functions give them (float16 for int8 and bool), as NumPy does.
    """
    if not np.issubdtype(P.dtype_of(x + y), np.inexact):
        dt = P.dtype_of(P.atan2(x, y))
        return P.astype(np_logaddexp(P.astype(x, np.float64), P.astype(y, np.float64)), dt)
    ge = x >= y
    hi = P.where(ge, x, y)
    lo = P.where(ge, y, x)
    return hi + P.log1p(P.exp(lo - hi))


def np_sinc(x):
    """``np.sinc``: ``sin(pi x) / (pi x)``, 1 at 0 (where its derivative, 0, is exact)."""
    zero = x == 0
    t = 3.141592653589793 * P.where(zero, 1.0, x)
    return P.where(zero, 1.0, P.sin(t) / t)


def np_trunc(x):
    """``np.trunc``: rounds towards zero (no derivative)."""
    return P.where(x < 0, P.ceil(x), P.floor(x))


# Creation and shapes --------------------------------------------------------------------------


def np_eye(N, M=None, k=0, dtype=None):
    """``np.eye``."""
    return P.eye(N, M, k, dtype)


def np_identity(n, dtype=None):
    """``np.identity``."""
    return P.eye(n, None, 0, dtype)


def np_diag(v, k=0):
    """``np.diag``: the diagonal of a matrix, or the matrix of a vector's diagonal."""
    if P.ndim(v) == 1:
        n = P.shape(v)[0] + abs(k)
        return P.undiagonal(v, P.zeros((n, n), P.dtype_of(v)), k, 0, 1)
    return P.diagonal(v, k, 0, 1)


def np_diagonal(a, offset=0, axis1=0, axis2=1):
    """``np.diagonal`` and ``a.diagonal``."""
    return P.diagonal(a, offset, axis1, axis2)


def np_tril(m, k=0):
    """``np.tril``."""
    return P.tril(m, k)


def np_triu(m, k=0):
    """``np.triu``."""
    return P.triu(m, k)


def np_array(object, dtype=None, copy=True, ndmin=0):
    """``np.array`` of an array, a scalar, or a (nested) list or tuple of them (stacked).

    An empty list is an empty vector (float64 unless `dtype` says otherwise), as NumPy's.
    """
    if isinstance(object, list) and not P.known(len(object)):
        # A list of a length known at run time (a literal list is read as a tuple): its
        # elements have one type, and are stacked.
        out = P.stack_list([np_array(x) for x in object], 0)
    elif isinstance(object, (tuple, list)):
        if len(object) == 0:
            return P.zeros((0,), "float64" if dtype is None else dtype)
        # A literal list among arrays (``np.array([a, [1.0, 2.0]])``) is the array NumPy
        # makes of it, promoted with the others.
        out = P.stack(tuple(np_array(r) if isinstance(r, (tuple, list)) else r for r in object), 0)
    else:
        out = P.astype(object, P.dtype_of(object)) if dtype is None else object
    if dtype is None:
        return out
    return P.astype(out, dtype)


def np_meshgrid(*xi, indexing="xy"):
    """``np.meshgrid`` of two or three vectors (``indexing`` "xy" or "ij")."""
    if len(xi) == 2:
        x, y = xi
        if indexing == "xy":
            shape = (P.shape(y)[0], P.shape(x)[0])
            return (
                P.broadcast_to(P.expand_dims(x, 0), shape),
                P.broadcast_to(P.expand_dims(y, 1), shape),
            )
        shape = (P.shape(x)[0], P.shape(y)[0])
        return P.broadcast_to(P.expand_dims(x, 1), shape), P.broadcast_to(
            P.expand_dims(y, 0), shape
        )
    x, y, z = xi
    if indexing == "xy":
        shape = (P.shape(y)[0], P.shape(x)[0], P.shape(z)[0])
        return (
            P.broadcast_to(P.reshape(x, (1, -1, 1)), shape),
            P.broadcast_to(P.reshape(y, (-1, 1, 1)), shape),
            P.broadcast_to(P.reshape(z, (1, 1, -1)), shape),
        )
    shape = (P.shape(x)[0], P.shape(y)[0], P.shape(z)[0])
    return (
        P.broadcast_to(P.reshape(x, (-1, 1, 1)), shape),
        P.broadcast_to(P.reshape(y, (1, -1, 1)), shape),
        P.broadcast_to(P.reshape(z, (1, 1, -1)), shape),
    )


def np_tile(A, reps):
    """``np.tile(A, reps)``."""
    return P.tile(A, reps)


def np_repeat(a, repeats, axis=None):
    """``np.repeat`` and ``a.repeat`` (`repeats` known at compile time)."""
    return P.repeat(a, repeats, axis)


def np_pad(array, pad_width, mode="constant", constant_values=0):
    """``np.pad``, mode "constant" (a scalar value), "edge", "reflect", "symmetric" or "wrap"."""
    return P.pad(array, pad_width, mode, constant_values)


def np_broadcast_to(array, shape):
    """``np.broadcast_to``."""
    return P.broadcast_to(array, shape)


def np_broadcast_arrays(*args):
    """``np.broadcast_arrays(*args)``: a tuple of the arrays broadcast to their common shape."""
    shape = P.shape(_broadcast_sum(args))  # (known at compile time: the sum is not computed)
    return _broadcast_each(args, shape)


def _broadcast_sum(xs):
    if len(xs) == 1:
        return P.astype(xs[0], np.float64)
    return P.astype(xs[0], np.float64) + _broadcast_sum(xs[1:])


def _broadcast_each(xs, shape):
    if len(xs) == 0:
        return ()
    return (P.broadcast_to(xs[0], shape),) + _broadcast_each(xs[1:], shape)


# Shorthands ------------------------------------------------------------------------------------

_LN2 = 0.6931471805599453


def np_exp2(x):
    """``np.exp2`` (of integers and booleans: computed in float64, in the float of ``np.exp``)."""
    if not np.issubdtype(P.dtype_of(x), np.inexact):
        return P.astype(P.exp(P.astype(x, np.float64) * _LN2), P.dtype_of(P.exp(x)))
    return P.exp(x * _LN2)


def np_logaddexp2(x, y):
    """``np.logaddexp2``: ``log2(2**x + 2**y)`` without overflow."""
    return np_logaddexp(x * _LN2, y * _LN2) / _LN2


def np_hypot(x, y):
    """``np.hypot``: ``sqrt(x ** 2 + y ** 2)`` correctly rounded (`number_lib.hypot_float64`).

    Neither overflows nor underflows (``hypot(1e200, 1e200)`` is finite); ``inf`` where either
    is infinite, NaN elsewhere where either is NaN, as C's ``hypot``.
    """
    dt = P.dtype_of(x + y)
    if not np.issubdtype(dt, np.inexact):
        # Integers and booleans: computed in float64, rounded to the float NumPy's math
        # functions give them (float16 for int8 and bool, as np.arctan2), as NumPy does.
        dt = P.dtype_of(P.atan2(x, y))
        return P.astype(hypot_float64(P.astype(x, np.float64), P.astype(y, np.float64)), dt)
    if dt != np.float64:  # float32, float16: the float64 result rounded, as C's ``hypotf``
        return P.astype(hypot_float64(P.astype(x, np.float64), P.astype(y, np.float64)), dt)
    return hypot_float64(x, y)


def np_ptp(a, axis=None, keepdims=False):
    """``np.ptp``: the range of the values."""
    a = as_array(a)
    return P.reduce_max(a, axis, keepdims) - P.reduce_min(a, axis, keepdims)


def np_average(a, axis=None, weights=None):
    """``np.average``: `weights` of the shape of `a`, or 1-D along an int `axis`, as NumPy.

    (1-D weights were broadcast against `a`'s last axis whatever `axis`: a wrong average, or
    one over all of `a` divided by the sum of the weights alone.)
    """
    a = as_array(a)
    if weights is None:
        return P.reduce_mean(a, axis, False, None)
    if P.shape(weights) != P.shape(a):
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if not isinstance(axis, int):
            raise NotImplementedError("np.average: weights not of a's shape need an int axis")
        if P.ndim(weights) != 1 or P.shape(weights)[0] != P.shape(a)[axis]:
            raise ValueError(
                "Shape of weights must be consistent with shape of a along specified axis."
            )
        # The weights along `axis`, the same for every other index.
        moved = P.shape(P.moveaxis(a, axis, -1))
        weights = P.moveaxis(P.broadcast_to(weights, moved), -1, axis)
    return P.reduce_sum(a * weights, axis, False, None) / P.reduce_sum(weights, axis, False, None)


def np_empty_like(prototype, dtype=None):
    """``np.empty_like``: zeros (Myia's arrays are never uninitialized)."""
    return P.zeros_like(prototype, dtype)


def np_ravel(a, order="C"):
    """``np.ravel`` (``order="F"``: column by column)."""
    return reshape_in_order(a, -1, order)


def np_atleast_2d(a):
    """``np.atleast_2d`` of one array."""
    if P.ndim(a) == 0:
        return P.reshape(a, (1, 1))
    if P.ndim(a) == 1:
        return P.expand_dims(a, 0)
    return a


def np_hstack(tup):
    """``np.hstack`` of a tuple of arrays (scalars are vectors of one element), or a list."""
    tup = _rows(tup)
    if isinstance(tup, list):
        parts = [_at_least_1d(a) for a in tup]
        return P.concatenate_list(parts, 0 if P.ndim(P.stack_list(parts, 0)) == 2 else 1)
    tup = _each_at_least_1d(tup)
    if P.ndim(tup[0]) == 1:
        return P.concatenate(tup, 0)
    return P.concatenate(tup, 1)


def _rows(tup):
    # NumPy's stacking functions iterate their argument: an array is the tuple of its rows;
    # a literal list among the arrays (read as a tuple) is the array NumPy makes of it.
    if isinstance(tup, tuple):
        return tuple(np_array(r) if isinstance(r, tuple) else r for r in tup)
    if isinstance(tup, list):
        return tup
    return tuple(tup[i] for i in range(P.shape(tup)[0]))


def _at_least_1d(a):
    if P.ndim(a) == 0:
        return P.reshape(a, (1,))
    return a


def _each_at_least_1d(tup):
    if len(tup) == 0:
        return ()
    return (_at_least_1d(tup[0]),) + _each_at_least_1d(tup[1:])


def _each_at_least_2d(tup):
    if len(tup) == 0:
        return ()
    return (np_atleast_2d(tup[0]),) + _each_at_least_2d(tup[1:])


def _column(a):
    """A column of ``np.column_stack``: a vector (or a scalar) as one column."""
    if P.ndim(a) < 2:
        return P.reshape(a, (-1, 1))
    return a


def _each_column(tup):
    if len(tup) == 0:
        return ()
    return (_column(tup[0]),) + _each_column(tup[1:])


def np_array_split(ary, indices_or_sections, axis=0):
    """``np.array_split``: as ``np.split``, and `n` sections need not divide the axis."""
    return P.sections_as_list(P.split(ary, indices_or_sections, axis, False))


def np_hsplit(ary, indices_or_sections):
    """``np.hsplit``: ``np.split`` along the second axis (the first of a vector)."""
    if P.ndim(ary) == 1:
        return P.sections_as_list(P.split(ary, indices_or_sections, 0))
    return P.sections_as_list(P.split(ary, indices_or_sections, 1))


def np_vsplit(ary, indices_or_sections):
    """``np.vsplit``: ``np.split`` along the first axis (of 2 or more dimensions)."""
    if P.ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return P.sections_as_list(P.split(ary, indices_or_sections, 0))


def np_dsplit(ary, indices_or_sections):
    """``np.dsplit``: ``np.split`` along the third axis (of 3 or more dimensions)."""
    if P.ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return P.sections_as_list(P.split(ary, indices_or_sections, 2))


def np_vstack(tup):
    """``np.vstack`` of a tuple of arrays, or a list: vectors (and scalars) are rows."""
    tup = _rows(tup)
    if isinstance(tup, list):
        return P.concatenate_list([np_atleast_2d(a) for a in tup], 0)
    return P.concatenate(_each_at_least_2d(tup), 0)


def np_column_stack(tup):
    """``np.column_stack`` of a tuple of arrays, or a list: vectors (and scalars) are columns."""
    tup = _rows(tup)
    if isinstance(tup, list):
        return P.concatenate_list([_column(a) for a in tup], 1)
    return P.concatenate(_each_column(tup), 1)


def np_vdot(a, b):
    """``np.vdot`` of real arrays."""
    return P.reduce_sum(P.reshape(a, -1) * P.reshape(b, -1), None, False, None)


def np_inner(a, b):
    """``np.inner``: the sums of products over the last axes of `a` and `b` (a scalar scales)."""
    if P.ndim(a) == 0 or P.ndim(b) == 0:
        return a * b
    if P.ndim(b) == 1:
        return P.dot(a, b)
    return P.dot(a, P.moveaxis(b, -1, -2))


def np_flip(m, axis=None):
    """``np.flip``."""
    return P.flip(m, axis)


def np_roll(a, shift, axis=None):
    """``np.roll`` (an int or a tuple of shifts)."""
    return P.roll(a, shift, axis)


def np_diff(a, n=1, axis=-1, prepend=None, append=None):
    """``np.diff``: the `n`-th differences along `axis` (`n` known at compile time).

    NumPy's repeated differences ``d[i + 1] - d[i]`` (``!=`` of booleans), `n` times (a loop
    unrolled), so that floats round as NumPy's (a sum of binomial terms would cancel large
    values) and integers wrap around in their dtype. `prepend` and `append` (scalars are
    broadcast) are joined to `a` first.
    """
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    if prepend is not None:
        a = P.concatenate((_diff_edge(prepend, a, axis), a), axis)
    if append is not None:
        a = P.concatenate((a, _diff_edge(append, a, axis)), axis)
    boolean = P.dtype_of(a) == np.bool_
    for _ in P.range_tuple(0, n, 1):  # (a tuple of constants: each round has its shape)
        m = P.shape(a)[axis] - 1
        idx = P.arange(0, m if m > 0 else 0, None, None)
        hi = P.take(a, idx + 1, axis)
        lo = P.take(a, idx, axis)
        a = (hi != lo) if boolean else hi - lo
    return a


def _diff_edge(v, a, axis):
    """`np.diff`'s `prepend` or `append`: a scalar broadcast to `a`'s shape, 1 along `axis`."""
    if P.ndim(v) == 0:
        ax = axis % P.ndim(a)
        return P.broadcast_to(v, P.shape(a)[:ax] + (1,) + P.shape(a)[ax + 1 :])
    return v


def np_moveaxis(a, source, destination):
    """``np.moveaxis``."""
    return P.moveaxis(a, source, destination)


def np_rint(x):
    """``np.rint`` (no derivative)."""
    return P.rint(x)


def np_round(a, decimals=0):
    """``np.round`` and ``np.around`` (halves to even; no derivative).

    Integers stay integers of their dtype, as in NumPy: themselves, or with negative
    `decimals` the nearest multiple of ``10 ** -decimals``.
    """
    if np.issubdtype(P.dtype_of(a), np.integer):
        if decimals >= 0:
            return a + P.zeros((), P.dtype_of(a))  # (a Python int: a NumPy integer, as NumPy)
        m = 10 ** (-decimals)
        return P.astype(P.rint(a / m) * m, P.dtype_of(a))
    if decimals == 0:
        return P.rint(a)
    # NumPy's own: a * 10 ** d rounded, then divided by 10 ** d; a negative d divides first,
    # then multiplies (10 ** -2 is no float: 0.01 is not a hundredth).
    if decimals > 0:
        scale = _power_of_ten(decimals)
        return P.rint(a * scale) / scale
    scale = _power_of_ten(-decimals)
    return P.rint(a / scale) * scale


def _power_of_ten(n):
    """``10.0 ** n`` as NumPy's ``np.round`` computes it (`_POWERS_OF_TEN`).

    Past ``1e8``, ``1e9 * 10.0 * ... * 10.0``, rounded at each product; inf from 309 on.
    """
    return _POWERS_OF_TEN[P.minimum(n, 309)]


def _numpy_powers_of_ten() -> tuple[float, ...]:
    """NumPy's ``power_of_ten(n)`` (multiarray/calculation.c) for n from 0 to 309."""
    powers = [10.0**k for k in range(9)]
    p = 1e9
    for _ in range(9, 310):
        powers.append(p)
        with np.errstate(over="ignore"):
            p = float(np.float64(p) * 10.0)
    return tuple(powers)


_POWERS_OF_TEN = _numpy_powers_of_ten()


# scipy.special ----------------------------------------------------------------------------------


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``scipy.special.logsumexp(a, axis, keepdims=...)`` without overflow (`b` unsupported)."""
    m = P.stop_gradient(P.reduce_max(a, axis, True))
    out = P.log(P.reduce_sum(P.exp(a - m), axis, True, None)) + m
    if keepdims:
        return out
    if axis is None:
        return P.reshape(out, ())
    return P.squeeze(out, axis)


def expit(x):
    """``scipy.special.expit``: the logistic sigmoid."""
    return 0.5 * (P.tanh(0.5 * x) + 1.0)


def logit(x):
    """``scipy.special.logit``: ``log(x / (1 - x))``."""
    return P.log(x) - P.log1p(-x)


def scipy_number(x):
    """SciPy's argument: a Python number is a NumPy float64 (SciPy's functions return one).

    So ``scipy.special.gammaln(0.0)`` is ``inf``, as in SciPy, where ``math.lgamma(0.0)``
    (the same primitive on a Python float) raises.
    """
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        return x
    return P.astype(x, "float64")


def scipy_special(prim):
    """``scipy.special``'s function computing `prim` elementwise."""

    def special(x):
        return prim(scipy_number(x))

    return special


def scipy_polygamma(n, x):
    """``scipy.special.polygamma(n, x)``."""
    return P.polygamma(n, scipy_number(x))


def log_softmax(x, axis=None):
    """``scipy.special.log_softmax``."""
    return x - logsumexp(x, axis, None, True)


def softmax(x, axis=None):
    """``scipy.special.softmax``."""
    return P.exp(log_softmax(x, axis))


# What NumPy's and SciPy's functions mean in Myia code -----------------------------------------

# A literal list as their first argument is read as a tuple (its length is known).
for _fn in (np_array, np_hstack, np_vstack, np_column_stack, np_cumsum, np_cumprod):
    _fn.sequence_argument = True  # type: ignore[attr-defined]
for _fn in (np_ptp, np_average):
    _fn.sequence_argument = True  # type: ignore[attr-defined]
# ``np.tensordot(a, b, axes=[[1], [0]])``, ``np.pad(x, [(1, 1), (0, 2)])``: known pairs.
np_tensordot.sequence_argument = (2,)  # type: ignore[attr-defined]
np_pad.sequence_argument = (1,)  # type: ignore[attr-defined]


MAPPING: dict[Any, Any] = {
    **LINALG,
    **UFUNC_METHODS,
    np.outer: np_outer,
    np.tensordot: np_tensordot,
    np.kron: np_kron,
    np.trace: np_trace,
    np.cumsum: np_cumsum,
    np.argsort: np_argsort,
    np.sort: np_sort,
    np.take_along_axis: np_take_along_axis,
    np.square: np_square,
    np.logaddexp: np_logaddexp,
    np.trunc: np_trunc,
    np.eye: np_eye,
    np.identity: np_identity,
    np.diag: np_diag,
    np.diagonal: np_diagonal,
    np.tril: np_tril,
    np.triu: np_triu,
    np.broadcast_to: np_broadcast_to,
    np.broadcast_arrays: np_broadcast_arrays,
    np.tile: np_tile,
    np.meshgrid: np_meshgrid,
    np.cumprod: np_cumprod,
    np.sinc: np_sinc,
    np.searchsorted: np_searchsorted,
    np.array: np_array,
    np.asarray: np_array,  # (a value is never changed in place: a copy is no different)
    np.repeat: np_repeat,
    np.pad: np_pad,
    np.log2: P.log2,
    np.log10: P.log10,
    np.exp2: np_exp2,
    np.logaddexp2: np_logaddexp2,
    np.hypot: np_hypot,
    np.ptp: np_ptp,
    np.average: np_average,
    np.empty_like: np_empty_like,
    np.ravel: np_ravel,
    np.atleast_2d: np_atleast_2d,
    np.hstack: np_hstack,
    np.vstack: np_vstack,
    np.column_stack: np_column_stack,
    np.array_split: np_array_split,
    np.hsplit: np_hsplit,
    np.vsplit: np_vsplit,
    np.dsplit: np_dsplit,
    np.vdot: np_vdot,
    np.inner: np_inner,
    np.flip: np_flip,
    np.roll: np_roll,
    np.diff: np_diff,
    np.moveaxis: np_moveaxis,
    np.rint: np_rint,
    np.round: np_round,
    np.around: np_round,
}

#: What SciPy's functions mean in Myia code, by module and name. `mapping.lookup` reads a
#: module's once it is imported (no function of it can be referred to before): ``import myia``
#: imports no SciPy.
SCIPY: dict[str, dict[str, Any]] = {
    "scipy.linalg": {
        "solve_triangular": solve_triangular,
        "cho_solve": cho_solve,
        "cho_factor": cho_factor,
        "cholesky": scipy_cholesky,
    },
    "scipy.special": {
        "logsumexp": logsumexp,
        "expit": expit,
        "logit": logit,
        "softmax": softmax,
        "log_softmax": log_softmax,
        "erf": scipy_special(P.erf),
        "erfc": scipy_special(P.erfc),
        "gammaln": scipy_special(P.gammaln),
        "digamma": scipy_special(P.digamma),
        "polygamma": scipy_polygamma,
    },
}

_EIG = (
    "the dtype of its result depends on the values (NumPy returns complex arrays where a real "
    "matrix has complex eigenvalues, real ones otherwise), and Myia knows dtypes at compile "
    "time: for a symmetric (or Hermitian) matrix, use np.linalg."
)

#: NumPy functions refused in Myia code, with the reason (and what to use instead).
REFUSED: dict[Any, str] = {
    np.unique: "the shape of its result depends on the values (the number of distinct "
    "ones), and shapes are known at compile time: sort with np.sort, or compare values with "
    "a known set of candidates",
    np.nonzero: "the shape of its result depends on the values: use np.where(condition, x, y) "
    "or a mask (x * condition)",
    np.argwhere: "the shape of its result depends on the values: use np.where(condition, x, y) "
    "or a mask (x * condition)",
    np.flatnonzero: "the shape of its result depends on the values: use np.where(condition, "
    "x, y) or a mask (x * condition)",
    np.linalg.eig: _EIG + "eigh",
    np.linalg.eigvals: _EIG + "eigvalsh",
}

METHODS: dict[str, Any] = {
    "cumsum": np_cumsum,
    "any": np_any,
    "all": np_all,
    "argsort": np_argsort,
    "trace": np_trace,
    "diagonal": np_diagonal,
    "ptp": np_ptp,
    "round": np_round,
    "repeat": np_repeat,
    "cumprod": np_cumprod,
}

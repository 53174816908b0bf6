"""NumPy's functions that turn, flip, join and select arrays, in Myia's Python subset.

``np.flipud``, ``np.fliplr``, ``np.rot90``, ``np.rollaxis``, ``np.atleast_1d``,
``np.atleast_3d``, ``np.append``, ``np.select``, ``np.r_``, ``np.c_``, ``np.dstack``,
``np.matrix_transpose``, ``np.linalg.multi_dot`` and ``np.einsum`` (its interleaved form too),
written with primitives (``flip``,
``swapaxes``, ``moveaxis``, ``reshape``, ``concatenate``, ``where``): their gradients are
exact. `MAPPING` says what the NumPy names mean; `mapping.py` merges it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..primitives import P
from .core import NoMatch, Operation
from .numpy_extra import as_array
from .ops import refuse

# Turns and flips --------------------------------------------------------------------------------


def np_flipud(m):
    """``np.flipud``: the rows in reverse order."""
    if P.ndim(m) < 1:
        raise ValueError("Input must be >= 1-d.")
    return P.flip(m, 0)


def np_fliplr(m):
    """``np.fliplr``: the columns in reverse order."""
    if P.ndim(m) < 2:
        raise ValueError("Input must be >= 2-d.")
    return P.flip(m, 1)


def np_rot90(m, k=1, axes=(0, 1)):
    """``np.rot90``: `k` quarter turns from the first of `axes` towards the second."""
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    k = k % 4
    if k == 0:
        return m
    if k == 2:
        return P.flip(m, axes)
    if k == 1:
        return P.swapaxes(P.flip(m, axes[1]), axes[0], axes[1])
    return P.flip(P.swapaxes(m, axes[0], axes[1]), axes[1])


def np_append(arr, values, axis=None):
    """``np.append``: `values` after `arr`, both flattened (`axis` None) or along `axis`."""
    arr, values = as_array(arr), as_array(values)
    if axis is None:
        return P.concatenate((P.reshape(arr, -1), P.reshape(values, -1)), 0)
    return P.concatenate((arr, values), axis)


def np_rollaxis(a, axis, start=0):
    """``np.rollaxis``: `axis` moved to before position `start`."""
    n = P.ndim(a)
    if not -n <= axis < n:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {n}")
    if not -n <= start <= n:
        raise np.exceptions.AxisError(
            f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in"
        )
    axis = axis % n
    if start < 0:
        start = start + n
    if axis < start:
        start = start - 1
    if axis == start:
        return a
    return P.moveaxis(a, axis, start)


# At least so many dimensions --------------------------------------------------------------------


def np_atleast_1d(a):
    """``np.atleast_1d`` of one array: a scalar is a vector of one element."""
    if P.ndim(a) == 0:
        return P.reshape(a, (1,))
    return a


def np_atleast_3d(a):
    """``np.atleast_3d`` of one array: (N,) is (1, N, 1), (M, N) is (M, N, 1)."""
    if P.ndim(a) == 0:
        return P.reshape(a, (1, 1, 1))
    if P.ndim(a) == 1:
        return P.reshape(a, (1, P.shape(a)[0], 1))
    if P.ndim(a) == 2:
        return P.expand_dims(a, 2)
    return a


# Joining and selecting --------------------------------------------------------------------------


def np_select(condlist, choicelist, default=0):
    """``np.select``: where the first true condition is, its choice; elsewhere `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if isinstance(condlist, list) or isinstance(choicelist, list):
        # Lists whose length is known at run time: a loop, from the last condition back.
        n = len(condlist)
        if n == 0:
            raise ValueError("select with an empty condition list is not possible")
        out = P.where(condlist[n - 1], choicelist[n - 1], default)
        i = n - 2
        while i >= 0:
            out = P.where(condlist[i], choicelist[i], out)
            i = i - 1
        return out
    return _select(condlist, choicelist, default)


def _select(condlist, choicelist, default):
    if len(condlist) == 0:
        return default
    rest = _select(condlist[1:], choicelist[1:], default)
    return P.where(condlist[0], choicelist[0], rest)


@dataclass(frozen=True)
class RowConcat:
    """``np.r_[a, b, ...]``: the items concatenated along the first axis.

    A number is a vector of one element. Slices (``np.r_[0:5]``) and directives
    (``np.r_['0,2', ...]``) are refused: ``np.arange``, ``np.concatenate``.
    """

    def __getitem__(self, items):
        return P.concatenate(_vectors(items if isinstance(items, tuple) else (items,)), 0)


@dataclass(frozen=True)
class ColumnConcat:
    """``np.c_[a, b, ...]``: the items concatenated along the last axis.

    A vector (or a number) is a column; slices and directives are refused as by ``np.r_``.
    """

    def __getitem__(self, items):
        parts = _columns(items if isinstance(items, tuple) else (items,))
        return P.concatenate(parts, P.ndim(parts[0]) - 1)


def _index_item(a, columns):
    if isinstance(a, (slice, str)):
        if columns:
            refuse("np.c_ takes arrays and numbers (np.c_[a, b]), not slices or directives")
        refuse(
            "np.r_ takes arrays and numbers (np.r_[a, b]), not slices (np.arange) or "
            "directives (np.concatenate)"
        )
    return as_array(a)


def _vectors(items):
    if len(items) == 0:
        return ()
    a = _index_item(items[0], False)
    return (P.reshape(a, (1,)) if P.ndim(a) == 0 else a,) + _vectors(items[1:])


def _columns(items):
    if len(items) == 0:
        return ()
    a = _index_item(items[0], True)
    return (P.reshape(a, (-1, 1)) if P.ndim(a) < 2 else a,) + _columns(items[1:])


def np_einsum(subscripts, *operands, optimize=False):
    """``np.einsum(subscripts, *operands)``: any subscripts, ellipsis included.

    (`optimize` chooses NumPy's order of the contractions: the backend chooses its own.)
    """
    return P.einsum(subscripts, _arrays(operands))


def np_dstack(tup):
    """``np.dstack`` of a tuple of arrays: joined along their third axis (`np.atleast_3d`)."""
    return P.concatenate(_each_at_least_3d(tuple(tup)), 2)


def _each_at_least_3d(tup):
    if len(tup) == 0:
        return ()
    return (np_atleast_3d(as_array(tup[0])),) + _each_at_least_3d(tup[1:])


def np_matrix_transpose(x):
    """``np.matrix_transpose`` and ``np.linalg.matrix_transpose``: the last two axes swapped."""
    if P.ndim(x) < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return P.swapaxes(x, -1, -2)


def np_multi_dot(arrays):
    """``np.linalg.multi_dot``: the products from left to right.

    A first vector is a row and a last one a column, as in ``np.dot``.
    """
    out = arrays[0]
    for a in arrays[1:]:
        out = P.dot(out, a)
    return out


np_dstack.sequence_argument = True  # type: ignore[attr-defined]
np_multi_dot.sequence_argument = True  # type: ignore[attr-defined]


def _arrays(xs):
    if len(xs) == 0:
        return ()
    return (as_array(xs[0]),) + _arrays(xs[1:])


# ``np.einsum(a, [0, 1], b, [1, 2], [0, 2])``: each operand followed by its sublist (a list of
# ints written in the call, known at compile time), and the output's last, if given.


def einsum_1(a, sa):
    return P.einsum(P.einsum_subscripts((sa,), None), (as_array(a),))


def einsum_1_out(a, sa, out):
    return P.einsum(P.einsum_subscripts((sa,), out), (as_array(a),))


def einsum_2(a, sa, b, sb):
    return P.einsum(P.einsum_subscripts((sa, sb), None), (as_array(a), as_array(b)))


def einsum_2_out(a, sa, b, sb, out):
    return P.einsum(P.einsum_subscripts((sa, sb), out), (as_array(a), as_array(b)))


def einsum_3(a, sa, b, sb, c, sc):
    subs = P.einsum_subscripts((sa, sb, sc), None)
    return P.einsum(subs, (as_array(a), as_array(b), as_array(c)))


def einsum_3_out(a, sa, b, sb, c, sc, out):
    subs = P.einsum_subscripts((sa, sb, sc), out)
    return P.einsum(subs, (as_array(a), as_array(b), as_array(c)))


_INTERLEAVED = (einsum_1, einsum_1_out, einsum_2, einsum_2_out, einsum_3, einsum_3_out)


def _einsum(first: Any, *rest: Any) -> Any:
    """``np.einsum``: with subscripts (a string), or interleaved (up to three operands)."""
    if first is str:
        return np_einsum
    if 2 <= len(rest) + 1 <= 7:
        return _INTERLEAVED[len(rest) - 1]
    raise NoMatch(
        "np.einsum takes subscripts (a string) and operands, or up to three operands each "
        "followed by a list of ints (np.einsum(a, [0, 1], b, [1, 2], [0, 2]))"
    )


einsum_op = Operation("einsum", _einsum, "NumPy's ``einsum``.")


np_append.sequence_argument = (0, 1)  # type: ignore[attr-defined]
np_select.sequence_argument = (0, 1)  # type: ignore[attr-defined]

MAPPING: dict[Any, Any] = {
    **({np.matrix_transpose: np_matrix_transpose} if hasattr(np, "matrix_transpose") else {}),
    np.flipud: np_flipud,
    np.fliplr: np_fliplr,
    np.rot90: np_rot90,
    np.rollaxis: np_rollaxis,
    np.atleast_1d: np_atleast_1d,
    np.atleast_3d: np_atleast_3d,
    np.append: np_append,
    np.select: np_select,
    np.einsum: einsum_op,
    np.dstack: np_dstack,
    np.linalg.multi_dot: np_multi_dot,
    np.linalg.matrix_transpose: np_matrix_transpose,
    np.r_: RowConcat(),
    np.c_: ColumnConcat(),
}

"""The compiled loop that runs a function once per example, written in Myia's Python subset.

`vmap_loop` is what the batching transform (`myia.grad.batching`) calls where it has no batched
form: for one primitive without a batching rule (``vmap_loop(prim, axes, args)``), or for a
whole function whose control flow it cannot batch. Arguments are batched on axis 0 (axes 0)
or not (None); the results of the examples are stacked on axis 0.
"""

from __future__ import annotations

import numpy as np

from ..operations.ops import is_record_
from ..primitives import P


def _is_record(x):
    return is_record_(x)


def _slice(a, ax, i):
    """Slice `i` of argument `a` along its batch axis `ax` (0), or `a` unbatched (None)."""
    if ax is None or a is None or isinstance(a, slice) or a is Ellipsis:
        return a  # (an index's slices are every example's: ``x[:, i]``)
    if isinstance(a, tuple) and not _is_record(a):
        return _slice_tuple(a, i)
    if isinstance(a, dict):
        return P.dict_from_values(a, _slice_tuple(P.dict_values(a), i))
    if _is_record(a):
        return P.record_from_fields(a, _slice_tuple(P.record_fields(a), i))
    return a[i]


def _slice_tuple(xs, i):
    if len(xs) == 0:
        return ()
    return (_slice(xs[0], 0, i),) + _slice_tuple(xs[1:], i)


def _slice_args(args, axes, i):
    if len(args) == 0:
        return ()
    return (_slice(args[0], axes[0], i),) + _slice_args(args[1:], axes[1:], i)


def _batch_of(y, n):
    """Zeros for `n` results like `y` (an array or a scalar of any dtype), the batch first."""
    return np.zeros((n,) + np.shape(y), dtype=P.dtype_of(y))


def _put(rows, i, y):
    """`rows` with ``y`` at row `i` (which holds zeros)."""
    return P.array_index_add(rows, i, y)


def _put_checked(rows, i, y):
    """`_put`, for results whose shape is known at run time only (``x[x > 0]``).

    Such a shape may differ from one example to the next: it is an error, not broadcast into
    the first example's row.
    """
    if np.shape(y) != np.shape(rows)[1:]:
        raise ValueError(
            "vmap: the examples' results have different shapes (a boolean mask or a slice "
            "selects a different number of elements for some examples)"
        )
    return P.array_index_add(rows, i, y)


def _batch_tree(y, n):
    """`_batch_of` at each leaf of the structure `y`."""
    if y is None:
        return None
    if isinstance(y, tuple) and not _is_record(y):
        return _batch_tuple(y, n)
    if isinstance(y, dict):
        return P.dict_from_values(y, _batch_tuple(P.dict_values(y), n))
    if _is_record(y):
        return P.record_from_fields(y, _batch_tuple(P.record_fields(y), n))
    return _batch_of(y, n)


def _batch_tuple(ys, n):
    if len(ys) == 0:
        return ()
    return (_batch_tree(ys[0], n),) + _batch_tuple(ys[1:], n)


def _put_tree(rows, i, y, put):
    """`put` (`_put`, `_put_checked`) at each leaf of the structures `rows` and `y`."""
    if y is None:
        return None
    if isinstance(y, tuple) and not _is_record(y):
        return _put_tuple(rows, i, y, put)
    if isinstance(y, dict):
        values = _put_tuple(P.dict_values(rows), i, P.dict_values(y), put)
        return P.dict_from_values(rows, values)
    if _is_record(y):
        fields = _put_tuple(P.record_fields(rows), i, P.record_fields(y), put)
        return P.record_from_fields(rows, fields)
    return put(rows, i, y)


def _put_tuple(rows, i, ys, put):
    if len(ys) == 0:
        return ()
    return (_put_tree(rows[0], i, ys[0], put),) + _put_tuple(rows[1:], i, ys[1:], put)


def _loop(f, axes, args, n, put):
    first = f(*_slice_args(args, axes, 0))
    rows = _put_tree(_batch_tree(first, n), 0, first, put)
    i = 1
    while i < n:
        y = f(*_slice_args(args, axes, i))
        rows = _put_tree(rows, i, y, put)
        i = i + 1
    return rows


def vmap_loop(f, axes, args, n):
    """The results of ``f`` on each of the `n` slices of `args` (batch axes `axes`), stacked."""
    return _loop(f, axes, args, n, _put)


def vmap_loop_checked(f, axes, args, n):
    """`vmap_loop` for results whose shapes are known at run time only: they must agree."""
    return _loop(f, axes, args, n, _put_checked)

"""NumPy functions and array methods, written in Myia's Python subset.

These thin wrappers give the NumPy signatures (keyword arguments, defaults, a method's
``self``) to the array primitives; `mapping.py` maps ``np.<name>`` and ``a.<method>`` to them.
Myia parses them like user code, so they cost nothing after optimization.
"""

from __future__ import annotations

import numpy as np

from ..primitives import P
from .ops import refuse
from .scalar_forms import numpy_scalar

# Reductions -----------------------------------------------------------------------------------


def np_sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``np.sum`` and ``a.sum`` (of a list or tuple of numbers or arrays too).

    `initial` is added (in the sum's dtype); `where` masks elements out (as zeros).
    """
    _no_out(out)
    if isinstance(a, (list, tuple)):
        if axis is None and not keepdims and initial is None and where is None:
            return P.reduce_sum(_seq_total(a)[0], None, False, dtype)
        a = _stacked(a)
    if where is not None:
        a = P.where(where, a, P.zeros((), P.dtype_of(a)))
    r = P.reduce_sum(a, axis, keepdims, dtype)
    if initial is None:
        return r
    return r + _initial(initial, P.dtype_of(r))


def _no_out(out):
    # NumPy's `out` writes into an array: refused at the user's line.
    if out is not None:
        refuse(
            "NumPy's out argument is not supported in Myia code (arrays are immutable): "
            "use the result"
        )


def _initial(x, dtype):
    # A reduction's `initial` in its dtype: a Python int is checked as NumPy's promotion
    # checks it (-1 of uint8 raises OverflowError), anything else is cast.
    if _python_number(x) and isinstance(x, int) and not isinstance(x, bool):
        if np.issubdtype(dtype, np.integer):
            return P.zeros((), dtype) + x
    return P.astype(x, dtype)


def _stacked(seq):
    # The array NumPy makes of a tuple (or a literal list) of numbers or arrays of one shape.
    return P.stack(tuple(seq), 0)


def _seq_total(xs):
    # The sum and the count of the elements of a list of numbers or arrays: what np.sum and
    # np.mean of the array NumPy would make of it give (with axis=None).
    total = 0
    n = 0
    for x in xs:
        total = total + P.reduce_sum(x, None, False, None)
        n = n + P.size(x)
    return total, n


def np_prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``np.prod`` and ``a.prod`` (of a tuple or literal list of numbers or arrays too).

    `initial` multiplies (in the product's dtype); `where` masks elements out (as ones).
    """
    _no_out(out)
    if isinstance(a, (list, tuple)):
        a = _stacked(a)
    if where is not None:
        a = P.where(where, a, P.ones((), P.dtype_of(a)))
    r = P.reduce_prod(a, axis, keepdims, dtype)
    if initial is None:
        return r
    return r * _initial(initial, P.dtype_of(r))


def np_mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """``np.mean`` and ``a.mean`` (of a list or tuple of numbers or arrays too).

    With `where`, the mean of the elements kept (NaN where none is, as NumPy's).
    """
    _no_out(out)
    if isinstance(a, (list, tuple)):
        if axis is None and not keepdims and where is None:
            total, n = _seq_total(a)
            return P.reduce_mean(total / n, None, False, dtype)
        a = _stacked(a)
    if where is None:
        return P.reduce_mean(a, axis, keepdims, dtype)
    mean_dtype = P.dtype_of(P.reduce_mean(a, axis, keepdims, dtype))
    sum_dtype = dtype
    if sum_dtype is None and not np.issubdtype(P.dtype_of(a), np.floating):
        sum_dtype = np.float64  # (NumPy's sum of integers and booleans for their mean)
    elif sum_dtype is None and P.dtype_of(a) == np.float16:
        sum_dtype = np.float32
    kept = P.broadcast_to(where, P.shape(a))
    total = P.reduce_sum(P.where(kept, a, P.zeros((), P.dtype_of(a))), axis, keepdims, sum_dtype)
    count = P.reduce_sum(kept, axis, keepdims, None)
    return P.astype(total / count, mean_dtype)


def np_max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """``np.max`` and ``a.max`` (of a tuple or literal list of numbers or arrays too).

    With `initial`, the larger of it and the maximum (`initial` of an empty array); `where`
    masks elements out (it needs `initial`, as NumPy's).
    """
    _no_out(out)
    return _extremum("maximum", a, axis, keepdims, initial, where)


def np_min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """``np.min`` and ``a.min`` (of a tuple or literal list of numbers or arrays too).

    With `initial`, the smaller of it and the minimum (`initial` of an empty array); `where`
    masks elements out (it needs `initial`, as NumPy's).
    """
    _no_out(out)
    return _extremum("minimum", a, axis, keepdims, initial, where)


def _extremum(name, a, axis, keepdims, initial, where):
    """The reduction `name` (``"maximum"``) of `a` along `axis`, `initial` and `where` as NumPy's.

    (`name` is a constant: each branch is the primitive itself, never passed as a value,
    which the forward mode could not transform.)
    """
    if isinstance(a, (list, tuple)):
        a = _stacked(a)
    if initial is None:
        if where is not None:
            raise ValueError(
                "reduction operation '" + name + "' does not have an identity, so to use a "
                "where mask one has to specify 'initial'"
            )
        if name == "maximum":
            return P.reduce_max(a, axis, keepdims)
        return P.reduce_min(a, axis, keepdims)
    init = _initial(initial, P.dtype_of(a))
    if where is not None:
        a = P.where(where, a, init)
    if P.size(a) == 0:  # (every slice empty: NumPy's `initial`)
        return P.full(P.shape(P.reduce_sum(a, axis, keepdims, None)), init, P.dtype_of(a))
    if name == "maximum":
        return P.maximum(P.reduce_max(a, axis, keepdims), init)
    return P.minimum(P.reduce_min(a, axis, keepdims), init)


def np_argmax(a, axis=None, out=None, *, keepdims=False):
    """``np.argmax`` and ``a.argmax`` (of a tuple or literal list too)."""
    _no_out(out)
    if isinstance(a, (list, tuple)):
        a = _stacked(a)
    return P.argmax(a, axis, keepdims)


def np_argmin(a, axis=None, out=None, *, keepdims=False):
    """``np.argmin`` and ``a.argmin`` (of a tuple or literal list too)."""
    _no_out(out)
    if isinstance(a, (list, tuple)):
        a = _stacked(a)
    return P.argmin(a, axis, keepdims)


# Shapes ---------------------------------------------------------------------------------------


def np_reshape(a, shape, order="C"):
    """``np.reshape(a, shape)``, in C's order or Fortran's (``order="F"``)."""
    return reshape_in_order(a, shape, order)


def array_reshape(a, *shape, order="C"):
    """``a.reshape(3, 4)`` or ``a.reshape((3, 4))`` (``order="F"`` too)."""
    if len(shape) == 0:
        refuse("reshape() takes exactly 1 argument (0 given)")  # NumPy's TypeError
    if len(shape) == 1:
        return reshape_in_order(a, shape[0], order)
    return reshape_in_order(a, shape, order)


def array_flatten(a, order="C"):
    """``a.flatten()`` and ``a.ravel()``: a 1-D array (``order="F"``: column by column)."""
    return reshape_in_order(a, -1, order)


def reshape_in_order(a, shape, order):
    """`a` reshaped, its elements read and written in C's order or in Fortran's ("F").

    Fortran's order is C's of the transposes: ``a.T`` reshaped to the reversed shape,
    transposed back. ("A" and "K" depend on the memory layout, which Myia's arrays lack.)
    """
    if order == "C" or order == "c":
        return P.reshape(a, shape)
    if order == "F" or order == "f":
        if isinstance(shape, int):
            return P.transpose(P.reshape(P.transpose(a, None), shape), None)
        return P.transpose(P.reshape(P.transpose(a, None), tuple(shape)[::-1]), None)
    refuse(
        "reshape's order must be 'C' or 'F' in Myia code: 'A' and 'K' depend on the memory "
        "layout of the array, which Myia's arrays do not have"
    )


def np_transpose(a, axes=None):
    """``np.transpose(a, axes)``."""
    return P.transpose(a, axes)


def array_transpose(a, *axes):
    """``a.transpose()``, ``a.transpose(1, 0)`` or ``a.transpose((1, 0))``."""
    return P.transpose(a, axes)


def np_swapaxes(a, axis1, axis2):
    """``np.swapaxes`` and ``a.swapaxes``."""
    return P.swapaxes(a, axis1, axis2)


def np_expand_dims(a, axis):
    """``np.expand_dims(a, axis)``."""
    return P.expand_dims(a, axis)


def np_squeeze(a, axis=None):
    """``np.squeeze`` and ``a.squeeze``."""
    return P.squeeze(a, axis)


# Joining, indexing, selection -----------------------------------------------------------------


def _as_array(x):
    """An element of a sequence of arrays: a literal list (read as a tuple) is NumPy's array."""
    if isinstance(x, tuple):
        if len(x) == 0:
            return P.zeros((0,), "float64")
        return P.stack(tuple(_as_array(r) for r in x), 0)
    return x


def np_concatenate(arrays, axis=0):
    """``np.concatenate`` of a tuple of arrays, or of a list of arrays."""
    if isinstance(arrays, list):
        return P.concatenate_list(arrays, axis)
    return P.concatenate(tuple(_as_array(a) for a in arrays), axis)


def np_stack(arrays, axis=0):
    """``np.stack`` of a tuple of arrays, or of a list of arrays of one shape."""
    if isinstance(arrays, list):
        return P.stack_list(arrays, axis)
    return P.stack(tuple(_as_array(a) for a in arrays), axis)


# Their first argument is a sequence they only read: a literal list there is parsed as a
# tuple (`myia.frontend.parser`), so that ``np.concatenate([a, b])`` takes arrays of
# different shapes and ``np.max([a, b])`` knows its length.
for _fn in (np_concatenate, np_stack, np_sum, np_prod, np_mean, np_max, np_min, np_argmax):
    _fn.sequence_argument = True  # type: ignore[attr-defined]
np_argmin.sequence_argument = True  # type: ignore[attr-defined]


def np_split(a, indices_or_sections, axis=0):
    """``np.split``: a list of arrays (a tuple where their shapes differ)."""
    return P.sections_as_list(P.split(a, indices_or_sections, axis))


def np_take(a, indices, axis=None):
    """``np.take`` and ``a.take``."""
    return P.take(a, indices, axis)


np_take.sequence_argument = (1,)  # type: ignore[attr-defined]  # np.take(x, [2, 0])


def np_where(condition, x, y):
    """``np.where(condition, x, y)`` (the one-argument form has a data-dependent shape).

    Of Python numbers `x` and `y`, NumPy's scalar of them (``np.where(c, 1.5, 2)`` is a
    ``np.float64``), as NumPy makes them arrays.
    """
    if _python_number(x) and _python_number(y):
        return P.where(condition, numpy_scalar(x), numpy_scalar(y))
    return P.where(condition, x, y)


def _python_number(x):
    return isinstance(x, (bool, int, float)) and not isinstance(x, (np.generic, np.ndarray))


def np_clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    """``np.clip`` (the bounds also by NumPy 2's keywords `min` and `max`).

    A Python number `a` is a NumPy scalar first, as NumPy makes it an array: ``np.clip(5, 0, 2)``
    is ``np.int64(2)``, not ``2``. Without bounds, `a` itself.
    """
    _no_out(out)
    if min is not None or max is not None:
        if a_min is not None or a_max is not None:
            raise ValueError(
                "Passing `min` or `max` keyword argument when `a_min` and `a_max` are "
                "provided is forbidden."
            )
        a_min = min
        a_max = max
    return array_clip(a, a_min, a_max)


def array_clip(a, min=None, max=None, out=None):
    """``a.clip(min, max)`` (either may be None; without bounds, `a` itself)."""
    _no_out(out)
    if min is None and max is None:
        return numpy_scalar(a)
    return P.clip(numpy_scalar(a), min, max)


# Products -------------------------------------------------------------------------------------


def np_dot(a, b):
    """``np.dot`` and ``a.dot``."""
    return P.dot(a, b)


def np_matmul(a, b):
    """``np.matmul``."""
    return P.matmul(a, b)


# Creation and conversion ----------------------------------------------------------------------


def np_zeros(shape, dtype=None):
    """``np.zeros``."""
    return P.zeros(shape, dtype)


def np_ones(shape, dtype=None):
    """``np.ones``."""
    return P.ones(shape, dtype)


def np_full(shape, fill_value, dtype=None):
    """``np.full``."""
    return P.full(shape, fill_value, dtype)


def np_zeros_like(a, dtype=None):
    """``np.zeros_like``."""
    return P.zeros_like(a, dtype)


def np_ones_like(a, dtype=None):
    """``np.ones_like``."""
    return P.ones_like(a, dtype)


def np_full_like(a, fill_value, dtype=None):
    """``np.full_like``."""
    return P.full_like(a, fill_value, dtype)


def np_arange(start, stop=None, step=None, dtype=None):
    """``np.arange`` with bounds known at compile time."""
    return P.arange(start, stop, step, dtype)


def array_astype(a, dtype):
    """``a.astype(dtype)``."""
    return P.astype(a, dtype)


def array_copy(a):
    """``a.copy()``: arrays are immutable in Myia, so the array itself."""
    return a


def array_item(a):
    """``a.item()``: the one element of `a` (of any shape of size 1) as a Python number."""
    if P.size(a) != 1:
        raise ValueError("can only convert an array of size 1 to a Python scalar")
    x = P.reshape(a, ())
    if P.dtype_of(a) == np.bool_:
        return bool(x)
    if np.issubdtype(P.dtype_of(a), np.integer):
        return int(x)
    return float(x)


def array_tolist(a):
    """``a.tolist()``: nested lists of Python numbers (the number itself for a 0-d array).

    One level of lists per axis, built by a loop over the axis (its length is known at
    compile time); the numbers are ``a.item()``'s, so the gradient flows back to `a`.
    """
    if P.ndim(a) == 0:
        return array_item(a)
    out = []
    for i in range(P.shape(a)[0]):
        out = out + [array_tolist(a[i])]
    return out


# Attributes (called with the array and the attribute's name) ---------------------------------


def array_shape(a, name):
    """``a.shape``."""
    return P.shape(a)


def array_ndim(a, name):
    """``a.ndim``."""
    return P.ndim(a)


def array_size(a, name):
    """``a.size``."""
    return P.size(a)


def array_dtype(a, name):
    """``a.dtype``: a compile-time constant."""
    return P.dtype_of(a)


def array_T(a, name):
    """``a.T``."""
    return P.transpose(a, None)

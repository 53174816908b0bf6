"""NumPy functions and array methods, written in Myia's Python subset.

These thin wrappers give the NumPy signatures (keyword arguments, defaults, a method's
``self``) to the array primitives; `mapping.py` maps ``np.<name>`` and ``a.<method>`` to them.
Myia parses them like user code, so they cost nothing after optimization.
"""

from __future__ import annotations

import numpy as np

from ..primitives import P
from .scalar_forms import numpy_scalar

# Reductions -----------------------------------------------------------------------------------


def np_sum(a, axis=None, dtype=None, *, keepdims=False):
    """``np.sum`` and ``a.sum`` (of a list or tuple of numbers or arrays too)."""
    if isinstance(a, (list, tuple)):
        if axis is None and not keepdims:
            return P.reduce_sum(_seq_total(a)[0], None, False, dtype)
        a = _stacked(a)
    return P.reduce_sum(a, axis, keepdims, dtype)


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


def np_prod(a, axis=None, dtype=None, *, keepdims=False):
    """``np.prod`` and ``a.prod`` (of a tuple or literal list of numbers or arrays too)."""
    if isinstance(a, (list, tuple)):
        a = _stacked(a)
    return P.reduce_prod(a, axis, keepdims, dtype)


def np_mean(a, axis=None, dtype=None, *, keepdims=False):
    """``np.mean`` and ``a.mean`` (of a list or tuple of numbers or arrays too)."""
    if isinstance(a, (list, tuple)):
        if axis is None and not keepdims:
            total, n = _seq_total(a)
            return P.reduce_mean(total / n, None, False, dtype)
        a = _stacked(a)
    return P.reduce_mean(a, axis, keepdims, dtype)


def np_max(a, axis=None, *, keepdims=False):
    """``np.max`` and ``a.max`` (of a tuple or literal list of numbers or arrays too)."""
    if isinstance(a, (list, tuple)):
        a = _stacked(a)
    return P.reduce_max(a, axis, keepdims)


def np_min(a, axis=None, *, keepdims=False):
    """``np.min`` and ``a.min`` (of a tuple or literal list of numbers or arrays too)."""
    if isinstance(a, (list, tuple)):
        a = _stacked(a)
    return P.reduce_min(a, axis, keepdims)


def np_argmax(a, axis=None, *, keepdims=False):
    """``np.argmax`` and ``a.argmax`` (of a tuple or literal list too)."""
    if isinstance(a, (list, tuple)):
        a = _stacked(a)
    return P.argmax(a, axis, keepdims)


def np_argmin(a, axis=None, *, keepdims=False):
    """``np.argmin`` and ``a.argmin`` (of a tuple or literal list too)."""
    if isinstance(a, (list, tuple)):
        a = _stacked(a)
    return P.argmin(a, axis, keepdims)


# Shapes ---------------------------------------------------------------------------------------


def np_reshape(a, shape):
    """``np.reshape(a, shape)``."""
    return P.reshape(a, shape)


def array_reshape(a, *shape):
    """``a.reshape(3, 4)`` or ``a.reshape((3, 4))``."""
    return P.reshape(a, shape)


def array_flatten(a):
    """``a.flatten()`` and ``a.ravel()``: a 1-D array."""
    return P.reshape(a, -1)


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
    """``np.where(condition, x, y)`` (the one-argument form has a data-dependent shape)."""
    return P.where(condition, x, y)


def np_clip(a, a_min=None, a_max=None):
    """``np.clip`` and ``a.clip``.

    A Python number `a` is a NumPy scalar first, as NumPy makes it an array: ``np.clip(5, 0, 2)``
    is ``np.int64(2)``, not ``2``.
    """
    return P.clip(numpy_scalar(a), a_min, a_max)


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

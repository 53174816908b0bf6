"""Array primitives with NumPy semantics (indexing, shapes, linear algebra, reductions)."""

from __future__ import annotations

import numpy as np

from .core import primitive


@primitive
def matmul(x, y):
    """``x @ y`` with NumPy's rules (vector, matrix and batched)."""
    return np.matmul(x, y)


@primitive
def array_getitem(a, index):
    """``a[index]`` with NumPy's basic and integer-array indexing."""
    return a[index]


@primitive
def shape(a):
    """``a.shape``: a tuple of ints."""
    return np.shape(a)


@primitive
def ndim(a):
    """``a.ndim``."""
    return np.ndim(a)


@primitive
def array_len(a):
    """``len(a)``: the size of the first axis."""
    return len(a)


@primitive
def transpose(a, axes):
    """``np.transpose(a, axes)`` (``axes`` None reverses the axes)."""
    return np.transpose(a, axes)


@primitive
def reshape(a, shape):
    """``np.reshape(a, shape)``."""
    return np.reshape(a, shape)


@primitive
def reduce_sum(a, axis, keepdims):
    """``np.sum(a, axis, keepdims=keepdims)``."""
    return np.sum(a, axis=axis, keepdims=keepdims)

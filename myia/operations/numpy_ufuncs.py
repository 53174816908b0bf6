"""The methods of NumPy's ufuncs (``np.add.outer``, ``np.add.reduce``), in Myia's subset.

The frontend reads ``np.<ufunc>.<method>`` as NumPy's bound method (`myia.frontend.attributes`),
which `numpy_extra`'s mapping takes to these functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..primitives import P


def _outer_left(a, b):
    """`a` with an axis of length 1 for each of `b`'s: ``op(_outer_left(a, b), b)`` is outer."""
    a = np.asarray(a)
    return P.reshape(a, P.shape(a) + (1,) * P.ndim(np.asarray(b)))


def add_outer(a, b):
    """``np.add.outer(a, b)``: of shape ``a.shape + b.shape``."""
    return _outer_left(a, b) + np.asarray(b)


def subtract_outer(a, b):
    """``np.subtract.outer(a, b)``."""
    return _outer_left(a, b) - np.asarray(b)


def multiply_outer(a, b):
    """``np.multiply.outer(a, b)`` (``np.outer`` flattens its arguments, this does not)."""
    return _outer_left(a, b) * np.asarray(b)


def divide_outer(a, b):
    """``np.divide.outer(a, b)``."""
    return _outer_left(a, b) / np.asarray(b)


def maximum_outer(a, b):
    """``np.maximum.outer(a, b)``."""
    return np.maximum(_outer_left(a, b), np.asarray(b))


def minimum_outer(a, b):
    """``np.minimum.outer(a, b)``."""
    return np.minimum(_outer_left(a, b), np.asarray(b))


def add_reduce(a, axis=0, dtype=None, keepdims=False):
    """``np.add.reduce(a, axis=0)``: ``np.sum`` along the first axis by default."""
    return np.sum(a, axis=axis, dtype=dtype, keepdims=keepdims)


def multiply_reduce(a, axis=0, dtype=None, keepdims=False):
    """``np.multiply.reduce(a, axis=0)``."""
    return np.prod(a, axis=axis, dtype=dtype, keepdims=keepdims)


def maximum_reduce(a, axis=0, keepdims=False):
    """``np.maximum.reduce(a, axis=0)``."""
    return np.max(a, axis=axis, keepdims=keepdims)


def minimum_reduce(a, axis=0, keepdims=False):
    """``np.minimum.reduce(a, axis=0)``."""
    return np.min(a, axis=axis, keepdims=keepdims)


def add_accumulate(a, axis=0, dtype=None):
    """``np.add.accumulate(a, axis=0)``: ``np.cumsum`` along the first axis by default."""
    return np.cumsum(a, axis=axis, dtype=dtype)


def multiply_accumulate(a, axis=0, dtype=None):
    """``np.multiply.accumulate(a, axis=0)``."""
    return np.cumprod(a, axis=axis, dtype=dtype)


UFUNC_METHODS: dict[Any, Any] = {
    np.add.outer: add_outer,
    np.subtract.outer: subtract_outer,
    np.multiply.outer: multiply_outer,
    np.divide.outer: divide_outer,
    np.maximum.outer: maximum_outer,
    np.minimum.outer: minimum_outer,
    np.add.reduce: add_reduce,
    np.multiply.reduce: multiply_reduce,
    np.maximum.reduce: maximum_reduce,
    np.minimum.reduce: minimum_reduce,
    np.add.accumulate: add_accumulate,
    np.multiply.accumulate: multiply_accumulate,
}

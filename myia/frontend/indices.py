"""Array indices known at compile time, as NumPy reads them.

A boolean mask that is a constant (a module-level array) stands for the positions of its True
values: the shape of ``x[mask]`` is then known at compile time. A constant list of ints or
bools is the array NumPy makes of it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.node import Constant, Node


def mask_positions(index: Node) -> list[Node]:
    """The index nodes that `index`, an index of an array, stands for.

    A boolean mask known at compile time (a module-level constant) stands for the positions
    of its True values, as in NumPy (``x[..., m]`` is ``x[(..., *m.nonzero())]``): the shape
    of the result is known. A mask known only at run time stays (and is refused). A constant
    list of ints or bools is the array NumPy makes of it.
    """
    v = index.value if index.is_constant else None
    if isinstance(v, list) and v and _index_array(v) is not None:
        v = _index_array(v)  # a module-level list: integer (or boolean) indices
        index = Constant(v, index.debug)
    if isinstance(v, np.ndarray) and v.dtype == np.bool_ and v.ndim > 0:
        return [Constant(p, index.debug) for p in np.nonzero(v)]
    return [index]


def _index_array(v: list[Any]) -> np.ndarray | None:
    """The array of integers or booleans NumPy makes of list `v` (None: not such a list)."""
    try:
        a = np.asarray(v)
    except ValueError:  # ragged
        return None
    return a if a.dtype.kind in "iub" else None

"""The probes of array indices: what `array_getitem`'s inference indexes a probe array with.

`array_getitem`'s shape is found by indexing an array of the indexed shape with a stand-in of
the index (`index_probe`): unknown ints are 0, integer arrays zeros. A slice of bounds known
at run time only, or a boolean mask, gives a length known at run time only: the probe reads
it whole, then empty (`probe_twice`), and the dimensions that differ are unknown.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..abstract.data import (
    ANYTHING,
    AbstractArray,
    AbstractConstant,
    AbstractList,
    AbstractScalar,
    AbstractSlice,
    AbstractTuple,
    show,
)
from ..errors import MyiaTypeError


def index_probe(index):
    """Return a value standing for `index` in a probe: unknown ints 0, arrays of zeros."""
    if isinstance(index, AbstractTuple):
        return tuple(index_probe(i) for i in index.elements)
    if isinstance(index, AbstractScalar):
        if not index.dtype.startswith(("int", "uint", "bool")):
            raise MyiaTypeError(f"array indices must be integers, not {show(index)}")
        if index.value is not ANYTHING:
            return index.value
        if index.dtype == "bool":
            raise MyiaTypeError("indexing with a boolean gives a shape known only at run time")
        return 0
    if isinstance(index, AbstractArray):
        if index.dtype == "bool":
            # A mask: as many elements as it has True values, known at run time only. The
            # probe reads them all, then none (`probe_twice`).
            return _RunTimeMask(index.shape)
        if not index.dtype.startswith(("int", "uint")):
            raise MyiaTypeError(f"array indices must be integers, not {show(index)}")
        return np.zeros(index.shape, dtype=np.intp)
    if isinstance(index, AbstractSlice):
        for b in (index.start, index.stop, index.step):
            if isinstance(b, AbstractScalar) and not b.dtype.startswith(("int", "uint")):
                raise MyiaTypeError(f"slice indices must be integers or None, not {show(b)}")
        # Bounds known at run time only (``x[:n]``): the axis is of a length known at run
        # time; the probe reads it whole or empty, and the two lengths differ (`probe_twice`).
        return _RUN_TIME_SLICE
    if isinstance(index, AbstractConstant):
        return index.value
    if isinstance(index, AbstractList) and index.value is not ANYTHING:
        probe = np.asarray(index.value)  # a literal list: integer (or boolean) indices
        if probe.dtype.kind not in "iub":
            raise MyiaTypeError(f"array indices must be integers, not {show(index)}")
        return probe
    raise MyiaTypeError(f"invalid array index {show(index)}")


#: The probe of a slice of bounds known at run time only: read whole, then empty.
_RUN_TIME_SLICE = object()


@dataclasses.dataclass(frozen=True)
class _RunTimeMask:
    """The probe of a boolean mask of `shape`: every element selected, then none."""

    shape: tuple[int | None, ...]

    def probe(self, full: bool, dims: tuple[int, ...], first: bool) -> np.ndarray:
        shape = self.shape
        if None in shape:
            if not first:
                raise MyiaTypeError(
                    "indexing with a boolean array of a shape known only at run time, "
                    "after other indices, is not supported: index with it first"
                )
            shape = tuple(d if d is not None else dims[k] for k, d in enumerate(shape))
        return np.full(shape, full)


def probe_twice(idx: Any) -> tuple[Any, Any]:
    """`idx` with its slices of run-time bounds read whole, and read empty.

    Each is a function of the probed array's shape (a mask of unknown dimensions takes them
    from the array's leading ones).
    """

    def subst(i: Any, s: slice, full: bool, dims: tuple[int, ...], first: bool) -> Any:
        if i is _RUN_TIME_SLICE:
            return s
        if isinstance(i, _RunTimeMask):
            return i.probe(full, dims, first)
        if type(i) is tuple:
            return tuple(subst(j, s, full, dims, first and k == 0) for k, j in enumerate(i))
        return i

    return (
        lambda dims: subst(idx, slice(None), True, dims, True),
        lambda dims: subst(idx, slice(0, 0), False, dims, True),
    )


def plain(idx: Any) -> bool:
    """Whether probe index `idx` has no slice of run-time bounds and no mask."""
    if idx is _RUN_TIME_SLICE or isinstance(idx, _RunTimeMask):
        return False
    return all(plain(i) for i in idx) if type(idx) is tuple else True

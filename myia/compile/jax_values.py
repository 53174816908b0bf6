"""Values crossing between the host and XLA: leaves of arguments and results, as the user has them.

The JAX backend (`myia.compile.jax_backend`) passes XLA the leaves of its arguments (arrays and
scalars in tuples and records, `flatten`) and rebuilds results from XLA's leaves
(`unflatten`), as the NumPy backend returns them (`to_host`). A NumPy argument that XLA's CPU
client would copy slowly is copied into memory it reads in place (`aligned`). Arguments that
are or hold ``jax.Array``s (kept on the device) have abstract values of their shapes
(`abstract`), and the host code reads them as NumPy arrays (`map_arrays`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import AbstractArray, AbstractScalar, AbstractTuple
from ..abstract.lattice import to_abstract
from ..records import field_values, is_record_value, make_value
from .lower import record_constructor

#: The size from which XLA's CPU client copies an argument that is not at an address it can
#: read in place (64-byte aligned, C-contiguous) much more slowly than NumPy does (measured
#: with jax 0.10: 400 KiB in 35 to 100 µs, against 13 µs for NumPy's copy; below 128 KiB
#: both are a few µs).
ALIGNED_BYTES = 1 << 17

#: The alignment from which XLA's CPU client reads a NumPy array in place.
ALIGNMENT = 64


def _copied(x: np.ndarray) -> bool:
    """Whether NumPy argument `x` is better copied aligned (see `aligned`)."""
    if x.nbytes < ALIGNED_BYTES:
        return False
    if x.__array_interface__["data"][0] % ALIGNMENT == 0 and x.flags.c_contiguous:
        return False
    size = x.dtype.itemsize
    # NumPy's own alignment (16 bytes) does not divide into other items.
    return not (size > 16 or size & (size - 1) or x.dtype.hasobject)


def _empty_aligned(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """An uninitialized C-contiguous array whose data is `ALIGNMENT`-byte aligned."""
    size = np.dtype(dtype).itemsize
    n = int(np.prod(shape))
    buffer = np.empty(n + ALIGNMENT // size, dtype)
    start = (-buffer.__array_interface__["data"][0] % ALIGNMENT) // size
    return buffer[start : start + n].reshape(shape)


def aligned(x: np.ndarray) -> np.ndarray:
    """NumPy argument `x`, or a copy of it that XLA's CPU client reads in place.

    XLA's CPU client uses the memory of a C-contiguous NumPy array aligned to 64 bytes as it
    is; it copies any other, slowly from `ALIGNED_BYTES` on (a buffer NumPy allocated is
    often 16-byte aligned only). Myia makes that copy itself where it pays, into a fresh
    aligned array of its own, which nothing else writes.
    """
    if not _copied(x):
        return x
    out = _empty_aligned(x.shape, x.dtype)
    np.copyto(out, x)
    return out


class Staging:
    """The aligned copies of one argument of a compiled signature, reused from call to call.

    A fresh aligned copy of each large argument costs its allocation too: the pages of
    megabytes of new memory, which the system maps at their first write (1.5 ms of
    `mlp_step` large's 25 ms, whose weights are 7 MB). A call whose results are read back
    before it returns (NumPy results: XLA has then read its arguments) gives its copy back
    (`give`), and the next call copies its argument into it (`take`). Threads calling at once
    take different copies.
    """

    __slots__ = ("free",)

    def __init__(self) -> None:
        self.free: list[np.ndarray] = []

    def take(self, x: np.ndarray) -> np.ndarray:
        """`aligned` of `x`, into a copy given back by an earlier call where there is one."""
        if not _copied(x):
            return x
        try:
            out = self.free.pop()
        except IndexError:
            out = None
        if out is None or out.shape != x.shape or out.dtype != x.dtype:
            out = _empty_aligned(x.shape, x.dtype)
        np.copyto(out, x)
        return out

    def give(self, copy: np.ndarray, x: np.ndarray) -> None:
        """Keep `copy`, taken for `x`, for a later call (once XLA has read it)."""
        if copy is not x and not self.free:
            self.free.append(copy)


def leaf(a: Any) -> bool:
    """Whether values of abstract type `a` are one argument or result of XLA (an array)."""
    return isinstance(a, AbstractArray) or (isinstance(a, AbstractScalar) and a.dtype != "str")


def python_int(a: Any) -> bool:
    """Whether values of abstract type `a` are Python ints."""
    return isinstance(a, AbstractScalar) and a.weak and np.dtype(a.dtype).kind in "iu"


def flatten(value: Any, a: Any, out: list[Any]) -> None:
    """Append the leaves of `value` (of abstract type `a`: tuples, records) to `out`."""
    if leaf(a):
        out.append(value)
    elif isinstance(a, AbstractTuple):
        for v, e in zip(value, a.elements):
            flatten(v, e, out)
    else:
        for name, f in zip(a.names, a.fields):
            flatten(getattr(value, name), f, out)


def unflatten(leaves: Any, a: Any, convert: Any) -> Any:
    """The value of abstract type `a` made of the iterator `leaves`, each ``convert(leaf, a)``."""
    if leaf(a):
        return convert(next(leaves), a)
    if isinstance(a, AbstractTuple):
        return tuple(unflatten(leaves, e, convert) for e in a.elements)
    return record_constructor(a.cls)(*(unflatten(leaves, f, convert) for f in a.fields))


def leaf_types(a: Any) -> list[Any]:
    """The abstract types of the leaves of values of abstract type `a`, in order."""
    if leaf(a):
        return [a]
    parts = a.elements if isinstance(a, AbstractTuple) else a.fields
    return [x for p in parts for x in leaf_types(p)]


def as_is(value: Any, a: Any) -> Any:
    """`value` (the `convert` of `unflatten` that converts nothing)."""
    return value


#: The size from which a result on XLA's CPU is handed over as its own memory (`writable`)
#: rather than copied: below it, NumPy's copy costs less than the view's making (2 µs).
VIEWED_BYTES = 1 << 16


class _Writable:
    """The memory of a result of XLA's CPU, as NumPy reads it, presented as writable.

    NumPy's view of a ``jax.Array`` on the CPU is read-only, as XLA's buffers are to JAX.
    The buffer of a result is the result's own (XLA computes each result of a call into a
    fresh buffer), and nothing else reads it once it is the user's: the array over this
    object's interface, which keeps NumPy's view (and with it the buffer) alive, may write
    it. It saves a copy of every array result: 2.4 ms of `mlp_step` large's 30 ms.
    """

    __slots__ = ("__array_interface__", "_view")

    def __init__(self, view: np.ndarray):
        self._view = view
        face = dict(view.__array_interface__)
        face["data"] = (face["data"][0], False)
        self.__array_interface__ = face


def writable(value: Any) -> np.ndarray:
    """A writable NumPy array of ``jax.Array`` `value`: its own memory where it can be."""
    view = np.asarray(value)
    if view.nbytes < VIEWED_BYTES or view.flags.writeable or view.base is None:
        return view if view.flags.writeable else view.copy()
    if next(iter(value.devices())).platform != "cpu":
        return view.copy()  # the host's copy of a device's array, which JAX keeps
    return np.asarray(_Writable(view))


class Packing:
    """Small results of one XLA computation, packed into one result per dtype.

    Each result of a call costs its own buffer and ``jax.Array`` (about 4 µs on the CPU,
    measured with jax 0.10), and its own conversion to NumPy (a transfer, on a GPU): the 7
    results of `mlp_step` small's step took 30 µs more than one result of their size. Where
    the results come back to NumPy, the results smaller than `VIEWED_BYTES` (which are
    copied out anyway) are concatenated by XLA, one flat result per dtype that has several;
    `unpack` gives the user views of one copy of it. Larger results stay apart, handed over
    as XLA's buffers (`writable`).
    """

    def __init__(self, leaves: list[Any]):
        groups: dict[Any, list[int]] = {}
        for k, x in enumerate(leaves):
            if x.size * x.dtype.itemsize < VIEWED_BYTES:
                groups.setdefault(np.dtype(x.dtype), []).append(k)
        packed = {k for members in groups.values() if len(members) > 1 for k in members}
        #: The positions of the leaves passed on as they are, in order.
        self.alone = [k for k in range(len(leaves)) if k not in packed]
        #: Per packed dtype: ``(position, start, stop, shape)`` of each of its leaves.
        self.groups: list[list[tuple[int, int, int, tuple[int, ...]]]] = []
        for members in groups.values():
            if len(members) > 1:
                spans, start = [], 0
                for k in members:
                    stop = start + leaves[k].size
                    spans.append((k, start, stop, tuple(leaves[k].shape)))
                    start = stop
                self.groups.append(spans)
        self.count = len(leaves)

    def __bool__(self) -> bool:
        return bool(self.groups)

    def pack(self, leaves: list[Any], jnp: Any) -> list[Any]:
        """The results XLA returns: the leaves apart, then one flat array per group."""
        out = [leaves[k] for k in self.alone]
        for spans in self.groups:
            out.append(jnp.concatenate([jnp.ravel(leaves[k]) for k, _, _, _ in spans]))
        return out

    def unpack(self, results: list[Any]) -> list[Any]:
        """The leaves, in order, from the `pack`ed `results`: views of one copy per group."""
        leaves: list[Any] = [None] * self.count
        for k, x in zip(self.alone, results):
            leaves[k] = x
        for spans, flat in zip(self.groups, results[len(self.alone) :]):
            flat = writable(flat)
            for k, start, stop, shape in spans:
                leaves[k] = flat[start:stop].reshape(shape)
        return leaves


def to_host(value: Any, a: Any) -> Any:
    """A result of XLA as the NumPy backend returns it: arrays, Python or NumPy scalars."""
    if isinstance(a, AbstractArray):
        # A writable array, as the NumPy backend returns (a view of XLA's buffer is not).
        return writable(value)
    if a.weak:
        if type(value) is float and a.dtype == "float64":
            return value  # packed results come back as Python floats already
        return np.asarray(value).item()
    return np.asarray(value)[()]


def abstract(value: Any, array: type) -> Any:
    """`to_abstract` of `value`, whose tuples and records may hold `array`s.

    A 0-d `array` is a scalar of its dtype, as a NumPy scalar is (``np.float64``): what
    ``keep_on_device=True`` returns for a scalar result is taken back as that scalar.
    """
    if isinstance(value, array):
        if not value.ndim:
            return AbstractScalar(np.dtype(value.dtype).name)
        return AbstractArray(np.dtype(value.dtype).name, tuple(value.shape))
    if type(value) is tuple:
        return AbstractTuple(tuple(abstract(v, array) for v in value))
    if holds(value, array):  # a list, dict or record
        return to_abstract(map_arrays(value, array, _stand_in))
    return to_abstract(value)


def holds(value: Any, array: type) -> bool:
    """Whether tuple, list, dict or record `value` holds an `array` (at any depth)."""
    if type(value) is tuple or type(value) is list:
        return any(isinstance(v, array) or holds(v, array) for v in value)
    if type(value) is dict:
        return any(isinstance(v, array) or holds(v, array) for v in value.values())
    if is_record_value(value):
        return any(isinstance(v, array) or holds(v, array) for v in field_values(value))
    return False


def from_region(x: Any) -> Any:
    """A ``jax.Array`` a jitted region computed, as the NumPy code computes it."""
    return writable(x) if x.ndim else np.asarray(x)[()]


def map_arrays(value: Any, array: type, fn: Any) -> Any:
    """`value` with `fn` applied to each `array` in its tuples and records."""
    if isinstance(value, array):
        return fn(value)
    if type(value) is tuple:
        return tuple(map_arrays(v, array, fn) for v in value)
    if type(value) is list:
        return [map_arrays(v, array, fn) for v in value]
    if type(value) is dict:
        return {k: map_arrays(v, array, fn) for k, v in value.items()}
    if is_record_value(value):
        return make_value(type(value), [map_arrays(v, array, fn) for v in field_values(value)])
    return value


def _stand_in(x: Any) -> Any:
    """A NumPy array of the shape and dtype of `x`, without memory (for `to_abstract`).

    A 0-d `x` stands for a NumPy scalar (`abstract`).
    """
    zero = np.zeros((), dtype=x.dtype)
    return np.broadcast_to(zero, x.shape) if x.ndim else zero[()]

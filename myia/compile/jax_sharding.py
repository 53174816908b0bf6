"""Programs of the JAX backend over the devices of a mesh: data parallelism, sharded parameters.

``myia(step, backend="jax", mesh=mesh, batch_argnums=(1, 2))`` compiles `step` as one XLA
computation, as without a mesh; only where its arguments live changes. Each array of a
*batch argument* (an array, or the arrays of a tuple or record) is split along its first axis
over the mesh axis ``batch_axis`` (by default every axis of the mesh); every other argument is
replicated on all the devices, unless ``arg_specs`` gives it a ``PartitionSpec`` (a weight
split over a ``"model"`` axis). XLA's partitioner (GSPMD) then partitions the computation:
a gradient of a loss summed over the batch becomes each device's partial sum and an
all-reduce. The partitioned program computes what the program computes on one device: only
the order of the floating-point additions differs.

Several processes (``jax.distributed.initialize``, one per machine or per accelerator) call
the same program with the same arguments. A NumPy argument is the *global* value in every
process (each process transfers its own part); a process that holds only its part of a batch
passes a global ``jax.Array`` made with ``jax.make_array_from_process_local_data``. Results
come back whole in every process (gathered across processes where they are split), or as the
global ``jax.Array`` values with ``keep_on_device=True``.

JAX is imported by the JAX backend only: the core of Myia needs only NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import AbstractArray, AbstractRecord, AbstractTuple
from ..errors import MyiaError
from ..records import field_values


class MeshLayout:
    """Where the arguments of a program live on the devices of `mesh`, leaf by leaf.

    `batch_argnums` are the positions of the batch arguments (split along their first axis
    over `batch_axis`, a mesh axis name or a tuple of them, by default all the mesh's axes).
    `arg_specs` maps positions to a ``PartitionSpec`` for every array of that argument, or to
    a tuple or record of the argument's structure holding ``PartitionSpec`` values (or None, for
    replicated) at its leaves or above them.
    """

    def __init__(
        self,
        jax: Any,
        mesh: Any,
        batch_axis: Any = None,
        batch_argnums: Any = (),
        arg_specs: dict[int, Any] | None = None,
    ):
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        if not isinstance(mesh, Mesh):
            raise MyiaError(f"mesh= must be a jax.sharding.Mesh, not {type(mesh).__name__}")
        self.jax, self.mesh = jax, mesh
        self.P, self.NamedSharding = PartitionSpec, NamedSharding
        names = tuple(mesh.axis_names)
        if batch_axis is None:
            batch_axis = names if len(names) > 1 else names[0]
        for name in batch_axis if isinstance(batch_axis, tuple) else (batch_axis,):
            if name not in names:
                raise MyiaError(f"batch_axis={name!r} is not an axis of the mesh {names}")
        self.batch_axis = batch_axis
        if isinstance(batch_argnums, int):
            batch_argnums = (batch_argnums,)
        self.specs: dict[int, Any] = {int(i): PartitionSpec(batch_axis) for i in batch_argnums}
        for i, spec in (arg_specs or {}).items():
            if int(i) in self.specs:
                raise MyiaError(f"argument {i} is both in batch_argnums and in arg_specs")
            self.specs[int(i)] = spec
        self.replicated = NamedSharding(mesh, PartitionSpec())
        self.multiprocess = jax.process_count() > 1
        #: The shardings of the leaves, by the arguments' abstract values.
        self._cache: dict[tuple[Any, ...], list[Any]] = {}

    def axis_size(self, spec_entry: Any) -> int:
        """How many parts a dimension with this entry of a ``PartitionSpec`` is split in."""
        if spec_entry is None:
            return 1
        axes = spec_entry if isinstance(spec_entry, tuple) else (spec_entry,)
        return int(np.prod([self.mesh.shape[a] for a in axes]))

    def shardings(self, params: list[Any]) -> list[Any]:
        """The ``NamedSharding`` of each array leaf of arguments of abstract types `params`.

        Scalars have None: JAX replicates them, keeping Python numbers weakly typed.
        """
        key = tuple(params)
        if key not in self._cache:
            wrong = [i for i in self.specs if not 0 <= i < len(params)]
            if wrong:
                raise MyiaError(
                    f"batch_argnums and arg_specs name argument {wrong[0]}, but the function "
                    f"takes {len(params)} (positions count from 0)"
                )
            out: list[Any] = []
            for i, a in enumerate(params):
                self._leaf_shardings(self.specs.get(i), a, out, f"argument {i}")
            self._cache[key] = out
        return self._cache[key]

    def _leaf_shardings(self, spec: Any, a: Any, out: list[Any], where: str) -> None:
        if isinstance(a, AbstractTuple):
            parts = _spec_parts(spec, len(a.elements), tuple, where)
            for k, (s, e) in enumerate(zip(parts, a.elements)):
                self._leaf_shardings(s, e, out, f"{where}[{k}]")
        elif isinstance(a, AbstractRecord):
            parts = _spec_parts(spec, len(a.fields), a.cls, where)
            for name, s, f in zip(a.names, parts, a.fields):
                self._leaf_shardings(s, f, out, f"{where}.{name}")
        elif not isinstance(a, AbstractArray):
            out.append(None)
        elif spec is None or len(a.shape) == 0:
            out.append(self.replicated)
        elif isinstance(spec, self.P):
            out.append(self._array_sharding(spec, a.shape, where))
        else:
            raise MyiaError(f"{where} is an array: its spec must be a PartitionSpec, not {spec!r}")

    def _array_sharding(self, spec: Any, shape: tuple[int, ...], where: str) -> Any:
        if len(spec) > len(shape):
            raise MyiaError(f"{where} has {len(shape)} dimensions, fewer than its sharding {spec}")
        for d, (n, entry) in enumerate(zip(shape, spec)):
            parts = self.axis_size(entry)
            if n % parts:
                raise MyiaError(
                    f"{where} has {n} rows along its dimension {d}, which the {parts} devices "
                    f"of mesh axis {entry!r} cannot share evenly"
                )
        return self.NamedSharding(self.mesh, spec)

    def place(self, leaves: list[Any], params: list[Any]) -> list[Any]:
        """The leaves of a call's arguments on the devices their shardings name.

        A ``jax.Array`` already there stays as it is; in several processes a NumPy value is
        the global value, of which each process transfers the parts its devices hold.
        """
        jax = self.jax
        placed = []
        for x, sharding in zip(leaves, self.shardings(params)):
            if sharding is None:
                placed.append(x)
            elif isinstance(x, jax.Array):
                placed.append(x if x.sharding == sharding else jax.device_put(x, sharding))
            elif self.multiprocess:
                x = np.asarray(x)
                placed.append(jax.make_array_from_callback(x.shape, sharding, x.__getitem__))
            else:
                placed.append(jax.device_put(x, sharding))
        return placed

    def to_host(self, value: Any) -> np.ndarray:
        """A result as a whole NumPy array, gathered from the other processes if need be."""
        if self.multiprocess and not (value.is_fully_addressable or value.is_fully_replicated):
            from jax.experimental import multihost_utils

            value = multihost_utils.process_allgather(value, tiled=True)
        return np.array(value)


def _spec_parts(spec: Any, n: int, cls: Any, where: str) -> tuple[Any, ...]:
    """The specs of the `n` parts of a tuple or record (of class `cls`) under `spec`."""
    if spec is None or _is_partition_spec(spec):
        return (spec,) * n
    if cls is tuple and isinstance(spec, tuple) and len(spec) == n:
        return spec
    if cls is not tuple and type(spec) is cls:
        return field_values(spec)
    raise MyiaError(
        f"{where}: the spec {spec!r} does not have the argument's structure "
        f"({'a tuple' if cls is tuple else cls.__name__} of {n})"
    )


def _is_partition_spec(x: Any) -> bool:
    from jax.sharding import PartitionSpec

    return isinstance(x, PartitionSpec)

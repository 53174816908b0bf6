"""Export to StableHLO: a program compiled by the XLA backend, for other XLA runtimes.

``export_stablehlo(fn, *example_args)`` compiles `fn` (or a gradient) with the ``"jax"``
backend for the signature of `example_args`, and exports its one XLA computation with
``jax.export``: a serialized StableHLO module that any runtime loading JAX's export format
runs (``jax.export.deserialize(data).call(*leaves)``), without Myia or the source.
"""

from __future__ import annotations

import os
from typing import Any

from .boundary import boundary


class StableHLO:
    """An exported XLA computation.

    Attributes:
        exported: the ``jax.export.Exported``.
        inputs: the shape and dtype of each argument leaf (``jax.ShapeDtypeStruct``): the
            arrays and scalars of the arguments, in order (tuples, lists and dataclasses
            flattened depth first).
        has_status: whether the last result is the status word: ``2 * need + flag``, where
            `flag` is 1 where Python would raise an error (``1.0 / 0``, an index out of
            range: the results are then not Python's), and `need` the rows a loop
            gradient's stack needed (more than the capacity exported: the results are not
            valid either). The other results are the leaves of the program's result.

    """

    def __init__(self, exported: Any, inputs: list[Any], has_status: bool):
        self.exported = exported
        self.inputs = inputs
        self.has_status = has_status

    @property
    def text(self) -> str:
        """The StableHLO module, as MLIR text."""
        return str(self.exported.mlir_module())

    def serialize(self) -> bytes:
        """The serialized module (``jax.export``'s format)."""
        return bytes(self.exported.serialize())

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write `serialize()` to `path`."""
        with open(path, "wb") as f:
            f.write(self.serialize())

    def call(self, *leaves: Any) -> tuple[Any, ...]:
        """Run the computation on argument leaves (as another runtime would)."""
        import jax

        with jax.enable_x64(True):
            return tuple(self.exported.call(*leaves))


@boundary
def export_stablehlo(fn: Any, *example_args: Any, **example_kwargs: Any) -> StableHLO:
    """Export `fn` for the signature of the example arguments as a StableHLO computation.

    `fn` is a function, or what `myia`, `grad` or `value_and_grad` returned (it is compiled
    with ``backend="jax"``). The example arguments are run once, so that the stacks of loop
    gradients are large enough for them. A program that runs as host code (recursion,
    printing, lists of unknown length) is a `ValueError` saying why.
    """
    from .api import MyiaFunction

    if isinstance(fn, MyiaFunction) and fn.backend.name == "jax":
        f = fn
    else:
        f = MyiaFunction(fn, backend="jax")
    executable = f.specialization(*example_args, **example_kwargs).executable
    export = getattr(getattr(executable, "inner", executable), "export", None)
    if export is None:  # pragma: no cover - the jax backend's executables export
        raise ValueError("this program has no XLA computation")
    return StableHLO(*export(f._arguments(example_args, example_kwargs)))


__all__ = ["StableHLO", "export_stablehlo"]

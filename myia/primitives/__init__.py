"""Every primitive of Myia, by family; ``from myia.primitives import P`` gives them by name."""

from types import SimpleNamespace

from . import (
    array,
    array_extra,
    array_grad,
    batching,
    control,
    decompositions,
    float_parts,
    grad,
    inplace,
    linalg,
    nn,
    randomness,
    reductions,
    scalar,
    scalar_tangents,
    sensitivities,
    sequences,
    special,
    stack,
    structure,
    tangents,
    tiling,
    windows,
)
from .core import PRIMITIVES, Primitive, primitive
from .structure import KeywordArgument, Partial

P = SimpleNamespace(
    **{
        k: v
        for mod in (
            scalar,
            array,
            reductions,
            nn,
            structure,
            control,
            grad,
            array_grad,
            inplace,
            stack,
            randomness,
            linalg,
            decompositions,
            array_extra,
            tiling,
            batching,
            special,
            float_parts,
            windows,
            sequences,
            sensitivities,
        )
        for k, v in vars(mod).items()
        if isinstance(v, Primitive)
    }
)

__all__ = [
    "PRIMITIVES",
    "KeywordArgument",
    "P",
    "Partial",
    "Primitive",
    "array",
    "array_extra",
    "array_grad",
    "batching",
    "control",
    "decompositions",
    "grad",
    "inplace",
    "linalg",
    "nn",
    "primitive",
    "randomness",
    "reductions",
    "scalar",
    "scalar_tangents",
    "sensitivities",
    "sequences",
    "special",
    "stack",
    "structure",
    "tangents",
    "tiling",
    "windows",
]

"""How the Python backend writes NumPy's functions (`myia.primitives.linalg`, `array_extra`).

Each is a direct call of NumPy's function, in `myia.compile.lower`'s table.
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import AbstractArray, AbstractTuple
from ..ir.node import Apply
from ..primitives import P
from .lower import _const_args, lowering


@lowering(P.eye)
def _eye(args: list[str], node: Apply, ctx: Any) -> str | None:
    if not (_const_args(node, 1) and isinstance(node.abstract, AbstractArray)):
        return None
    n, m, k = (i.value for i in node.inputs[1:4])  # type: ignore[attr-defined]
    return f"np.eye({n!r}, {m!r}, {k!r}, dtype=np.{node.abstract.dtype})"


@lowering(P.tril, P.triu)
def _triangle(args: list[str], node: Apply, ctx: Any) -> str:
    return f"np.{node.inputs[0].value.name}({args[0]}, {args[1]})"  # type: ignore[attr-defined]


@lowering(P.cholesky, P.inv, inline=False)
def _linalg(args: list[str], node: Apply, ctx: Any) -> str:
    return f"np.linalg.{node.inputs[0].value.name}({args[0]})"  # type: ignore[attr-defined]


@lowering(P.einsum)
def _einsum(args: list[str], node: Apply, ctx: Any) -> str | None:
    if not (isinstance(node.abstract, AbstractArray) and node.inputs[1].is_constant):
        return None
    ops = node.inputs[2].abstract
    many = isinstance(ops, AbstractTuple) and len(ops.elements) > 1
    return f"np.einsum({args[0]}, *{args[1]}, optimize={many!r})"


@lowering(P.cumsum)
def _cumsum(args: list[str], node: Apply, ctx: Any) -> str | None:
    if not _const_args(node, 2) or node.inputs[3].value:  # type: ignore[attr-defined]
        return None
    # The dtype is NumPy's, written out: that of small integers is int64 (uint64), which
    # jax.numpy's cumsum, also run from this code, keeps (wrapping around in int8).
    dtype = node.abstract.dtype  # type: ignore[union-attr]
    return f"np.cumsum({args[0]}, axis={args[1]}, dtype={dtype!r})"


@lowering(P.argsort)
def _argsort(args: list[str], node: Apply, ctx: Any) -> str:
    return f"np.argsort({args[0]}, axis={args[1]}, stable=True)"


@lowering(P.diagonal)
def _diagonal(args: list[str], node: Apply, ctx: Any) -> str:
    return f"np.diagonal({', '.join(args)}).copy()"


@lowering(P.broadcast_to)
def _broadcast_to(args: list[str], node: Apply, ctx: Any) -> str | None:
    out = node.abstract
    if not isinstance(out, AbstractArray) or None in out.shape:
        return None
    return f"np.broadcast_to({args[0]}, {out.shape!r}).copy()"


@lowering(P.det)
def _det(args: list[str], node: Apply, ctx: Any) -> str:
    return f"np.linalg.det({args[0]})"


@lowering(P.flip, P.moveaxis)
def _reorder(args: list[str], node: Apply, ctx: Any) -> str:
    return f"np.{node.inputs[0].value.name}({', '.join(args)}).copy()"  # type: ignore[attr-defined]


@lowering(P.roll, P.rint)
def _numpy_call(args: list[str], node: Apply, ctx: Any) -> str:
    return f"np.{node.inputs[0].value.name}({', '.join(args)})"  # type: ignore[attr-defined]


@lowering(P.tile, P.repeat)
def _numpy_copy(args: list[str], node: Apply, ctx: Any) -> str | None:
    name = node.inputs[0].value.name  # type: ignore[attr-defined]
    if name == "repeat" and isinstance(node.inputs[2].value, tuple):  # type: ignore[attr-defined]
        return None  # the implementation: jax.numpy.repeat takes no tuple of repeats
    return f"np.{name}({', '.join(args)})"


@lowering(P.qr)
def _qr(args: list[str], node: Apply, ctx: Any) -> str:
    return f"tuple(np.linalg.qr({args[0]}))"


@lowering(P.searchsorted)
def _searchsorted(args: list[str], node: Apply, ctx: Any) -> str | None:
    if not _const_args(node, 3):
        return None
    side = "right" if node.inputs[3].value else "left"  # type: ignore[attr-defined]
    return f"np.searchsorted({args[0]}, {args[1]}, {side!r})"


@lowering(P.pad)
def _pad(args: list[str], node: Apply, ctx: Any) -> str | None:
    if not _const_args(node, 2):
        return None
    if node.inputs[3].value == "constant":  # type: ignore[attr-defined]
        return f"np.pad({args[0]}, {args[1]}, 'constant', constant_values={args[3]})"
    return f"np.pad({args[0]}, {args[1]}, {args[2]})"

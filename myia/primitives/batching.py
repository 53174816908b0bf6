"""``vmap`` as a value: the primitive making it, the spec inference and specialization read.

``vmap(f, in_axes, out_axes)`` inside Myia code is ``vmap_of(f, in_axes, out_axes)``, a function
value (`VmapSpec` at inference). A call of it is typed by `myia.grad.batching.infer_vmap_call`
and, at specialization, becomes a call to the batched graph of ``f``'s specialization
(`myia.grad.batching.build_vmap_graph`), inferred and specialized in turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..abstract.data import ANYTHING, AbstractFunction, show
from ..errors import MyiaTypeError
from ..grad.registry import nondifferentiable
from ..infer.registry import infer_rule
from .core import primitive


@dataclass(frozen=True)
class VmapSpec:
    """Callee ``fn`` mapped over axes ``in_axes`` of its arguments, results on ``out_axes``."""

    fn: Any
    in_axes: Any
    out_axes: Any

    @property
    def name(self) -> str:
        return f"vmap({getattr(self.fn, 'graph', self.fn)!r})"


class VmapValue:
    """The runtime value of ``vmap(f)`` in an unspecialized program (never called)."""

    def __init__(self, spec: VmapSpec):
        self.spec = spec


@primitive
def vmap_of(fn, in_axes, out_axes):
    """``vmap(fn, in_axes, out_axes)``: a function value."""
    return VmapValue(VmapSpec(fn, in_axes, out_axes))


def _static(a: Any, what: str) -> Any:
    if hasattr(a, "elements"):
        return tuple(_static(e, what) for e in a.elements)
    v = getattr(a, "value", ANYTHING)
    if v is ANYTHING:
        raise MyiaTypeError(f"vmap: {what} must be known at compile time, not {show(a)}")
    return v


@infer_rule(vmap_of)
def _infer_vmap_of(fn, in_axes, out_axes):
    if not isinstance(fn, AbstractFunction):
        raise MyiaTypeError(f"vmap expects a function, not {show(fn)}")
    ins, outs = _static(in_axes, "in_axes"), _static(out_axes, "out_axes")
    return AbstractFunction(frozenset(VmapSpec(f, ins, outs) for f in fn.options))


nondifferentiable(vmap_of)

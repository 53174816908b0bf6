"""``vmap`` and ``jvp`` as values: the primitives making them, the specs inference reads.

``vmap(f, in_axes, out_axes)`` inside Myia code is ``vmap_of(f, in_axes, out_axes)``, a function
value (`VmapSpec` at inference). A call of it is typed by `myia.grad.batching.infer_vmap_call`
and, at specialization, becomes a call to the batched graph of ``f``'s specialization
(`myia.grad.batching.build_vmap_graph`), inferred and specialized in turn.

``jvp_of(f)`` is ``f``'s tangent function (`JvpSpec`): called on ``(x1, t1, ..., xn, tn)``, it
returns ``(f(x1, ..., xn), tangent)`` (`myia.grad.api.infer_jvp_call`, and
`myia.grad.api.build_jvp_graph` at specialization, from `myia.grad.forward`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..abstract.data import (
    ANYTHING,
    AbstractDict,
    AbstractFunction,
    AbstractList,
    AbstractRecord,
    show,
)
from ..errors import MyiaTypeError
from ..grad.registry import bprop, linear, nondifferentiable
from ..infer.registry import infer_rule
from .core import PRIMITIVES, primitive


class TransformSpec:
    """A function value made by transforming function ``fn`` (`VmapSpec`, `JvpSpec`).

    A call of it is typed by `infer_call` and, at specialization, calls the graph `build`
    makes from ``fn``'s specialization on `examples` (the types ``fn`` is called on).
    """

    fn: Any
    #: Whether the graph built computes derivatives (simplified before differentiated again).
    gradient = False

    def examples(self, args: list[Any]) -> list[Any]:
        raise NotImplementedError

    def infer_call(self, inferrer: Any, args: list[Any]) -> Any:
        raise NotImplementedError

    def build(self, args: list[Any], closure: Any, call: Any) -> tuple[Any, list[Any]]:
        raise NotImplementedError


@dataclass(frozen=True)
class VmapSpec(TransformSpec):
    """Callee ``fn`` mapped over axes ``in_axes`` of its arguments, results on ``out_axes``."""

    fn: Any
    in_axes: Any
    out_axes: Any

    def examples(self, args: list[Any]) -> list[Any]:
        from ..grad.batch_types import as_called, example_types

        return as_called(self.fn, example_types(self, args)[0])

    def infer_call(self, inferrer: Any, args: list[Any]) -> Any:
        from ..grad.batching import infer_vmap_call

        return infer_vmap_call(inferrer, self, args)

    def build(self, args: list[Any], closure: Any, call: Any) -> tuple[Any, list[Any]]:
        from ..grad.batching import vmap_graph

        return vmap_graph(self, args, closure, call)

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


@dataclass(frozen=True)
class DictAxes:
    """The axes of a dict argument of ``vmap``: ``(key, axes)`` pairs."""

    items: tuple[tuple[str, Any], ...]


def _static(a: Any, what: str) -> Any:
    if hasattr(a, "elements"):
        return tuple(_static(e, what) for e in a.elements)
    if isinstance(a, AbstractDict):
        return DictAxes(tuple((k, _static(v, what)) for k, v in zip(a.keys, a.values)))
    if isinstance(a, AbstractRecord):  # an instance of the argument's class: its fields' axes
        if a.value is not ANYTHING:  # a literal of ints and None (``Pt(0, None)``)
            return a.value
        return tuple(_static(f, what) for f in a.fields)
    if isinstance(a, AbstractList) and a.value is not ANYTHING:  # a literal list: a tuple
        return a.value
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


@dataclass(frozen=True)
class JvpSpec(TransformSpec):
    """The tangent function of callee ``fn``: ``(x1, t1, ..., xn, tn) -> (value, tangent)``."""

    fn: Any
    gradient = True

    @property
    def name(self) -> str:
        return f"jvp({getattr(self.fn, 'graph', self.fn)!r})"

    def examples(self, args: list[Any]) -> list[Any]:
        return list(args[0::2])

    def infer_call(self, inferrer: Any, args: list[Any]) -> Any:
        from ..grad.api import infer_jvp_call

        return infer_jvp_call(inferrer, self, args)

    def build(self, args: list[Any], closure: Any, call: Any) -> tuple[Any, list[Any]]:
        from ..grad.api import jvp_call_graph

        return jvp_call_graph(self, args, closure, call)


class JvpValue:
    """The runtime value of ``jvp_of(f)`` in an unspecialized program (never called)."""

    def __init__(self, spec: JvpSpec):
        self.spec = spec


@primitive
def jvp_of(fn):
    """``f``'s tangent function: ``(x1, t1, ..., xn, tn) -> (f(x1, ..., xn), tangent)``."""
    return JvpValue(JvpSpec(fn))


@infer_rule(jvp_of)
def _infer_jvp_of(fn):
    if not isinstance(fn, AbstractFunction):
        raise MyiaTypeError(f"jvp expects a function, not {show(fn)}")
    return AbstractFunction(frozenset(JvpSpec(f) for f in fn.options))


nondifferentiable(jvp_of)


@primitive
def python_errors(result, op, x, y):
    """`result`, the batched ``op(x, y)`` (``op(x)`` where `y` is None) of Python numbers.

    `op` is the name of the primitive (a constant).

    ``vmap`` of a function of Python floats computes ``math.log(x)`` of each example as NumPy
    does (``-inf`` at 0); Python raises instead (``ValueError: math domain error``), and so
    does this, with the error of the first example where Python raises. Only the examples
    whose result or operand is not finite, or whose divisor is 0, are computed again on
    Python numbers: one test of the batch where none is.
    """
    ins = [x] if y is None else [x, y]
    arrays = np.broadcast_arrays(result, *ins)
    bad = np.zeros(arrays[0].shape, bool)
    for a in arrays:
        if a.dtype.kind == "f":
            bad |= ~np.isfinite(a)
    if len(ins) == 2 and arrays[2].dtype.kind in "iub":
        bad |= arrays[2] == 0
    if bad.any():
        for i in zip(*np.nonzero(bad)):
            PRIMITIVES[op](*(a[i].item() for a in arrays[1:]))  # Python's, where it raises
    return result


@infer_rule(python_errors)
def _infer_python_errors(result, op, x, y):
    return result


@bprop(python_errors)
def bprop_python_errors(result, op, x, y, out, dout):
    return (dout, op, gzeros(x), gzeros(y))


linear(python_errors, 0)

from .grad import gzeros  # noqa: E402

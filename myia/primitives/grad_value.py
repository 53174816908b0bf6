"""``grad(f)`` as a value in Myia code: the primitive `grad_of` and its `GradSpec`.

Part of the gradient primitives (`myia.primitives.grad`, which imports it): a call of the
value is specialized into the call of the gradient graph of ``f``.
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
class GradSpec:
    """The gradient of callee ``fn`` w.r.t. parameters ``wrt`` (names or positions)."""

    fn: Any
    wrt: tuple[Any, ...]
    value: bool
    #: Whether ``fn`` returns ``(loss, aux)`` (``has_aux=True``): aux is returned beside.
    aux: bool = False

    @property
    def name(self) -> str:
        what = "value_and_grad" if self.value else "grad"
        return f"{what}({getattr(self.fn, 'graph', self.fn)!r})"


class GradValue:
    """The runtime value of ``grad(f)`` in an unspecialized program (never called)."""

    def __init__(self, spec: GradSpec):
        self.spec = spec


@primitive
def grad_of(fn, wrt, value, aux=False):
    """``grad(fn, *wrt)`` (or ``value_and_grad`` when ``value``): a function value.

    With ``aux``, ``fn`` returns ``(loss, aux)`` and the gradient is that of the loss.
    """
    return GradValue(GradSpec(fn, wrt, value, aux))


def _static_wrt(a: Any) -> Any:
    """The parameters `grad` differentiates: known at compile time (nested tuples kept)."""
    if hasattr(a, "elements"):
        return tuple(_static_wrt(e) for e in a.elements)
    v = getattr(a, "value", ANYTHING)
    if v is ANYTHING:
        raise MyiaTypeError(
            f"grad: the parameters differentiated must be known at compile time, not {show(a)}"
        )
    return v


@infer_rule(grad_of)
def _infer_grad_of(fn, wrt, value, aux=None):
    if not isinstance(fn, AbstractFunction):
        raise MyiaTypeError(f"grad expects a function, not {show(fn)}")
    w = _static_wrt(wrt)
    if not isinstance(w, tuple):
        w = (w,)
    has_aux = aux is not None and getattr(aux, "value", ANYTHING)
    if has_aux is ANYTHING:
        raise MyiaTypeError("grad: has_aux must be known at compile time (True or False)")
    return AbstractFunction(
        frozenset(GradSpec(f, w, bool(value.value), bool(has_aux)) for f in fn.options)
    )


nondifferentiable(grad_of)

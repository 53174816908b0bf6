"""The backpropagators of primitives, owned by the AD transform.

A backpropagator is written in Myia's Python subset, beside its primitive's declaration:
``@bprop(P.mul) def bprop_mul(x, y, out, dout): return (dout * y, dout * x)``. It receives
the primitive's arguments, its output and the sensitivity of the output, and returns the
sensitivities of the arguments, one per argument. Myia parses it like user code, so that
gradients are inferred and optimized like the rest of the program and can be differentiated
again. A primitive that has no derivative is marked `nondifferentiable`: the sensitivities of
its arguments are zero.

Forward mode (`myia.grad.forward`) reads the tangent rules declared beside them: a ``@jvp``
rule, or a ``linear`` mark for a primitive linear in some of its arguments; a primitive with
neither gets a rule derived from its backpropagator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

BPROPS: dict[Any, Callable[..., Any]] = {}
NONDIFFERENTIABLE: set[Any] = set()
SPECIAL: set[Any] = set()


def bprop(*prims: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the backpropagator of each of `prims`."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for p in prims:
            if p in BPROPS or p in NONDIFFERENTIABLE:
                raise ValueError(f"backpropagator of {p} registered twice")
            BPROPS[p] = fn
        return fn

    return deco


def nondifferentiable(*prims: Any) -> None:
    """Mark `prims` as having no derivative (their arguments get zero sensitivities)."""
    for p in prims:
        if p in BPROPS:
            raise ValueError(f"{p} has a backpropagator")
        NONDIFFERENTIABLE.add(p)


#: For a primitive with no derivative, where some calls must not be differentiated: a function
#: of such a call's argument nodes giving why (or None). A derivative taken through such a
#: call is a `MyiaTypeError`, not a silent zero.
REFUSED: dict[Any, Callable[..., str | None]] = {}


def refuse_gradient(prim: Any, why: Callable[..., str | None]) -> None:
    """Refuse the gradients that flow through the calls of `prim` for which `why` says why."""
    REFUSED[prim] = why


def special(*prims: Any) -> None:
    """Mark `prims` as having their own forward graph, ``j<name>`` in `myia.grad.lib`.

    ``partial`` and ``apply_star`` call a function: their forward graphs call its forward
    graph, so they have neither a backpropagator nor a `nondifferentiable` mark.
    """
    for p in prims:
        if p in BPROPS or p in NONDIFFERENTIABLE:
            raise ValueError(f"{p} has a backpropagator or is nondifferentiable")
        SPECIAL.add(p)


CUSTOM_BPROPS: dict[Any, Callable[..., Any]] = {}


def custom_bprop(fn: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give the Python function `fn` its own backpropagator, used wherever Myia differentiates it.

    The decorated function is written in Myia's Python subset, takes ``fn``'s arguments, its
    output and the sensitivity of the output, and returns one sensitivity per argument::

        def clip_grad(x):
            return x

        @custom_bprop(clip_grad)
        def bprop_clip_grad(x, out, dout):
            return (np.clip(dout, -1.0, 1.0),)

    It is differentiated in turn for higher-order gradients.
    """

    def deco(bprop_fn: Callable[..., Any]) -> Callable[..., Any]:
        CUSTOM_BPROPS[getattr(fn, "__myia_function__", fn)] = bprop_fn
        return bprop_fn

    return deco


# Forward mode ---------------------------------------------------------------------------------

#: The tangent rules of primitives (`myia.grad.forward`): ``@jvp(P.exp) def jvp_exp(x, out,
#: dx): return dx * out`` receives the arguments, the output and the arguments' tangents, and
#: returns the output's tangent. Written in Myia's Python subset, like backpropagators.
JVPS: dict[Any, Callable[..., Any]] = {}

#: Primitives linear in some of their arguments (positions, and every position from `after`
#: on): the tangent of a call is the same primitive called on the tangents of those arguments
#: and the values of the others.
LINEAR: dict[Any, tuple[tuple[int, ...], int | None]] = {}


#: Tangent rules for the calls where the tangent at one position is a known zero (that of a
#: constant or of an integer): ``JVPS_ZERO[prim, i]``, with the signature of ``JVPS[prim]``.
#: They leave that tangent's term out, as JAX's symbolic zeros do, where the term would be a
#: zero times a value that is not finite: ``0 * log(x)`` of ``x ** 3.0`` at ``x < 0`` is NaN
#: (and a ``ValueError`` on Python floats), while the derivative is ``3 * x ** 2``.
JVPS_ZERO: dict[tuple[Any, int], Callable[..., Any]] = {}


def jvp(
    *prims: Any, zero: int | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the tangent rule of each of `prims`.

    With `zero`, it is the rule for the calls whose tangent at position `zero` is a known zero
    (`JVPS_ZERO`); the general rule is registered on its own.
    """

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for p in prims:
            if zero is not None:
                if (p, zero) in JVPS_ZERO:
                    raise ValueError(f"tangent rule of {p} with a zero at {zero} registered twice")
                JVPS_ZERO[p, zero] = fn
                continue
            if p in JVPS or p in LINEAR:
                raise ValueError(f"tangent rule of {p} registered twice")
            JVPS[p] = fn
        return fn

    return deco


def linear(prim: Any, *positions: int, after: int | None = None) -> None:
    """Mark `prim` as linear in the arguments at `positions` and from position `after` on.

    With neither, it is linear in all its arguments. Its tangent is then ``prim`` on the
    tangents of those arguments (``reshape(dx, shape)``, ``dx + dy``, ``make_tuple(dx, dy)``):
    no rule to write.
    """
    if prim in JVPS or prim in LINEAR:
        raise ValueError(f"tangent rule of {prim} registered twice")
    LINEAR[prim] = (positions, 0 if not positions and after is None else after)

"""Sums over a counted loop's iterations, computed as one product after the loop.

The backward loop of a gradient accumulates the gradients of the weights a forward loop
read at every iteration: ``dW = dW + x_i.T @ d_i`` (``rnn``: two matrix products a step,
each on a few tens of rows). Where the trip count is known (`jax_counted`), such a sum is
one product of the iterations' operands stacked: the loop stores ``x_i`` and ``d_i`` and
no longer adds, and after it ``dW = dW + X.T @ D``, the iterations one more contracted
axis. XLA runs one large product far faster than many small ones. Named rewrite:

    acc = acc + dot_general(a_i, b_i) for i < n  =>  acc = acc + dot_general(A, B)
        (A, B: the n values of a_i, b_i; their first axes contracted too)

A ``reduce_sum`` of a value the loop stacks anyway for a product is summed after the loop
too (``db = db + sum(d_i, 0)`` => ``db = db + sum(D, (0, 1))``). Only the order of the
additions changes (rounding, as XLA's own reordering of reductions).

The rewrite reads the loop body's jaxpr: a leaf of the loop's state is an *accumulator*
where the body's new value of it is ``add`` of its old value and a ``dot_general`` (no
batch dimensions) whose result nothing else reads, and nothing else reads the old value
nor the new one; each operand of the product must change with the iterations (a
loop-invariant operand would be stacked for nothing), up to a transpose, which the stacked
product folds. The body is the same jaxpr with the accumulator passed through and the
operands as extra outputs, run by ``lax.scan``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: Elements (all operands, all iterations) past which the sums stay in the loop.
MAX_ELEMENTS = 1 << 25


@dataclass
class _Operand:
    """An operand of a product, read as the stacked value of `var`, axes permuted."""

    var: Any
    free: list[int]  # the axes of `var` that the product keeps, in the result's order
    contracted: list[int]  # the axes of `var` contracted, paired with the other operand's


@dataclass
class _Sum:
    """Leaf `k` of the loop's state accumulates a product or a ``reduce_sum``."""

    k: int
    kind: str  # "dot" or "sum"
    operands: list[_Operand]
    params: dict[str, Any]


def _uses(jaxpr: Any) -> dict[Any, int]:
    from jax.extend.core import Literal

    count: dict[Any, int] = {}
    for e in jaxpr.eqns:
        for v in e.invars:
            if not isinstance(v, Literal):
                count[v] = count.get(v, 0) + 1
    for v in jaxpr.outvars:
        if not isinstance(v, Literal):
            count[v] = count.get(v, 0) + 1
    return count


def _varying(jaxpr: Any) -> set[Any]:
    """The variables of the body that change with the iterations."""
    from jax.extend.core import Literal

    n = len(jaxpr.invars)
    out = {v for v, o in zip(jaxpr.invars, jaxpr.outvars[:n]) if o is not v}
    for e in jaxpr.eqns:
        if any(not isinstance(v, Literal) and v in out for v in e.invars):
            out.update(e.outvars)
    return out


def _through_transpose(var: Any, axes: list[int], defs: dict[Any, Any]) -> tuple[Any, list[int]]:
    """`var` and its `axes`, or, if it is a transpose (copied or not), its operand's axes."""
    e = defs.get(var)
    if e is not None and e.primitive.name == "optimization_barrier" and len(e.invars) == 1:
        var = e.invars[0]
        e = defs.get(var)
    if e is not None and e.primitive.name == "transpose":
        perm = e.params["permutation"]
        return e.invars[0], [perm[a] for a in axes]
    return var, axes


def _single_reduce_sum(e: Any) -> tuple[int, ...] | None:
    """The axes of `e`, a ``reduce_sum`` or a ``jit`` of one, else None."""
    if e.primitive.name == "reduce_sum":
        return tuple(e.params["axes"])
    if e.primitive.name in ("jit", "pjit") and "jaxpr" in e.params:
        inner = e.params["jaxpr"].jaxpr
        if (
            len(inner.eqns) == 1
            and inner.eqns[0].primitive.name == "reduce_sum"
            and list(inner.eqns[0].invars) == list(inner.invars)
            and list(inner.eqns[0].outvars) == list(inner.outvars)
        ):
            return tuple(inner.eqns[0].params["axes"])
    return None


def find(closed: Any, n: int) -> list[_Sum]:
    """The accumulators of the body `closed` (a closed jaxpr) of a loop of `n` iterations.

    The body's inputs are the loop's leaves, its outputs the leaves and two more (the error
    flag and the stack size needed).
    """
    from jax.extend.core import Literal

    jaxpr = closed.jaxpr
    nleaves = len(jaxpr.invars)
    defs = {v: e for e in jaxpr.eqns for v in e.outvars}
    uses, varying = _uses(jaxpr), _varying(jaxpr)
    sums: list[_Sum] = []
    candidates: list[tuple[int, Any, Any]] = []  # (k, the added value, its equation)
    for k, (old, new) in enumerate(zip(jaxpr.invars, jaxpr.outvars[:nleaves])):
        e = defs.get(new) if not isinstance(new, Literal) else None
        if e is None or e.primitive.name != "add" or uses.get(old) != 1 or uses[new] != 1:
            continue
        a, b = e.invars
        other = b if a is old else a if b is old else None
        if other is None or isinstance(other, Literal) or uses.get(other) != 1:
            continue
        if other.aval.shape != old.aval.shape or other.aval.dtype != old.aval.dtype:
            continue
        if other in defs:
            candidates.append((k, other, defs[other]))
    for k, _, e in candidates:
        if e.primitive.name != "dot_general":
            continue
        (lc, rc), (lb, rb) = e.params["dimension_numbers"]
        lhs, rhs = e.invars
        if lb or rb or isinstance(lhs, Literal) or isinstance(rhs, Literal):
            continue
        if lhs not in varying or rhs not in varying:
            continue
        ops = []
        for v, c in ((lhs, list(lc)), (rhs, list(rc))):
            free = [a for a in range(v.aval.ndim) if a not in c]
            var, axes = _through_transpose(v, free + c, defs)
            ops.append(_Operand(var, axes[: len(free)], axes[len(free) :]))
        sums.append(_Sum(k, "dot", ops, dict(e.params)))
    stacked = {o.var for s in sums for o in s.operands}
    for k, _, e in candidates:
        axes = _single_reduce_sum(e)
        if axes is not None and e.invars[0] in stacked:
            v = e.invars[0]
            free = [a for a in range(v.aval.ndim) if a not in axes]
            sums.append(_Sum(k, "sum", [_Operand(v, free, list(axes))], {}))
    elements = sum(math.prod(v.aval.shape) for v in {o.var for s in sums for o in s.operands})
    if n * elements > MAX_ELEMENTS:
        return []
    return sums


def body(closed: Any, sums: list[_Sum]) -> tuple[Any, list[Any]]:
    """The body with the accumulators passed through and the operands as extra outputs.

    Returns the body's function and the variables of its extra outputs, in order.
    """
    from jax.extend.core import ClosedJaxpr, jaxpr_as_fun

    jaxpr = closed.jaxpr
    outvars = list(jaxpr.outvars)
    for s in sums:
        outvars[s.k] = jaxpr.invars[s.k]
    extra = list(dict.fromkeys(o.var for s in sums for o in s.operands))
    new = jaxpr.replace(outvars=outvars + extra)
    return jaxpr_as_fun(ClosedJaxpr(new, closed.consts)), extra


def _matrix(x: Any, op: _Operand, first: bool) -> tuple[Any, bool]:
    """The stacked `x` as a matrix, and whether its axes had to be moved.

    The left operand of a product (`first`) is ``free × contracted``, the right one
    ``contracted × free``; the iterations are the first contracted axis.
    """
    jnp = _jnp()
    free = [a + 1 for a in op.free]
    contracted = [0] + [a + 1 for a in op.contracted]
    order = free + contracted if first else contracted + free
    size = math.prod(x.shape[a] for a in free)
    x = jnp.transpose(x, order)
    return x.reshape((size, -1) if first else (-1, size)), order != sorted(order)


def _jnp() -> Any:
    import jax.numpy as jnp

    return jnp


def finish(sums: list[_Sum], extra: list[Any], stacked: list[Any], leaves: list[Any]) -> None:
    """Add each sum, from the operands `stacked` by the loop, to its leaf of `leaves`."""
    from jax import lax

    from .jax_lower import _laid_out

    jnp = _jnp()
    value = dict(zip(extra, stacked))
    for s in sums:
        acc = leaves[s.k]
        if s.kind == "sum":
            (op,) = s.operands
            x = value[op.var]
            total = jnp.sum(x, axis=(0, *[a + 1 for a in op.contracted]))
        else:
            lhs, rhs = s.operands
            (a, moved), (b, _) = (
                _matrix(value[lhs.var], lhs, True),
                _matrix(value[rhs.var], rhs, False),
            )
            if moved:  # XLA's CPU multiplies a transposed left operand slowly: copy it
                a = _laid_out(a, b)
            total = lax.dot_general(
                a,
                b,
                (((1,), (0,)), ((), ())),
                precision=s.params.get("precision"),
                preferred_element_type=s.params.get("preferred_element_type"),
            )
            total = total.reshape(acc.shape)
        leaves[s.k] = acc + total.astype(acc.dtype)

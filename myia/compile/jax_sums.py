"""Sums over a counted loop's iterations, computed as one product after the loop.

The backward loop of a gradient accumulates the gradients of the weights a forward loop
read at every iteration: ``dW = dW + x_i.T @ d_i`` (``rnn``: two matrix products a step,
each on a few tens of rows). Where the trip count is known (`jax_counted`), such a sum is
one product of the iterations' operands stacked: the loop stores ``x_i`` and ``d_i`` and
no longer adds, and after it ``dW = dW + X.T @ D``, the iterations one more contracted
axis. On a GPU, where each small product is a kernel launch, XLA runs one large product far
faster. Named rewrite:

    acc = acc + dot_general(a_i, b_i) for i < n  =>  acc = acc + dot_general(A, B)
        (A, B: the n values of a_i, b_i; their first axes contracted too)

A ``reduce_sum`` of a value the loop stacks anyway for a product is summed after the loop
too (``db = db + sum(d_i, 0)`` => ``db = db + sum(D, (0, 1))``), and an outer product
``u_i.reshape(m, 1) * v_i.reshape(1, n)`` (the gradient of a matrix-vector product) is the
product of a column and a row. Only the order of the additions changes (rounding, as
XLA's own reordering of reductions). On XLA's CPU the products stay in the loop (`ON_CPU`),
where they measured faster.

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

#: Whether the sums are made after the loop on XLA's CPU too. There, `rnn`'s gradient ran
#: faster with its products left in the backward loop: 2.29 to 2.86 ms of process time
#: against 2.47 to 3.25 ms in four interleaved runs (2-core AMD EPYC, jax 0.10.2, scratch):
#: the product of the stacks (``64 × 1600 × 64``) ran no faster than its 50 small ones, and
#: the stacks and their transposed copies cost the difference. On a GPU each small product
#: is a kernel launch.
ON_CPU = False


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


def _product(e: Any, defs: dict[Any, Any], uses: dict[Any, int]) -> list[_Operand] | None:
    """The operands of `e`, a ``dot_general`` or a sum over all the batch axes of one.

    A product whose batch axes are summed (the gradient of a batched matrix product) is
    the product with those axes contracted. None where `e` is neither.
    """
    from jax.extend.core import Literal

    summed = _single_reduce_sum(e)
    if summed is not None:
        if isinstance(e.invars[0], Literal) or uses.get(e.invars[0]) != 1:
            return None
        e = defs.get(e.invars[0])
        if e is None or e.primitive.name != "dot_general":
            return None
    elif e.primitive.name != "dot_general":
        return None
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    if sorted(summed or ()) != list(range(len(lb))):
        return None  # batch axes kept, or other axes summed
    ops = []
    for v, c in ((e.invars[0], [*lb, *lc]), (e.invars[1], [*rb, *rc])):
        if isinstance(v, Literal):
            return None
        free = [a for a in range(v.aval.ndim) if a not in c]
        var, axes = _through_transpose(v, free + c, defs)
        ops.append(_Operand(var, axes[: len(free)], axes[len(free) :]))
    return ops


def _outer(e: Any, defs: dict[Any, Any]) -> list[_Operand] | None:
    """The column and the row of `e`, an outer product ``u.reshape(m, 1) * v.reshape(1, n)``.

    That is the product of the column (``m × 1``) and the row (``1 × n``), their axes of
    size 1 contracted. None where `e` is not such a product.
    """
    from jax.extend.core import Literal

    if e.primitive.name != "mul" or len(e.outvars[0].aval.shape) != 2:
        return None
    ops = []
    for v in e.invars:
        b = defs.get(v)  # a size-1 axis broadcast by the product itself or before it
        if b is not None and b.primitive.name == "broadcast_in_dim":
            if tuple(b.params["broadcast_dimensions"]) != (0, 1):
                return None
            v = b.invars[0]
        if isinstance(v, Literal):
            return None
        ops.append(v)
    (m, n), shapes = e.outvars[0].aval.shape, [tuple(v.aval.shape) for v in ops]
    if shapes == [(1, n), (m, 1)]:
        ops.reverse()
    elif shapes != [(m, 1), (1, n)]:
        return None
    return [_Operand(ops[0], [0], [1]), _Operand(ops[1], [1], [0])]


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
        ops = _product(e, defs, uses) or _outer(e, defs)
        if ops is not None and all(o.var in varying for o in ops):
            params = e.params if e.primitive.name == "dot_general" else {}
            sums.append(_Sum(k, "dot", ops, dict(params)))
    stacked = {o.var for s in sums for o in s.operands}
    for k, _, e in candidates:
        axes = _single_reduce_sum(e)
        if axes is not None and e.invars[0] in stacked and k not in {s.k for s in sums}:
            v = e.invars[0]
            free = [a for a in range(v.aval.ndim) if a not in axes]
            sums.append(_Sum(k, "sum", [_Operand(v, free, list(axes))], {}))
    elements = sum(math.prod(v.aval.shape) for v in {o.var for s in sums for o in s.operands})
    if n * elements > MAX_ELEMENTS:
        return []
    return sums


def body(closed: Any, sums: list[_Sum], outside: list[Any]) -> tuple[Any, list[Any]]:
    """The body with the accumulators passed through and the operands as extra outputs.

    The operands computed `outside` the loop are not outputs. Returns the body's closed
    jaxpr and the variables of its extra outputs, in order.
    """
    from jax.extend.core import ClosedJaxpr

    jaxpr = closed.jaxpr
    outvars = list(jaxpr.outvars)
    for s in sums:
        outvars[s.k] = jaxpr.invars[s.k]
    extra = [v for v in _operands(sums) if v not in outside]
    new = jaxpr.replace(outvars=outvars + extra)
    return ClosedJaxpr(new, closed.consts), extra


def _operands(sums: list[_Sum]) -> list[Any]:
    """The variables of the sums' operands, each once, in order."""
    return list(dict.fromkeys(o.var for s in sums for o in s.operands))


def _matrix(x: Any, op: _Operand, first: bool) -> Any:
    """The stacked `x` as a matrix.

    The left operand of a product (`first`) is ``free × contracted``, the right one
    ``contracted × free``; the iterations are the first contracted axis.
    """
    jnp = _jnp()
    free = [a + 1 for a in op.free]
    contracted = [0] + [a + 1 for a in op.contracted]
    order = free + contracted if first else contracted + free
    size = math.prod(x.shape[a] for a in free)
    x = jnp.transpose(x, order)
    return x.reshape((size, -1) if first else (-1, size))


def _jnp() -> Any:
    import jax.numpy as jnp

    return jnp


def finish(sums: list[_Sum], extra: list[Any], stacked: list[Any], leaves: list[Any]) -> None:
    """Add each sum, from the operands `stacked` by the loop, to its leaf of `leaves`."""
    from jax import lax

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
            a, b = _matrix(value[lhs.var], lhs, True), _matrix(value[rhs.var], rhs, False)
            total = lax.dot_general(
                a,
                b,
                (((1,), (0,)), ((), ())),
                precision=s.params.get("precision"),
                preferred_element_type=s.params.get("preferred_element_type"),
            )
            total = total.reshape(acc.shape)
        leaves[s.k] = acc + total.astype(acc.dtype)


def run(
    step_fn: Any,
    jaxpr: Any,
    n: int,
    carry: Any,
    flags: bool,
    needs: bool,
    known: list[int | None],
) -> Any:
    """`n` iterations of the body `step_fn` (its jaxpr: `jaxpr`) from `carry`.

    `carry` is ``(leaves, error flag, stack size needed)``, `step_fn` returns the leaves, its
    flag and its size needed; the flag (the size) is carried only where `flags` (`needs`),
    else it is None; `known` are the leaves' values known when tracing. A
    ``lax.fori_loop``; where the body accumulates sums of products (`find`) or has
    products of its counters (`jax_hoist`), a ``lax.scan`` that stacks the sums' operands
    and reads the products computed before it, the sums added after it. An operand that
    depends only on the counters and what the loop does not change (a row popped from a
    stack, read at the counter) is not stacked: its rows are read after the loop.
    """
    import jax
    from jax.extend.core import jaxpr_as_fun

    from . import jax_hoist as hoist
    from .jax_lower import _on_cpu

    jnp = _jnp()
    found = find(jaxpr, n) if ON_CPU or not _on_cpu() else []
    outside, rows_of, descending = hoist.outside(jaxpr, n, known, _operands(found))
    closed, extra = body(jaxpr, found, outside) if found else (jaxpr, [])
    hoisted = hoist.split(closed, n, known)
    if hoisted is not None:
        closed, before = hoisted
    fn = step_fn if closed is jaxpr else jaxpr_as_fun(closed)
    size = len(carry[0])

    def body_(c: Any, row: Any) -> Any:
        outs = fn(*c[0], *(row or ()))
        out, flag, need = outs[:size], outs[size], outs[size + 1]
        flag = flag | c[1] if flags else None
        need = jnp.maximum(need, c[2]) if needs else None
        return (list(out), flag, need), list(outs[size + 2 :])

    if not found and hoisted is None:
        return jax.lax.fori_loop(0, n, lambda _, c: body_(c, None)[0], carry)
    rows = None if hoisted is None else before(carry[0], windows=True)
    # The rows a backward loop pops, read after it, are in order last iteration first: the
    # loop stacks its operands so too, and the products read both as they lie.
    reverse = descending and bool(outside)
    read = [] if rows_of is None else rows_of(carry[0], reverse)
    shapes = [v.aval for v in closed.jaxpr.outvars[size + 2 :]]
    (leaves, flag, need), stacked = _scan(body_, carry, rows, n, reverse, shapes)
    finish(found, [*extra, *outside], [*stacked, *read], leaves)
    return leaves, flag, need


def _scan(body_: Any, carry: Any, rows: Any, n: int, reverse: bool, shapes: list[Any]) -> Any:
    """``lax.scan(body_, carry, rows, length=n)``, outputs last iteration first if `reverse`.

    `rows` are ``(rows, offset)`` pairs (`jax_rows.windows`): iteration ``i`` reads row
    ``offset + i``, of all the rows computed before the loop (a slice of them would be a
    copy). Where `reverse`, each output (of the types `shapes`) is written at row
    ``n - 1 - i``; the iterations run in order.
    """
    from jax import lax

    whole = rows is None or all((o, r.shape[0]) == (0, n) for r, o in rows)
    if not reverse and whole:
        return lax.scan(body_, carry, None if rows is None else [r for r, _ in rows], length=n)
    jnp = _jnp()

    def row(i: Any) -> Any:
        if rows is None:
            return None
        return [lax.dynamic_index_in_dim(r, i + o, 0, False) for r, o in rows]

    if not reverse:

        def counted(state: Any, _: Any) -> Any:
            c, i = state
            c, out = body_(c, row(i))
            return (c, i + 1), out

        (carry, _), outs = lax.scan(counted, (carry, jnp.array(0)), None, length=n)
        return carry, outs

    outs = [jnp.zeros((n, *s.shape), s.dtype) for s in shapes]

    def step(i: Any, state: Any) -> Any:
        c, outs = state
        c, got = body_(c, row(i))
        j = n - 1 - i
        return c, [lax.dynamic_update_index_in_dim(b, x, j, 0) for b, x in zip(outs, got)]

    return lax.fori_loop(0, n, step, (carry, outs))

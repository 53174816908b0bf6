"""Counted loops: a ``lax.while_loop`` whose trip count is known when it is traced.

A loop over ``range(n)`` with `n` known, and the backward loop that pops what it pushed,
compare a counter with a constant: the counter starts at a value known when tracing (a
constant, a stack's size, the final count of an earlier counted loop) and each iteration adds
a constant to it. Such a loop runs as ``lax.fori_loop`` over that many iterations, which XLA
compiles with its trip count known: on a GPU each iteration then runs without the copy of
its condition back to the host that a ``while_loop`` needs. The counters' final values are
known in turn (`jax_runtime.remember`), so the backward loop after a counted forward loop is
counted too.

The analysis reads the jaxprs of the loop's test and body (``jax.make_jaxpr``); the body is
traced once, and its jaxpr is what the loop runs.
"""

from __future__ import annotations

import operator
from typing import Any

from . import jax_runtime as rt

#: The comparisons a test may make, by JAX primitive name.
_COMPARE = {
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "eq": operator.eq,
    "ne": operator.ne,
}
_NEGATED = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}
_MIRRORED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}

#: Iterations past which a loop is not counted (it runs as a ``while_loop``).
LIMIT = 1 << 40


def _defining(jaxpr: Any) -> Any:
    """The equation that defines a variable (None for a literal or an input)."""
    from jax.extend.core import Literal

    defs = {v: e for e in jaxpr.eqns for v in e.outvars}
    return lambda v: None if isinstance(v, Literal) else defs.get(v)


def _index(jaxpr: Any) -> Any:
    """The position of an input variable (None for a literal or another variable)."""
    from jax.extend.core import Literal

    index = {v: i for i, v in enumerate(jaxpr.invars)}
    return lambda v: None if isinstance(v, Literal) else index.get(v)


def _literal(v: Any) -> int | None:
    from jax.extend.core import Literal

    if isinstance(v, Literal):
        value = v.val
        try:
            if getattr(value, "shape", ()) == () and getattr(value, "dtype", None) is not None:
                if value.dtype.kind in "iu":
                    return int(value)
        except TypeError:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def zero(v: Any) -> bool:
    """Whether jaxpr variable `v` is the constant False or 0 (no error flagged, no row needed)."""
    from jax.extend.core import Literal

    return isinstance(v, Literal) and not bool(v.val)


def test_form(test_jaxpr: Any, known: list[int | None]) -> Any:
    """``(op, counter leaf, bound, bound leaf)``: the test is ``counter op bound``.

    `test_jaxpr` is the closed jaxpr of the test on the loop's leaves (its outputs: the
    condition, the error flag, the stack size needed); `known` the leaves' known values. The
    counter's start is known, the bound a constant or a known leaf (`bound leaf`, else None).
    None where the test is of another form, or may flag an error.
    """
    jaxpr = test_jaxpr.jaxpr
    if len(jaxpr.outvars) != 3 or not all(map(zero, jaxpr.outvars[1:])):
        return None
    defs, index = _defining(jaxpr), _index(jaxpr)
    eqn = defs(jaxpr.outvars[0])
    negate = False
    while eqn is not None and eqn.primitive.name == "not":
        negate = not negate
        eqn = defs(eqn.invars[0])
    if eqn is None or eqn.primitive.name not in _COMPARE or len(eqn.invars) != 2:
        return None
    op = _NEGATED[eqn.primitive.name] if negate else eqn.primitive.name
    a, b = eqn.invars
    for counter, other, mirror in ((a, b, False), (b, a, True)):
        k = index(counter)
        if k is None or known[k] is None:
            continue
        bound, bound_leaf = _literal(other), index(other)
        if bound is None and bound_leaf is not None:
            bound = known[bound_leaf]
        if bound is not None:
            return (_MIRRORED[op] if mirror else op), k, bound, bound_leaf
    return None


def _step(body_jaxpr: Any, k: int) -> int | None:
    """The constant that the body adds to leaf `k` each iteration (None: not so)."""
    jaxpr = body_jaxpr.jaxpr
    invar = jaxpr.invars[k]
    out = jaxpr.outvars[k]
    if out is invar:
        return 0
    eqn = _defining(jaxpr)(out)
    if eqn is None or eqn.primitive.name not in ("add", "sub") or len(eqn.invars) != 2:
        return None
    x, y = eqn.invars
    if x is invar and _literal(y) is not None:
        return _literal(y) if eqn.primitive.name == "add" else -_literal(y)
    if y is invar and eqn.primitive.name == "add" and _literal(x) is not None:
        return _literal(x)
    return None


def trip_count(form: Any, body_jaxpr: Any, known: list[int | None]) -> int | None:
    """How many times the loop of test `form` (`test_form`) and body `body_jaxpr` runs."""
    op, k, bound, bound_leaf = form
    if bound_leaf is not None and _step(body_jaxpr, bound_leaf) != 0:
        return None  # the bound changes
    step, start = _step(body_jaxpr, k), known[k]
    if step is None or start is None:
        return None
    if not _COMPARE[op](start, bound):
        return 0
    n: int | None = None
    if op == "lt" and step > 0:
        n = -((start - bound) // step)  # ceil((bound - start) / step)
    elif op == "le" and step > 0:
        n = (bound - start) // step + 1
    elif op == "gt" and step < 0:
        n = -((bound - start) // -step)  # ceil((start - bound) / -step)
    elif op == "ge" and step < 0:
        n = (start - bound) // -step + 1
    elif op == "ne" and step != 0 and (bound - start) % step == 0:
        n = (bound - start) // step
    elif op == "eq" and step != 0:
        n = 1
    return n if n is not None and 0 < n <= LIMIT else None


def finals(body_jaxpr: Any, known: list[int | None], n: int, leaves: list[Any]) -> None:
    """Remember the values of `leaves`, after `n` iterations, that are known."""
    for k, start in enumerate(known):
        if start is None:
            continue
        step = _step(body_jaxpr, k)
        if step is not None:
            rt.remember(leaves[k], start + n * step)

"""Products of a counted loop that depend only on its counters, computed before the loop.

A loop over ``range(n)`` often multiplies what it reads at each iteration by a weight that
does not change: ``h = tanh(x[t] @ Wx + h @ Wh + b)`` (``rnn``) reads ``x[t] @ Wx``, which
depends on ``t`` and on nothing the loop carries. Where the trip count is known
(`jax_counted`), such a value is computed for every iteration at once, before the loop: one
product of ``n`` times more rows, which XLA runs far faster than ``n`` small ones, and the
loop reads the row of its iteration. Named rewrite:

    loop i < n: ... f(c_i, w) ...  =>  F = vmap(f)(c_0 .. c_{n-1}, w); loop i < n: ... F[i] ...
        (c_i: the counters at iteration i, start + i * step; w: what the loop does not change;
         f contains a dot_general)

Only the values that the rest of the body reads (or that it returns) and that need a
``dot_general`` are computed before the loop; cheaper ones (an index, a row read) stay in
the body. The same analysis tells `jax_sums` which operands of its sums a loop need not
stack (`outside`): the rows a backward loop pops from a stack, read at its counter, are read
from the stack's buffer after the loop. Not where the stacked values would exceed
`MAX_ELEMENTS` elements. A product's rows are computed as one product: its additions are
those of the loop's, in XLA's blocking.

The rewrite reads the body's jaxpr (its inputs: the loop's leaves; its outputs: the leaves,
then the error flag and the stack size needed): a leaf is a *counter* where its start is
known and the body adds a constant to it, *invariant* where the body returns it as it is.
"""

from __future__ import annotations

import math
from typing import Any

from . import jax_counted as counted

#: Elements (all values, all iterations) past which nothing is computed before the loop.
MAX_ELEMENTS = 1 << 22

#: Primitives never computed before the loop: loops and branches (batched, a branch runs
#: both ways and a loop as long as its longest iteration).
_CONTROL = {"while", "cond", "scan", "switch"}


def _heavy(e: Any) -> bool:
    """Whether equation `e` is (or contains) a product."""
    from jax.extend.core import jaxprs_in_params

    if e.primitive.name == "dot_general":
        return True
    return any(_heavy(inner) for j in jaxprs_in_params(e.params) for inner in j.eqns)


def _controls(e: Any) -> bool:
    """Whether equation `e` is (or contains) a loop or a branch."""
    from jax.extend.core import jaxprs_in_params

    if e.primitive.name in _CONTROL:
        return True
    return any(_controls(inner) for j in jaxprs_in_params(e.params) for inner in j.eqns)


class _Analysis:
    """Which variables of a loop's body depend only on its counters and its invariants.

    `only`: those variables; `varying`: those of them that change with the iterations;
    `heavy`: those of them that need a product; `steps`: the counters' steps by leaf.
    """

    def __init__(self, closed: Any, known: list[int | None]):
        from jax.extend.core import Literal

        jaxpr = closed.jaxpr
        nleaves = len(jaxpr.invars)
        self.steps = {
            k: step
            for k, start in enumerate(known)
            if start is not None and (step := counted._step(closed, k)) not in (None, 0)
        }
        counters = {jaxpr.invars[k] for k in self.steps}
        fixed = set(jaxpr.constvars) | {
            v for v, o in zip(jaxpr.invars, jaxpr.outvars[:nleaves]) if o is v
        }
        self.only: set[Any] = counters | fixed
        self.varying: set[Any] = set(counters)
        self.heavy: set[Any] = set()
        for e in jaxpr.eqns:
            ins = [v for v in e.invars if not isinstance(v, Literal)]
            if e.effects or _controls(e) or not all(v in self.only for v in ins):
                continue
            self.only.update(e.outvars)
            if any(v in self.varying for v in ins):
                self.varying.update(e.outvars)
                if _heavy(e) or any(v in self.heavy for v in ins):
                    self.heavy.update(e.outvars)


def split(closed: Any, n: int, known: list[int | None]) -> tuple[Any, Any] | None:
    """The body without its products of counters, and the function that computes them.

    `closed` is the loop's body (a closed jaxpr) of `n` iterations, `known` its leaves' known
    starts. Returns ``(body, before)``: `body` takes the leaves then the hoisted values of
    one iteration; ``before(leaves)`` returns those values for every iteration (stacked on a
    first axis, ``before(leaves, windows=True)`` as ``(rows, offset)`` pairs: iteration
    ``i``'s at row ``offset + i``). None where nothing is worth computing before the loop.
    """
    from jax.extend.core import ClosedJaxpr, Literal

    jaxpr = closed.jaxpr
    a = _Analysis(closed, known)
    hoisted = a.heavy & a.varying
    if not hoisted:
        return None
    # The values the rest of the body reads (or returns): those computed before the loop.
    read: dict[Any, None] = {}
    for e in jaxpr.eqns:
        if not all(v in a.only for v in e.outvars) or e.effects:
            for v in e.invars:
                if not isinstance(v, Literal) and v in hoisted:
                    read[v] = None
    for v in jaxpr.outvars:
        if not isinstance(v, Literal) and v in hoisted:
            read[v] = None
    frontier = list(read)
    if not frontier:
        return None
    if n * sum(math.prod(v.aval.shape) for v in frontier) > MAX_ELEMENTS:
        return None
    body = jaxpr.replace(invars=[*jaxpr.invars, *frontier], eqns=_needed(jaxpr, frontier))
    return ClosedJaxpr(body, closed.consts), _stacked(closed, frontier, n, known, a.steps)


def outside(closed: Any, n: int, known: list[int | None], wanted: list[Any]) -> Any:
    """The variables of `wanted` computed outside the loop, and the function computing them.

    Those that need no product and depend only on the counters and the invariants: a loop
    need not stack them (`jax_sums`: the rows a backward loop pops from a stack are read
    from the stack's buffer after the loop). Returns ``(values, fn, descending)``;
    ``fn(leaves, reverse)`` gives their values at every iteration (stacked on a first axis,
    the last iteration's first where `reverse`); `descending`: every counter steps down (a
    backward loop popping: its rows, last iteration's first, are one slice in order).
    """
    if not wanted:
        return [], None, False
    a = _Analysis(closed, known)
    values = [v for v in wanted if v in a.varying and v not in a.heavy]
    if not values:
        return [], None, False
    descending = bool(a.steps) and all(step < 0 for step in a.steps.values())
    return values, _stacked(closed, values, n, known, a.steps), descending


def _needed(jaxpr: Any, given: list[Any], effects: bool = True) -> list[Any]:
    """The equations of `jaxpr` its outputs need, the variables `given` taken as inputs.

    With `effects`, the equations with effects too (the body keeps them; what is computed
    outside the loop never reads their results).
    """
    from jax.extend.core import Literal

    live = {v for v in jaxpr.outvars if not isinstance(v, Literal)}
    stop = set(given)
    kept = []
    for e in reversed(jaxpr.eqns):
        if (effects and e.effects) or any(v in live and v not in stop for v in e.outvars):
            kept.append(e)
            live.update(v for v in e.invars if not isinstance(v, Literal))
    return kept[::-1]


def _stacked(
    closed: Any, values: list[Any], n: int, known: list[int | None], steps: dict[int, int]
) -> Any:
    """``(leaves, reverse, windows) -> rows``: `values` of the body `closed` at each iteration.

    Stacked on a first axis (`jax_rows`: rows read at the counters are slices), the last
    iteration's first where `reverse`; with `windows`, each as ``(rows, offset)``, its
    iteration ``i`` at row ``offset + i`` (`jax_rows.windows`: no copy of the rows read).
    """
    from jax.extend.core import ClosedJaxpr

    from . import jax_rows

    jaxpr = closed.jaxpr.replace(outvars=values)
    before = ClosedJaxpr(jaxpr.replace(eqns=_needed(jaxpr, [], effects=False)), closed.consts)
    counters = {k: (known[k], step) for k, step in steps.items()}

    def run(leaves: list[Any], reverse: bool = False, windows: bool = False) -> list[Any]:
        by = counters
        if reverse:  # iteration i is n - 1 - i: each counter from its last value, back
            by = {k: (start + (n - 1) * step, -step) for k, (start, step) in counters.items()}
        evaluate = jax_rows.windows if windows else jax_rows.evaluate
        return evaluate(before.jaxpr, before.consts, list(leaves), by, n)

    return run

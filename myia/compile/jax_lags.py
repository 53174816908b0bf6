"""A loop's carried value stacked before and after each iteration: one buffer written.

The forward pass of a loop ``h = f(h, ...)`` pushes, for its backward pass, both the value
an iteration starts from and the one it ends with (``rnn``: the product ``h @ Wh`` reads
the first, the gradient of ``tanh`` its result): two buffers of a stack whose rows are the
same values, shifted by one row. Named rewrite:

    loop: push(P <- h, Q <- h'); h = h'  =>  loop: push(Q <- h'); h = h'
        (after the loop, P's rows from the loop's start on are Q's, one row down;
         popping reads them from Q)

The loop writes one buffer an iteration instead of two: one kernel fewer an iteration on a
GPU, and the buffer P is not zeroed and written on a CPU. After the loop P is computed
from Q (`lagging`), so that code that reads it whole reads the right rows, but popping
reads Q (`row`), so that XLA drops that computation where nothing else reads P.

It holds where the loop starts with the value ``h`` on top of Q (the last row pushed there,
at a size known when tracing), and each iteration pushes on P the ``h`` it starts from and
on Q the one it ends with, which it carries on; and it does nothing else with P. The body is
traced assuming it (`candidates`, `mark`) and checked (`kept`, `passes_through`); a loop
where it fails is traced again without it (`myia.compile.jax_control`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Link:
    """Leaves of a loop's state: buffer `p` lags buffer `q` (same stack), `h` is Q's top."""

    p: int
    q: int
    h: int
    size: int  # the stack's size when the loop starts


#: Per buffer (by id): ``(buffer, value last pushed, the stack's size after that push)``.
_pushed: dict[int, tuple[Any, Any, Any]] = {}
#: Values a loop's body starts from that are the top row of a buffer Q, by id:
#: ``(value, Q, the buffers P that may lag Q)``.
_tops: dict[int, tuple[Any, Any, list[Any]]] = {}
#: Buffers whose push a body left out, the value being Q's top: ``id -> (P, Q)``.
_skipped: dict[int, tuple[Any, Any]] = {}
#: Buffers whose rows from `size` on are Q's one row down: ``id -> (P, Q, head, size)``,
#: `head` being P's rows below `size`.
_lags: dict[int, tuple[Any, Any, Any, int]] = {}


def reset() -> None:
    """Forget everything recorded (a new trace)."""
    for d in (_pushed, _tops, _skipped, _lags):
        d.clear()


def _get(d: dict[int, Any], x: Any) -> Any:
    entry = d.get(id(x))
    return entry if entry is not None and entry[0] is x else None


def pushed(buffer: Any, value: Any, count: Any) -> None:
    """Record that `buffer` is the result of pushing `value`, the stack's size now `count`."""
    _pushed[id(buffer)] = (buffer, value, count)


def skip(buffers: list[Any], leaves: list[Any], i: int) -> bool:
    """Whether the push of ``leaves[i]`` on ``buffers[i]`` (P) is left out.

    It is where the value is the top row of another buffer of the stack (`mark`): P lags it.
    """
    top = _get(_tops, leaves[i])
    if top is None:
        return False
    b, q = buffers[i], top[1]
    if not any(b is p for p in top[2]):
        return False
    if not any(q is other for k, other in enumerate(buffers) if k != i):
        return False
    if getattr(b, "shape", None) != getattr(q, "shape", None) or b.dtype != q.dtype:
        return False
    _skipped[id(b)] = (b, q)
    return True


def candidates(leaves: list[Any], known: Any) -> list[Link]:
    """The links a loop starting from `leaves` may keep (`known`: an int's value or None)."""
    links = []
    for q, x in enumerate(leaves):
        entry = _get(_pushed, x)
        if entry is None:
            continue
        _, value, count = entry
        size = known(count)
        if size is None or size < 1:
            continue
        hs = [j for j, y in enumerate(leaves) if y is value]
        if not hs or not any(count is c for c in leaves):
            continue
        for p, y in enumerate(leaves):
            other = _get(_pushed, y)
            if p != q and other is not None and other[2] is count:
                links.append(Link(p, q, hs[0], size))
    return links


def mark(links: list[Link], xs: list[Any]) -> None:
    """In a body starting from `xs`: each link's ``h`` is the top row of its Q."""
    for link in links:
        entry = _get(_tops, xs[link.h])
        if entry is None or entry[1] is not xs[link.q]:
            entry = _tops[id(xs[link.h])] = (xs[link.h], xs[link.q], [])
        entry[2].append(xs[link.p])


def kept(links: list[Link], xs: list[Any], out: list[Any]) -> tuple[list[Link], list[Link]]:
    """``(kept, broken)``: the links a body from `xs` to `out` used, kept or broken.

    A body uses a link where it left out its push on P; it keeps it where it also passes P
    on, carries on the value it pushed on Q, and wrote Q.
    """
    used, broken = [], []
    for link in links:
        s = _get(_skipped, xs[link.p])
        if s is None or s[1] is not xs[link.q]:
            continue
        top = _get(_pushed, out[link.q])
        ok = out[link.p] is xs[link.p] and top is not None and top[1] is out[link.h]
        (used if ok else broken).append(link)
    # A Q left unwritten itself (``a, b = b, f(a, b)``: each lags the other's previous row)
    # holds no rows to read: the loop is traced again without that link.
    unwritten = {link.p for link in used}
    broken += [link for link in used if link.q in unwritten]
    return [link for link in used if link.q not in unwritten], broken


def passes_through(jaxpr: Any, p: int) -> bool:
    """Whether the body's jaxpr passes its leaf `p` on unchanged and reads it nowhere else."""
    v = jaxpr.invars[p]
    if jaxpr.outvars[p] is not v:
        return False
    if any(v is o for k, o in enumerate(jaxpr.outvars) if k != p):
        return False
    return not any(v is x for e in jaxpr.eqns for x in e.invars)


def lagging(before: list[Any], after: list[Any], links: list[Link]) -> None:
    """Set each link's P in the loop's final leaves `after` (from `before`): Q's rows one down.

    P's rows below the size at the start stay those it had; `row` reads it from Q.
    """
    import jax.numpy as jnp
    from jax import lax

    for link in links:
        p0, q = before[link.p], after[link.q]
        n = link.size
        first = _get(_pushed, p0)
        if n == 1 and first is not None:
            head = jnp.expand_dims(jnp.asarray(first[1], p0.dtype), 0)
        else:
            head = lax.slice_in_dim(p0, 0, n, axis=0)
        rows = lax.broadcasted_iota(np.int32, p0.shape, 0)
        p = jnp.where(rows < n, p0, jnp.roll(q, 1, axis=0))
        _lags[id(p)] = (p, q, head, n)
        after[link.p] = p


def lags(leaves: list[Any]) -> dict[int, tuple[int, Any, int]]:
    """The lagging buffers among `leaves` whose Q is one too: ``p -> (q, head, size)``."""
    out = {}
    for p, x in enumerate(leaves):
        entry = _get(_lags, x)
        if entry is None:
            continue
        for q, y in enumerate(leaves):
            if y is entry[1] and q != p:
                out[p] = (q, entry[2], entry[3])
                break
    return out


def relag(found: dict[int, tuple[int, Any, int]], xs: list[Any]) -> None:
    """Record the lagging buffers `found` (`lags`) again for the leaves `xs` of a loop."""
    for p, (q, head, n) in found.items():
        _lags[id(xs[p])] = (xs[p], xs[q], head, n)


def row(buffer: Any, buffers: list[Any], i: Any) -> Any:
    """Row `i` of a lagging `buffer` of a stack of `buffers`, read from its Q; else None."""
    entry = _get(_lags, buffer)
    if entry is None or not any(entry[1] is b for b in buffers):
        return None
    import jax.numpy as jnp
    from jax import lax

    _, q, head, n = entry
    above = lax.dynamic_index_in_dim(q, i - 1, 0, keepdims=False, allow_negative_indices=False)
    if n == 1:
        below = head[0]
    else:
        below = lax.dynamic_index_in_dim(head, jnp.minimum(i, n - 1), 0, keepdims=False)
    return jnp.where(i < n, below, above)

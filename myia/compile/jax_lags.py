"""Stacks whose rows a loop has elsewhere: pushed once, or not at all.

The forward loop of a gradient pushes, for its backward pass, values it has elsewhere:

- **A carried value, before and after.** The loop ``h = f(h, ...)`` pushes both the value
  an iteration starts from and the one it ends with (``rnn``: the product ``h @ Wh`` reads
  the first, the gradient of ``tanh`` its result): two buffers of a stack whose rows are the
  same values, one row apart.
- **Rows of an array.** ``x[t]`` at the loop's counter (``rnn``'s inputs): the buffer's rows
  are ``x``'s.

Named rewrites:

    loop: push(P <- h, Q <- h'); h = h'  =>  loop: push(Q <- h'); h = h'
        (after the loop, P's rows from the loop's start on are Q's, one row down)
    loop i: push(P <- x[i])  =>  loop i: (nothing)
        (after the loop, P's rows from the loop's start on are x's, from i's start)

Popping reads them where they are (`row`). The loop writes fewer buffers each iteration (on
a GPU, a kernel fewer each), and the buffer P is neither zeroed nor written on a CPU. After
the loop P is computed from where its rows are (`lagging`), so that code reading it whole
reads the right rows; but popping does not read it, and XLA drops that computation where
nothing else reads P.

It holds where the loop starts with that ``h`` on top of Q (the last row pushed there) or
with the counter at a value known when tracing, the stack's size known too, and each
iteration pushes on P the ``h`` it starts from (``x`` at the counter), carries on what it
pushed on Q (steps the counter as the stack's size), and does nothing else with P. The body
is traced assuming it (`candidates`, `mark`) and checked (`kept`, `holds`); a loop where it
fails is traced again without it (`myia.compile.jax_control`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Link:
    """Leaves of a loop's state: the rows of buffer `p` are elsewhere.

    With `q` (>= 0) they are buffer Q's, one row down, and leaf `h` is Q's top; with `q` -1
    they are an array's read at the counter `h`, ``off`` rows from the stack's size (leaf
    `count`). `size`: the stack's size at the start.
    """

    p: int
    q: int
    h: int
    size: int
    count: int = -1
    off: int = -1


#: Per buffer (by id): ``(buffer, value last pushed, the stack's size after that push)``.
_pushed: dict[int, tuple[Any, Any, Any]] = {}
#: Rows read at a traced index: ``id -> (row, array, index)``.
_reads: dict[int, tuple[Any, Any, Any]] = {}
#: In a body, the values it starts from that are Q's top row: ``id -> (value, Q, [P])``,
#: for the buffers P that may leave out a push.
_tops: dict[int, tuple[Any, Any, list[Any]]] = {}
#: In a body, the counters it starts from: ``id -> (counter, [P])``.
_counters: dict[int, tuple[Any, list[Any]]] = {}
#: Buffers whose push a body left out: ``id -> (P, Q or None, the array, the index)``.
_skipped: dict[int, tuple[Any, Any, Any, Any]] = {}
#: Buffers whose rows from `size` on are elsewhere: ``id -> (P, source, head, size, off,
#: stacked)``: row ``i`` is ``source[i + off]`` (Q's where `stacked`, `off` -1; else an
#: array's), `head` P's rows below `size`.
_lags: dict[int, tuple[Any, Any, Any, int, int, bool]] = {}


def reset() -> None:
    """Forget everything recorded (a new trace)."""
    for d in (_pushed, _reads, _tops, _counters, _skipped, _lags):
        d.clear()


def _get(d: dict[int, Any], x: Any) -> Any:
    entry = d.get(id(x))
    return entry if entry is not None and entry[0] is x else None


def pushed(buffer: Any, value: Any, count: Any) -> None:
    """Record that `buffer` is the result of pushing `value`, the stack's size now `count`."""
    _pushed[id(buffer)] = (buffer, value, count)


def read(row: Any, array: Any, index: Any) -> Any:
    """Record that `row` is ``array[index]``, an integer index; return `row`."""
    if getattr(index, "shape", None) == () and not isinstance(index, (int, np.integer)):
        _reads[id(row)] = (row, array, index)
    return row


def skip(buffers: list[Any], leaves: list[Any], i: int) -> bool:
    """Whether the push of ``leaves[i]`` on ``buffers[i]`` (P) is left out.

    It is where the value is the top row of another buffer of the stack, or a row of an array
    read at a counter (`mark`).
    """
    b, v = buffers[i], leaves[i]
    entry = _get(_tops, v)
    if entry is not None and any(b is p for p in entry[2]):  # Q's top
        q = entry[1]
        if not any(q is other for k, other in enumerate(buffers) if k != i):
            return False
        if getattr(b, "shape", None) != getattr(q, "shape", None) or b.dtype != q.dtype:
            return False
        _skipped[id(b)] = (b, q, None, None)
        return True
    got = _get(_reads, v)
    counter = got and _get(_counters, got[2])
    if not counter or not any(b is p for p in counter[1]):
        return False
    x = got[1]
    if getattr(x, "dtype", None) != b.dtype or tuple(x.shape[1:]) != tuple(b.shape[1:]):
        return False
    _skipped[id(b)] = (b, None, x, got[2])
    return True


def candidates(leaves: list[Any], known: Any) -> list[Link]:
    """The links a loop starting from `leaves` may keep (`known`: an int's value or None)."""
    links = []
    counters = [k for k, x in enumerate(leaves) if known(x) is not None]
    for q, x in enumerate(leaves):
        entry = _get(_pushed, x)
        if entry is None:
            continue
        _, value, count = entry
        size = known(count)
        where = [c for c, y in enumerate(leaves) if y is count]
        if size is None or not where:
            continue
        group = [p for p, y in enumerate(leaves) if (o := _get(_pushed, y)) and o[2] is count]
        if q == min(group):  # the stack's buffers, once: rows of an array at a counter
            links += [
                Link(p, -1, k, size, where[0], known(leaves[k]) - size)
                for p in group
                for k in counters
                if k != where[0]
            ]
        hs = [j for j, y in enumerate(leaves) if y is value]
        if size >= 1 and hs:
            links += [Link(p, q, hs[0], size) for p in group if p != q]
    return links


def mark(links: list[Link], xs: list[Any]) -> None:
    """In a body starting from `xs`: each link's ``h`` is its Q's top row, or a counter."""
    for link in links:
        h = xs[link.h]
        if link.q < 0:
            _counters.setdefault(id(h), (h, []))[1].append(xs[link.p])
            continue
        entry = _get(_tops, h)
        if entry is None or entry[1] is not xs[link.q]:
            entry = _tops[id(h)] = (h, xs[link.q], [])
        entry[2].append(xs[link.p])


def kept(links: list[Link], xs: list[Any], out: list[Any]) -> tuple[list[Link], list[Link]]:
    """``(kept, broken)``: the links a body from `xs` to `out` used, kept or broken.

    A body uses a link where it left out its push on P; it keeps it where it also passes P
    on, and, for Q's rows, carries on the value it pushed on Q and wrote Q; for an array's,
    the array is not part of the state (`holds` checks the counter's step).
    """
    used, broken = [], []
    for link in links:
        s = _get(_skipped, xs[link.p])
        if s is None:
            continue
        if link.q >= 0:
            if s[1] is not xs[link.q]:
                continue
            top = _get(_pushed, out[link.q])
            ok = top is not None and top[1] is out[link.h]
        else:
            if s[1] is not None or s[3] is not xs[link.h]:
                continue
            ok = not any(s[2] is x for x in xs)
        (used if ok and out[link.p] is xs[link.p] else broken).append(link)
    # A Q left unwritten itself (``a, b = b, f(a, b)``: each lags the other's previous row)
    # holds no rows to read: the loop is traced again without that link.
    unwritten = {link.p for link in used}
    broken += [link for link in used if link.q in unwritten]
    return [link for link in used if link.q not in unwritten], broken


def holds(jaxpr: Any, link: Link, source: Any) -> bool:
    """Whether the body's jaxpr passes P on unchanged and reads it nowhere else.

    For an array's rows (`source`), also whether the array is a value from outside the body
    (one of the jaxpr's constants: the same in every iteration, and there after the loop)
    and the body steps the counter as the stack's size, by one.
    """
    from .jax_counted import _step

    v = jaxpr.jaxpr.invars[link.p]
    if jaxpr.jaxpr.outvars[link.p] is not v:
        return False
    if any(v is o for k, o in enumerate(jaxpr.jaxpr.outvars) if k != link.p):
        return False
    if any(v is x for e in jaxpr.jaxpr.eqns for x in e.invars):
        return False
    if link.q >= 0:
        return True
    if not any(source is c for c in jaxpr.consts):
        return False
    return _step(jaxpr, link.h) == _step(jaxpr, link.count) == 1


def lagging(before: list[Any], after: list[Any], links: list[Link], sources: list[Any]) -> None:
    """Set each link's P in the loop's final leaves `after` (from `before`).

    P's rows below the size at the start stay those it had; those above are where they are
    (Q's one row down, or the array's: `sources`, by link); `row` reads them there.
    """
    import jax.numpy as jnp
    from jax import lax

    for link, x in zip(links, sources):
        p0, n = before[link.p], link.size
        first = _get(_pushed, p0)
        if n == 1 and first is not None:
            head = jnp.expand_dims(jnp.asarray(first[1], p0.dtype), 0)
        else:
            head = lax.slice_in_dim(p0, 0, n, axis=0)
        rows = lax.broadcasted_iota(np.int32, p0.shape, 0)
        if link.q >= 0:
            x = after[link.q]
            elsewhere = jnp.roll(x, 1, axis=0)
        else:
            at = jnp.arange(p0.shape[0]) + link.off
            at = jnp.clip(jnp.where(at < 0, at + x.shape[0], at), 0, x.shape[0] - 1)
            elsewhere = jnp.take(x, at, axis=0)
        p = jnp.where(rows < n, p0, elsewhere)
        _lags[id(p)] = (p, x, head, n, link.off, link.q >= 0)
        after[link.p] = p


def sources(links: list[Link], xs: list[Any]) -> list[Any]:
    """The arrays whose rows each link's P holds (None for Q's rows), as the body read them."""
    out = []
    for link in links:
        s = _get(_skipped, xs[link.p])
        out.append(None if link.q >= 0 or s is None else s[2])
    return out


def lags(leaves: list[Any]) -> dict[int, tuple[int, Any, Any, int, int]]:
    """The buffers among `leaves` whose rows are elsewhere: ``p -> (q, source, head, size, off)``.

    Q is among the leaves too (`q` its index), or the rows are an array's (`q` -1).
    """
    out = {}
    for p, x in enumerate(leaves):
        entry = _get(_lags, x)
        if entry is None:
            continue
        _, source, head, n, off, stacked = entry
        qs = [q for q, y in enumerate(leaves) if y is source and q != p]
        if stacked and qs:
            out[p] = (qs[0], source, head, n, off)
        elif not stacked:
            out[p] = (-1, source, head, n, off)
    return out


def relag(found: dict[int, tuple[int, Any, Any, int, int]], xs: list[Any]) -> None:
    """Record the buffers `found` (`lags`) again for the leaves `xs` of a loop."""
    for p, (q, source, head, n, off) in found.items():
        _lags[id(xs[p])] = (xs[p], xs[q] if q >= 0 else source, head, n, off, q >= 0)


def row(buffer: Any, buffers: list[Any], i: Any) -> Any:
    """Row `i` of a `buffer` of a stack of `buffers` whose rows are elsewhere; else None."""
    entry = _get(_lags, buffer)
    if entry is None:
        return None
    import jax.numpy as jnp
    from jax import lax

    _, source, head, n, off, stacked = entry
    if stacked:  # Q's, one row down (clamped at row 0, which reads `head`)
        if not any(source is b for b in buffers):
            return None
        above = lax.dynamic_index_in_dim(
            source, i - 1, 0, keepdims=False, allow_negative_indices=False
        )
    else:  # the array's, as the loop read them
        above = lax.dynamic_index_in_dim(source, i + off, 0, keepdims=False)
    if n == 0:
        return above
    if n == 1:
        below = head[0]
    else:
        below = lax.dynamic_index_in_dim(head, jnp.minimum(i, n - 1), 0, keepdims=False)
    return jnp.where(i < n, below, above)

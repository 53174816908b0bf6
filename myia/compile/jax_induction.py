"""Counters that step together, carried through a loop as one.

The forward loop of a gradient counts twice: the loop's own counter (``i += 1``) and the
size of the stack that it pushes on once per iteration (``count += 1``). Both add the same
constant every iteration, so their difference is fixed when the loop starts. XLA, given
both, carries both and tests the loop's end on a value it has to recompute (on a CPU, about
3 ns per iteration more: 3 µs of `scalar_loop`'s 42). Here only one of them is carried, the
one the test compares where there is one, and the others are computed from it in the body
and after the loop. Named rewrite:

    while i < n: (i, k) = (i + s, k + s)  =>  d = k - i; while i < n: i = i + s; then k = i + d

and likewise ``k = d - i`` where k steps by ``-s``. Integers wrap alike on both sides, so
the equation holds in every iteration, overflow or not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .jax_counted import _compared, _index, _step


def _counters(body_jaxpr: Any) -> dict[tuple[int, str], list[tuple[int, int]]]:
    """``(leaf, step)`` of each integer scalar leaf the body steps by a constant.

    Grouped by the step's magnitude and the leaf's dtype.
    """
    groups: dict[tuple[int, str], list[tuple[int, int]]] = {}
    for k, v in enumerate(body_jaxpr.jaxpr.invars):
        aval = v.aval
        if getattr(aval, "shape", None) != () or aval.dtype.kind not in "iu":
            continue
        step = _step(body_jaxpr, k)
        if step:
            groups.setdefault((abs(step), str(aval.dtype)), []).append((k, step))
    return groups


def _wrapped(n: int, dtype: Any) -> int:
    """Python int `n` wrapped around into integer `dtype`'s range, as the dtype's sums do."""
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min) + 1
    return (n - int(info.min)) % span + int(info.min)


class SharedCounters:
    """The loop's leaves with the counters that step with another left out.

    `deps` maps each counter left out to the counter it is computed from and the sign of
    their steps' ratio: the counter is ``sign * carried + offset``, the offset fixed when
    the loop starts (a Python int where both are known when tracing, `known`).
    """

    def __init__(self, deps: dict[int, tuple[int, int]], leaves: list[Any], known: list[Any]):
        self.deps, self.size = deps, len(leaves)
        self.kept = [k for k in range(len(leaves)) if k not in deps]
        self.offsets = {
            k: (
                _wrapped(known[k] - sign * known[r], leaves[k].dtype)
                if known[k] is not None and known[r] is not None
                else leaves[k] - sign * leaves[r]
            )
            for k, (r, sign) in deps.items()
        }

    def reduce(self, leaves: Any) -> list[Any]:
        """The leaves that the loop carries."""
        return [leaves[k] for k in self.kept]

    def expand(self, carried: Any) -> list[Any]:
        """All the leaves, from those carried."""
        full: list[Any] = [None] * self.size
        for k, x in zip(self.kept, carried):
            full[k] = x
        for k, (r, sign) in self.deps.items():
            off, x = self.offsets[k], full[r] if sign > 0 else -full[r]
            full[k] = x if isinstance(off, int) and off == 0 else x + off
        return full


def shared(body_jaxpr: Any, test_jaxpr: Any, leaves: list[Any], known: list[Any]) -> Any:
    """The `SharedCounters` of a loop, or None where no two counters step together."""
    groups = [g for g in _counters(body_jaxpr).values() if len(g) > 1]
    if not groups:
        return None
    tested: set[int] = set()
    eqn, _ = _compared(test_jaxpr)
    if eqn is not None:
        index = _index(test_jaxpr.jaxpr)
        tested = {k for k in map(index, eqn.invars) if k is not None}
    deps: dict[int, tuple[int, int]] = {}
    for group in groups:
        rep, step = next((c for c in group if c[0] in tested), group[0])
        deps.update((k, (rep, 1 if s == step else -1)) for k, s in group if k != rep)
    return SharedCounters(deps, leaves, known)

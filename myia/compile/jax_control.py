"""The control flow of the JAX backend's code: loops and branches over Myia's values, in XLA.

The generated code (`myia.compile.jax_codegen`) calls these where the NumPy backend's code
uses Python's own control flow:

- `jax_while`, `jax_switch`, `jax_cond`, `jax_select`: ``lax.while_loop``, ``lax.switch``
  and ``lax.cond``, with the error flags and stack sizes of their bodies carried out
  (`recorded`).

A value crosses ``lax`` as its *skeleton* (what is known while tracing: tuples, records,
environments' keys, functions' code, constants) and its *leaves* (arrays): `split` and
`join`. XLA needs the branches of a ``lax.switch``, and a loop's state before and after an
iteration, to have one skeleton. Myia's types say so for most values, but not for all: the
backward pass of a loop that exits at several places (``break``), or of nested loops, is a
different function at each exit, and the environment of sensitivities it returns holds
different keys. Such values are *joined* (`merge`, then `fit` puts each value in the joined
skeleton):

- environments with different keys: the keys of both, a missing key holding zeros (the
  sensitivity it stands for);
- the empty stack and a stack: an empty stack of buffers;
- two functions of one code: their closed-over values joined;
- values of different structures (two functions of different code, tuples of different
  lengths): a `jax_runtime.Union` of both, its index traced. Calling a union is a
  ``lax.switch`` over its alternatives; `env_sens` reads the alternative of the type it
  expects (the others are never taken when that read runs).

A ``lax.switch`` is traced once; only if its branches give different skeletons is it traced
again, each branch's value fitted in the joined skeleton. A loop whose state changes
skeleton is traced again with the joined skeleton as its state, until it settles.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any

import numpy as np

from ..abstract.data import ENV, AbstractArray, AbstractRecord, AbstractScalar, AbstractTuple
from ..primitives.grad import EnvInstance
from . import jax_counted as counted
from . import jax_induction as induction
from . import jax_runtime as rt
from . import jax_sums as sums
from .jax_runtime import (
    EMPTY,
    UNSET,
    AnyStack,
    JaxStack,
    Trace,
    Union,
    Unreachable,
    to_carry,
)


def _jnp() -> Any:
    import jax.numpy as jnp

    return jnp


def recorded(fn: Any) -> Any:
    """`fn`, returning also its error flag and the stack size it needed, as arrays."""
    jnp = _jnp()

    def run(*args: Any) -> Any:
        Trace.flags.append([])
        Trace.needs.append([])
        try:
            out = fn(*args)
        finally:
            flags, needs = Trace.flags.pop(), Trace.needs.pop()
        flag = jnp.asarray(False)
        for f in flags:
            flag = flag | jnp.asarray(f, dtype=bool)
        need = jnp.asarray(0, dtype=np.int64)
        for n in needs:
            need = jnp.maximum(need, jnp.asarray(n, dtype=np.int64))
        return out, flag, need

    return run


def _report(flag: Any, need: Any) -> None:
    rt.check(flag, None)
    rt._need(need)


# Values as skeletons and leaves ---------------------------------------------------------------


def _leaf_dtype(value: Any) -> np.dtype:
    if isinstance(value, bool):
        return np.dtype(bool)
    if isinstance(value, int):
        return np.dtype(np.int64)
    if isinstance(value, float):
        return np.dtype(np.float64)
    if isinstance(value, complex):
        return np.dtype(np.complex128)
    return np.dtype(value.dtype)


def split(value: Any, leaves: list[Any]) -> Any:
    """The skeleton of `value` (what is known while tracing), its arrays put in `leaves`.

    Tuples, lists, records, environments of sensitivities, stacks, unions and closures are
    walked; arrays and numbers are leaves (their shape and dtype are in the skeleton); other
    objects (None, keys, constants) are part of the skeleton.
    """
    if isinstance(value, tuple):
        return ("tuple", tuple(split(v, leaves) for v in value))
    if isinstance(value, list):
        return ("list", tuple(split(v, leaves) for v in value))
    if isinstance(value, EnvInstance):
        keys = list(value.contents)
        return ("env", tuple(keys), tuple(split(value.contents[k], leaves) for k in keys))
    if isinstance(value, JaxStack):
        leaves.extend(value.buffers)
        leaves.append(value.count)
        return ("stack", value.element, len(value.buffers))
    if isinstance(value, AnyStack):
        leaves.extend(value.buffers)
        leaves.append(value.count)
        return ("anystack", value.layout)
    if isinstance(value, Union):
        leaves.append(value.index)
        return ("union", tuple(split(v, leaves) for v in value.alts))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [f.name for f in dataclasses.fields(value)]
        return ("record", type(value), tuple(split(getattr(value, n), leaves) for n in names))
    if isinstance(value, (bool, int, float, np.ndarray, np.generic)) or hasattr(value, "shape"):
        leaves.append(value)
        return ("leaf", tuple(np.shape(value)), _leaf_dtype(value))
    if value is UNSET:
        return ("static", UNSET)
    if isinstance(value, types.FunctionType):
        # A closure: its code is known while tracing, the values it closes over are data.
        cells = value.__closure__ or ()
        if len(cells) > 64 or _depth(value) > 8:
            raise TypeError("a closure too deep to cross a branch under XLA")
        parts = tuple(split(c.cell_contents, leaves) for c in cells)
        return (
            "fn",
            value.__code__,
            id(value.__globals__),
            value.__defaults__,
            parts,
            _Any(value),
        )
    if callable(value) and not isinstance(value, type):
        raise TypeError("a function value that is not a closure of the generated code")
    return ("static", value)


class _Any:
    """A part of a skeleton that two skeletons need not share (equal to any other)."""

    def __init__(self, value: Any):
        self.value = value

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _Any)

    __hash__ = object.__hash__


def _depth(f: Any, seen: int = 0) -> int:
    """How deeply closures nest in the cells of closure `f`."""
    if seen > 8:
        return seen
    inner = [
        c.cell_contents
        for c in (f.__closure__ or ())
        if isinstance(c.cell_contents, types.FunctionType)
    ]
    return 1 + max((_depth(g, seen + 1) for g in inner), default=0)


def join(skeleton: Any, leaves: Any) -> Any:
    """The value of `skeleton` with its leaves taken from iterator `leaves` (`split`'s inverse)."""
    kind = skeleton[0]
    if kind == "leaf":
        return next(leaves)
    if kind == "tuple":
        return tuple(join(s, leaves) for s in skeleton[1])
    if kind == "list":
        return [join(s, leaves) for s in skeleton[1]]
    if kind == "env":
        return EnvInstance({k: join(s, leaves) for k, s in zip(skeleton[1], skeleton[2])})
    if kind == "stack":
        buffers = [next(leaves) for _ in range(skeleton[2])]
        return JaxStack(skeleton[1], buffers, next(leaves))
    if kind == "anystack":
        buffers = [next(leaves) for _ in range(_count(skeleton) - 1)]
        return AnyStack(skeleton[1], buffers, next(leaves))
    if kind == "union":
        index = next(leaves)
        return Union(index, [join(s, leaves) for s in skeleton[1]])
    if kind == "record":
        return rt.record_constructor(skeleton[1])(*(join(s, leaves) for s in skeleton[2]))
    if kind == "fn":
        f = skeleton[5].value
        cells = tuple(types.CellType(join(s, leaves)) for s in skeleton[4])
        return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, cells)
    return skeleton[1]


def _count(skeleton: Any) -> int:
    """The number of leaves of a value of `skeleton`."""
    kind = skeleton[0]
    if kind == "leaf":
        return 1
    if kind in ("tuple", "list"):
        return sum(map(_count, skeleton[1]))
    if kind in ("env", "record"):
        return sum(map(_count, skeleton[2]))
    if kind == "stack":
        return skeleton[2] + 1
    if kind == "anystack":
        return 1 + (0 if skeleton[1] is None else _count(skeleton[1]))
    if kind == "union":
        return 1 + sum(map(_count, skeleton[1]))
    if kind == "fn":
        return sum(map(_count, skeleton[4]))
    return 0


# Joins ----------------------------------------------------------------------------------------


def _unset(s: Any) -> bool:
    """Whether `s` is the skeleton of `jax_runtime.UNSET` (joined with anything)."""
    return s[0] == "static" and s[1] is UNSET


def _union(a: Any, b: Any) -> Any:
    """The union of `a`'s and `b`'s alternatives, those that join (one code) joined."""
    alts = list(a[1]) if a[0] == "union" else [a]
    for x in b[1] if b[0] == "union" else [b]:
        for k, y in enumerate(alts):
            if x == y or _one_code(x, y):
                alts[k] = merge(y, x)
                break
        else:
            alts.append(x)
    return ("union", tuple(alts))


def _one_code(a: Any, b: Any) -> bool:
    """Whether `a` and `b` are the skeletons of closures of one code (joined as one)."""
    return (
        a[0] == b[0] == "fn"
        and a[1] is b[1]
        and a[2] == b[2]
        and a[3] == b[3]
        and len(a[4]) == len(b[4])
    )


def merge(a: Any, b: Any) -> Any:
    """A skeleton that values of skeletons `a` and `b` both fit in (see the module's doc)."""
    if a == b:
        return a
    if _unset(a) or _unset(b):
        return a if _unset(b) else b
    ka, kb = a[0], b[0]
    if ka == "union" or kb == "union":
        return _union(a, b)
    if ka == kb and ka in ("tuple", "list") and len(a[1]) == len(b[1]):
        return (ka, tuple(merge(x, y) for x, y in zip(a[1], b[1])))
    if ka == kb == "record" and a[1] is b[1]:
        return ("record", a[1], tuple(merge(x, y) for x, y in zip(a[2], b[2])))
    if ka == kb == "env":
        subs = dict(zip(a[1], a[2]))
        for k, s in zip(b[1], b[2]):
            subs[k] = merge(subs[k], s) if k in subs else s
        return ("env", tuple(subs), tuple(subs.values()))
    if {ka, kb} in ({"stack", "static"}, {"anystack", "static"}):
        stack, static = (a, b) if ka != "static" else (b, a)
        if static[1] is EMPTY:
            return stack
    if ka == kb == "anystack":
        # The layouts of what was pushed, joined (`refit`).
        if a[1] is None or b[1] is None:
            return a if b[1] is None else b
        return ("anystack", merge(a[1], b[1]))
    if _one_code(a, b):
        return ("fn", a[1], a[2], a[3], tuple(merge(x, y) for x, y in zip(a[4], b[4])), a[5])
    return _union(a, b)


def _fits_in(a: Any, b: Any) -> bool:
    """Whether values of skeleton `a` can be fitted in skeleton `b` (a join of it, `merge`)."""
    if a == b or _unset(a):
        return True
    ka, kb = a[0], b[0]
    if ka == "union":
        return all(_fits_in(x, b) for x in a[1])
    if kb == "union":
        return any(_fits_in(a, x) for x in b[1])
    if ka != kb:
        return kb in ("stack", "anystack") and ka == "static" and a[1] is EMPTY
    if ka in ("tuple", "list"):
        return len(a[1]) == len(b[1]) and all(map(_fits_in, a[1], b[1]))
    if ka == "record":
        return a[1] is b[1] and all(map(_fits_in, a[2], b[2]))
    if ka == "env":
        subs = dict(zip(b[1], b[2]))
        return all(k in subs and _fits_in(s, subs[k]) for k, s in zip(a[1], a[2]))
    if ka == "anystack":
        return a[1] is None or (b[1] is not None and _fits_in(a[1], b[1]))
    if ka == "fn":
        return a[1] is b[1] and a[2:4] == b[2:4] and all(map(_fits_in, a[4], b[4]))
    return False


def zeros(skeleton: Any, out: list[Any]) -> None:
    """Put in `out` the leaves of a value of `skeleton` that is zero (an alternative not taken)."""
    jnp = _jnp()
    kind = skeleton[0]
    if kind == "leaf":
        out.append(jnp.zeros(skeleton[1], dtype=skeleton[2]))
    elif kind in ("tuple", "list"):
        for s in skeleton[1]:
            zeros(s, out)
    elif kind in ("env", "record"):
        for s in skeleton[2]:
            zeros(s, out)
    elif kind == "stack":
        stack = JaxStack.new(skeleton[1])
        if len(stack.buffers) != skeleton[2]:
            raise TypeError("a stack of unknown buffers under XLA")
        out.extend(stack.buffers)
        out.append(stack.count)
    elif kind == "anystack":
        out.extend(_rows(skeleton[1]))
        out.append(jnp.asarray(0, dtype=np.int64))
    elif kind == "union":
        out.append(jnp.asarray(0, dtype=np.int32))
        for s in skeleton[1]:
            zeros(s, out)
    elif kind == "fn":
        for s in skeleton[4]:
            zeros(s, out)


def _take(leaves: Any, n: int) -> list[Any]:
    return [next(leaves) for _ in range(n)]


def fit(v: Any, leaves: Any, t: Any, out: list[Any]) -> None:
    """Put in `out` the leaves, in skeleton `t`, of the value of skeleton `v` and `leaves`.

    `t` is a join of `v` with others (`merge`).
    """
    jnp = _jnp()
    if v == t:
        out.extend(jnp.asarray(x) for x in _take(leaves, _count(v)))
        return
    kv, kt = v[0], t[0]
    if _unset(v):
        zeros(t, out)
    elif kt == "union":
        if kv == "union":
            _fit_union(v, leaves, t, out)
            return
        j = next(k for k, alt in enumerate(t[1]) if _fits_in(v, alt))
        out.append(jnp.asarray(j, dtype=np.int32))
        for k, alt in enumerate(t[1]):
            if k == j:
                fit(v, leaves, alt, out)
            else:
                zeros(alt, out)
    elif kt == "leaf" and kv == "leaf":
        out.append(jnp.asarray(next(leaves), dtype=t[2]))
    elif kt in ("tuple", "list") and kv == kt:
        for a, b in zip(v[1], t[1]):
            fit(a, leaves, b, out)
    elif kt == "record" and kv == kt:
        for a, b in zip(v[2], t[2]):
            fit(a, leaves, b, out)
    elif kt == "env" and kv == "env":
        mine = {k: (s, _take(leaves, _count(s))) for k, s in zip(v[1], v[2])}
        for k, s in zip(t[1], t[2]):
            if k in mine:
                fit(mine[k][0], iter(mine[k][1]), s, out)
            else:
                zeros(s, out)
    elif kt in ("stack", "anystack") and kv == "static" and v[1] is EMPTY:
        zeros(t, out)
    elif kt == "anystack" and kv == "anystack":
        stack = join(v, leaves)
        out.extend(refit(stack, t[1]).buffers)
        out.append(stack.count)
    elif kt == "fn" and kv == "fn":
        for a, b in zip(v[4], t[4]):
            fit(a, leaves, b, out)
    else:
        raise TypeError("values of different structures cannot be joined under XLA")


def _rows(layout: Any) -> list[Any]:
    """Empty buffers (`Trace.capacity` rows) for the leaves of values of skeleton `layout`."""
    if layout is None:
        return []
    row: list[Any] = []
    zeros(layout, row)
    jnp = _jnp()
    return [jnp.zeros((Trace.capacity, *np.shape(x)), dtype=x.dtype) for x in row]


def refit(stack: AnyStack, layout: Any) -> AnyStack:
    """`stack` with its rows in `layout`, a join of its own (`merge`): one ``vmap`` of `fit`."""
    if stack.layout == layout:
        return stack
    if stack.layout is None:
        return AnyStack(layout, _rows(layout), stack.count)
    import jax

    def row(*xs: Any) -> list[Any]:
        out: list[Any] = []
        fit(stack.layout, iter(xs), layout, out)
        return out

    if not stack.buffers:  # functions without free variables: nothing to refit but zeros
        return AnyStack(layout, _rows(layout), stack.count)
    return AnyStack(layout, jax.vmap(row)(*stack.buffers), stack.count)


def _fit_union(v: Any, leaves: Any, t: Any, out: list[Any]) -> None:
    """`fit` of a union in a union of more alternatives: each of `v`'s goes in one of `t`'s."""
    jnp = _jnp()
    index = next(leaves)
    place = [next(k for k, alt in enumerate(t[1]) if _fits_in(a, alt)) for a in v[1]]
    mine = [_take(leaves, _count(a)) for a in v[1]]
    out.append(jnp.asarray(place, dtype=np.int32)[index])
    for k, alt in enumerate(t[1]):
        chosen = None
        for i, a in enumerate(v[1]):
            if place[i] != k:
                continue
            part: list[Any] = []
            fit(a, iter(mine[i]), alt, part)
            if chosen is None:
                chosen = part
            else:
                chosen = [jnp.where(index == i, x, y) for x, y in zip(part, chosen)]
        if chosen is None:
            zeros(alt, out)
        else:
            out.extend(chosen)


# Structured control flow ----------------------------------------------------------------------


class _Widen(Exception):
    """A loop's state changes skeleton: the loop is traced again with `skeleton`."""

    def __init__(self, owner: object, skeleton: Any):
        super().__init__("a loop's state changes structure")
        self.owner, self.skeleton = owner, skeleton


def jax_while(cond: Any, body: Any, state: Any, types_: Any) -> Any:
    """``while cond(state): state = body(state)`` as ``lax.while_loop``.

    `types_` are the abstract types of the state's parts. The state crosses into XLA as the
    list of its arrays (`split`: records and stacks too); a state whose skeleton an iteration
    changes is joined with it, and the loop traced again. The loop stops at the first error
    flagged (the host then runs the call again); the stack sizes needed are carried out.
    """
    init: list[Any] = []
    first = split(to_carry(state, types_), init)
    skeleton = first
    owner = object()
    varied: set[int] = set()  # the leaves not assumed uniform buffers (`rt.uniform`)
    for _ in range(8):
        try:
            return _while(cond, body, types_, first, init, skeleton, owner, varied)
        except _Widen as exc:
            if exc.owner is not owner:
                raise
            skeleton = exc.skeleton
    raise TypeError("a loop's state does not settle on one structure under XLA")


def _while(
    cond: Any,
    body: Any,
    types_: Any,
    first: Any,
    init: list[Any],
    skeleton: Any,
    owner: object,
    varied: set[int],
) -> Any:
    import jax

    jnp = _jnp()
    leaves: list[Any] = []
    fit(first, iter(init), skeleton, leaves)
    # A stack buffer whose rows are one value stays so where the body passes it on (not
    # assumed where that value is in the state: it is then likely to change).
    rows = {
        j: u
        for j, u in enumerate(map(rt.uniform, leaves))
        if u and j not in varied and not any(u[0] is x for x in leaves)
    }

    def unflat(xs: Any) -> Any:
        for j, u in rows.items():
            rt.same(xs[j], *u)
        return join(skeleton, iter(xs))

    def flat_body(xs: Any) -> Any:
        out: list[Any] = []
        try:
            got = split(to_carry(body(unflat(xs)), types_), out)
        except Unreachable:
            # The body pops a stack nothing was pushed on: it never runs.
            return [jnp.asarray(x) for x in xs]
        changed = {j for j in rows if got != skeleton or out[j] is not xs[j]}
        if changed:
            varied.update(changed)
            raise _Widen(owner, skeleton)
        if got == skeleton:
            return [jnp.asarray(x) for x in out]
        joined = merge(skeleton, got)
        if joined != skeleton:
            raise _Widen(owner, joined)
        fitted: list[Any] = []
        fit(got, iter(out), skeleton, fitted)
        return fitted

    test = recorded(lambda xs: cond(unflat(xs)))
    step = recorded(flat_body)
    known = [rt.known(x) for x in leaves]
    leaves = [jnp.asarray(x) for x in leaves]
    _, flag0, need0 = test(leaves)
    step_fn, jaxpr, n = counted.traced(test, step, leaves, known)
    # What the body records: an error flag, a stack size (constants where it records none,
    # and then the loop's state does not carry them).
    flags, needs = (not counted.zero(v) for v in jaxpr.jaxpr.outvars[-2:])
    # The size needed, where it is the last iteration's, and the error flag, where it is
    # that leaves are not finite, are computed after the loop (`jax_counted`).
    terms = counted.need_terms(jaxpr) if needs else None
    finite = counted.deferred_flags(jaxpr) if flags else None
    test_jaxpr = jax.make_jaxpr(lambda *xs: test(list(xs)))(*leaves) if n is None else None
    if finite is not None and n is None and not counted.bounded(test_jaxpr, jaxpr):
        finite = None
    needs, flags = needs and terms is None, flags and finite is None
    # A test ``not (a == b)`` is ``a != b``, one operation (`jax_counted.comparison`).
    compare = counted.comparison(test_jaxpr) if n is None and not flags else None
    before = leaves

    def body_(carry: Any) -> Any:
        *out, flag, need = step_fn(*carry[0])
        flag = flag | carry[1] if flags else None
        need = jnp.maximum(need, carry[2]) if needs else None
        return out, flag, need

    carry = (leaves, flag0 if flags else None, need0 if needs else None)
    if n is not None:
        # A counted loop: no test, no stop at the first error (it ends all the same).
        if n:
            leaves, flag, need = sums.run(step_fn, jaxpr, n, carry, flags, needs, known)
            flag0, need0 = (flag if flags else flag0), (need if needs else need0)
        counted.finals(jaxpr, known, n, leaves)
        _report(
            counted.flag_after(flag0, finite, leaves),
            counted.need_after(need0, terms, before, leaves),
        )
        return unflat(list(leaves))

    # Counters that step together are carried as one (`jax_induction`).
    shared = induction.shared(jaxpr, test_jaxpr, leaves, known)
    full = shared.expand if shared is not None else list
    if shared is not None:
        whole_step = step_fn

        def step_fn(*xs: Any) -> Any:
            *out, flag, need = whole_step(*full(xs))
            return (*shared.reduce(out), flag, need)

        carry = (shared.reduce(leaves), *carry[1:])

    def cond_(carry: Any) -> Any:
        if compare is not None:
            return compare(*full(carry[0]))
        out, flag, _ = test(full(carry[0]))
        out = jnp.asarray(out, dtype=bool)
        return out & ~(flag | carry[1]) if flags else out & ~flag

    leaves, flag, need = jax.lax.while_loop(cond_, body_, carry)
    leaves = full(leaves)
    # The last test, which ended the loop, may have flagged an error (``1 / y`` with y = 0).
    flag = (flag if flags else flag0) | test(leaves)[1]
    need = need if needs else need0
    _report(
        counted.flag_after(flag, finite, leaves), counted.need_after(need, terms, before, leaves)
    )
    return unflat(list(leaves))


def jax_switch(index: Any, branches: list[Any]) -> Any:
    """``branches[index]()`` as ``lax.switch`` (a Python int index picks the branch now).

    The branches' results may be tuples, records, environments, stacks and closures of
    arrays; if their skeletons differ, each result is fitted in their join (see the
    module's doc).
    """
    import jax

    jnp = _jnp()
    if isinstance(index, (bool, int, np.integer, np.bool_)):
        return branches[int(index)]()
    skeletons: list[Any] = []

    def flat(branch: Any) -> Any:
        def run() -> Any:
            leaves: list[Any] = []
            try:
                got = split(branch(), leaves)
            except Unreachable:
                # A branch never taken (it pops a stack nothing was pushed on): zeros.
                skeletons.append(None)
                return []
            skeletons.append(got)
            return [jnp.asarray(x) for x in leaves]

        return recorded(run)

    i = jnp.asarray(index, dtype=np.int32)
    # Each branch is traced once, to a jaxpr (its result's skeleton recorded); ``lax.switch``
    # replays the jaxprs, each result fitted in the join of the skeletons. Tracing a branch
    # again to fit its result would trace the switches inside it again too: exponential in
    # their depth.
    traced = []
    for b in branches:
        closed, shape = jax.make_jaxpr(flat(b), return_shape=True)()
        traced.append((closed, jax.tree_util.tree_structure(shape)))
    live = [s for s in skeletons if s is not None]
    if not live:
        raise Unreachable("every branch pops a stack nothing was pushed on")
    target = live[0]
    for s in live[1:]:
        target = merge(target, s)

    def replay(k: int) -> Any:
        closed, tree = traced[k]
        skeleton = skeletons[k]

        def run() -> Any:
            flat_out = jax.core.eval_jaxpr(closed.jaxpr, closed.consts)
            leaves, flag, need = jax.tree_util.tree_unflatten(tree, flat_out)
            if skeleton == target:
                return leaves, flag, need
            out: list[Any] = []
            if skeleton is None:
                zeros(target, out)
            else:
                fit(skeleton, iter(leaves), target, out)
            return out, flag, need

        return run

    runs = [replay(k) for k in range(len(branches))]
    if all(s == target for s in skeletons) and _cheap([closed for closed, _ in traced]):
        # The branches pass on values computed before (the arms of an ``if`` that jump to
        # one place) or compute a few scalars: all of them run, and their results are
        # selected (no conditional for XLA to compile and run).
        outs = [jax.tree_util.tree_leaves(run()) for run in runs]
        which = i != 0 if len(runs) == 2 else jnp.clip(i, 0, len(runs) - 1)
        *leaves, flag, need = [_select(which, xs) for xs in zip(*outs)]
    else:
        leaves, flag, need = jax.lax.switch(i, runs)
    _report(flag, need)
    return join(target, iter(leaves))


#: The most scalar operations of the branches of a ``switch`` that runs them all (`_cheap`).
CHEAP_OPERATIONS = 256


def _cheap(closed: list[Any]) -> bool:
    """Whether the branches of these closed jaxprs can all run, their results then selected.

    They can when together they are at most `CHEAP_OPERATIONS` operations on scalars, with
    no effects and no inner jaxprs (conditionals, loops), and the results that differ
    between them are scalars (a select of arrays would read them all).
    """
    from jax.extend.core import Literal, jaxprs_in_params

    eqns = [e for c in closed for e in c.jaxpr.eqns]
    if len(eqns) > CHEAP_OPERATIONS:
        return False
    for e in eqns:
        if e.effects or any(True for _ in jaxprs_in_params(e.params)):
            return False
        if any(getattr(v.aval, "shape", None) != () for v in (*e.invars, *e.outvars)):
            return False

    def source(c: Any, v: Any) -> Any:
        # What an output is: a constant, a value from before the switch, or computed.
        if isinstance(v, Literal):
            return ("literal", repr(v.val))
        if v in c.jaxpr.constvars:
            return ("before", id(c.consts[c.jaxpr.constvars.index(v)]))
        return ("computed", id(v))

    for outs in zip(*(c.jaxpr.outvars for c in closed)):
        kinds = {source(c, v) for c, v in zip(closed, outs)}
        if len(kinds) > 1 and getattr(outs[0].aval, "shape", None) != ():
            return False
    return True


def _select(which: Any, values: tuple[Any, ...]) -> Any:
    """``values[which]`` (`which`: a traced boolean for two values), one value if all are."""
    import jax

    if all(v is values[0] for v in values):
        return values[0]
    return jax.lax.select_n(which, *map(_jnp().asarray, values))


def jax_select(index: Any, values: list[Any]) -> Any:
    """The value ``values[index]`` (computed while tracing), which may hold functions.

    A loop that exits at several places returns one of several values (each exit's): their
    data is chosen by ``lax.switch``, and a function among them is a union of the functions
    of the exits (the backward pass of a loop's gradient), called by ``lax.switch``.
    """
    if isinstance(index, (bool, int, np.integer, np.bool_)):
        return values[int(index)]
    return jax_switch(index, [lambda v=v: v for v in values])


def jax_cond(c: Any, then: Any, other: Any) -> Any:
    """``then() if c else other()`` as ``lax.cond`` (a Python bool picks the branch now)."""
    if isinstance(c, (bool, np.bool_)):
        return then() if c else other()
    return jax_switch(_jnp().asarray(c, dtype=bool).astype(np.int32), [other, then])


def jax_not(x: Any) -> Any:
    """``not x`` of a traced boolean."""
    if isinstance(x, (bool, np.bool_)):
        return not x
    return _jnp().logical_not(x)


# Reading environments -------------------------------------------------------------------------


def _fits_type(value: Any, a: Any) -> bool:
    """Whether `value` may be a value of abstract type `a` (its structure and shapes)."""
    if isinstance(value, Union):
        return any(_fits_type(v, a) for v in value.alts)
    if isinstance(a, AbstractTuple):
        return (
            isinstance(value, tuple)
            and len(value) == len(a.elements)
            and all(map(_fits_type, value, a.elements))
        )
    if isinstance(a, AbstractRecord):
        return type(value) is a.cls and all(
            _fits_type(getattr(value, n), f) for n, f in zip(a.names, a.fields)
        )
    if isinstance(a, (AbstractScalar, AbstractArray)):
        if not (isinstance(value, (bool, int, float, complex)) or hasattr(value, "shape")):
            return False
        return tuple(np.shape(value)) == tuple(getattr(a, "shape", ()))
    if a is ENV:
        return isinstance(value, EnvInstance)
    return True


def resolve(value: Any, a: Any) -> Any:
    """`value` without the alternatives of its unions that are not of abstract type `a`.

    A value that is not of type `a` at all is read on a path that is never taken (a branch
    traced with the environment of another exit): `Unreachable`.
    """
    if not _fits_type(value, a):
        raise Unreachable("a value read as a type it does not have")
    if isinstance(value, Union):
        ok = [k for k, v in enumerate(value.alts) if _fits_type(v, a)]
        if len(ok) == 1:
            return resolve(value.alts[ok[0]], a)
        table = _jnp().asarray([ok.index(k) if k in ok else 0 for k in range(len(value.alts))])
        return jax_switch(table[value.index], [lambda v=value.alts[k]: resolve(v, a) for k in ok])
    if isinstance(a, AbstractTuple) and isinstance(value, tuple):
        return tuple(resolve(v, e) for v, e in zip(value, a.elements))
    if isinstance(a, AbstractRecord) and type(value) is a.cls:
        return rt.record_constructor(a.cls)(
            *(resolve(getattr(value, n), f) for n, f in zip(a.names, a.fields))
        )
    return value


def env_sens(env: Any, key: Any, typ: Any) -> Any:
    """``env_sens(env, key, typ)``: the value under `key`, of the alternative of type `typ`."""
    return resolve(env.contents[key], typ)


def env_getsens(env: Any, key: Any, typ: Any) -> Any:
    """``env_getsens(env, key, like)``: the value under `key`, or zeros of type `typ`."""
    if key in env.contents:
        return resolve(env.contents[key], typ)
    return rt.placeholder(typ)

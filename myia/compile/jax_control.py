"""The control flow of the JAX backend's code: loops and branches over Myia's values, in XLA.

The generated code (`myia.compile.jax_codegen`) calls these where the NumPy backend's code
uses Python's own control flow:

- `jax_while`, `jax_switch`, `jax_cond`, `jax_select`: ``lax.while_loop``, ``lax.switch``
  and ``lax.cond``, with the error flags and stack sizes of their bodies carried out
  (`recorded`).

A value crosses ``lax`` as its skeleton and its leaves (`myia.compile.jax_skeletons`); the
branches of a ``lax.switch``, and a loop's state before and after an iteration, must have
one skeleton, and values of different skeletons are joined there. Calling a
`jax_runtime.Union` is a ``lax.switch`` over its alternatives; `env_sens` reads the
alternative of the type it expects (the others are never taken when that read runs).

A ``lax.switch`` is traced once; only if its branches give different skeletons is it traced
again, each branch's value fitted in the joined skeleton. A loop whose state changes
skeleton is traced again with the joined skeleton as its state, until it settles.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import ENV, AbstractArray, AbstractRecord, AbstractScalar, AbstractTuple
from ..primitives.grad import EnvInstance
from . import jax_counted as counted
from . import jax_induction as induction
from . import jax_lags as lags
from . import jax_runtime as rt
from . import jax_sums as sums
from .jax_runtime import (
    Trace,
    Union,
    Unreachable,
    to_carry,
)
from .jax_skeletons import fit, join, merge, split, zeros


def _jnp() -> Any:
    import jax.numpy as jnp

    return jnp


def recorded(fn: Any) -> Any:
    """`fn`, returning also its error flag and the stack size it needed.

    Each is an array, or a Python value where it is known when tracing (`jax_runtime.either`).
    """

    def run(*args: Any) -> Any:
        Trace.flags.append([])
        Trace.needs.append([])
        try:
            out = fn(*args)
        finally:
            flags, needs = Trace.flags.pop(), Trace.needs.pop()
        flag: Any = False  # Python values where known when tracing (`jax_runtime.either`)
        for f in flags:
            flag = rt.either(flag, f)
        need: Any = 0
        for n in needs:
            need = rt.larger(need, n)
        return out, flag, need

    return run


def _report(flag: Any, need: Any) -> None:
    rt.check(flag, None)
    rt._need(need)


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
    unlinked: set[int] = set()  # the buffers not assumed lagging (`jax_lags`)
    for _ in range(8):
        try:
            return _while(cond, body, types_, first, init, skeleton, owner, varied, unlinked)
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
    unlinked: set[int],
) -> Any:
    import jax

    jnp = _jnp()
    leaves: list[Any] = []
    fit(first, iter(init), skeleton, leaves)
    # A stack buffer whose rows are one value stays so where the body passes it on (not
    # assumed where that value is in the state: it is then likely to change), nor where its
    # rows are elsewhere since an earlier loop (`jax_lags`, below).
    lagged = {p: x for p, x in lags.lags(leaves).items() if p not in unlinked}
    rows = {
        j: u
        for j, u in enumerate(map(rt.uniform, leaves))
        if u and j not in varied and j not in lagged and not any(u[0] is x for x in leaves)
    }
    # A buffer pushing the value the state carries one iteration behind another, or rows of
    # an array at a counter (`jax_lags`): not one assumed to hold one row, which the body
    # would then seem to pass on as it is (its first push an argument's).
    links = [
        k for k in lags.candidates(leaves, rt.known) if k.p not in unlinked and k.p not in rows
    ]

    def unflat(xs: Any, inside: bool = False) -> Any:
        for j, u in rows.items():
            rt.same(xs[j], *u)
        lags.relag(lagged, xs)
        if inside:
            lags.mark(links, xs)
        return join(skeleton, iter(xs))

    used: list[lags.Link] = []
    sources: list[Any] = []  # by link used: the array whose rows P holds, or None

    def flat_body(xs: Any) -> Any:
        out: list[Any] = []
        try:
            got = split(to_carry(body(unflat(xs, True)), types_), out)
        except Unreachable:
            # The body pops a stack nothing was pushed on: it never runs.
            return [jnp.asarray(x) for x in xs]
        changed = {j for j in rows if got != skeleton or out[j] is not xs[j]}
        kept, broken = lags.kept(links, xs, out)
        if got != skeleton:
            kept, broken = [], kept + broken
        # A lagging buffer is read from its Q only where the body pushes on neither.
        broken += [
            lags.Link(p, q, -1, 0)
            for p, (q, *_) in lagged.items()
            if got != skeleton or out[p] is not xs[p] or (q >= 0 and out[q] is not xs[q])
        ]
        if changed or broken:
            varied.update(changed)
            unlinked.update(k.p for k in broken)
            raise _Widen(owner, skeleton)
        used[:], sources[:] = kept, lags.sources(kept, xs)
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
    failing = [k.p for k, x in zip(used, sources) if not lags.holds(jaxpr, k, x)]
    if failing:
        unlinked.update(failing)
        raise _Widen(owner, skeleton)
    # What the body records: an error flag, a stack size (constants where it records none,
    # and then the loop's state does not carry them).
    flags, needs = (not counted.zero(v) for v in jaxpr.jaxpr.outvars[-2:])
    # The size needed, where it is the last iteration's, and the error flag, where it is
    # that leaves are not finite, are computed after the loop (`jax_counted`).
    terms = counted.need_terms(jaxpr) if needs else None
    test_jaxpr = jax.make_jaxpr(lambda *xs: test(list(xs)))(*leaves) if n is None else None
    # Deferred flags need a loop that ends whatever its values: counted, or `bounded`.
    bound = counted.bounded(test_jaxpr, jaxpr) if n is None else None
    ends = n is not None or bound is not None
    deferred = counted.deferred_flags(jaxpr, bound) if flags and ends else None
    needs, flags = needs and terms is None, flags and deferred is None
    # A test ``not (a == b)`` is ``a != b``, one operation (`jax_counted.comparison`).
    compare = counted.comparison(test_jaxpr) if n is None and not flags else None
    before = leaves

    def body_(carry: Any) -> Any:
        *out, flag, need = step_fn(*carry[0])
        flag = flag | carry[1] if flags else None
        need = jnp.maximum(need, carry[2]) if needs else None
        return out, flag, need

    carry = (
        leaves,
        jnp.asarray(flag0, dtype=bool) if flags else None,
        jnp.asarray(need0, dtype=np.int64) if needs else None,
    )
    if n is not None:
        # A counted loop: no test, no stop at the first error (it ends all the same).
        if n:
            leaves, flag, need = sums.run(step_fn, jaxpr, n, carry, flags, needs, known)
            flag0, need0 = (flag if flags else flag0), (need if needs else need0)
        counted.finals(jaxpr, known, n, leaves)
        _report(
            counted.flag_after(flag0, deferred, before, leaves),
            counted.need_after(need0, terms, before, leaves),
        )
        leaves = list(leaves)
        lags.lagging(before, leaves, used, sources)
        return unflat(leaves)

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
        stop = rt.either(flag, carry[1]) if flags else flag
        return out if rt.concrete(stop) is False else out & ~jnp.asarray(stop, dtype=bool)

    def loop(carry: Any) -> Any:
        return jax.lax.while_loop(cond_, body_, carry)

    # An error flagged before a loop skips it: the state that error left (a forward loop
    # stopped at it, a stack popped back past its start) may never end it, and the call
    # runs again on the host anyway. Named rewrite:
    #     while test(x): ...  =>  if not flagged_before: while test(x): ...
    earlier = rt.flagged()
    if rt.concrete(earlier) is False:
        leaves, flag, need = loop(carry)
    else:
        skip = jnp.asarray(earlier, dtype=bool)
        leaves, flag, need = jax.lax.cond(skip, lambda c: c, loop, carry)
    leaves = full(leaves)
    # The last test, which ended the loop, may have flagged an error (``1 / y`` with y = 0).
    flag = rt.either(flag if flags else flag0, test(leaves)[1])
    need = need if needs else need0
    _report(
        counted.flag_after(flag, deferred, before, leaves, bound),
        counted.need_after(need, terms, before, leaves),
    )
    leaves = list(leaves)
    lags.lagging(before, leaves, used, sources)
    return unflat(leaves)


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
    raised: list[bool] = []

    def flat(branch: Any) -> Any:
        def run() -> Any:
            leaves: list[Any] = []
            try:
                value = branch()
                if value is rt.RAISED:
                    # A branch that raises (its flag is up where it is taken): zeros.
                    raised.append(True)
                    skeletons.append(None)
                    return []
                got = split(value, leaves)
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
    if not live and raised:
        # Every branch that may be taken raises: so does this path.
        return rt.raise_flagged(Exception)
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
    # Where no branch flags an error or pushes, neither does the switch: none to report (a
    # constant in its place would be a status read back after each call, see `recorded`).
    if all(counted.zero(v) for closed, _ in traced for v in closed.jaxpr.outvars[-2:]):
        flag, need = False, 0
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
    """The value ``values[index]()`` (computed while tracing), which may hold functions.

    A loop that exits at several places returns one of several values (each exit's): their
    data is chosen by ``lax.switch``, and a function among them is a union of the functions
    of the exits (the backward pass of a loop's gradient), called by ``lax.switch``. Each
    value is computed in its branch: an exit may read what only its own path assigned
    (`Unreachable` elsewhere: that branch gives zeros).
    """
    if isinstance(index, (bool, int, np.integer, np.bool_)):
        return values[int(index)]()
    return jax_switch(index, values)


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
    if value is rt.UNSET:  # before ``hasattr``: reading its attributes raises `Unreachable`
        return False
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

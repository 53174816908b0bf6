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
traced once, and its jaxpr is what the loop runs. It also finds, in any loop, what the body
records that XLA can compute once after the loop instead of in every iteration (on a CPU,
each result of a loop's body is a kernel of its own): the stack size needed, where it is the
last iteration's (`need_terms`), and the error flag, where it is that a state variable is
not finite and stays so, or that a counter steps past int64 (`deferred_flags`, for a loop
that ends whatever its values: `bounded`); and a test ``not (a == b)`` as one comparison
(`comparison`).
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

import numpy as np

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


def _compared(test_jaxpr: Any) -> tuple[Any, bool]:
    """``(comparison, negated)``: the test's condition is a comparison under ``not``s.

    ``(None, False)`` where it is not, or where the test may flag an error or need rows.
    """
    jaxpr = test_jaxpr.jaxpr
    if len(jaxpr.outvars) != 3 or not all(map(zero, jaxpr.outvars[1:])):
        return None, False
    defs = _defining(jaxpr)
    eqn = defs(jaxpr.outvars[0])
    negate = False
    while eqn is not None and eqn.primitive.name == "not":
        negate = not negate
        eqn = defs(eqn.invars[0])
    if eqn is None or eqn.primitive.name not in _COMPARE:
        return None, False
    return eqn, negate


def test_form(test_jaxpr: Any, known: list[int | None]) -> Any:
    """``(op, counter leaf, bound, bound leaf)``: the test is ``counter op bound``.

    `test_jaxpr` is the closed jaxpr of the test on the loop's leaves (its outputs: the
    condition, the error flag, the stack size needed); `known` the leaves' known values. The
    counter's start is known, the bound a constant or a known leaf (`bound leaf`, else None).
    None where the test is of another form, or may flag an error.
    """
    jaxpr = test_jaxpr.jaxpr
    eqn, negate = _compared(test_jaxpr)
    if eqn is None or len(eqn.invars) != 2:
        return None
    index = _index(jaxpr)
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


def traced(test: Any, step: Any, leaves: list[Any], known: list[int | None]) -> Any:
    """``(body, jaxpr, trip count)``: the loop's body, its jaxpr and its trip count.

    The body is the loop's body traced once, to a jaxpr (which tells what it records), and
    replayed: a function of the leaves whose flat outputs are the leaves, the error flag and
    the stack size needed. The trip count is known where the test has the form of a
    counted loop (`test_form`) and the body confirms it; else it is None.
    """
    import jax
    from jax.extend.core import jaxpr_as_fun

    def flat_step(*xs: Any) -> Any:
        out, flag, need = step(list(xs))
        return (*out, flag, need)

    jaxpr = jax.make_jaxpr(flat_step)(*leaves)
    if all(n is None for n in known):
        return jaxpr_as_fun(jaxpr), jaxpr, None
    form = test_form(jax.make_jaxpr(lambda *xs: test(list(xs)))(*leaves), known)
    n = None if form is None else trip_count(form, jaxpr, known)
    return jaxpr_as_fun(jaxpr), jaxpr, n


# What a loop's body records, computed out of the body -------------------------------------------


def need_terms(body_jaxpr: Any) -> list[tuple[int, int, int]] | None:
    """``[(k, c, step)]`` where the body's stack size needed is ``max(leaf_k + c)`` of them.

    Each leaf `k` is a counter that adds `step` > 0 every iteration (a stack the body pushes
    on): the largest size the loop needs is then that of its last iteration, computed once
    after it from the final counters (`need_after`) instead of carried through every
    iteration. Named rewrite:

        need = max(need, count + c) in every iteration  =>  need = final count - step + c

    None where the size needed has another form (a push under a branch, an inner loop).
    """
    jaxpr = body_jaxpr.jaxpr
    defs, index = _defining(jaxpr), _index(jaxpr)
    terms: list[tuple[int, int, int]] = []

    def walk(v: Any, c: int) -> bool:
        lit = _literal(v)
        if lit is not None:
            return lit + c <= 0  # at most 0: no row needed
        k = index(v)
        if k is not None:
            step = _step(body_jaxpr, k)
            if step is None or step <= 0:
                return False
            terms.append((k, c, step))
            return True
        eqn = defs(v)
        if eqn is None:
            return False
        name, ins = eqn.primitive.name, eqn.invars
        if name == "max":
            return all(walk(x, c) for x in ins)
        if name == "convert_element_type":
            return walk(ins[0], c)
        if name in ("add", "sub") and _literal(ins[1]) is not None:
            return walk(ins[0], c + (_literal(ins[1]) if name == "add" else -_literal(ins[1])))
        if name == "add" and _literal(ins[0]) is not None:
            return walk(ins[1], c + _literal(ins[0]))
        return False

    return terms if walk(jaxpr.outvars[-1], 0) and terms else None


def need_after(need: Any, terms: Any, before: list[Any], after: list[Any]) -> Any:
    """`need`, and the size the loop's iterations needed where `terms` (`need_terms`) say.

    `before` and `after` are the loop's leaves before and after it.
    """
    import jax.numpy as jnp

    for k, c, step in terms or ():
        a, b = _known_or(after[k]), _known_or(before[k])
        if _ints(a, b):  # known when tracing: no status to read back
            need = rt.larger(need, a - step + c if a != b else 0)
            continue
        ran = after[k] != before[k]
        need = rt.larger(need, jnp.where(ran, after[k] - step + c, 0).astype("int64"))
    return need


def _known_or(x: Any) -> Any:
    """Integer `x` as a Python int where it is known when tracing, else as it is.

    A known value past int64 is left as it is: the traced counter wrapped around there, as
    the tests after the loop must see.
    """
    k = rt.known(x)
    return x if k is None or not -(2**63) <= k < 2**63 else k


def _ints(*xs: Any) -> bool:
    return all(type(x) is int for x in xs)


def flag_after(
    flag: Any, deferred: Deferred | None, before: list[Any], after: list[Any], bound: Any = None
) -> Any:
    """`flag`, or where what `deferred_flags` tests after the loop flags.

    A leaf not finite; a counter that went past int64 (it wrapped around: it ends on the
    other side of its start, from which fewer than 2 ** 64 steps lead back; a loop of a
    counter `bound` that ran that many steps, 2 ** 46 iterations at least, is flagged too).
    """
    import jax.numpy as jnp

    if deferred is None:
        return flag
    for k in deferred.finite:
        flag = rt.either(flag, ~jnp.isfinite(after[k]))
    for k, step in deferred.counters:
        a, b = _known_or(after[k]), _known_or(before[k])
        flag = rt.either(flag, (a < b) if step > 0 else (a > b))
    for k, step, test in deferred.rays:
        a, b = _known_or(after[k]), _known_or(before[k])
        ran = a != b
        flag = rt.either(
            flag,
            ran and (test(b) or test(a - step))
            if _ints(a, b)
            else ran & (test(b) | test(a - step)),
        )
    if deferred.counters and bound is not None:
        j, _, step_j = bound
        ran = jnp.abs(after[j].astype("float64") - before[j].astype("float64")) / abs(step_j)
        most = max(abs(step) for _, step in deferred.counters)
        flag = flag | (ran * most >= 2.0**62)
    return flag


#: Operations whose result is not finite where the given operand is not (any operand: None).
_STRICT = {
    "add": None, "sub": None, "mul": None, "div": 0, "neg": 0, "abs": 0, "sin": 0, "cos": 0,
    "tan": 0, "sqrt": 0, "log": 0, "log1p": 0, "copy": 0, "copy_p": 0,
}  # fmt: skip


def _strict(body_jaxpr: Any, k: int) -> bool:
    """Whether the body's new leaf `k` is not finite wherever its old value is not."""
    jaxpr = body_jaxpr.jaxpr
    defs, invar = _defining(jaxpr), jaxpr.invars[k]

    def strict(v: Any) -> bool:
        if v is invar:
            return True
        eqn = defs(v)
        if eqn is None or eqn.primitive.name not in _STRICT:
            return False
        which = _STRICT[eqn.primitive.name]
        ins = eqn.invars if which is None else eqn.invars[which : which + 1]
        return any(map(strict, ins))

    dtype = getattr(invar.aval, "dtype", None)
    return dtype is not None and dtype.kind == "f" and strict(jaxpr.outvars[k])


class Deferred(NamedTuple):
    """What `deferred_flags` tests after a loop.

    `finite` leaves, `counters` ``(k, step)``, `rays` ``(k, step, test)``: a test of counter
    `k` made at its first and last values.
    """

    finite: list[int]
    counters: list[tuple[int, int]]
    rays: list[tuple[int, int, Any]] = []


_INT64 = np.iinfo(np.int64)

#: The largest step of a counter whose check past int64 is made after the loop.
STEP_LIMIT = 2**16


def _own_step(body_jaxpr: Any, eqn: Any, index: Any) -> int | None:
    """The leaf `k` whose own step equation `eqn` checks (`jax_checks.check_step`), else None.

    The body adds a constant ``c`` to leaf `k` (at most `STEP_LIMIT`), and `eqn` is the
    check that this does not pass int64: ``k > max - c`` (``k < min - c`` for ``c < 0``).
    """
    if eqn.primitive.name not in ("gt", "lt") or len(eqn.invars) != 2:
        return None
    k, bound = index(eqn.invars[0]), _literal(eqn.invars[1])
    step = None if k is None else _step(body_jaxpr, k)
    if bound is None or not step or abs(step) > STEP_LIMIT:
        return None
    if eqn.primitive.name == "gt" and step > 0 and bound == _INT64.max - step:
        return k
    if eqn.primitive.name == "lt" and step < 0 and bound == _INT64.min - step:
        return k
    return None


def never_past(counter: Any) -> bool:
    """Whether bounding `counter` ``(k, op, step)`` (`bounded`) never steps past int64.

    ``k < n`` then ``k += 1``: `k` is below `n`, at most int64's largest, before each step.
    """
    _, op, step = counter
    return (op, step) in (("lt", 1), ("gt", -1))


def deferred_flags(body_jaxpr: Any, counter: Any = None) -> Deferred | None:
    """What to test once after the loop for the body's error flag; None: the flag is carried.

    The body flags exactly where a leaf of the loop's state is not finite when an iteration
    starts (``math.sin(y)`` of the state's y), and each such leaf stays not finite through
    the body (``y = math.sin(y) * 0.5 + y``: sine, sums and products of a value that is not
    finite are not); or where a counter (a Python int the body adds a constant to, `k + 1`)
    goes past int64 (`jax_checks.check_step`). Some iteration then flags if and only if the
    leaf is not finite after the loop, or the last iteration overflowed it (the call runs
    again on the host: the same result, later), or the counter wrapped around (it ends on
    the other side of its start): the test is made once after the loop, and no flag is
    computed nor carried in its iterations (on a CPU, XLA runs each result of a body as a
    kernel of its own). The loop must end whatever its values (a counted loop, or one that
    `bounded` gives `counter`): the check of that counter's own step is dropped where it
    never flags (`never_past`), else the flag is carried (a counter wrapped around would
    not end the loop). Named rewrites:

        f = f | not isfinite(y) in every iteration  =>  f = not isfinite(y) after the loop
            (where y stays not finite once it is not)
        f = f | (k > max - c); k = k + c in every iteration  =>  f = k_after < k_before
    """
    from jax.extend.core import Literal, jaxprs_in_params

    jaxpr = body_jaxpr.jaxpr
    defs, index = _defining(jaxpr), _index(jaxpr)
    found = Deferred([], [], [])
    stepped: set[int] = set()  # counters that cannot wrap around unflagged

    def walk(v: Any) -> bool:
        if isinstance(v, Literal):
            return not bool(v.val)
        eqn = defs(v)
        if eqn is None:
            return False
        if eqn.primitive.name == "or":
            return all(map(walk, eqn.invars))
        if eqn.primitive.name == "reduce_or" and not getattr(eqn.invars[0].aval, "shape", 1):
            return walk(eqn.invars[0])  # ``any`` of one value
        k = _own_step(body_jaxpr, eqn, index)
        if k is not None:
            if counter is not None and k == counter[0]:
                stepped.add(k)
                return never_past(counter)  # its wrapping around would not end the loop
            found.counters.append((k, _step(body_jaxpr, k)))
            stepped.add(k)
            return True
        ray = _ray(body_jaxpr, eqn, defs, index)
        if ray is not None:
            found.rays.append(ray)
            return True
        inner = defs(eqn.invars[0]) if eqn.primitive.name == "not" else None
        if inner is None or inner.primitive.name != "is_finite":
            return False
        k = index(inner.invars[0])
        if k is None or not _strict(body_jaxpr, k):
            return False
        found.finite.append(k)
        return True

    def loops(j: Any) -> bool:
        return any(
            e.primitive.name == "while" or any(map(loops, jaxprs_in_params(e.params)))
            for e in j.eqns
        )

    if loops(jaxpr) or not walk(jaxpr.outvars[-2]):
        return None  # an inner loop may read the leaf, and not end where it is not finite
    if any(k not in stepped for k, _, _ in found.rays):
        return None  # a counter that may wrap around is not monotonic
    return Deferred(sorted(set(found.finite)), sorted(set(found.counters)), found.rays)


def _ray(body_jaxpr: Any, eqn: Any, defs: Any, index: Any) -> tuple[int, int, Any] | None:
    """``(k, step, test)`` where `eqn` compares ``k + c`` with a constant, else None.

    `k` is a counter the body steps by a constant `step`, and `c` lies between 0 and `step`
    (so that ``k + c`` wraps around only where stepping `k` does, which is flagged). Over the
    iterations ``k + c`` is monotonic, so the comparison (a ray: ``i < a``, ``i >= b``) holds
    in some iteration if and only if it holds in the first or the last: an index of a
    counter out of bounds (`jax_checks.check_bounds`). ``test(k)`` makes it for a value
    of `k`. Named rewrite:

        f = f | (k + c < a) in every iteration  =>  f = (k0 + c < a) | (k_last + c < a)
    """
    if eqn.primitive.name not in ("lt", "le", "gt", "ge") or len(eqn.invars) != 2:
        return None
    x, y = eqn.invars
    v = x if _literal(y) is not None else y if _literal(x) is not None else None
    chain: list[int] = []  # the constants added
    while v is not None and index(v) is None:
        e = defs(v)
        if e is None or e.primitive.name not in ("add", "sub") or len(e.invars) != 2:
            return None
        a, b = e.invars
        if _literal(b) is not None:
            chain.append(_literal(b) * (1 if e.primitive.name == "add" else -1))
            v = a
        elif e.primitive.name == "add" and _literal(a) is not None:
            chain.append(_literal(a))
            v = b
        else:
            return None
    k = None if v is None else index(v)
    step = None if k is None else _step(body_jaxpr, k)
    c = sum(chain)
    if not step or abs(step) > STEP_LIMIT or not (0 <= c * step <= step * step):
        return None
    if any(add * step < 0 for add in chain):
        return None

    compare = getattr(operator, eqn.primitive.name)

    def test(value: Any) -> Any:
        value = value + c if c else value
        a, b = (value if _literal(o) is None else _literal(o) for o in eqn.invars)
        return compare(a, b)

    return k, step, test


def bounded(test_jaxpr: Any, body_jaxpr: Any) -> tuple[int, str, int] | None:
    """``(k, op, step)`` where the loop ends after a number of iterations fixed when it starts.

    Its test is ``leaf_k op bound``: a counter that the body steps by a constant towards a
    bound that the body does not change (``i < n``, ``i += 1``): the loop ends whatever its
    other values (as long as the counter does not wrap around, `never_past`). Else None.
    """
    jaxpr = test_jaxpr.jaxpr
    eqn, negate = _compared(test_jaxpr)
    if eqn is None or eqn.primitive.name not in ("lt", "le", "gt", "ge"):
        return None
    defs, index = _defining(jaxpr), _index(jaxpr)
    op = _NEGATED[eqn.primitive.name] if negate else eqn.primitive.name

    def fixed(v: Any) -> bool:  # a constant or a value from before the loop
        if _literal(v) is not None or v in jaxpr.constvars:
            return True
        e = defs(v)
        return e is not None and e.primitive.name == "convert_element_type" and fixed(e.invars[0])

    a, b = eqn.invars
    for counter, bound, mirror in ((a, b, False), (b, a, True)):
        k, j = index(counter), index(bound)
        if k is None or (j is None and not fixed(bound)):
            continue
        if j is not None and _step(body_jaxpr, j) != 0:
            continue
        step = _step(body_jaxpr, k)
        if step is None:
            continue
        op_k = _MIRRORED[op] if mirror else op
        if (op_k in ("lt", "le") and step > 0) or (op_k in ("gt", "ge") and step < 0):
            return k, op_k, step
    return None


def comparison(test_jaxpr: Any) -> Any:
    """The loop's test as one comparison where it is a negated one, else None.

    On a CPU, XLA tests a loop's condition that is one comparison faster than one of two
    operations; the backward loop of a gradient tests ``not stack_empty(s)``. The result is a
    function of the loop's leaves. Named rewrite:

        not (a == b)  =>  a != b
    """
    import jax
    from jax import lax

    jaxpr = test_jaxpr.jaxpr
    eqn, negate = _compared(test_jaxpr)
    if eqn is None or not negate:
        return None
    op = getattr(lax, _NEGATED[eqn.primitive.name])
    operands = jaxpr.replace(outvars=list(eqn.invars))

    def test(*leaves: Any) -> Any:
        return op(*jax.core.eval_jaxpr(operands, test_jaxpr.consts, *leaves))

    return test

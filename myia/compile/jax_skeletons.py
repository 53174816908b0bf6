"""Values as they cross ``lax``'s control flow: skeletons, leaves and joins.

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
- the empty stack (`EMPTY`, or an `AnyStack` nothing was pushed on) and a stack: an empty
  stack of buffers;
- two functions of one code: their closed-over values joined;
- values of different structures (two functions of different code, tuples of different
  lengths): a `jax_runtime.Union` of both, its index traced. Calling a union is a
  ``lax.switch`` over its alternatives (`myia.compile.jax_control`).
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from ..primitives.grad import EnvInstance
from ..records import field_values, is_record_value
from . import jax_runtime as rt
from .jax_runtime import (
    EMPTY,
    UNSET,
    AnyStack,
    JaxStack,
    Trace,
    Union,
)


def _jnp() -> Any:
    import jax.numpy as jnp

    return jnp


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
    if isinstance(value, tuple) and not is_record_value(value):
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
    if is_record_value(value):
        return ("record", type(value), tuple(split(v, leaves) for v in field_values(value)))
    if value is UNSET:  # before ``hasattr``: reading its attributes raises `Unreachable`
        return ("static", UNSET)
    if isinstance(value, (bool, int, float, np.ndarray, np.generic)) or hasattr(value, "shape"):
        leaves.append(value)
        return ("leaf", tuple(np.shape(value)), _leaf_dtype(value))
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
    if {ka, kb} == {"stack", "anystack"}:
        stack, other = (a, b) if ka == "stack" else (b, a)
        if other[1] is None:  # an `AnyStack` nothing was pushed on: empty, as `EMPTY`
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
        if ka == "anystack" and kb == "stack":
            return a[1] is None
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
    elif kt == "stack" and kv == "anystack" and v[1] is None:
        _take(leaves, _count(v))  # its count: 0, nothing was pushed on it
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

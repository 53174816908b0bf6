"""A loop body's values at every iteration of a counted loop, rows read as slices.

`jax_hoist` computes some values of a counted loop's body for all its iterations at once.
A ``vmap`` of the body does it, but reads ``x[i]`` at the counter ``i`` as a ``gather`` of
``n`` rows, which XLA runs far slower than a slice of ``x``. This evaluator batches the body
one equation at a time and keeps a counter's values as what they are, ``a + b * k`` for the
iteration ``k``, so that a row read at them is one strided slice. Named rewrite:

    dynamic_slice(x, a + b*k) for k < n  =>  slice(x, a, a + b*(n-1) + 1, b)
        (the iterations whose start is past an edge read that edge's row, as
         dynamic_slice clamps it: the slice's rows are concatenated to copies of it)

Index arithmetic on counters (``convert_element_type``, ``+``/``-`` of a constant, ``<``
against a constant and ``select_n`` on its result: a negative index's normalization) stays
symbolic; every other equation is ``vmap``-ed on the batched operands.

A slice is a copy in XLA: where the rows read are consecutive rows of ``x``'s first axis,
all but a few of them (``x[t]`` for ``t`` in ``range(1, T)``, ``x[t + 1]``), the rows are
``x`` itself, a *window* whose iteration ``k`` is row ``offset + k`` (`Batched.offset`).
What is computed from it alone is computed over all the window's rows (a few more rows
of a product, no copy of ``x``), and the loop reads its rows at the offset. Named rewrite:

    slice(x, a, a + n) for k < n  =>  x, its iteration k at row a + k
        (x's first axis, few rows past the n iterations': `_narrow_enough`; the window is
         cut to its n rows, a slice, where it meets other batched values or the caller
         wants the rows only)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Affine:
    """An integer scalar whose value at iteration ``k`` is ``a + b * k``."""

    a: int
    b: int

    def values(self, n: int) -> range:
        """Its values at the `n` iterations."""
        return range(self.a, self.a + self.b * n, self.b)

    def array(self, n: int, dtype: Any) -> Any:
        """Its values at the `n` iterations, as an array of `dtype`."""
        import jax.numpy as jnp

        return jnp.asarray(self.values(n), dtype)


#: The most rows a window may hold past the iterations', as a fraction of its rows (each is
#: a row of every product computed from it, against a copy of the rows read), or
#: `MIN_EXTRA` rows: a gradient's forward loop, its first iteration taken out of it, runs
#: from ``t = 1`` or ``2`` (``rnn``).
MAX_EXTRA = 1 / 8
MIN_EXTRA = 2


class Batched:
    """An array holding a value at every iteration, on its first axis.

    Iteration ``k``'s value is row ``offset + k``; the rows past the iterations' (a
    window's) are computed and never read. A value computed from counters only has
    `remake`: ``remake(offset, rows)`` computes it over another window (None where it
    cannot), so that it meets a window without cutting it.
    """

    def __init__(self, value: Any, offset: int = 0, remake: Any = None):
        self.value = value
        self.offset = offset
        self.remake = remake

    def window(self) -> tuple[int, int]:
        """Its offset and its number of rows."""
        return self.offset, self.value.shape[0]

    def rows(self, n: int) -> Any:
        """The `n` iterations' values, the rows of the window cut out (a slice)."""
        return cut(self.value, self.offset, n)


def cut(rows: Any, offset: int, n: int) -> Any:
    """Rows ``offset`` to ``offset + n`` of `rows` (a window's iterations): a slice, or `rows`."""
    from jax import lax

    if (offset, rows.shape[0]) == (0, n):
        return rows
    return lax.slice_in_dim(rows, offset, offset + n, axis=0)


def _static_int(v: Any) -> int | None:
    """`v` as a Python int where it is a known integer scalar."""
    import numpy as np

    if isinstance(v, bool | np.bool_):
        return None
    if isinstance(v, int | np.integer):
        return int(v)
    if isinstance(v, np.ndarray) and v.shape == () and v.dtype.kind in "iu":
        return int(v)
    return None


def _static_bool(v: Any) -> bool | None:
    import numpy as np

    if isinstance(v, bool | np.bool_):
        return bool(v)
    if isinstance(v, np.ndarray) and v.shape == () and v.dtype.kind == "b":
        return bool(v)
    return None


#: Integer scalar equations computed when the program is lowered (an index's arithmetic).
_FOLD = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "lt": lambda x, y: x < y,
    "convert_element_type": lambda x: x,
}


def _symbolic(e: Any, ins: list[Any], n: int) -> Any:
    """The symbolic result of equation `e` on counters, or None where it has none."""
    name = e.primitive.name
    if e.primitive.multiple_results:
        return None
    if name == "select_n" and len(ins) == 3 and (p := _static_bool(ins[0])) is not None:
        return ins[2] if p else ins[1]
    static = [_static_int(x) if _static_bool(x) is None else _static_bool(x) for x in ins]
    if name in _FOLD and ins and all(x is not None for x in static):
        if name == "convert_element_type" and e.outvars[0].aval.dtype.kind not in "iu":
            return None
        out = _FOLD[name](*static)
        return None if isinstance(out, int) and not -(2**31) <= out < 2**31 else out
    if not any(isinstance(x, Affine) for x in ins):
        return None
    if name == "convert_element_type" and e.outvars[0].aval.dtype.kind in "iu":
        return ins[0]
    if name in ("add", "sub") and len(ins) == 2:
        x, y = ins
        out = None
        if isinstance(x, Affine) and (c := _static_int(y)) is not None:
            out = Affine(x.a + c if name == "add" else x.a - c, x.b)
        elif name == "add" and isinstance(y, Affine) and (c := _static_int(x)) is not None:
            out = Affine(y.a + c, y.b)
        if out is None or not all(-(2**31) <= v < 2**31 for v in (out.a, out.a + out.b * n)):
            return None
        return out
    if name == "lt" and len(ins) == 2:
        x, y = ins
        if isinstance(x, Affine) and (c := _static_int(y)) is not None:
            seen = {v < c for v in x.values(n)}
        elif isinstance(y, Affine) and (c := _static_int(x)) is not None:
            seen = {c < v for v in y.values(n)}
        else:
            return None
        return seen.pop() if len(seen) == 1 else None
    if name == "dynamic_slice":
        return _row_slice(ins, e.params["slice_sizes"], n)
    return None


def _row_slice(ins: list[Any], sizes: tuple[int, ...], n: int) -> Any:
    """``x[.., a + b*k, ..]`` for every k as a strided slice, or None where it is not one."""
    import jax.numpy as jnp
    from jax import lax

    x, starts = ins[0], ins[1:]
    if isinstance(x, Batched | Affine):
        return None
    axes = [d for d, s in enumerate(starts) if isinstance(s, Affine)]
    if len(axes) != 1 or sizes[axes[0]] != 1:
        return None
    d = axes[0]
    fixed = [_static_int(s) if d2 != d else 0 for d2, s in enumerate(starts)]
    if any(f is None for f in fixed):
        return None
    aff = starts[d]
    dim = x.shape[d]
    if aff.b <= 0:
        return None
    if not all(0 <= f and f + s <= x.shape[k] for k, (f, s) in enumerate(zip(fixed, sizes))):
        return None
    values = list(aff.values(n))
    inside = [k for k, v in enumerate(values) if 0 <= v < dim]
    if not inside:
        return None
    k0, k1 = inside[0], inside[-1] + 1

    def rows_at(first: int, last: int, step: int) -> Any:
        lo = [f if k != d else first for k, f in enumerate(fixed)]
        hi = [f + s if k != d else last + 1 for k, (f, s) in enumerate(zip(fixed, sizes))]
        strides = [step if k == d else 1 for k in range(len(sizes))]
        return jnp.moveaxis(lax.slice(x, lo, hi, strides), d, 0)

    full = all(f == 0 and s == x.shape[k] for k, (f, s) in enumerate(zip(fixed, sizes)) if k != d)
    if d == 0 and aff.b == 1 and (k0, k1) == (0, n) and full and _narrow_enough(n, dim):
        return Batched(jnp.expand_dims(x, 1), values[0])  # x's rows, read at the offset
    rows = rows_at(values[k0], values[k1 - 1], aff.b)
    # XLA clamps a start past an edge to the edge: those iterations read the edge's row.
    if k0:
        edge = rows_at(0, 0, 1)
        rows = jnp.concatenate([jnp.broadcast_to(edge, (k0, *edge.shape[1:])), rows])
    if k1 < n:
        edge = rows_at(dim - 1, dim - 1, 1)
        rows = jnp.concatenate([rows, jnp.broadcast_to(edge, (n - k1, *edge.shape[1:]))])
    return Batched(jnp.expand_dims(rows, d + 1))


def _narrow_enough(n: int, rows: int) -> bool:
    """Whether a window of `rows` rows for `n` iterations holds few enough rows past them."""
    return rows - n <= max(MIN_EXTRA, MAX_EXTRA * rows)


def _batched_eqn(e: Any, ins: list[Any], n: int) -> list[Any]:
    """Equation `e` at every iteration: a ``vmap`` of it on its batched operands.

    Computed over the window of its batched operands where they share one (what counters
    alone give computed at its rows too), else on the iterations' rows of each.
    """
    dtypes = [v.aval.dtype for v in e.invars]
    fixed = {x.window() for x in ins if isinstance(x, Batched) and x.remake is None}
    offset, rows = next(iter(fixed)) if len(fixed) == 1 else (0, n)
    args = _aligned(ins, dtypes, offset, rows, n)
    if args is None:
        offset, rows = 0, n
        args = _aligned(ins, dtypes, offset, rows, n)
    outs = _vmapped(e, args)
    if not any(isinstance(x, Batched) for x in args):
        return outs
    if fixed:
        return [Batched(o, offset) for o in outs]
    # From counters only: computed again for another window where one asks (each once).
    made: dict[tuple[int, int], Any] = {(offset, rows): outs}

    def remake(k: int) -> Any:
        def at(offset: int, rows: int) -> Any:
            if (offset, rows) not in made:
                args = _aligned(ins, dtypes, offset, rows, n)
                made[offset, rows] = None if args is None else _vmapped(e, args)
            outs = made[offset, rows]
            return None if outs is None else Batched(outs[k], offset, at)

        return at

    return [Batched(o, offset, remake(k)) for k, o in enumerate(outs)]


def _vmapped(e: Any, args: list[Any]) -> list[Any]:
    """Equation `e` on `args`, a ``vmap`` on the first axis of the batched ones."""
    import jax

    axes = [0 if isinstance(x, Batched) else None for x in args]
    vals = [x.value if isinstance(x, Batched) else x for x in args]

    def one(*xs: Any) -> Any:
        out = e.primitive.bind(*xs, **e.params)
        return out if e.primitive.multiple_results else [out]

    if not any(a == 0 for a in axes):
        return one(*vals)
    return list(jax.vmap(one, in_axes=axes)(*vals))


def _aligned(ins: list[Any], dtypes: list[Any], offset: int, rows: int, n: int) -> Any:
    """`ins` with the batched ones as `rows` rows, iteration 0 at row `offset`.

    A counter's values, and what counters alone give, are computed at every row (those
    outside the iterations' too); a window that is not the one asked for is cut to the
    `n` iterations' rows where those are asked for. None where a counter's values do not
    fit its type, or a window is not the one asked for.
    """
    import numpy as np

    out = []
    for x, dtype in zip(ins, dtypes):
        if isinstance(x, Affine):
            x = Affine(x.a - x.b * offset, x.b)
            values = x.values(rows)
            if np.dtype(dtype).kind in "iu" and values:
                info, ends = np.iinfo(dtype), (values[0], values[-1])
                if not info.min <= min(ends) <= max(ends) <= info.max:
                    return None
            x = Batched(x.array(rows, dtype), offset)
        elif isinstance(x, Batched) and x.window() != (offset, rows):
            remade = None if x.remake is None else x.remake(offset, rows)
            if remade is None and (offset, rows) != (0, n):
                return None
            x = remade or Batched(x.rows(n))
        out.append(x)
    return out


def evaluate(
    jaxpr: Any, consts: list[Any], leaves: list[Any], counters: dict[int, tuple[int, int]], n: int
) -> list[Any]:
    """The outputs of `jaxpr` at each of `n` iterations, stacked on a first axis.

    `leaves` are its inputs; the leaf ``k`` of `counters` is a counter ``(start, step)``:
    its value at iteration ``i`` is ``start + step * i``, whatever `leaves` holds there.
    """
    return [cut(rows, o, n) for rows, o in windows(jaxpr, consts, leaves, counters, n)]


def windows(
    jaxpr: Any, consts: list[Any], leaves: list[Any], counters: dict[int, tuple[int, int]], n: int
) -> list[tuple[Any, int]]:
    """The outputs of `jaxpr` at each of `n` iterations, each as ``(rows, offset)``.

    As `evaluate`, but an output computed over a window is all its rows: iteration ``i``'s
    value is ``rows[offset + i]``, and ``rows`` may hold rows past the iterations'.
    """
    import jax.numpy as jnp

    ins = [Affine(*counters[k]) if k in counters else x for k, x in enumerate(leaves)]
    outs = _evaluated(jaxpr, consts, ins, n)

    def stacked(x: Any, v: Any) -> tuple[Any, int]:
        if isinstance(x, Batched):
            return x.value, x.offset
        if isinstance(x, Affine):
            return x.array(n, v.aval.dtype), 0
        return jnp.broadcast_to(x, (n, *jnp.shape(x))), 0

    return [stacked(x, v) for x, v in zip(outs, jaxpr.outvars)]


def _evaluated(jaxpr: Any, consts: list[Any], ins: list[Any], n: int) -> list[Any]:
    """The outputs of `jaxpr` on `ins` (counters, rows or values), as symbolic as they go.

    A nested ``jit`` (`lax.dynamic_index_in_dim`'s) is evaluated inside, so that a row read
    at a counter stays a slice.
    """
    from jax.extend.core import Literal

    env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, ins))

    def read(v: Any) -> Any:
        return v.val if isinstance(v, Literal) else env[v]

    for e in jaxpr.eqns:
        args = [read(v) for v in e.invars]
        if e.primitive.name in ("jit", "pjit") and any(isinstance(x, Affine) for x in args):
            inner = e.params["jaxpr"]
            outs = _evaluated(inner.jaxpr, inner.consts, args, n)
        else:
            sym = _symbolic(e, args, n)
            outs = [sym] if sym is not None else _batched_eqn(e, args, n)
        env.update(zip(e.outvars, outs))
    return [read(v) for v in jaxpr.outvars]

"""Testing utilities: check Myia's gradients against finite differences.

`check_grad(fn, *args)` compiles ``grad(fn, ...)`` with Myia and compares it, at `args`, with
central finite differences of ``fn`` (compiled by Myia too), leaf by leaf, then checks the
inner-product identity ``<grad f(x), v> = d/dt f(x + t v)`` for a random direction ``v``.
With ``order=N`` it checks the derivatives up to order N: the gradient of the gradient, and
so on. It raises `AssertionError` naming the argument leaf, the expected and the computed
values. Modelled on JAX's ``check_grads``::

    from myia.testing import check_grad

    def f(x, w):
        return np.sum(np.tanh(x @ w))

    check_grad(f, np.ones((2, 3)), np.ones((3, 4)) / 3, order=2)

Arguments are any structure of tuples, lists, dicts and dataclasses. Float leaves (Python
floats, NumPy float scalars and arrays) are perturbed; integer and boolean leaves are not (the
gradient must be a zero of their type) and ``None`` leaves must have a ``None`` gradient, as
the gradient API promises; a 0-d array's gradient is the NumPy scalar of its dtype.
`check_jvp(fn, *args)` checks forward mode the same way: ``jvp(fn, args, tangents)`` (random
tangents by default) against the central difference ``(f(x + eps t) - f(x - eps t)) / 2 eps``,
output leaf by output leaf; `fn` may return any structure of floats and arrays.
Differences are most accurate in float64, the recommended dtype; the default step and
tolerances depend on the lowest float precision among the arguments.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .api import MyiaFunction, grad, myia
from .primitives import P
from .records import field_names, field_values, is_record_value, make_value

__all__ = ["check_grad", "check_jvp"]

# (eps, rtol, atol) for the lowest float precision among the arguments.
DEFAULTS = {
    "float64": (1e-6, 1e-5, 1e-6),
    "float32": (1e-3, 2e-2, 2e-2),
    "float16": (1e-2, 1e-1, 1e-1),
}


def check_grad(
    fn: Callable[..., Any],
    *args: Any,
    wrt: Any = None,
    order: int = 1,
    eps: float | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    seed: int = 0,
    backend: str | None = None,
) -> None:
    """Check Myia's gradient of `fn` at `args` against central finite differences.

    Args:
        fn: a function returning a float scalar, written in Myia's subset (or a `myia`
            function).
        args: the arguments: floats, NumPy arrays and scalars, and tuples, lists, dicts and
            dataclasses of them; int, bool and None leaves are allowed and not perturbed.
        wrt: what ``grad(fn, *wrt)`` differentiates: a position or a parameter name, or a
            tuple of them; None (the default) differentiates every argument.
        order: check every derivative up to this order. Order ``k`` differentiates the
            gradient of order ``k - 1``: directly (``grad(grad(fn))``) when `fn` has a single
            float scalar argument to differentiate, otherwise through
            ``x -> <grad f(x), v>`` with a fixed random ``v``.
        eps: the step of the finite differences.
        rtol: the relative tolerance, as in `numpy.allclose`.
        atol: the absolute tolerance, as in `numpy.allclose`.
        seed: the seed of the random directions.
        backend: the backend compiling `fn` and its gradients (Myia's default if None).

    Raises:
        AssertionError: a gradient differs from finite differences, or does not have the
            structure, shape or dtype of its argument.
        TypeError: `fn` does not return a float scalar.

    """
    positions, wrt = _wrt(fn, args, wrt)
    d_eps, d_rtol, d_atol = DEFAULTS[_lowest_precision(args)]
    tol = (
        d_eps if eps is None else eps,
        d_rtol if rtol is None else rtol,
        d_atol if atol is None else atol,
    )
    rng = np.random.default_rng(seed)
    name = getattr(fn, "__name__", repr(fn))
    f, g = _compiled(fn, backend), _grad(fn, wrt, backend)
    gradient = _check_order_1(f, g, args, positions, tol, rng, f"grad({name})")
    if order < 2:
        return
    if len(positions) == 1 and _is_float_scalar(args[positions[0]]):
        for k in range(2, order + 1):
            f, g = g, _grad(g, wrt, backend)
            _check_order_1(f, g, args, positions, tol, rng, f"order {k} of {name}")
        return
    # x -> <grad f(x), v> has the gradient of order 2 contracted with v, and so on.
    packed = (args,)
    h = _directional(g, gradient, rng, unpack=True)
    for k in range(2, order + 1):
        hg = _grad(h, (), backend)
        label = f"order {k} of {name} (the gradient of <gradient of order {k - 1}, v>)"
        gradient = _check_order_1(_compiled(h, backend), hg, packed, (0,), tol, rng, label)
        h = _directional(hg, gradient, rng, unpack=False)


# The checks -----------------------------------------------------------------------------------


def _check_order_1(f, g, args, positions, tol, rng, label):
    """Compare ``g(*args)``, the gradient of `f` at `positions`, with finite differences.

    Return the gradient.
    """
    eps, rtol, atol = tol
    value = f(*args)
    if not (
        (isinstance(value, (float, np.floating)) and np.ndim(value) == 0)
        or (type(value) is np.ndarray and value.shape == () and value.dtype.kind == "f")
    ):
        raise TypeError(f"{label}: the function must return a float scalar, not {value!r}")
    gradient = g(*args)
    grads = (gradient,) if len(positions) == 1 else gradient
    if not (isinstance(grads, tuple) and len(grads) == len(positions)):
        raise AssertionError(f"{label}: expected {len(positions)} gradients, got {gradient!r}")
    names = _param_names(f, len(args))
    leaves = []  # (path, argument leaf, gradient leaf) of the float leaves
    for p, gp in zip(positions, grads):
        leaves.extend(_match(args[p], gp, names[p], label))

    def at(path: str, new: Any) -> float:
        return float(f(*_replace(args, names, {path: new})))

    for path, x, gx in leaves:
        expected = np.zeros(np.shape(x))
        for i in np.ndindex(np.shape(x)):
            expected[i] = (at(path, _bump(x, i, eps)) - at(path, _bump(x, i, -eps))) / (2 * eps)
        _assert_close(gx, expected, rtol, atol, f"{label}: the gradient of {path}")
    # <gradient, v> against the derivative of f in the direction v.
    if leaves:
        v = {path: rng.standard_normal(np.shape(x)) for path, x, _ in leaves}
        inner = sum(float(np.sum(np.asarray(gx, np.float64) * v[p])) for p, _, gx in leaves)

        def moved(t: float) -> float:
            new = {p: _cast(x + t * v[p], x) for p, x, _ in leaves}
            return float(f(*_replace(args, names, new)))

        directional = (moved(eps) - moved(-eps)) / (2 * eps)
        _assert_close(inner, directional, rtol, atol, f"{label}: <gradient, v>")
    return gradient


def _assert_close(got: Any, expected: Any, rtol: float, atol: float, what: str) -> None:
    got64 = np.asarray(got, np.float64)
    if not np.allclose(got64, expected, rtol=rtol, atol=atol):
        err = np.abs(got64 - expected)
        where = np.unravel_index(np.argmax(err), err.shape) if err.ndim else ()
        raise AssertionError(
            f"{what}: expected (central differences) {_show(expected)}, got {_show(got)}; "
            f"largest error {err.max():.3g} at index {where} (rtol={rtol}, atol={atol})"
        )


def _show(x: Any) -> str:
    return np.array2string(np.asarray(x), precision=6, threshold=20) if np.ndim(x) else repr(x)


# Structures -----------------------------------------------------------------------------------


def _children(x: Any) -> Iterator[tuple[str, Any]]:
    """Yield the (path suffix, value) of the elements of structure `x` (none for a leaf)."""
    if is_record_value(x):
        yield from ((f".{n}", v) for n, v in zip(field_names(type(x)), field_values(x)))
    elif isinstance(x, (tuple, list)):
        yield from ((f"[{i}]", v) for i, v in enumerate(x))
    elif isinstance(x, dict):
        yield from ((f"[{k!r}]", v) for k, v in x.items())


def _rebuild(x: Any, values: list[Any]) -> Any:
    """Structure `x` with its elements replaced by `values`."""
    if is_record_value(x):
        return make_value(type(x), values)
    if isinstance(x, (tuple, list)):
        return type(x)(values)
    if isinstance(x, dict):
        return dict(zip(x, values))
    raise TypeError(f"not a structure: {type(x).__name__}")


def _is_structure(x: Any) -> bool:
    return isinstance(x, (tuple, list, dict)) or is_record_value(x)


def _is_float(x: Any) -> bool:
    return (isinstance(x, float) and not isinstance(x, bool)) or (
        isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "f"
    )


def _is_float_scalar(x: Any) -> bool:
    return _is_float(x) and np.ndim(x) == 0


def _is_int(x: Any) -> bool:
    return isinstance(x, (bool, int)) or (
        isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "biu"
    )


def _match(x: Any, g: Any, path: str, label: str) -> list[tuple[str, Any, Any]]:
    """Check that gradient `g` has the structure and the types of `x`.

    Its int and bool leaves must be zeros of their type and its None leaves None. Return its
    float leaves, as (path, x, g).
    """

    def fail(why: str) -> AssertionError:
        return AssertionError(f"{label}: the gradient of {path} {why}, got {g!r}")

    if _is_structure(x):
        if type(g) is not type(x):
            raise fail(f"must be a {type(x).__name__}")
        xs, gs = list(_children(x)), list(_children(g))
        if [k for k, _ in xs] != [k for k, _ in gs]:
            raise fail("must have the same elements as the argument")
        return [m for (k, a), (_, b) in zip(xs, gs) for m in _match(a, b, path + k, label)]
    if x is None:
        if g is not None:
            raise fail("must be None")
        return []
    if _is_float(x) or _is_int(x):
        # A 0-d array's is the NumPy scalar of its dtype: results are never 0-d arrays.
        kind = x.dtype.type if isinstance(x, np.ndarray) and x.ndim == 0 else type(x)
        if type(g) is not kind or np.shape(g) != np.shape(x):
            raise fail(f"must be a {kind.__name__} of shape {np.shape(x)}")
        if isinstance(x, (np.ndarray, np.generic)) and g.dtype != x.dtype:
            raise fail(f"must be of dtype {x.dtype}")
        if _is_int(x):
            if np.any(g):
                raise fail("must be zero (integers and booleans have no derivative)")
            return []
        return [(path, x, g)]
    return []


def _replace(args: tuple[Any, ...], names: list[str], new: dict[str, Any]) -> tuple[Any, ...]:
    """`args` with the leaves at the paths of `new` replaced."""

    def walk(x: Any, path: str) -> Any:
        if path in new:
            return new[path]
        if not _is_structure(x) or not any(p.startswith(path) for p in new):
            return x
        return _rebuild(x, [walk(v, path + k) for k, v in _children(x)])

    return tuple(walk(a, n) for a, n in zip(args, names))


def _bump(x: Any, index: tuple[int, ...], delta: float) -> Any:
    """Float leaf `x` with `delta` added to its element at `index`, in its own type."""
    if isinstance(x, np.ndarray):
        y = x.copy()
        y[index] += delta
        return y
    return _cast(x + delta, x)


def _cast(value: Any, like: Any) -> Any:
    if isinstance(like, np.ndarray):
        return np.asarray(value, like.dtype)
    return type(like)(value)


def _lowest_precision(args: Any) -> str:
    floats = [x for x in _leaves(args) if _is_float(x)]
    sizes = [8 if isinstance(x, float) else x.dtype.itemsize for x in floats]
    return {2: "float16", 4: "float32"}.get(min(sizes, default=8), "float64")


def _leaves(x: Any) -> Iterator[Any]:
    if _is_structure(x):
        for _, v in _children(x):
            yield from _leaves(v)
    else:
        yield x


def _random_like(x: Any, rng: np.random.Generator) -> Any:
    """Return a random direction of the structure of `x` (`x` itself on its other leaves)."""
    if _is_structure(x):
        return _rebuild(x, [_random_like(v, rng) for _, v in _children(x)])
    if _is_float(x):
        return _cast(rng.standard_normal(np.shape(x)), x)
    return x


# Functions ------------------------------------------------------------------------------------


def _wrt(fn: Any, args: tuple[Any, ...], wrt: Any) -> tuple[list[int], tuple[Any, ...]]:
    """Return the positions differentiated and the `wrt` arguments of `grad`."""
    if wrt is None:
        wrt = tuple(range(len(args)))
    elif not isinstance(wrt, tuple):
        wrt = (wrt,)
    names = _param_names(fn, len(args))
    positions = [names.index(w) if isinstance(w, str) else w % len(args) for w in wrt]
    return positions, wrt


def _param_names(fn: Any, n: int) -> list[str]:
    try:
        params = list(inspect.signature(getattr(fn, "fn", fn)).parameters)
    except (TypeError, ValueError):
        params = []
    return params[:n] if len(params) >= n else [f"args[{i}]" for i in range(n)]


# The functions checked last, compiled (a check repeated on one function compiles it once).
# Few: each holds its programs, graphs included, for as long as it is cached.
_KEEP = 32


@functools.lru_cache(maxsize=_KEEP)
def _compiled(fn: Any, backend: str | None = None) -> MyiaFunction:
    if isinstance(fn, MyiaFunction):
        return fn
    return myia(fn) if backend is None else myia(fn, backend=backend)


@functools.lru_cache(maxsize=_KEEP)
def _grad(fn: Any, wrt: tuple[Any, ...], backend: str | None = None) -> MyiaFunction:
    return grad(fn, *wrt) if backend is None else grad(fn, *wrt, backend=backend)


def _directional(g: Any, like: Any, rng: np.random.Generator, unpack: bool) -> Any:
    """``args -> <g(*args), v>`` (or ``<g(args), v>``) for a random `v` shaped like `like`."""
    v = _random_like(like, rng)
    if unpack:

        def directional(args):
            return vdot(g(*args), v)

    else:

        def directional(args):
            return vdot(g(args), v)

    return directional


# Written in Myia's subset: the inner product of two structures of the same type.


def vdot(a, b):
    """Return the sum of the products of the float leaves of `a` and `b` (same structures)."""
    if a is None or isinstance(a, (bool, int, np.integer, np.bool_)):
        return 0.0
    if b is None:  # narrows `b` too where both are `T | None` (trees, linked lists)
        return 0.0
    if isinstance(a, (float, np.floating)):
        return P.to_float(a * b)
    if isinstance(a, np.ndarray):
        return P.to_float(np.sum(a * b))
    if isinstance(a, tuple):
        return _vdot_tuple(a, b)
    if isinstance(a, list):
        total = 0.0
        for i in range(len(a)):
            total = total + vdot(a[i], b[i])
        return total
    if isinstance(a, dict):
        return _vdot_tuple(P.dict_values(a), P.dict_values(b))
    return _vdot_tuple(P.record_fields(a), P.record_fields(b))


def _vdot_tuple(a, b):
    if len(a) == 0:
        return 0.0
    return vdot(a[0], b[0]) + _vdot_tuple(a[1:], b[1:])


# Forward mode ---------------------------------------------------------------------------------


def check_jvp(
    fn: Callable[..., Any],
    *args: Any,
    tangents: tuple[Any, ...] | None = None,
    eps: float | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    seed: int = 0,
    backend: str | None = None,
) -> Any:
    """Check Myia's ``jvp(fn, args, tangents)`` against central finite differences.

    Args:
        fn: a function written in Myia's subset, returning any structure of floats and arrays.
        args: the primals, as for `check_grad`.
        tangents: one tangent per argument, of its structure; random (float leaves) if None.
        eps: the step of the finite differences (by default, that of `check_grad`).
        rtol: the relative tolerance, as in `numpy.allclose`.
        atol: the absolute tolerance, as in `numpy.allclose`.
        seed: the seed of the random tangents.
        backend: the backend compiling the `jvp` and `fn` (Myia's default if None).

    Returns:
        The pair ``(value, tangent)`` Myia computed.

    Raises:
        AssertionError: the value differs from ``fn``'s, or the tangent from the differences.

    """
    from .transforms import jvp_

    d_eps, d_rtol, d_atol = DEFAULTS[_lowest_precision(args)]
    eps = d_eps if eps is None else eps
    rtol = d_rtol if rtol is None else rtol
    atol = d_atol if atol is None else atol
    rng = np.random.default_rng(seed)
    if tangents is None:
        tangents = tuple(_random_like(a, rng) for a in args)
    tangents = tuple(_zero_ints(t) for t in tangents)
    f = _compiled(fn, backend)
    opts = {} if backend is None else {"backend": backend}
    out, tan = myia(lambda xs, ts: jvp_(fn, xs, ts), **opts)(tuple(args), tangents)
    name = getattr(fn, "__name__", repr(fn))
    plus = f(*(_step(a, t, eps) for a, t in zip(args, tangents)))
    minus = f(*(_step(a, t, -eps) for a, t in zip(args, tangents)))
    want = [
        (np.asarray(p, dtype=np.float64) - np.asarray(m, dtype=np.float64)) / (2 * eps)
        for p, m in zip(_leaves(plus), _leaves(minus))
    ]
    got = list(_leaves(tan))
    if len(got) != len(want):
        raise AssertionError(f"jvp({name}): the tangent has {len(got)} leaves, not {len(want)}")
    for i, (v, e) in enumerate(zip(_leaves(out), _leaves(f(*args)))):
        _assert_close(v, e, rtol, atol, f"jvp({name}): leaf {i} of the value")
    for i, (g, e) in enumerate(zip(got, want)):
        _assert_close(g, e, rtol, atol, f"jvp({name}): leaf {i} of the tangent")
    return out, tan


def _zero_ints(t: Any) -> Any:
    """Tangent `t` with its integer leaves zero (integers do not move)."""
    if _is_structure(t):
        return _rebuild(t, [_zero_ints(v) for _, v in _children(t)])
    if not _is_int(t):
        return t
    return np.zeros_like(t) if isinstance(t, np.ndarray) else type(t)(0)


def _step(x: Any, t: Any, h: float) -> Any:
    """``x + h t`` on the float leaves of `x` (the others kept)."""
    if _is_structure(x):
        return _rebuild(x, [_step(v, w, h) for (_, v), (_, w) in zip(_children(x), _children(t))])
    if _is_float(x):
        return _cast(np.asarray(x, dtype=np.float64) + h * np.asarray(t, dtype=np.float64), x)
    return x

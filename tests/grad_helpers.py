"""Helpers for the gradient tests: central differences over structured arguments.

`numeric_grad(fn, args, wrt)` perturbs every float leaf (Python floats and float arrays,
element by element) of the arguments named by `wrt` and returns a gradient with the
structure of each argument: int and bool leaves get zero of their type, `None` stays `None`,
as the API promises. `assert_grad_close` compares a Myia gradient with it, structure included.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import numpy as np

EPS = 1e-6


def _is_float_leaf(x: Any) -> bool:
    return isinstance(x, float) or (
        isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.floating)
    )


def _zero_like(x: Any) -> Any:
    """The gradient of a leaf that is not perturbed: zero of its type, None for None."""
    if x is None:
        return None
    if isinstance(x, bool):
        return False
    if isinstance(x, int):
        return 0
    if isinstance(x, float):
        return 0.0
    if isinstance(x, np.ndarray):
        return np.zeros_like(x)
    if isinstance(x, np.generic):
        return type(x)(0)
    raise TypeError(f"no zero for {x!r}")


def _grad_of_arg(f: Any, x: Any) -> Any:
    """The gradient of the scalar function `f` of one structured argument `x`."""
    if isinstance(x, float):
        return (f(x + EPS) - f(x - EPS)) / (2 * EPS)
    if isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.floating):
        out = np.zeros_like(x)
        for i in np.ndindex(x.shape):

            def at(v: float, i: tuple[int, ...] = i) -> float:
                y = x.copy()
                y[i] = v
                return f(y)

            out[i] = _grad_of_arg(at, float(x[i]))
        return out
    if isinstance(x, (tuple, list)):
        parts = []
        for i, item in enumerate(x):

            def at(v: Any, i: int = i) -> Any:
                return f(type(x)([*x[:i], v, *x[i + 1 :]]))

            parts.append(_grad_of_arg(at, item))
        return type(x)(parts)
    if isinstance(x, dict):
        return {k: _grad_of_arg(lambda v, k=k: f({**x, k: v}), x[k]) for k in x}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        fields = {}
        for fld in dataclasses.fields(x):

            def at(v: Any, name: str = fld.name) -> Any:
                return f(dataclasses.replace(x, **{name: v}))

            fields[fld.name] = _grad_of_arg(at, getattr(x, fld.name))
        return type(x)(**fields)
    return _zero_like(x)


def numeric_grad(fn: Any, args: tuple[Any, ...], *wrt: int | str) -> Any:
    """Central differences of `fn` at `args`, with respect to `wrt` (names or positions),
    shaped as `grad(fn, *wrt)` returns it: one gradient, or a tuple of them."""
    names = list(inspect.signature(fn).parameters)
    positions = [names.index(w) if isinstance(w, str) else w for w in (wrt or (0,))]
    grads = []
    for p in positions:

        def at(v: Any, p: int = p) -> Any:
            return fn(*args[:p], v, *args[p + 1 :])

        grads.append(_grad_of_arg(at, args[p]))
    return grads[0] if len(grads) == 1 else tuple(grads)


def assert_grad_close(got: Any, expected: Any, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """`got` has the structure and leaf kinds of `expected`, and close values."""
    if expected is None:
        assert got is None, f"{got!r} is not None"
    elif isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f"{got!r} is not an array"
        assert got.shape == expected.shape and got.dtype == expected.dtype, (got, expected)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    elif isinstance(expected, (tuple, list)):
        assert type(got) is type(expected), f"{got!r}: {type(got)} != {type(expected)}"
        assert len(got) == len(expected), (got, expected)
        for g, e in zip(got, expected):
            assert_grad_close(g, e, rtol, atol)
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and set(got) == set(expected), (got, expected)
        for k in expected:
            assert_grad_close(got[k], expected[k], rtol, atol)
    elif dataclasses.is_dataclass(expected):
        assert type(got) is type(expected), f"{got!r}: {type(got)} != {type(expected)}"
        for fld in dataclasses.fields(expected):
            assert_grad_close(getattr(got, fld.name), getattr(expected, fld.name), rtol, atol)
    elif isinstance(expected, (bool, int)) and not isinstance(expected, float):
        assert type(got) is type(expected), f"{got!r}: {type(got)} != {type(expected)}"
        assert got == expected, (got, expected)
    else:
        assert isinstance(got, (float, np.floating)), f"{got!r} is not a float"
        assert abs(got - expected) <= atol + rtol * abs(expected), (got, expected)


def check_numeric(gfn: Any, fn: Any, *args: Any, wrt: tuple[int | str, ...] = ()) -> Any:
    """`gfn(*args)` (a compiled ``grad(fn, *wrt)``) matches central differences of `fn`."""
    got = gfn(*args)
    assert_grad_close(got, numeric_grad(fn, args, *wrt))
    return got

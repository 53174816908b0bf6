"""``scalar_loop``: ``y = sin(y) * 0.5 + y * 0.5 + 0.1 * x``, n times, differentiated w.r.t. x.

A long chain of scalar operations: it measures the cost per operation of each framework (and,
for the gradient, the memory its tape takes per iteration, see ``memory.py``).
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.harness import Impl, Options, Problem, myia_impl
from benchmarks.peers import jax_cache_size, jax_module, jax_ready, to_numpy, torch_module

NAME = "scalar_loop"


def problem(quick: bool) -> Problem:
    n = 100 if quick else 1000
    rng = np.random.default_rng(0)
    xs = [float(x) for x in rng.uniform(0.1, 1.0, size=4 if quick else 8)]
    return Problem(
        NAME,
        f"n = {n}, x a Python float",
        [(x, n) for x in xs],
        params={"n": n, "memory_n": memory_size(quick)},
        rtol=1e-9,
        check_count=2 if quick else 3,
    )


def memory_size(quick: bool) -> int:
    """Return the n at which the gradient's peak memory is measured (``memory.py``)."""
    return 300 if quick else 10_000


def memory_problem(n: int) -> Problem:
    """Return the problem at size `n`, for the memory measure."""
    return Problem(NAME, f"n = {n}", [(0.3, n)], params={"n": n})


# The function Myia compiles, and plain Python runs (the `hand` primal) -----------------------


def scalar_loop(x, n):
    y = x
    for _ in range(n):
        y = math.sin(y) * 0.5 + y * 0.5 + 0.1 * x
    return y


def scalar_loop_grad(x, n):
    """Return d scalar_loop / dx, by hand: a forward sweep, then a backward sweep."""
    y = x
    slopes = []
    for _ in range(n):
        slopes.append(0.5 * math.cos(y) + 0.5)
        y = math.sin(y) * 0.5 + y * 0.5 + 0.1 * x
    gy = 1.0
    gx = 0.0
    for s in reversed(slopes):
        gx += 0.1 * gy
        gy *= s
    return gx + gy


def loss_of(point: list[np.ndarray], n: int) -> float:
    """Return the primal at a point given as arrays (for the finite-difference check)."""
    return scalar_loop(float(point[0]), n)


# Builders -------------------------------------------------------------------------------------


def _scalar(out) -> list[np.ndarray]:
    return [to_numpy(out)]


def build_myia(p: Problem, opts: Options) -> list[Impl]:
    return myia_impl(p, opts, scalar_loop, _scalar, wrt=("x",))


def build_hand(p: Problem, opts: Options) -> list[Impl]:
    return [
        Impl(
            "hand",
            "hand",
            scalar_loop,
            scalar_loop_grad,
            p.inputs,
            float,
            _scalar,
            note="plain Python floats and `math`; gradient by a hand-written backward sweep",
        ),
        *_numba_floors(p),
    ]


# The floor of machine code: the same sweeps compiled by Numba, where it is installed ---------


def floor_grad(x, n):
    """`scalar_loop_grad` with an array made up front for the slopes (for Numba)."""
    slopes = np.empty(max(n, 0))
    y = x
    for i in range(n):
        slopes[i] = 0.5 * math.cos(y) + 0.5
        y = math.sin(y) * 0.5 + y * 0.5 + 0.1 * x
    gy = 1.0
    gx = 0.0
    for i in range(n - 1, -1, -1):
        gx += 0.1 * gy
        gy *= slopes[i]
    return gx + gy


def floor_grad_myia_order(x, n):
    """`floor_grad` computing what Myia's gradient computes, in its order and roundings.

    The forward sweep stores ``cos(y)``; the backward sweep has three dependent operations
    on the chain of `gy` (``h = gy * 0.5; gy = h + h * c``) where `floor_grad` has one
    (``gy * slope``, which rounds differently).
    """
    cosines = np.empty(max(n, 0))
    y = x
    for i in range(n):
        cosines[i] = math.cos(y)
        y = math.sin(y) * 0.5 + y * 0.5 + 0.1 * x
    gy = 1.0
    gx = 0.0
    for i in range(n - 1, -1, -1):
        h = gy * 0.5
        gy, gx = h + h * cosines[i], gx + gy * 0.1
    return gx + gy


def _numba_floors(p: Problem) -> list[Impl]:
    """Rows of `scalar_loop` and the floor gradients compiled by Numba ``@njit``.

    They are the floor of ``backend="native"`` (no check of `sin`'s domain), apart from the
    summary; none where Numba is not installed.
    """
    import importlib.util

    if importlib.util.find_spec("numba") is None:
        return []
    from numba import njit

    primal = njit(scalar_loop, error_model="python")
    rows = [
        ("hand (numba)", floor_grad, "the slope `0.5 * cos(y) + 0.5`"),
        ("hand (numba, Myia's order)", floor_grad_myia_order, "`cos(y)`, Myia's roundings"),
    ]
    return [
        Impl(
            label,
            "hand",
            primal,
            njit(grad, error_model="python"),
            p.inputs,
            float,
            _scalar,
            note=f"Numba `@njit` of the hand-written sweeps; an array made up front holds {what}",
            main=False,
        )
        for label, grad, what in rows
    ]


def build_torch(p: Problem, opts: Options) -> list[Impl]:
    torch = torch_module()

    def primal(x, n):
        with torch.no_grad():
            y = x
            for _ in range(n):
                y = torch.sin(y) * 0.5 + y * 0.5 + 0.1 * x
            return y

    def grad(x, n):
        y = x
        for _ in range(n):
            y = torch.sin(y) * 0.5 + y * 0.5 + 0.1 * x
        return torch.autograd.grad(y, x)[0]

    inputs = [(torch.tensor(x, dtype=torch.float64, requires_grad=True), n) for x, n in p.inputs]
    return [
        Impl(
            "torch",
            "torch",
            primal,
            grad,
            inputs,
            lambda y: float(y),
            _scalar,
            note="0-d float64 tensors; primal under `no_grad`",
        )
    ]


def build_jax(p: Problem, opts: Options) -> list[Impl]:
    jax = jax_module()
    jnp = jax.numpy

    def f(x, n):
        return jax.lax.fori_loop(0, n, lambda i, y: jnp.sin(y) * 0.5 + y * 0.5 + 0.1 * x, x)

    primal = jax.jit(f, static_argnums=1)
    grad = jax.jit(jax.grad(f), static_argnums=1)
    return [
        Impl(
            "jax (jit)",
            "jax",
            jax_ready(primal),
            jax_ready(grad),
            p.inputs,
            float,
            _scalar,
            compilations=jax_cache_size(grad),
            note="`lax.fori_loop` with static n (a scan), under `jit`",
        )
    ]


def build_autograd(p: Problem, opts: Options) -> list[Impl]:
    import autograd
    import autograd.numpy as anp

    def f(x, n):
        y = x
        for _ in range(n):
            y = anp.sin(y) * 0.5 + y * 0.5 + 0.1 * x
        return y

    return [
        Impl(
            "autograd",
            "autograd",
            f,
            autograd.grad(f),
            p.inputs,
            float,
            _scalar,
            note="`autograd.numpy.sin` (a NumPy ufunc) on Python floats",
        )
    ]


BUILDERS = {
    "myia": build_myia,
    "torch": build_torch,
    "jax": build_jax,
    "autograd": build_autograd,
    "hand": build_hand,
}


def reference_check(p: Problem) -> float:
    """Check the hand-written gradient against central differences, at the first input."""
    from benchmarks.harness import directional_check

    x, n = p.inputs[0]
    return directional_check(lambda pt: loss_of(pt, n), [scalar_loop_grad(x, n)], [x])

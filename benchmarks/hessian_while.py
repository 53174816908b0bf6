"""``hessian_while``: the full Hessian of a sum of Newton iterations, value-dependent ``while``s.

``f(x) = sum_i y_i`` for ``i < n - 1``, where ``y_i`` is Newton's iteration for the square
root of ``1 + x_i^2 + x_{i+1}^2`` (the loop of `benchmarks.newton_sqrt`: its trip count
depends on the value). "grad" is the ``n x n`` Hessian of ``f`` (``myia.hessian``), "primal"
is ``f``. The hand-written version is the closed form of the Hessian of ``sum sqrt(a_i)``
at the iterates (their derivative equals it to the iteration's tolerance).

JAX cannot reverse-differentiate ``lax.while_loop``, so ``jax.hessian`` (forward over
reverse) is refused under ``jit``; its forward mode can: its main row is
``jacfwd(jacfwd(f))`` under ``jit``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from benchmarks.harness import Impl, Options, Problem, myia_impl
from benchmarks.peers import jax_cache_size, jax_module, jax_ready, to_numpy, torch_module
from myia import hessian, jacfwd

NAME = "hessian_while"


def problem(quick: bool) -> Problem:
    n = 6 if quick else 20
    rng = np.random.default_rng(0)
    inputs = [(rng.normal(size=n) * 2.0,) for _ in range(2)]
    return Problem(
        NAME,
        f"{n} variables, {n - 1} Newton iterations (tolerance 1e-12); two points",
        inputs,
        rtol=1e-6,
        check_count=2,
        notes=["check: every entry of the Hessian"],
    )


# The functions Myia compiles (and plain Python runs) ------------------------------------------


def newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def f(x):
    s = 0.0
    i = 0
    while i < x.shape[0] - 1:
        s = s + newton_sqrt(1.0 + x[i] * x[i] + x[i + 1] * x[i + 1])
        i = i + 1
    return s


def f_hessian(x):
    return hessian(f)(x)


def f_hessian_forward(x):
    return jacfwd(jacfwd(f))(x)


# By hand --------------------------------------------------------------------------------------


def hand_f(x):
    return float(f(x))


def hand_hessian(x):
    """The Hessian of ``sum_i sqrt(a_i)``, with ``sqrt(a_i)`` the Newton iterate ``y_i``."""
    n = x.shape[0]
    out = np.zeros((n, n))
    for i in range(n - 1):
        y = newton_sqrt(1.0 + x[i] * x[i] + x[i + 1] * x[i + 1])
        u = x[i : i + 2]
        out[i : i + 2, i : i + 2] += np.eye(2) / y - np.outer(u, u) / y**3
    return out


# Builders -------------------------------------------------------------------------------------


def _matrix(h) -> list[np.ndarray]:
    return [to_numpy(h)]


def build_myia(p: Problem, opts: Options) -> list[Impl]:
    note = "`hessian(f)` in one Myia function, through the `while` loops"
    rows = myia_impl(p, opts, f, _matrix, step=f_hessian, note=note)
    note = "forward over forward, as JAX's row: no stacks, n * n directions batched"
    forward = myia_impl(p, opts, f, _matrix, step=f_hessian_forward, note=note)[0]
    return [*rows, dataclasses.replace(forward, label="myia (jacfwd(jacfwd))", main=False)]


def build_hand(p: Problem, opts: Options) -> list[Impl]:
    return [
        Impl(
            "hand",
            "hand",
            hand_f,
            hand_hessian,
            p.inputs,
            float,
            _matrix,
            note="plain Python; the closed-form Hessian of sum(sqrt(a_i)) at the iterates",
        )
    ]


def build_torch(p: Problem, opts: Options) -> list[Impl]:
    torch = torch_module()

    def primal(x):
        with torch.no_grad():
            return f(x)

    def hess(x):
        return torch.autograd.functional.hessian(f, x)

    inputs = [(torch.from_numpy(x),) for (x,) in p.inputs]
    return [
        Impl(
            "torch",
            "torch",
            primal,
            hess,
            inputs,
            lambda v: float(v),
            _matrix,
            note="`torch.autograd.functional.hessian` of the Python `while` loops (eager)",
        )
    ]


def build_jax(p: Problem, opts: Options) -> list[Impl]:
    jax = jax_module()
    jnp = jax.numpy
    lax = jax.lax

    def sqrt_loop(a):
        return lax.while_loop(
            lambda y: jnp.abs(y * y - a) > 1e-12 * a, lambda y: 0.5 * (y + a / y), a
        )

    def jf(x):
        s = 0.0
        for i in range(x.shape[0] - 1):
            s = s + sqrt_loop(1.0 + x[i] * x[i] + x[i + 1] * x[i + 1])
        return s

    # jax.hessian is forward over reverse: JAX refuses the reverse mode of lax.while_loop.
    rev = jax.jit(jax.hessian(jf))
    reason = None
    try:
        rev(jnp.asarray(p.inputs[0][0]))
    except Exception as exc:
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    fwd = jax.jit(jax.jacfwd(jax.jacfwd(jf)))
    inputs = [(jnp.asarray(x),) for (x,) in p.inputs]
    primal = jax_ready(jax.jit(jf))
    return [
        Impl(
            "jax (jit, jacfwd(jacfwd))",
            "jax",
            primal,
            jax_ready(fwd),
            inputs,
            float,
            _matrix,
            compilations=jax_cache_size(fwd),
            note="forward over forward through `lax.while_loop` (unrolled over i at tracing), "
            "under `jit`",
        ),
        Impl(
            "jax (jit, jax.hessian)",
            "jax",
            primal,
            None if reason else jax_ready(rev),
            inputs,
            float,
            _matrix,
            grad_failure=f"{reason} (JAX cannot reverse-differentiate lax.while_loop)"
            if reason
            else None,
            main=False,
            note="`jax.hessian` (forward over reverse) of `lax.while_loop` is refused by JAX",
        ),
    ]


def build_autograd(p: Problem, opts: Options) -> list[Impl]:
    import autograd

    return [
        Impl(
            "autograd",
            "autograd",
            f,
            autograd.hessian(f),
            p.inputs,
            float,
            _matrix,
            note="`autograd.hessian` of the Python `while` loops; the primal is plain Python",
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
    """Check the hand-written Hessian against central differences of the gradient."""
    (x,) = p.inputs[0]
    n = x.shape[0]

    def gradient(z):
        g = np.zeros(n)
        for i in range(n - 1):
            y = newton_sqrt(1.0 + z[i] * z[i] + z[i + 1] * z[i + 1])
            g[i : i + 2] += z[i : i + 2] / y
        return g

    eps = 1e-5
    fd = np.stack([(gradient(x + eps * e) - gradient(x - eps * e)) / (2 * eps) for e in np.eye(n)])
    h = hand_hessian(x)
    return float(np.max(np.abs(fd - h)) / np.max(np.abs(h)))

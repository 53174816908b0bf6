"""``newton_sqrt``: Newton's iteration for sqrt(a), differentiated w.r.t. `a`.

A ``while`` loop whose trip count depends on the value of `a`, differentiated through the
iterations.

JAX cannot reverse-differentiate ``lax.while_loop``; its rows say so, and measure what JAX can
do: ``jax.grad`` of the Python ``while`` loop without ``jit``, and ``jit`` of the loop with a
``custom_vjp`` that gives the derivative by implicit differentiation (``dy/da = 1 / (2 y)``,
a different computation from differentiating the iterations).
"""

from __future__ import annotations

import numpy as np

from benchmarks.harness import Impl, Options, Problem, directional_check, myia_impl
from benchmarks.peers import jax_cache_size, jax_module, jax_ready, to_numpy, torch_module

NAME = "newton_sqrt"


def problem(quick: bool) -> Problem:
    rng = np.random.default_rng(0)
    values = [0.5, 1e6, *rng.uniform(0.5, 1e6, size=2 if quick else 18)]
    trips = [newton_trips(a) for a in values]
    return Problem(
        NAME,
        f"a drawn uniformly in [0.5, 1e6], a pool of {len(values)} values cycled "
        f"(the first two: 0.5 and 1e6); {min(trips)} to {max(trips)} iterations",
        [(float(a),) for a in values],
        rtol=1e-8,
        check_count=3 if quick else 6,
    )


# The function Myia compiles (and plain Python runs) -------------------------------------------


def newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def newton_trips(a):
    """Return the trip count of the loop for `a` (for the table's title)."""
    y, k = a, 0
    while abs(y * y - a) > 1e-12 * a:
        y, k = 0.5 * (y + a / y), k + 1
    return k


def newton_sqrt_grad(a):
    """Return d newton_sqrt / da by hand: the iterates recorded, then a backward sweep."""
    ys = []
    y = a
    while abs(y * y - a) > 1e-12 * a:
        ys.append(y)
        y = 0.5 * (y + a / y)
    gy = 1.0
    ga = 0.0
    for y in reversed(ys):
        ga += gy * 0.5 / y
        gy *= 0.5 * (1.0 - a / (y * y))
    return ga + gy


# Builders -------------------------------------------------------------------------------------


def _scalar(out) -> list[np.ndarray]:
    return [to_numpy(out)]


def build_myia(p: Problem, opts: Options) -> list[Impl]:
    return myia_impl(p, opts, newton_sqrt, _scalar, wrt=("a",))


def build_hand(p: Problem, opts: Options) -> list[Impl]:
    return [
        Impl(
            "hand",
            "hand",
            newton_sqrt,
            newton_sqrt_grad,
            p.inputs,
            float,
            _scalar,
            note="plain Python floats; gradient by recording the iterates and a backward sweep",
        )
    ]


def build_torch(p: Problem, opts: Options) -> list[Impl]:
    torch = torch_module()

    def f(a):
        y = a
        while abs(y * y - a) > 1e-12 * a:
            y = 0.5 * (y + a / y)
        return y

    def primal(a):
        with torch.no_grad():
            return f(a)

    def grad(a):
        return torch.autograd.grad(f(a), a)[0]

    inputs = [(torch.tensor(a, dtype=torch.float64, requires_grad=True),) for (a,) in p.inputs]
    return [
        Impl(
            "torch",
            "torch",
            primal,
            grad,
            inputs,
            lambda y: float(y),
            _scalar,
            note="0-d float64 tensors, the Python `while` (each test reads the tensor back)",
        )
    ]


def build_jax(p: Problem, opts: Options) -> list[Impl]:
    jax = jax_module()
    jnp = jax.numpy
    lax = jax.lax

    def loop(a):
        return lax.while_loop(
            lambda y: jnp.abs(y * y - a) > 1e-12 * a, lambda y: 0.5 * (y + a / y), a
        )

    # 1. jit of lax.while_loop: the primal compiles; its gradient is an error (JAX's own).
    jit_primal = jax.jit(loop)
    jit_grad = jax.jit(jax.grad(loop))
    reason = None
    try:
        jit_grad(1.0)
    except Exception as exc:
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    # 2. The Python while loop without jit: jax.grad traces it with concrete values.
    eager_grad = jax.grad(newton_sqrt)
    eager_inputs = [(jnp.asarray(a, dtype=jnp.float64),) for (a,) in p.inputs]

    # 3. jit of lax.while_loop with an implicit-differentiation custom_vjp.
    @jax.custom_vjp
    def implicit(a):
        return loop(a)

    def implicit_fwd(a):
        y = loop(a)
        return y, y

    def implicit_bwd(y, g):
        return (g / (2.0 * y),)

    implicit.defvjp(implicit_fwd, implicit_bwd)
    implicit_primal = jax.jit(implicit)
    implicit_grad = jax.jit(jax.grad(implicit))
    return [
        Impl(
            "jax (jit, lax.while_loop)",
            "jax",
            jax_ready(jit_primal),
            None if reason else jax_ready(jit_grad),
            p.inputs,
            float,
            _scalar,
            grad_failure=f"{reason} (JAX cannot reverse-differentiate lax.while_loop)"
            if reason
            else None,
            main=False,
            note="the primal under `jit`; `jax.grad` of `lax.while_loop` is refused by JAX",
        ),
        Impl(
            "jax (no jit, Python while)",
            "jax",
            jax_ready(newton_sqrt),
            jax_ready(eager_grad),
            eager_inputs,
            float,
            _scalar,
            note="the Python `while` on JAX scalars, op by op, and `jax.grad` of it (no `jit`: "
            "the trip count depends on the value); the same computation as the workload's",
        ),
        Impl(
            "jax (jit, implicit diff.)",
            "jax",
            jax_ready(implicit_primal),
            jax_ready(implicit_grad),
            p.inputs,
            float,
            _scalar,
            main=False,
            compilations=jax_cache_size(implicit_grad),
            note="`lax.while_loop` under `jit` with a `custom_vjp`: dy/da = 1 / (2 y) at the "
            "solution (implicit differentiation, not differentiation of the iterations)",
        ),
    ]


def build_autograd(p: Problem, opts: Options) -> list[Impl]:
    import autograd

    return [
        Impl(
            "autograd",
            "autograd",
            newton_sqrt,
            autograd.grad(newton_sqrt),
            p.inputs,
            float,
            _scalar,
            note="the primal is the plain Python function (autograd traces only under `grad`)",
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
    """Check the hand-written gradient against central differences and the closed form."""
    worst = 0.0
    for (a,) in p.inputs[:3]:
        g = newton_sqrt_grad(a)
        worst = max(worst, abs(g - 0.5 / np.sqrt(a)) * 2 * np.sqrt(a))
        worst = max(
            worst,
            directional_check(lambda pt: newton_sqrt(float(pt[0])), [g], [a], eps=1e-6 * a),
        )
    return worst

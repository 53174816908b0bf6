"""``rnn``: a vanilla RNN over a sequence, written as a Python ``for`` loop over ``x[t]``.

``h = tanh(x[t] @ Wx + h @ Wh + b)`` for t in range(T) from ``h = 0``; the loss is
``sum(h * h)``; gradients w.r.t. `Wx`, `Wh` and `b`.
"""

from __future__ import annotations

import numpy as np

from benchmarks.harness import Impl, Options, Problem, directional_check, myia_impl
from benchmarks.peers import flat_numpy, jax_cache_size, jax_module, jax_ready, torch_module

NAME = "rnn"


#: On a GPU (``--device gpu``): T = 1000, the other sizes as on the CPU.
GPU_SIZES = (1000, 32, 32, 64)

#: Longest sequence whose Python loop JAX's `jit` is given to unroll: at T = 1000 its
#: compilations take minutes (87 s for the primal and 194 s for the gradient on this
#: project's 2-core machine), so only the `lax.scan` row runs.
MAX_UNROLLED = 100


def problem(quick: bool, gpu: bool = False) -> Problem:
    T, batch, n_in, hidden = (5, 4, 8, 8) if quick else GPU_SIZES if gpu else (50, 32, 32, 64)
    rng = np.random.default_rng(0)
    Wx = rng.normal(size=(n_in, hidden)) / np.sqrt(n_in)
    Wh = rng.normal(size=(hidden, hidden)) / np.sqrt(hidden)
    b = rng.normal(size=hidden) * 0.1
    xs = [rng.normal(size=(T, batch, n_in)) for _ in range(2)]
    return Problem(
        NAME,
        f"T = {T}, batch {batch}, input {n_in}, hidden {hidden} (float64); two sequences",
        [(x, Wx, Wh, b) for x in xs],
        rtol=1e-9,
        check_count=2,
        notes=[]
        if T <= MAX_UNROLLED
        else [f"jax: `lax.scan` only (`jit` would unroll {T} steps: minutes of compilation)"],
    )


# The function Myia compiles -------------------------------------------------------------------


def rnn_loss(x, Wx, Wh, b):
    h = np.zeros((x.shape[1], Wh.shape[0]))
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ Wx + h @ Wh + b)
    return np.sum(h * h)


# By hand --------------------------------------------------------------------------------------


def hand_loss(x, Wx, Wh, b):
    return float(rnn_loss(x, Wx, Wh, b))


def hand_grad(x, Wx, Wh, b):
    """Return (dWx, dWh, db) by backpropagation through time, written by hand.

    The backward loop only carries the gradient of `h` back in time; the weight gradients are
    then one matrix product each over all the time steps at once.
    """
    T, batch, _ = x.shape
    hs = np.zeros((T + 1, batch, Wh.shape[0]))
    for t in range(T):
        hs[t + 1] = np.tanh(x[t] @ Wx + hs[t] @ Wh + b)
    gz = np.empty_like(hs[1:])
    gh = 2.0 * hs[T]
    for t in range(T - 1, -1, -1):
        gz[t] = gh * (1.0 - hs[t + 1] * hs[t + 1])
        gh = gz[t] @ Wh.T
    flat = gz.reshape(T * batch, -1)
    dWx = x.reshape(T * batch, -1).T @ flat
    dWh = hs[:T].reshape(T * batch, -1).T @ flat
    return dWx, dWh, flat.sum(axis=0)


# Builders -------------------------------------------------------------------------------------


def build_myia(p: Problem, opts: Options) -> list[Impl]:
    return myia_impl(p, opts, rnn_loss, flat_numpy, wrt=("Wx", "Wh", "b"))


def build_hand(p: Problem, opts: Options) -> list[Impl]:
    return [
        Impl(
            "hand",
            "hand",
            hand_loss,
            hand_grad,
            p.inputs,
            float,
            flat_numpy,
            note="NumPy; backpropagation through time written by hand (weight gradients batched "
            "over time)",
        )
    ]


def build_torch(p: Problem, opts: Options) -> list[Impl]:
    torch = torch_module()

    def loss(x, Wx, Wh, b):
        h = torch.zeros((x.shape[1], Wh.shape[0]), dtype=x.dtype)
        for t in range(x.shape[0]):
            h = torch.tanh(x[t] @ Wx + h @ Wh + b)
        return (h * h).sum()

    def primal(*args):
        with torch.no_grad():
            return loss(*args)

    def grad(x, Wx, Wh, b):
        return torch.autograd.grad(loss(x, Wx, Wh, b), (Wx, Wh, b))

    _, Wx, Wh, b = p.inputs[0]
    params = [torch.tensor(a, requires_grad=True) for a in (Wx, Wh, b)]
    inputs = [(torch.from_numpy(x), *params) for x, _, _, _ in p.inputs]
    return [Impl("torch", "torch", primal, grad, inputs, lambda y: float(y), flat_numpy)]


def build_jax(p: Problem, opts: Options) -> list[Impl]:
    jax = jax_module()
    jnp = jax.numpy

    def loss(x, Wx, Wh, b):
        h = jnp.zeros((x.shape[1], Wh.shape[0]), dtype=x.dtype)
        for t in range(x.shape[0]):
            h = jnp.tanh(x[t] @ Wx + h @ Wh + b)
        return jnp.sum(h * h)

    def scan_loss(x, Wx, Wh, b):
        def step(h, xt):
            return jnp.tanh(xt @ Wx + h @ Wh + b), None

        h, _ = jax.lax.scan(step, jnp.zeros((x.shape[1], Wh.shape[0]), dtype=x.dtype), x)
        return jnp.sum(h * h)

    grad = jax.jit(jax.grad(loss, argnums=(1, 2, 3)))
    scan_grad = jax.jit(jax.grad(scan_loss, argnums=(1, 2, 3)))
    inputs = [tuple(jnp.asarray(a) for a in args) for args in p.inputs]
    unrolled = p.inputs[0][0].shape[0] <= MAX_UNROLLED
    impls = [
        Impl(
            "jax (jit, scan)",
            "jax",
            jax_ready(jax.jit(scan_loss)),
            jax_ready(scan_grad),
            inputs,
            float,
            flat_numpy,
            compilations=jax_cache_size(scan_grad),
            main=not unrolled,
            note="the loop written as `lax.scan` (not unrolled)",
        )
    ]
    if unrolled:
        impls.insert(
            0,
            Impl(
                "jax (jit)",
                "jax",
                jax_ready(jax.jit(loss)),
                jax_ready(grad),
                inputs,
                float,
                flat_numpy,
                compilations=jax_cache_size(grad),
                note="the Python `for` loop, unrolled by `jit`'s tracing",
            ),
        )
    return impls


def build_autograd(p: Problem, opts: Options) -> list[Impl]:
    import autograd
    import autograd.numpy as anp

    def loss(x, Wx, Wh, b):
        h = anp.zeros((x.shape[1], Wh.shape[0]))
        for t in range(x.shape[0]):
            h = anp.tanh(anp.dot(x[t], Wx) + anp.dot(h, Wh) + b)
        return anp.sum(h * h)

    return [
        Impl(
            "autograd",
            "autograd",
            loss,
            autograd.grad(loss, (1, 2, 3)),
            p.inputs,
            float,
            flat_numpy,
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
    x, Wx, Wh, b = p.inputs[0]
    return directional_check(
        lambda pt: hand_loss(x, *pt), list(hand_grad(x, Wx, Wh, b)), [Wx, Wh, b]
    )

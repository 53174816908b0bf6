"""``mlp_step``: one SGD step of an MLP (tanh hidden layers, softmax cross-entropy), float32.

The step returns ``(loss, new parameters)`` with ``new = p - 0.1 * dloss/dp``; the parameters
are a tuple of ``(W, b)`` pairs. "primal" is the loss alone, "grad" the whole step. Two sizes:
small (64-128-128-10, batch 128) and large (784-1024-1024-10, batch 256).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.harness import Impl, Options, Problem, directional_check, myia_impl
from benchmarks.peers import flat_numpy, jax_cache_size, jax_module, jax_ready, torch_module
from myia import value_and_grad

LR = 0.1

SIZES = {
    ("small", False): ((64, 128, 128, 10), 128),
    ("large", False): ((784, 1024, 1024, 10), 256),
    ("small", True): ((16, 32, 32, 10), 16),
    ("large", True): ((32, 64, 64, 10), 32),
}

#: On a GPU (``--device gpu``): the same layers, batch 4096.
GPU_SIZES = {"small": ((64, 128, 128, 10), 4096), "large": ((784, 1024, 1024, 10), 4096)}


def problem(quick: bool, size: str = "small", gpu: bool = False) -> Problem:
    layers, batch = GPU_SIZES[size] if gpu and not quick else SIZES[size, quick]
    rng = np.random.default_rng(0)
    params = tuple(
        (
            (rng.normal(size=(a, c)) / np.sqrt(a)).astype(np.float32),
            (rng.normal(size=c) * 0.1).astype(np.float32),
        )
        for a, c in zip(layers, layers[1:])
    )
    batches = []
    for _ in range(2):
        x = rng.normal(size=(batch, layers[0])).astype(np.float32)
        y = np.eye(layers[-1], dtype=np.float32)[rng.integers(0, layers[-1], size=batch)]
        batches.append((params, x, y))
    return Problem(
        f"mlp_step_{size}",
        f"layers {'-'.join(map(str, layers))}, batch {batch}, float32, lr = {LR}; two batches",
        batches,
        rtol=1e-5,
        check_count=2,
        notes=["check: the step's outputs (loss and new parameters) in float32"],
    )


# The functions Myia compiles ------------------------------------------------------------------


def mlp_loss(params, x, y):
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    z = h @ W + b
    zmax = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - zmax), axis=1, keepdims=True)) + zmax
    return np.sum(lse - np.sum(y * z, axis=1, keepdims=True)) / x.shape[0]


def mlp_step(params, x, y):
    loss, grads = value_and_grad(mlp_loss, "params")(params, x, y)
    new = ()
    for (W, b), (dW, db) in zip(params, grads):
        new = new + ((W - LR * dW, b - LR * db),)
    return loss, new


# By hand --------------------------------------------------------------------------------------


def hand_loss(params, x, y):
    return float(mlp_loss(params, x, y))


def hand_value_and_grad(params, x, y):
    """(loss, ((dW, db), ...)) by a hand-written backward pass."""
    hs = [x]
    for W, b in params[:-1]:
        hs.append(np.tanh(hs[-1] @ W + b))
    W, b = params[-1]
    z = hs[-1] @ W + b
    zmax = np.max(z, axis=1, keepdims=True)
    e = np.exp(z - zmax)
    s = np.sum(e, axis=1, keepdims=True)
    lse = np.log(s) + zmax
    n = x.shape[0]
    loss = np.sum(lse - np.sum(y * z, axis=1, keepdims=True)) / n
    g = (e / s - y) / n
    grads = []
    for k in range(len(params) - 1, -1, -1):
        W, _ = params[k]
        grads.append((hs[k].T @ g, np.sum(g, axis=0)))
        if k:
            g = (g @ W.T) * (1.0 - hs[k] * hs[k])
    return loss, tuple(reversed(grads))


def hand_step(params, x, y):
    loss, grads = hand_value_and_grad(params, x, y)
    return loss, tuple((W - LR * dW, b - LR * db) for (W, b), (dW, db) in zip(params, grads))


# Builders -------------------------------------------------------------------------------------


def build_myia(p: Problem, opts: Options) -> list[Impl]:
    note = "the whole step (`value_and_grad` and the update) is one Myia function"
    return myia_impl(p, opts, mlp_loss, flat_numpy, step=mlp_step, note=note)


def build_hand(p: Problem, opts: Options) -> list[Impl]:
    return [
        Impl(
            "hand",
            "hand",
            hand_loss,
            hand_step,
            p.inputs,
            float,
            flat_numpy,
            note="NumPy; the backward pass written by hand",
        )
    ]


def build_torch(p: Problem, opts: Options) -> list[Impl]:
    torch = torch_module()

    def loss(params, x, y):
        h = x
        for W, b in params[:-1]:
            h = torch.tanh(h @ W + b)
        W, b = params[-1]
        z = h @ W + b
        return (torch.logsumexp(z, dim=1) - (y * z).sum(dim=1)).mean()

    def primal(params, x, y):
        with torch.no_grad():
            return loss(params, x, y)

    def step(params, x, y):
        value = loss(params, x, y)
        flat = [t for pair in params for t in pair]
        grads = torch.autograd.grad(value, flat)
        with torch.no_grad():
            new = [t - LR * g for t, g in zip(flat, grads)]
        return value.detach(), tuple(zip(new[::2], new[1::2]))

    params = tuple(
        tuple(torch.tensor(a, requires_grad=True) for a in pair) for pair in p.inputs[0][0]
    )
    inputs = [(params, torch.from_numpy(x), torch.from_numpy(y)) for _, x, y in p.inputs]
    return [
        Impl(
            "torch",
            "torch",
            primal,
            step,
            inputs,
            lambda v: float(v),
            flat_numpy,
            note="`torch.logsumexp`; primal under `no_grad`",
        )
    ]


def build_jax(p: Problem, opts: Options) -> list[Impl]:
    jax = jax_module()
    jnp = jax.numpy

    def loss(params, x, y):
        h = x
        for W, b in params[:-1]:
            h = jnp.tanh(h @ W + b)
        W, b = params[-1]
        z = h @ W + b
        return jnp.mean(jax.nn.logsumexp(z, axis=1) - jnp.sum(y * z, axis=1))

    def step(params, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return value, jax.tree_util.tree_map(lambda t, g: t - LR * g, params, grads)

    step_jit, loss_jit = jax.jit(step), jax.jit(loss)
    inputs = [
        (jax.tree_util.tree_map(jnp.asarray, params), jnp.asarray(x), jnp.asarray(y))
        for params, x, y in p.inputs
    ]
    impls = [
        Impl(
            "jax (jit)",
            "jax",
            jax_ready(loss_jit),
            jax_ready(step_jit),
            inputs,
            float,
            flat_numpy,
            compilations=jax_cache_size(step_jit),
            note="`jax.nn.logsumexp`; the step under `jit`",
        )
    ]
    if opts.device is not None:
        # Myia returns a scalar as a Python float (API.md): a copy from the device per call.
        def float_step(params: Any, x: Any, y: Any) -> Any:
            value, new = step_jit(params, x, y)
            return float(value), jax.block_until_ready(new)

        impls.append(
            Impl(
                "jax (jit), float(loss)",
                "jax",
                lambda *args: float(loss_jit(*args)),
                float_step,
                inputs,
                float,
                flat_numpy,
                main=False,
                note="the loss read on the host each call, as Myia returns it",
            )
        )
    return impls


def build_autograd(p: Problem, opts: Options) -> list[Impl]:
    import autograd
    import autograd.numpy as anp
    from autograd.scipy.special import logsumexp

    def loss(params, x, y):
        h = x
        for W, b in params[:-1]:
            h = anp.tanh(anp.dot(h, W) + b)
        W, b = params[-1]
        z = anp.dot(h, W) + b
        return anp.mean(logsumexp(z, axis=1) - anp.sum(y * z, axis=1))

    vg = autograd.value_and_grad(loss)

    def step(params, x, y):
        value, grads = vg(params, x, y)
        return value, tuple((W - LR * dW, b - LR * db) for (W, b), (dW, db) in zip(params, grads))

    return [Impl("autograd", "autograd", loss, step, p.inputs, float, flat_numpy)]


BUILDERS = {
    "myia": build_myia,
    "torch": build_torch,
    "jax": build_jax,
    "autograd": build_autograd,
    "hand": build_hand,
}


def reference_check(p: Problem) -> float:
    """Check the hand-written gradient against central differences (float64, first input)."""
    params, x, y = p.inputs[0]
    params = tuple((W.astype(np.float64), b.astype(np.float64)) for W, b in params)
    x, y = x.astype(np.float64), y.astype(np.float64)
    flat = [a for pair in params for a in pair]

    def f(point):
        return hand_loss(tuple(zip(point[::2], point[1::2])), x, y)

    _, grads = hand_value_and_grad(params, x, y)
    return directional_check(f, [g for pair in grads for g in pair], flat)

"""``per_example_grads``: the gradient of each example's loss for the ``mlp_step`` small model.

The model of `benchmarks.mlp_step` (tanh hidden layers, softmax cross-entropy), in float64:
"grad" is the gradient of every example's own loss with respect to all the weights and biases,
stacked along a batch axis (``vmap(grad(example_loss), in_axes=(None, 0, 0))``); "primal" is
the batch's mean loss. The hand-written version is the batched backward pass, with the
per-example weight gradients made as outer products.
"""

from __future__ import annotations

import numpy as np

from benchmarks.harness import Impl, Options, Problem, directional_check, myia_impl
from benchmarks.mlp_step import mlp_loss
from benchmarks.peers import flat_numpy, jax_cache_size, jax_module, jax_ready, torch_module
from myia import grad, vmap

NAME = "per_example_grads"

SIZES = {False: ((64, 128, 128, 10), 128), True: ((16, 32, 32, 10), 16)}


def problem(quick: bool) -> Problem:
    layers, batch = SIZES[quick]
    rng = np.random.default_rng(0)
    params = tuple(
        (rng.normal(size=(a, c)) / np.sqrt(a), rng.normal(size=c) * 0.1)
        for a, c in zip(layers, layers[1:])
    )
    inputs = []
    for _ in range(2):
        x = rng.normal(size=(batch, layers[0]))
        y = np.eye(layers[-1])[rng.integers(0, layers[-1], size=batch)]
        inputs.append((params, x, y))
    return Problem(
        NAME,
        f"layers {'-'.join(map(str, layers))}, batch {batch}, float64; two batches",
        inputs,
        rtol=1e-8,
        check_count=2,
        notes=["check: every example's gradient of every weight and bias"],
    )


# The functions Myia compiles ------------------------------------------------------------------


def example_loss(params, x, y):
    """The cross-entropy loss of one example: `x` a vector of inputs, `y` one-hot."""
    h = x
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    z = h @ W + b
    zmax = np.max(z)
    return np.log(np.sum(np.exp(z - zmax))) + zmax - np.sum(y * z)


def per_example_grads(params, x, y):
    return vmap(grad(example_loss), in_axes=(None, 0, 0))(params, x, y)


# By hand --------------------------------------------------------------------------------------


def hand_loss(params, x, y):
    return float(mlp_loss(params, x, y))


def hand_per_example_grads(params, x, y):
    """((dW, db), ...) of every example, the batch first, by a batched backward pass."""
    hs = [x]
    for W, b in params[:-1]:
        hs.append(np.tanh(hs[-1] @ W + b))
    W, b = params[-1]
    z = hs[-1] @ W + b
    e = np.exp(z - np.max(z, axis=1, keepdims=True))
    g = e / np.sum(e, axis=1, keepdims=True) - y
    grads = []
    for k in range(len(params) - 1, -1, -1):
        W, _ = params[k]
        grads.append((hs[k][:, :, None] * g[:, None, :], g))
        if k:
            g = (g @ W.T) * (1.0 - hs[k] * hs[k])
    return tuple(reversed(grads))


# Builders -------------------------------------------------------------------------------------


def build_myia(p: Problem, opts: Options) -> list[Impl]:
    note = "`vmap(grad(example_loss), in_axes=(None, 0, 0))` in one Myia function"
    return myia_impl(p, opts, mlp_loss, flat_numpy, step=per_example_grads, note=note)


def build_hand(p: Problem, opts: Options) -> list[Impl]:
    return [
        Impl(
            "hand",
            "hand",
            hand_loss,
            hand_per_example_grads,
            p.inputs,
            float,
            flat_numpy,
            note="NumPy; the batched backward pass written by hand (outer products per example)",
        )
    ]


def build_torch(p: Problem, opts: Options) -> list[Impl]:
    torch = torch_module()
    from torch.func import grad as tgrad
    from torch.func import vmap as tvmap

    def loss(params, x, y):
        h = x
        for W, b in params[:-1]:
            h = torch.tanh(h @ W + b)
        W, b = params[-1]
        z = h @ W + b
        return torch.logsumexp(z, dim=-1) - torch.sum(y * z, dim=-1)

    def primal(params, x, y):
        with torch.no_grad():
            return loss(params, x, y).mean()

    per_example = tvmap(tgrad(loss), in_dims=(None, 0, 0))
    inputs = [
        (
            tuple(tuple(torch.from_numpy(a) for a in pair) for pair in params),
            torch.from_numpy(x),
            torch.from_numpy(y),
        )
        for params, x, y in p.inputs
    ]
    return [
        Impl(
            "torch",
            "torch",
            primal,
            per_example,
            inputs,
            lambda v: float(v),
            flat_numpy,
            note="`torch.func.vmap(torch.func.grad(loss))`",
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
        return jax.nn.logsumexp(z, axis=-1) - jnp.sum(y * z, axis=-1)

    per_example = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    inputs = [
        (jax.tree_util.tree_map(jnp.asarray, params), jnp.asarray(x), jnp.asarray(y))
        for params, x, y in p.inputs
    ]
    return [
        Impl(
            "jax (jit)",
            "jax",
            jax_ready(jax.jit(lambda params, x, y: jnp.mean(loss(params, x, y)))),
            jax_ready(per_example),
            inputs,
            float,
            flat_numpy,
            compilations=jax_cache_size(per_example),
            note="`jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))` under `jit`",
        )
    ]


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
        return logsumexp(z) - anp.sum(y * z)

    g = autograd.grad(loss)

    def primal(params, x, y):
        return float(mlp_loss(params, x, y))

    def per_example(params, x, y):
        rows = [g(params, x[i], y[i]) for i in range(x.shape[0])]
        return tuple(
            (np.stack([r[k][0] for r in rows]), np.stack([r[k][1] for r in rows]))
            for k in range(len(params))
        )

    return [
        Impl(
            "autograd",
            "autograd",
            primal,
            per_example,
            p.inputs,
            float,
            flat_numpy,
            note="a Python loop of `autograd.grad` over the examples (autograd has no vmap); "
            "the primal is NumPy's",
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
    """Check the hand-written gradients of two examples against central differences."""
    params, x, y = p.inputs[0]
    flat = [a for pair in params for a in pair]
    grads = hand_per_example_grads(params, x, y)
    worst = 0.0
    for i in (0, x.shape[0] - 1):

        def f(point, i=i):
            return float(example_loss(tuple(zip(point[::2], point[1::2])), x[i], y[i]))

        mine = [a[i] for pair in grads for a in pair]
        worst = max(worst, directional_check(f, mine, flat))
    return worst

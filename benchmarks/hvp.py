"""``hvp``: a Hessian-vector product of the ``mlp_step`` small model's mean loss.

The loss of `benchmarks.mlp_step` (tanh hidden layers, softmax cross-entropy, the mean over
the batch), in float64. "grad" is ``H v``, the Hessian of the loss with respect to all the
weights and biases times a direction ``v`` shaped like them (``jvp(grad(loss))``); "primal"
is the loss. The hand-written version is Pearlmutter's R-operator: the forward and backward
passes of the gradient, each with its directional derivative along ``v``.
"""

from __future__ import annotations

import numpy as np

from benchmarks.harness import Impl, Options, Problem, myia_impl
from benchmarks.mlp_step import hand_value_and_grad, mlp_loss
from benchmarks.peers import flat_numpy, jax_cache_size, jax_module, jax_ready, torch_module
from myia import grad, jvp

NAME = "hvp"

SIZES = {False: ((64, 128, 128, 10), 128), True: ((16, 32, 32, 10), 16)}


def problem(quick: bool) -> Problem:
    layers, batch = SIZES[quick]
    rng = np.random.default_rng(0)

    def like_params():
        return tuple(
            (rng.normal(size=(a, c)) / np.sqrt(a), rng.normal(size=c) * 0.1)
            for a, c in zip(layers, layers[1:])
        )

    params = like_params()
    inputs = []
    for _ in range(2):
        x = rng.normal(size=(batch, layers[0]))
        y = np.eye(layers[-1])[rng.integers(0, layers[-1], size=batch)]
        inputs.append((params, x, y, like_params()))
    return Problem(
        NAME,
        f"layers {'-'.join(map(str, layers))}, batch {batch}, float64; two batches and directions",
        inputs,
        rtol=1e-8,
        check_count=2,
        notes=["check: H v for every weight and bias"],
    )


# The functions Myia compiles ------------------------------------------------------------------


def loss(params, x, y, v):
    return mlp_loss(params, x, y)


def loss_grad(params, x, y):
    return grad(mlp_loss, "params")(params, x, y)


def hvp(params, x, y, v):
    return jvp(loss_grad, (params, x, y), (v, 0.0 * x, 0.0 * y))[1]


# By hand --------------------------------------------------------------------------------------


def hand_loss(params, x, y, v):
    return float(mlp_loss(params, x, y))


def hand_hvp(params, x, y, v):
    """``H v`` by the R-operator: ``R(.)`` is the derivative along ``v``."""
    n = x.shape[0]
    hs, rhs = [x], [np.zeros_like(x)]
    for (W, b), (vW, vb) in zip(params[:-1], v[:-1]):
        h = np.tanh(hs[-1] @ W + b)
        ra = rhs[-1] @ W + hs[-1] @ vW + vb
        hs.append(h)
        rhs.append((1.0 - h * h) * ra)
    (W, b), (vW, vb) = params[-1], v[-1]
    z = hs[-1] @ W + b
    rz = rhs[-1] @ W + hs[-1] @ vW + vb
    e = np.exp(z - np.max(z, axis=1, keepdims=True))
    s = e / np.sum(e, axis=1, keepdims=True)
    g = (s - y) / n
    rg = s * (rz - np.sum(s * rz, axis=1, keepdims=True)) / n
    out = []
    for k in range(len(params) - 1, -1, -1):
        (W, _), (vW, _) = params[k], v[k]
        out.append((rhs[k].T @ g + hs[k].T @ rg, np.sum(rg, axis=0)))
        if k:
            d = 1.0 - hs[k] * hs[k]
            gw = g @ W.T
            rg = (rg @ W.T + g @ vW.T) * d - 2.0 * gw * hs[k] * rhs[k]
            g = gw * d
    return tuple(reversed(out))


# Builders -------------------------------------------------------------------------------------


def build_myia(p: Problem, opts: Options) -> list[Impl]:
    note = "`jvp(grad(loss))` in one Myia function (tangents of x and y zero)"
    return myia_impl(p, opts, loss, flat_numpy, step=hvp, note=note)


def build_hand(p: Problem, opts: Options) -> list[Impl]:
    return [
        Impl(
            "hand",
            "hand",
            hand_loss,
            hand_hvp,
            p.inputs,
            float,
            flat_numpy,
            note="NumPy; the R-operator (Pearlmutter) written by hand",
        )
    ]


def build_torch(p: Problem, opts: Options) -> list[Impl]:
    torch = torch_module()
    from torch.func import grad as tgrad
    from torch.func import jvp as tjvp

    def tloss(params, x, y):
        h = x
        for W, b in params[:-1]:
            h = torch.tanh(h @ W + b)
        W, b = params[-1]
        z = h @ W + b
        return (torch.logsumexp(z, dim=1) - (y * z).sum(dim=1)).mean()

    def primal(params, x, y, v):
        with torch.no_grad():
            return tloss(params, x, y)

    def thvp(params, x, y, v):
        return tjvp(lambda q: tgrad(tloss)(q, x, y), (params,), (v,))[1]

    def tensors(params):
        return tuple(tuple(torch.from_numpy(a) for a in pair) for pair in params)

    inputs = [
        (tensors(params), torch.from_numpy(x), torch.from_numpy(y), tensors(v))
        for params, x, y, v in p.inputs
    ]
    return [
        Impl(
            "torch",
            "torch",
            primal,
            thvp,
            inputs,
            lambda v: float(v),
            flat_numpy,
            note="`torch.func.jvp` of `torch.func.grad` (forward over reverse)",
        )
    ]


def build_jax(p: Problem, opts: Options) -> list[Impl]:
    jax = jax_module()
    jnp = jax.numpy

    def jloss(params, x, y):
        h = x
        for W, b in params[:-1]:
            h = jnp.tanh(h @ W + b)
        W, b = params[-1]
        z = h @ W + b
        return jnp.mean(jax.nn.logsumexp(z, axis=1) - jnp.sum(y * z, axis=1))

    def jhvp(params, x, y, v):
        return jax.jvp(lambda q: jax.grad(jloss)(q, x, y), (params,), (v,))[1]

    jhvp_jit = jax.jit(jhvp)
    inputs = [
        (
            jax.tree_util.tree_map(jnp.asarray, params),
            jnp.asarray(x),
            jnp.asarray(y),
            jax.tree_util.tree_map(jnp.asarray, v),
        )
        for params, x, y, v in p.inputs
    ]
    return [
        Impl(
            "jax (jit)",
            "jax",
            jax_ready(jax.jit(lambda params, x, y, v: jloss(params, x, y))),
            jax_ready(jhvp_jit),
            inputs,
            float,
            flat_numpy,
            compilations=jax_cache_size(jhvp_jit),
            note="`jax.jvp` of `jax.grad` (forward over reverse) under `jit`",
        )
    ]


def build_autograd(p: Problem, opts: Options) -> list[Impl]:
    import autograd
    import autograd.numpy as anp
    from autograd.scipy.special import logsumexp

    def aloss(params, x, y):
        h = x
        for W, b in params[:-1]:
            h = anp.tanh(anp.dot(h, W) + b)
        W, b = params[-1]
        z = anp.dot(h, W) + b
        return anp.mean(logsumexp(z, axis=1) - anp.sum(y * z, axis=1))

    g = autograd.grad(aloss)

    def pulled(params, x, y, v):
        gs = g(params, x, y)
        total = 0.0
        for (dW, db), (vW, vb) in zip(gs, v):
            total = total + anp.sum(dW * vW) + anp.sum(db * vb)
        return total

    ahvp = autograd.grad(pulled)

    def primal(params, x, y, v):
        return aloss(params, x, y)

    return [
        Impl(
            "autograd",
            "autograd",
            primal,
            ahvp,
            p.inputs,
            float,
            flat_numpy,
            note="the gradient of <grad(loss), v> (reverse over reverse)",
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
    """Check the hand-written ``H v`` against central differences of the gradient along v."""
    params, x, y, v = p.inputs[0]
    eps = 1e-5

    def moved(sign):
        return tuple(
            (W + sign * eps * vW, b + sign * eps * vb) for (W, b), (vW, vb) in zip(params, v)
        )

    plus = flat_numpy(hand_value_and_grad(moved(1.0), x, y)[1])
    minus = flat_numpy(hand_value_and_grad(moved(-1.0), x, y)[1])
    fd = np.concatenate([((a - b) / (2 * eps)).ravel() for a, b in zip(plus, minus)])
    mine = np.concatenate([a.ravel() for a in flat_numpy(hand_hvp(params, x, y, v))])
    return float(np.max(np.abs(fd - mine)) / np.max(np.abs(mine)))

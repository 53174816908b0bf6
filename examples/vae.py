"""A variational autoencoder on the digits, the noise drawn inside the compiled training step.

The encoder maps an 8x8 digit to the mean and log-variance of a Gaussian over a small latent
code; the decoder maps a code back to pixel logits. The training step takes a
``numpy.random.Generator``: the reparameterization noise ``eps`` is drawn inside the compiled
step (``rng.normal(size=mu.shape)``), in the forward pass of the gradient, and the gradient
flows through ``z = mu + exp(logvar / 2) * eps`` to the encoder. The parameters are updated
by Adam, also inside the step. The generator advances at every step; a run seeded alike is
reproduced exactly.

The example prints the negative ELBO on the test set before and after training, and the
reconstruction error of the test digits.

Run: ``python examples/vae.py`` (``--help`` for the options)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from myia import myia, value_and_grad

# The model: params = (W1, b1, Wmu, bmu, Wlv, blv, W3, b3, W4, b4) -----------------------------


def encode(params, x):
    W1, b1, Wmu, bmu, Wlv, blv = params[:6]
    h = np.tanh(x @ W1 + b1)
    return h @ Wmu + bmu, h @ Wlv + blv


def decode(params, z):
    W3, b3, W4, b4 = params[6:]
    return np.tanh(z @ W3 + b3) @ W4 + b4


def negative_elbo(params, x, eps):
    """The mean over the batch of -ELBO: Bernoulli reconstruction cost plus KL to N(0, 1)."""
    mu, logvar = encode(params, x)
    z = mu + np.exp(0.5 * logvar) * eps
    logits = decode(params, z)
    reconstruction = np.sum(np.logaddexp(0.0, logits) - x * logits)
    kl = -0.5 * np.sum(1.0 + logvar - mu * mu - np.exp(logvar))
    return (reconstruction + kl) / x.shape[0]


def sampled_loss(params, x, rng):
    """-ELBO with the noise drawn from `rng`, inside Myia code."""
    mu_shape = (x.shape[0], params[2].shape[1])
    return negative_elbo(params, x, rng.normal(size=mu_shape))


def adam(params, grads, m, v, t, lr):
    b1, b2 = 0.9, 0.999
    m = tuple(b1 * mi + (1.0 - b1) * g for mi, g in zip(m, grads))
    v = tuple(b2 * vi + (1.0 - b2) * g * g for vi, g in zip(v, grads))
    scale = lr * np.sqrt(1.0 - b2**t) / (1.0 - b1**t)
    params = tuple(p - scale * mi / (np.sqrt(vi) + 1e-8) for p, mi, vi in zip(params, m, v))
    return params, m, v


@myia
def step(params, m, v, t, x, rng, lr):
    """One Adam step on a batch; the noise is drawn here, from the generator passed in."""
    loss, grads = value_and_grad(sampled_loss, "params")(params, x, rng)
    params, m, v = adam(params, grads, m, v, t, lr)
    return loss, params, m, v


@myia
def evaluate(params, x, rng):
    """-ELBO of `x` (one noise sample) and the squared error of the mean reconstruction."""
    mu, logvar = encode(params, x)
    recon = 1.0 / (1.0 + np.exp(-decode(params, mu)))
    return sampled_loss(params, x, rng), np.mean((recon - x) ** 2)


def init_params(rng, n_in=64, hidden=64, latent=4):
    def layer(a, b):
        return rng.normal(size=(a, b)) / np.sqrt(a), np.zeros(b)

    W1, b1 = layer(n_in, hidden)
    Wmu, bmu = layer(hidden, latent)
    Wlv, blv = layer(hidden, latent)
    W3, b3 = layer(latent, hidden)
    W4, b4 = layer(hidden, n_in)
    return (W1, b1, Wmu, bmu, Wlv, blv, W3, b3, W4, b4)


def load_data(seed: int = 0):
    """The digits as rows of 64 pixels in [0, 1], split 75% / 25% into train and test sets."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x_train, x_test = train_test_split(digits.data / 16.0, test_size=0.25, random_state=seed)
    return x_train, x_test


def train(params, x, *, epochs, batch_size, lr, seed):
    """Train with Adam; return the parameters, the losses and the median time per step."""
    order_rng = np.random.default_rng(seed)
    noise_rng = np.random.default_rng(seed + 1)
    m = tuple(np.zeros_like(p) for p in params)
    v = tuple(np.zeros_like(p) for p in params)
    losses, times = [], []
    t = 0
    for _ in range(epochs):
        order = order_rng.permutation(len(x))
        for i in range(len(x) // batch_size):
            t += 1
            xb = x[order[i * batch_size : (i + 1) * batch_size]]
            start = time.perf_counter()
            loss, params, m, v = step(params, m, v, float(t), xb, noise_rng, lr)
            times.append(time.perf_counter() - start)
            losses.append(float(loss))
    return params, losses, float(np.median(times[1:] or times))


def main(
    epochs: int = 30,
    batch_size: int = 64,
    lr: float = 3e-3,
    latent: int = 4,
    seed: int = 0,
) -> dict:
    x_train, x_test = load_data(seed)
    params = init_params(np.random.default_rng(seed), latent=latent)
    before, mse_before = evaluate(params, x_test, np.random.default_rng(seed + 2))
    params, losses, t_step = train(
        params, x_train, epochs=epochs, batch_size=batch_size, lr=lr, seed=seed
    )
    after, mse_after = evaluate(params, x_test, np.random.default_rng(seed + 2))
    print(f"test -ELBO per digit: {before:.2f} before training, {after:.2f} after")
    print(f"test reconstruction error (mean squared): {mse_before:.4f} -> {mse_after:.4f}")
    print(f"time per step: {t_step * 1e3:.3f} ms")
    return {
        "elbo_before": float(before),
        "elbo_after": float(after),
        "mse_before": float(mse_before),
        "mse_after": float(mse_after),
        "losses": losses,
        "time_per_step": t_step,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--latent", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(epochs=args.epochs, latent=args.latent, seed=args.seed)

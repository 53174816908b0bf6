"""A multi-layer perceptron trained with dropout on the digits, the RNG inside the compiled step.

The training step takes a ``numpy.random.Generator`` as an argument: the dropout masks are
drawn inside the compiled step (``rng.random(h.shape) >= rate``), once per step, in the
forward pass of the gradient; the backward pass reuses them. The generator advances at
every step, so each step drops other units, and a run seeded alike is reproduced exactly.

For comparison, the same step is compiled with the masks drawn outside (in Python) and passed
in: both draw the same numbers from generators seeded alike, so they train the same model,
and the example prints the time per step of each.

Run: ``python examples/dropout_mlp.py`` (``--help`` for the options)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from myia import myia, value_and_grad

# The model: params = (W1, b1, W2, b2) ----------------------------------------------------------


def log_softmax(z):
    z = z - np.max(z, axis=1, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))


def forward(params, x, keep, rate):
    """The logits, with the hidden units where `keep` is False dropped (inverted dropout)."""
    W1, b1, W2, b2 = params
    h = np.tanh(x @ W1 + b1)
    h = h * keep / (1.0 - rate)
    return h @ W2 + b2


def cost(params, x, y, keep, rate):
    return -np.sum(log_softmax(forward(params, x, keep, rate)) * y) / x.shape[0]


def sgd(params, grads, lr):
    return tuple(p - lr * g for p, g in zip(params, grads))


def noisy_cost(params, x, y, rng, rate):
    """The cost with a dropout mask drawn from `rng` (inside Myia code)."""
    keep = rng.random((x.shape[0], params[0].shape[1])) >= rate
    return cost(params, x, y, keep, rate)


@myia
def step(params, x, y, rng, lr, rate):
    """One step of SGD with dropout: the masks are drawn here, from the generator passed in."""
    loss, grads = value_and_grad(noisy_cost, "params")(params, x, y, rng, rate)
    return loss, sgd(params, grads, lr)


@myia
def step_given_mask(params, x, y, keep, lr, rate):
    """The same step, the mask drawn outside and passed in."""
    loss, grads = value_and_grad(cost, "params")(params, x, y, keep, rate)
    return loss, sgd(params, grads, lr)


@myia
def predict(params, x):
    W1, b1, W2, b2 = params
    return np.argmax(np.tanh(x @ W1 + b1) @ W2 + b2, axis=1)


def init_params(rng, sizes):
    n_in, hidden, n_out = sizes
    return (
        rng.normal(size=(n_in, hidden)) / np.sqrt(n_in),
        np.zeros(hidden),
        rng.normal(size=(hidden, n_out)) / np.sqrt(hidden),
        np.zeros(n_out),
    )


def load_data(seed: int = 0):
    """The digits as rows of 64 pixels in [0, 1], split 75% / 25% into train and test sets."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x, y = digits.data / 16.0, digits.target
    return train_test_split(x, y, test_size=0.25, random_state=seed, stratify=y)


def train(params, x, labels, *, epochs, batch_size, lr, rate, seed, inside=True):
    """Train with dropout; return the parameters, the losses and the mean time per step."""
    order_rng = np.random.default_rng(seed)
    drop_rng = np.random.default_rng(seed + 1)
    onehot = np.eye(10)[labels]
    hidden = params[0].shape[1]
    n_batches = len(x) // batch_size
    losses, times = [], []
    for _ in range(epochs):
        order = order_rng.permutation(len(x))
        for i in range(n_batches):
            batch = order[i * batch_size : (i + 1) * batch_size]
            xb, yb = x[batch], onehot[batch]
            start = time.perf_counter()
            if inside:
                loss, params = step(params, xb, yb, drop_rng, lr, rate)
            else:
                keep = drop_rng.random((batch_size, hidden)) >= rate
                loss, params = step_given_mask(params, xb, yb, keep, lr, rate)
            times.append(time.perf_counter() - start)
            losses.append(float(loss))
    return params, losses, float(np.median(times[1:] or times))


def main(
    epochs: int = 15,
    hidden: int = 64,
    batch_size: int = 32,
    lr: float = 0.2,
    rate: float = 0.2,
    seed: int = 0,
) -> dict:
    x_train, x_test, y_train, y_test = load_data(seed)
    init = init_params(np.random.default_rng(seed), (64, hidden, 10))
    kw = dict(epochs=epochs, batch_size=batch_size, lr=lr, rate=rate, seed=seed)
    params, losses, t_inside = train(init, x_train, y_train, **kw, inside=True)
    params_out, losses_out, t_outside = train(init, x_train, y_train, **kw, inside=False)
    accuracy = float(np.mean(predict(params, x_test) == y_test))
    same = bool(np.allclose(losses, losses_out)) and all(
        np.allclose(p, q) for p, q in zip(params, params_out)
    )
    print(f"test accuracy with dropout {rate}: {accuracy:.3f}")
    print(f"loss: first epoch {np.mean(losses[:20]):.3f}, last {np.mean(losses[-20:]):.3f}")
    print(
        f"time per step: masks drawn inside the step {t_inside * 1e3:.3f} ms, "
        f"drawn outside and passed in {t_outside * 1e3:.3f} ms "
        f"(ratio {t_inside / t_outside:.2f})"
    )
    print(f"same training either way (same draws): {same}")
    return {
        "test_accuracy": accuracy,
        "losses": losses,
        "time_inside": t_inside,
        "time_outside": t_outside,
        "same_as_outside": same,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(epochs=args.epochs, hidden=args.hidden, rate=args.rate, seed=args.seed)

"""A recurrent network written with a Python ``for`` loop, trained to continue sine waves.

A vanilla (Elman) RNN reads a batch of sequences one time step at a time,
``h = tanh(x_t @ Wx + h @ Wh + b)``, and predicts the next value of each sequence from ``h``.
The loop over time is a plain ``for`` loop: Myia differentiates through it (backpropagation
through time) without unrolling it in the program.

The sequences are sine waves of random frequencies and phases; the network must infer the
frequency from what it has seen so far. It is compared with the naive forecast "the next value
equals the current one".

Run: ``python examples/rnn.py``
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from myia import ArithmeticData, myia, value_and_grad


@dataclass
class RNN(ArithmeticData):
    Wx: np.ndarray  # (inputs, hidden)
    Wh: np.ndarray  # (hidden, hidden)
    b: np.ndarray  # (hidden,)
    Wo: np.ndarray  # (hidden, outputs)
    bo: np.ndarray  # (outputs,)

    def cell(self, h, x):
        return np.tanh(x @ self.Wx + h @ self.Wh + self.b)

    def readout(self, h):
        return h @ self.Wo + self.bo


def cost(rnn, xs, ys):
    """The mean squared error of the predictions of ``ys[t]`` from ``xs[:t + 1]``.

    `xs` and `ys` have the shape (time, batch, features).
    """
    h = np.zeros((xs.shape[1], rnn.Wh.shape[0]))
    loss = 0.0
    for t in range(xs.shape[0]):
        h = rnn.cell(h, xs[t])
        error = rnn.readout(h) - ys[t]
        loss = loss + np.mean(error * error)
    return loss / xs.shape[0]


@myia
def step(rnn, xs, ys, lr):
    loss, drnn = value_and_grad(cost, "rnn")(rnn, xs, ys)
    return loss, rnn - lr * drnn


@myia
def evaluate(rnn, xs, ys):
    return cost(rnn, xs, ys)


def sine_batch(rng: np.random.Generator, length: int, batch: int):
    """Inputs (time, batch, 1) and targets shifted by one step."""
    freq = rng.uniform(0.1, 0.5, size=(1, batch, 1))
    phase = rng.uniform(0.0, 2 * np.pi, size=(1, batch, 1))
    t = np.arange(length + 1).reshape(-1, 1, 1)
    s = np.sin(freq * t + phase)
    return s[:-1], s[1:]


def main(steps: int = 300, length: int = 20, batch: int = 32, hidden: int = 16, seed: int = 0):
    """Train the RNN; print and return its losses."""
    rng = np.random.default_rng(seed)
    rnn = RNN(
        rng.normal(size=(1, hidden)),
        rng.normal(size=(hidden, hidden)) / np.sqrt(hidden),
        np.zeros(hidden),
        rng.normal(size=(hidden, 1)) / np.sqrt(hidden),
        np.zeros(1),
    )
    test_x, test_y = sine_batch(rng, length, 256)
    naive = float(np.mean((test_x - test_y) ** 2))
    initial = evaluate(rnn, test_x, test_y)
    print(f"{length}-step sequences, batches of {batch}, {hidden} hidden units")
    print(f"test loss before training: {initial:.4f} (naive forecast: {naive:.4f})")
    losses = []
    start = time.perf_counter()
    for i in range(steps):
        xs, ys = sine_batch(rng, length, batch)
        loss, rnn = step(rnn, xs, ys, 0.2)
        losses.append(loss)
        if (i + 1) % max(1, steps // 5) == 0:
            print(f"step {i + 1:4d}: training loss {np.mean(losses[-20:]):.4f}")
    elapsed = time.perf_counter() - start
    final = evaluate(rnn, test_x, test_y)
    print(f"test loss after training:  {final:.4f} (naive forecast: {naive:.4f})")
    print(f"{steps} steps in {elapsed:.1f} s ({1e3 * elapsed / steps:.1f} ms per step)")
    return {"losses": losses, "initial": initial, "final": final, "naive": naive}


if __name__ == "__main__":
    main()

"""A small convolutional network on the handwritten digits: conv2d, ReLU, max pooling, linear.

Images are NCHW arrays (batch, channels, height, width) of 8 x 8 pixels. The network is

    conv2d 3 x 3 (1 -> C channels, padding 1) -> ReLU -> max pooling 2 x 2 -> linear -> 10 classes

Myia's 2-D convolution and max pooling are ``myia.nn.conv2d(x, w, stride=1, padding=0,
dilation=1, groups=1)`` and ``myia.nn.max_pool2d(x, kernel_size, stride=None, padding=0)``
(NumPy has no convolution for Myia to map); their gradients are built in.

Run: ``python examples/convnet.py``
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from myia import ArithmeticData, myia, nn, value_and_grad


@dataclass
class ConvNet(ArithmeticData):
    kernels: np.ndarray  # (C, 1, 3, 3)
    bias: np.ndarray  # (1, C, 1, 1)
    W: np.ndarray  # (C * 4 * 4, 10)
    b: np.ndarray  # (10,)

    def apply(self, x):
        h = nn.conv2d(x, self.kernels, padding=1)  # stride 1: (N, C, 8, 8)
        h = np.maximum(h + self.bias, 0.0)
        h = nn.max_pool2d(h, 2)  # (N, C, 4, 4)
        h = h.reshape(x.shape[0], -1)
        return h @ self.W + self.b


def log_softmax(z):
    z = z - np.max(z, axis=1, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))


def cost(net, x, y):
    return -np.sum(log_softmax(net.apply(x)) * y) / x.shape[0]


@myia
def step(net, x, y, lr):
    loss, dnet = value_and_grad(cost, "net")(net, x, y)
    return loss, net - lr * dnet


@myia
def predict(net, x):
    return np.argmax(net.apply(x), axis=1)


def load_data(seed: int = 0):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = (digits.data / 16.0).reshape(-1, 1, 8, 8)
    return train_test_split(
        x, digits.target, test_size=0.25, random_state=seed, stratify=digits.target
    )


def main(epochs: int = 10, channels: int = 8, batch_size: int = 32, lr: float = 0.2, seed=0):
    """Train the network; print and return its test accuracy."""
    x_train, x_test, y_train, y_test = load_data(seed)
    rng = np.random.default_rng(seed)
    net = ConvNet(
        rng.normal(size=(channels, 1, 3, 3)) / 3.0,
        np.zeros((1, channels, 1, 1)),
        rng.normal(size=(channels * 16, 10)) / np.sqrt(channels * 16),
        np.zeros(10),
    )
    onehot = np.eye(10)[y_train]
    n_batches = len(x_train) // batch_size
    print(f"conv 3x3 x {channels} -> relu -> max pool 2x2 -> linear; {len(x_train)} images")
    start = time.perf_counter()
    losses = []
    for epoch in range(epochs):
        order = rng.permutation(len(x_train))
        for i in range(n_batches):
            batch = order[i * batch_size : (i + 1) * batch_size]
            loss, net = step(net, x_train[batch], onehot[batch], lr)
            losses.append(loss)
        accuracy = float(np.mean(predict(net, x_test) == y_test))
        print(
            f"epoch {epoch + 1}: mean loss {np.mean(losses[-n_batches:]):.3f}, "
            f"test accuracy {accuracy:.1%}"
        )
    elapsed = time.perf_counter() - start
    print(
        f"{len(losses)} steps in {elapsed:.1f} s ({1e3 * elapsed / len(losses):.1f} ms per step)"
    )
    return {"losses": losses, "test_accuracy": accuracy}


if __name__ == "__main__":
    main()

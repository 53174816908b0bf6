"""Myia's demo: train a multi-layer perceptron on handwritten digits.

The model is written with dataclass layers (`Linear`, `Tanh`, `Sequential`); Myia compiles the
training step ``value_and_grad(cost, "model")`` followed by ``model - lr * dmodel`` once, for the
types and shapes of its arguments, and every later step reuses that compilation.

The data set is scikit-learn's 8 x 8 handwritten digits (1797 images, shipped with the package:
nothing is downloaded). The demo prints a progress bar while it trains, then the test accuracy,
the time per step and the path of a plot of the training curve.

Run: ``python examples/demo.py`` (``--help`` for the options)
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from myia import ArithmeticData, myia, value_and_grad

OUTPUT = Path(__file__).resolve().parent / "output"

# The model -------------------------------------------------------------------------------------


@dataclass
class Linear(ArithmeticData):
    """An affine layer: ``x @ W + b``."""

    W: np.ndarray
    b: np.ndarray

    def apply(self, x):
        return x @ self.W + self.b


@dataclass
class Tanh(ArithmeticData):
    """The hyperbolic tangent, elementwise (a layer without parameters)."""

    def apply(self, x):
        return np.tanh(x)


@dataclass
class Sequential(ArithmeticData):
    """Layers applied one after the other."""

    layers: tuple

    def apply(self, x):
        for layer in self.layers:
            x = layer.apply(x)
        return x


def log_softmax(z):
    z = z - np.max(z, axis=1, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))


def cost(model, x, y):
    """The mean cross-entropy of the model's predictions for `x` against one-hot labels `y`."""
    return -np.sum(log_softmax(model.apply(x)) * y) / x.shape[0]


@myia
def step(model, x, y, lr):
    """One step of stochastic gradient descent: the loss before the step, and the new model."""
    loss, dmodel = value_and_grad(cost, "model")(model, x, y)
    return loss, model - lr * dmodel


@myia
def predict(model, x):
    """The predicted class of each row of `x`."""
    return np.argmax(model.apply(x), axis=1)


def init_model(rng: np.random.Generator, sizes: tuple[int, ...]) -> Sequential:
    """A perceptron with layers of the given sizes, tanh between them."""
    layers: list = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        W = rng.normal(size=(n_in, n_out)) / np.sqrt(n_in)
        layers += [Linear(W, np.zeros(n_out)), Tanh()]
    return Sequential(tuple(layers[:-1]))  # no tanh after the last layer


# The data --------------------------------------------------------------------------------------


def load_data(seed: int = 0):
    """The digits as rows of 64 pixels in [0, 1], split 75% / 25% into train and test sets."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = digits.data / 16.0
    return train_test_split(
        x, digits.target, test_size=0.25, random_state=seed, stratify=digits.target
    )


# Training --------------------------------------------------------------------------------------


def train(model, x, labels, x_test, y_test, *, epochs, batch_size, lr, seed, progress):
    """Train `model` with SGD; return it and the record of the run."""
    from tqdm import tqdm

    rng = np.random.default_rng(seed)
    onehot = np.eye(10)[labels]
    n_batches = len(x) // batch_size  # every batch has the same shape: one compilation
    losses, accuracies, step_times = [], [], []
    compile_time = 0.0
    bar = tqdm(
        total=epochs * n_batches * batch_size,
        unit="sample",
        unit_scale=True,
        disable=not progress,
        desc="training",
    )
    with bar:
        for epoch in range(epochs):
            order = rng.permutation(len(x))
            for i in range(n_batches):
                batch = order[i * batch_size : (i + 1) * batch_size]
                start = time.perf_counter()
                loss, model = step(model, x[batch], onehot[batch], lr)
                elapsed = time.perf_counter() - start
                if epoch == 0 and i == 0:
                    compile_time = elapsed  # the first call parses, infers, differentiates
                else:
                    step_times.append(elapsed)
                losses.append(loss)
                bar.update(batch_size)
                if i % 10 == 0:
                    bar.set_postfix(
                        epoch=epoch + 1, loss=f"{np.mean(losses[-10:]):.3f}", refresh=False
                    )
            accuracies.append(float(np.mean(predict(model, x_test) == y_test)))
            bar.set_postfix(epoch=epoch + 1, loss=f"{loss:.3f}", test_acc=f"{accuracies[-1]:.3f}")
    return model, {
        "losses": losses,
        "test_accuracies": accuracies,
        "compile_time": compile_time,
        "time_per_step": float(np.mean(step_times)) if step_times else compile_time,
        "steps_per_epoch": n_batches,
    }


def plot(record: dict, path: Path) -> Path:
    """Plot the training loss and the test accuracy per epoch into `path` (a PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    losses = np.array(record["losses"])
    per_epoch = record["steps_per_epoch"]
    epochs = np.arange(1, len(record["test_accuracies"]) + 1)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(np.arange(len(losses)) / per_epoch, losses, lw=0.5, alpha=0.4, label="loss (step)")
    window = min(per_epoch, len(losses))
    smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
    ax.plot((np.arange(len(smooth)) + window) / per_epoch, smooth, label="loss (running mean)")
    ax.set_xlabel("epoch")
    ax.set_ylabel("training cross-entropy")
    ax.set_yscale("log")
    acc = ax.twinx()
    acc.plot(epochs, record["test_accuracies"], "o-", color="C2", label="test accuracy")
    acc.set_ylabel("test accuracy")
    acc.set_ylim(0.0, 1.0)
    lines = ax.get_legend_handles_labels()[0] + acc.get_legend_handles_labels()[0]
    ax.legend(lines, [ln.get_label() for ln in lines], loc="lower left")
    ax.set_title("A multi-layer perceptron trained with Myia on the digits")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(
    epochs: int = 20,
    hidden: int = 64,
    batch_size: int = 32,
    lr: float = 0.2,
    seed: int = 0,
    plot_path: str | Path | None = OUTPUT / "demo_training_curve.png",
    progress: bool = True,
) -> dict:
    """Train the perceptron; print and return its test accuracy and timings."""
    start = time.perf_counter()
    x_train, x_test, y_train, y_test = load_data(seed)
    rng = np.random.default_rng(seed)
    model = init_model(rng, (64, hidden, 10))
    print(
        f"digits: {len(x_train)} training and {len(x_test)} test images of 8 x 8 pixels; "
        f"perceptron 64-{hidden}-10, {epochs} epochs of batches of {batch_size}"
    )
    model, record = train(
        model,
        x_train,
        y_train,
        x_test,
        y_test,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        seed=seed,
        progress=progress,
    )
    accuracy = float(np.mean(predict(model, x_test) == y_test))
    record.update(test_accuracy=accuracy, total_time=time.perf_counter() - start)
    steps = len(record["losses"])
    print(f"test accuracy:     {accuracy:.2%} ({len(x_test)} images)")
    print(
        f"first step:        {record['compile_time']:.2f} s (parse, infer, differentiate, compile)"
    )
    print(f"time per step:     {1e3 * record['time_per_step']:.2f} ms ({steps} steps)")
    print(f"compiled for:      {', '.join(str(s) for s in step.compiled_signatures())}")
    if plot_path is not None:
        record["plot"] = plot(record, Path(plot_path))
        print(f"training curve:    {record['plot']}")
    print(f"total time:        {record['total_time']:.1f} s")
    return record


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", default=str(OUTPUT / "demo_training_curve.png"))
    args = parser.parse_args()
    main(args.epochs, args.hidden, args.batch_size, args.lr, args.seed, args.plot)

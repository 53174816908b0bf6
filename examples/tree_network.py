"""A recursive neural network over trees of varying shapes, compiled once for all shapes.

Each leaf of a tree is a word; the network embeds the words and combines the two children of
every inner node with one shared layer, ``tanh([left; right] @ W + b)``, recursively up to the
root, whose vector a linear layer turns into a score (a TreeRNN, as in Socher et al.'s
sentiment treebank models). The task is a small synthetic sentiment treebank: a tree is
positive when the sentiments of its words add up to a positive number.

The tree is a recursive dataclass (its children are annotated ``Optional["Tree"]``), so every
tree, whatever its shape, has one type: `step` compiles once, as
``step.compiled_signatures()`` shows at the end.

Run: ``python examples/tree_network.py``
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from myia import ArithmeticData, myia, value_and_grad

WORDS = ("awful", "bad", "dull", "fine", "good", "great")
SENTIMENT = (-2, -1, 0, 0, 1, 2)


@dataclass
class Tree:
    """A binary tree: a leaf holds a word (an index into `WORDS`), an inner node two trees."""

    word: int
    left: Tree | None = None
    right: Tree | None = None


@dataclass
class TreeNet(ArithmeticData):
    embedding: np.ndarray  # (words, d): one vector per word
    W: np.ndarray  # (2 d, d): combines two children
    b: np.ndarray  # (d,)
    readout: np.ndarray  # (d,): the score of the root's vector

    def encode(self, t):
        """The vector of tree `t`, computed recursively from its leaves."""
        # Two nested tests rather than `if t.left is not None and t.right is not None`:
        # Myia narrows the type of `t.left` (Tree | None) in an `if` testing it alone, not yet
        # in one testing it with `and`/`or`.
        if t.left is not None:
            if t.right is not None:
                children = np.concatenate((self.encode(t.left), self.encode(t.right)))
                return np.tanh(children @ self.W + self.b)
        return self.embedding[t.word]

    def score(self, t):
        return self.encode(t) @ self.readout


def cost(net, t, label):
    """The logistic loss of the score of tree `t` for `label` (1.0 or -1.0)."""
    return np.log(1.0 + np.exp(-label * net.score(t)))


@myia
def step(net, t, label, lr):
    loss, dnet = value_and_grad(cost, "net")(net, t, label)
    return loss, net - lr * dnet


@myia
def score(net, t):
    return net.score(t)


# Data ------------------------------------------------------------------------------------------


def random_tree(rng: np.random.Generator, depth: int) -> Tree:
    if depth == 0 or rng.random() < 0.3:
        return Tree(int(rng.integers(len(WORDS))))
    return Tree(-1, random_tree(rng, depth - 1), random_tree(rng, depth - 1))


def sentiment(t: Tree) -> int:
    if t.left is None or t.right is None:
        return SENTIMENT[t.word]
    return sentiment(t.left) + sentiment(t.right)


def show(t: Tree) -> str:
    if t.left is None or t.right is None:
        return WORDS[t.word]
    return f"({show(t.left)} {show(t.right)})"


def size(t: Tree) -> int:
    if t.left is None or t.right is None:
        return 1
    return 1 + size(t.left) + size(t.right)


def dataset(rng: np.random.Generator, n: int, depth: int) -> list[tuple[Tree, float]]:
    """`n` random trees (no neutral ones) and their labels."""
    out = []
    while len(out) < n:
        t = random_tree(rng, depth)
        s = sentiment(t)
        if s != 0:
            out.append((t, 1.0 if s > 0 else -1.0))
    return out


def accuracy(net, data) -> float:
    return float(np.mean([np.sign(score(net, t)) == label for t, label in data]))


def main(
    n_train: int = 400,
    n_test: int = 200,
    epochs: int = 5,
    dim: int = 8,
    lr: float = 0.05,
    seed: int = 0,
):
    """Train the tree network; print and return its test accuracy and losses."""
    rng = np.random.default_rng(seed)
    train, test = dataset(rng, n_train, 4), dataset(rng, n_test, 4)
    sizes = [size(t) for t, _ in train]
    print(
        f"{n_train} training trees of {min(sizes)} to {max(sizes)} nodes, {n_test} test trees; "
        f"e.g. {show(train[0][0])}"
    )
    net = TreeNet(
        rng.normal(size=(len(WORDS), dim)) * 0.5,
        rng.normal(size=(2 * dim, dim)) / np.sqrt(2 * dim),
        np.zeros(dim),
        rng.normal(size=dim) / np.sqrt(dim),
    )
    start = time.perf_counter()
    losses = []
    print(f"before training: test accuracy {accuracy(net, test):.1%}")
    for epoch in range(epochs):
        total = 0.0
        for i in rng.permutation(len(train)):
            t, label = train[i]
            loss, net = step(net, t, label, lr / (1 + epoch))  # one tree at a time, any shape
            total += loss
        losses.append(total / len(train))
        acc = accuracy(net, test)
        print(f"epoch {epoch + 1}: mean loss {losses[-1]:.3f}, test accuracy {acc:.1%}")
    elapsed = time.perf_counter() - start
    print(f"{epochs * len(train)} steps in {elapsed:.1f} s")
    print(f"step compiled {len(step.compiled_signatures())} time(s), for all tree shapes:")
    for sig in step.compiled_signatures():
        print("   ", sig)
    return {"losses": losses, "test_accuracy": acc, "signatures": step.compiled_signatures()}


if __name__ == "__main__":
    main()

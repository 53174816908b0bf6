"""``tree_rnn``: a recursive net over binary trees of different shapes.

A leaf is a vector of 16; a node's value is ``tanh(W @ concat(h_left, h_right) + b)``; the
loss is the sum of the root's value; gradients w.r.t. `W` and `b`. Successive calls take trees
of different shapes (a pool of random shapes). In Myia a tree is a dataclass with
``Optional["Tree"]`` children: one type for every shape, so one compilation (the table counts
them); JAX's `jit` traces the tree's structure and compiles once per shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from benchmarks.harness import Impl, Options, Problem, directional_check, myia_impl
from benchmarks.peers import jax_cache_size, jax_module, jax_ready, to_numpy, torch_module

NAME = "tree_rnn"
HIDDEN = 16


@dataclass
class Tree:
    """A binary tree: a leaf holds its vector in `value`; a node has both children."""

    value: np.ndarray  # a node's is zeros (unused): every node has a field of one type
    left: Optional["Tree"] = None  # noqa: UP007, UP037, UP045
    right: Optional["Tree"] = None  # noqa: UP007, UP037, UP045


def random_tree(rng: np.random.Generator, leaves: int, zeros: np.ndarray) -> Tree:
    """Build a tree of `leaves` leaves, split at a uniformly random point at each node."""
    if leaves == 1:
        return Tree(rng.normal(size=HIDDEN))
    k = int(rng.integers(1, leaves))
    return Tree(zeros, random_tree(rng, k, zeros), random_tree(rng, leaves - k, zeros))


def depth(t: Tree | None) -> int:
    return 0 if t is None else 1 + max(depth(t.left), depth(t.right))


def problem(quick: bool) -> Problem:
    leaves, shapes = (8, 3) if quick else (64, 20)
    rng = np.random.default_rng(0)
    zeros = np.zeros(HIDDEN)
    trees = [random_tree(rng, leaves, zeros) for _ in range(shapes)]
    W = rng.normal(size=(HIDDEN, 2 * HIDDEN)) / np.sqrt(2 * HIDDEN)
    b = rng.normal(size=HIDDEN) * 0.1
    depths = [depth(t) for t in trees]
    return Problem(
        NAME,
        f"trees of {leaves} leaves, vectors of {HIDDEN}, W {HIDDEN}x{2 * HIDDEN}; a pool of "
        f"{shapes} random shapes (depth {min(depths)} to {max(depths)}), each call a different "
        "shape",
        [(t, W, b) for t in trees],
        params={"new_input_column": True},
        rtol=1e-9,
        check_count=2 if quick else 3,
        notes=[
            "compilations (grad): how many times the gradient function compiled for the "
            f"{shapes} shapes (Myia: `len(compiled_signatures())`; JAX: `jit`'s cache size)",
            "grad, first call on a new shape: the median of the first calls on shapes not "
            "seen before (for JAX `jit`, tracing and compiling that shape)",
            "JAX's steady state cycles through shapes already compiled; a stream of trees "
            "never seen before would pay its first-call time on every call",
        ],
    )


# The functions Myia compiles ------------------------------------------------------------------


def tree_h(t, W, b):
    if t.left is not None:
        if t.right is not None:
            h = np.concatenate((tree_h(t.left, W, b), tree_h(t.right, W, b)))
            return np.tanh(W @ h + b)
    return t.value


def tree_loss(t, W, b):
    return np.sum(tree_h(t, W, b))


# By hand --------------------------------------------------------------------------------------


def _forward(t, W, b, nodes):
    """Append the nodes of `t` in post-order: (h,) for a leaf, (h, x, left, right) for a node."""
    if t.left is not None and t.right is not None:
        i = _forward(t.left, W, b, nodes)
        j = _forward(t.right, W, b, nodes)
        x = np.concatenate((nodes[i][0], nodes[j][0]))
        nodes.append((np.tanh(W @ x + b), x, i, j))
    else:
        nodes.append((t.value,))
    return len(nodes) - 1


def hand_loss(t, W, b):
    return float(np.sum(tree_h(t, W, b)))


def hand_grad(t, W, b):
    """(dW, db) by a hand-written backward sweep over the nodes in reverse post-order."""
    nodes: list = []
    _forward(t, W, b, nodes)
    gh: list = [None] * len(nodes)
    gh[-1] = np.ones(HIDDEN)
    dW = np.zeros_like(W)
    db = np.zeros_like(b)
    for k in range(len(nodes) - 1, -1, -1):
        node = nodes[k]
        if len(node) == 1 or gh[k] is None:
            continue
        h, x, i, j = node
        gz = gh[k] * (1.0 - h * h)
        dW += np.outer(gz, x)
        db += gz
        gx = W.T @ gz
        for child, g in ((i, gx[:HIDDEN]), (j, gx[HIDDEN:])):
            gh[child] = g if gh[child] is None else gh[child] + g
    return dW, db


# Builders -------------------------------------------------------------------------------------


def _pair(out) -> list[np.ndarray]:
    return [to_numpy(out[0]), to_numpy(out[1])]


def as_tuples(t: Tree, leaf) -> object:
    """Convert `t` to nested tuples: a leaf is ``leaf(value)``, a node ``(left, right)``."""
    if t.left is not None and t.right is not None:
        return (as_tuples(t.left, leaf), as_tuples(t.right, leaf))
    return leaf(t.value)


def build_myia(p: Problem, opts: Options) -> list[Impl]:
    return myia_impl(p, opts, tree_loss, _pair, wrt=("W", "b"))


def build_hand(p: Problem, opts: Options) -> list[Impl]:
    return [
        Impl(
            "hand",
            "hand",
            hand_loss,
            hand_grad,
            p.inputs,
            float,
            _pair,
            note="NumPy; the gradient by a backward sweep over the nodes in reverse post-order",
        )
    ]


def build_torch(p: Problem, opts: Options) -> list[Impl]:
    torch = torch_module()

    def h(t, W, b):
        if isinstance(t, tuple):
            return torch.tanh(W @ torch.cat((h(t[0], W, b), h(t[1], W, b))) + b)
        return t

    def primal(t, W, b):
        with torch.no_grad():
            return h(t, W, b).sum()

    def grad(t, W, b):
        return torch.autograd.grad(h(t, W, b).sum(), (W, b))

    t0, W, b = p.inputs[0]
    Wt = torch.tensor(W, requires_grad=True)
    bt = torch.tensor(b, requires_grad=True)
    inputs = [(as_tuples(t, torch.from_numpy), Wt, bt) for t, _, _ in p.inputs]
    return [
        Impl(
            "torch",
            "torch",
            primal,
            grad,
            inputs,
            lambda y: float(y),
            _pair,
            note="trees as nested tuples of tensors",
        )
    ]


def build_jax(p: Problem, opts: Options) -> list[Impl]:
    jax = jax_module()
    jnp = jax.numpy

    def h(t, W, b):
        if isinstance(t, tuple):
            return jnp.tanh(W @ jnp.concatenate((h(t[0], W, b), h(t[1], W, b))) + b)
        return t

    def loss(t, W, b):
        return jnp.sum(h(t, W, b))

    primal = jax.jit(loss)
    grad = jax.jit(jax.grad(loss, argnums=(1, 2)))
    _, W, b = p.inputs[0]
    inputs = [(as_tuples(t, jnp.asarray), jnp.asarray(W), jnp.asarray(b)) for t, _, _ in p.inputs]
    return [
        Impl(
            "jax (jit)",
            "jax",
            jax_ready(primal),
            jax_ready(grad),
            inputs,
            float,
            _pair,
            compilations=jax_cache_size(grad),
            note="trees as nested tuples (pytrees) of arrays; `jit` traces each shape",
        )
    ]


def build_autograd(p: Problem, opts: Options) -> list[Impl]:
    import autograd
    import autograd.numpy as anp

    def h(t, W, b):
        if t.left is not None and t.right is not None:
            return anp.tanh(anp.dot(W, anp.concatenate((h(t.left, W, b), h(t.right, W, b)))) + b)
        return t.value

    def loss(t, W, b):
        return anp.sum(h(t, W, b))

    return [
        Impl("autograd", "autograd", loss, autograd.grad(loss, (1, 2)), p.inputs, float, _pair)
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
    t, W, b = p.inputs[0]
    return directional_check(
        lambda pt: hand_loss(t, pt[0], pt[1]), list(hand_grad(t, W, b)), [W, b]
    )

"""Second-order gradients with respect to recursive structures (trees, linked lists).

A tree's sensitivity rebuilt from its fields (`record_from_fields`, the backward pass of
`record_fields`) had its recursive fields unfolded (``Tree(...) | None``) where the tree's own
type has ``SelfRef | None``: joined, they made ``Tree | Tree | None``, and the second order
w.r.t. a tree failed. The inner products and maps over two trees narrowed the first tree's
``Tree | None`` only (``record_fields on Tree | None``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
import pytest

from myia import grad, jvp, myia, tree_map, vjp, vmap
from myia.errors import MyiaTypeError
from myia.testing import check_grad

BACKENDS = ["debug", "numpy", "jax"]


@dataclass
class Tree:
    value: np.ndarray
    left: Optional["Tree"] = None  # noqa: UP007, UP037, UP045
    right: Optional["Tree"] = None  # noqa: UP007, UP037, UP045


@dataclass
class Node:
    value: float
    next: Optional["Node"] = None  # noqa: UP007, UP037, UP045


def encode(t, W, b):
    """A tree RNN: a leaf is its vector, a node ``tanh(W @ [h_left; h_right] + b)``."""
    if t.left is None or t.right is None:
        return np.tanh(t.value)
    h = np.concatenate((encode(t.left, W, b), encode(t.right, W, b)))
    return np.tanh(W @ h + b)


def tree_rnn_loss(t, W, b):
    return np.sum(encode(t, W, b) ** 2)


def leaf(rng):
    return Tree(rng.normal(size=2))


def node(left, right):
    return Tree(np.zeros(2), left, right)


def rnn_inputs():
    rng = np.random.default_rng(0)
    t = node(node(leaf(rng), leaf(rng)), leaf(rng))
    W = rng.normal(size=(2, 4)) / 2.0
    b = rng.normal(size=2) * 0.1
    return t, W, b


@pytest.mark.parametrize("backend", BACKENDS)
def test_tree_rnn_loss_differentiated_twice_wrt_the_tree(backend):
    t, W, b = rnn_inputs()
    check_grad(tree_rnn_loss, t, W, b, wrt=0, order=2, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tree_rnn_hessian_vector_product_wrt_the_leaves(backend):
    t, W, b = rnn_inputs()
    u = tree_map(np.ones_like, t)

    def hvp(t, u, W, b):
        return jvp(lambda s: grad(tree_rnn_loss)(s, W, b), (t,), (u,))[1]

    got = myia(hvp, backend=backend)(t, u, W, b)
    # Central differences of the gradient along u.
    g = myia(grad(tree_rnn_loss), backend=backend)
    eps = 1e-6
    plus = g(tree_map(lambda x, d: x + eps * d, t, u), W, b)
    minus = g(tree_map(lambda x, d: x - eps * d, t, u), W, b)
    expected = tree_map(lambda p, m: (p - m) / (2 * eps), plus, minus)
    for a, e in zip(_leaves(got), _leaves(expected)):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-7)


def _leaves(t):
    return [] if t is None else [t.value, *_leaves(t.left), *_leaves(t.right)]


def list_fold(n, x):
    s = math.sin(n.value * x)
    if n.next is not None:
        s = s + n.value * list_fold(n.next, x)
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_grad_wrt_a_linked_list(backend):
    lst = Node(0.7, Node(-1.2, Node(0.4)))
    check_grad(list_fold, lst, 0.9, order=2, backend=backend)


def scaled(t, x):
    return tree_map(lambda a: a * x, t)


def added(t, u):
    return tree_map(lambda a, b: a + b, t, u)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tree_map_over_two_trees_with_missing_children(backend):
    rng = np.random.default_rng(1)
    t = Tree(rng.normal(size=2), Tree(rng.normal(size=2)), None)
    u = tree_map(np.ones_like, t)
    got = myia(added, backend=backend)(t, u)
    np.testing.assert_allclose(got.value, t.value + 1.0)
    np.testing.assert_allclose(got.left.value, t.left.value + 1.0)
    assert got.right is None and got.left.left is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp_of_a_tree_map_with_a_tree_cotangent(backend):
    t = Tree(np.array([1.5]), Tree(np.array([-0.5]), None, Tree(np.array([2.0]))))
    ct = Tree(np.array([0.1]), Tree(np.array([0.2]), None, Tree(np.array([0.3]))))

    def pull(t, x, ct):
        return vjp(scaled, t, x)[1](ct)

    dt, dx = myia(pull, backend=backend)(t, 0.8, ct)
    assert dx == pytest.approx(0.15 - 0.1 + 0.6)
    np.testing.assert_allclose(
        [dt.value[0], dt.left.value[0], dt.left.right.value[0]], [0.08, 0.16, 0.24]
    )
    assert dt.right is None and dt.left.left is None


# Transformations of a function chosen at run time ------------------------------------------


def apply_jvp(fn, x, v):
    return jvp(fn, (x,), (v,))[1]  # MARK jvp


def apply_vmap(fn, x, v):
    return vmap(fn)(np.stack((x, v)))  # MARK vmap


def sin_of(z):
    return np.sin(z)


def cos_of(z):
    return np.cos(z)


def jvp_of_chosen_lambda(W, x, v):
    f = (lambda z: np.sin(W @ z)) if np.sum(x) > 0 else (lambda z: np.cos(W @ z))
    return apply_jvp(f, x, v)


def vmap_of_chosen_function(W, x, v):
    f = sin_of if np.sum(x) > 0 else cos_of
    return apply_vmap(f, x, v)


def grad_chosen(W, x, v):
    g = grad(lambda z: np.sum(sin_of(z))) if np.sum(x) > 0 else grad(lambda z: np.sum(z * z))
    return g(x)  # MARK grad


def _marked(tag):
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if line.rstrip().endswith(f"# MARK {tag}"))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "fn, what",
    [(jvp_of_chosen_lambda, "jvp"), (vmap_of_chosen_function, "vmap"), (grad_chosen, "grad")],
)
def test_a_transformation_of_a_function_chosen_at_run_time_is_refused_at_the_users_line(
    fn, what, backend
):
    # It was ``<JvpValue object at 0x...> is not callable``, raised by the program run.
    W, x, v = np.ones((3, 4)), np.ones(4), np.arange(4.0)
    with pytest.raises(MyiaTypeError, match=f"{what} of a function chosen at run time") as e:
        myia(fn, backend=backend)(W, x, v)
    assert "`if` statement" in str(e.value)
    last = e.value.frames[-1].location
    assert last.filename == __file__ and last.line == _marked(what)


def jvp_of_lambda_chosen_by_if(W, x, v):
    if np.sum(x) > 0:
        f = lambda z: np.sin(W @ z)  # noqa: E731
    else:
        f = lambda z: np.cos(W @ z)  # noqa: E731
    return apply_jvp(f, x, v)


def vmap_of_function_chosen_by_if(W, x, v):
    if np.sum(x) > 0:
        f = sin_of
    else:
        f = cos_of
    return apply_vmap(f, x, v)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_rewrite_the_message_asks_for_works(backend):
    W, x, v = np.ones((3, 4)), np.ones(4), np.arange(4.0)
    for s in (1.0, -1.0):
        got = myia(jvp_of_lambda_chosen_by_if, backend=backend)(W, s * x, v)
        act = np.cos if s > 0 else lambda u: -np.sin(u)
        np.testing.assert_allclose(got, act(W @ (s * x)) * (W @ v), rtol=1e-12)
        got = myia(vmap_of_function_chosen_by_if, backend=backend)(W, s * x, v)
        f = np.sin if s > 0 else np.cos
        np.testing.assert_allclose(got, f(np.stack((s * x, v))), rtol=1e-12)

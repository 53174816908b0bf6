"""Recursion over trees in native whole programs: a tree as arrays, one per field.

A value of a recursive dataclass is converted once per call, on the host, into one array per
field (`myia.compile.native_records`); the recursion runs as machine code, one call of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pytest
from helpers import own_cache_dir  # noqa: F401 (a fixture)

from myia import grad, myia
from myia.testing import check_grad

# Its tests share the module's disk cache of machine code: one xdist worker runs them all.
pytestmark = pytest.mark.xdist_group(__name__)

numba = pytest.importorskip("numba")


@dataclass
class Tree:
    value: np.ndarray
    left: Optional["Tree"] = None  # noqa: UP007, UP037, UP045
    right: Optional["Tree"] = None  # noqa: UP007, UP037, UP045


@dataclass
class Node:
    weight: float
    left: Optional["Node"] = None  # noqa: UP007, UP037, UP045
    right: Optional["Node"] = None  # noqa: UP007, UP037, UP045


def tree_h(t, W, b):
    if t.left is not None:
        if t.right is not None:
            h = np.concatenate((tree_h(t.left, W, b), tree_h(t.right, W, b)))
            return np.tanh(W @ h + b)
    return t.value


def tree_loss(t, W, b):
    return np.sum(tree_h(t, W, b))


def total(t, x):
    if t is None:
        return 0.0
    return t.weight * x + total(t.left, x * 0.5) + total(t.right, x * 0.25)


def leftmost(t):
    if t.left is None:
        return t
    return leftmost(t.left)


def depth(n):
    if n == 0:
        return 0
    return 1 + depth(n - 1)


def _tree(rng, leaves):
    if leaves == 1:
        return Tree(rng.normal(size=4))
    k = int(rng.integers(1, leaves))
    return Tree(np.zeros(4), _tree(rng, k), _tree(rng, leaves - k))


def _nodes(rng, depth):
    if depth <= 0:
        return None
    return Node(float(rng.normal()), _nodes(rng, depth - 1), _nodes(rng, depth - 2))


def _params(rng):
    return rng.normal(size=(4, 8)) / 3, rng.normal(size=4) * 0.1


@pytest.mark.parametrize("leaves", [1, 2, 9])
def test_a_tree_recursion_is_one_native_call(leaves):
    rng = np.random.default_rng(leaves)
    t = _tree(rng, leaves)
    W, b = _params(rng)
    for fn in (tree_h, tree_loss):
        f = myia(fn, backend="native", background=False)
        want = myia(fn)(t, W, b)
        got = f(t, W, b)
        assert type(got) is type(want)  # a NumPy scalar stays one
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        ex = f.specialization(t, W, b).executable
        assert ex.whole.fn is not None, ex.whole.reason
        assert "_rc[0][1][" in ex.whole.source  # t.left: an index into the tree's arrays
        # The host code is not called: a program whose host code fails shows it.
        ex.host.fn = None
        np.testing.assert_allclose(f(t, W, b), want, rtol=1e-12, atol=1e-14)
        # Another shape of tree, the same machine code.
        other = _tree(rng, leaves + 3)
        np.testing.assert_allclose(f(other, W, b), myia(fn)(other, W, b), rtol=1e-12)


def test_optional_trees_of_numbers():
    rng = np.random.default_rng(3)
    f = myia(total, backend="native", background=False)
    for depth in (0, 1, 5):
        t = _nodes(rng, depth)
        assert f(t, 0.7) == pytest.approx(myia(total)(t, 0.7), rel=1e-14)
    t = _nodes(rng, 4)
    f(t, 0.7)
    assert f.specialization(t, 0.7).executable.whole.fn is not None


def test_a_shared_subtree_is_read_from_both_parents():
    leaf = Node(2.0)
    t = Node(1.0, leaf, Node(3.0, leaf, leaf))
    f = myia(total, backend="native", background=False)
    assert f(t, 1.0) == myia(total)(t, 1.0)
    assert f.specialization(t, 1.0).executable.whole.fn is not None


def test_a_tree_returned_runs_on_the_host():
    rng = np.random.default_rng(0)
    t = _tree(rng, 5)
    f = myia(leftmost, backend="native", background=False)
    assert f(t) is leftmost(t)
    ex = f.specialization(t).executable
    assert ex.whole.fn is None and "result" in ex.whole.reason


@pytest.mark.parametrize("leaves", [1, 2, 7])
def test_the_gradient_of_a_tree_recursion_is_one_native_call(leaves):
    # Its backpropagators hold those of the children: (tag, index) into lists of their
    # environments (`myia.compile.native_fenvs`).
    rng = np.random.default_rng(leaves)
    t = _tree(rng, leaves)
    W, b = _params(rng)
    g = grad(tree_loss, "W", "b", backend="native", background=False)
    want = grad(tree_loss, "W", "b")(t, W, b)
    for x, y in zip(g(t, W, b), want):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)
    ex = g.specialization(t, W, b).executable
    assert ex.whole.fn is not None, ex.whole.reason
    assert "_fnew_0(_fe, " in ex.whole.source
    # Numba's disk cache loads recursive functions wrong (numba#6061): compiled per process.
    assert "cache=True" not in ex.whole.source and "cache=False" in ex.whole.source
    ex.host.fn = None  # the host code is not called
    other = _tree(rng, leaves + 4)
    for x, y in zip(g(other, W, b), grad(tree_loss, "W", "b")(other, W, b)):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)


def test_tree_gradients_agree_with_finite_differences(monkeypatch):
    # The machine code is made at the first call: the checker's calls run it.
    monkeypatch.setenv("MYIA_NATIVE_BACKGROUND", "0")
    rng = np.random.default_rng(5)
    t = _tree(rng, 5)
    W, b = _params(rng)
    check_grad(tree_loss, t, W, b, wrt=(1, 2), backend="native")
    check_grad(total, _nodes(rng, 4), 0.3, wrt=1, backend="native")


def test_a_deep_recursion_runs_on_the_host():
    # The machine code's frames are on the C stack: past MAX_DEPTH levels it raises, and the
    # host code runs the call (as the NumPy backend does, errors included).
    f = myia(depth, backend="native", background=False)
    assert f(10) == 10
    assert f.specialization(10).executable.whole.fn is not None
    assert f(5000) == 5000
    with pytest.raises(RecursionError):
        myia(depth)(10**7)
    with pytest.raises(RecursionError):
        f(10**7)

"""The JAX backend's host code with jitted regions: a tree recursion with compiled node bodies."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from myia import grad, myia
from myia.compile import jax_regions
from myia.testing import check_grad

jax = pytest.importorskip("jax")


@pytest.fixture(autouse=True)
def small_regions(monkeypatch):
    # Regions of any size (by default only large arrays pay a jit dispatch).
    monkeypatch.setattr(jax_regions, "MIN_ELEMENTS", 0)


H = 4


@dataclasses.dataclass
class Node:
    value: np.ndarray
    left: Node | None = None
    right: Node | None = None


def node_h(t, W, b):
    if t.left is not None:
        if t.right is not None:
            h = np.concatenate((node_h(t.left, W, b), node_h(t.right, W, b)))
            return np.tanh(W @ h + b)
    return t.value


def tree_loss(t, W, b):
    return np.sum(node_h(t, W, b))


def checked(t, W, b):
    assert W.shape[0] == H, "W has the wrong shape"
    return tree_loss(t, W, b)


rng = np.random.default_rng(3)
W = rng.standard_normal((H, 2 * H)) * 0.5
B = rng.standard_normal(H) * 0.1
Z = np.zeros(H)


def leaf():
    return Node(rng.standard_normal(H))


def tree(n):
    """A tree of `n` leaves, unbalanced."""
    return leaf() if n == 1 else Node(Z, tree(n - 1), leaf())


TREES = [tree(1), tree(2), tree(5), Node(Z, tree(2), tree(3))]


def _region_jits(executable):
    g = executable.regions.module.globals
    return [v.jitted for k, v in g.items() if k.startswith("region")]


def test_node_bodies_are_jitted_regions():
    f = myia(tree_loss, backend="jax")
    ref = myia(tree_loss, backend="numpy")
    for t in TREES:
        got = f(t, W, B)
        assert type(got) is np.float64
        assert got == pytest.approx(ref(t, W, B), rel=1e-12)
    ex = f.specialization(TREES[0], W, B).executable
    assert not ex.jitted and "an argument" in ex.reason
    # The node's body, ``tanh(W @ concat(hl, hr) + b)``, is one region.
    assert ex.region_count >= 1
    assert len(f.compiled_signatures()) == 1


def test_gradient_of_a_tree_recursion_calls_jitted_regions():
    g = grad(tree_loss, "W", "b", backend="jax")
    ref = grad(tree_loss, "W", "b", backend="numpy")
    for t in TREES:
        got, expected = g(t, W, B), ref(t, W, B)
        for a, e in zip(got, expected):
            assert type(a) is np.ndarray and a.flags.writeable
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-15)
    ex = g.specialization(TREES[0], W, B).executable
    # The forward node and the backward node before and after its children's.
    assert ex.region_count >= 2
    # Every shape of tree: one Myia compilation, and each region compiled for its arrays'
    # shapes only (a leaf's vector or a node's: a few, whatever the trees).
    assert len(g.compiled_signatures()) == 1
    sizes = [j._cache_size() for j in _region_jits(ex)]
    for t in [tree(7), Node(Z, tree(3), tree(4))]:
        g(t, W, B)
    assert [j._cache_size() for j in _region_jits(ex)] == sizes
    check_grad(tree_loss, TREES[3], W, B, wrt=("W", "b"), backend="jax")


def test_small_arrays_stay_numpy_by_default_without_numba(monkeypatch):
    monkeypatch.setattr(jax_regions, "MIN_ELEMENTS", 1 << 14)
    g = grad(tree_loss, "W", "b", backend="jax")
    g.backend.native = None  # as where Numba is not installed
    g(TREES[2], W, B)
    ex = g.specialization(TREES[2], W, B).executable
    assert ex.region_count == 0 and ex.native_regions is None


def _native_jax(fn, *wrt):
    """`fn` (its gradient if `wrt`) on the JAX backend, small regions left to Numba."""
    pytest.importorskip("numba")
    return grad(fn, *wrt, backend="jax") if wrt else myia(fn, backend="jax")


def test_small_regions_are_machine_code_where_numba_is_installed(monkeypatch):
    # Arrays too small for a jit dispatch to pay: the node bodies run as Numba's machine
    # code (`native_regions`), one region per run as on the native backend.
    monkeypatch.setattr(jax_regions, "MIN_ELEMENTS", 1 << 14)
    g = _native_jax(tree_loss, "W", "b")
    ref = grad(tree_loss, "W", "b", backend="numpy")
    for t in TREES:  # the first calls run the NumPy code while the regions compile
        for a, e in zip(g(t, W, B), ref(t, W, B)):
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-15)
    ex = g.specialization(TREES[0], W, B).executable
    assert not ex.jitted and ex.region_count == 3
    # Once the program is machine code whole (`native_whole`), the host code no longer runs,
    # nor starts its regions: at once if an earlier test compiled the same program in this
    # process. The host code runs them here, whatever the whole program's state.
    for t in TREES:
        for a, e in zip(ex.native_exec.host((t, W, B)), ref(t, W, B)):
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-15)
    regions = ex.native_regions
    regions.wait()
    assert regions.ready and regions.reason is None
    numba = pytest.importorskip("numba")
    machine = numba.core.registry.CPUDispatcher
    assert all(isinstance(regions.globals[n], machine) for n in regions.names)
    for t in [*TREES, tree(7), Node(Z, tree(3), tree(4))]:
        for a, e in zip(g(t, W, B), ref(t, W, B)):
            assert type(a) is np.ndarray and a.flags.writeable
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-15)
    assert len(g.compiled_signatures()) == 1
    check_grad(tree_loss, TREES[3], W, B, wrt=("W", "b"), backend="jax")


def test_a_tree_recursion_and_its_gradient_run_as_one_machine_code_call(monkeypatch):
    # Once Numba has compiled it in the background, the program runs as the native
    # backend's machine code whole (`native_whole`): the host code is no longer called.
    monkeypatch.setattr(jax_regions, "MIN_ELEMENTS", 1 << 14)
    g = _native_jax(tree_loss, "W", "b")
    ref = grad(tree_loss, "W", "b", backend="numpy")
    g(TREES[0], W, B)
    ex = g.specialization(TREES[0], W, B).executable.native_exec
    ex.wait()
    assert ex.whole.fn is not None, ex.whole.reason
    ex.host.fn = None
    for t in [*TREES, tree(7), Node(Z, tree(3), tree(4))]:
        for a, e in zip(g(t, W, B), ref(t, W, B)):
            assert type(a) is np.ndarray and a.flags.writeable
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-15)
    assert len(g.compiled_signatures()) == 1


def test_errors_in_machine_code_regions_point_at_the_users_line(monkeypatch):
    monkeypatch.setattr(jax_regions, "MIN_ELEMENTS", 1 << 14)
    f = _native_jax(tree_loss)
    f(TREES[2], W, B)
    f.specialization(TREES[2], W, B).executable.native_regions.wait()
    bad = Node(Z, Node(np.zeros(H + 1)), leaf())  # a leaf of another shape: no product
    with pytest.raises(Exception) as info:
        f(bad, W, B)
    with pytest.raises(type(info.value)) as expected:
        myia(tree_loss, backend="numpy")(bad, W, B)
    assert str(info.value) == str(expected.value)
    assert "np.tanh(W @ h + b)" in str(info.getrepr())


def test_trees_holding_jax_arrays_with_machine_code_regions(monkeypatch):
    # Read-only arrays (a ``jax.Array`` seen by NumPy) are not the types a region compiled
    # for: the NumPy code computes those calls.
    monkeypatch.setattr(jax_regions, "MIN_ELEMENTS", 1 << 14)
    g = _native_jax(tree_loss, "W", "b")
    expected = grad(tree_loss, "W", "b", backend="numpy")(TREES[3], W, B)
    g(TREES[3], W, B)
    g.specialization(TREES[3], W, B).executable.native_regions.wait()
    for t in (TREES[3], _on_device(TREES[3])):
        for a, e in zip(g(t, W, B), expected):
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-15)


def test_errors_in_host_code_with_regions_point_at_the_users_line():
    f = myia(checked, backend="jax")
    assert f(TREES[2], W, B) == pytest.approx(myia(checked, backend="numpy")(TREES[2], W, B))
    with pytest.raises(AssertionError, match="wrong shape") as info:
        f(TREES[2], np.zeros((H + 1, 2 * H)), np.zeros(H + 1))
    assert "W.shape[0] == H" in str(info.getrepr())


def _on_device(t):
    """`t` with its vectors as ``jax.Array``s."""
    if t is None:
        return None
    with jax.enable_x64(True):
        value = jax.numpy.asarray(t.value)
    return Node(value, _on_device(t.left), _on_device(t.right))


def test_trees_holding_jax_arrays_run_on_the_host(monkeypatch):
    # A tree of NumPy arrays is not searched for ``jax.Array``s on every call; one that holds
    # some (met by the signature) is, and its arrays reach the host code as NumPy arrays.
    monkeypatch.setattr(jax_regions, "MIN_ELEMENTS", 1 << 14)
    f = myia(tree_loss, backend="jax")
    expected = myia(tree_loss, backend="numpy")(TREES[3], W, B)
    assert f(TREES[3], W, B) == pytest.approx(expected, rel=1e-12)
    assert not f.backend.nested_arrays
    got = f(_on_device(TREES[3]), W, B)
    assert type(got) is np.float64 and got == pytest.approx(expected, rel=1e-12)
    assert f.backend.nested_arrays
    assert len(f.compiled_signatures()) == 1


def grow(x, n):
    y = x
    while y.shape[0] < n:
        y = np.concatenate([y * 0.5, np.sin(x)])
    return np.sum(y * y)


def test_a_region_reads_the_variable_it_assigns():
    # ``y = concatenate([y * 0.5, sin(x)])``: `y` is an input of the region as well as its
    # output.
    f = myia(grow, backend="jax")
    x = np.array([1.0, 2.0])
    for n in (0, 2, 7):
        assert f(x, n) == pytest.approx(grow(x, n), rel=1e-12)

"""The native backend's host code with regions of machine code: a tree recursion's node bodies."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import own_cache_dir  # noqa: F401 (a fixture)

from myia import grad, myia
from myia.compile import native_backend
from myia.testing import check_grad

# Its tests share the module's disk cache of machine code: one xdist worker runs them all.
pytestmark = pytest.mark.xdist_group(__name__)

numba = pytest.importorskip("numba")


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


def unchecked(t, W, b):
    return np.sum(node_h(t, W, b) * 2.0)


rng = np.random.default_rng(5)
W = rng.standard_normal((H, 2 * H)) * 0.5
B = rng.standard_normal(H) * 0.1
Z = np.zeros(H)


def leaf():
    return Node(rng.standard_normal(H))


def tree(n):
    """A tree of `n` leaves, unbalanced."""
    return leaf() if n == 1 else Node(Z, tree(n - 1), leaf())


TREES = [tree(1), tree(2), tree(5), Node(Z, tree(2), tree(3))]


def _machine_code(ex):
    g = ex.host.module.globals
    return [isinstance(g[n], numba.core.registry.CPUDispatcher) for n in ex.regions.names]


def test_gradient_of_a_tree_recursion_runs_node_bodies_as_machine_code():
    g = grad(tree_loss, "W", "b", backend="native")
    ref = grad(tree_loss, "W", "b", backend="numpy")
    for t in TREES:  # the first calls run the host code while the regions compile
        for a, e in zip(g(t, W, B), ref(t, W, B)):
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-15)
    ex = g.specialization(TREES[0], W, B).executable
    # The forward node's body, and the backward node's before and after its children's.
    assert ex.region_count == 3
    ex.wait()
    # Once the whole program is machine code (`native_records`), the host code, which runs
    # while it compiles and the calls it refuses, may not have called its regions yet.
    for t in TREES:
        for a, e in zip(ex.host((t, W, B)), ref(t, W, B)):
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-15)
    ex.regions.wait()
    assert ex.regions.ready and ex.regions.reason is None
    assert all(_machine_code(ex))
    for t in [*TREES, tree(7)]:
        for a, e in zip(g(t, W, B), ref(t, W, B)):
            assert type(a) is np.ndarray and a.flags.writeable
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-15)
    assert len(g.compiled_signatures()) == 1
    check_grad(tree_loss, TREES[3], W, B, wrt=("W", "b"), backend="native")


def test_primal_and_other_argument_types():
    f = myia(tree_loss, backend="native", background=False)
    ref = myia(tree_loss, backend="numpy")
    for t in TREES:
        assert f(t, W, B) == pytest.approx(ref(t, W, B), rel=1e-12)
    ex = f.specialization(TREES[0], W, B).executable
    # The primal is machine code whole (`myia.compile.native_records`); its host code, which
    # runs a call the machine code refuses, has its node body as a region.
    assert ex.whole.fn is not None, ex.whole.reason
    for t in TREES:
        assert ex.host((t, W, B)) == pytest.approx(ref(t, W, B), rel=1e-12)
    assert ex.region_count == 1 and all(_machine_code(ex)), ex.regions.reason
    # A leaf that is not contiguous: not the types the region was compiled for; the host
    # code computes that call.
    odd = Node(Z, Node(np.arange(2.0 * H)[::2]), leaf())
    assert f(odd, W, B) == pytest.approx(ref(odd, W, B), rel=1e-12)


def test_errors_in_regions_are_raised_by_the_host_code_at_the_users_line():
    f = myia(unchecked, backend="native", background=False)
    f(TREES[2], W, B)
    bad = Node(Z, Node(np.zeros(H + 1)), leaf())  # a leaf of another shape: no product
    with pytest.raises(Exception) as info:
        f(bad, W, B)
    with pytest.raises(type(info.value)) as expected:
        myia(unchecked, backend="numpy")(bad, W, B)
    assert str(info.value) == str(expected.value)
    assert "np.tanh(W @ h + b)" in str(info.getrepr())


def int_h(t, W):
    if t.left is not None:
        if t.right is not None:
            return W @ np.concatenate((int_h(t.left, W), int_h(t.right, W))) * 2 + 1
    return t.value


def test_integer_arrays_stay_numpy_code():
    f = myia(int_h, backend="native", background=False)
    t = Node(np.zeros(H, dtype=np.int64), Node(np.arange(H)), Node(np.arange(H)))
    Wi = np.ones((H, 2 * H), dtype=np.int64)
    np.testing.assert_array_equal(f(t, Wi), myia(int_h, backend="numpy")(t, Wi))
    assert f.specialization(t, Wi).executable.region_count == 0
    native_backend.wait_all()


def affine_tanh(x):
    return np.tanh(x * 0.5 + 1.0) * 2.0


def affine(x):
    return (x * 0.5 + 1.0) * 2.0


def test_only_small_arrays_make_regions():
    # On large arrays a NumPy call costs no more than Numba's dispatch, and NumPy's ``tanh``
    # is faster per element than Numba's: NumPy code stays.
    f = myia(affine_tanh, backend="native", background=False)
    for n, regions in ((100, 1), (1000, 0), (100_000, 0)):
        x = np.linspace(-1.0, 1.0, n)
        np.testing.assert_allclose(f(x), affine_tanh(x), rtol=1e-14)
        assert f.specialization(x).executable.region_count == regions
    f = myia(affine, backend="native", background=False)
    for n, regions in ((1000, 1), (100_000, 0)):
        x = np.linspace(-1.0, 1.0, n)
        np.testing.assert_allclose(f(x), affine(x), rtol=1e-14)
        assert f.specialization(x).executable.region_count == regions

"""Gradients of programs that read arrays element by element: correct, and cheap.

The sensitivity of a read ``A[i]`` goes to one element of ``A``: a loop reading k elements of
an n-element array has a gradient costing O(k) (and one O(n) buffer), not O(k * n).
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from helpers import collector_passes, time_ratio

from myia import grad, load, save
from myia.abstract.data import AbstractFunction, AbstractList, AbstractTuple
from myia.ir.analysis import reachable_graphs, toposort
from myia.operations.lib import Range
from myia.opt.matcher import prim_of
from myia.primitives import P
from myia.testing import check_grad

BACKENDS = ["numpy", "debug"]


def minor_det(A, r, cols):
    if len(cols) == 1:
        return A[r, cols[0]]
    total = 0.0
    sign = 1.0
    for j in range(len(cols)):
        rest = cols[:j] + cols[j + 1 :]
        total = total + sign * A[r, cols[j]] * minor_det(A, r + 1, rest)
        sign = -sign
    return total


def det(A):
    return minor_det(A, 0, list(range(A.shape[0])))


@pytest.mark.parametrize("backend", BACKENDS)
def test_det_by_cofactors(backend):
    A = np.random.default_rng(0).normal(size=(4, 4))
    d = grad(det, backend=backend)(A)
    # d det(A) / dA = det(A) * inv(A).T
    np.testing.assert_allclose(d, np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-10)
    check_grad(det, A, order=2, backend=backend)


def test_gradient_of_a_recursion_keeps_few_objects():
    # The collector passes over the young objects once per 700 objects made that may hold
    # others and are still alive: the gradient of det at 6x6 (1,237 calls of minor_det) kept
    # about 19,000 until its backward pass (27 passes per call), when each call made 5
    # backpropagator closures of 2 + (free variables) objects each; with one closure per
    # call, its free variables parameter defaults (a function and a tuple), about 4,000
    # (6 passes per call). The collector is now paused during the call: one pass after it.
    if not gc.isenabled():
        pytest.skip("the collector is disabled")
    A = np.random.default_rng(0).normal(size=(6, 6))
    g = grad(det)
    g(A)
    gc.collect()

    def calls():
        for _ in range(3):
            g(A)

    # (The passes of this thread: other threads, an earlier program compiling in the
    # background, allocate meanwhile.)
    passes = len(collector_passes(calls)) / 3
    assert passes <= 1, f"{passes} passes of the collector per call"


def _stack_elements(graph):
    """The types of the values pushed on stacks in the optimized program of `graph`."""
    out = []
    for g in reachable_graphs(graph):
        for n in toposort(g):
            if n.is_apply and prim_of(n) is P.stack_push:
                out.append(n.inputs[2].abstract)
    return out


def _mentions_list(a):
    if isinstance(a, AbstractList):
        return True
    return isinstance(a, AbstractTuple) and any(_mentions_list(e) for e in a.elements)


def test_gradient_of_a_loop_in_a_recursion_pushes_numbers():
    # The loop of minor_det is in a recursion: the forward graph of its body (its core, which
    # recurses through minor_det) is called by two wrappers, the first iteration's and the
    # others'; each gets its copy, so an iteration pushes its forward values, not a closure.
    # The list of columns, which has no gradient, is pushed nowhere (its zero needs its type
    # only), and the range is passed as its fields.
    A = np.random.default_rng(0).normal(size=(4, 4))
    graph = grad(det).specialization(A).graph
    pushed = _stack_elements(graph)
    assert pushed, "no stack: the loop's gradient is not a loop"
    assert not any(isinstance(a, AbstractFunction) for a in pushed), pushed
    assert not any(_mentions_list(a) for a in pushed), pushed
    assert not any(g.flags.get("loop_core") for g in reachable_graphs(graph))
    cores = [
        n
        for g in reachable_graphs(graph)
        for n in toposort(g)
        if n.is_apply and prim_of(n) is P.make_record and n.inputs[1].value is Range
    ]
    fwd = [n for n in cores if not n.graph.name.startswith("◀")]
    assert not fwd, "the forward pass builds a range per call"


def test_gradient_of_a_loop_in_a_recursion_is_saved(tmp_path):
    # The zero of the list of columns stands for it by a constant that a file can hold.
    A = np.random.default_rng(0).normal(size=(4, 4))
    save(grad(det), tmp_path / "det.myia", A)
    np.testing.assert_allclose(load(tmp_path / "det.myia")(A), grad(det)(A), rtol=1e-12)


def pick(A, cols):
    s = 0.0
    for j in cols:
        s = s + A[j] * A[j]
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_list_of_indices_has_zero_sensitivity(backend):
    # A list of integers has no gradient: nothing flows back into it (once, the backward
    # pass built and added up sparse sensitivities of it at every read).
    A = np.arange(5.0)
    dA, dcols = grad(pick, "A", "cols", backend=backend)(A, [1, 2, 2])
    np.testing.assert_array_equal(dA, [0.0, 2.0, 8.0, 0.0, 0.0])
    assert dcols == [0, 0, 0]


def test_gradient_of_det_builds_no_zero_of_indices():
    # The lists of column indices that the recursion passes down have no gradient: they are
    # inactive, and their zeros (a lazy zero per call and per iteration) are never built.
    # The element updates of the sensitivity of A write the sum they read, not a copy of it.
    A = np.random.default_rng(0).normal(size=(4, 4))
    source = grad(det).generated_code(A)
    assert "lazy_zeros" not in source
    assert "index_add_basic(" not in source
    assert "index_add_basic_inplace(" in source
    # A read at the end of the recursion writes its element into a new zero array.
    assert "index_set_zeros(" in source
    # A loop's backward pass returns its sensitivities in a pair with the environment, not
    # in an environment, and the range's zero sensitivity is a constant, not rebuilt per loop.
    assert "env_sens(" not in source
    assert "Env(" not in source
    assert "new_Range(" not in source


def truncated_scale(x, k):
    # An integer computed from the input differentiated: its derivative is zero.
    n = int(x * 3.0)
    idx = list(range(n))
    s = 0.0
    for i in idx:
        s = s + x * (i + k)
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_integers_computed_from_the_input_have_zero_gradient(backend):
    g = grad(truncated_scale, "x", "k", backend=backend)
    dx, dk = g(2.5, 2)
    assert dx == pytest.approx(sum(i + 2 for i in range(7)))
    assert dk == 0
    check_grad(truncated_scale, 2.5, 2, backend=backend)


# Programs reading arrays in loops -------------------------------------------------------------


def scalar_reads(a, k):
    s = 0.0
    for i in range(k):
        s = s + a[i] * a[i + 1]
    return s


def pair_reads(A, k):
    s = 0.0
    for i in range(k):
        s = s + np.sin(A[i, i % 3]) * A[i + 1, 2]
    return s


def row_reads(A, k):
    s = 0.0
    for i in range(k):
        s = s + np.sum(np.tanh(A[i]) * A[i + 1])
    return s


def slice_reads(a, k):
    s = 0.0
    for i in range(k):
        s = s + np.sum(a[:3] * a[1:4]) * a[i]
    return s


def gather_reads(a, idx):
    s = 0.0
    for i in range(idx.shape[0]):
        s = s + np.sum(a[idx[i]] ** 2)
    return s


def reads_and_whole(a, k):
    # The sensitivity of `a` gets both element updates and a dense term at every iteration.
    s = 0.0
    for i in range(k):
        s = s + a[i] * np.sum(a * a)
    return s


def reads_of_updated(a, k):
    # The array read is a loop variable, updated at each iteration.
    s = 0.0
    for i in range(k):
        s = s + a[i] * a[i + 1]
        a = a * 1.5 + a[i]
    return s + np.sum(a)


def nested_reads(A, k):
    s = 0.0
    for i in range(k):
        t = 0.0
        for j in range(k):
            t = t + A[i, j] * A[j, i]
        s = s + t * A[i, i]
    return s


def while_reads(a, k):
    s = 0.0
    i = 0
    while i < k:
        if a[i] > 0:
            s = s + a[i] * a[i]
        else:
            s = s - a[i]
        i = i + 1
    return s


def rec_reads(a, i):
    if i == 0:
        return a[0]
    return a[i] * 0.5 + a[i - 1] * rec_reads(a, i - 1)


_rng = np.random.default_rng(1)
PROGRAMS = [
    (scalar_reads, (_rng.normal(size=6), 4)),
    (pair_reads, (_rng.normal(size=(5, 3)), 4)),
    (row_reads, (_rng.normal(size=(4, 3)), 3)),
    (slice_reads, (_rng.normal(size=5), 3)),
    (gather_reads, (_rng.normal(size=5), np.array([[0, 3], [3, 3], [1, 4]]))),
    (reads_and_whole, (_rng.normal(size=4), 3)),
    (reads_of_updated, (_rng.normal(size=4), 3)),
    (nested_reads, (_rng.normal(size=(3, 3)), 3)),
    (while_reads, (_rng.normal(size=5), 5)),
    (rec_reads, (_rng.normal(size=4), 3)),
]


@pytest.mark.parametrize("fn, args", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_reads_in_loops(fn, args):
    # Second order where it compiles in seconds (a loop in a loop, differentiated twice,
    # takes minutes).
    check_grad(fn, *args, wrt=0, order=1 if fn in (nested_reads, while_reads) else 2)
    check_grad(fn, *args, wrt=0, backend="debug")


# Time: O(k) for k reads, whatever the size of the array -----------------------------------------


SCALING = [
    (scalar_reads, lambda n: (np.ones(n), 100)),
    (pair_reads, lambda n: (np.ones((n // 4, 4)), 100)),
    (row_reads, lambda n: (np.ones((n // 10, 10)), 50)),
    (slice_reads, lambda n: (np.ones(n), 100)),
    (gather_reads, lambda n: (np.ones(n), np.arange(200).reshape(100, 2) % 7)),
]


@pytest.mark.serial
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, make", SCALING, ids=[p[0].__name__ for p in SCALING])
def test_reads_in_a_loop_take_time_linear_in_the_reads(fn, make, backend):
    # Each read's sensitivity was once a copy of the whole array's (array_index_add): 100
    # reads of 10^5 elements took about 100x the time of 100 reads of 10^3. They update
    # one buffer in place (myia.opt.inplace): O(k) and one O(n) copy.
    g = grad(fn, 0, backend=backend)
    small, large = make(1000), make(100_000)
    g(*small), g(*large)
    ratio = time_ratio(g, large, small)
    assert ratio < 10, f"10^5 elements take {ratio:.1f}x the time of 10^3"


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_called_again_is_not_changed(backend):
    # The accumulator is updated in place: each call starts from its own zeros.
    g = grad(scalar_reads, 0, backend=backend)
    a = np.arange(6.0)
    first = g(a, 4)
    second = g(a, 4)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, [1.0, 2.0, 4.0, 6.0, 3.0, 0.0])
    first[:] = 7.0  # the user may write what they receive
    np.testing.assert_array_equal(g(a, 4), second)


def grad_in_loop(a):
    # A gradient reading elements, called in a loop of the program differentiated: each call
    # accumulates into its own buffer.
    acc = a * 0.0
    for j in range(3):
        acc = acc + grad(scalar_reads)(a * (j + 1.0), 3)
    return np.sum(acc * acc)


def test_gradients_called_in_a_loop():
    a = np.random.default_rng(2).normal(size=5)
    check_grad(grad_in_loop, a)
    expected = grad(grad_in_loop, backend="debug")(a)
    for backend in ["numpy", "jax", "native"]:
        np.testing.assert_allclose(grad(grad_in_loop, backend=backend)(a), expected, rtol=1e-12)

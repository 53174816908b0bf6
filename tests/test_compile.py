"""The code-generating backend: loops as loops, readable code, errors, both backends agree."""

from __future__ import annotations

import dataclasses
import gc
import math
from typing import Optional

import numpy as np
import pytest
from helpers import background_done, collector_passes, cycles_made_by, scalar_loop

from myia import grad, jacfwd, myia
from myia.errors import MyiaTypeError
from myia.testing import check_grad


def newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def nested_loops(n, m):
    total = 0
    i = 0
    while i < n:
        j = 0
        while j < m:
            if (i + j) % 2 == 0:
                total = total + i * j
            else:
                total = total - 1
            j = j + 1
        i = i + 1
    return total


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


@dataclasses.dataclass
class Tree:
    value: float
    left: Optional["Tree"] = None
    right: Optional["Tree"] = None


def tree_sum(t):
    s = t.value
    if t.left is not None:
        s = s + tree_sum(t.left)
    if t.right is not None:
        s = s + tree_sum(t.right)
    return s


def test_loops_are_while_loops():
    f = myia(scalar_loop)
    assert f(0.3, 10) == pytest.approx(scalar_loop(0.3, 10), rel=1e-15)
    src = f.generated_code(0.3, 10)
    assert "def scalar_loop(x, n):" in src
    # A loop that tests first is a `while cond:` (the range's test, stop > i, is the loop's).
    assert "while " in src and "while True:" not in src and "continue" not in src


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_backends_agree(backend):
    assert myia(nested_loops, backend=backend)(7, 5) == nested_loops(7, 5)
    assert myia(newton_sqrt, backend=backend)(2.0) == newton_sqrt(2.0)
    assert myia(fact, backend=backend)(10) == fact(10)
    t = Tree(1.0, Tree(2.0, Tree(3.0)), Tree(4.0))
    assert myia(tree_sum, backend=backend)(t) == tree_sum(t)


def test_million_iterations_in_a_python_loop():
    f = myia(scalar_loop)
    assert f(0.5, 10**6) == pytest.approx(scalar_loop(0.5, 10**6), rel=1e-12)


def test_deep_recursion():
    f = myia(fact)
    assert f(3000) == math.factorial(3000)


def test_deep_code_puts_the_recursion_limit_back():
    import sys

    f = myia(fact)
    limit = sys.getrecursionlimit()
    assert f.specialization(3000).executable.deep
    assert f(3000) == math.factorial(3000)
    assert sys.getrecursionlimit() == limit
    # A limit that a caller raised already is kept.
    sys.setrecursionlimit(2_000_001)
    try:
        assert f(3000) == math.factorial(3000)
        assert sys.getrecursionlimit() == 2_000_001
    finally:
        sys.setrecursionlimit(limit)


def powers(x, n):
    # Its gradient keeps objects for each iteration until its backward pass.
    s = 0.0
    i = 0
    while i < n:
        s = s * x + x
        i = i + 1
    return s


def test_the_collector_is_paused_during_a_call():
    f = grad(powers)
    assert f(0.5, 3) == pytest.approx(1.0 + 2 * 0.5 + 3 * 0.25)
    gc.collect()
    # Generated code makes no reference cycles: the collector would find nothing to free.
    passes = collector_passes(f, 0.5, 20_000)
    assert len(passes) <= 1, passes  # at most one, after the call
    assert gc.isenabled()
    # Paused by the user, it stays paused; an error resumes it.
    gc.disable()
    try:
        f(1.0, 10)
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ZeroDivisionError):
        myia(divide)(1.0, 0.0)
    assert gc.isenabled()


def apply_fn(h, v):
    return h(v)


def recursive_closure(x, n):
    def rec(k):
        if k <= 0:
            return x
        return x * rec(k - 1)

    def other(k):
        return x + k

    h = rec if n > 2 else other
    t = 0.0
    for i in range(n):
        t = t + apply_fn(h, i)
    return t


def test_a_closure_calling_itself_is_no_reference_cycle():
    # With the collector paused, cycles made during a call would wait for its end.
    f = myia(recursive_closure)
    g = grad(recursive_closure)
    assert f(2.0, 3) == recursive_closure(2.0, 3)
    assert g(2.0, 3) == pytest.approx(1.0 + 2 * 2.0 + 3 * 4.0)

    def calls():
        for _ in range(5):
            f(2.0, 3)
            g(2.0, 3)

    made = cycles_made_by(calls)
    assert not made, sorted({type(o).__name__ for o in made})
    # In Python, the closure is a cycle (`rec` holds the cell that holds it): one per call.
    found = cycles_made_by(lambda: recursive_closure(2.0, 3))
    assert any(getattr(o, "__name__", None) == "rec" for o in found)


def test_gradients_on_the_compiled_backend():
    check_grad(newton_sqrt, 4.0)
    g = grad(scalar_loop)
    assert g(0.3, 50) == pytest.approx(grad(scalar_loop, backend="debug")(0.3, 50), rel=1e-12)


def test_generated_code_of_the_debug_backend():
    f = myia(fact, backend="debug")
    with pytest.raises(ValueError, match="generates no source"):
        f.generated_code(3)


def test_unknown_backend():
    with pytest.raises(ValueError, match="unknown backend"):
        myia(fact, backend="nope")


def divide(x, y):
    return x / y


def test_runtime_error_points_at_the_user_line():
    f = myia(divide)
    with pytest.raises(ZeroDivisionError) as info:
        f(1.0, 0.0)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "return x / y" in notes


def add_arrays(x, y):
    return x + y


def test_array_code_calls_numpy():
    f = myia(add_arrays)
    x = np.ones((2, 3))
    np.testing.assert_array_equal(f(x, x), 2 * x)
    with pytest.raises(MyiaTypeError):
        f(x, "a")


def tree_tanh(t, w, x):
    if t.left is not None:
        if t.right is not None:
            h = np.concatenate((tree_tanh(t.left, w, x), tree_tanh(t.right, w, x)))
            return np.tanh(w @ h)
    return x


def test_backpropagators_keep_only_what_they_read():
    # The zero sensitivity of the tree and the parts `concatenate` joined only give types:
    # no closure keeps them, and a leaf's backpropagator is a plain function.
    leaf = Tree(0.0)
    t = Tree(0.0, leaf, Tree(0.0, leaf, leaf))
    w, x = np.ones((2, 4)) / 4, np.array([0.5, -1.0])
    g = grad(lambda t, w, x: np.sum(tree_tanh(t, w, x)), "w")
    source = g.generated_code(t, w, x)
    makers = [line for line in source.splitlines() if line.startswith("def mk_")]
    assert len(makers) == 1, source
    assert "np.concatenate(" in source
    maker = makers[0]
    assert "t_" not in maker and "(t," not in maker and ", t)" not in maker, maker
    check_grad(lambda w: np.sum(tree_tanh(t, w, x)), w)


def test_a_leaf_zero_sensitivity_is_not_added():
    from myia.abstract import to_abstract
    from myia.compile.lower import gadd_arrays
    from myia.primitives.grad import zero_of_type

    zero = zero_of_type(to_abstract(np.ones(3)))
    assert zero is zero_of_type(to_abstract(np.zeros(3)))  # one per shape and dtype
    x = np.arange(3.0)
    assert gadd_arrays(x, zero, zero) is x and gadd_arrays(zero, x, zero) is x
    np.testing.assert_array_equal(gadd_arrays(x, x, zero), 2 * x)
    # A leaf's backpropagator gives the weights that zero; its parent skips adding it.
    leaf = Tree(0.0)
    t = Tree(0.0, Tree(0.0, leaf, leaf), leaf)
    w, x = np.ones((2, 4)) / 4, np.array([0.5, -1.0])
    g = grad(lambda t, w, x: np.sum(tree_tanh(t, w, x)), "w")
    assert "gadd_arrays(" in g.generated_code(t, w, x)
    dw = g(t, w, x)
    dw[...] = 1.0  # the user owns what they receive
    np.testing.assert_array_equal(g(t, w, x), grad(tree_tanh_loss, "w")(t, w, x))
    check_grad(lambda w: np.sum(tree_tanh(t, w, x)), w)


def tree_tanh_loss(t, w, x):
    return np.sum(tree_tanh(t, w, x))


def _shape_only(y, s):
    a = np.ones(3) * math.sqrt(s)  # only its shape matters to the gradient
    return np.sum(np.concatenate((a, y)))


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_a_value_whose_type_alone_is_used_still_raises(backend):
    g = grad(_shape_only, backend=backend)
    np.testing.assert_array_equal(g(np.ones(2), 4.0), np.ones(2))
    with pytest.raises(ValueError):
        g(np.ones(2), -1.0)


# A program dropped leaves nothing behind ----------------------------------------------------


def _loop_with_branches(x):
    while x < 10.0:
        if x > 2.0:
            x = x * 2.0 + math.sin(x)
        else:
            x = x + 1.0
    return x


def _live_graphs() -> int:
    from myia.ir.node import Graph

    gc.collect()
    return sum(type(o) is Graph for o in gc.get_objects())


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_a_dropped_program_frees_its_graphs(backend):
    # The gradient transform's caches and the table of generated modules kept every program
    # compiled, with its graphs, for the life of the process (the test suite's process took
    # minutes to exit, collecting them).
    from myia.compile.backend import MODULES

    def compile_and_run():
        g = grad(_loop_with_branches, backend=backend)
        assert g(1.5) == pytest.approx(check_grad_value(1.5))

    compile_and_run()  # (Myia's own functions are parsed once)
    background_done()  # (an earlier program's thread holds its graphs until its end)
    graphs, modules = _live_graphs(), len(MODULES)
    for _ in range(3):
        compile_and_run()
    assert _live_graphs() <= graphs
    assert len(MODULES) <= modules


def check_grad_value(x, h=1e-6):
    return (_loop_with_branches(x + h) - _loop_with_branches(x - h)) / (2 * h)


def _jacfwd_of_closure_in_loop(x):
    y = x
    for i in range(2):
        y = jacfwd(lambda v: np.tanh(v) * (i + 1.0))(y) @ y  # noqa: B023
    return np.sum(y)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_a_variable_only_closures_read_through_a_stack_is_defined(backend):
    # The gradient's stack of the per-example loop of jacfwd was pushed where the forward pass
    # computes it, a node no graph's toposort reaches: its closure's graph was not among the
    # generator's graphs, the variable it reads was written as a statement whose value was
    # dropped, and the closure read an undefined name (NameError: name 'rest' is not defined).
    from myia.testing import check_grad

    if backend == "jax":
        pytest.importorskip("jax")
    check_grad(_jacfwd_of_closure_in_loop, np.array([0.3, 0.7]), backend=backend)

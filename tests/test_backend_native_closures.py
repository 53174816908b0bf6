"""Function values and environments in native whole programs: loops in a row, nested loops.

The forward pass of a loop returns its backpropagator, a closure over the loop's stack (or a
closed graph when the loop may not run): the machine code of a whole program holds it as a
tagged tuple of its free values (`myia.compile.native_closures`). The backward pass of a
nested loop returns the sensitivities of its arguments in an environment: a tuple of slots
there (`myia.compile.native_envs`).
"""

from __future__ import annotations

import functools
import math
import os
import re
import traceback

import pytest
from helpers import assert_same, line_of, own_cache_dir  # noqa: F401 (a fixture)

from myia import grad
from myia.testing import check_grad

# Its tests share compiled programs (`_gradients`) and the module's disk cache of machine code:
# one xdist worker runs them all.
pytestmark = pytest.mark.xdist_group(__name__)

numba = pytest.importorskip("numba")


def two_loops(x, n):
    y = x
    for _ in range(n):
        y = math.sin(y) * 0.5 + y * x
    z = y
    for _ in range(n):
        z = z * 0.9 + math.cos(z) * x
    return z


def three_loops(x, n, m):
    y = x
    i = 0
    while i < n:
        y = y * 0.8 + math.tanh(y * x)
        i = i + 1
    for _ in range(m):
        y = y - 0.1 * math.sin(y)
    for k in range(n):
        y = y + x * k * 0.01
    return y * y


def nested(x, n, m):
    s = 0.0
    for i in range(n):
        y = x
        for _ in range(m):
            y = y * 0.5 + math.sin(y + i)
        s = s + y
    return s


def nested_while(x, n):
    s = x
    i = 0
    while i < n:
        j = 0
        while j < i:
            s = s * 0.9 + math.cos(s * x)
            j = j + 1
        s = s + x
        i = i + 1
    return s


def break_then_loop(x, n):
    y = x
    for _ in range(n):
        y = y * 0.9 + math.sin(y)
        if y > 2.0:
            break
    for _ in range(n):
        y = y + x * 0.1
    return y


def branch_of_loops(x, n):
    y = x
    if x > 0:
        for _ in range(n):
            y = y * math.exp(-y * 0.1)
    else:
        for _ in range(n):
            y = y + math.sin(y)
    for _ in range(n):
        y = y * 0.99 + x
    return y


def triple(x, n):
    s = 0.0
    for i in range(n):
        for j in range(i):
            for k in range(j):
                s = s + math.sin(x * (k + 1)) * 0.1
    return s


def user_closure(x, n):
    def step(v):
        return v * 0.5 + math.sin(v * x)

    y = x
    for _ in range(n):
        y = step(y)
    for _ in range(n):
        y = step(y) + y
    return y


def chosen_closure(x, n):
    def step(v):
        return v * 0.5 + math.sin(v * x)

    def scale(v):
        return v * x

    y = x
    for i in range(n):
        f = step if i % 2 else scale
        y = f(y)
    return y


def loop_then_log(x, n):
    y = x
    for _ in range(n):
        y = y * 1.5
    for _ in range(n):  # SECOND-LOOP
        y = math.log(y) + x  # LOG-LINE
    return y


def _whole(g, args):
    ex = g.specialization(*args).executable
    assert ex.whole.fn is not None, ex.whole.reason
    return ex


@functools.cache
def _gradients(fn):
    """``grad(fn, "x")`` on the native backend (machine code made at its first call) and on
    the NumPy backend: compiled once per function, each case runs its own path through them."""
    return grad(fn, "x", backend="native", background=False), grad(fn, "x")


@pytest.mark.parametrize(
    "fn, args",
    [
        (two_loops, (0.3, 4)),
        (two_loops, (0.3, 0)),  # no loop runs: the backpropagators are the closed ones
        (two_loops, (-0.7, 1)),
        (three_loops, (0.4, 3, 5)),
        (three_loops, (0.4, 0, 2)),
        (three_loops, (0.4, 2, 0)),
        (nested, (0.3, 3, 2)),
        (nested, (0.3, 0, 2)),
        (nested, (0.3, 2, 0)),
        (nested, (-0.6, 4, 3)),
        (nested_while, (0.2, 4)),
        (nested_while, (0.2, 0)),
        (break_then_loop, (1.9, 5)),
        (branch_of_loops, (-0.5, 3)),
        (triple, (0.3, 5)),
    ],
)
def test_loops_in_a_row_and_nested_are_one_native_function(fn, args):
    g, numpy = _gradients(fn)
    expected = numpy(*args)
    assert_same(g(*args), expected)
    ex = _whole(g, args)
    assert "def mk_" not in ex.whole.source and "Env" not in ex.whole.source
    check_grad(fn, *args, wrt=0, backend="native")
    # The host code is not called: a program whose host code fails shows it (and the next
    # cases of `fn` run without it from their first call).
    ex.host.fn = None
    assert_same(g(*args), expected)


def test_what_is_not_whole_runs_on_the_host():
    # The backpropagators of the closure chosen at each iteration, pushed then, are a stack
    # of function values: the program runs as host code (with the same results).
    args = (0.3, 3)
    g = grad(chosen_closure, "x", backend="native", background=False)
    assert_same(g(*args), grad(chosen_closure, "x")(*args))
    ex = g.specialization(*args).executable
    assert ex.whole.fn is None and ex.whole.reason


def test_a_closure_called_in_loops_is_one_native_function():
    # `step`, defined once before the loops, is called directly in them (it was a value
    # passed from block to block, whose backpropagators were a stack of function values).
    args = (0.3, 3)
    g = grad(user_closure, "x", backend="native", background=False)
    assert_same(g(*args), grad(user_closure, "x")(*args))
    assert g.specialization(*args).executable.whole.fn is not None
    check_grad(user_closure, *args, wrt=0, backend="native")


def test_second_order_is_the_numpy_backends():
    args = (0.3, 3)
    g2 = grad(grad(two_loops, "x"), "x", backend="native", background=False)
    assert_same(g2(*args), grad(grad(two_loops, "x"), "x")(*args))


def _user_lines(exc):
    text = "".join(traceback.format_exception(exc))
    here = os.path.abspath(__file__)
    return [int(n) for n in re.findall(rf'File "{re.escape(here)}", line (\d+)', text)]


def test_error_in_the_second_loop_is_raised_at_the_users_line():
    """The machine code raises: the host code runs again and raises where NumPy's does."""
    g = grad(loop_then_log, "x", backend="native", background=False)
    assert_same(g(1.0, 2), grad(loop_then_log, "x")(1.0, 2))
    _whole(g, (1.0, 2))
    for args in [(-1.0, 2), (0.1, 3)]:  # at the first iteration, and at the second
        with pytest.raises(ValueError) as expected:
            grad(loop_then_log, "x")(*args)
        with pytest.raises(ValueError) as got:
            g(*args)
        assert str(got.value) == str(expected.value)
        assert _user_lines(got.value)[-1] == _user_lines(expected.value)[-1]
        # The gradient's forward pass points at the second loop (its `for` line).
        second = {line_of(loop_then_log, "SECOND-LOOP"), line_of(loop_then_log, "LOG-LINE")}
        assert _user_lines(got.value)[-1] in second


def test_host_code_without_machine_code_loops_is_the_numpy_backends():
    # No loop of `nested` is outlined: its host code (which serves the calls while the whole
    # program compiles, and any call the machine code refuses) has the NumPy backend's
    # stacks, not typed buffers, which cost more in Python.
    args = (0.3, 3, 2)
    g = grad(nested, "x", backend="native", background=False)
    ex = g.specialization(*args).executable
    assert not ex.generator.kernels and ex.reason
    assert not ex.generator.stack_types and "_snew_" not in ex.host.source
    want = grad(nested, "x")(*args)
    assert_same(g(*args), want)
    assert_same(ex.host(args), want)  # the host code itself
    check_grad(nested, *args, wrt=0, backend="native")

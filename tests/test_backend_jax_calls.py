"""Scalar programs on the JAX backend: their errors, their loops' state, their calls.

A loop's test may raise in Python (``1 / y`` with ``y == 0``): its flag, at the test that
ends the loop, sends the call to the host, which raises. The checks of ``/``, ``math.sin``
and ``math.cos`` read their operands (XLA computes each function once). A loop carries an
error flag and a stack size only where its body records them, and not where they are
computed after it (a stack's final size, a state that must stay finite). A call runs with no
context where JAX's settings are already the backend's, a call of Python scalars returning
Python floats runs the computation directly (`JaxExecutable.direct`), and Python ints are
passed as device arrays made once per value.
"""

from __future__ import annotations

import math
import traceback

import numpy as np
import pytest

from benchmarks.newton_sqrt import newton_sqrt
from benchmarks.scalar_loop import scalar_loop
from myia import grad, myia
from myia.testing import check_grad

jax = pytest.importorskip("jax")


def divide_in_test(y):
    while 1.0 / y < 2.0:
        y = y - 1.0
    return y


def sqrt_in_test(y):
    while math.sqrt(y) > 0.5:
        y = y - 0.3
    return y


def sine_of_growth(x, n):
    y = x
    for _ in range(n):
        y = y * 1e100
    return math.sin(y) + math.cos(x)


def divide_in_body(x, n):
    y = x
    for i in range(n):
        y = y + 1.0 / (x - i)
    return y


def sine_of_state(x, n):
    y = x
    for _ in range(n):
        y = math.sin(y) + y * 1e200
    return y


def sine_until(y):
    while y < 100.0:
        y = y + 2.0 + math.sin(y)
    return y


def _run(fn, backend, *args, wrt=None):
    try:
        out = (grad(fn, wrt, backend=backend) if wrt else myia(fn, backend=backend))(*args)
    except Exception as exc:  # the error and its message, as the NumPy backend raises it
        return type(exc), str(exc)
    return "nan" if math.isnan(out) else out


@pytest.mark.parametrize(
    "fn, args",
    [
        (divide_in_test, (3.0,)),
        (divide_in_test, (3.5,)),
        (sqrt_in_test, (1.0,)),
        (sine_of_growth, (1.0, 1)),
        (sine_of_growth, (1.0, 4)),
        (sine_of_growth, (math.inf, 0)),
        (sine_of_growth, (math.nan, 0)),
        (divide_in_body, (2.0, 5)),
        (divide_in_body, (2.5, 5)),
        # sin of the loop's state, tested after the loop: y is inf after 2 iterations (no
        # error: the call runs again on the host, which returns inf), the 3rd raises.
        (sine_of_state, (1.0, 0)),
        (sine_of_state, (1.0, 2)),
        (sine_of_state, (1.0, 3)),
        (sine_of_state, (0.5, 40)),
        (sine_of_state, (math.nan, 1)),
        # A loop whose end depends on y stops at the first error (y = -inf).
        (sine_until, (0.5,)),
        (sine_until, (math.inf,)),
        (sine_until, (-math.inf,)),
    ],
)
def test_errors_and_results_are_the_numpy_backends(fn, args):
    assert _run(fn, "jax", *args) == _run(fn, "numpy", *args)
    assert myia(fn, backend="jax").specialization(*args).executable.jitted


@pytest.mark.parametrize("args", [(0.5, 1), (1.0, 2), (1.0, 3)])
def test_gradient_of_a_state_that_must_stay_finite(args):
    # The forward loop tests y once after it (math.sin and math.cos of y in its body).
    assert _run(sine_of_state, "jax", *args, wrt="x") == _run(
        sine_of_state, "numpy", *args, wrt="x"
    )
    assert grad(sine_of_state, "x", backend="jax").specialization(*args).executable.jitted


def test_error_of_the_last_loop_test_is_raised_at_the_users_line():
    f = myia(divide_in_test, backend="jax")
    assert f(3.5) == 0.5
    with pytest.raises(ZeroDivisionError) as info:
        f(3.0)
    assert "while 1.0 / y < 2.0:" in "".join(traceback.format_exception(info.value))


def _ops(fn, op, *args):
    return myia(fn, backend="jax").specialization(*args).executable.compiled_text(args).count(op)


def test_checks_read_the_operands():
    # ``math.sin(y)`` is checked on `y`: XLA computes the sine once per iteration.
    assert _ops(scalar_loop, " sine(", 0.3, 100) == 1
    # ``a / y`` is checked on `y == 0`: one division per iteration.
    assert _ops(newton_sqrt, " divide(", 2.0) == 1


def _loops(fn, *args, wrt=None):
    f = grad(fn, wrt, backend="jax") if wrt else myia(fn, backend="jax")
    text = f.lowered_text(*args)
    return [line for line in text.splitlines() if "stablehlo.while" in line]


def test_a_loop_carries_no_flag_or_size_it_never_records():
    # The primal of scalar_loop: the counter, y, its bound and 0.1 * x. No stack size; no
    # error flag: math.sin(y) flags where y is not finite, and y stays so through the body,
    # so y is tested once after the loop (`jax_counted.deferred_flags`).
    (loop,) = _loops(scalar_loop, 0.3, 10)
    assert loop.count("tensor<i64>") == 2  # the counter and its bound
    assert "tensor<i1>" not in loop
    # A flag on another value than the state's is carried: ``1.0 / (x - i)``.
    (loop,) = _loops(divide_in_body, 2.5, 5)
    assert loop.count("tensor<i1>") == 1
    # And so is one of a loop whose end depends on the value tested (y = nan would not end
    # ``while y != ...``): the loop stops at the first error.
    (loop,) = _loops(sine_until, 0.5)
    assert loop.count("tensor<i1>") == 1


def test_a_gradients_loops_carry_no_flag_or_size():
    # The forward loop of scalar_loop's gradient pushes one row per iteration: the size its
    # stack needs is its final count, computed after the loop (`jax_counted.need_terms`);
    # its state: the bound, x, the counter, the stack's buffer, y; the stack's count is
    # computed from the counter (`jax_induction`).
    forward, backward = _loops(scalar_loop, 0.3, 10, wrt="x")
    assert forward.count("tensor<i64>") == 2 and "tensor<i1>" not in forward
    assert "tensor<i1>" not in backward
    g = grad(scalar_loop, "x", backend="jax")
    text = g.specialization(0.3, 10).executable.compiled_text((0.3, 10))
    # The backward loop's test ``not stack_empty(s)`` is one comparison: ``count != 0``.
    assert "direction=NE" in text and "direction=EQ" not in text


def rows_sum(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i] * x[i + 1]
    return s


def rows_from(x, k, n):
    s = 0.0
    i = k
    while i < n:
        s = s + x[i]
        i += 1
    return s


def rows_back(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i - 1]  # x[-1] first: carried (the index does not step like the counter)
    return s


def test_a_counters_index_is_checked_at_its_first_and_last_values():
    # ``x[i]`` and ``x[i + 1]`` flag where out of bounds (XLA would clamp): over a loop the
    # index moves one way, so it is out of bounds in some iteration if and only if in the
    # first or the last. The test is made after the loop (`jax_counted._ray`): the loop
    # carries no flag, and Python's IndexError is raised at the user's line all the same.
    x = np.arange(1.0, 6.0)
    cases = [(rows_sum, lambda n: (x[:4], n)), (rows_from, lambda n: (x, n - 4, n))]
    cases.append((rows_back, lambda n: (x, n)))
    for fn, args_of in cases:
        (loop,) = _loops(fn, *args_of(3))
        assert ("tensor<i1>" in loop) == (fn is rows_back)
        for make in (myia, lambda fn, backend: grad(fn, "x", backend=backend)):
            f, ref = make(fn, backend="jax"), make(fn, backend="numpy")
            for n in [0, 1, 3, 4, 5, 9]:
                try:
                    expected = ref(*args_of(n))
                except IndexError:
                    with pytest.raises(IndexError, match="out of bounds|out of range"):
                        f(*args_of(n))
                    continue
                np.testing.assert_allclose(f(*args_of(n)), expected, rtol=1e-12)
            assert f.specialization(*args_of(3)).executable.jitted


@pytest.mark.parametrize(
    "fn, args, wrt", [(scalar_loop, (0.7, 30), "x"), (newton_sqrt, (3.0,), "a")]
)
def test_gradients(fn, args, wrt):
    check_grad(fn, *args, wrt=wrt, order=2, backend="jax")
    g = grad(fn, wrt, backend="jax")
    assert g(*args) == pytest.approx(grad(fn, wrt, backend="numpy")(*args), rel=1e-12)
    assert g.specialization(*args).executable.jitted


def test_calls_with_float64_enabled_use_the_same_computation():
    f = grad(scalar_loop, "x", backend="jax", device="cpu")
    expected = grad(scalar_loop, "x")(0.4, 20)
    assert f(0.4, 20) == pytest.approx(expected, rel=1e-12)
    executable = f.specialization(0.4, 20).executable
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        assert executable.backend.settled()
        assert f(0.4, 20) == pytest.approx(expected, rel=1e-12)
    finally:
        jax.config.update("jax_enable_x64", before)
    assert f(0.4, 20) == pytest.approx(expected, rel=1e-12)
    assert executable.fn._cache_size() == 1  # the same key for JAX's cache of computations


def test_direct_calls():
    f = myia(divide_in_body, backend="jax")
    for _ in range(2):  # the second call finds the direct call
        assert f(2.5, 3) == myia(divide_in_body)(2.5, 3)
    assert f._direct is not None and f._direct[0] == (float, int)
    with pytest.raises(ZeroDivisionError):  # flagged: the call goes the general way
        f(2.0, 5)
    g = grad(scalar_loop, "x", backend="jax")
    for n in (10, 10, 500, 64, 65):  # the stacks outgrow their first capacity in a direct call
        assert g(0.3, n) == pytest.approx(grad(scalar_loop, "x")(0.3, n), rel=1e-12)
    assert g._direct is not None
    assert g.specialization(0.3, 10).executable.capacities == [64, 512]


def test_python_ints_are_passed_as_device_arrays():
    g = grad(scalar_loop, "x", backend="jax")
    expected = {n: grad(scalar_loop, "x")(0.3, n) for n in (0, 1, 7, 30)}
    assert g(0.3, 7) == pytest.approx(expected[7], rel=1e-12)
    executable = g.specialization(0.3, 7).executable
    assert list(executable.backend.ints) == [7]  # the first call's, made at once
    for _ in range(2):  # the others once seen twice: an int that changes makes none
        for n, value in expected.items():
            assert g(0.3, n) == pytest.approx(value, rel=1e-12)
        assert sorted(executable.backend.ints) == ([7] if _ == 0 else [0, 1, 7, 30])
    # An int beyond int64 is passed as it is (the program runs on the host, as before).
    f = myia(divide_in_body, backend="jax")
    assert f(2.5, 3) == myia(divide_in_body)(2.5, 3)
    assert f.specialization(2.5, 3).executable.backend.int_array(2**70) == 2**70

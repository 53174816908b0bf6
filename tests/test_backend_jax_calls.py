"""Scalar programs on the JAX backend: their errors, their loops' state, their calls.

A loop's test may raise in Python (``1 / y`` with ``y == 0``): its flag, at the test that
ends the loop, sends the call to the host, which raises. The checks of ``/``, ``math.sin``
and ``math.cos`` read their operands (XLA computes each function once). A loop carries an
error flag and a stack size only where its body records them. A call runs with no context
where JAX's settings are already the backend's, and a call of Python scalars returning
Python floats runs the computation directly (`JaxExecutable.direct`).
"""

from __future__ import annotations

import math
import traceback

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


def _run(fn, backend, *args):
    try:
        out = myia(fn, backend=backend)(*args)
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
    ],
)
def test_errors_and_results_are_the_numpy_backends(fn, args):
    assert _run(fn, "jax", *args) == _run(fn, "numpy", *args)
    assert myia(fn, backend="jax").specialization(*args).executable.jitted


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


def test_a_loop_carries_no_flag_or_size_it_never_records():
    # The primal of scalar_loop: the counter, y, its bound and 0.1 * x; the error flag
    # (math.sin) is carried, no stack size is.
    text = myia(scalar_loop, backend="jax").lowered_text(0.3, 10)
    loop = next(line for line in text.splitlines() if "stablehlo.while" in line)
    assert loop.count("tensor<i64>") == 2  # the counter and its bound, no stack size
    assert loop.count("tensor<i1>") == 1  # the error flag


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
    for n in (10, 10, 500):  # the stacks outgrow their first capacity in a direct call
        assert g(0.3, n) == pytest.approx(grad(scalar_loop, "x")(0.3, n), rel=1e-12)
    assert g._direct is not None
    assert g.specialization(0.3, 10).executable.capacities == [64, 512]

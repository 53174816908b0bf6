"""Regression tests: a recursion with no base case raises RecursionError, fast, as in Python.

The error is a `MyiaRecursionError` (a `MyiaError` and a `RecursionError`) showing the user's
recursive call. A tail recursion, which the optimizer makes a loop, counts its levels as the
calls did; a user's ``while`` loop counts nothing and runs as long as it runs.
"""

import importlib.util
import time

import pytest

from myia import MyiaError, MyiaRecursionError, MyiaTypeError, grad, myia
from myia.testing import check_grad
from myia.vm import debug_vm
from myia.vm.tracebacks import RECURSION_LIMIT

BACKENDS = (
    ["numpy", "debug"]
    + (["native"] if importlib.util.find_spec("numba") else [])
    + (["jax"] if importlib.util.find_spec("jax") else [])  # XLA's loops flag the limit
)

#: The limit of the debug backend in the tests of how a runaway recursion or a long loop
#: ends: what they check does not depend on it, and the reference interpreter takes seconds
#: per 200,000 levels. `test_tail_recursion_bounded_as_deep_recursion` and
#: test_regress_ctrl.py's `test_runaway_recursion` run it with `RECURSION_LIMIT`.
DEBUG_LIMIT = 20_000


@pytest.fixture
def limit(backend, monkeypatch):
    """The recursion limit of `backend` in this test (`DEBUG_LIMIT` for the debug backend)."""
    if backend != "debug":
        return RECURSION_LIMIT
    monkeypatch.setattr(debug_vm, "RECURSION_LIMIT", DEBUG_LIMIT)
    return DEBUG_LIMIT


def no_base_case(x):
    return no_base_case(x - 1.0) + 1.0  # RECURSE


def base_case_never_reached(x, n):
    if n == 0:
        return x
    return base_case_never_reached(x * 1.01, n + 1) + 1.0


def ping(x):
    return pong(x) * 2.0


def pong(x):
    return ping(x + 1.0) - 1.0


def deep(x, n):
    if n == 0:
        return x
    return deep(x, n - 1) + 1.0


def tail_no_base_case(x):
    return tail_no_base_case(x + 1.0)  # TAIL


def tail_base_case_never_reached(x, n):
    if n > 0:
        return tail_base_case_never_reached(x * 1.0001, n)  # TAIL
    return x


def tail_ping(x):
    return tail_pong(x + 1.0)  # PING


def tail_pong(x):
    if x > 0.0:
        return tail_ping(x * 1.0)  # PONG
    return x


def after_if(x, n):
    # The recursive call follows a join: optimization moves it into both branches.
    if n == 0:
        return x
    if x > 0:
        y = x * 0.5
    else:
        y = x + 1.0
    return after_if(y, n - 1)  # AFTER_IF


def loop_inside(x, n):
    # A user's loop in each level of a tail recursion.
    if n == 0:
        return x
    s = 0.0
    i = 0
    while i < 3:
        s = s + x
        i = i + 1
    return loop_inside(s * 0.4, n - 1)  # LOOP_INSIDE


def countdown(x, n):
    if n == 0:
        return x
    return countdown(x * 1.000001 + 0.5, n - 1)


def long_while(x, n):
    i = 0
    while i < n:
        x = x * 0.999999 + 1.0
        i = i + 1
    return x


def long_for(x, n):
    for _ in range(n):
        x = x * 0.999999 + 1.0
    return x


def _raises_fast(run, *marks):
    start = time.perf_counter()
    with pytest.raises(MyiaRecursionError) as info:
        run()
    # About 1 s (the debug backend's 200,000 levels: up to 25 s on a loaded CI machine); a
    # hang never ends.
    assert time.perf_counter() - start < 60
    err = info.value
    assert isinstance(err, RecursionError) and isinstance(err, MyiaError)
    assert str(err) == "maximum recursion depth exceeded"  # Python's message
    text = "\n".join(err.__notes__)
    assert "Myia traceback" in text and __file__ in text
    assert len(text.splitlines()) < 50  # repeated frames are shown once
    assert "myia/" not in text.replace(__file__, "")  # the user's lines, no internal frame
    for mark in marks:
        assert mark in text
    return err


@pytest.mark.parametrize("backend", ["numpy", "debug"])
@pytest.mark.parametrize(
    "fn,args", [(no_base_case, (1.0,)), (base_case_never_reached, (1.0, 1)), (ping, (1.0,))]
)
def test_raises_recursion_error(fn, args, backend, limit):
    _raises_fast(lambda: myia(fn, backend=backend)(*args))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "fn,args,marks",
    [
        (tail_no_base_case, (1.0,), ["TAIL"]),
        (tail_base_case_never_reached, (1.0, 1), ["TAIL"]),
        (tail_ping, (1.0,), ["PING", "PONG"]),
    ],
)
def test_tail_recursion_made_a_loop_raises(fn, args, marks, backend, limit):
    # The optimizer makes these loops; they looped forever.
    err = _raises_fast(lambda: myia(fn, backend=backend)(*args), *marks)
    assert err.location is not None and err.location.filename == __file__


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,mark", [(after_if, "in after_if"), (loop_inside, "in loop_inside")])
def test_tail_recursion_through_branches_and_loops(fn, mark, backend, limit):
    # A negative count never reaches the base case; a positive one does, primal and gradient.
    # (The traceback shows the function, at the line of the call or of the jump it became.)
    _raises_fast(lambda: myia(fn, backend=backend)(1.0, -1), mark)
    _raises_fast(lambda: grad(fn, backend=backend)(1.0, -1), mark)
    assert myia(fn, backend=backend)(1.3, 5) == fn(1.3, 5)


@pytest.mark.parametrize("fn", [after_if, loop_inside])
def test_gradient_through_branches_and_loops_of_a_tail_recursion(fn):
    check_grad(fn, 1.3, 6, wrt=0)
    check_grad(fn, -2.5, 4, wrt=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_a_tail_recursion_never_reaching_its_base_case(backend, limit):
    # The forward loop of the gradient grew its stack without end.
    _raises_fast(lambda: grad(tail_base_case_never_reached, backend=backend)(1.0, 1), "TAIL")


@pytest.mark.parametrize("backend", BACKENDS)
def test_tail_recursion_bounded_as_deep_recursion(backend):
    f = myia(countdown, backend=backend)
    n = RECURSION_LIMIT - 10
    assert f(1.0, n) == pytest.approx(countdown_reference(1.0, n), rel=1e-12)
    with pytest.raises(MyiaRecursionError):
        f(1.0, RECURSION_LIMIT + 10)
    with pytest.raises(MyiaRecursionError):
        grad(countdown, backend=backend)(1.0, RECURSION_LIMIT + 10)


def countdown_reference(x, n):
    for _ in range(n):
        x = x * 1.000001 + 0.5
    return x


def test_gradient_of_a_tail_recursion():
    check_grad(countdown, 0.7, 30, wrt=0)
    check_grad(tail_base_case_never_reached, 0.7, 0, wrt=0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [long_while, long_for])
def test_user_loops_are_not_bounded(fn, backend, limit):
    # A user's loop runs past the recursion limit, primal and gradient.
    n = limit + 1000
    assert myia(fn, backend=backend)(0.5, n) == pytest.approx(countdown_like(0.5, n), rel=1e-9)
    assert grad(fn, backend=backend)(0.5, n) == pytest.approx(0.999999**n, rel=1e-6)


def countdown_like(x, n):
    for _ in range(n):
        x = x * 0.999999 + 1.0
    return x


def test_gradient_of_a_function_that_never_returns():
    # Inference proves that no value comes back: an error before anything runs.
    with pytest.raises(MyiaTypeError, match="⊥") as info:
        grad(no_base_case)(1.0)
    assert "RECURSE" in str(info.value)


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_deep_recursion_still_runs(backend):
    assert myia(deep, backend=backend)(0.5, 20_000) == 20_000.5

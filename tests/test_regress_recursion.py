"""Regression tests: a recursion with no base case raises RecursionError, fast, as in Python."""

import time

import pytest

from myia import MyiaTypeError, grad, myia


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


@pytest.mark.parametrize("backend", ["numpy", "debug"])
@pytest.mark.parametrize(
    "fn,args", [(no_base_case, (1.0,)), (base_case_never_reached, (1.0, 1)), (ping, (1.0,))]
)
def test_raises_recursion_error(fn, args, backend):
    start = time.perf_counter()
    with pytest.raises(RecursionError) as info:
        myia(fn, backend=backend)(*args)
    assert time.perf_counter() - start < 20  # about 1 s; a loaded CI machine is slower
    note = "\n".join(getattr(info.value, "__notes__", []))
    assert "Myia traceback" in note and __file__ in note
    assert len(note.splitlines()) < 50  # repeated frames are shown once


def test_gradient_of_a_function_that_never_returns():
    # Inference proves that no value comes back: an error before anything runs.
    with pytest.raises(MyiaTypeError, match="⊥") as info:
        grad(no_base_case)(1.0)
    assert "RECURSE" in str(info.value)


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_deep_recursion_still_runs(backend):
    assert myia(deep, backend=backend)(0.5, 20_000) == 20_000.5

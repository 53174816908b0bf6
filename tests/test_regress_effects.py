"""Regression tests: a value printed or asserted, then returned, is computed once, before."""

import numpy as np
import pytest

from myia import grad, myia


def print_then_return(x):
    s = x * 2.0
    print(s)
    return s


def assert_then_return(x):
    s = x * 2.0
    assert s > 0, "s must be positive"
    return s


def print_in_branch(x):
    if x > 0:
        y = x + 1.0
        print("positive", y)
        return y
    y = x - 1.0
    print("negative", y)
    return y


def print_in_loop(x, n):
    y = x
    for i in range(n):
        y = y * 2.0
        print(i, y)
    return y


def print_array_then_sum(a):
    b = a * 2.0
    print(b.shape)
    return np.sum(b)


CASES = [
    (print_then_return, (1.5,)),
    (assert_then_return, (1.5,)),
    (print_in_branch, (1.5,)),
    (print_in_branch, (-1.5,)),
    (print_in_loop, (1.0, 3)),
    (print_array_then_sum, (np.ones(3),)),
]


@pytest.mark.parametrize("backend", ["numpy", "debug"])
@pytest.mark.parametrize("fn,args", CASES)
def test_printed_and_returned(fn, args, backend, capsys):
    expected = fn(*args)
    out = capsys.readouterr().out
    assert myia(fn, backend=backend)(*args) == expected
    assert capsys.readouterr().out == out


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_assert_then_return_raises(backend):
    with pytest.raises(AssertionError, match="s must be positive"):
        myia(assert_then_return, backend=backend)(-1.0)


def test_gradient_of_a_printed_value(capsys):
    assert grad(print_then_return)(1.5) == 2.0
    assert capsys.readouterr().out == "3.0\n"

"""Regression tests: gradients of ``for`` loops left by ``break`` or ``return``."""

import numpy as np
import pytest

from myia import grad, myia
from myia.testing import check_grad


def loop_break(x, n):
    y = x
    for _i in range(n):
        y = y * 1.5
        if y > 10.0:
            break
    return y


def loop_return(x, n):
    y = x
    for _i in range(n):
        y = y * 1.5
        if y > 10.0:
            return y * 2.0
    return y


def loop_break_index(x, n):
    y = x
    for i in range(1, n, 2):
        y = y + x * i
        if y * x > 20.0:
            break
    return y * x


def loop_continue_break(x, n):
    s = 0.0
    for i in range(n):
        if i % 3 == 0:
            continue
        s = s + x * i
        if s > 50.0:
            break
    return s


def nested_break(x, n):
    s = x
    for _i in range(n):
        for _j in range(n):
            s = s * 1.1
            if s > 3.0:
                break
        s = s - 0.5
    return s


def array_loop_return(w, n):
    v = w
    for _i in range(n):
        v = np.tanh(v * 2.0)
        if np.sum(v) > 2.5:
            return np.sum(v * w)
    return np.sum(v)


CASES = [
    (loop_break, (1.0, 10)),
    (loop_break, (20.0, 10)),
    (loop_break, (1.0, 3)),
    (loop_return, (1.0, 10)),
    (loop_return, (1.0, 2)),
    (loop_break_index, (1.3, 12)),
    (loop_continue_break, (1.7, 20)),
    (nested_break, (0.9, 4)),
    (array_loop_return, (np.array([0.3, 0.5, 0.9]), 5)),
    (array_loop_return, (np.array([0.01, 0.02, 0.03]), 5)),
]


@pytest.mark.parametrize("fn,args", CASES)
def test_values(fn, args):
    np.testing.assert_allclose(myia(fn)(*args), fn(*args), rtol=1e-12)


@pytest.mark.parametrize("fn,args", CASES)
def test_gradients(fn, args):
    check_grad(fn, *args)


@pytest.mark.parametrize("fn,x,expected", [(loop_break, 1.0, 0.0), (loop_return, 1.0, 0.0)])
def test_second_order(fn, x, expected):
    # y = x * 1.5**k: linear in x on each piece.
    assert grad(grad(fn))(x, 10) == expected


def while_if_different_blocks(x, n):
    # The blocks of the loop take different variables: its backward pass returns their
    # sensitivities in an environment.
    s = 0.0
    i = 0
    while i < n:
        if s > 1.0:
            t = s * x
            s = t - 0.5
        else:
            s = s + x * x
        i = i + 1
    return s


def for_same_blocks(x):
    # Every block of the loop takes the same variables: its backward pass returns a pair.
    s = x
    for _i in range(4):
        y = s * 2.0
        s = np.sin(y) + s
    return s


@pytest.mark.parametrize(
    "fn,args", [(while_if_different_blocks, (0.7, 5)), (for_same_blocks, (0.3,))]
)
def test_backward_loop_results(fn, args):
    check_grad(fn, *args)
    check_grad(fn, *args, order=2)


def test_backward_loop_returns_a_pair():
    source = grad(for_same_blocks).generated_code(0.3)
    assert "Env(" not in source and "contents" not in source


def sum_of_row_squares(x):
    s = 0.0
    for r in x:
        s = s + np.sum(r * r)
    return s


@pytest.mark.parametrize("shape", [(0, 2), (0,), (0, 0, 3), (3, 2)])
def test_for_over_the_rows_of_an_empty_array(shape):
    # The body reads x[i] on an empty first axis: it never runs, so it is typed as the rows.
    x = np.arange(float(np.prod(shape))).reshape(shape)
    assert myia(sum_of_row_squares)(x) == sum_of_row_squares(x)
    g = grad(sum_of_row_squares)(x)
    np.testing.assert_array_equal(g, 2 * x)
    if x.size:
        check_grad(sum_of_row_squares, x)

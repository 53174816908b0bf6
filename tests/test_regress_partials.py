"""Regression tests: ``functools.partial`` composed with itself, with keywords, with arrays,
returned from functions and chosen at run time; values against Python, gradients against
finite differences.

A gradient through a partial of a partial was a silent wrong value (the sensitivities of the
inner partial's bound arguments were overwritten by the outer one's)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from helpers import assert_same

from myia import MyiaTypeError, grad, myia
from myia.testing import check_grad

BACKENDS = ["numpy", "debug"]


def add3(a, b, c):
    return a * b + c * c * a


def partial_of_partial(x, y, z):
    g = partial(partial(add3, x), y)
    return g(z)


def partial_of_partial_same_arg(x, y):
    return partial(partial(add3, x), x)(y)


def partial_of_partial_of_partial(x, y):
    return partial(partial(partial(add3, x), x), y)()


def keyword_partial(x, y):
    g = partial(add3, b=y)
    return g(x, c=x)


def positional_partial_of_keyword_partial(x, y):
    g = partial(add3, c=y)
    h = partial(g, x)
    return h(x)


def partial_of_array_function(x, w):
    g = partial(np.dot, w)
    return np.sum(g(x) ** 2)


def partial_capturing_arrays(x, w):
    h = partial(partial(add3, w), x)
    return np.sum(h(w))


def _bind(a):
    return partial(add3, a)


def _bind2(a, b):
    return partial(partial(add3, a), b)


def returned_partials(x, y):
    return _bind(x)(y, x) * _bind2(y, x)(y)


def _mul(a, b):
    return a * b


def partial_bound_twice_then_called_empty(x):
    return partial(partial(_mul, x), x)() * x


def _compose(f, g):
    return lambda x: f(g(x))


def _square(x):
    return x * x


def partial_through_compose(x, y):
    return _compose(partial(add3, y, 2.0), _square)(x)


X = np.array([1.0, 2.0])
W = np.array([[1.0, 0.5], [0.2, 3.0]])
CASES = [
    (partial_of_partial, (2.0, 3.0, 1.5)),
    (partial_of_partial_same_arg, (2.0, 1.5)),
    (partial_of_partial_of_partial, (2.0, 3.0)),
    (keyword_partial, (2.0, 3.0)),
    (positional_partial_of_keyword_partial, (2.0, 3.0)),
    (partial_of_array_function, (X, W)),
    (partial_capturing_arrays, (X, np.array([0.3, -1.0]))),
    (returned_partials, (2.0, 3.0)),
    (partial_bound_twice_then_called_empty, (2.0,)),
    (partial_through_compose, (2.0, 3.0)),
]
IDS = [f.__name__ for f, _ in CASES]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", CASES, ids=IDS)
def test_value(fn, args, backend):
    assert_same(myia(fn, backend=backend)(*args), fn(*args))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", CASES, ids=IDS)
def test_grad(fn, args, backend):
    check_grad(fn, *args, backend=backend)


def test_partial_of_partial_grad_value():
    # d/dx of x * y + z * z * x at (2, 3, 1.5) is y + z * z = 5.25 (it was y alone).
    assert grad(partial_of_partial, 0, 1, 2)(2.0, 3.0, 1.5) == (5.25, 2.0, 6.0)


# A partial application whose function is called with several types -------------------------


def _pair(a, b):
    return a * b + a


def partial_called_with_two_types(x, y, z):
    make = lambda k: partial(_pair, k)  # noqa: E731
    return make(1.0)(x) * y + make(x)(2) + make(z)(y)


def partial_returned_called_with_two_types(x, y):
    return _bind(x)(y, x) + _bind(y)(x, 2)


TWO_TYPES = [
    (partial_called_with_two_types, (2.0, 3.0, -1.5)),
    (partial_returned_called_with_two_types, (2.0, 3.0)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", TWO_TYPES, ids=[f.__name__ for f, _ in TWO_TYPES])
def test_partial_called_with_two_types(fn, args, backend):
    assert_same(myia(fn, backend=backend)(*args), fn(*args))
    check_grad(fn, *args, backend=backend)


def partial_of_partial_called_with_two_types(x, y):
    return _bind2(x, y)(x) * _bind2(y, 3.0)(y) + _bind2(x, 1)(2)


def test_partial_of_partial_called_with_two_types_is_a_clear_error():
    with pytest.raises(MyiaTypeError, match="bind the arguments in one partial") as info:
        myia(partial_of_partial_called_with_two_types)(2.0, 3.0)
    assert "partial_of_partial_called_with_two_types" in str(info.value)


# Partial applications chosen at run time -------------------------------------------------------


def _scale(a, x):
    return a * x


def _shift_square(b, x):
    return b + x * x


def partial_chosen_by_ifexp(a, b, x):
    fn = partial(_scale, a) if x > 0 else partial(_shift_square, b)
    return fn(x)


def partial_chosen_by_if(a, b, x):
    if x > 0:
        fn = partial(_scale, a)
    else:
        fn = partial(_shift_square, b)
    return fn(x)


CHOSEN = [partial_chosen_by_ifexp, partial_chosen_by_if]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", CHOSEN)
@pytest.mark.parametrize("x", [1.5, -1.5])
def test_partial_chosen_at_run_time(fn, x, backend):
    args = (2.0, 3.0, x)
    assert_same(myia(fn, backend=backend)(*args), fn(*args))
    check_grad(fn, *args, backend=backend)

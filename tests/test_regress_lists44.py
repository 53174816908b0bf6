"""Gradients through lists whose elements have different types (arrays of different shapes).

A list's element type joins its elements' (``[x, y[:1]]`` of arrays of shapes ``(4,)`` and
``(1,)`` holds arrays of unknown length); each element's sensitivity must keep the type of
the element itself, so that the gradient, differentiated again, calls each backpropagator
with one type.
"""

import numpy as np
import pytest

from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]

X = np.array([0.3, -0.5, 0.8, 0.1])
Y = np.array([0.7, 0.2, -0.4, 0.6])


# The sensitivity of a list's items, typed as the items (not as the list's joined element) -----


def appended_then_concatenated(x, y):
    parts = []
    for i in range(3):
        parts.append(x * (i + 1.0) + y)
    return np.sum(np.sin(np.concatenate(parts + [y[:1]])))


def started_small_then_appended(x, y):
    parts = [y[:1]]
    for i in range(2):
        parts.append(x[i:] * y[0])
    return np.sum(np.concatenate(parts) ** 3)


def appended_then_indexed(x, y):
    lst = [x, y[:2]]
    lst.append(x * y)
    return np.sum(lst[-1] ** 2) + np.sum(lst[-2]) * np.sum(lst[0])


MIXED_SHAPES = [appended_then_concatenated, started_small_then_appended, appended_then_indexed]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", MIXED_SHAPES, ids=lambda f: f.__name__)
def test_second_order_through_a_list_of_arrays_of_different_shapes(fn, backend):
    check_grad(fn, X, Y, order=2, backend=backend)


def grown_in_a_while_loop(x, y):
    lst = [y[:1]]
    i = 0
    while i < 2:
        lst = lst + [x]
        i = i + 1
    return np.sum(lst[1] ** 2) * np.sum(lst[0])


def window_scaled(x, y):
    lst = [y[:1]]
    i = 0
    while i < 3:
        lst = lst + [x[: i + 1] * y[i]]
        i = i + 1
    return np.sum(lst[1]) + np.sum(lst[3] ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [grown_in_a_while_loop, window_scaled], ids=lambda f: f.__name__)
def test_gradient_of_a_list_grown_in_a_loop_from_a_list_of_another_shape(fn, backend):
    check_grad(fn, X, Y, order=2, backend=backend)


# A loop whose first iteration knows its shapes (``x[:i + 1]`` at ``i = 0``) -------------------
#
# Its backward pass calls the backpropagators of every iteration with sensitivities of the
# shapes of every iteration (unknown): the first iteration's, typed with known shapes, are
# called with both, as one function.


def window_of_sines(x, y):
    lst = [y[:1]]
    i = 0
    while i < 3:
        lst = lst + [np.sin(x[: i + 1])]
        i = i + 1
    s = 0.0
    for v in lst:
        s = s + np.sum(v) ** 2
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_a_loop_whose_first_iteration_has_known_shapes(backend):
    # At order 2, the first iteration's slice ``x[:1]`` (known at compile time) is pushed
    # on the stack of the gradient's loop with the others' (``x[:i + 1]``): one type.
    check_grad(window_of_sines, X, Y, order=2, backend=backend)


# Broadcasting between arrays of unknown shapes: the sensitivity is summed at run time ---------


def broadcast_items(x, y):
    lst = [y[:1], x]
    return np.sum(lst[1] * lst[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_items_of_unknown_shapes_broadcast_together(backend):
    # y[:1] and x are both ``f64 x ?`` in the list: (1,) broadcast against (4,) at run time.
    check_grad(broadcast_items, X, Y, order=2, backend=backend)

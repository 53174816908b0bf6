"""Regression tests: gradients at ties and kinks, and the kinds of 0-d array results.

Issue 22, sections 3 and 7. At a tie (``np.maximum(z, 0)`` at ``z = 0``, equal elements of
``np.max``, a value on a bound of ``np.clip``) the sensitivity is split evenly, as JAX does;
``abs`` has slope 0 at 0 (JAX: 1). docs/gradients.md has the table. Away from the kinks,
every gradient is checked against finite differences, at the first and second order. Every
test runs on the default backend (generated code) and on the reference interpreter.
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass

import numpy as np
import pytest
from helpers import assert_same

from myia import grad, myia
from myia.testing import check_grad

BACKENDS = ["numpy", "debug"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def G(fn, *wrt, backend):
    return grad(fn, *wrt, backend=backend)


# Ties ------------------------------------------------------------------------------------------


def np_maximum(x, y):
    return np.maximum(x, y)


def np_minimum(x, y):
    return np.minimum(x, y)


def builtin_max(x, y):
    return max(x, y)


def builtin_min(x, y):
    return min(x, y)


def relu(z):
    return np.maximum(z, 0.0)


def clip3(a, lo, hi):
    return np.clip(a, lo, hi)


#: (function, arguments, the gradient with respect to every argument), the expected values
#: being those of ``jax.grad`` (JAX 0.10.2) at the same points.
TIES = [
    (np_maximum, (1.0, 1.0), (0.5, 0.5)),
    (np_minimum, (1.0, 1.0), (0.5, 0.5)),
    (builtin_max, (1.0, 1.0), (0.5, 0.5)),
    (builtin_min, (1.0, 1.0), (0.5, 0.5)),
    (relu, (0.0,), (0.5,)),
    (clip3, (0.0, 0.0, 1.0), (0.5, 0.5, 0.0)),  # on the lower bound
    (clip3, (1.0, 0.0, 1.0), (0.5, 0.0, 0.5)),  # on the upper bound
    (clip3, (1.0, 1.0, 1.0), (0.25, 0.25, 0.5)),  # both bounds equal
    (clip3, (0.5, 0.0, 1.0), (1.0, 0.0, 0.0)),
]


@pytest.mark.parametrize("fn, args, expected", TIES, ids=lambda v: getattr(v, "__name__", None))
def test_ties_split_evenly(fn, args, expected, backend):
    got = G(fn, *range(len(args)), backend=backend)(*args)
    got = got if isinstance(got, tuple) else (got,)
    assert_same(got, expected)


def test_ties_on_arrays_keep_dtype(backend):
    def f(x, y):
        return np.sum(np.maximum(x, y) + np.minimum(x, 2.0 * y))

    x = np.array([-1.0, 0.0, 1.0, 2.0], np.float32)
    y = np.array([0.0, 0.0, 0.0, 1.0], np.float32)
    dx, dy = G(f, 0, 1, backend=backend)(x, y)
    # maximum: x wins at 1, 2; a tie at 0. minimum(x, 2y): x wins at -1; a tie at 0, 2.
    np.testing.assert_array_equal(dx, np.array([1.0, 1.0, 1.0, 1.5], np.float32))
    np.testing.assert_array_equal(dy, np.array([1.0, 1.5, 2.0, 1.0], np.float32))
    assert dx.dtype == dy.dtype == np.float32


def test_relu_on_arrays(backend):
    got = G(lambda z: np.sum(np.maximum(z, 0.0)), backend=backend)(np.array([-1.0, 0.0, 1.0]))
    assert_same(got, np.array([0.0, 0.5, 1.0]))


def test_a_bound_broadcast_against_an_array(backend):
    # The bound's sensitivity sums the shares of every element that ties with it.
    def f(a, lo):
        return np.sum(np.clip(a, lo, None))

    da, dlo = G(f, 0, 1, backend=backend)(np.array([-1.0, 0.0, 0.0, 2.0]), 0.0)
    assert_same(da, np.array([0.0, 0.5, 0.5, 1.0]))
    assert_same(dlo, 2.0)


@pytest.mark.parametrize(
    "fn, x, expected",
    [
        (lambda x: np.max(x), [1.0, 3.0, 3.0], [0.0, 0.5, 0.5]),
        (lambda x: np.min(x), [1.0, 1.0, 3.0], [0.5, 0.5, 0.0]),
        (lambda x: np.amax(x), [2.0, 2.0, 2.0, 2.0], [0.25, 0.25, 0.25, 0.25]),
        (lambda x: np.sum(np.max(x, axis=0)), [[1.0, 3.0], [1.0, 2.0]], [[0.5, 1.0], [0.5, 0.0]]),
        (lambda x: np.sum(np.min(x, axis=1)), [[1.0, 1.0], [0.0, 2.0]], [[0.5, 0.5], [1.0, 0.0]]),
        (
            lambda x: np.sum(x.max(axis=-1, keepdims=True)),
            [[4.0, 4.0, 1.0]],
            [[0.5, 0.5, 0.0]],
        ),
    ],
)
def test_reductions_split_ties(fn, x, expected, backend):
    assert_same(G(fn, backend=backend)(np.array(x)), np.array(expected))


@pytest.mark.parametrize("absolute", [abs, np.abs, math.fabs], ids=["abs", "np.abs", "fabs"])
def test_abs_has_slope_zero_at_zero(absolute, backend):
    def f(x):
        return absolute(x)

    # abs(x) = maximum(x, -x): at 0 the two halves cancel (JAX gives 1).
    assert_same(G(f, backend=backend)(0.0), 0.0)
    assert_same(G(G(f, backend=backend), backend=backend)(0.0), 0.0)
    assert_same(G(f, backend=backend)(-2.0), -1.0)
    assert_same(
        G(lambda x: np.sum(np.abs(x)), backend=backend)(np.array([-2.0, 0.0, 3.0])),
        np.array([-1.0, 0.0, 1.0]),
    )


def test_second_order_at_a_tie(backend):
    # d/dx of the first derivative 0.5 * 2x + 0.5 * 1 at the tie x = 1 (JAX: 1.0).
    def f(x):
        return np.maximum(x * x, x)

    assert_same(G(G(f, backend=backend), backend=backend)(1.0), 1.0)
    assert_same(G(G(relu, backend=backend), backend=backend)(0.0), 0.0)


def sign_like(x):
    return np.sign(x) * x


def test_sign_has_no_derivative(backend):
    # np.sign is piecewise constant: its slope is 0 everywhere, at 0 too (as in JAX).
    assert_same(G(lambda x: np.sign(x), backend=backend)(0.0), 0.0)
    assert_same(G(sign_like, backend=backend)(-3.0), -1.0)


# Away from the kinks: finite differences, first and second order -------------------------------


def smooth_mix(x, y):
    return np.sum(np.maximum(x * y, x) * np.minimum(y, 0.5) + np.clip(x, -0.3, 0.4) * y)


def smooth_reduce(x):
    return np.sum(np.max(x * x, axis=1)) + np.min(np.sin(x))


def smooth_scalars(x, y):
    return max(x * y, y) - min(x, y * y) + abs(x - y) * math.fabs(y)


@pytest.mark.parametrize(
    "fn, args",
    [
        (smooth_mix, (np.array([0.2, -0.7, 1.3]), np.array([0.9, 0.3, -0.4]))),
        (smooth_reduce, (np.array([[0.1, -0.8, 0.5], [1.1, 0.2, -0.3]]),)),
        (smooth_scalars, (0.7, -1.3)),
        (smooth_scalars, (1.9, 0.6)),
        (clip3, (0.25, 0.0, 1.0)),
    ],
    ids=["mix", "reduce", "scalars-1", "scalars-2", "clip"],
)
def test_against_finite_differences(fn, args, backend):
    check_grad(fn, *args, order=2, backend=backend)


# 0-d arrays ------------------------------------------------------------------------------------


X0 = np.array(3.0)


@pytest.mark.parametrize(
    "fn, expected",
    [
        (lambda x: np.sum(x * x), 6.0),
        (lambda x: x * x, 6.0),
        (lambda x: -x, -1.0),
        (lambda x: np.sin(x), math.cos(3.0)),
        (lambda x: x + 1.0, 1.0),
        (lambda x: x, 1.0),  # a function returning a 0-d array (JAX takes it too)
        (lambda x: np.maximum(x, 3.0), 0.5),
        (lambda x: np.clip(x, 0.0, 1.0), 0.0),
        (lambda x: np.mean(x) * np.max(x), 6.0),
        (lambda x: np.dot(x, x), 6.0),
        (lambda x: float(x) ** 2, 6.0),
    ],
)
def test_the_gradient_of_a_0d_array_is_a_numpy_scalar(fn, expected, backend):
    # Results are never 0-d arrays (API.md): the gradient is the NumPy scalar of its dtype.
    got = G(fn, backend=backend)(X0)
    assert type(got) is np.float64, repr(got)
    np.testing.assert_allclose(got, expected, rtol=1e-15)


def test_gradient_kinds_follow_the_arguments(backend):
    def f(x):
        return x * x

    assert_same(G(f, backend=backend)(3.0), 6.0)
    assert_same(G(f, backend=backend)(np.float64(3.0)), np.float64(6.0))
    assert_same(G(f, backend=backend)(np.float32(3.0)), np.float32(6.0))
    assert_same(G(f, backend=backend)(np.array(3.0, np.float32)), np.float32(6.0))


@dataclass
class Holder:
    w: np.ndarray
    b: float


def test_0d_arrays_inside_structures(backend):
    def f(t, h):
        return t[0] * t[1] + h.w * h.b

    dt, dh = G(f, 0, 1, backend=backend)((X0, 2.0), Holder(np.array(4.0), 5.0))
    assert_same(dt, (np.float64(2.0), 3.0))
    assert_same(dh.w, np.float64(5.0))
    assert_same(dh.b, 4.0)


def test_0d_arrays_second_order(backend):
    h = G(G(lambda x: x * x * x, backend=backend), backend=backend)
    assert_same(h(X0), np.float64(18.0))
    check_grad(lambda x: np.sum(np.sin(x) * x), X0, order=2, backend=backend)
    check_grad(lambda x, y: x * np.exp(y), X0, np.array(0.5), order=2, backend=backend)


def test_0d_gradient_inside_myia_code(backend):
    @myia(backend=backend)
    def f(x):
        return grad(lambda y: y * y)(x) + 1.0

    assert_same(f(X0), np.float64(7.0))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x * x,
        lambda x: x + 1.0,
        lambda x: -x,
        lambda x: abs(x),
        lambda x: np.sin(x),
        lambda x: np.maximum(x, 1.0),
        lambda x: np.clip(x, 0.0, 1.0),
        lambda x: np.sum(x),
        lambda x: np.max(x),
        lambda x: x > 1.0,
    ],
)
def test_0d_array_results_follow_numpy(fn, check):
    # NumPy's arithmetic on a 0-d array gives a NumPy scalar; `check` compares kinds.
    check(fn, X0)
    check(fn, np.array(3.0, np.float32))


def test_a_0d_array_and_a_scalar_meet_as_a_scalar(backend):
    # One branch returns the 0-d array, the other NumPy's scalar of it: the join is a scalar
    # (as an int and a float meet as a float).
    def f(x):
        return x if x > 5.0 else x * 2.0

    assert_same(myia(f, backend=backend)(X0), np.float64(6.0))
    assert_same(myia(f, backend=backend)(np.array(7.0)), np.float64(7.0))
    assert_same(G(f, backend=backend)(X0), np.float64(2.0))
    assert_same(G(f, backend=backend)(np.array(7.0)), np.float64(1.0))


def test_0d_arrays_are_shown_as_arrays():
    from myia.errors import MyiaTypeError

    with pytest.raises(MyiaTypeError, match=r"must return a float scalar, not i64 x \(\)"):
        grad(lambda x: x)(np.array(3))


def test_the_transpose_of_a_0d_array_is_the_scalar_inferred(backend):
    # Inference gives a NumPy scalar for every array primitive's result of shape (); the
    # transpose of a 0-d array was a 0-d array on the NumPy backend, a scalar on JAX's.
    backends = [backend] + (["jax"] if importlib.util.find_spec("jax") else [])
    for be in backends:
        assert_same(myia(lambda x: np.transpose(x), backend=be)(X0), np.float64(3.0))
        assert_same(myia(lambda x: x.T * 1.0, backend=be)(X0), np.float64(3.0))


def test_max_pool_gives_a_tied_window_to_its_first_maximum(backend):
    # As JAX's gradient of lax.reduce_window (and PyTorch's): not split.
    from myia import nn

    got = G(lambda x: np.sum(nn.max_pool2d(x, 2)), backend=backend)(np.ones((1, 1, 2, 2)))
    assert_same(got, np.array([[[[1.0, 0.0], [0.0, 0.0]]]]))


def test_max_of_more_than_two_values_is_pythons_choice(backend):
    # max(a, b, c) and max(xs) pick the first maximum, as Python's max (and JAX, which runs
    # Python's max); max(a, b) of two numbers is np.maximum and splits a tie.
    assert_same(
        G(lambda a, b, c: max(a, b, c), 0, 1, 2, backend=backend)(1.0, 1.0, 1.0), (1.0, 0.0, 0.0)
    )
    assert_same(G(lambda xs: max(xs), backend=backend)([1.0, 1.0]), [1.0, 0.0])


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: np.reshape(x, ()),
        lambda x: x.astype(np.float32),
        lambda x: np.zeros_like(x),
        lambda x: np.where(x > 0.0, x, 0.0),
        lambda x: x[...],
        lambda x: np.squeeze(np.expand_dims(x, 0)),
    ],
)
def test_array_primitives_of_shape_0_give_numpy_scalars(fn, backend):
    # Where NumPy returns a 0-d array, Myia returns the NumPy scalar (API.md: results are
    # never 0-d arrays), of NumPy's dtype; the value is NumPy's.
    got = myia(fn, backend=backend)(X0)
    expected = fn(X0)
    assert type(got) is expected.dtype.type and got == expected


def test_a_selection_gives_the_branch_chosen(backend):
    # np.where and conditionals are not ties: the branch chosen gets everything (as in JAX).
    assert_same(G(lambda x: np.where(x > 0.0, x, 0.0), backend=backend)(0.0), 0.0)
    assert_same(G(lambda x: x if x >= 0.0 else 0.0, backend=backend)(0.0), 1.0)

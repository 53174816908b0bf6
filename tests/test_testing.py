"""Tests of the gradient checker `myia.testing.check_grad`: it passes on correct gradients of
any argument structure and order, and catches wrong ones (primitives with a wrong
backpropagator, registered for the test only)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from myia.grad.registry import BPROPS
from myia.infer.registry import INFER_RULES
from myia.primitives import Primitive
from myia.testing import check_grad

# Primitives with wrong derivatives (not declared with `primitive`: they stay out of the
# table of primitives).

BAD_CUBE = Primitive("bad_cube", lambda x: x**3)  # its derivative is off by x * x
SIN = Primitive("test_sin", lambda x: np.sin(x) if np.ndim(x) else math.sin(x))
COS = Primitive("test_cos", lambda x: np.cos(x) if np.ndim(x) else math.cos(x))
SCALE = Primitive("test_scale", lambda x, n: x * n)  # a nonzero derivative w.r.t. an int


def bprop_bad_cube(x, out, dout):
    return (dout * 2.0 * x * x,)


def bprop_sin(x, out, dout):  # right
    return (dout * COS(x),)


def bprop_cos(x, out, dout):  # wrong: -sin
    return (dout * SIN(x),)


def bprop_scale(x, n, out, dout):
    return (dout * n, n)


@pytest.fixture(autouse=True)
def wrong_primitives(monkeypatch: pytest.MonkeyPatch) -> None:
    for prim, bprop in ((BAD_CUBE, bprop_bad_cube), (SIN, bprop_sin), (COS, bprop_cos)):
        monkeypatch.setitem(INFER_RULES, prim, lambda x: x)
        monkeypatch.setitem(BPROPS, prim, bprop)
    monkeypatch.setitem(INFER_RULES, SCALE, lambda x, n: x)
    monkeypatch.setitem(BPROPS, SCALE, bprop_scale)


def bad_cube(x):
    return BAD_CUBE(x) + x


def sin_sin(x):
    return SIN(x) * x


def scale(x, n):
    return SCALE(x, n)


# Correct gradients ----------------------------------------------------------------------------


@dataclasses.dataclass
class Linear:
    w: np.ndarray
    b: float
    n: int


def polynomial(x, y):
    return x * x * y + 3.0 * y


def mlp(x, model, extra):
    h = np.tanh(x @ model.w + model.b)
    return np.sum(h * h) * extra["scale"][0] + model.n * extra["scale"][1]


def test_scalars_by_position_and_name() -> None:
    check_grad(polynomial, 1.5, -0.5)
    check_grad(polynomial, 1.5, -0.5, wrt=1)
    check_grad(polynomial, 1.5, -0.5, wrt=("y", "x"))


def test_structures_with_int_and_none_leaves() -> None:
    rng = np.random.default_rng(0)
    model = Linear(rng.standard_normal((3, 2)), 0.1, 2)
    extra = {"scale": [0.5, 2.0], "none": None, "count": 3}
    check_grad(mlp, rng.standard_normal((4, 3)), model, extra)
    check_grad(mlp, rng.standard_normal((4, 3)), model, extra, wrt="model", order=2)


def test_third_order_of_a_scalar_function() -> None:
    def f(x, y):
        return np.sin(x) * y

    check_grad(f, 0.7, 1.2, wrt="x", order=3)


def test_float32_uses_looser_defaults() -> None:
    def f(x):
        return np.sum(np.exp(x))

    check_grad(f, np.linspace(-1, 1, 4, dtype=np.float32))


# Wrong gradients ------------------------------------------------------------------------------


def test_catches_a_wrong_first_derivative() -> None:
    with pytest.raises(AssertionError, match=r"the gradient of x: expected .* got"):
        check_grad(bad_cube, 1.3)

    def total(x):
        return np.sum(BAD_CUBE(x))

    with pytest.raises(AssertionError, match=r"grad\(total\): the gradient of x: expected"):
        check_grad(total, np.array([0.5, 1.5]))


def test_catches_a_wrong_second_derivative() -> None:
    check_grad(sin_sin, 0.4)  # the first derivative is right
    with pytest.raises(AssertionError, match="order 2 of sin_sin"):
        check_grad(sin_sin, 0.4, order=2)
    x = np.array([0.4, -0.3])

    def total(x):
        return np.sum(sin_sin(x))

    with pytest.raises(AssertionError, match=r"order 2 of total .*the gradient of args\[0\]"):
        check_grad(total, x, order=2)


def test_the_gradient_of_an_int_is_zero_even_from_a_wrong_backpropagator() -> None:
    # The transform drops what flows into an integer (its sensitivity is zero by type), so
    # the nonzero value the faulty backpropagator of SCALE gives n never reaches the user.
    check_grad(scale, 1.5, 3, wrt=0)
    check_grad(scale, 1.5, 3)


def test_rejects_functions_that_do_not_return_a_float_scalar() -> None:
    def vector(x):
        return x * 2.0

    with pytest.raises(TypeError, match="must return a float scalar"):
        check_grad(vector, np.ones(2))

"""Researchers' models compared with NumPy, with finite differences and with closed forms.

``math.factorial`` raised `OverflowError` above 20! ("does not fit in Myia's 64-bit ints"),
although Myia's Python ints are unbounded, as Python's (a loop multiplying 1 to 25 gave 25!
exactly), and ``math.comb`` and ``math.perm`` were refused ("math.comb is not supported"), so a
binomial log-likelihood written with ``math.comb`` did not compile. All three are Python's now,
exact and with Python's errors.

``super().method(x)`` in a dataclass's method was refused ("calling super is not supported"); it
is Python's now: the method, property or static method of the classes after the method's class
in the instance's MRO.

A conjugate-gradient solver whose trip count depends on a tolerance, written as a researcher
writes it, is checked on every backend under ``vmap`` (each example stops after its own number
of steps) and ``jacrev`` against NumPy's ``solve`` and ``inv``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from myia import grad, jacrev, myia, vmap
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]


def _backend(name):
    if name == "jax":
        pytest.importorskip("jax")
    return name


# math.factorial, math.comb and math.perm on Python's unbounded ints ----------------------------


def counts(n, k):
    return math.comb(n, k), math.perm(n, k), math.perm(n), math.factorial(n)


def binomial_log_likelihood(p, n, k):
    return math.log(math.comb(n, k)) + k * math.log(p) + (n - k) * math.log(1 - p)


@pytest.mark.parametrize("backend", BACKENDS)
def test_factorial_comb_and_perm_are_pythons(backend):
    backend = _backend(backend)
    f = myia(counts, backend=backend)
    for n, k in [(25, 3), (5, 7), (0, 0), (60, 30), (10, 10)]:
        got = f(n, k)
        assert got == counts(n, k) and all(type(v) is int for v in got), (n, k, got)
    with pytest.raises(ValueError, match="n must be a non-negative integer"):
        f(-1, 2)
    with pytest.raises(ValueError, match="k must be a non-negative integer"):
        f(5, -1)
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        f(2.0, 1)
    got = myia(binomial_log_likelihood, backend=backend)(0.3, 40, 12)
    assert got == pytest.approx(binomial_log_likelihood(0.3, 40, 12), rel=1e-14)
    dp = grad(binomial_log_likelihood, backend=backend)(0.3, 40, 12)
    assert dp == pytest.approx(12 / 0.3 - 28 / 0.7, rel=1e-12)


# Models ----------------------------------------------------------------------------------------


def conjugate_gradient(A, b, tol):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r
    rs = r @ r
    i = 0
    while np.sqrt(rs) > tol and i < 50:
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        rs = rs_new
        i += 1
    return x


L = np.array([[0.6, -0.2, 0.1], [0.3, 0.5, -0.4], [-0.1, 0.2, 0.7]])
A = L @ L.T + 3.0 * np.eye(3)


def solve_cg(b):
    return conjugate_gradient(A, b, 1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tolerance_loop_under_vmap_and_jacrev(backend):
    backend = _backend(backend)
    # Right-hand sides of different sizes: each example stops after its own number of steps.
    bs = np.array([[1.0, -2.0, 0.5], [1e-3, 2e-3, 0.0], [10.0, 0.0, -30.0]])
    np.testing.assert_allclose(
        myia(vmap(solve_cg), backend=backend)(bs), np.linalg.solve(A, bs.T).T, rtol=1e-9
    )
    jac = myia(jacrev(solve_cg), backend=backend)(bs[2])
    np.testing.assert_allclose(jac, np.linalg.inv(A), rtol=1e-8)


# super() in the methods of dataclasses ---------------------------------------------------------
#
# ``super().forward(x)`` in a subclass's method (a model extending a layer) was refused:
# "calling super is not supported in Myia".


@dataclasses.dataclass
class Layer:
    w: np.ndarray

    def act(self, x):
        return np.tanh(x)

    def forward(self, x):
        return self.act(x @ self.w)

    @property
    def penalty(self):
        return np.sum(self.w**2)

    @staticmethod
    def scale():
        return 2.0


@dataclasses.dataclass
class Shifted(Layer):
    b: np.ndarray

    def act(self, x):  # the base class's forward calls this one, as in Python
        return np.sin(x) + self.b

    def forward(self, x):
        return super().forward(x) * super().scale() + super().penalty


@dataclasses.dataclass
class Scaled(Layer):
    def forward(self, x):
        return super().forward(x) * 10.0


@dataclasses.dataclass
class Both(Shifted, Scaled):  # a diamond: Shifted's super() is Scaled here
    def forward(self, x):
        return super().forward(x) - 1.0


def model_loss(model, x):
    return np.sum(model.forward(x) ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_super_in_dataclass_methods_is_pythons(backend):
    backend = _backend(backend)
    w, b = np.array([[0.3, -0.5], [0.8, 0.1], [-0.2, 0.4]]), np.array([0.1, -0.3])
    x = np.array([[0.5, -1.0, 0.2], [1.5, 0.3, -0.7]])
    f = myia(model_loss, backend=backend)
    for model in (Shifted(w, b), Both(w, b)):
        assert f(model, x) == pytest.approx(model_loss(model, x), rel=1e-13)
    check_grad(model_loss, Both(w, b), x, backend=backend)
    assert isinstance(grad(model_loss, backend=backend)(Shifted(w, b), x), Shifted)

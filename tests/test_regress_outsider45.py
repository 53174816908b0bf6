"""Programs written the way researchers write them, where Myia's answer or message was off.

Each test is a program a user wrote (not one shaped by Myia's implementation), checked
against NumPy, finite differences or JAX's documented behaviour.
"""

from __future__ import annotations

import numpy as np
import pytest

from myia import MyiaTypeError, grad, jvp, myia, value_and_grad, vmap
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]

LAYERS = {
    "l1": {"W": np.full((3, 4), 0.1), "b": np.zeros(4)},
    "l2": {"W": np.full((4, 2), 0.2), "b": np.ones(2)},
}


def by_tuple(p, x):
    h = x
    for name in ("l1", "l2"):
        h = np.tanh(h @ p[name]["W"] + p[name]["b"])
    return np.sum(h)


def by_list(p, x):
    h = x
    for name in ["l1", "l2"]:
        h = np.tanh(h @ p[name]["W"] + p[name]["b"])  # the key: an element of a list
    return np.sum(h)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_dict_key_from_a_list_says_how_to_loop(backend):
    # A list's elements are known at run time: the message said only "a dict key must be
    # known at compile time, got str", which did not tell the user what to write instead.
    x = np.ones((5, 3))
    g = grad(by_tuple, backend=backend)(LAYERS, x)
    assert g["l1"]["W"].shape == (3, 4) and np.all(np.isfinite(g["l2"]["b"]))
    with pytest.raises(MyiaTypeError, match=r"loop over a tuple of keys, over the dict") as info:
        grad(by_list, backend=backend)(LAYERS, x)
    assert info.value.location.filename == __file__
    assert "# the key: an element of a list" in info.value.location.source_line()


# ``grad(make_loss(X, y))(w)`` in Myia code: the gradient of a closure that another
# function's call made and returned was an internal error ("free variable has no enclosing
# frame", "KeyError: 'train'"); it is differentiated with the values it reads passed along
# (`myia.grad.escaped`).


def make_loss(X, y):
    Xs = X * 2.0

    def loss(w):
        return np.mean((Xs @ w - y) ** 2)

    return loss


def train_for(w, X, y):
    loss = make_loss(X, y)
    for _ in range(3):
        w = w - 0.1 * grad(loss)(w)
    return w


def train_while(w, X, y):
    loss = make_loss(X, y)
    i = 0
    while i < 3:
        w = w - 0.1 * grad(loss)(w)
        i = i + 1
    return w


def meta(X, y, w):
    return np.sum(grad(make_loss(X, y))(w) ** 2)


def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(5, 3)), rng.normal(size=5), rng.normal(size=3)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("train", [train_for, train_while])
def test_grad_of_a_closure_a_call_returned(backend, train):
    X, y, w = data()
    expected = w
    for _ in range(3):
        expected = expected - 0.1 * (4.0 / 5.0) * X.T @ (2.0 * X @ expected - y)
    np.testing.assert_allclose(myia(train, backend=backend)(w, X, y), expected, rtol=1e-12)
    value, g = myia(lambda w, X, y: value_and_grad(make_loss(X, y))(w), backend=backend)(w, X, y)
    assert value == pytest.approx(np.mean((2.0 * X @ w - y) ** 2), rel=1e-12)
    np.testing.assert_allclose(g, (4.0 / 5.0) * X.T @ (2.0 * X @ w - y), rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_gradient_through_the_values_the_closure_reads(backend):
    # The values the closure reads are differentiated through (with respect to the data).
    X, y, w = data()
    check_grad(meta, X, y, w, wrt=("X", "y"), backend=backend)


def make_loud(a):
    print("making")
    return lambda v: a * v


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_closure_whose_maker_prints_is_refused_at_the_users_line(backend):
    def loud(x, a):
        return grad(make_loud(a))(x)  # made by a call that prints

    with pytest.raises(MyiaTypeError, match="that prints, raises or draws") as info:
        myia(loud, backend=backend)(1.0, 2.0)
    assert "# made by a call that prints" in info.value.location.source_line()


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_and_jvp_of_a_closure_a_call_returned(backend):
    # Refused before ("vmap of a closure called away from where it is defined").
    X, y, w = data()
    ws = np.stack([w, 2.0 * w, -w])

    def batched(ws, X, y):
        return vmap(make_loss(X, y))(ws)

    def tangent(w, X, y, t):
        return jvp(make_loss(X, y), (w,), (t,))

    loss = make_loss(X, y)
    np.testing.assert_allclose(
        myia(batched, backend=backend)(ws, X, y), [loss(v) for v in ws], rtol=1e-12
    )
    value, dot = myia(tangent, backend=backend)(w, X, y, ws[1])
    assert value == pytest.approx(loss(w), rel=1e-12)
    assert dot == pytest.approx(np.dot(grad(loss)(w), ws[1]), rel=1e-12)
    with pytest.raises(MyiaTypeError, match="vmap of a closure made by another") as info:
        myia(lambda ws, a: vmap(make_loud(a))(ws), backend=backend)(ws, 2.0)
    assert info.value.location.filename == __file__


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_index_by_a_nested_literal_list_is_numpys(backend):
    # ``a[[[0, 1], [2, 2]], 1:]`` was refused ("invalid array index [[i64]]"): a literal list
    # of literal lists keeps its values, an integer array index of shape (2, 2).
    a = np.arange(12.0).reshape(4, 3)
    got = myia(lambda a: a[[[0, 1], [2, 2]], 1:], backend=backend)(a)
    np.testing.assert_array_equal(got, a[[[0, 1], [2, 2]], 1:])
    rows = myia(vmap(lambda r: r[[[0, 1], [2, 2]]]), backend=backend)(a)
    np.testing.assert_array_equal(rows, a[:, [[0, 1], [2, 2]]])

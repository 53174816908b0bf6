"""Defects users met in NumPy code, vmap and grad inside Myia code, and unclear messages.

A slice ``x[i:i + 3]`` whose start is known at run time only was a window of a fixed length
that raised `IndexError` where NumPy's slice is shorter (``i`` past ``len(x) - 3`` in a
loop). It is a window only where it provably fits (a loop's index within a range that keeps
it inside the axis); elsewhere it is NumPy's slice, of an axis known at run time only.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any

import numpy as np
import pytest

from myia import MyiaShapeError, MyiaTypeError, grad, hessian, jvp, myia, vjp, vmap
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]


def _backend(name):
    if name == "jax":
        pytest.importorskip("jax")
    return name


def windows_past_the_end(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sum(x[i : i + 3] ** 2) * (i + 1)
    return s


def windows_in_a_branch(x, w):
    # The index read in a block of the body (a parameter every jump passes it to).
    s = 0.0
    for i in range(len(x) - 1):
        if i % 2 == 0:
            s = s + np.sum(np.tanh(x[i : i + 3] * w[: len(x[i : i + 3])]))
    return s


def window_of_an_argument(x, i):
    return x[i : i + 3]


def window_of_a_changing_array(x):
    s = 0.0
    for i in range(len(x) - 2):
        s = s + np.sum(x[i : i + 3])
        x = x * 2.0  # a new array each iteration: still the same length
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_windows_past_the_end_are_numpys_slices(backend):
    backend = _backend(backend)
    x, w = np.linspace(-1.0, 1.0, 5), np.array([0.5, -1.0, 2.0])
    got = myia(windows_past_the_end, backend=backend)(x)
    assert got == pytest.approx(windows_past_the_end(x), rel=1e-12)
    got = myia(windows_in_a_branch, backend=backend)(x, w)
    assert got == pytest.approx(windows_in_a_branch(x, w), rel=1e-12)
    f = myia(window_of_an_argument, backend=backend)
    for i in (0, 2, 3, 4, 6, -1, -7):
        got, want = f(x, i), window_of_an_argument(x, i)
        assert got.shape == want.shape, i
        np.testing.assert_array_equal(got, want)
    got = myia(window_of_a_changing_array, backend=backend)(x)
    assert got == pytest.approx(window_of_a_changing_array(x), rel=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_of_windows_past_the_end(backend):
    backend = _backend(backend)
    x, w = np.linspace(-1.0, 1.0, 5), np.array([0.5, -1.0, 2.0])
    check_grad(windows_past_the_end, x, backend=backend)
    check_grad(windows_in_a_branch, x, w, backend=backend)
    g = grad(lambda x, i: np.sum(window_of_an_argument(x, i) ** 2), backend=backend)
    np.testing.assert_allclose(g(x, 3), [0.0, 0.0, 0.0, 2 * x[3], 2 * x[4]])


# In Myia code, vmap of a partial application of a gradient, jvp and vmap of the gradient of
# a closure, and vmap of a gradient called with keywords were refused ("vmap of a gradient
# or vmap of a function that reads variables of an enclosing function is not supported
# yet"); they worked at the top level. The gradient of a closure is transformed as the
# closure is (its free variables passed by the call); a partial application's arguments are
# passed as arguments that are not batched.


def tanh_loss(W, x):
    return np.sum(np.tanh(W @ x))


def product_loss(x, y):
    return np.sum(x * y) ** 2


W23 = np.arange(6.0).reshape(2, 3) * 0.1
X43 = np.arange(12.0).reshape(4, 3) * 0.1


def per_example_gradients(W, X):
    return vmap(partial(grad(tanh_loss), W))(X), vmap(partial(grad(tanh_loss, 1), W))(X)


def vmap_of_a_partial(W, X):
    h = partial(tanh_loss, W)
    return vmap(h, in_axes=(1,))(X.T)


def jvp_of_the_gradient_of_a_closure(a, x, t):
    def clo(z):
        return np.sum(np.sin(a * z) * z)

    return jvp(grad(clo), (x,), (t,))


def vmap_of_a_gradient_with_keywords(X, Y):
    return vmap(grad(product_loss))(X, y=Y), vmap(grad(product_loss, "y"))(X, y=Y)


def _close(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_transformations_of_gradients_in_myia_code(backend):
    backend = _backend(backend)
    x, t = np.linspace(-1.0, 1.0, 3), np.array([0.5, 1.0, -2.0])
    for fn, args in [
        (per_example_gradients, (W23, X43)),
        (vmap_of_a_partial, (W23, X43)),
        (jvp_of_the_gradient_of_a_closure, (2.0, x, t)),
        (vmap_of_a_gradient_with_keywords, (X43, X43 + 1.0)),
    ]:
        _close(myia(fn, backend=backend)(*args), fn(*args))

    @myia(backend=backend)
    def closure_grads(a, X):
        def clo(x, y):
            return np.sum(np.sin(a * x) * y)

        return vmap(grad(clo))(X, X), vmap(grad(clo, "y"), in_axes=(0, None))(X, X[0])

    def want(a, X):
        def clo(x, y):
            return np.sum(np.sin(a * x) * y)

        return vmap(grad(clo))(X, X), vmap(grad(clo, "y"), in_axes=(0, None))(X, X[0])

    _close(closure_grads(2.0, X43), want(2.0, X43))


@pytest.mark.parametrize("backend", BACKENDS)
def test_derivatives_through_transformed_gradients(backend):
    backend = _backend(backend)

    def partial_loss(W, X):
        return np.sum(vmap(partial(grad(tanh_loss, 1), W))(X) ** 2)

    def closure_loss(a, x, t):
        return np.sum(jvp_of_the_gradient_of_a_closure(a, x, t)[1])

    check_grad(partial_loss, W23, X43, wrt=0, backend=backend)
    check_grad(closure_loss, 2.0, np.linspace(-1.0, 1.0, 3), np.ones(3), wrt=0, backend=backend)


def test_vmap_of_a_partial_called_in_a_loop_is_a_clear_error():
    def looped(W, X):
        h = vmap(partial(tanh_loss, W))
        for _ in range(2):
            X = X + h(X)[:, None]
        return X

    with pytest.raises(MyiaTypeError, match="vmap of a partial application") as info:
        myia(looped)(W23, X43)
    assert __file__ in str(info.value) and "looped" in str(info.value)


# ``sorted(d)`` and ``sorted(d.keys())`` of a dict were "unsupported operation lt on ('a',
# 'b')"; a dict's keys, known at compile time, are sorted at compile time, into a list a loop
# reads as constants (``d[k]``). ``str`` of a number was "calling str is not supported".


def weighted_by_sorted_keys(d):
    s = 0.0
    for k in sorted(d.keys()):
        s = s * 2.0 + d[k] ** 2
    return s


def sorted_views(d):
    return sorted(d), [d[k] for k in sorted(d, reverse=True)], "a" < "b", "b" <= "a"


def strings_of_numbers(x, n):
    return str(x), str(n), str(np.float32(0.25)), str(True), str(n) + "!"


@pytest.mark.parametrize("backend", BACKENDS)
def test_sorted_keys_and_str_in_myia_code(backend):
    backend = _backend(backend)
    d = {"b": 1.5, "c": -2.0, "a": 0.5}
    assert myia(weighted_by_sorted_keys, backend=backend)(d) == weighted_by_sorted_keys(d)
    assert myia(sorted_views, backend=backend)(d) == sorted_views(d)
    assert myia(strings_of_numbers, backend=backend)(1.5, 3) == strings_of_numbers(1.5, 3)
    check_grad(weighted_by_sorted_keys, d, backend=backend)


# Messages: vjp's function called in Myia code with a cotangent of another shape said
# "Incompatible shapes in an arithmetic operation"; hessian of a function returning a string
# said "size expects an array"; np.r_, np.c_ and einsum's interleaved form were refused with
# "unsupported operation getitem on (<RClass object ...>" and "einsum's subscripts must be
# known at compile time". The forms are implemented; the mistakes say what is wrong.


def sine(x):
    return np.sin(x)


def vjp_with_a_wrong_cotangent(x):
    _, back = vjp(sine, x)
    return back(np.ones(4))


def hessian_of_a_string(x):
    return hessian(lambda y: "a")(x)


def joined(x, y):
    return np.r_[x, 2.0, y], np.c_[x, y], np.einsum(np.outer(x, y), [0, 1], y, [1])


def r_of_a_slice(x):
    return np.r_[0:3, x]


@pytest.mark.parametrize("backend", BACKENDS)
def test_joins_and_einsum_sublists(backend):
    backend = _backend(backend)
    x, y = np.arange(3.0), np.linspace(-1.0, 1.0, 3)
    for got, want in zip(myia(joined, backend=backend)(x, y), joined(x, y)):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12)
    check_grad(lambda x, y: sum(np.sum(np.sin(v)) for v in joined(x, y)), x, y, backend=backend)


@pytest.mark.parametrize(
    ("fn", "args", "cls", "text"),
    [
        (vjp_with_a_wrong_cotangent, (np.ones(3),), MyiaShapeError,
         "the cotangent's shape (4,) does not match the output's (3,)"),
        (hessian_of_a_string, (2.0,), MyiaTypeError,
         "hessian: the function must return floats or arrays"),
        (r_of_a_slice, (np.ones(3),), MyiaTypeError, "np.r_ takes arrays and numbers"),
    ],
)  # fmt: skip
def test_clear_messages_at_the_users_line(fn, args, cls, text):
    with pytest.raises(cls) as info:
        myia(fn)(*args)
    assert text in str(info.value)
    assert __file__ in str(info.value) and fn.__name__ in str(info.value)


def test_hessian_of_a_string_at_the_top_level_points_at_the_function():
    with pytest.raises(MyiaTypeError, match="hessian: the function must return") as info:
        hessian(lambda y: "a")(2.0)
    assert __file__ in str(info.value)


# vmap in Myia code: a closure taking ``**kwargs`` called with keywords ("keyword arguments of
# a function taking *args or **kwargs cannot be batched"), a list of axes mixing ints and
# tuples ("a list: elements of incompatible types"), and dataclass axes nested in a
# dataclass ("in_axes must be known at compile time") were refused.


@dataclasses.dataclass
class Inner:
    a: Any
    b: Any


@dataclasses.dataclass
class Outer:
    p: Any
    q: Any


def outer_product(o):
    return o.p.a * o.p.b + o.q


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_axes_and_keywords_in_myia_code(backend):
    backend = _backend(backend)
    X = np.arange(12.0).reshape(4, 3)

    @myia(backend=backend)
    def f(s, X):
        def g(x, **kw):
            return x * s + kw["c"]

        def h(x, t):
            return x * t[0] + t[1]

        o = Outer(Inner(X, 2.0), X.T)
        return (
            vmap(g)(X, c=X),
            vmap(h, in_axes=[0, (0, None)])(X, (X, 1.0)),
            vmap(outer_product, in_axes=(Outer(Inner(0, None), 1),))(o),
        )

    kw, mixed, nested = f(2.0, X)
    np.testing.assert_allclose(kw, X * 2.0 + X)
    np.testing.assert_allclose(mixed, X * X + 1.0)
    np.testing.assert_allclose(nested, X * 2.0 + X)

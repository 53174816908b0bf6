"""Transformations inside Myia code that a fuzzing of the transformations found refused.

``checkpoint(f)`` transformed there (``jvp``, ``vmap``, ``jacfwd``, ``jacrev``, ``hessian``,
``vmap(grad)``), ``jvp`` of a closure taking ``*args``, and ``vmap`` (and ``jacfwd``, which
batches) of indexing by a literal list (``a[[0, 2]]``, ``a[:, [True, False, True]]``).

Each result is compared with central finite differences of the plain Python function (or a
Python loop over the examples, for ``vmap``), on every backend the transformations run on.
"""

from __future__ import annotations

import numpy as np
import pytest

from myia import checkpoint, grad, hessian, jacfwd, jacrev, jvp, myia, vmap

BACKENDS = ["debug", "numpy", "jax"]
W = np.array([[0.3, -0.2], [0.5, 0.1], [-0.4, 0.7]])
X = np.array([0.1, -0.3, 0.8])
TX = np.array([1.0, 0.5, -0.2])
XS = np.stack([X, 2.0 * X, -X])


def layer(a):
    return np.tanh(a @ W) * np.sum(a * a)


def loss(a):
    return np.sum(layer(a))


def layer_w(a, w):
    return np.tanh(a @ w) * np.sum(a * a)


def central(f, x, t, h=1e-6):
    return (np.asarray(f(x + h * t)) - np.asarray(f(x - h * t))) / (2 * h)


def jacobian(f, x):
    """The Jacobian of `f` at `x` by central differences: the output's shape, then x's."""
    cols = [central(f, x, e) for e in np.eye(x.size)]
    return np.stack(cols, axis=-1)


def close(got, want, tol=1e-6):
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def jvp_of_checkpoint(x):
    return jvp(checkpoint(layer), (x,), (TX,))


def jvp_of_checkpoint_kept(x):
    c = checkpoint(layer)
    return jvp(c, (x,), (TX,))[1]


def vmap_of_checkpoint(xs):
    return vmap(checkpoint(layer))(xs)


def jacfwd_of_checkpoint(x):
    return jacfwd(checkpoint(layer))(x)


def jacrev_of_checkpoint(x):
    return jacrev(checkpoint(layer))(x)


def hessian_of_checkpoint(x):
    return hessian(checkpoint(loss))(x)


def vmap_grad_of_checkpoint(xs):
    return vmap(grad(checkpoint(loss)))(xs)


def per_example_gradients(xs):
    return np.stack([central(loss, x, e) for x in xs for e in np.eye(3)]).reshape(xs.shape)


#: (function, argument, expected result) for each transformation of ``checkpoint(f)``.
CHECKPOINTED = {
    "jvp": (jvp_of_checkpoint, X, lambda: (layer(X), central(layer, X, TX))),
    "jvp_kept": (jvp_of_checkpoint_kept, X, lambda: central(layer, X, TX)),
    "vmap": (vmap_of_checkpoint, XS, lambda: np.stack([layer(x) for x in XS])),
    "jacfwd": (jacfwd_of_checkpoint, X, lambda: jacobian(layer, X)),
    "jacrev": (jacrev_of_checkpoint, X, lambda: jacobian(layer, X)),
    "hessian": (hessian_of_checkpoint, X, lambda: jacobian(grad(loss), X)),
    "vmap_grad": (vmap_grad_of_checkpoint, XS, lambda: per_example_gradients(XS)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", CHECKPOINTED)
def test_transformations_of_a_checkpointed_function_inside_myia_code(kind, backend):
    # Each was a MyiaTypeError ("jvp of a closure called away from where it is defined"):
    # the function `checkpoint` returns was made in its own code, away from the call.
    fn, arg, expected = CHECKPOINTED[kind]
    got, want = myia(fn, backend=backend)(arg), expected()
    for g, w in zip(got, want) if kind == "jvp" else [(got, want)]:
        close(g, w, 1e-5)


def jvp_of_checkpointed_closure(x, w):
    return jvp(checkpoint(lambda a: layer_w(a, w)), (x,), (TX,))


def vmap_of_checkpointed_closure(xs, w):
    return vmap(checkpoint(lambda a: layer_w(a, w)))(xs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_transformations_of_a_checkpointed_closure_inside_myia_code(backend):
    y, ty = myia(jvp_of_checkpointed_closure, backend=backend)(X, W)
    close(y, layer(X))
    close(ty, central(layer, X, TX))
    got = myia(vmap_of_checkpointed_closure, backend=backend)(XS, W)
    close(got, np.stack([layer(x) for x in XS]))


def jvp_of_a_star_closure(x, w):
    def h(*args):
        return layer_w(args[0], w)

    return jvp(h, (x,), (TX,))


def jvp_of_a_star_closure_after_a_parameter(x, w):
    def h(a, *rest):
        return layer_w(a, w) * rest[0]

    return jvp(h, (x, 1.5), (TX, 0.5))


@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_of_a_closure_taking_star_args_inside_myia_code(backend):
    # Was "tuple indexing expects a tuple, not f64 x 3": the closure's specialization takes
    # its ``*args`` as one tuple, which the tangent graph passed element by element.
    y, ty = myia(jvp_of_a_star_closure, backend=backend)(X, W)
    close(y, layer(X))
    close(ty, central(layer, X, TX))
    y, ty = myia(jvp_of_a_star_closure_after_a_parameter, backend=backend)(X, W)
    close(y, layer(X) * 1.5)
    close(ty, central(layer, X, TX) * 1.5 + layer(X) * 0.5)


def rows_picked(a):
    return np.sin(a[[0, 2]])


def columns_picked(a):
    return np.sin(a[:, [1, 3]])


def apart(a):
    return np.sin(a[[0, 2], :, 1])  # NumPy puts the picked axis first


def masked(a):
    return np.sin(a[:, [True, False, False, True]])


def mapped(fn, axis):
    return lambda b: vmap(fn, in_axes=axis)(b)


A = np.arange(24.0).reshape(3, 4, 2) / 10.0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [rows_picked, columns_picked, apart, masked])
def test_vmap_and_jacfwd_of_indexing_by_a_literal_list(fn, backend):
    # Was "invalid array index [i64]": the batching of ``a[[0, 2]]`` lost the list's values.
    batch = np.stack([A, 2.0 * A])
    for axis in (0, 1):
        got = myia(mapped(fn, axis), backend=backend)(np.moveaxis(batch, 0, axis))
        close(got, np.stack([fn(a) for a in batch]))
    jac = myia(lambda a: jacfwd(fn)(a), backend=backend)(A)
    flat = np.stack([central(fn, A, e.reshape(A.shape)) for e in np.eye(A.size)], axis=-1)
    close(jac, flat.reshape(jac.shape))

"""Programs of PyTorch's functional transforms (``torch.func``) that Myia refused.

Each is a call a user of ``torch.func`` or JAX writes as it is documented there:

- ``has_aux=True`` for ``jacrev``, ``jacfwd``, ``hessian``, ``vjp`` and ``jvp`` (the
  function returns ``(output, aux)``; the result carries ``aux`` along, undifferentiated):
  refused with a ``TypeError`` (an unexpected keyword) at the top level and inside Myia code;
- a negative ``argnums`` for ``jacrev``, ``jacfwd`` and ``hessian`` (``argnums=-1``: the last
  argument, as ``grad`` already took it): a ``ValueError`` at the top level, and inside Myia
  code the message "f() takes 2 positional arguments but 4 were given".
"""

from __future__ import annotations

import numpy as np
import pytest

from myia import MyiaTypeError, hessian, jacfwd, jacrev, jvp, myia, vjp, vmap

BACKENDS = ["numpy", "debug", "jax"]

V = np.array([0.3, -1.2, 0.8])
B = np.array([1.5, -2.0, 0.5])


def scaled_sin(a):  # (output, aux)
    return np.sin(a) * a[0], {"c": np.cos(a)}


def jac_scaled_sin(a):
    j = np.diag(np.cos(a) * a[0])
    j[:, 0] += np.sin(a)
    return j


def loss_and_norm(a):
    return np.sum(np.sin(a) * a), np.sum(a * a)


def hess_loss(a):
    return np.diag(2 * np.cos(a) - a * np.sin(a))


def jacrev_aux(x):
    return jacrev(scaled_sin, has_aux=True)(x)


def jacfwd_aux(x):
    return jacfwd(scaled_sin, has_aux=True)(x)


def hessian_aux(x):
    return hessian(loss_and_norm, has_aux=True)(x)


def vjp_aux(x):
    out, pullback, aux = vjp(scaled_sin, x, has_aux=True)
    return out, pullback(x), aux


def jvp_aux(x):
    return jvp(scaled_sin, (x,), (x,), has_aux=True)


def jacrev_aux_of_closure(x, w):
    return jacrev(lambda a: (np.sin(w * a), w * 2.0), has_aux=True)(x)


def vmap_of_jacfwd_aux(xs):
    return vmap(jacfwd(scaled_sin, has_aux=True))(xs)


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def _check_jacobian(result):
    jac, aux = result
    _close(jac, jac_scaled_sin(V))
    _close(aux["c"], np.cos(V))


def _check_hessian(result):
    hess, aux = result
    _close(hess, hess_loss(V))
    _close(aux, np.sum(V * V))


def _check_vjp(result):
    out, (ct,), aux = result
    _close(out, np.sin(V) * V[0])
    _close(ct, V @ jac_scaled_sin(V))
    _close(aux["c"], np.cos(V))


def _check_jvp(result):
    out, tangent, aux = result
    _close(out, np.sin(V) * V[0])
    _close(tangent, jac_scaled_sin(V) @ V)
    _close(aux["c"], np.cos(V))


HAS_AUX = [
    (jacrev_aux, _check_jacobian),
    (jacfwd_aux, _check_jacobian),
    (hessian_aux, _check_hessian),
    (vjp_aux, _check_vjp),
    (jvp_aux, _check_jvp),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, check", HAS_AUX, ids=[f.__name__ for f, _ in HAS_AUX])
def test_has_aux_in_myia_code(fn, check, backend):
    check(myia(fn, backend=backend)(V))


@pytest.mark.parametrize("backend", BACKENDS)
def test_has_aux_of_a_closure_and_under_vmap(backend):
    jac, aux = myia(jacrev_aux_of_closure, backend=backend)(V, 1.5)
    _close(jac, np.diag(1.5 * np.cos(1.5 * V)))
    assert aux == 3.0
    xs = np.stack([V, 2 * V])
    jacs, aux = myia(vmap_of_jacfwd_aux, backend=backend)(xs)
    _close(jacs, np.stack([jac_scaled_sin(x) for x in xs]))
    _close(aux["c"], np.cos(xs))


def test_has_aux_at_the_top_level():
    jac, aux = jacrev(scaled_sin, has_aux=True)(V)
    _close(jac, jac_scaled_sin(V))
    _close(aux["c"], np.cos(V))
    jac, aux = jacfwd(scaled_sin, has_aux=True)(V)
    _close(jac, jac_scaled_sin(V))
    hess, aux = hessian(loss_and_norm, has_aux=True)(V)
    _close(hess, hess_loss(V))
    _close(aux, np.sum(V * V))
    out, pullback, aux = vjp(scaled_sin, V, has_aux=True)
    _close(pullback(V)[0], V @ jac_scaled_sin(V))
    _close(aux["c"], np.cos(V))
    out, tangent, aux = jvp(scaled_sin, (V,), (V,), has_aux=True)
    _close(tangent, jac_scaled_sin(V) @ V)
    # Myia code calling the transformation made at the top level.
    jac, aux = myia(lambda x: jacrev(scaled_sin, has_aux=True)(x))(V)
    _close(jac, jac_scaled_sin(V))


def test_has_aux_of_a_function_that_returns_no_pair():
    with pytest.raises(MyiaTypeError, match="must return a pair"):
        jacrev(np.sin, has_aux=True)(V)
    with pytest.raises(MyiaTypeError, match="must return a pair"):
        myia(lambda x: jacfwd(lambda a: np.sin(a), has_aux=True)(x))(V)


def product(x, y):
    return np.sin(x) * y


def weighted(x, y):
    return np.sum(np.sin(x) * y * y)


NEGATIVE_ARGNUMS = {
    "jacrev": (lambda x, y: jacrev(product, argnums=-1)(x, y), np.diag(np.sin(V))),
    "jacfwd": (lambda x, y: jacfwd(product, argnums=-1)(x, y), np.diag(np.sin(V))),
    "hessian": (lambda x, y: hessian(weighted, argnums=-1)(x, y), np.diag(2 * np.sin(V))),
    "jacrev_tuple": (lambda x, y: jacrev(product, argnums=(0, -1))(x, y)[1], np.diag(np.sin(V))),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", list(NEGATIVE_ARGNUMS))
def test_negative_argnums_in_myia_code(kind, backend):
    fn, want = NEGATIVE_ARGNUMS[kind]
    _close(myia(fn, backend=backend)(V, B), want)


def test_negative_argnums_at_the_top_level():
    _close(jacrev(product, argnums=-1)(V, B), np.diag(np.sin(V)))
    _close(jacfwd(product, argnums=-2)(V, B), np.diag(np.cos(V) * B))
    _close(hessian(weighted, argnums=(-1, 0))(V, B)[0][0], np.diag(2 * np.sin(V)))
    with pytest.raises(ValueError, match="no argument at position -3"):
        jacrev(product, argnums=-3)(V, B)

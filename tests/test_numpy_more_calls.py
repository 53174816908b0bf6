"""NumPy functions of the table of tests/numpy_more_table.py in particular calls.

Gradients on every backend at once and against JAX's, errors at the user's line, SciPy's
special functions without SciPy and as XLA and machine code, the Gaussian process of the
``gp_nll`` benchmark under XLA, and calls the table's random arguments do not make (a list
of quantiles, 1-D weights along an axis).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from array_checks import as_myia_result, check_value
from numpy_more_table import (
    BACKENDS,
    SPD,
    by_dtype,
    f,
    inv,
    jax,
    make_args,
    sl,
    solve_triangular,
    ss,
)

from myia import grad, myia, vmap
from myia.errors import MyiaShapeError, MyiaTypeError
from myia.primitives import special as special_prims
from myia.testing import check_grad

# Gradients on every backend, and JAX's -----------------------------------------------------


def test_gradients_agree_on_every_backend() -> None:
    def nll(a, b):
        x = np.linalg.solve(a, b)
        return np.sum(x * b) + np.linalg.slogdet(a)[1] + np.sum(np.cumsum(np.sort(b, axis=0)))

    args = make_args((SPD, f(4, 2)), 0)
    expected = grad(nll, 0, 1, backend="numpy")(*args)
    for backend in BACKENDS[1:]:
        got = grad(nll, 0, 1, backend=backend)(*args)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)


def jax_loss(m, b):
    k = m @ m.T + 4.0 * np.eye(4)
    lo = np.linalg.cholesky(k)
    x = np.linalg.solve(k, b)
    return (
        np.sum(x * b)
        + 2.0 * np.sum(np.log(np.diagonal(lo)))
        + np.linalg.det(k) * 1e-3
        + np.sum(np.linalg.inv(k))
        + np.einsum("ij,jk->", m, b)
        + np.var(b, ddof=1)
        + np.sum(np.logaddexp(b, 0.5))
        + np.linalg.norm(m)
        + np.sum(np.cumsum(np.sort(b, axis=0), axis=0))
    )


@pytest.mark.skipif(jax is None, reason="JAX is not installed")
def test_gradients_match_jax() -> None:
    import jax.numpy as jnp

    args = make_args((f(4, 4), f(4, 2)), 3)
    ours = grad(jax_loss, 0, 1)(*args)
    with jax.enable_x64(True):
        # The same source with NumPy's names bound to JAX's.
        theirs = jax.grad(lambda m, b: _with_numpy(jnp, jax_loss)(m, b), (0, 1))(*args)
    for g, e in zip(ours, theirs):
        np.testing.assert_allclose(g, np.asarray(e), rtol=1e-8, atol=1e-10)


def _with_numpy(module: Any, fn: Any) -> Any:
    import types

    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": module})


# Errors ---------------------------------------------------------------------------------------


def bad_cholesky(a):
    return np.linalg.cholesky(a)  # ERROR


def bad_solve(a, b):
    return np.linalg.solve(a, b)  # ERROR


def bad_einsum(a, b):
    return np.einsum("ij,jk->ik", a, b)  # ERROR


def bad_cumsum(a):
    return np.cumsum(a, axis=2)  # ERROR


def bad_broadcast(a):
    return np.broadcast_to(a, (3, 2))  # ERROR


def bad_sort(a):
    return np.sort(a, axis=1)  # ERROR


def bad_tril(a):
    return np.tril(a)  # ERROR


@pytest.mark.parametrize(
    "fn, args, error",
    [
        (bad_cholesky, (np.ones((3, 4)),), MyiaShapeError),
        (bad_solve, (np.eye(3), np.ones((4, 2))), MyiaShapeError),
        (bad_einsum, (np.ones((2, 3)), np.ones((4, 2))), MyiaShapeError),
        (bad_cumsum, (np.ones((2, 3)),), MyiaShapeError),
        (bad_broadcast, (np.ones(3),), MyiaShapeError),
        (bad_sort, (np.ones(3),), MyiaShapeError),
        (bad_tril, (np.ones(3),), MyiaShapeError),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_errors_point_at_the_users_line(fn: Any, args: tuple[Any, ...], error: type) -> None:
    import inspect

    with pytest.raises(error) as info:
        myia(fn)(*args)
    lines, first = inspect.getsourcelines(fn)
    line = first + next(i for i, s in enumerate(lines) if s.rstrip().endswith("# ERROR"))
    frames = [x for x in info.value.frames if x.location is not None]
    assert any(x.location.filename == __file__ and x.location.line == line for x in frames), (
        info.value.frames
    )


def vsplit_vector(a):
    return np.vsplit(a, 2)


def dsplit_matrix(a):
    return np.dsplit(a, 2)


@pytest.mark.parametrize(
    "fn, arg", [(vsplit_vector, np.ones(4)), (dsplit_matrix, np.ones((2, 4)))]
)
def test_vsplit_and_dsplit_of_too_few_dimensions_raise_as_numpy(fn: Any, arg: Any) -> None:
    with pytest.raises(ValueError) as expected:
        fn(arg)
    with pytest.raises(ValueError, match=str(expected.value)):
        myia(fn)(arg)


def test_einsum_gradient_of_a_repeated_index_under_vmap() -> None:
    def f(m):
        return np.einsum("ii->", m) ** 2 + np.sum(np.einsum("iij->ij", m[:, :, None] * m) ** 3)

    xs = np.arange(18.0).reshape(2, 3, 3) / 7
    batched = myia(lambda xs: vmap(grad(f))(xs))(xs)
    np.testing.assert_allclose(batched, np.stack([grad(f)(x) for x in xs]), rtol=1e-12)


def test_einsum_gradient_with_many_repeated_indices_is_refused() -> None:
    # One identity matrix per repeated occurrence, up to three ("iiii" is three).
    x = np.arange(16.0).reshape(2, 2, 2, 2)
    assert np.array_equal(
        grad(lambda x: np.einsum("iiii->", x))(x),
        np.einsum("ijkl,ij,ik,il->ijkl", np.ones_like(x), *[np.eye(2)] * 3),
    )
    with pytest.raises(MyiaTypeError, match="more than 3 repeated indices"):
        grad(lambda x: np.einsum("iiiii->", x))(np.ones((2,) * 5))


# Special functions: SciPy optional, machine code and XLA -------------------------------------


@pytest.mark.skipif(ss is None, reason="SciPy is not installed")
def test_special_functions_without_scipy_are_refused_at_compile_time(monkeypatch) -> None:
    monkeypatch.setattr(special_prims, "_sp", None)  # as if SciPy were not installed
    with pytest.raises(MyiaTypeError, match="needs SciPy"):
        myia(_erf_of_array)(np.array([0.5, 1.5]))
    # math.erf and math.lgamma of Python floats are Python's; lgamma's derivative is digamma.
    assert myia(lambda v: math.erf(v) + math.lgamma(v))(1.5) == math.erf(1.5) + math.lgamma(1.5)
    assert grad(lambda v: math.erf(v))(0.5) == pytest.approx(2 / math.sqrt(math.pi) / math.e**0.25)
    with pytest.raises(MyiaTypeError, match="digamma .the derivative of gammaln"):
        grad(lambda v: math.lgamma(v))(1.5)


@pytest.mark.parametrize("backend", ["native"] + (["jax"] if jax is not None else []))
def test_dtype_comparisons_are_constants_on_compiled_backends(backend: str) -> None:
    # The comparisons fold at compile time: the native and XLA code keep one branch.
    for x in (np.array([1.5, -2.0]), np.array([[1.5, 2.0]], np.float32)):
        kw = {"background": False} if backend == "native" else {}
        check_value(myia(by_dtype, backend=backend, **kw)(x), as_myia_result(by_dtype(x)), backend)
    x = np.array([1.5, -2.0])
    g = grad(lambda x: np.sum(by_dtype(x)[0]), backend=backend)
    np.testing.assert_allclose(g(x), 2 * x, rtol=1e-12)


def _dtype_ordered(x):
    return x.dtype < np.float32


def _dtype_of_a_number(x):
    return np.issubdtype(x.dtype, 3)


@pytest.mark.parametrize(
    "fn, message",
    [(_dtype_ordered, "'<' is not defined on dtypes"), (_dtype_of_a_number, "not dtypes")],
)
def test_dtype_misuses_are_refused_at_the_users_line(fn: Any, message: str) -> None:
    with pytest.raises(MyiaTypeError, match=message) as info:
        myia(fn)(np.ones(2))
    assert "in " + fn.__name__ in str(info.value)


def _erf_of_array(x):
    return ss.erf(x)


def _special_loop(x, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + math.erf(x * i) + math.erfc(x) + math.lgamma(x + i)
        i = i + 1
    return s


@pytest.mark.skipif(jax is None or ss is None, reason="needs JAX and SciPy")
def test_special_functions_run_as_xla_and_machine_code() -> None:
    x = np.array([0.5, 1.5, 2.5])
    expected = grad(_special_sum)(x)
    g = grad(_special_sum, backend="jax")
    np.testing.assert_allclose(g(x), expected, rtol=1e-12)
    assert g.specialization(x).executable.jitted, g.specialization(x).executable.reason
    native = myia(_special_loop, backend="native")
    assert native(0.3, 10) == pytest.approx(_special_loop(0.3, 10), rel=1e-14)
    assert native.specialization(0.3, 10).executable.native
    # math.lgamma at a pole raises Python's error on every backend.
    for backend in ("numpy", "jax", "native"):
        with pytest.raises(ValueError, match="math domain error"):
            myia(_special_loop, backend=backend)(-1.0, 2)


def _special_sum(x):
    return np.sum(ss.erf(x) * ss.erfc(x) + ss.gammaln(x) * ss.digamma(x) + ss.polygamma(2, x))


# The Gaussian process of the gp_nll benchmark under XLA -----------------------------------------


def _gp_nll(log_ls, log_noise, x, y):
    n = x.shape[0]
    z = x / np.exp(log_ls)
    sq = np.sum(z * z, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (z @ z.T)
    k = np.exp(-0.5 * np.maximum(d2, 0.0)) + (np.exp(2.0 * log_noise) + 1e-6) * np.eye(n)
    lower = np.linalg.cholesky(k)
    alpha = sl.solve_triangular(lower, y, lower=True)
    return (0.5 * np.sum(alpha * alpha) + np.sum(np.log(np.diag(lower)))) / n


@pytest.mark.skipif(jax is None or sl is None, reason="needs JAX and SciPy")
def test_gaussian_process_gradient_is_one_xla_computation() -> None:
    rng = np.random.default_rng(0)
    args = (rng.uniform(-0.5, 0.5, 3), -1.2, rng.uniform(-2, 2, (12, 3)), rng.standard_normal(12))
    expected = grad(_gp_nll, 0, 1)(*args)
    for fn in (myia(_gp_nll, backend="jax"), grad(_gp_nll, 0, 1, backend="jax")):
        ex = fn.specialization(*args).executable
        assert ex.jitted, ex.reason
    got = grad(_gp_nll, 0, 1, backend="jax")(*args)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10)
    # Where NumPy raises (a matrix that is not positive definite), so does the jitted code.
    f = myia(_not_spd, backend="jax")
    assert f(2.0 * np.eye(3)) == myia(_not_spd)(2.0 * np.eye(3))
    assert f.specialization(np.eye(3)).executable.jitted
    for bad in (-np.eye(3), np.ones((3, 3))):
        with pytest.raises(Exception, match="not positive definite") as info:
            f(bad)
        assert type(info.value) is type(_error_of(_not_spd, bad))


@pytest.mark.skipif(jax is None or sl is None, reason="needs JAX and SciPy")
def test_singular_matrices_under_xla_give_numpys_results() -> None:
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    f = myia(inv, backend="jax")
    assert f.specialization(singular).executable.jitted
    with pytest.raises(Exception, match="Singular matrix") as info:
        f(singular)
    assert type(info.value) is type(_error_of(inv, singular))
    # BLAS's triangular solve gives infinities and NaNs (no error): so does the jitted code.
    t = np.tril(np.ones((3, 3)))
    t[1, 1] = 0.0
    with np.errstate(all="ignore"):
        expected = myia(solve_triangular)(t, np.ones((3, 2)))
        got = myia(solve_triangular, backend="jax")(t, np.ones((3, 2)))
    np.testing.assert_array_equal(got, expected)
    assert np.isnan(got).any()


def _not_spd(a):
    return np.sum(np.linalg.cholesky(a)) + np.sum(np.linalg.inv(a))


def _error_of(fn, *args):
    try:
        myia(fn, backend="numpy")(*args)
    except Exception as exc:  # noqa: BLE001 - the error NumPy's backend raises
        return exc
    raise AssertionError("no error")


def _quantiles_of_a_sequence(x):
    return (
        np.quantile(x, [0.1, 0.9]),
        np.percentile(x, (10, 90)),
        np.percentile(x, [25.0, 50.0], axis=0),
    )


def test_quantiles_given_as_a_list_or_tuple():
    # A literal list or a tuple of quantiles, as NumPy takes them: "unsupported operation
    # mul on ([f64], f64)" before.
    x = np.array([[3.0, -1.0], [2.5, 0.0], [7.0, 1.5]])
    got, want = myia(_quantiles_of_a_sequence)(x), _quantiles_of_a_sequence(x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    check_grad(lambda v: np.sum(np.quantile(v, [0.1, 0.9]) ** 2), x[:, 0])


def _averages_along_an_axis(x, w2, w3):
    return np.average(x, axis=0, weights=w2), np.average(x, axis=-1, weights=w3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_average_with_1d_weights_along_an_axis(backend):
    # 1-D weights apply along `axis`, as in NumPy: they were broadcast against the last axis
    # (axis=0 refused, axis=1 right by chance), and with no axis NumPy's TypeError.
    x, w2, w3 = np.array([[3.0, -1.0, 0.5], [2.5, 0.0, 4.0]]), np.array([1.0, 3.0]), np.ones(3)
    w3 = w3 + np.arange(3.0)
    got, want = (
        myia(_averages_along_an_axis, backend=backend)(x, w2, w3),
        _averages_along_an_axis(x, w2, w3),
    )
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    check_grad(
        lambda v, u: np.sum(_averages_along_an_axis(v, u, w3)[0] ** 2), x, w2, backend=backend
    )
    with pytest.raises(TypeError, match="Axis must be specified"):
        myia(lambda v, u: np.average(v, weights=u), backend=backend)(x, w3)
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        myia(lambda v, u: np.average(v, axis=0, weights=u), backend=backend)(x, w3)

"""Buffer reuse in the NumPy backend's code (`myia.compile.reuse`).

Elementwise operations write into dead temporaries: the results must be those of the code
without the pass (bit for bit: the same ufuncs on the same values) and of the reference
interpreter's backend. The programs of the table of tests/numpy_more_table.py, their gradients
included, are run with the pass on every array (``REUSE_MIN_BYTES = 0``); so are programs
where a temporary is kept, viewed, captured or returned, which must not be written into.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from test_numpy_more import CASES, _float_output, make_args, random_like

from myia import grad, myia, value_and_grad
from myia.compile import codegen
from myia.testing import vdot


@pytest.fixture
def reuse_all(monkeypatch: Any) -> None:
    """Reuse every array, however small (so that small test arrays exercise the pass)."""
    monkeypatch.setattr(codegen, "REUSE_MIN_BYTES", 0)


def no_reuse(fn: Any) -> Any:
    """`fn` compiled without the pass (a threshold no array reaches)."""
    old = codegen.REUSE_MIN_BYTES
    codegen.REUSE_MIN_BYTES = 1 << 62
    try:
        return fn()
    finally:
        codegen.REUSE_MIN_BYTES = old


def leaves(x: Any) -> list[Any]:
    if isinstance(x, (tuple, list)):
        return [y for e in x for y in leaves(e)]
    return [x]


def identical(a: Any, b: Any) -> None:
    """Same shapes and dtypes, same values up to the order of a sum's terms.

    Elementwise results are the same bits; a result written into a temporary has the
    temporary's memory order, where a new array may have another, and NumPy sums the
    elements of arrays of different orders in different orders.
    """
    la, lb = leaves(a), leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert np.shape(x) == np.shape(y) and np.result_type(x) == np.result_type(y)
        tol = 1e-5 if np.result_type(x) == np.float32 else 1e-13
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def close(a: Any, b: Any) -> None:
    for x, y in zip(leaves(a), leaves(b), strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def run_three(fn: Any, args: tuple[Any, ...]) -> Any:
    """`fn` on `args`: with the pass, without it and on the debug backend; all must agree."""
    f = myia(fn)
    got = f(*args)
    identical(got, no_reuse(lambda: myia(fn)(*args)))
    close(got, myia(fn, backend="debug")(*args))
    return f, got


# The pass writes into temporaries -------------------------------------------------------------


def kernel(x, log_ls):
    z = x / np.exp(log_ls)
    sq = np.sum(z * z, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (z @ z.T)
    return np.sum(np.exp(-0.5 * np.maximum(d2, 0.0)))


def test_large_temporaries_are_written_into() -> None:
    rng = np.random.default_rng(0)
    x, ls = rng.standard_normal((64, 3)), rng.standard_normal(3)
    g = grad(kernel, 1)
    got = g(x, ls)
    source = g.generated_code(x, ls)
    assert "out=" in source
    assert "\n    del " in source  # variables deleted after their last use
    identical(got, no_reuse(lambda: grad(kernel, 1)(x, ls)))
    close(got, grad(kernel, 1, backend="debug")(x, ls))
    # Small arrays: a new array costs less than the keywords.
    x2 = x[:4]
    assert "out=" not in grad(kernel, 1).generated_code(x2, ls)


def test_the_other_backends_make_new_arrays() -> None:
    jax = pytest.importorskip("jax")
    del jax
    rng = np.random.default_rng(0)
    x, ls = rng.standard_normal((64, 3)), rng.standard_normal(3)
    g = myia(kernel, backend="jax")
    close(g(x, ls), myia(kernel)(x, ls))


# Temporaries that must not be written into -----------------------------------------------------


def returned_and_used(a, b):
    t = a * b
    u = t + 1.0
    return t, u


# (The views are used twice: statements of their own, written before the operation that
# would write into the temporary, and read after it.)


def viewed_then_used(a, b):
    t = a * b
    v = t.T
    w = v * 3.0
    u = t + 1.0
    return v + u.T + w


def indexed_then_used(a, b):
    t = a * b
    r = t[0]
    w = r * 3.0
    u = np.exp(t)
    return u, r + w


def reshaped_then_used(a, b):
    t = a * b
    r = t.reshape((-1,))
    w = r * 3.0
    u = t * 2.0
    return u, r + w


def swapped_then_used(a, b):
    t = a * b
    r = np.swapaxes(t, 0, 1)
    w = r * 3.0
    u = t * 2.0
    return u, r + w


def captured(a, b, n):
    t = a * b

    def f(k):  # a recursive closure (not inlined), its free variable `t`
        if k <= 0:
            return t * 1.0
        return f(k - 1) * 0.5

    w = f(n)
    u = t + 1.0
    return u, w + f(n)


def in_a_tuple(a, b):
    t = a * b
    p = (t, a)
    u = t - 1.0
    return p[0] + u


def in_a_loop(a, b, n):
    t = a * b
    acc = a
    for _ in range(n):
        u = t * acc
        acc = np.tanh(u) + t
    return acc


def in_a_branch(a, b, c):
    t = a * b
    if c > 0:
        u = t + 1.0
    else:
        u = t - 1.0
    return u * t


def parameter_not_written(a, b):
    u = -a
    return (a + b) * u, a


def twice_in_one_expression(a, b):
    t = a * b
    return (t + 1.0) * (t - 1.0) + t


def read_after_in_same_statement(a, b):
    t = np.exp(a)
    return np.sum(t * b) + np.sum(t)


def broadcast_is_not_written(a, v):
    t = a * 2.0
    return t + v, (v * 3.0) + a


def dtype_change(a, b):
    t = a > b
    u = a.astype(np.float32) * 2.0
    return t, u + np.float32(1.0), (a * b).astype(np.float32)


PROGRAMS = [
    (returned_and_used, "ab"),
    (viewed_then_used, "ab"),
    (indexed_then_used, "ab"),
    (reshaped_then_used, "ab"),
    (swapped_then_used, "ab"),
    (captured, "abn"),
    (in_a_tuple, "ab"),
    (in_a_loop, "abn"),
    (in_a_branch, "abc"),
    (parameter_not_written, "ab"),
    (twice_in_one_expression, "ab"),
    (read_after_in_same_statement, "ab"),
    (broadcast_is_not_written, "av"),
    (dtype_change, "ab"),
]


def _args(spec: str) -> tuple[Any, ...]:
    rng = np.random.default_rng(1)
    make = {
        "a": lambda: rng.standard_normal((3, 3)),
        "b": lambda: rng.standard_normal((3, 3)),
        "v": lambda: rng.standard_normal(3),
        "n": lambda: 3,
        "c": lambda: -0.5,
    }
    return tuple(make[c]() for c in spec)


@pytest.mark.parametrize("fn,spec", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_values_and_gradients_agree(reuse_all: None, fn: Any, spec: str) -> None:
    args = _args(spec)
    a0, b0 = (a.copy() for a in args[:2])
    _, got = run_three(fn, args)
    expected = fn(*args)
    close(got, expected)
    np.testing.assert_array_equal(args[0], a0)  # the user's arrays are never written
    np.testing.assert_array_equal(args[1], b0)
    if all(np.result_type(x).kind == "f" for x in leaves(expected)):
        ct = random_like(expected, np.random.default_rng(2))

        def loss(a, b, rest):
            return vdot(fn(a, b, *rest), ct)

        largs = (args[0], args[1], args[2:])
        with_pass = value_and_grad(loss, 0, 1)(*largs)
        identical(with_pass, no_reuse(lambda: value_and_grad(loss, 0, 1)(*largs)))
        close(with_pass, value_and_grad(loss, 0, 1, backend="debug")(*largs))


def test_a_parameter_is_never_written(reuse_all: None) -> None:
    a = np.arange(9.0).reshape(3, 3)
    f = myia(parameter_not_written)
    f(a, a)
    assert "out=a" not in f.generated_code(a, a)
    np.testing.assert_array_equal(a, np.arange(9.0).reshape(3, 3))


def test_an_expression_sequenced_twice(reuse_all: None) -> None:
    """``seq(a, x)`` used twice is `x` computed once (its variable read after it is deleted)."""
    from test_grad_primitives import decompositions

    rng = np.random.default_rng(0)
    m, b = rng.standard_normal((3, 3)), rng.standard_normal((3, 2))
    loss = contracted(decompositions)
    ct = rng.standard_normal((3, 2))
    got = grad(loss)((m, b), ct)
    close(got, grad(loss, backend="debug")((m, b), ct))


# Every program of the NumPy table ---------------------------------------------------------------


def contracted(fn: Any) -> Any:
    """``(args, ct) -> <fn(*args), ct>``."""

    def loss(args, ct):
        return vdot(fn(*args), ct)

    return loss


TABLE = [pytest.param(c, id=f"{c.name}-{i}") for i, c in enumerate(CASES)]


@pytest.mark.parametrize("case", TABLE)
def test_numpy_table_values(reuse_all: None, case: Any) -> None:
    """The table's programs with the pass on every array."""
    for seed, spec in enumerate(case.args):
        args = make_args(spec, seed)
        with np.errstate(all="ignore"):
            run_three(case.fn, args)


#: The gradients of the whole table on the debug backend take minutes: marked slow.
@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in TABLE if c.values[0].order > 0])
def test_numpy_table_gradients(reuse_all: None, case: Any) -> None:
    """The gradients of the table's programs with the pass on every array."""
    for seed, spec in enumerate(case.args):
        args = make_args(spec, seed)
        out = case.fn(*args)
        if not _float_output(out):
            continue
        ct = random_like(out, np.random.default_rng(seed))
        loss = contracted(case.fn)
        with np.errstate(all="ignore"):
            got = grad(loss)(args, ct)
            identical(got, no_reuse(lambda: grad(loss)(args, ct)))  # noqa: B023
            f32 = any(np.result_type(x) == np.float32 for x in leaves(got))
            debug = grad(loss, backend="debug")(args, ct)
        for x, y in zip(leaves(got), leaves(debug), strict=True):
            tol = 1e-4 if f32 else 1e-9
            np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def test_benchmark_programs(reuse_all: None) -> None:
    """The gradients of the suite's array workloads, at small sizes."""
    from benchmarks import gp_nll, mlp_step, rnn

    for module, fn, wrt in [
        (gp_nll, gp_nll.gp_nll, ("log_ls", "log_noise")),
        (rnn, rnn.rnn_loss, (1, 2, 3)),
    ]:
        args = module.problem(True).inputs[0]
        got = grad(fn, *wrt)(*args)
        identical(got, no_reuse(lambda: grad(fn, *wrt)(*args)))  # noqa: B023
        close(got, grad(fn, *wrt, backend="debug")(*args))
    args = mlp_step.problem(True).inputs[0]
    got = myia(mlp_step.mlp_step)(*args)
    identical(got, no_reuse(lambda: myia(mlp_step.mlp_step)(*args)))
    for x, y in zip(leaves(got), leaves(myia(mlp_step.mlp_step, backend="debug")(*args))):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
    assert math.isfinite(float(got[0]))

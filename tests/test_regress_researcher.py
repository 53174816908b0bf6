"""Programs written as a researcher writes them, compared with NumPy on every backend.

Found by differential testing of ordinary code against plain Python / NumPy (values) and
finite differences (gradients, `myia.testing.check_grad`): constant boolean masks, modules
and functions as default arguments, and what else such testing found wrong or refused.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from helpers import assert_same

from myia import grad, myia
from myia.errors import MyiaSyntaxError, MyiaTypeError
from myia.testing import check_grad

try:
    import jax  # noqa: F401
except ImportError:  # pragma: no cover - depends on the environment
    jax = None

BACKENDS = ["numpy", "debug"] + (["jax"] if jax is not None else [])

MASK = np.array([True, False, True])
MASK4 = np.array([True, False, False, True])
MASK23 = np.array([[True, False, True], [False, False, True]])
NONE3 = np.zeros(3, dtype=bool)
ROWS = [True, False]
X3 = np.array([1.0, -2.0, 3.0])
Y23 = np.arange(6.0).reshape(2, 3) - 2.5
Z234 = np.linspace(-1.0, 1.0, 24).reshape(2, 3, 4)


# Constant boolean masks: the shape of the result is known at compile time -----------------------


def mask_vector(x):
    return x[MASK]


def mask_where(x):
    return np.where(MASK, x, 0.0)


def mask_matrix(y):
    return y[MASK23]


def mask_columns(y):
    return y[:, MASK]


def mask_with_ints_and_slices(z):
    return z[0, MASK, 1:3]


def mask_after_ellipsis(z):
    return z[..., MASK4]


def mask_twice(z):
    return z[:, MASK, :][:, :, MASK4]


def mask_all_false(x):
    return x[NONE3]


def mask_as_a_list(y):
    return y[ROWS]


MASKED = [
    (mask_vector, X3),
    (mask_where, X3),
    (mask_matrix, Y23),
    (mask_columns, Y23),
    (mask_with_ints_and_slices, Z234),
    (mask_after_ellipsis, Z234),
    (mask_twice, Z234),
    (mask_all_false, X3),
    (mask_as_a_list, Y23),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("fn", "arg"), MASKED, ids=[f.__name__ for f, _ in MASKED])
def test_constant_masks_index_as_numpy(fn, arg, backend):
    assert_same(myia(fn, backend=backend)(arg), fn(arg))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_through_constant_masks(backend):
    def loss(z):
        return np.sum(np.sin(z[0, MASK, 1:3])) * np.sum(z[..., MASK4] ** 2)

    check_grad(loss, Z234, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_mask_known_only_at_run_time_indexes_as_numpy(backend):
    # Refused before (its shape depends on the values); NumPy's now, an axis known at run
    # time only (tests/test_regress_masks.py).
    def positives(x):
        return x[x > 0]

    def middle(z, m):
        return z[0, m, 1:3]

    assert_same(myia(positives, backend=backend)(X3), positives(X3))
    assert_same(myia(middle, backend=backend)(Z234, MASK), middle(Z234, MASK))


# Defaults that are modules or functions --------------------------------------------------------


def with_np(y, np=np):
    return np.sum(np.tanh(y))


def with_math(y, m=math):
    return m.sin(y) * m.pi


def with_ufunc(y, act=np.tanh, scale=2.0):
    return act(y) * scale


def relu(x):
    return np.maximum(x, 0.0)


def with_function(y, act=relu):
    return np.sum(act(y) ** 2)


def calls_with_defaults(y):
    return np.sum(with_ufunc(y)) + with_function(y, act=np.sin) + with_np(y)


DEFAULTS = [
    (with_np, (X3,), {}),
    (with_math, (0.3,), {}),
    (with_ufunc, (X3,), {}),
    (with_ufunc, (X3,), {"scale": 3.0}),
    (with_function, (X3,), {}),
    (calls_with_defaults, (X3,), {}),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("fn", "args", "kwargs"), DEFAULTS, ids=[f"{f.__name__}-{len(k)}" for f, _, k in DEFAULTS]
)
def test_modules_and_functions_as_defaults(fn, args, kwargs, backend):
    assert_same(myia(fn, backend=backend)(*args, **kwargs), fn(*args, **kwargs))


def test_gradients_with_module_and_function_defaults():
    check_grad(with_np, X3)
    check_grad(calls_with_defaults, X3)
    np.testing.assert_allclose(grad(with_ufunc)(0.4), 2.0 / np.cosh(0.4) ** 2)


def test_another_module_passed_for_a_module_default_is_read_as_python_reads_it():
    with pytest.raises(MyiaTypeError, match="module 'math' has no attribute 'sum'"):
        myia(with_np)(X3, np=math)


# Builtins and math functions that were refused ---------------------------------------------------


def integer_division(a, b):
    return divmod(a, b), divmod(-a, b), divmod(float(a), -b)


def math_remainders(x, y):
    return math.trunc(x), math.trunc(-x), math.fmod(x, y), math.fmod(-x, y), math.hypot(x, y)


def huge_hypot(x):
    return math.hypot(x, x), np.hypot(x, -x)  # x * x overflows: not the result


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("fn", "args"),
    [(integer_division, (7, 2)), (math_remainders, (5.5, 2.0)), (huge_hypot, (1e200,))],
    ids=["divmod", "math", "hypot"],
)
def test_remainders_as_python(fn, args, backend):
    assert_same(myia(fn, backend=backend)(*args), fn(*args), promote=True)


def backwards(n, xs, t):
    return (
        [i for i in reversed(range(n))],
        [i for i in reversed(range(1, 10, 3))],
        [i for i in reversed(range(0))],
        [i for i in reversed(range(10, 0, -4))],
        list(reversed(xs)),
        tuple(reversed(t)),
    )


def layers_backwards(ws, x):
    for w in reversed(ws):
        x = np.tanh(w * x)
    rows = 0.0
    for k, row in enumerate(reversed(Y23)):
        rows = rows + np.sum(row) * (k + 1)
    return np.sum(x) + rows


@pytest.mark.parametrize("backend", BACKENDS)
def test_reversed_as_python(backend):
    args = (5, [1.0, 2.0, 3.0], (1.0, 2, 3.0))
    assert_same(myia(backwards, backend=backend)(*args), backwards(*args))
    args = ([0.5, 1.5, -0.7], X3)
    assert_same(myia(layers_backwards, backend=backend)(*args), layers_backwards(*args))
    check_grad(layers_backwards, *args, backend=backend)


def signed_remainder(x, y):
    return np.fmod(x, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fmod_keeps_the_sign_of_a_zero(backend):
    x = np.array([-0.0, 0.0, -6.0, 6.0, 5.5, -5.5])
    y = np.array([3.0, 3.0, 3.0, -3.0, 2.0, -2.0])
    got = myia(signed_remainder, backend=backend)(x, y)
    assert_same(got, np.fmod(x, y))
    assert np.array_equal(np.signbit(got), np.signbit(np.fmod(x, y)))


def take_a_list(x):
    return np.take(x, [2, 0]), np.take(Y23, [1, 0, 1], axis=1) * x[0], np.sum(np.take(x, [1, 1]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_take_of_a_literal_list(backend):
    assert_same(myia(take_a_list, backend=backend)(X3), take_a_list(X3))
    check_grad(lambda x: np.sum(take_a_list(x)[1] ** 2), X3, backend=backend)


# Refusals that say what to write ----------------------------------------------------------------


@dataclasses.dataclass
class Layer:
    w: float
    b: float = 0.5


def replaced(p):
    return dataclasses.replace(p, b=3.0)  # the replace's line


def merged(x):
    d = {"a": x}
    return {**d, "b": x}  # the merge's line


def test_dataclasses_replace_makes_a_new_instance():
    assert myia(replaced)(Layer(1.0)) == Layer(1.0, 3.0)


def test_unpacking_a_dict_into_a_dict_is_refused_at_its_line():
    with pytest.raises(MyiaSyntaxError, match=r"\{\*\*d, \.\.\.\}") as info:
        myia(merged)(1.0)
    assert "the merge's line" in str(info.value)


# `in` on a dict: its keys are constants ------------------------------------------------------


def optional_terms(d, key):
    out = 0.0
    if "a" in d:
        out = out + np.sum(d["a"])
    if "z" not in d:
        out = out + 1.0
    return out, key in d, 1 in d


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_a_dict_tests_its_keys(backend):
    d = {"a": X3, "b": 2.0}
    for key in ("b", "q"):
        assert_same(myia(optional_terms, backend=backend)(d, key), optional_terms(d, key))
    check_grad(lambda a: optional_terms({"a": a}, "a")[0], X3, backend=backend)


# Python booleans in arithmetic are ints ---------------------------------------------------------


def bool_arithmetic(a, b):
    return a + b, a * b, a - b, -a, +a, abs(b), a // True, a**b, max(a, b)


def count_flags(x, y):
    n = (x > 0.0) + (y > 0.0)  # Python's bools: an int
    return n, n * x


def bools_accumulated(a, b):
    s = a
    s += b
    s *= 3
    return s, -b * 2, abs(a) + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_bools_add_as_ints(backend):
    # True + True is 2 (the JAX backend gave True: XLA adds booleans as a logical or).
    for a in (True, False):
        for b in (True, False):
            assert_same(myia(bool_arithmetic, backend=backend)(a, b), bool_arithmetic(a, b))
    assert_same(myia(count_flags, backend=backend)(1.0, 2.0), (2, 2.0))
    # Traced by JAX as one computation: the bools are cast to ints before XLA adds them.
    assert_same(myia(bools_accumulated, backend=backend)(True, True), (6, -2, 2))
    # NumPy's booleans stay booleans.
    nb = np.True_
    assert_same(myia(lambda a, b: (a + b, a * b), backend=backend)(nb, nb), (nb, nb))


# The gradient of a 0-d array broadcast against an array ------------------------------------------


def scaled_by_0d(x, z):
    return np.sum(np.sin(x * z)) * z + np.sum(x + z)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_a_0d_array_broadcast(backend):
    # The JAX backend returned the sensitivity of x * z unsummed, of x's shape.
    x, z = Y23[:1], np.array(0.7)
    g = grad(scaled_by_0d, "z", backend=backend)(x, z)
    assert np.shape(g) == () and np.isclose(g, grad(scaled_by_0d, "z")(x, np.float64(0.7)))
    check_grad(scaled_by_0d, x, z, backend=backend, order=2)

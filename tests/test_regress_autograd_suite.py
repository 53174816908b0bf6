"""Programs of HIPS/autograd's test suite, written as a Myia user would, where Myia answered
otherwise than NumPy (values) or finite differences (gradients)."""

import operator

import numpy as np
import pytest

from myia import grad, jvp, myia
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]


# x ** 0.0 is the constant 1: its derivatives are 0, also at x = 0 (test_scalar_ops.py) ---------


@pytest.mark.parametrize("backend", BACKENDS)
def test_power_with_a_zero_float_exponent_has_zero_derivatives(backend):
    def f(x):
        return np.power(x, 0.0)

    def g(x, y):
        return np.sum(x**y)

    assert grad(f, backend=backend)(0.0) == 0.0
    assert grad(grad(f), backend=backend)(0.0) == 0.0
    dx, dy = grad(g, 0, 1, backend=backend)(np.array([0.0, 2.0]), np.array([0.0, 2.0]))
    np.testing.assert_array_equal(dx, [0.0, 4.0])
    assert myia(lambda x: jvp(f, (x,), (1.0,)), backend=backend)(0.0)[1] == 0.0
    check_grad(g, np.array([0.5, 2.0]), np.array([0.0, 1.5]), backend=backend)


# Statistics of a list or tuple of numbers, as NumPy's (test_numpy.py) --------------------------

SEQUENCE_STATS = [
    lambda x: np.std([x, x + 2.0]),
    lambda x: np.var((x, x + 2.0)),
    lambda x: np.median([x, 3.0 * x, x + 2.0]),
    lambda x: np.ptp((x, x * x + 2.0)),
    lambda x: np.average([x, 2.0 * x]),
    lambda x: np.sum(np.cumsum([x, x + 2.0]) * np.cumprod((x, x + 2.0))),
    lambda x: np.quantile([x, x * x, 0.0], 0.25),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(SEQUENCE_STATS)))
def test_statistics_of_a_sequence_of_numbers(k, backend):
    f = SEQUENCE_STATS[k]
    assert myia(f, backend=backend)(0.7) == pytest.approx(f(0.7), rel=1e-12)
    check_grad(f, 0.7, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_std_of_a_list_of_a_symmetric_pair_has_zero_gradient(backend):
    assert grad(lambda x: np.std([x, x + 2]), backend=backend)(0.0) == 0.0
    assert grad(lambda x: np.var((x, x + 2)), backend=backend)(0.0) == 0.0


# The standard deviation of one value is the constant 0: its gradient is 0, not NaN
# (test_systematic.py::test_std) ---------------------------------------------------------------

ONE_VALUE_STD = [
    (lambda x: np.std(x), 3.5),
    (lambda x: np.sum(np.std(x, axis=0) * np.array([1.0, -2.0, 0.5])), np.ones((1, 3))),
    (lambda x: np.sum(np.std(x, axis=1, keepdims=True)), np.ones((2, 1))),
    (lambda x: np.sum(x.std(axis=0)), np.arange(3.0).reshape(1, 3)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(ONE_VALUE_STD)))
def test_std_of_one_value_has_zero_gradient(k, backend):
    f, x = ONE_VALUE_STD[k]
    assert myia(f, backend=backend)(x) == f(x) == 0.0
    g = grad(f, backend=backend)(x)
    np.testing.assert_array_equal(g, np.zeros_like(x))
    check_grad(f, x, backend=backend)


# Flips, quarter turns and appends, NumPy's (test_numpy.py) -------------------------------------

M = np.arange(12.0).reshape(3, 4)
T = np.arange(24.0).reshape(2, 3, 4)
SHAPES = [
    (np.flipud, (M,)),
    (np.flipud, (np.arange(3.0),)),
    (np.fliplr, (T,)),
    (np.rot90, (M,)),
    (lambda x: np.rot90(x, 2), (M,)),
    (lambda x: np.rot90(x, -1), (M,)),
    (lambda x: np.rot90(x, 3, (2, 0)), (T,)),
    (lambda x: np.rot90(x, 4), (M,)),
    (lambda a, b: np.append(a, b), (np.arange(3.0), 4.0)),
    (lambda a: np.append([1.0, a], [[a, 2.0]]), (3.0,)),
    (lambda a, b: np.append(a, b, axis=0), (M, M[:1])),
    (lambda a, b: np.append(a, b), ([1.0, 2.0, 3.0], 4.0)),
    (lambda a, b: np.append(a, b, axis=0), ([[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0]])),
    (lambda xs: np.array(xs), ([1.0, 2.0, 4.0],)),
    (lambda xs: np.var(xs), ([1.0, 2.0, 4.0],)),
    (np.atleast_1d, (2.0,)),
    (np.atleast_1d, (M,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(SHAPES)))
def test_flips_turns_and_appends_as_numpy(k, backend):
    f, args = SHAPES[k]
    got, expected = myia(f, backend=backend)(*args), f(*args)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_of_flips_turns_and_appends(backend):
    def f(x, y):
        turned = np.rot90(x, 3) * np.arange(12.0).reshape(4, 3)
        return np.sum(turned) + np.sum(np.fliplr(x) * x) + np.sum(np.append(np.flipud(x), y) ** 2)

    check_grad(f, M / 10.0, 0.5, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fliplr_of_a_vector_raises_numpy_error(backend):
    with pytest.raises(ValueError, match="Input must be >= 2-d"):
        myia(np.fliplr, backend=backend)(np.ones(3))


# The gradient of a Python float is a Python float, whatever array operation it went through --

THROUGH_ARRAYS = [
    (lambda y: np.sum(np.reshape(y, -1)), 1.0),
    (lambda y: np.sum(np.expand_dims(y, 0)), 1.0),
    (lambda y: np.sum(np.transpose(y)), 1.0),
    (lambda y: np.sum(np.tile(y, 3)), 3.0),
    (lambda y: np.sum(np.repeat(y, 3)), 3.0),
    (lambda y: np.sum(np.append(np.ones(2), y)), 1.0),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(THROUGH_ARRAYS)))
def test_gradient_of_a_python_float_through_array_operations_is_a_float(k, backend):
    f, expected = THROUGH_ARRAYS[k]
    g = grad(f, backend=backend)(4.0)
    assert type(g) is float
    assert g == expected


# np.inner of a scalar is the product: it had the shape of the transpose (test_systematic.py) --

INNERS = [
    (1.5, np.arange(12.0).reshape(4, 3)),
    (np.arange(12.0).reshape(4, 3), 1.5),
    (np.arange(6.0).reshape(2, 3), np.arange(24.0).reshape(2, 4, 3)),
    (np.arange(24.0).reshape(2, 4, 3), np.arange(6.0).reshape(2, 3)),
    (np.arange(3.0), np.arange(12.0).reshape(4, 3)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(INNERS)))
def test_inner_as_numpy(k, backend):
    a, b = INNERS[k]
    got = myia(np.inner, backend=backend)(a, b)
    assert np.shape(got) == np.shape(np.inner(a, b))
    np.testing.assert_allclose(got, np.inner(a, b))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_inner(backend):
    def f(a, b, c):
        return np.sum(np.inner(a, b) ** 2) + np.sum(np.inner(c, b))

    a, b = np.arange(6.0).reshape(2, 3) / 5, np.arange(24.0).reshape(2, 4, 3) / 20
    check_grad(f, a, b, 0.5, backend=backend)


# Nested literal lists for np.tensordot's axes and np.pad's widths, as in NumPy -----------------

LITERALS = [
    (lambda a, b: np.tensordot(a, b, axes=[(1,), (0,)]), (np.ones((2, 3)), np.ones((3, 4)))),
    (lambda a, b: np.tensordot(a, b, [[1, 0], [0, 1]]), (np.ones((2, 3)), np.ones((3, 2)))),
    (lambda a: np.pad(a, [(1, 1), (0, 2)]), (np.ones((2, 3)),)),
    (lambda a: np.pad(a, pad_width=[[1, 1], [0, 2]]), (np.ones((2, 3)),)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(LITERALS)))
def test_nested_literal_lists_of_axes_and_widths(k, backend):
    f, args = LITERALS[k]
    got = myia(f, backend=backend)(*args)
    assert np.shape(got) == np.shape(f(*args))
    np.testing.assert_array_equal(got, f(*args))


# The functions of the operator module are Python's operators (test_systematic.py) -------------

OPERATORS = [
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.pow,
    operator.lt,
    operator.eq,
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(OPERATORS)))
def test_operator_functions_as_python(k, backend):
    op = OPERATORS[k]
    x = np.arange(6.0).reshape(2, 3) + 1
    np.testing.assert_array_equal(myia(lambda a, b: op(a, b), backend=backend)(1.5, x), op(1.5, x))
    assert myia(lambda a, b: op(a, b), backend=backend)(7, 3) == op(7, 3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_operator_functions_passed_and_differentiated(backend):
    def f(a, c):
        apply = lambda fn: fn(a, c)  # noqa: E731
        return np.sum(apply(operator.mul) + operator.pow(c, 2.0) - operator.truediv(a, c))

    assert myia(lambda a: operator.add((a,), (2.0,)), backend=backend)(1.5) == (1.5, 2.0)
    check_grad(f, 1.5, np.arange(6.0).reshape(2, 3) + 1, backend=backend)


# np.hstack, np.vstack and np.column_stack of an array stack its rows, as NumPy ----------------

STACKED = [np.arange(2.0), np.arange(6.0).reshape(2, 3), np.arange(24.0).reshape(2, 3, 4)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [np.hstack, np.vstack, np.column_stack])
def test_stacking_an_array_stacks_its_rows(fn, backend):
    for x in STACKED:
        got = myia(fn, backend=backend)(x)
        assert np.shape(got) == np.shape(fn(x))
        np.testing.assert_array_equal(got, fn(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_stacking_an_array(backend):
    def f(x):
        return (
            np.sum(np.hstack(x) ** 2) + np.sum(np.vstack(x) * x) + np.sum(np.column_stack(x) ** 3)
        )

    check_grad(f, np.arange(6.0).reshape(2, 3) / 4, backend=backend)


# np.rollaxis, np.atleast_3d, np.select, NumPy's (test_systematic.py) --------------------------

C = np.arange(12.0).reshape(3, 4)
MORE = [
    (lambda a: np.rollaxis(a, 2), (T,)),
    (lambda a: np.rollaxis(a, 0, 3), (T,)),
    (lambda a: np.rollaxis(a, -1, -3), (T,)),
    (lambda a: np.rollaxis(a, 1, 2), (T,)),
    (np.atleast_3d, (2.0,)),
    (np.atleast_3d, (np.arange(3.0),)),
    (np.atleast_3d, (C,)),
    (lambda a: np.select([a > 5, a < 2], [a, -a], default=1.1), (C,)),
    (lambda a: np.select((a > 5, a < 2, a > 0), (a, -a, a * 2)), (C,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(MORE)))
def test_rollaxis_atleast_3d_select_as_numpy(k, backend):
    f, args = MORE[k]
    got = myia(f, backend=backend)(*args)
    assert np.shape(got) == np.shape(f(*args))
    np.testing.assert_array_equal(got, f(*args))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_of_rollaxis_atleast_3d_select(backend):
    def f(a):
        chosen = np.select([a > 0.5, a < 0.2], [a**2, -a], default=1.1)
        return np.sum(chosen) + np.sum(np.rollaxis(a, 1)[0] ** 2) + np.atleast_3d(a)[1, 2, 0]

    check_grad(f, C / 12 + 0.01, backend=backend)
    with pytest.raises(ValueError, match="same length"):
        myia(lambda a: np.select([a > 5], [a, -a]), backend=backend)(C)


# np.linalg.norm of a list of numbers, NumPy's (test_linalg.py) ---------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_norm_of_a_list(backend):
    assert grad(lambda x: np.linalg.norm([x, x + 2]), backend=backend)(0.0) == 1.0
    assert grad(lambda x: np.linalg.norm((x, x + 2)), backend=backend)(0.0) == 1.0
    assert myia(lambda xs: np.linalg.norm(xs), backend=backend)([3.0, 4.0]) == 5.0
    check_grad(lambda a: np.linalg.norm([a, a * a], ord=1), 0.7, backend=backend)


# slice(...) objects, Python's (test_list.py) ----------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_slice_objects(backend):
    def first_but_last(x):
        s = slice(None, -1, None)
        return x[s][0]

    def g(x, n):
        return np.sum(x[slice(1, n)] ** 2) + np.sum(x[slice(2)]) + x[slice(0, 4, 2)][1]

    assert grad(first_but_last, backend=backend)([1.0, 2.0, 3.0]) == [1.0, 0.0, 0.0]
    x = np.arange(5.0)
    assert myia(g, backend=backend)(x, 3) == g(x, 3)
    np.testing.assert_array_equal(grad(g, backend=backend)(x, 3), [1.0, 3.0, 5.0, 0.0, 0.0])
    assert myia(lambda t: t[slice(1, None)], backend=backend)((1.0, 2.0, 3.0)) == (2.0, 3.0)
    assert myia(lambda t: isinstance(t, slice), backend=backend)(1.0) is False


@pytest.mark.parametrize("backend", BACKENDS)
def test_select_of_list_arguments(backend):
    rng = np.random.default_rng(0)
    conditions = [rng.standard_normal((3, 4)) > 0 for _ in range(3)]
    choices = [rng.standard_normal((3, 4)) for _ in range(3)]

    def f(xs, cs):
        return np.select(cs, xs, default=1.1)

    got = myia(f, backend=backend)(choices, conditions)
    np.testing.assert_array_equal(got, f(choices, conditions))
    check_grad(lambda xs, cs: np.sum(f(xs, cs) ** 2), choices, conditions, wrt=0, backend=backend)

"""Python's answers where Myia gave NumPy's or refused: ``vmap`` of ``math`` functions, dict
views, ranges, ``tuple()``, ``np.var`` of integers, NumPy's unsigned scalars with Python ints.
"""

import math

import numpy as np
import pytest

from myia import grad, myia, vmap
from myia.errors import MyiaTypeError
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]


def _python(fn, *args):
    """``fn(*args)`` in Python: its result, or the type and message of its error."""
    try:
        return fn(*args)
    except Exception as e:
        return type(e), str(e)


def _myia(fn, *args, backend):
    try:
        return myia(fn, backend=backend)(*args)
    except Exception as e:
        return type(e), str(e)


# vmap of Python's math functions: Python's errors, per example --------------------------------

X = np.array([1.0, 0.0, -1.0, 2000.0])

MATH = [
    lambda x: math.log(x),
    lambda x: math.sqrt(x),
    lambda x: math.acos(x),
    lambda x: math.exp(x),
    lambda x: math.cosh(x),
    lambda x: math.atanh(x),
    lambda x: math.lgamma(x),
    lambda x: math.log(x, 2.0),
    lambda x: math.sin(x * math.inf),
    lambda x: 1.0 / float(x),
    lambda x: 1.0 // float(x),
    lambda x: 1.0 % float(x),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(MATH)))
def test_vmap_math_raises_as_python(k, backend):
    fn = MATH[k]
    want = _python(lambda xs: [fn(x) for x in xs], X)
    assert isinstance(want, tuple) and issubclass(want[0], ArithmeticError | ValueError)
    assert _myia(lambda xs: vmap(fn)(xs), X, backend=backend) == want


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_math_in_domain(backend):
    xs = np.array([0.5, 1.0, 3.0])
    f = myia(lambda xs: vmap(lambda x: math.log(x) + math.sqrt(x) / float(x))(xs), backend=backend)
    np.testing.assert_allclose(f(xs), [math.log(x) + math.sqrt(x) / x for x in xs])
    if backend == "jax":  # (one test of the batch: still one XLA computation)
        assert f.specialization(xs).executable.jitted
    # NaN operands are no error (Python's math.log(nan) is nan)
    assert np.isnan(f(np.array([np.nan, 1.0]))[0])


def test_vmap_math_top_level_and_guarded():
    with pytest.raises(ValueError, match="math domain error"):
        vmap(lambda x: math.log(x))(np.arange(3.0))
    # A branch or loop that keeps the examples out of the domain is no error.
    guarded = vmap(lambda x: math.log(x) if x > 0 else 0.0)
    np.testing.assert_allclose(guarded(np.array([-1.0, 0.0, math.e])), [0.0, 0.0, 1.0])

    def shrink(x):
        while x > 1.0:
            x = math.sqrt(x) - 1.0
        return x

    xs = np.array([0.5, 9.0, 100.0, -4.0])
    np.testing.assert_allclose(vmap(shrink)(xs), [shrink(x) for x in xs])


def test_vmap_of_vmap_math():
    f = myia(lambda m: vmap(vmap(lambda x: math.sqrt(x)))(m))
    m = np.array([[1.0, 4.0], [9.0, 16.0]])
    np.testing.assert_allclose(f(m), np.sqrt(m))
    with pytest.raises(ValueError, match="math domain error"):
        f(-m)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_vmap_math(backend):
    def loss(xs):
        return np.sum(vmap(lambda x: math.log(x) * math.sqrt(x))(xs))

    check_grad(loss, np.array([0.5, 1.5, 2.0]), backend=backend)
    g = myia(lambda xs: grad(loss)(xs), backend=backend)
    with pytest.raises(ValueError, match="math domain error"):
        g(np.array([0.5, -1.0]))


def test_vmap_math_loop_test_on_done_examples():
    def halve_logs(x):
        n = 0
        while math.log(x) > 0.0:
            x = x / 3.0
            n += 1
        return x

    xs = np.array([0.5, 10.0, 100.0])
    np.testing.assert_allclose(vmap(halve_logs)(xs), [halve_logs(x) for x in xs])
    with pytest.raises(ValueError, match="math domain error"):
        vmap(halve_logs)(np.array([2.0, -1.0]))


# tuple(range(...)), range indexing and slicing -------------------------------------------------


def _same(fn, *args, backends=BACKENDS):
    """Myia's result of ``fn(*args)`` is Python's, of the same type (or the same error)."""
    want = _python(fn, *args)
    for backend in backends:
        got = _myia(fn, *args, backend=backend)
        assert type(got) is type(want), (backend, got, want)
        assert np.array_equal(got, want) if type(want) is np.ndarray else got == want, backend


RANGES = [
    (lambda: tuple(range(3)), ()),
    (lambda: tuple(range(2, 11, 3)), ()),
    (lambda: tuple(range(5, 0, -2)), ()),
    (lambda x: np.sum(x, axis=tuple(range(1, x.ndim))), (np.ones((2, 3, 4)),)),
    (lambda x: np.transpose(x, tuple(range(x.ndim))[::-1]).shape, (np.ones((2, 3, 4)),)),
    (lambda n: range(n)[1:], (5,)),
    (lambda n: range(n)[::2], (5,)),
    (lambda n: range(n)[::-1], (5,)),
    (lambda n: range(1, n, 3)[-2:0:-1], (20,)),
    (lambda n: range(n)[-100:100], (4,)),
    (lambda a, b, i: range(a, b)[i], (2, 7, 1)),
    (lambda a, b, i: range(a, b)[i], (2, 7, -1)),
    (lambda a, b, i: range(a, b)[i], (2, 7, 5)),
    (lambda a, b, i: range(a, b)[i], (2, 7, -6)),
    (lambda n: list(range(n)[2:]), (6,)),
    (lambda n: len(range(n)[::3]), (10,)),
    (lambda n: sum(range(n)[1::2]), (10,)),
    (lambda n, k: range(n)[::k], (10, 0)),
    (lambda n: range(n)[2.0], (10,)),
]


@pytest.mark.parametrize("k", range(len(RANGES)))
def test_ranges_as_python(k):
    fn, args = RANGES[k]
    _same(fn, *args)


def test_tuple_of_a_range_of_run_time_bounds_is_a_list():
    # (Its length is known at run time only: Myia's tuples have a length known at compile time.)
    assert myia(lambda n: tuple(range(n)))(3) == [0, 1, 2]


# np.var and np.std of an integer dtype ---------------------------------------------------------

M = np.array([[1, 5, 2], [7, -3, 4]])
VARS = [
    (lambda x: np.var(x, dtype=np.int64), (np.arange(5),)),
    (lambda x: np.std(x, dtype=np.int64), (np.arange(5),)),
    (lambda x: np.var(x, axis=0, dtype=np.int64), (M,)),
    (lambda x: np.var(x, dtype=np.int64, ddof=1), (M,)),
    (lambda x: x.var(dtype=np.int64), (M,)),
    (lambda x: np.var(x, dtype=np.int16), (M.astype(np.int8),)),
    (lambda x: np.var(x, dtype=np.int64), (np.array([0.5, 2.7, -1.2]),)),
    (lambda x: np.var(x, dtype=np.float32), (M,)),
    (lambda x: np.std(x, axis=1, dtype=np.int32, keepdims=True), (M,)),
]


@pytest.mark.parametrize("k", range(len(VARS)))
def test_var_std_of_a_dtype_as_numpy(k):
    fn, args = VARS[k]
    want = _python(fn, *args)
    for backend in BACKENDS:
        got = _myia(fn, *args, backend=backend)
        if isinstance(want, tuple):  # NumPy's TypeError (a subclass of it)
            assert issubclass(want[0], got[0]) and got[1] == want[1]
        else:
            assert got.dtype == want.dtype and np.array_equal(got, want), backend


# NumPy's integers with Python ints: compared exactly ------------------------------------------

U = np.uint8(250)
MIXED = [
    (lambda a: min(a, -3), (U,)),
    (lambda a: min(-3, a), (U,)),
    (lambda a: max(a, 300), (U,)),
    (lambda a: max(a, -3), (U,)),
    (lambda a: min(a, -200), (np.int8(-100),)),
    (lambda a: max(a, 1000), (np.int8(-100),)),
    (lambda a, k: min(a, k), (U, -3)),
    (lambda a: max(a, -3, 5), (U,)),
    (lambda a: a > -3, (U,)),
    (lambda a: a < -3, (U,)),
    (lambda a: -3 <= a, (U,)),
    (lambda a: a != 300, (U,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_uint64_with_a_negative_python_int_is_refused(backend):
    # No dtype holds both (it was 2 ** 64 - 1, silently).
    big = np.uint64(2**63 + 5)
    f = myia(lambda a, k: (max(a, k), min(k, a)), backend=backend)
    assert f(big, 7) == (big, 7) and f(np.uint64(5), 7) == (7, 5)
    with pytest.raises(OverflowError, match="Python integer -1 out of bounds for uint64"):
        myia(lambda a: min(a, -1), backend=backend)(np.uint64(5))


@pytest.mark.parametrize("k", range(len(MIXED)))
def test_numpy_integers_with_python_ints(k):
    fn, args = MIXED[k]
    want = _python(fn, *args)
    for backend in BACKENDS:
        got = _myia(fn, *args, backend=backend)
        assert got == want, (backend, got, want)


# Dict views: iterated, measured, searched, not subscripted ------------------------------------

D = {"a": 1.0, "b": 2.0, "c": 4.0}


def _bound_keys(d):
    ks = d.keys()
    return ks[0]


def _second(view):
    return view[1]


def _passed_values(d):
    return _second(d.values())


def _returned_items(d):
    return d.items()


def _items_of_returned(d):
    items = _returned_items(d)
    return items[0]


@pytest.mark.parametrize(
    "fn,said",
    [
        (_bound_keys, "'dict_keys' object is not subscriptable"),
        (_passed_values, "'dict_values' object is not subscriptable"),
        (_items_of_returned, "'dict_items' object is not subscriptable"),
    ],
)
def test_dict_views_are_not_subscriptable_wherever_they_flow(fn, said):
    with pytest.raises(TypeError, match=said):
        fn(D)
    with pytest.raises(MyiaTypeError, match=said):
        myia(fn)(D)


def _views_used(d):
    ks, vs = d.keys(), d.values()
    s = 0.0
    for v in vs:
        s += v
    listed = [(i, k, v) for i, (k, v) in enumerate(d.items())]
    a, b, c = d.values()
    first, *others = d.keys()
    return (
        (len(ks), "a" in ks, "z" in ks, 2.0 in vs, bool(ks), list(ks), tuple(vs), s),
        ([k for k in ks], sum(vs), max(vs), any(v > 3 for v in vs), all(v > 0 for v in vs)),
        (listed, list(zip(ks, vs)), (*ks,), [*vs], tuple(reversed(ks))),
        {k: v * 2 for k, v in d.items()},
        (a + b * c, first, others),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_dict_views_iterate_as_python(backend):
    assert myia(_views_used, backend=backend)(D) == _views_used(D)
    # a view returned comes back as the tuple of its elements
    assert myia(lambda d: d.items(), backend=backend)(D) == tuple(D.items())


def test_grad_through_dict_views():
    check_grad(lambda d: sum(v * v for v in d.values()) + len(d.keys()), D)


# Found writing everyday programs --------------------------------------------------------------


def test_log2_is_exact_at_powers_of_two():
    # The JAX backend computed 2.9999999999999996 (and int() of it 2).
    _same(lambda x: (int(math.log2(x)), math.log2(x) == 3.0, math.log2(0.25)), 8.0)
    a = np.array([1.0, 8.0, 1024.0, 0.125, 0.0, -1.0])
    for backend in BACKENDS:
        f = myia(lambda a: np.log2(a), backend=backend)
        np.testing.assert_array_equal(f(a), np.log2(a))
        np.testing.assert_array_equal(f(a.astype(np.float32)), np.log2(a.astype(np.float32)))
        np.testing.assert_allclose(f(np.array([3.0, 0.3])), np.log2([3.0, 0.3]), rtol=1e-15)


def test_int_to_a_negative_constant_power_is_a_float():
    # It was folded at compile time as an int: 0.
    _same(lambda: (2**-2, 2**-1 + 1, 10**2))
    _same(lambda a: a**-2 * 4, 2)


def _index_past_a_loop_that_may_not_run(x, h, k):
    for t in range(k):
        h = h * 0.9 + x[t + 3] * 0.1
    return h


@pytest.mark.parametrize("backend", ["debug", "numpy", "jax"])
def test_a_range_of_bounds_known_in_part_keeps_none(backend):
    # ``range(k)``'s start 0 known made the first iteration's index a constant, out of
    # bounds, refused at compile time where the loop does not run (k == 0: Python returns).
    x = np.ones(2)
    f = myia(_index_past_a_loop_that_may_not_run, backend=backend)
    assert f(x, 1.7, 0) == 1.7
    assert grad(_index_past_a_loop_that_may_not_run, "h", backend=backend)(x, 1.7, 0) == 1.0
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        f(x, 1.7, 2)

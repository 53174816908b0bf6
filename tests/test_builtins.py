"""Builtins, `math` and NumPy functions, ``print``, ``assert`` and ``raise`` inside `@myia`
code, compared with plain Python.

PYTEST_DONT_REWRITE: the functions below use ``assert`` as programs do, with Python's own
messages, which pytest's assertion rewriting would change.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from helpers import examples, floats, interpret, line_of, numbers, small_ints
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from myia import MyiaTypeError, grad, myia
from myia.testing import check_grad

# Builtins -------------------------------------------------------------------------------------


def builtins_on_numbers(x, y):
    return abs(x), min(x, y), max(x, y), float(x), int(x), bool(x), bool(y), abs(-y)


def builtins_on_sequences(xs):
    return len(xs), sum(xs), max(xs), min(xs), sum(xs, 10), len(range(len(xs)))


def builtins_on_tuples(t):
    return len(t), sum(t), max(t), min(t), len(()), sum(())


def max_min_n(a, b, c):
    return max(a, b, c), min(a, b, c), max((a, b)), min([a, c])


def conversions(x):
    return int(x) + 1, float(int(x)), bool(int(x)), int(True), float(False)


@examples
@given(numbers, numbers)
def test_builtins_on_numbers(check, x, y):
    check(builtins_on_numbers, x, y)
    check(conversions, x)


def rounded(x):
    return round(x), round(-x), round(x / 4)


@pytest.mark.parametrize("x", [2.5, 3.5, -0.5, 1.2, np.float32(0.5), 7, True])
def test_round_halves_to_even_and_gives_an_int(check, x):
    check(rounded, x)


#: Edge values of the float functions here: zeros of both signs, infinities, nan, the largest
#: and smallest floats, values at and beside the ends of the domains.
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.0 + 2**-52, 1.0 - 2**-53, 3.0, -7.25]
EDGES += [math.inf, -math.inf, math.nan, 1.7976931348623157e308, 5e-324, -5e-324, 1e-300]
BACKENDS = ["numpy", "debug", "jax", "native"]


def _backend(backend):
    if backend in ("jax", "native"):
        pytest.importorskip({"jax": "jax", "native": "numba"}[backend])
    return backend


def _outcome(fn, *args):
    """What `fn` gives, or the type and message of the error it raises."""
    try:
        with np.errstate(all="ignore"):
            return fn(*args)
    except (ValueError, OverflowError, TypeError, ZeroDivisionError) as exc:
        return f"{type(exc).__name__}: {exc}"


def _same(got, expected, exact, where):
    """The same kinds, the same values: to the bit where `exact` (sign bits of zeros and nans
    too), else to an ulp and with the sign bits of zeros (XLA's functions are not libm's)."""
    if isinstance(expected, tuple):
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            _same(g, e, exact, (where, i))
        return
    assert type(got) is type(expected), (where, got, expected)
    if isinstance(expected, str) or exact:
        assert repr(got) == repr(expected), where
        return
    assert np.shape(got) == np.shape(expected) and np.result_type(got) == np.result_type(expected)
    signs = np.where(np.isnan(expected), False, np.signbit(got))  # (not of nans: XLA's)
    np.testing.assert_array_equal(signs, np.signbit(expected) & ~np.isnan(expected), str(where))
    ulp = np.finfo(np.result_type(expected)).eps
    np.testing.assert_allclose(got, expected, rtol=2 * ulp, atol=0, err_msg=str(where))


def round_digits(x, n):
    return round(x, n)


def round_array(x):
    return round(x)


def round_float_digits(x):
    return round(x, 1.5)  # MARK float digits


def test_round_of_an_array_or_to_float_digits_is_a_type_error(check):
    check(round_array, np.array([0.5, 1.5]))  # as Python's
    check(round_digits, np.array([0.5, 1.5]), 1)
    with pytest.raises(MyiaTypeError, match="cannot be interpreted as an integer") as info:
        myia(round_float_digits)(1.2345)
    assert info.value.location.line == line_of(round_float_digits, "MARK float digits")
    assert myia(lambda x: round(x, None))(2.5) == 2


#: Floats whose rounding Python decides on their exact decimal values: 2.675 is 2.67499999...
#: (``x * 10 ** n`` rounded says 2.68), 0.125 is exactly a half (to even: 0.12), 1.5e300 to
#: -299 digits is 2e300; the largest float to -308 digits overflows (OverflowError).
ROUNDED = [2.675, 0.125, 0.375, 1.005, 8.345, 2.5, -2.5, 1.5, 0.5, -0.5, 25.0, 35.0, 1e16 + 2]
ROUNDED += [1.7976931348623157e308, 1.5e300, 5e-324, 1e-300, 123456.789e-20, 0.0, -0.0]
ROUNDED += [math.inf, -math.inf, math.nan, -0.004]
DIGITS = [-400, -309, -308, -299, -22, -5, -1, 0, 1, 2, 3, 10, 17, 22, 23, 30, 300, 323, 324]


def _halfway_cases(rng, count):
    """Decimals ending in 5, one digit past `n`: Python's and ``x * 10 ** n``'s differ."""
    out = []
    for _ in range(count):
        n = int(rng.integers(0, 6))
        k = int(rng.integers(-(10**6), 10**6))
        out.append((float(f"{k}5e-{n + 1}"), n))
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_round_to_digits_is_pythons_exactly(backend):
    """``round(x, n)`` of a Python float rounds its exact decimal value, as Python's dtoa
    does (it was refused); of an int, an int (halves to even); of a NumPy scalar, NumPy's
    ``np.round`` (``round(np.float64(2.675), 2)`` is 2.68)."""
    backend = _backend(backend)
    f = myia(round_digits, backend=backend)
    cases = [(x, n) for x in ROUNDED for n in DIGITS]
    cases += _halfway_cases(np.random.default_rng(0), 300)
    cases += [
        (x, n) for x in (25, 35, -25, 149, 150, 7, True, -(10**15) - 5) for n in (-3, -1, 0, 2)
    ]
    cases += [(np.float64(2.675), 2), (np.float32(2.675), 2), (np.int64(25), -1), (2.675, True)]
    cases += [(2.675, np.int64(2)), (0.125, np.int32(2)), (25, np.int8(-1))]
    for x, n in cases:
        got, expected = _outcome(f, x, n), _outcome(round_digits, x, n)
        assert type(got) is type(expected) and repr(got) == repr(expected), (x, n, got)


def np_round_of(x):
    return np.round(x, 2)


def np_rounds(a, decimals):
    return np.round(a, decimals), np.around(a, decimals), a.round(decimals)


@pytest.mark.parametrize("backend", BACKENDS)
def test_np_round_is_numpys_algorithm(backend):
    """``np.round(a, d)``: NumPy's ``a * 10 ** d`` rounded to even and divided back (a negative
    `d` divides first: ``np.round(a, -2)`` was ``rint(a * 0.01) / 0.01``), past 1e22 its
    powers of ten rounded at each step."""
    backend = _backend(backend)
    f = myia(np_rounds, backend=backend)
    rng = np.random.default_rng(1)
    halves = np.array([x for x, _ in _halfway_cases(rng, 40)])
    for a in (
        np.array(ROUNDED),
        halves,
        halves.astype(np.float32),
        rng.standard_normal(20) * 10.0 ** rng.integers(-30, 30, 20),
        np.array([-250, 250, 350, 149, 7], np.int64),
    ):
        for d in (-400, -25, -3, -2, -1, 0, 1, 2, 3, 8, 9, 17, 23, 30, 308, 400):
            if a.dtype == np.int64 and d < -18:
                continue  # (NumPy's int64 cast of a float out of range)
            got, expected = _outcome(f, a, d), _outcome(np_rounds, a, d)
            for g, e in zip(got, expected, strict=True):
                np.testing.assert_array_equal(g, e, err_msg=f"{a.dtype} {d}")
                assert g.dtype == e.dtype and np.array_equal(np.signbit(g), np.signbit(e))
    x = 2.675  # a Python float: a NumPy float64, NumPy's algorithm (2.68)
    assert repr(myia(np_round_of, backend=backend)(x)) == repr(np_round_of(x))


@examples
@given(st.lists(floats, min_size=1, max_size=6))
def test_builtins_on_sequences(check, xs):
    check(builtins_on_sequences, xs)
    check(builtins_on_tuples, tuple(xs))


@examples
@given(small_ints, small_ints, small_ints)
def test_max_min_n(check, a, b, c):
    check(max_min_n, a, b, c)


def max_of(xs):
    return max(xs)


def min_of(xs):
    return min(xs)


@pytest.mark.parametrize("fn", [max_of, min_of])
@pytest.mark.parametrize("xs", [[], [2.0], [3.0, -1.0]])
def test_max_min_of_list(check, fn, xs):
    check(fn, xs)  # an empty list: ValueError("max() arg is an empty sequence")


def sum_of_pairs(xs):
    return sum(xs)


@pytest.mark.parametrize(
    "run", [interpret, lambda f, *a: myia(f)(*a), lambda f, *a: myia(f, backend="debug")(*a)]
)
def test_error_inside_library_code_points_at_the_user(run):
    # sum() is written in Myia (operations/lib.py): 0 + (1.0,) fails inside it, but the
    # traceback shows the user's call, not the library's frames.
    with pytest.raises(MyiaTypeError) as info:
        run(sum_of_pairs, [(1.0,), (2.0,)])
    err = info.value
    assert err.location.line == line_of(sum_of_pairs, "sum(xs)")
    assert "myia/" not in str(err).replace(__file__, "")


# math and NumPy -------------------------------------------------------------------------------


def math_functions(x):
    return (
        math.exp(x),
        math.sin(x),
        math.cos(x),
        math.tanh(x),
        math.atan(x),
        math.sqrt(abs(x)),
        math.log(abs(x) + 1),
        math.floor(x),
        math.ceil(x),
        math.pow(abs(x), 0.5),
        math.atan2(x, 2.0),
    )


@examples
@given(floats)
def test_math(check, x):
    check(math_functions, x)


def test_math_domain_error(check):
    def f(x):
        return math.sqrt(x)

    check(f, -1.0)  # ValueError: math domain error, as in Python


def copysigns(x, y):
    return math.copysign(x, y), np.copysign(x, y)


def math_hyperbolic(x):
    return math.asinh(x), math.acosh(x), math.atanh(x)


def math_acosh(x):
    return math.acosh(x)


def math_atanh(x):
    return math.atanh(x)


def np_hyperbolic(a):
    return np.arcsinh(a), np.arccosh(a), np.arctanh(a), np.copysign(a, -a), np.copysign(2, a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_copysign_and_inverse_hyperbolic_functions_are_pythons_and_numpys(backend):
    """``math.copysign``/``np.copysign`` (the sign bit: of -0.0 and nan too) and
    ``math.asinh/acosh/atanh``/``np.arcsinh/arccosh/arctanh`` were refused. Python raises
    "math domain error" outside the domains (``math.atanh(1.0)``); NumPy gives nan or inf."""
    backend = _backend(backend)
    exact = backend != "jax"
    # (XLA on CPU flushes subnormal results to zero: ``math.asinh(5e-324)`` is 0.0 there.)
    edges = [x for x in EDGES if exact or abs(x) != 5e-324]

    compiled = {}

    def check(fn, *args):
        if fn not in compiled:
            compiled[fn] = myia(fn, backend=backend)
        _same(_outcome(compiled[fn], *args), _outcome(fn, *args), exact, args)

    for x in edges:
        for y in edges:
            check(copysigns, x, y)
        check(copysigns, 3, -0.0)
        for fn in (math.asinh, math_acosh, math_atanh):
            check(fn, x)
    check(np_hyperbolic, np.array(edges))
    for dtype in ("float32", "int64"):  # float32 stays float32; integers give float64
        check(np_hyperbolic, np.array([-2, 0, 1, 3], dtype))
    with pytest.raises(ValueError, match="math domain error"):
        myia(math_hyperbolic, backend=backend)(0.5)  # acosh


def numpy_functions(a, b):
    c = np.tanh(a) * 2.0 + np.exp(-a)
    return c, np.sum(a), np.sum(a, axis=0), a.T, a @ b, a.shape, (a @ b).shape, np.maximum(a, 0.0)


def sum_of_rows(a):
    return sum(a), sum(a, 1.5)


def test_builtin_sum_of_an_array_sums_its_rows(check):
    # Python's sum over the rows: 0 + a[0] broadcasts. It once failed to compile with
    # "branches return incompatible types: f64 x 3 and i64".
    check(sum_of_rows, np.arange(6.0).reshape(2, 3))
    check(sum_of_rows, np.arange(24, dtype=np.int64).reshape(2, 3, 4))
    check(sum_of_rows, np.array([[True, False], [True, True]]))
    check(sum_of_rows, np.ones((0, 3)))  # no rows: the start value
    check(sum_of_rows, np.arange(4.0))  # a 1-D array sums its elements
    check(sum_of_rows, np.ones((3, 2), np.float32))


def test_grad_through_sum_of_rows():
    from myia import grad

    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(grad(lambda a: np.sum(sum(a) ** 2))(a), [[6, 10, 14]] * 2)


def numpy_in_loop(a):
    acc = np.zeros(a.shape[1])
    for row in a:
        acc = acc + np.tanh(row)
    return acc


@examples
@given(
    hnp.arrays(np.float64, (3, 4), elements=floats),
    hnp.arrays(np.float64, (4, 2), elements=floats),
)
def test_numpy(check, a, b):
    check(numpy_functions, a, b)
    check(numpy_in_loop, a)


def numpy_on_scalars(x):
    return np.exp(x) + 1.0, np.tanh(x)


@pytest.mark.parametrize("x", [0.5, np.float32(0.5), np.float64(-2.0)])
@pytest.mark.parametrize(
    "run", [interpret, lambda f, *a: myia(f)(*a), lambda f, *a: myia(f, backend="debug")(*a)]
)
def test_numpy_on_scalars(run, x):
    # NumPy functions on a Python float compute with Python floats in Myia (elementwise
    # primitives keep a float a float), where NumPy returns a numpy.float64: same value.
    got = run(numpy_on_scalars, x)
    expected = numpy_on_scalars(x)
    for g, e in zip(got, expected):
        assert math.isclose(g, e, rel_tol=1e-6)
        assert isinstance(g, type(x)) or type(x) is float


# print ----------------------------------------------------------------------------------------


def prints(x):
    print("start", x)
    y = x * 2
    print(y)
    if y > 3:
        print("big")
    else:
        print("small", y, 1)
    for i in range(2):
        print("loop", i)
    print()
    return y


def prints_in_expression(x):
    return show(x) + show(x + 1)


def show(v):
    print("show", v)
    return v


def prints_in_callees(n):
    if n == 0:
        print("done")
        return 0
    print("n =", n)
    return 1 + prints_in_callees(n - 1)


def print_returns_none(x):
    r = print(x)
    return r is None


@pytest.mark.parametrize("x", [1, 2.5])
@pytest.mark.parametrize(
    "fn", [prints, prints_in_expression, prints_in_callees, print_returns_none]
)
def test_print(check, capsys, fn, x):
    if fn is prints_in_callees:
        x = 3
    expected = None
    capsys.readouterr()
    fn(x)
    expected = capsys.readouterr().out
    check(fn, x)
    out = capsys.readouterr().out
    assert out == expected * 2  # once for Python, once for Myia, in the same order


def test_print_goes_to_current_stdout(monkeypatch):
    import io
    import sys

    buf = io.StringIO()
    monkeypatch.setattr(sys, "stdout", buf)
    myia(prints_in_expression)(4)
    assert buf.getvalue() == "show 4\nshow 5\n"


def test_print_unused_result_in_loop_body(capsys):
    def f(n):
        i = 0
        while i < n:
            print(i)
            i = i + 1
        return i

    assert myia(f)(3) == 3
    assert capsys.readouterr().out == "0\n1\n2\n"


# assert and raise -----------------------------------------------------------------------------


def asserts(x):
    assert x > 0, "x must be positive"
    assert x < 100
    return x


def raises(x):
    if x < 0:
        raise ValueError("negative")
    if x == 0:
        raise ZeroDivisionError("zero")
    if x > 100:
        raise RuntimeError
    return x


def raise_in_callee(x):
    return 1 + raises(x)


def assert_message_computed(x):
    assert x > 0, "bad value"
    return x


@pytest.mark.parametrize("x", [5, -1, 0, 200, 50.5])
def test_assert_and_raise(check, x):
    check(asserts, x)
    check(raises, x)
    check(raise_in_callee, x)


@pytest.mark.parametrize(
    "run", [interpret, lambda f, *a: myia(f)(*a), lambda f, *a: myia(f, backend="debug")(*a)]
)
def test_assert_message_and_location(run):
    with pytest.raises(AssertionError) as info:
        run(asserts, -3)
    assert info.value.args == ("x must be positive",)
    # The Myia traceback is attached as a note, pointing at the assert.
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert f"line {line_of(asserts, 'x must be positive')}" in notes
    assert "myia/" not in notes.replace(__file__, "")


@pytest.mark.parametrize(
    "run", [interpret, lambda f, *a: myia(f)(*a), lambda f, *a: myia(f, backend="debug")(*a)]
)
def test_raise_class_and_message(run):
    with pytest.raises(ValueError) as info:
        run(raise_in_callee, -1)
    assert type(info.value) is ValueError
    assert info.value.args == ("negative",)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert f"line {line_of(raises, 'negative')}" in notes
    assert f"line {line_of(raise_in_callee, 'raises(x)')}" in notes
    with pytest.raises(RuntimeError):
        run(raises, 1000)


def test_runtime_errors_are_raised_as_in_python(check):
    def div(x, y):
        return x // y

    def index(xs, i):
        return xs[i]

    check(div, 1, 0)
    check(index, [1.0, 2.0], 5)
    with pytest.raises(ZeroDivisionError) as info:
        interpret(div, 1, 0)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert f"line {line_of(div, 'x // y')}" in notes


def inner_sum(xs, k):
    total = 0.0
    for x in xs:
        if x > k:
            total = total + sum(x)  # MARK inner
    return total


def outer_loop(xs):
    s = 0.0
    i = 0
    while i < 2:
        s = s + inner_sum(xs, i)  # MARK outer
        i += 1
    return s


@pytest.mark.parametrize(
    "run", [interpret, lambda f, *a: myia(f)(*a), lambda f, *a: myia(f, backend="debug")(*a)]
)
def test_traceback_through_loops_and_calls(run):
    # One frame per user function (its loop and branch blocks collapse into it), each at the
    # line being run, outermost first; nothing from inside the package.
    with pytest.raises(MyiaTypeError) as info:
        run(outer_loop, [1.0, 2.0])
    err = info.value
    frames = [(f.function, f.location.line) for f in err.frames]
    assert frames == [
        ("outer_loop", line_of(outer_loop, "MARK outer")),
        ("inner_sum", line_of(inner_sum, "MARK inner")),
    ]
    assert "f64" in err.message
    assert "myia/" not in str(err).replace(__file__, "")


def max_of_arrays(a, b):
    return max(a, b)  # MARK max


def min_of_array_and_scalar(a):
    return min(a, 0.5)  # MARK min


@pytest.mark.parametrize("backend", ["numpy", "debug", "jax", "native"])
def test_max_min_of_arrays_is_the_truth_value_error_at_the_users_line(backend):
    # Python compares the arrays and takes the truth value of the result (a ValueError for
    # more than one element); Myia computed np.maximum elementwise, silently.
    if backend in ("jax", "native"):
        pytest.importorskip({"jax": "jax", "native": "numba"}[backend])
    a, b = np.array([1.0, 5.0]), np.array([3.0, 2.0])
    for fn, args, mark in (
        (max_of_arrays, (a, b), "MARK max"),
        (min_of_array_and_scalar, (a,), "MARK min"),
    ):
        with pytest.raises(ValueError, match="truth value of an array"):
            fn(*args)
        with pytest.raises(MyiaTypeError, match="truth value of an array with more") as info:
            myia(fn, backend=backend)(*args)
        assert [f.location.line for f in info.value.frames] == [line_of(fn, mark)]
    # One element: Python's comparison is a bool, and so is Myia's.
    one = (np.array([1.0]), np.array([3.0]))
    np.testing.assert_array_equal(myia(max_of_arrays, backend=backend)(*one), max_of_arrays(*one))


# NumPy's bitwise, shift, comparison and sign functions ------------------------------------------


def bits_and_comparisons(x, y):
    return (
        np.bitwise_and(x, y), np.bitwise_or(x, y), np.bitwise_xor(x, y), x & y, x | y, x ^ y,
        np.less(x, y), np.less_equal(x, y), np.greater(x, y), np.greater_equal(x, y),
        np.equal(x, y), np.not_equal(x, y), np.logical_xor(x, y),
    )  # fmt: skip


def shifts(x, n):
    return np.left_shift(x, n), np.right_shift(x, n), x << n, x >> n


def of_one_integer(x):
    return np.invert(x), np.bitwise_not(x), ~x, np.signbit(x), np.fabs(x), np.array_equal(x, x)


def shapes_compared(x, y):
    return np.array_equal(x, y), np.array_equiv(x, y), np.array_equiv(y, 1)


def of_floats(x, y):
    return (
        np.signbit(x), np.fabs(x), np.less(x, y), np.greater_equal(x, y), np.equal(x, y),
        np.not_equal(x, y), np.logical_xor(x, y), np.array_equal(x, y),
        np.array_equal(x, y, equal_nan=True),
    )  # fmt: skip


#: Python ints and bools, NumPy integers of several widths, arrays (0-d, empty, broadcast).
INTEGERS = [0, -1, 5, -128, 127, 255, True, False, np.int8(-3), np.uint8(250), np.int64(-(2**40))]
INTEGERS += [np.True_]
INTEGER_ARRAYS = [
    np.array([3, -4, 0], np.int8),
    np.array([250, 3, 0], np.uint8),
    np.array([[1], [-2]], np.int64),
    np.array(-5, np.int8),
    np.zeros(0, np.int16),
    np.array([True, False, True]),
]


#: Each pair of kinds compiles once per backend: every pair on NumPy's, a few on the others
#: (every pair there is slow).
BIT_CHECKS = [("numpy", True)] + [(b, False) for b in BACKENDS[1:]]
BIT_CHECKS += [pytest.param(b, True, marks=pytest.mark.slow) for b in BACKENDS[1:]]


@pytest.mark.parametrize("backend, every_pair", BIT_CHECKS)
def test_bitwise_comparison_and_sign_functions_are_numpys(backend, every_pair):
    """``np.bitwise_and/or/xor``, ``np.invert``, ``np.left_shift``/``right_shift``, the named
    comparisons, ``np.logical_xor``, ``np.signbit``, ``np.fabs``, ``np.array_equal`` and
    ``np.array_equiv`` were refused: their values, dtypes and scalar types (a NumPy scalar of
    Python numbers) and errors (a Python int out of a narrower dtype's range) are NumPy's,
    and Python's for the operators (``5 << -1`` raises, ``1 << 70`` is exact)."""
    backend = _backend(backend)
    compiled = {}

    def check(fn, *args):
        if fn not in compiled:
            compiled[fn] = myia(fn, backend=backend)
        _same(_outcome(compiled[fn], *args), _outcome(fn, *args), True, (fn.__name__, args))

    xs, ys = INTEGERS + INTEGER_ARRAYS, INTEGERS
    counts = (0, 1, 3, 8, 9, 63, 64, 70, -1, True, np.True_, np.int8(2), *INTEGER_ARRAYS[::5])
    if not every_pair:
        xs, ys = [-1, np.int8(-3), *INTEGER_ARRAYS[:2], INTEGER_ARRAYS[5]], [255, np.uint8(250)]
        counts = (9, -1, np.int8(2))
    for x in xs:
        check(of_one_integer, x)
        for y in ys:
            check(bits_and_comparisons, x, y)
            check(bits_and_comparisons, y, x)
        for n in counts:
            if np.shape(x) == (2, 1) or np.size(x) != 0 or np.ndim(n) == 0:
                check(shifts, x, n)
    for x in INTEGER_ARRAYS[:3]:
        for y in INTEGER_ARRAYS[:3]:
            check(bits_and_comparisons, x, y)
    # (XLA on CPU flushes subnormals to zero: ``-5e-324 < -0.0`` is False there.)
    edges = [x for x in EDGES if backend != "jax" or abs(x) != 5e-324]
    with np.errstate(over="ignore"):  # (the largest double as float32 and float16)
        edges32, edges16 = np.array(edges, np.float32), np.array(edges, np.float16)
    for x, x32 in list(zip(edges, edges32))[:: 1 if every_pair else 4]:
        check(of_floats, x, 0.5)
        check(of_floats, x32, x)
    check(of_floats, np.array(edges), np.array(edges[::-1]))
    check(of_floats, edges32, edges16)
    check(of_floats, np.array(edges), np.array(edges))  # NaNs: equal with equal_nan only
    check(of_floats, np.ones((2, 3)), np.ones(3))  # of other shapes: not equal (not compared)
    # Shapes known at compile time: of other shapes, the constant False (the elements of
    # shapes that do not broadcast together are not compared); Python numbers are arrays.
    for x, y in [((2, 2), (3, 1)), ((2, 1), (3, 1)), ((2, 0), (3, 1)), ((3,), (2, 3)), ((), ())]:
        check(shapes_compared, np.ones(x), np.ones(y))
    check(shapes_compared, np.float32(1.0), 1.0 + 2**-52)
    check(shapes_compared, np.zeros((2, 0)), np.zeros((1, 0)))


def shift_by_a_float(x):
    return x << 2.0  # MARK float shift


def test_a_shift_by_a_float_names_the_float():
    # The message named the other operand: "a shift needs integers or booleans, not i64".
    with pytest.raises(MyiaTypeError, match="a shift needs integers or booleans, not f64"):
        myia(shift_by_a_float)(3)


def powers(a, b):
    return pow(a, b), pow(a, b, None)


def modular_powers(a, b, m):
    return pow(a, b, m)


def float_modulus(a):
    return pow(a, 2, 5)  # MARK float modulus


@pytest.mark.parametrize("backend", BACKENDS)
def test_pow_is_pythons(backend):
    """``pow(a, b)`` is ``a ** b``; ``pow(a, b, m)`` of ints is Python's modular power: the
    sign of `m`, the inverse for a negative exponent (ValueError where there is none), a
    ValueError for `m` 0, exact for large ints."""
    backend = _backend(backend)
    f2, f3 = myia(powers, backend=backend), myia(modular_powers, backend=backend)
    for args in [(2, 3), (2, -1), (2.5, 2), (0, -1), (True, False), (np.int8(3), 3), (-8, 1 / 3)]:
        _same(_outcome(f2, *args), _outcome(powers, *args), True, args)
    _same(f2(np.arange(3), 2), powers(np.arange(3), 2), True, "array")
    for args in [
        (3, 4, 5), (3, -1, 7), (-3, 5, 7), (3, 5, -7), (-3, -5, -7), (True, 2, 3), (2, 0, 1),
        (2, 0, -1), (0, 0, 5), (2, -1, 4), (0, -1, 5), (2, 3, 0), (5, -3, 1), (10, 100, 97),
        (2**40 + 1, 2**40, 2**31 - 1), (2**70 + 3, 2**65 + 1, 10**30 + 7),
    ]:  # fmt: skip
        with np.errstate(all="ignore"):
            _same(_outcome(f3, *args), _outcome(modular_powers, *args), True, args)
    for a in (2.0, np.int64(2), np.ones(2, np.int64)):
        with pytest.raises(TypeError) as expected:
            float_modulus(a)
        with pytest.raises(MyiaTypeError, match=re.escape(str(expected.value))) as info:
            myia(float_modulus, backend=backend)(a)
        assert [f.location.line for f in info.value.frames] == [line_of(float_modulus, "MARK")]
    check_grad(lambda x: pow(x, 3) + pow(2.0, x) + pow(x, 2, None), 1.3, backend=backend)


def masked_by_tests(x, k):
    return np.sum(
        np.fabs(x) * np.signbit(x - 0.3)
        + x * np.greater(x, 0.1)
        + x * np.logical_xor(x, x > 1)
        + x * np.left_shift(k, 2)
        + x * np.bitwise_and(k, 6)
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_through_fabs_and_the_tests(backend):
    # np.fabs is differentiable (the sign); the tests, comparisons and integers are masks
    # and factors with no derivative of their own.
    backend = _backend(backend)
    x, k = np.array([-1.5, -0.2, 0.4, 2.5]), np.array([1, 2, 3, 7])
    check_grad(masked_by_tests, x, k, wrt=0, backend=backend)
    g = grad(masked_by_tests, backend=backend)(x, k)
    np.testing.assert_allclose(g, masked_by_tests_slope(x, k), rtol=1e-12)


def masked_by_tests_slope(x, k):
    return (
        np.sign(x) * np.signbit(x - 0.3) + (x > 0.1) + np.logical_xor(x, x > 1) + (k << 2)
        + (k & 6)
    )  # fmt: skip


def maps(params, xs, ys):
    logs = tuple(map(np.log, params))  # a tuple: its length is known
    products = list(map(lambda x, y: x * y, xs, ys))  # a list: so are xs and ys
    return sum(map(np.sum, logs)) + sum(products) + len(products)


@pytest.mark.parametrize(
    "backend", ["numpy"] + [pytest.param(b, marks=pytest.mark.slow) for b in BACKENDS[1:]]
)
def test_map_is_its_generator_expression(backend):
    # (Its gradient compiles for seconds: the other backends are marked slow.)
    backend = _backend(backend)
    params = (np.array([1.5, 2.0]), np.ones((2, 2)) * 3.0, 4.0)
    args = (params, [1.0, 2.0, 3.0], [0.5, 0.25, 2.0])
    assert myia(maps, backend=backend)(*args) == pytest.approx(maps(*args), rel=1e-12)
    check_grad(maps, *args, wrt=(0, 1), backend=backend)

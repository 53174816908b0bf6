"""Regression tests: functions chosen at run time that differ in what a call needs.

- A closure chosen at run time and called with arguments of two types (a float and an
  array): it is lifted to a partial application of a closed graph to the values it captures
  (`myia.infer.lifting`), whose calls test which function they apply (`dispatch`).
- Partial applications chosen at run time and called with two types.
- Functions with different defaults, or different numbers of parameters filled in by
  defaults, chosen at run time and called with the arguments both accept.

Values against Python, gradients against finite differences, on every backend.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from helpers import assert_same

from myia import MyiaTypeError, grad, myia
from myia.testing import check_grad, check_jvp
from myia.transforms import jvp_

BACKENDS = ["numpy", "debug", "jax"]


def _backend(backend):
    if backend == "jax":
        pytest.importorskip("jax")
    return backend


# 1. A capturing closure chosen at run time, called with two types -------------------------


def closure_ifexp(x, y):
    def g(a):
        return a * x

    def h(a):
        return a + y

    fn = g if x > 0 else h
    return fn(1.0) + fn(np.ones(3)).sum()


def closure_if(x, y):
    def g(a):
        return a * x

    def h(a):
        return a + y

    if x > 0:
        fn = g
    else:
        fn = h
    return fn(1.0) + fn(np.ones(3)).sum()


def closure_lambdas_arrays(x, w):
    g = lambda a: np.sum(a * w)  # noqa: E731
    h = lambda a: np.sum(np.sin(a) * x)  # noqa: E731
    fn = g if x > 0 else h
    return fn(w) + fn(x) * 2.0


def closure_and_top_level(x, y):
    def g(a):
        return a * x * y

    fn = g if x > 0 else _cube
    return fn(y) + fn(np.full(2, y)).sum()


def _cube(a):
    return a * a * a


def closure_of_closure(x, y):
    def k(a):
        return a * y

    def g(a):
        return k(a) + x

    def h(a):
        return a - x

    fn = g if y > 0 else h
    return fn(x) * fn(np.arange(3.0)).sum()


def _apply_twice(fn, x):
    return fn(x) + fn(np.ones(2) * x).sum()


def closure_passed_on(x, y):
    def g(a):
        return a * x

    def h(a):
        return a * a + y

    return _apply_twice(g if x > 0 else h, y)


def closure_called_alone(x, y):
    def g(a):
        return a * x + y

    fn = g
    return fn(x) + fn(np.ones(2)).sum()


def _make_adder(y):
    def add(a):
        return a + y

    return add


def returned_closure(x, y):
    # A closure returned by a function and called with two types.
    add = _make_adder(y * x)
    return add(x) * add(2) + add(np.ones(3)).sum()


def _make_power(y):
    def power(n, a):
        if n <= 1:
            return a
        return power(n - 1, a * y)

    return power


def returned_recursive_closure(x, y):
    p = _make_power(y)
    return p(3, x) + p(2, np.ones(2) * x).sum()


def _make_loop(y):
    def loop(n, a):
        i = 0
        while i < n:
            a = a * y + 1.0
            i = i + 1
        for _ in range(2):
            a = a + y
        return a

    return loop


def returned_closure_with_loops(x, y):
    r = _make_loop(y)
    return r(3, x) + r(2, np.ones(2) * x).sum()


def closures_capturing_different_values(x, y):
    # The two closures capture different numbers of values (their bound arguments differ).
    def k(a):
        return a * y

    def g(a, s=x * 2.0):
        return k(a) * s + k(a)

    h = lambda a: a - x  # noqa: E731
    fn = g if y > 0 else h
    return fn(x) + fn(np.ones(2) * y).sum()


CLOSURES = [
    closures_capturing_different_values,
    returned_closure,
    returned_recursive_closure,
    returned_closure_with_loops,
    closure_ifexp,
    closure_if,
    closure_lambdas_arrays,
    closure_and_top_level,
    closure_of_closure,
    closure_passed_on,
    closure_called_alone,
]


def _points(fn):
    if fn is closure_lambdas_arrays:
        return [(0.7, np.array([0.5, -1.0, 2.0])), (-0.7, np.array([0.5, -1.0, 2.0]))]
    return [(2.0, 3.0), (-2.0, 3.0), (2.0, -3.0)]


CLOSURE_CASES = [(f, a) for f in CLOSURES for a in _points(f)]
CLOSURE_IDS = [f"{f.__name__}-{i}" for i, (f, _) in enumerate(CLOSURE_CASES)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", CLOSURE_CASES, ids=CLOSURE_IDS)
def test_closure_called_with_two_types(fn, args, backend):
    backend = _backend(backend)
    assert_same(myia(fn, backend=backend)(*args), fn(*args))
    check_grad(fn, *args, backend=backend)


def test_closure_called_with_two_types_grad_value():
    # x > 0: g(1.0) + sum(g(ones(3))) = 4x, so d/dx = 4 and d/dy = 0; else 4 + 4y.
    assert grad(closure_ifexp, 0, 1)(2.0, 3.0) == (4.0, 0.0)
    assert grad(closure_ifexp, 0, 1)(-2.0, 3.0) == (0.0, 4.0)


# Partial applications chosen at run time, called with two types ---------------------------


def _scale(a, x):
    return a * x


def _shift(b, x):
    return b + x


def partials_ifexp(x, y):
    fn = partial(_scale, x) if x > 0 else partial(_shift, y)
    return fn(1.0) + fn(np.ones(3)).sum()


def partials_if(x, y):
    if x > 0:
        fn = partial(_scale, x)
    else:
        fn = partial(_shift, y)
    return fn(y) * fn(np.ones(2) * x).sum()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [partials_ifexp, partials_if])
@pytest.mark.parametrize("x", [1.5, -1.5])
def test_partials_called_with_two_types(fn, x, backend):
    backend = _backend(backend)
    args = (x, 3.0)
    assert_same(myia(fn, backend=backend)(*args), fn(*args))
    check_grad(fn, *args, backend=backend)


# 3. Functions with different defaults chosen at run time ----------------------------------


def _times(x, k=2.0):
    return x * k


def _plus(x, k=3.0):
    return x + k


def _affine(x, k=3.0, b=0.5):
    return x * k + b


def _poly(x, a=1.0, b=2.0, c=-1.0):
    return a * x * x + b * x + c


def defaults_ifexp(x):
    fn = _times if x > 0 else _plus
    return fn(x)


def defaults_if(x):
    if x > 0:
        fn = _times
    else:
        fn = _plus
    return fn(x) * x


def defaults_arity(x):
    fn = _times if x > 0 else _affine
    return fn(x)


def defaults_three_ways(x, y):
    if x > 1.0:
        fn = _times
    elif x > -1.0:
        fn = _affine
    else:
        fn = _poly
    return fn(y) + fn(x, y)


def defaults_keyword(x, y):
    fn = _times if x > 0 else _plus
    return fn(x, k=y) + fn(y)


def defaults_array(x, w):
    fn = _times if x > 0 else _affine
    return np.sum(fn(w)) + fn(x)


def defaults_closures(x, y):
    # Closures with different defaults: lifted, then told apart at run time.
    def g(a, k=2.0):
        return a * k * y

    def h(a, k=3.0, b=1.0):
        return a + k * b + y

    fn = g if x > 0 else h
    return fn(x) + fn(x, 0.5)


DEFAULTS = [
    (defaults_ifexp, [(2.0,), (-2.0,)]),
    (defaults_if, [(2.0,), (-2.0,)]),
    (defaults_arity, [(2.0,), (-2.0,)]),
    (defaults_three_ways, [(2.0, 0.5), (0.5, 0.5), (-2.0, 0.5)]),
    (defaults_keyword, [(2.0, 0.5), (-2.0, 0.5)]),
    (defaults_array, [(2.0, np.array([1.0, -2.0])), (-2.0, np.array([1.0, -2.0]))]),
    (defaults_closures, [(2.0, 0.5), (-2.0, 0.5)]),
]
DEFAULT_CASES = [(f, a) for f, pts in DEFAULTS for a in pts]
DEFAULT_IDS = [f"{f.__name__}-{i}" for i, (f, _) in enumerate(DEFAULT_CASES)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", DEFAULT_CASES, ids=DEFAULT_IDS)
def test_different_defaults(fn, args, backend):
    backend = _backend(backend)
    assert_same(myia(fn, backend=backend)(*args), fn(*args))
    check_grad(fn, *args, backend=backend)


def test_different_defaults_grad_value():
    assert grad(defaults_ifexp)(2.0) == 2.0
    assert grad(defaults_ifexp)(-2.0) == 1.0
    assert grad(defaults_arity)(-2.0) == 3.0


def _needs_k(x, k):
    return x * k


def defaults_missing(x):
    fn = _times if x > 0 else _needs_k
    return fn(x)


def test_missing_argument_is_a_clear_error():
    with pytest.raises(MyiaTypeError) as info:
        myia(defaults_missing)(2.0)
    assert "defaults_missing" in str(info.value) or "_needs_k" in str(info.value)


# Second order --------------------------------------------------------------------------------


def _mul_add(a, b):
    return a * b + b


def _sub_mul(a, b):
    return (a - b) * b


def functions_two_types(x, y):
    # Top-level functions chosen at run time and called with two types. Once a gradient
    # inlined the calls, the functions were values never called, which were one object: the
    # test of which one is called always chose the first (a silent wrong second derivative).
    p = _mul_add if x * y > 0.0 else _sub_mul
    return p(y, x) + p(y, 2)


SECOND = [
    (functions_two_types, [(1.3, 0.7), (1.3, -0.7)]),
    (returned_recursive_closure, [(1.5, 0.5)]),
    (closures_capturing_different_values, [(1.5, 0.5), (1.5, -0.5)]),
    (returned_closure_with_loops, [(1.5, 0.5)]),
    (closure_ifexp, [(2.0, 3.0), (-2.0, 3.0)]),
    (closure_if, [(2.0, 3.0), (-2.0, 3.0)]),
    (partials_ifexp, [(1.5, 3.0), (-1.5, 3.0)]),
    (defaults_three_ways, [(2.0, 0.5), (0.5, 0.5), (-2.0, 0.5)]),
    (defaults_closures, [(2.0, 0.5), (-2.0, 0.5)]),
]
SECOND_CASES = [(f, a) for f, pts in SECOND for a in pts]
SECOND_IDS = [f"{f.__name__}-{i}" for i, (f, _) in enumerate(SECOND_CASES)]


@pytest.mark.parametrize("backend", ["numpy", "debug"])
@pytest.mark.parametrize("fn, args", SECOND_CASES, ids=SECOND_IDS)
def test_second_order(fn, args, backend):
    check_grad(fn, *args, order=2, backend=backend)


def test_functions_two_types_second_derivative_value():
    # x * y < 0: (y - x) * x + (y - 2) * 2, whose second derivative in x is -2.
    assert grad(grad(functions_two_types))(1.3, -0.7) == -2.0


# Forward mode --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn, args",
    [(defaults_ifexp, (2.0,)), (defaults_arity, (-2.0,)), (functions_two_types, (1.3, 0.7))],
)
def test_jvp(fn, args):
    check_jvp(fn, *args)


@pytest.mark.parametrize("backend", ["numpy", "debug"])
@pytest.mark.parametrize("fn, args", SECOND_CASES, ids=SECOND_IDS)
def test_jvp_of_closures_and_partials_called_with_two_types(fn, args, backend):
    # The tangent of a partial application binds each argument's value and tangent; a
    # choice at run time reads them back (`partial_arg`) for the function it chose.
    check_jvp(fn, *args, backend=backend)


def _tangent_of_closure_ifexp(x, y):
    return jvp_(closure_ifexp, (x, y), (1.0, 0.5))[1]


@pytest.mark.parametrize("x", [2.0, -2.0])
def test_grad_of_jvp_of_closures_called_with_two_types(x):
    check_grad(_tangent_of_closure_ifexp, x, 3.0)


# Closures kept from one iteration of a loop for the next ------------------------------------
# A closure is typed by the context it is made in, so one made in an iteration and kept for
# the next (in a list, by a comprehension) never had a settled type (inference recursed
# 3000 levels, with no user line). It is lifted to a partial application of the values it
# captures; one reading a variable that the loop assigns is refused at its line, as Python
# would read the variable's value when the closure is called (late binding).


def lambdas_bound_by_default(w, x):
    fs = [lambda v, k=k: np.tanh(v * w) * k for k in range(3)]
    s = 0.0
    for g in fs:
        s = s + np.sum(g(x))
    return s


def defs_appended_in_loop(w, x):
    fs = []
    for k in range(3):

        def h(v, k=k):
            return np.sum(v * w**k)

        fs = fs + [h]
    return fs[0](x) + fs[2](x)


@pytest.mark.parametrize("fn", [lambdas_bound_by_default, defs_appended_in_loop])
@pytest.mark.parametrize("backend", BACKENDS)
def test_closures_kept_across_iterations(fn, backend):
    w, x = np.array([0.5, -0.3]), np.array([1.0, 2.0])
    assert np.allclose(myia(fn, backend=_backend(backend))(w, x), fn(w, x), rtol=1e-12)
    if backend == "numpy":
        check_grad(fn, w, x, order=2)


def lambdas_late_bound(x):
    fs = [(lambda v: v * k) for k in range(3)]  # noqa: B023
    s = 0.0
    for g in fs:
        s = s + g(x)
    return s


def def_reads_loop_variable(x):
    fs = []
    for k in range(3):

        def h(v):
            return v * k  # noqa: B023

        fs = fs + [h]
    return fs[0](x)


def closure_kept_from_first_iteration(x):
    g = None
    for k in range(3):
        if k == 0:
            g = lambda v: v * k  # noqa: E731, B023
    return g(x)


@pytest.mark.parametrize(
    "fn, line",
    [
        (lambdas_late_bound, "fs = [(lambda v: v * k) for k in range(3)]  # noqa: B023"),
        (def_reads_loop_variable, "def h(v):"),
        (closure_kept_from_first_iteration, "g = lambda v: v * k  # noqa: E731, B023"),
    ],
)
def test_closure_reading_loop_variable_kept_for_later_is_refused(fn, line):
    # Python: 12.0 (every lambda reads k == 2 when called); Myia would read 0, 1, 2.
    from myia import MyiaSyntaxError

    with pytest.raises(MyiaSyntaxError, match="reads 'k', which the loop") as info:
        myia(fn)(2.0)
    assert line in str(info.value) and __file__ in str(info.value)
    with pytest.raises(MyiaSyntaxError, match="reads 'k'"):
        grad(fn)(2.0)


def closure_nested_each_iteration(x):
    f = lambda v: v  # noqa: E731
    for _ in range(3):
        f = lambda v, f=f: f(v) * 2.0  # noqa: E731
    return f(x)


def test_closure_growing_each_iteration_is_an_error_at_its_line():
    with pytest.raises(MyiaTypeError, match="loop variable f in closure_nested_each") as info:
        myia(closure_nested_each_iteration)(2.0)
    assert "f = lambda v, f=f: f(v) * 2.0" in str(info.value)

"""Regression tests: loops over long tuples compile as loops, in time linear in the length.

A tuple of 17 elements or more of one type (floats, arrays of one shape) is iterated as a
list after its first element; shorter tuples are unrolled. Results are compared with Python,
gradients with finite differences.
"""

import math

import numpy as np
import pytest

from myia import grad, myia
from myia.errors import MyiaTypeError
from myia.testing import check_grad

try:
    import jax
except ImportError:  # pragma: no cover
    jax = None

BACKENDS = ["numpy", "debug", "native"] + (["jax"] if jax is not None else [])


def loop_sum(t):
    s = 0
    for v in t:
        s = s + v * v
    return s


def gen_sum(t):
    return sum(v * math.sin(v) for v in t)


def enum_sum(t):
    s = 0.0
    for i, v in enumerate(t, 1):
        s = s + i * v
    return s


def zip_sum(t, u):
    s = 0.0
    for a, b in zip(t, u):
        s = s + a * b
    return s


def zip_tuple_list(t, xs):
    s = 0.0
    for a, b in zip(t, xs):
        s = s + a * b
    return s


def tuple_comp(t):
    return tuple(2.0 * v for v in t)


def list_comp(t):
    return [v * v for v in t if v > 0.5]


def loop_break(t):
    s = 0.0
    for v in t:
        if s > 3.0:
            break
        s = s + v
    return s


def arrays_sum(t):
    acc = 0
    for a in t:
        acc = acc + np.tanh(a)
    return np.sum(acc * acc)


def maximum(t):
    return max(t) + min(v * v for v in t)


def floats(n, seed=0):
    return tuple(float(x) for x in np.random.default_rng(seed).uniform(0.1, 1.0, n))


def _same(got, expected):
    assert type(got) is type(expected)
    if isinstance(got, (tuple, list)):
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            _same(a, b)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-12)


PROGRAMS = [
    (loop_sum, lambda n: (floats(n),)),
    (gen_sum, lambda n: (floats(n),)),
    (enum_sum, lambda n: (floats(n),)),
    (zip_sum, lambda n: (floats(n), floats(n + 3, 1))),
    (zip_tuple_list, lambda n: (floats(n), list(floats(n - 2, 1)))),
    (tuple_comp, lambda n: (floats(n),)),
    (list_comp, lambda n: (floats(n),)),
    (loop_break, lambda n: (floats(n),)),
    (maximum, lambda n: (floats(n),)),
    (arrays_sum, lambda n: (tuple(np.full((2, 3), x) for x in floats(n)),)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,make", PROGRAMS)
def test_values_as_python(backend, fn, make):
    f = myia(fn, backend=backend)
    for n in (1, 2, 3, 16, 17, 50):
        args = make(n) if fn not in (zip_tuple_list,) else make(n + 2)
        _same(f(*args), fn(*args))


@pytest.mark.parametrize(
    "fn,args",
    [
        (loop_sum, (floats(40),)),
        (gen_sum, (floats(40),)),
        (enum_sum, (floats(40),)),
        (zip_sum, (floats(40), floats(30, 1))),
        (loop_break, (floats(40),)),
        (maximum, (floats(40),)),
        (arrays_sum, (tuple(np.full((2, 3), x) for x in floats(20)),)),
    ],
)
def test_gradients(fn, args):
    check_grad(fn, *args)


def test_gradient_of_tuple_comprehension():
    def f(t):
        u = tuple(v * v for v in t)
        return u[0] + 3.0 * u[-1] + sum(u)

    t = floats(30)
    check_grad(f, t)
    g = grad(f)(t)
    assert type(g) is tuple and len(g) == 30


@pytest.mark.parametrize("fn", [loop_sum, gen_sum, enum_sum, maximum])
def test_program_does_not_grow_with_the_length(fn):
    # One loop whatever the length: the generated code has as many lines for 100 elements as
    # for 400 (a constant tuple of zeros is one line).
    for h in (myia(fn), grad(fn)):
        lines = [len(h.generated_code(floats(n)).splitlines()) for n in (100, 400)]
        assert lines[0] == lines[1]


def test_long_tuple_compiles():
    t = floats(2000)
    assert myia(loop_sum)(t) == pytest.approx(loop_sum(t), rel=1e-12)
    np.testing.assert_allclose(grad(gen_sum)(t), [np.sin(v) + v * np.cos(v) for v in t])


def test_growing_tuple_over_a_long_tuple_is_a_clear_error():
    def reverse(t):
        acc = ()
        for v in t:
            acc = (v,) + acc
        return acc

    short = floats(16)
    assert myia(reverse)(short) == reverse(short)
    with pytest.raises(MyiaTypeError, match="a list instead of a growing tuple"):
        myia(reverse)(floats(40))


def test_tuples_of_several_types_are_unrolled():
    # A tuple of values of different types (or known at compile time) is unrolled, as before:
    # its loop variable may change type from one element to the next.
    def f(x):
        y = 0.0
        for v in (1, x, np.ones(3) * x, (x, 2.0)):
            y = v
        return y

    _same(myia(f)(2.0), f(2.0))

    def g(x):
        s = x
        for k in (1, 2, 3):
            s = s * k
        return s

    assert myia(g)(1.5) == g(1.5)
    check_grad(g, 1.5)


FUNCTIONS = (math.sin, math.cos, math.tanh) * 6


def apply_all(x):
    for fn in FUNCTIONS:
        x = fn(x)
    return x


def test_long_tuples_of_functions_and_untyped_graphs(check):
    # A tuple of functions is unrolled; the interpreter running the untyped graph decides on
    # values Myia has no type for too.
    check(apply_all, 0.3)
    check(loop_sum, floats(20))
    check(gen_sum, floats(20))


@pytest.mark.skipif(jax is None, reason="JAX is not installed")
def test_unrolled_join_points_lower_to_xla_in_linear_size():
    # `max` of a tuple of at most 16 elements is unrolled: a chain of join points (a state
    # machine that never jumps back). On jax it is one lax.cond per state (or a select), no
    # while loop, and each element adds about as much StableHLO as the one before: the
    # lines added grow by less than 300 per two elements (6, 8, 10, 12 elements: 945, 1900,
    # 3128, 4644 lines; 1439, 2721, 4285, 6137 before the flags known when tracing left
    # the branches, the same growth), where an exponential lowering would double them.
    f = myia(maximum, backend="jax")
    sizes = []
    for n in (6, 8, 10):
        text = f.lowered_text(floats(n))
        assert "stablehlo.while" not in text
        sizes.append(len(text.splitlines()))
    first, second = sizes[1] - sizes[0], sizes[2] - sizes[1]
    assert second - first <= 300 and second <= 1.5 * first

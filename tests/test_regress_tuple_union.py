"""Regression tests: tuples of different lengths meeting at a join.

``t = (x,) if c else (x, y)``, a function returning tuples of different lengths on two paths,
a loop over a fixed tuple that keeps some of its elements: the value is a union of tuples
told apart by their lengths at run time. ``len(t)``, ``t[0]``, ``for v in t``, ``sum(t)``,
``f(*t)``, ``np.stack(t)`` and passing or returning `t` work on every backend, with
gradients; each operation runs the code for the length `t` has. An operation that fails
for one of the lengths (``t[1]`` where `t` may have one element) is a `MyiaTypeError` at
the user's line, until the program tests the length (``if len(t) == 2:``).
"""

import numpy as np
import pytest

from myia import myia
from myia.errors import MyiaTypeError
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax", "native"]


def features(x, y, c):
    # Two paths make tuples of different lengths.
    if c > 0:
        return (x,)
    return (x, y * 2.0)


def count(x, y, c):
    return len(features(x, y, c)) * x


def first_times_last(x, y, c):
    t = features(x, y, c)
    return t[0] * t[-1]


def checked_length(x, y, c):
    t = features(x, y, c)
    if len(t) == 2:
        a, b = t
        return a * b
    return t[0] + 1.0


def checked_in_expression(x, y, c):
    t = (x,) if c > 0 else (x, y)
    return t[1] * x if len(t) == 2 else t[0] * 3.0


def squares(x, y, c):
    t = features(x, y, c)
    s = 0.0
    for v in t:
        s = s + v * v
    return s


def weighted(x, y, c):
    t = features(x, y, c)
    s = 0.0
    for i, v in enumerate(t):
        s = s + (i + 1) * v
    return s


def builtin_sum(x, y, c):
    return sum(features(x, y, c)) * x


def generator_max(x, y, c):
    return max(v * v for v in features(x, y, c))


def product(t):
    p = 1.0
    for v in t:
        p = p * v
    return p


def passed_on(x, y, c):
    t = features(x, y, c)
    return product(t) + len(t)


def grown(x, y, c):
    t = features(x, y, c) + (x * y,)
    return t[-1] + t[0] * len(t)


def scale(a, b=3.0):
    return a * b


def star_call(x, y, c):
    return scale(*features(x, y, c))


def keep_positive(xs):
    kept = ()
    for v in xs:
        if v > 0:
            kept = kept + (v,)
    return kept


def norm_of_positive(a, b, c):
    kept = keep_positive((a, b, c))
    s = 0.0
    for v in kept:
        s = s + v * v
    return s * len(kept)


def maybe_features(x, y, c):
    t = None if c > 1.0 else features(x, y, c)
    if t is None:
        return x
    return sum(t)


def pairs(x, y, c):
    ts = [(x,), (x, y)] if c > 0 else [(y,)]
    s = 0.0
    for t in ts:
        s = s + len(t) * t[0]
    return s


SCALAR_CASES = [
    count,
    first_times_last,
    checked_length,
    checked_in_expression,
    squares,
    weighted,
    builtin_sum,
    generator_max,
    passed_on,
    grown,
    star_call,
    maybe_features,
    pairs,
]


@pytest.mark.parametrize("c", [1.0, -1.0])
@pytest.mark.parametrize("fn", SCALAR_CASES)
def test_values(check, fn, c):
    check(fn, 1.5, 2.5, c)


@pytest.mark.parametrize("backend", BACKENDS)
def test_backends(backend):
    for fn in SCALAR_CASES:
        f = myia(fn, backend=backend)
        for c in (2.0, 1.0, -1.0):
            assert f(1.5, 2.5, c) == pytest.approx(fn(1.5, 2.5, c)), (fn.__name__, c)


@pytest.mark.parametrize("c", [1.0, -1.0])
@pytest.mark.parametrize("fn", [f for f in SCALAR_CASES if f is not pairs])
def test_gradients(fn, c):
    check_grad(fn, 1.5, 2.5, c)


SECOND_ORDER = [f for f in SCALAR_CASES if f not in (pairs, weighted)]


@pytest.mark.parametrize("c", [1.0, -1.0])
@pytest.mark.parametrize("fn", SECOND_ORDER)
def test_second_order(fn, c):
    check_grad(fn, 1.5, 2.5, c, order=2)


@pytest.mark.parametrize("args", [(1.5, -2.0, 3.0), (-1.5, -2.0, -3.0), (1.5, 2.0, 3.0)])
def test_kept_by_a_loop_over_a_tuple(check, args):
    check(norm_of_positive, *args)
    check_grad(norm_of_positive, *args)


def test_returned_from_the_entry_point():
    f = myia(features)
    assert f(1.5, 2.5, 1.0) == (1.5,)
    assert f(1.5, 2.5, -1.0) == (1.5, 5.0)
    assert len(f.compiled_signatures()) == 1


def layers(x, ws, deep):
    # Deep supervision: every layer's output, or the last one only.
    hs = (x,)
    for w in ws:
        h = np.tanh(hs[-1] * w)
        hs = hs + (h,) if deep > 0 else (h,)
    return sum(np.sum(h * h) for h in hs)


def stacked(a, b, c):
    t = (a,) if c > 0 else (a, b * 2.0)
    return np.sum(np.stack(t) * np.arange(3.0))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("deep", [1.0, -1.0])
def test_arrays(backend, deep):
    x = np.array([0.5, -1.0, 2.0])
    ws = (0.5, 1.5)
    assert myia(layers, backend=backend)(x, ws, deep) == pytest.approx(layers(x, ws, deep))
    b = np.array([1.0, 2.0, -3.0])
    assert myia(stacked, backend=backend)(x, b, deep) == pytest.approx(stacked(x, b, deep))


@pytest.mark.parametrize("deep", [1.0, -1.0])
def test_arrays_gradients(deep):
    x = np.array([0.5, -1.0, 2.0])
    check_grad(layers, x, (0.5, 1.5), deep)
    check_grad(stacked, x, np.array([1.0, 2.0, -3.0]), deep)


# Errors ---------------------------------------------------------------------------------------


def unchecked_index(x, y, c):
    t = features(x, y, c)
    return t[1]  # line: unchecked index


def unchecked_unpack(x, y, c):
    t = features(x, y, c)
    a, b = t  # line: unchecked unpack
    return a * b


@pytest.mark.parametrize(
    "fn,marker", [(unchecked_index, "unchecked index"), (unchecked_unpack, "unchecked unpack")]
)
def test_unchecked_length_is_an_error_at_the_users_line(fn, marker):
    from helpers import line_of

    with pytest.raises(MyiaTypeError) as info:
        myia(fn)(1.5, 2.5, -1.0)
    err = info.value
    assert err.location.line == line_of(fn, marker)
    assert "tuple of length 1 or 2" in err.message
    assert "len(" in err.message
    assert all("myia/" not in str(f.location.filename) for f in err.frames)


def longer(n, x):
    if n == 0:
        return ()
    return longer(n - 1, x) + (x,)


def total_longer(n, x):
    return sum(longer(n, x))


def test_a_tuple_growing_with_a_recursion_is_an_error():
    with pytest.raises(MyiaTypeError, match="tuples of ever more lengths"):
        myia(total_longer)(3, 1.5)


def tuple_or_number(x, c):
    t = (x,) if c > 0 else x
    return t


def test_a_tuple_and_a_number_do_not_join():
    with pytest.raises(MyiaTypeError, match="incompatible types"):
        myia(tuple_or_number)(1.5, 1.0)

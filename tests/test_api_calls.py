"""The call path of compiled functions: the fast path by `quick_key` and the full signature.

A call whose arguments are Python or NumPy scalars or NumPy arrays finds its executable by a
cheap key (types, dtypes and shapes); the key must never call a specialization that the full
signature would not, and a call it does not cover must behave as before.
"""

import numpy as np
import pytest

from myia import MyiaError, MyiaTypeError, grad, myia
from myia.api import array_key, quick_key


def poly(x):
    return x * x + 2 * x


def add(x, y):
    return x + y


def total(x):
    return (x * x).sum()


def mul3(x, y, z):
    return x * y * z


def with_default(x, k=3.0):
    return x * k


def first(t):
    return t[0] * 2.0


def newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def test_repeated_scalar_calls_use_the_quick_key():
    f = myia(poly)
    assert [f(3.0) for _ in range(3)] == [15.0] * 3
    assert f(2) == 8 and type(f(2)) is int
    assert len(f.compiled_signatures()) == 2
    assert set(f._quick) == {(float,), (int,)}


def test_every_arity_finds_its_key():
    f = myia(mul3)
    assert [f(1.0, 2.0, 3) for _ in range(2)] == [6.0, 6.0]
    assert [f(1, 2, 3) for _ in range(2)] == [6, 6]
    assert set(f._quick) == {(float, float, int), (int, int, int)}
    with pytest.raises(MyiaTypeError):
        f(1.0, 2.0)
    g = myia(add)
    assert [g(1, 2.0) for _ in range(2)] == [3.0, 3.0]
    assert set(g._quick) == {(int, float)}


def test_python_and_numpy_scalars_keep_their_signatures():
    f = myia(poly)
    values = [1.5, 2, True, np.float64(1.5), np.float32(1.5), np.int32(2), np.bool_(True)]
    for v in values:
        f(v)
        f(v)  # the fast path, once the key is known
    sigs = [f.signature(v) for v in values]
    assert f.compiled_signatures() == list(dict.fromkeys(sigs))
    for v in values:
        assert f(v) == poly(v)
        assert type(f(v)) is type(myia(poly)(v))


def test_a_new_shape_or_dtype_compiles_a_new_specialization():
    f = myia(total)
    a3, a4 = np.arange(3.0), np.arange(4.0)
    assert f(a3) == 5.0 and f(a3) == 5.0
    assert f(a4) == 14.0
    assert f(a3.astype(np.float32)) == np.float32(5.0)
    assert f(a3.reshape(3, 1)) == 5.0
    assert f(np.array(2.0)) == 4.0
    assert len(f.compiled_signatures()) == 5
    assert f(a3.astype(np.float32)).dtype == np.float32
    assert len(f.compiled_signatures()) == 5


def test_a_zero_dimensional_array_is_not_a_numpy_scalar():
    f = myia(poly)
    f(np.float64(2.0))
    out = f(np.array(2.0))
    assert isinstance(out, np.ndarray) or isinstance(out, np.generic)
    assert [str(s) for s in f.compiled_signatures()] == [
        str(f.signature(np.float64(2.0))),
        str(f.signature(np.array(2.0))),
    ]


def test_mixed_scalars_and_arrays():
    f = myia(add)
    a = np.ones(3)
    assert np.array_equal(f(a, 2.0), a + 2.0)
    assert np.array_equal(f(a, 2.0), a + 2.0)
    assert np.array_equal(f(2.0, a), a + 2.0)
    assert f(1.0, 2.0) == 3.0  # scalars once arrays have keys: the same key as types
    assert f(1.0, 2.0) == 3.0
    assert len(f.compiled_signatures()) == 3


def ranges(n):
    return range(3), (range(1, n, 2), [range(n)])


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_a_range_returned_is_pythons(backend):
    # It was Myia's record Range(start=0, stop=3, step=1).
    got = myia(ranges, backend=backend)(7)
    assert got == ranges(7)
    assert type(got[0]) is range and type(got[1][1][0]) is range


def _error(f, *args):
    with pytest.raises(MyiaError) as info:
        f(*args)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("bad", [object(), "text", np.str_("x"), np.ma.array([1.0])])
def test_a_wrong_argument_raises_as_on_a_first_call(bad):
    cold = _error(myia(poly), bad)
    if not isinstance(bad, np.str_):  # (an internal error, whichever path)
        assert cold[0] is MyiaTypeError
    f = myia(poly)
    f(1.0)
    f(np.ones(2))
    assert _error(f, bad) == cold


def test_a_wrong_argument_count_raises_as_on_a_first_call():
    cold = _error(myia(add), 1.0)
    f = myia(add)
    f(1.0, 2.0)
    assert _error(f, 1.0) == cold
    assert _error(f, 1.0, 2.0, 3.0) == _error(myia(add), 1.0, 2.0, 3.0)


def test_keywords_and_defaults_take_the_full_path():
    f = myia(with_default)
    assert f(2.0) == 6.0 and f(2.0) == 6.0
    assert f(2.0, 4.0) == 8.0
    assert f(x=2.0, k=5.0) == 10.0
    g = myia(add)
    assert g(1.0, y=2.0) == 3.0 and g(1.0, 2.0) == 3.0
    assert g(x=1.0, y=2.0) == 3.0
    assert len(g.compiled_signatures()) == 1


def test_tuples_of_scalars_and_arrays_have_a_quick_key():
    f = myia(first)
    assert f((1.0, 2)) == 2.0 and f((1.0, 2)) == 2.0
    assert f((3.0, 4.0)) == 6.0 and f((3.0, 4.0)) == 6.0
    assert f((1, 2.0)) == 2 and f((1, 2.0)) == 2
    a = np.ones(2)
    assert np.array_equal(f((a, (a, 1.0))), 2 * a) and np.array_equal(f((a, (a, 1.0))), 2 * a)
    assert np.array_equal(f((a, (a, 1))), 2 * a)
    assert np.array_equal(f((a[:1], (a, 1))), 2 * a[:1])
    assert len(f.compiled_signatures()) == 6
    assert len(f._quick) == 6


def test_other_structures_have_no_quick_key():
    f = myia(first)
    assert f([1.0, 2.0]) == 2.0 and f([1.0, 2.0]) == 2.0
    assert f((1.0, [2.0])) == 2.0 and f((1.0, [2.0])) == 2.0
    assert len(f.compiled_signatures()) == 2
    assert not f._quick


def test_quick_key():
    a = np.ones((2, 3))
    assert quick_key((1.0, 2, True)) == (float, int, bool)
    assert quick_key((np.float32(1.0),)) == (np.float32,)
    assert quick_key((a, 1.0)) == (((2, 3), a.dtype), float) == array_key((a, 1.0))
    assert array_key((1.0, 2)) == quick_key((1.0, 2))
    assert quick_key((1.0, (a, (2,)))) == (float, (tuple, (((2, 3), a.dtype), (tuple, (int,)))))
    assert quick_key(((),)) == ((tuple, ()),)
    bad = [(np.str_("x"),), (np.ma.array([1.0]),), (None,), (a, [1.0]), ((1.0, None),)]
    for args in bad:
        assert quick_key(args) is None
    assert quick_key((np.timedelta64(1, "D"),)) is None


def test_gradients_take_the_fast_path():
    g = grad(newton_sqrt, "a")
    for a in [2.0, 1e6, 2.0, 0.5]:
        assert g(a) == pytest.approx(0.5 / np.sqrt(a), rel=1e-9)
    assert len(g.compiled_signatures()) == 1
    assert g(np.float64(4.0)) == pytest.approx(0.25)
    h = grad(total)
    x = np.arange(3.0)
    assert np.array_equal(h(x), 2 * x) and np.array_equal(h(x), 2 * x)
    assert np.array_equal(h(np.ones((2, 2))), 2 * np.ones((2, 2)))
    assert len(h.compiled_signatures()) == 2

"""Programs of Google's Tangent test suite (``tests/functions.py``), written as a Myia user
would, where Myia refused them or answered otherwise than Python (values) or finite
differences (gradients)."""

import numpy as np
import pytest

from myia import MyiaTypeError, grad, jvp, myia, value_and_grad
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "jax"]


# A tuple indexed at a position known at run time only: its gradient (passthru_pack) ----------


def passthru_pack(a, b, c, i):
    x = a, b, c
    return x[i]


def rows_of_a_tuple(a, b, i):
    x = (a, b * 2.0, a * b)
    return np.sum(x[i] * x[i])


def mixed_tuple(a, i):
    x = (1, a, 2)
    return x[i] * a  # MIXED


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_a_tuple_indexed_at_run_time(backend):
    g = grad(passthru_pack, 0, 1, 2, backend=backend)
    for i, expected in [(0, (1.0, 0.0, 0.0)), (2, (0.0, 0.0, 1.0)), (-1, (0.0, 0.0, 1.0))]:
        assert g(1.0, 2.0, 3.0, i) == expected
    assert value_and_grad(passthru_pack, 1, backend=backend)(1.0, 2.0, 3.0, 1) == (2.0, 1.0)
    check_grad(passthru_pack, 1.5, -0.5, 2.0, -2, wrt=(0, 1, 2), backend=backend)
    check_grad(rows_of_a_tuple, np.ones(3), np.arange(3.0), 1, wrt=(0, 1), backend=backend)
    tangents = (1.0, 2.0, 3.0, 0)
    f = myia(lambda a, b, c, i: jvp(passthru_pack, (a, b, c, i), tangents), backend=backend)
    assert f(1.0, 2.0, 3.0, 1) == (2.0, 2.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_a_tuple_of_mixed_types_indexed_at_run_time_is_refused(backend):
    assert myia(mixed_tuple, backend=backend)(2.0, 1) == 4.0
    with pytest.raises(MyiaTypeError, match="elements of one type") as info:
        grad(mixed_tuple, backend=backend)(2.0, 1)
    assert "return x[i] * a  # MIXED" in str(info.value)


# dict(a=..., b=...) (dict_wrapper) ------------------------------------------------------------


def dict_saxpy(val):
    return val["a"] * val["b"] + val["c"]


def dict_wrapper(abc_packed_in_tuple):
    a, b, c = abc_packed_in_tuple
    return dict_saxpy(dict(a=a, b=b, c=c))


def dict_updated(d, x):
    return dict(d, b=x, z=2.0 * x)


def dict_of_pairs(x):
    return dict([("a", x)])  # PAIRS


@pytest.mark.parametrize("backend", BACKENDS)
def test_dict_called_with_keywords(backend):
    abc = (1.5, -0.5, 2.0)
    assert myia(dict_wrapper, backend=backend)(abc) == dict_wrapper(abc)
    assert grad(dict_wrapper, backend=backend)(abc) == (-0.5, 1.5, 1.0)
    d = {"a": 1.0, "b": 2.0, "c": 3}
    got = myia(dict_updated, backend=backend)(d, 5.0)
    assert got == dict_updated(d, 5.0) and list(got) == ["a", "b", "c", "z"]
    assert myia(lambda d: dict(d), backend=backend)(d) == d
    assert myia(lambda x: dict(), backend=backend)(1.0) == {}
    check_grad(lambda d, x: dict_updated(d, x)["z"] * d["a"], {"a": 1.5}, 2.0, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dict_of_pairs_is_refused_at_the_users_line(backend):
    with pytest.raises(MyiaTypeError, match="dict\\(\\) of pairs") as info:
        myia(dict_of_pairs, backend=backend)(1.0)
    assert "# PAIRS" in str(info.value)
    with pytest.raises(MyiaTypeError, match="at most 1 positional argument"):
        myia(lambda d: dict(d, d), backend=backend)({"a": 1.0})


# np.arctan(b, a) passes a as NumPy's out (cart2polar) -----------------------------------------


def cart2polar(a, b):
    r = np.sqrt(a**2.0 + b**2.0)
    theta = np.arctan(b, a)  # OUT
    return r, theta


def add_out(x):
    return np.add(x, x, out=x)  # OUT-KEYWORD


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_ufuncs_out_argument_is_refused_at_the_users_line(backend):
    with pytest.raises(MyiaTypeError, match="out argument") as info:
        myia(cart2polar, backend=backend)(1.0, 2.0)
    assert "# OUT" in str(info.value) and "ufunc1" not in str(info.value)
    with pytest.raises(MyiaTypeError, match="out argument") as info:
        myia(add_out, backend=backend)(np.ones(2))
    assert "# OUT-KEYWORD" in str(info.value)

"""vmap's axes and vjp's cotangent: what worked at the top level, or was a confusing error.

A list of axes in Myia code (``vmap(f, [None, 0, 0])``) was refused as not known at compile
time: a list literal's type forgot its elements' values when one was None. A literal list of
constants now keeps them (its type is still a list's, its element type joined), as a tuple.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from myia import MyiaShapeError, MyiaTypeError, myia, vjp, vmap

BACKENDS = ["numpy", "debug", "jax"]


def affine(d, x, y):
    return d * x + y


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_list_of_axes_in_myia_code(backend):
    x, y = np.arange(6.0).reshape(3, 2), np.ones((3, 2))

    @myia(backend=backend)
    def f(d, x, y):
        return vmap(affine, [None, 0, 0])(d, x, y), vmap(affine, in_axes=[None, 1, 0])(d, x.T, y)

    for got in f(2.0, x, y):
        np.testing.assert_array_equal(got, 2.0 * x + y)
    np.testing.assert_array_equal(vmap(affine, [None, 0, 0])(2.0, x, y), 2.0 * x + y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_literal_list_with_none_is_still_a_list(backend):
    @myia(backend=backend)
    def f(i):
        xs = [None, 0, 1]
        return len(xs), [0, 1, 2][i]

    assert f(2) == (3, 2)


# A dataclass instance of axes in Myia code (``in_axes=((0, Pt(1, 0)),)``) was refused with
# "in_axes must be known at compile time, not i64": a record's fields are broadened. A record
# literal of ints and None now keeps their values too (its fields' types are still broadened).


@dataclasses.dataclass
class Pt:
    a: Any
    b: Any


def pt_sum(t):
    return t[0] + t[1].a * t[1].b


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_dataclass_of_axes_in_myia_code(backend):
    t = (np.arange(3.0), Pt(np.ones((2, 3)), np.arange(6.0).reshape(3, 2)))
    want = t[0][:, None] + t[1].a.T * t[1].b

    @myia(backend=backend)
    def f(t):
        return vmap(pt_sum, in_axes=((0, Pt(1, 0)),))(t), Pt(1, 2).a + Pt(3, 4).b

    got, n = f(t)
    np.testing.assert_array_equal(got, want)
    assert n == 5
    np.testing.assert_array_equal(vmap(pt_sum, in_axes=((0, Pt(1, 0)),))(t), want)


# vjp's function called at the top level with two cotangents was Python's TypeError from
# Myia's wrapper ("vjp_fn() takes 1 positional argument but 2 were given"), and with a
# cotangent of another shape than the output's a MyiaShapeError about "an arithmetic
# operation".


def double(x):
    return x * 2.0


def _at_this_file(info):
    """Whether the error's traceback ends at this file (the user's line), not in Myia."""
    files = [e.path for e in info.traceback]
    return str(files[-1]) == "<myia>" and str(files[-2]) == __file__


@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp_function_takes_one_cotangent_of_the_output_shape(backend):
    x = np.arange(3.0)
    out, pullback = vjp(double, x)
    np.testing.assert_array_equal(pullback(np.ones(3))[0], [2.0, 2.0, 2.0])

    @myia(backend=backend)
    def pulled(x, ct):
        return vjp(double, x)[1](ct)

    np.testing.assert_array_equal(pulled(x, x)[0], 2.0 * x)
    with pytest.raises(MyiaTypeError, match="takes one cotangent.* not 2 arguments") as info:
        pullback(np.ones(3), np.ones(3))
    assert _at_this_file(info)
    with pytest.raises(MyiaShapeError, match=r"shape \(4,\) does not match the output's \(3,\)"):
        pullback(np.ones(4))
    _, pair_pullback = vjp(lambda x: (x, double(x)), x)
    with pytest.raises(MyiaShapeError, match=r"shape \(2,\) does not match the output's \(3,\)"):
        pair_pullback((np.ones(3), np.ones(2)))
    np.testing.assert_array_equal(pair_pullback((x, x))[0], 3.0 * x)

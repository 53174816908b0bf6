"""vmap's axes and vjp's cotangent: what worked at the top level, or was a confusing error.

A list of axes in Myia code (``vmap(f, [None, 0, 0])``) was refused as not known at compile
time: a list literal's type forgot its elements' values when one was None. A literal list of
constants now keeps them (its type is still a list's, its element type joined), as a tuple.
"""

from __future__ import annotations

import numpy as np
import pytest

from myia import myia, vmap

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

"""``debug_nans=True``: the first operation that makes a NaN or an infinity from finite values
is reported at the user's line, in the forward pass or in the gradient of that line."""

from __future__ import annotations

import math

import numpy as np
import pytest

from myia import grad, myia


def forward_inf(x):
    y = np.log(x)
    return np.sum(y * 0.0 + x)


def backward_only(x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(np.sqrt(x)) * i  # the slope of sqrt at 0 is inf: in the gradient only
    return s


def _notes(info):
    return "\n".join(getattr(info.value, "__notes__", []))


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_a_nan_in_the_forward_pass_names_the_line_and_the_primitive(backend):
    f = myia(forward_inf, backend=backend, debug_nans=True)
    with np.errstate(all="ignore"), pytest.raises(FloatingPointError, match="log") as info:
        f(np.array([0.0, 1.0]))
    assert "y = np.log(x)" in _notes(info)
    assert "gradient" not in _notes(info)


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_an_infinity_made_in_the_backward_pass_only(backend):
    x = np.array([0.0, 1.0])
    assert myia(backward_only, backend=backend, debug_nans=True)(x) == 1.0  # finite
    with np.errstate(all="ignore"):
        assert not np.isfinite(grad(backward_only, backend=backend)(x)[0])  # unchecked
        with pytest.raises(FloatingPointError) as info:
            grad(backward_only, backend=backend, debug_nans=True)(x)
    notes = _notes(info)
    assert "np.sum(np.sqrt(x)) * i" in notes and "in the gradient of this line" in notes


def test_finite_results_and_non_finite_arguments_are_not_errors():
    f = myia(lambda x: x * 2.0, debug_nans=True)
    assert f(1.5) == 3.0
    assert math.isnan(f(math.nan))  # the NaN came in with the argument

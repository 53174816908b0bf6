"""What NumPy functions Myia refuses, and that it says why at the user's line."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

from myia import myia
from myia.errors import MyiaShapeError, MyiaTypeError

try:
    from scipy.stats import multivariate_normal
except ImportError:  # pragma: no cover - depends on the environment
    multivariate_normal = None


def repeat_by_values(a, r):
    return np.repeat(a, r)  # ERROR


def pad_ramp(a):
    return np.pad(a, 1, mode="linear_ramp")  # ERROR


def pad_too_wide(a):
    return np.pad(a, ((1, 2), (3, 4)))  # ERROR


def unique(a):
    return np.unique(a)  # ERROR


def tensordot_mismatch(a):
    return np.tensordot(a, a, axes=([0], [1]))  # ERROR


def singular_mvn(x):
    return multivariate_normal.logpdf(x, None, np.eye(3), allow_singular=True)  # ERROR


def tile_negative(a):
    return np.tile(a, -1)  # ERROR


def interp_periodic(x):
    return np.interp(x, (0.0, 1.0), (1.0, 2.0), period=1.0)  # ERROR


def cov_weighted(a):
    return np.cov(a, fweights=np.array([1, 2, 1]))  # ERROR


def nansum_into(a):
    return np.nansum(a, out=a)  # ERROR


def trapezoid_of_a_matrix_x(y, x):
    return np.trapezoid(y, x)  # ERROR


def logspace_of_bases(b):
    return np.logspace(0.0, 1.0, 3, base=b)  # ERROR


@pytest.mark.parametrize(
    "fn, args, error, match",
    [
        (repeat_by_values, (np.ones(3), np.array([1, 2, 0])), MyiaTypeError, "compile time"),
        (pad_ramp, (np.ones(3),), MyiaTypeError, "linear_ramp"),
        (pad_too_wide, (np.ones(3),), MyiaShapeError, "does not fit"),
        (tile_negative, (np.ones(3),), MyiaShapeError, "negative"),
        (unique, (np.ones(3),), MyiaTypeError, "depends on the values"),
        pytest.param(
            singular_mvn,
            (np.ones(3),),
            MyiaTypeError,
            "allow_singular",
            marks=pytest.mark.skipif(multivariate_normal is None, reason="needs SciPy"),
        ),
        (tensordot_mismatch, (np.ones((2, 3)),), MyiaShapeError, "differ"),
        (interp_periodic, (0.5,), MyiaTypeError, "period"),
        (logspace_of_bases, (np.array([2.0, 10.0]),), MyiaTypeError, "array base"),
        (cov_weighted, (np.ones(3),), MyiaTypeError, "fweights"),
        (nansum_into, (np.ones(3),), MyiaTypeError, "immutable"),
        (trapezoid_of_a_matrix_x, (np.ones((2, 3, 4)), np.ones((3, 4))), MyiaTypeError, "x must"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_refusals_point_at_the_users_line(fn: Any, args: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match) as info:
        myia(fn)(*args)
    lines, first = inspect.getsourcelines(fn)
    line = first + next(i for i, s in enumerate(lines) if s.rstrip().endswith("# ERROR"))
    frames = [x for x in info.value.frames if x.location is not None]
    assert any(x.location.filename == __file__ and x.location.line == line for x in frames)

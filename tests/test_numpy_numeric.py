"""np.polyval, np.interp, np.trapezoid, np.convolve, np.cross, the nan-reductions, np.cov and
a.tolist() beyond the table of tests/test_numpy_more.py (which checks their values, dtypes,
shapes and gradients): NumPy's errors, special values, lists of Python numbers, vmap.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from myia import myia, vmap
from myia.testing import check_grad

try:
    import jax
except ImportError:  # pragma: no cover - depends on the environment
    jax = None

BACKENDS = ["numpy", "debug"] + (["jax"] if jax is not None else [])


def convolve_nothing(a):
    return np.convolve(a, a[:0])


def convolve_middle(a):
    return np.convolve(a, a, "middle")


def cross_of_4_vectors(a):
    return np.cross(a, a)


def cross_of_scalars(a):
    return np.cross(a[0], a)


def interp_of_lengths(a):
    return np.interp(0.5, a, a[:2])


def interp_of_nothing(a):
    return np.interp(0.5, a[:0], a[:0])


def linspace_of_negative_count(a):
    return np.linspace(a, 1.0, -2)


def cov_of_3d(a):
    return np.cov(a[None, None])


@pytest.mark.parametrize(
    "fn",
    [
        convolve_nothing,
        convolve_middle,
        cross_of_4_vectors,
        cross_of_scalars,
        interp_of_lengths,
        interp_of_nothing,
        linspace_of_negative_count,
        cov_of_3d,
    ],
)
def test_user_mistakes_raise_numpys_errors(fn: Any) -> None:
    arg = np.ones(4)
    with pytest.raises(ValueError) as expected:
        fn(arg)
    with pytest.raises(ValueError) as got:
        myia(fn)(arg)
    assert str(got.value) == str(expected.value)


def _interp_specials(x):
    xp = np.array([0.0, 1.0, 1.0, 2.0])  # a repeated point: a jump
    fp = np.array([0.0, 1.0, 3.0, 4.0])
    return (
        np.interp(x, xp, fp),
        np.interp(x, xp[:1], fp[:1], left=-1.0),
        np.interp(x, np.array([0.0, 1.0]), np.array([np.inf, 1.0])),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_interp_at_special_points_is_numpys(backend: str) -> None:
    # NaN, infinities, the sample points and a jump (repeated xp), infinite fp: NumPy's
    # values, its fallbacks where slope * (x - xp[j]) + fp[j] is NaN included.
    x = np.array([np.nan, -np.inf, np.inf, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0])
    with np.errstate(all="ignore"):
        got = myia(_interp_specials, backend=backend)(x)
        want = _interp_specials(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def _nan_everywhere(x):
    y = x * np.nan
    return np.nansum(y), np.nanmean(y), np.nanmax(y), np.nanmin(y, axis=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nan_reductions_of_nans_only(backend: str) -> None:
    # 0 for np.nansum; NaN for the others, where NumPy also warns (Myia does not).
    x = np.ones((2, 3))
    got = myia(_nan_everywhere, backend=backend)(x)
    assert got[0] == 0.0 and type(got[0]) is type(np.float64(0.0))
    assert np.isnan(got[1]) and np.isnan(got[2]) and np.isnan(got[3]).all()


def _tolists(x):
    return x.tolist(), x[0].tolist(), x[0, 0].tolist(), (x > 0).tolist(), x.astype(int).tolist()


@pytest.mark.parametrize("backend", BACKENDS)
def test_tolist_gives_lists_of_python_numbers(backend: str) -> None:
    x = np.array([[1.5, -2.0, 3.25], [0.5, 7.0, -1.0]])
    got = myia(_tolists, backend=backend)(x)
    want = _tolists(x)
    assert got == want
    for g, w in zip(got, want):  # the same kinds: lists of lists of float, int or bool
        assert _kinds(g) == _kinds(w)
    assert myia(lambda a: a.tolist(), backend=backend)(np.zeros((2, 0))) == [[], []]
    f32 = np.array([1 / 3, 0.1], np.float32)
    assert myia(lambda a: a.tolist(), backend=backend)(f32) == f32.tolist()


def _kinds(v: Any) -> Any:
    if isinstance(v, list):
        return ["list", *[_kinds(e) for e in v]]
    return type(v).__name__


def _sum_of_squares_of_a_list(x):
    total = 0.0
    for row in x.tolist():
        for v in row:
            total = total + v * v
    return total


def test_gradient_through_tolist() -> None:
    x = np.array([[1.5, -2.0], [0.5, 3.0]])
    check_grad(_sum_of_squares_of_a_list, x)


def _each(x, a, v):
    y = np.where(x > 0.5, np.nan, x)
    return (
        np.interp(x, np.array([-1.0, 0.0, 2.0]), a),
        np.polyval(x, 0.5),
        np.convolve(x, v, "same"),
        np.cross(x, v),
        np.nanmean(y),
        np.nanmax(y),
        np.cov(x, a),
        np.trapezoid(x, dx=0.5),
        np.cbrt(x),
    )


def _batched(xs, a, v):
    return vmap(lambda x: _each(x, a, v))(xs)


@pytest.mark.filterwarnings("ignore:All-NaN slice", "ignore:Mean of empty slice")
@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_gives_each_examples_result(backend: str) -> None:
    rng = np.random.default_rng(0)
    xs, a, v = rng.normal(size=(5, 3)), rng.normal(size=3), rng.normal(size=3)
    xs[0] = 1.0  # NaNs only: NaN for np.nanmean and np.nanmax
    got = myia(_batched, backend=backend)(xs, a, v)
    rows = [_each(x, a, v) for x in xs]
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, np.stack([r[i] for r in rows]), rtol=1e-12, atol=1e-14)

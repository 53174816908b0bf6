"""Gradients of programs that read arrays element by element: correct, and cheap.

The sensitivity of a read ``A[i]`` goes to one element of ``A``: a loop reading k elements of
an n-element array has a gradient costing O(k) (and one O(n) buffer), not O(k * n).
"""

from __future__ import annotations

import numpy as np
import pytest

from myia import grad
from myia.testing import check_grad

BACKENDS = ["numpy", "debug"]


def minor_det(A, r, cols):
    if len(cols) == 1:
        return A[r, cols[0]]
    total = 0.0
    sign = 1.0
    for j in range(len(cols)):
        rest = cols[:j] + cols[j + 1 :]
        total = total + sign * A[r, cols[j]] * minor_det(A, r + 1, rest)
        sign = -sign
    return total


def det(A):
    return minor_det(A, 0, list(range(A.shape[0])))


@pytest.mark.parametrize("backend", BACKENDS)
def test_det_by_cofactors(backend):
    A = np.random.default_rng(0).normal(size=(4, 4))
    d = grad(det, backend=backend)(A)
    # d det(A) / dA = det(A) * inv(A).T
    np.testing.assert_allclose(d, np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-10)
    check_grad(det, A, order=2, backend=backend)


def pick(A, cols):
    s = 0.0
    for j in cols:
        s = s + A[j] * A[j]
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_list_of_indices_has_zero_sensitivity(backend):
    # A list of integers has no gradient: nothing flows back into it (once, the backward
    # pass built and added up sparse sensitivities of it at every read).
    A = np.arange(5.0)
    dA, dcols = grad(pick, "A", "cols", backend=backend)(A, [1, 2, 2])
    np.testing.assert_array_equal(dA, [0.0, 2.0, 8.0, 0.0, 0.0])
    assert dcols == [0, 0, 0]

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

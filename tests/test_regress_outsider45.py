"""Programs written the way researchers write them, where Myia's answer or message was off.

Each test is a program a user wrote (not one shaped by Myia's implementation), checked
against NumPy, finite differences or JAX's documented behaviour.
"""

from __future__ import annotations

import numpy as np
import pytest

from myia import MyiaTypeError, grad

BACKENDS = ["numpy", "debug", "jax"]

LAYERS = {
    "l1": {"W": np.full((3, 4), 0.1), "b": np.zeros(4)},
    "l2": {"W": np.full((4, 2), 0.2), "b": np.ones(2)},
}


def by_tuple(p, x):
    h = x
    for name in ("l1", "l2"):
        h = np.tanh(h @ p[name]["W"] + p[name]["b"])
    return np.sum(h)


def by_list(p, x):
    h = x
    for name in ["l1", "l2"]:
        h = np.tanh(h @ p[name]["W"] + p[name]["b"])  # the key: an element of a list
    return np.sum(h)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_dict_key_from_a_list_says_how_to_loop(backend):
    # A list's elements are known at run time: the message said only "a dict key must be
    # known at compile time, got str", which did not tell the user what to write instead.
    x = np.ones((5, 3))
    g = grad(by_tuple, backend=backend)(LAYERS, x)
    assert g["l1"]["W"].shape == (3, 4) and np.all(np.isfinite(g["l2"]["b"]))
    with pytest.raises(MyiaTypeError, match=r"loop over a tuple of keys, over the dict") as info:
        grad(by_list, backend=backend)(LAYERS, x)
    assert info.value.location.filename == __file__
    assert "# the key: an element of a list" in info.value.location.source_line()

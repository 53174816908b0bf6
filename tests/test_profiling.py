"""``myia.profile``: the time of a compiled program per user's line, forward and backward."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import line_of

from myia import grad, profile


def one_heavy_line(w, x):
    h = np.tanh(x @ w @ w @ w)  # the heavy line
    s = 0.0
    for i in range(3):
        s = s + np.sum(h * i)
    return s + np.sum(w)


W = np.random.default_rng(0).normal(size=(200, 200)) / 20
X = np.ones((200, 200))


@pytest.mark.serial
def test_the_hottest_line_is_the_heavy_one(capsys):
    p = profile(one_heavy_line)
    assert p(W, X) == one_heavy_line(W, X)
    rows = p.last.rows
    assert "the heavy line" in rows[0].source and not rows[0].backward
    assert rows[0].seconds > 0.5 * p.last.total
    assert "the heavy line" in capsys.readouterr().out


@pytest.mark.serial
def test_the_backward_pass_of_a_line_is_its_own_row():
    p = profile(grad(one_heavy_line), show=False)
    np.testing.assert_allclose(p(W, X), grad(one_heavy_line)(W, X))
    heavy = line_of(one_heavy_line, "the heavy line")
    for _ in range(3):  # calls after the first (no first-call costs); one the load spared
        p(W, X)
        top = {(r.line, r.backward) for r in p.last.rows[:2]}
        if top == {(heavy, False), (heavy, True)}:
            break
    assert top == {(heavy, False), (heavy, True)}
    assert p.last.overhead > 0
    assert "backward" in p.last.table()

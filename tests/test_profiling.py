"""``myia.profile``: the time of a compiled program per user's line, forward and backward."""

from __future__ import annotations

import numpy as np

from myia import grad, profile


def one_heavy_line(w, x):
    h = np.tanh(x @ w @ w @ w)  # the heavy line
    s = 0.0
    for i in range(3):
        s = s + np.sum(h * i)
    return s + np.sum(w)


W = np.random.default_rng(0).normal(size=(200, 200)) / 20
X = np.ones((200, 200))


def test_the_hottest_line_is_the_heavy_one(capsys):
    p = profile(one_heavy_line)
    assert p(W, X) == one_heavy_line(W, X)
    rows = p.last.rows
    assert "the heavy line" in rows[0].source and not rows[0].backward
    assert rows[0].seconds > 0.5 * p.last.total
    assert "the heavy line" in capsys.readouterr().out


def test_the_backward_pass_of_a_line_is_its_own_row():
    p = profile(grad(one_heavy_line), show=False)
    np.testing.assert_allclose(p(W, X), grad(one_heavy_line)(W, X))
    p(W, X)  # the rows of a call after the first (no first-call costs)
    top = {(r.line, r.backward) for r in p.last.rows[:2]}
    heavy = p.last.rows[0].line
    assert top == {(heavy, False), (heavy, True)}
    assert p.last.overhead > 0
    assert "backward" in p.last.table()

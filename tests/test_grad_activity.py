"""Activity analysis: what a gradient does not depend on gets no sensitivity.

``grad(f, "W")`` needs the sensitivity of ``W`` alone: the tree a recursion walks and the
sequence a loop reads are inactive (`myia.grad.activity`). The gradients stay exact (checked
against finite differences) and the optimized program computes no sensitivity for them.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
from grad_helpers import check_grad_at

from myia import grad
from myia.abstract.data import AbstractArray
from myia.ir.analysis import Scopes
from myia.opt.matcher import prim_of
from myia.primitives import P

activity = importlib.import_module("myia.grad.activity")


@dataclass
class Node:
    value: np.ndarray
    left: Optional["Node"] = None  # noqa: UP007, UP037, UP045
    right: Optional["Node"] = None  # noqa: UP007, UP037, UP045


def tree_h(t, W):
    if t.left is not None:
        if t.right is not None:
            return np.tanh(W @ np.concatenate((tree_h(t.left, W), tree_h(t.right, W))))
    return t.value


def tree_loss(t, W):
    return np.sum(tree_h(t, W))


def rnn_loss(x, W):
    h = np.zeros(W.shape[0])
    for t in range(x.shape[0]):
        h = np.tanh(x[t] + W @ h)
    return np.sum(h * h)


def _prims(g) -> set:
    scopes = Scopes(g)
    return {prim_of(n) for h in scopes.graphs for n in scopes.nodes[h] if n.is_apply}


def _tree(rng, leaves):
    if leaves == 1:
        return Node(rng.normal(size=3))
    k = int(rng.integers(1, leaves))
    return Node(np.zeros(3), _tree(rng, k), _tree(rng, leaves - k))


def test_a_tree_net_gradient_builds_no_sensitivity_of_the_tree():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(3, 6)) / 3
    trees = [_tree(rng, 5), _tree(rng, 3)]
    g = check_grad_at(tree_loss, [(t, W) for t in trees], "W")
    graph = g.specialization(trees[0], W).graph
    prims = _prims(graph)
    assert P.record_setattr not in prims
    # Only the weights' sensitivities are summed (arrays: a leaf's zero is skipped at run time).
    scopes = Scopes(graph)
    sums = [
        n for h in scopes.graphs for n in scopes.nodes[h] if n.is_apply and prim_of(n) is P.gadd
    ]
    assert all(isinstance(n.abstract, AbstractArray) for n in sums)
    # The tree's own sensitivity, which no caller reads, is not built either.
    assert P.gzeros not in prims and P.gzeros_unread in prims
    assert "lazy_zeros" not in g.generated_code(trees[0], W)


def test_an_rnn_gradient_adds_no_sensitivity_of_its_input():
    rng = np.random.default_rng(1)
    x, W = rng.normal(size=(6, 4)), rng.normal(size=(4, 4)) / 2
    g = check_grad_at(rnn_loss, [(x, W)], "W")
    assert P.array_index_add not in _prims(g.specialization(x, W).graph)


def test_second_derivative_with_respect_to_one_argument_through_branches():
    def f(x, y):
        if x > y:
            return math.sin(x) * y
        elif x == y:
            return 0.0
        return y * 2.0

    assert grad(grad(f))(1.0, 0.5) == -math.sin(1.0) * 0.5
    assert grad(grad(f))(0.1, 0.5) == 0.0


def test_the_analysis_marks_what_depends_on_the_inputs_differentiated():
    from myia.abstract import to_abstract
    from myia.frontend import parse
    from myia.infer.engine import Inferrer
    from myia.infer.specialize import specialize

    def f(x, y):
        a = x * 2.0
        b = y + 1.0
        return a * b

    inferrer = Inferrer()
    ctx, _ = inferrer.infer(parse(f), (to_abstract(1.0), to_abstract(2.0)))
    g = specialize(inferrer, ctx)
    x, y = g.parameters
    act = activity.analyze(g, [x], key="x")
    nodes = {n.debug.find_name(): n for n in Scopes(g).nodes[g] if n.is_apply}
    assert act.active(x) and not act.active(y)
    assert act.active(nodes["a"]) and not act.active(nodes["b"])
    assert act.active(g.output)


def _unused_in_loop(x, w, n):
    for _ in range(n):
        w = w * 0.5
    return np.sum(w)


def test_a_zero_gradient_the_user_receives_is_theirs_to_update():
    # The zero of an array that no path reaches is a constant of the compiled gradient; the
    # user gets a copy, so that updating it in place changes nothing of the next call.
    g = grad(_unused_in_loop, "x", "w")
    dx, dw = g(np.ones(2), np.ones(2), 3)
    assert dx.flags.writeable and not dx.any()
    dx += 5.0
    dx2, _ = g(np.ones(2), np.ones(2), 3)
    assert not dx2.any()
    assert np.allclose(dw, 0.125)

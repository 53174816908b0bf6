"""Programs and helpers shared by the optimizer tests (test_opt.py, test_opt_structure.py)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from helpers import assert_same

from myia import grad, value_and_grad
from myia.abstract import to_abstract
from myia.api import MyiaFunction
from myia.frontend import parse
from myia.infer.engine import Inferrer
from myia.infer.specialize import specialize
from myia.infer.verify_types import verify_types
from myia.ir.analysis import Scopes
from myia.opt import optimize
from myia.vm import DebugVM

# Helpers --------------------------------------------------------------------------------------


def specialized(fn, *args):
    """The typed graph of `fn` on `args`: what the optimizer receives (not optimized)."""
    graph = fn.graph() if isinstance(fn, MyiaFunction) else parse(fn)
    inferrer = Inferrer()
    ctx, _ = inferrer.infer(graph, tuple(to_abstract(a) for a in args))
    g = specialize(inferrer, ctx)
    verify_types(g)
    return g


def run(graph, args):
    """Run `graph` in a fresh reference interpreter."""
    return DebugVM().run(graph, tuple(args))


def applies(graph):
    """The applies of every graph reachable from `graph`."""
    scopes = Scopes(graph)
    return [n for g in scopes.graphs for n in scopes.nodes[g] if n.is_apply]


def optimized(fn, *args):
    g = specialized(fn, *args)
    expected = run(g, args)
    g = optimize(g)
    verify_types(g)
    assert_same(run(g, args), expected)
    return g


# Programs -------------------------------------------------------------------------------------


@dataclasses.dataclass
class Pt:
    x: float
    y: float


@dataclasses.dataclass
class Tree:
    value: float
    left: Tree | None = None
    right: Tree | None = None


C = (1.5, 2.5)


def f_sin(x, y):
    return math.sin(x) * y + x * x


def f_tanh(W, x, b):
    return np.sum(np.tanh(W @ x + b))


def branches(x, y):
    if x > y:
        return x - y
    elif x == y:
        return 0.0
    return y * 2.0


def _sum_of_neg(x):
    return np.sum(-x)


def while_sum(n):
    i = 0
    s = 0
    while i < n:
        s = s + i
        i = i + 1
    return s


def for_break(n):
    s = 0
    for i in range(n):
        if i == 7:
            break
        if i % 2 == 0:
            continue
        s = s + i
    return s


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def closures(x):
    def scale(y):
        return x * y

    def twice(f, y):
        return f(f(y))

    return twice(scale, 2.0) + scale(x)


def closure_in_loop(n):
    acc = 0.0
    i = 0
    while i < n:

        def add(v):
            return v + i  # noqa: B023 (the value i has now: closures capture values)

        acc = add(acc)
        i = i + 1
    return acc


def conditional_expression(x, y):
    return (x if x > y else y) + (x * 2.0 if x < 0 else y - 1.0)


def data(x, y):
    t = (x, y, (x, y))
    p = Pt(t[1], t[0])
    d = {"a": p.x, "b": p.y}
    lst = [d["a"], d["b"]] + [x]
    return t[2][0] + p.x * p.y + d["b"] + lst[2] + len(lst)


def tree_sum(t):
    s = t.value
    if t.left is not None:
        s = s + tree_sum(t.left)
    if t.right is not None:
        s = s + tree_sum(t.right)
    return s


def effects(x):
    print("start", x)
    y = helper_print(x) * 2.0
    print("end", y)
    return y


def helper_print(x):
    print("helper", x)
    return x + 1.0


def arrays(a, b):
    c = np.tanh(a) * 2.0 + np.exp(-a)
    return np.sum(c @ b.T, axis=0), a.shape, np.maximum(a, 0.0).sum()


def deep_loop(x, n):
    i = 0
    while i < n:
        x = x * 0.999999 + 0.000001
        i = i + 1
    return x


def tree_grad(t, w):
    return tree_sum(t) * w


def loss_rec(x, n):
    if n == 0:
        return x
    return math.sin(loss_rec(x * 1.1, n - 1))


def with_closure(x, y):
    def inner(z):
        return z * x + y

    return inner(x) * inner(y)


def tree_net(t, w):
    if t.left is not None:
        if t.right is not None:
            return math.tanh(w * (tree_net(t.left, w) + tree_net(t.right, w)))
    return t.value * w


TREE = Tree(1.0, Tree(2.0), Tree(3.0, None, Tree(4.0)))
FULL_TREE = Tree(0.5, Tree(1.0), Tree(0.2, Tree(-1.0), Tree(2.0)))

PROGRAMS = [
    ("branches", branches, (3.0, 1.0)),
    ("branches_eq", branches, (1.0, 1.0)),
    ("while_sum", while_sum, (10,)),
    ("for_break", for_break, (12,)),
    ("fact", fact, (6,)),
    ("fib", fib, (8,)),
    ("closures", closures, (1.5,)),
    ("closure_in_loop", closure_in_loop, (4,)),
    ("conditional_expression", conditional_expression, (-1.0, 2.0)),
    ("data", data, (1.0, 2.0)),
    ("tree_sum", tree_sum, (TREE,)),
    ("arrays", arrays, (np.arange(6.0).reshape(2, 3) / 7, np.ones((4, 3)))),
    ("grad_sin", grad(f_sin, "x", "y"), (1.0, 2.0)),
    ("grad_tanh", grad(f_tanh, "W", "b"), (np.ones((3, 4)) / 3, np.arange(4.0), np.ones(3))),
    ("grad_branches", grad(branches, "x", "y"), (3.0, 1.0)),
    ("grad_loop", grad(deep_loop), (1.0, 20)),
    ("grad_recursion", grad(loss_rec), (0.5, 4)),
    ("grad_closure", grad(with_closure, "x", "y"), (1.5, -0.5)),
    ("grad_data", grad(data, "x", "y"), (1.0, 2.0)),
    ("grad_tree", grad(tree_grad, "t", "w"), (TREE, 2.0)),
    ("grad_tree_net", grad(tree_net, "w"), (FULL_TREE, 0.7)),
    ("grad2_sin", grad(grad(f_sin)), (1.0, 2.0)),
    ("grad2_branches", grad(grad(branches)), (3.0, 1.0)),
    ("grad2_loop", grad(grad(deep_loop)), (1.0, 5)),
    (
        "value_and_grad_tanh",
        value_and_grad(f_tanh, "b"),
        (np.ones((2, 2)), np.ones(2), np.ones(2)),
    ),
]

"""Prints the code Myia generates for programs whose compilation chooses among options.

Run by tests/test_determinism.py under several ``PYTHONHASHSEED`` values: a union dispatch,
a choice of closures (with their gradient), the gradient of a loop and of a recursion over a
tree. The text must not depend on hashing or on where objects lie in memory.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Optional

import numpy as np

from myia import grad, myia


@dataclasses.dataclass
class Leaf:
    v: float


@dataclasses.dataclass
class Pair:
    a: float
    b: float


@dataclasses.dataclass
class Node:
    v: float
    left: Optional[Node]
    right: Optional[Node]


def union_dispatch(xs, k):
    u = xs[0] if k == 0 else (xs[1] if k == 1 else None)
    if isinstance(u, Leaf):
        return u.v * 2.0
    if isinstance(u, Pair):
        return u.a + u.b
    return 0.0


def closure_choice(x, y, k):
    f = (lambda a: a * x) if k > 0 else ((lambda a: a + y) if k < 0 else (lambda a: a - x * y))
    g = (lambda a: f(a) * 2.0) if k > 1 else f
    return g(x) + f(y)


def loop_grad(x, n):
    acc = 0.0
    i = 0
    while i < n:
        acc = acc * x + np.sin(acc + x)
        i = i + 1
    return acc


def tree_sum(t):
    s = t.v
    if t.left is not None:
        s = s + tree_sum(t.left)
    if t.right is not None:
        s = s * tree_sum(t.right)
    return s


out = [
    myia(union_dispatch).generated_code((Leaf(1.0), Pair(2.0, 3.0)), 1),
    myia(closure_choice).generated_code(1.0, 2.0, 3),
    grad(closure_choice, "x", "y").generated_code(1.0, 2.0, 3),
    grad(loop_grad).generated_code(0.5, 3),
    grad(tree_sum).generated_code(Node(1.0, Node(2.0, None, None), None)),
]
sys.stdout.write("\n#####\n".join(out))

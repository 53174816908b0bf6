"""Myia's basics: compile a recursive function, a loop and a tree fold; show the signatures.

Each call compiles the function for the types of its arguments (once per signature): `fact`
compiles for an int and for a float, `newton_sqrt` for a float, `tree_sum` once for trees of
every shape (a recursive dataclass has one type).

Run: ``python examples/basics.py``
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from myia import myia


@myia
def fact(n):
    """Recursion: the int and float branches promote to float when ``n`` is a float."""
    if n <= 1:
        return 1
    return n * fact(n - 1)


@myia
def newton_sqrt(a):
    """A loop whose trip count depends on the value of ``a``."""
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


@dataclass
class Tree:
    value: np.ndarray
    left: Tree | None = None
    right: Tree | None = None


@myia
def tree_sum(t):
    """Recursion over a tree: every tree shape has one type, so one compilation."""
    s = np.sum(t.value)
    if t.left is not None:
        s = s + tree_sum(t.left)
    if t.right is not None:
        s = s + tree_sum(t.right)
    return s


def random_tree(rng: np.random.Generator, depth: int) -> Tree:
    if depth == 0 or rng.random() < 0.3:
        return Tree(rng.normal(size=4))
    return Tree(rng.normal(size=4), random_tree(rng, depth - 1), random_tree(rng, depth - 1))


def main(n_trees: int = 3, depth: int = 4) -> dict:
    """Call the three functions; print and return what they compiled for."""
    print("fact(10)        =", fact(10))
    print("fact(5.0)       =", fact(5.0))
    for a in (2.0, 10.0, 12345.0):
        print(f"newton_sqrt({a}) = {newton_sqrt(a)!r}  (numpy: {np.sqrt(a)!r})")
    rng = np.random.default_rng(0)
    for _ in range(n_trees):
        t = random_tree(rng, depth)
        print(f"tree_sum(...)    = {tree_sum(t):.6f}")
    print()
    for f in (fact, newton_sqrt, tree_sum):
        sigs = ", ".join(str(s) for s in f.compiled_signatures())
        print(f"{f.__name__:<12} compiled for: {sigs}")
    return {f.__name__: f.compiled_signatures() for f in (fact, newton_sqrt, tree_sum)}


if __name__ == "__main__":
    main()

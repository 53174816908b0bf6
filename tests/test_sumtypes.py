"""Sum types: narrowing through ``and``/``or``, conditional expressions and early returns."""

from __future__ import annotations

import dataclasses
from types import NoneType
from typing import Optional

import pytest

from myia import myia
from myia.testing import check_grad


@dataclasses.dataclass
class T:
    v: float
    left: Optional[T]
    right: T | None = None


def narrow_and(t):
    if t.left is not None and t.left.v > 0:
        return t.left.v * t.v
    return t.v


def narrow_or(t):
    if t.left is None or t.left.v < 0:
        return t.v
    return t.left.v * t.v


def narrow_not_or(t):
    if not (t.left is None or t.left.v < 0):
        return t.left.v * t.v
    return t.v * 3.0


def narrow_ifexp(t):
    return t.left.v * t.v if t.left is not None else 2.0 * t.v


def narrow_ifexp_local(t):
    x = t.left
    return x.v * t.v if x is not None else t.v


def narrow_and_value(t):
    return t.left is not None and t.left.v > 1.0


def narrow_early(t):
    if t.left is None:
        return t.v
    return t.left.v * t.v


def narrow_nested(t):
    # Each operand of the `and` sees the chains the operands before it tested; the body sees
    # those of the first operand (`t.left`).
    if t.left is not None and t.left.left is not None and t.left.left.v > 0:
        return t.left.v * t.v
    return t.v + 1.0


def narrow_nested_ifs(t):
    if t.left is not None:
        if t.left.left is not None and t.left.left.v > 0:
            return t.left.left.v * t.v
    return t.v + 1.0


def narrow_isinstance(t):
    if isinstance(t.right, T):
        return t.right.v + t.v
    if isinstance(t.left, NoneType):
        return -t.v
    return t.left.v


def narrow_isinstance_and(t):
    if isinstance(t.right, T) and t.right.v > 0:
        return t.right.v + t.v
    return t.v


TREES = [
    T(2.0, None),
    T(2.0, T(3.0, None)),
    T(2.0, T(-3.0, None)),
    T(1.5, T(3.0, T(4.0, None)), T(0.5, None)),
    T(1.5, T(3.0, T(-4.0, None)), T(-0.5, None)),
]

FUNCS = [
    narrow_and,
    narrow_or,
    narrow_not_or,
    narrow_ifexp,
    narrow_ifexp_local,
    narrow_early,
    narrow_nested,
    narrow_nested_ifs,
    narrow_isinstance,
    narrow_isinstance_and,
]


@pytest.mark.parametrize("fn", FUNCS + [narrow_and_value])
@pytest.mark.parametrize("tree", TREES)
def test_narrowing(check, fn, tree):
    check(fn, tree)


@pytest.mark.parametrize("fn", FUNCS)
@pytest.mark.parametrize("tree", TREES)
def test_narrowing_grad(fn, tree):
    check_grad(fn, tree)


def test_narrowing_one_signature():
    f = myia(narrow_and)
    for tree in TREES[1:3]:
        assert f(tree) == narrow_and(tree)
    assert len(f.compiled_signatures()) == 1

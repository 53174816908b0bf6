"""`to_abstract` of records and arrays: the fast tree walk gives the results and errors of the
plain one (`reference`, the walk as first written: every field of every node, in order)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import pytest

from myia.abstract import to_abstract
from myia.abstract.data import BOTTOM, fold
from myia.abstract.lattice import TypeMismatch, dtype_name, join, recursive_fields


def reference(value: Any) -> Any:
    """`to_abstract` with records walked field by field (no generated code, no shortcut)."""
    if not (dataclasses.is_dataclass(value) and not isinstance(value, type)):
        return to_abstract(value)
    from myia.abstract.data import AbstractRecord

    cls = type(value)
    rec = recursive_fields(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    if not rec:
        return AbstractRecord(cls, tuple(reference(getattr(value, n)) for n in names))
    fields = [rec.get(n, BOTTOM) for n in names]
    stack = [value]
    while stack:
        node = stack.pop()
        for i, n in enumerate(names):
            v = getattr(node, n)
            if n in rec:
                if type(v) is cls:
                    stack.append(v)
                elif v is not None:
                    raise TypeError(f"field {n} of a {cls.__name__} holds a {type(v).__name__}")
            else:
                fields[i] = join(fields[i], fold(reference(v), cls))
    return AbstractRecord(cls, tuple(fields))


@dataclass
class Tree:
    value: Any
    left: Optional["Tree"] = None  # noqa: UP007, UP037, UP045
    right: Optional["Tree"] = None  # noqa: UP007, UP037, UP045
    extra: Any = 0.0


@dataclass
class Pair:
    a: Any
    b: Any


def build(leaves: list[Any], node_value: Any = None) -> Tree:
    """A tree whose leaves (left to right) hold `leaves`, nodes `node_value` (default leaf 0)."""
    trees = [Tree(v) for v in leaves]
    while len(trees) > 1:
        trees = [
            Tree(trees[0].value if node_value is None else node_value, trees[i], trees[i + 1])
            if i + 1 < len(trees)
            else trees[i]
            for i in range(0, len(trees), 2)
        ]
    return trees[0]


def outcome(fn: Any, value: Any) -> Any:
    try:
        return ("ok", fn(value))
    except (TypeError, TypeMismatch) as exc:
        return (type(exc).__name__, str(exc))


f64 = np.zeros(4)
CASES = {
    "arrays": build([np.ones(4) for _ in range(9)], f64),
    "one node": Tree(np.ones(3)),
    "other shape": build([np.ones(4)] * 5 + [np.ones(5)], f64),
    "other dtype": build([np.ones(4)] * 5 + [np.ones(4, np.float32)], f64),
    "big-endian": build([np.ones(4)] * 3 + [np.ones(4, ">f8")], f64),
    "scalars": build([1.0, 2, np.float32(3.0), True]),
    "ints then floats": build([1, 2, 3.0]),
    "bool and int": build([True, 1]),
    "array then scalar": build([np.ones(4), 1.0]),
    "scalar then array": build([1.0, np.ones(4)]),
    "tuples": build([(np.ones(2), 1.0), (np.ones(2), 2.0)]),
    "nested records": build([Pair(np.ones(2), 1), Pair(np.ones(2), 2.0)]),
    "a subtree as a value": build([Tree(1.0), Tree(2.0)]),
    "none values": build([None, None]),
    "bad child": Tree(f64, Tree(f64), Pair(1, 2)),
    "bad child deep": build([np.ones(4)] * 6 + [np.ones(4)], f64),
    "bad child and bad value": Tree(f64, Tree(np.ones(3)), 3.0),
    "string leaf": build(["a", "b"]),
    "object leaf": build([object()]),
    "record": Pair(np.ones(3), (1.0, np.float32(2.0))),
    "record of trees": Pair(build([np.ones(2)] * 3), build([1.0, 2.0])),
}
CASES["bad child deep"].left.left.right = 5  # type: ignore[union-attr]


@pytest.mark.parametrize("name", list(CASES))
def test_the_fast_walk_gives_the_plain_walks_result_or_error(name):
    value = CASES[name]
    expected = outcome(reference, value)
    assert outcome(to_abstract, value) == expected
    assert outcome(to_abstract, value) == expected  # the walker of the class is cached


def test_a_shape_changed_in_place_is_seen():
    leaves = [np.ones(4) for _ in range(4)]
    t = build(leaves, np.zeros(4))
    a = to_abstract(t)
    leaves[2].shape = (2, 2)
    assert outcome(to_abstract, t) == outcome(reference, t) != ("ok", a)
    leaves[2].shape = (4,)
    assert to_abstract(t) == a


def test_dtype_names():
    for dtype in [np.dtype(c) for c in "?bhilqBHILQefdgFDG"] + [np.dtype(">f4"), np.dtype("S3")]:
        assert dtype_name(dtype) == dtype_name(dtype) == dtype.name
    assert to_abstract(np.float32(1.0)).dtype == "float32"
    assert to_abstract(np.zeros(2, np.int16)).dtype == "int16"

"""The text printer: golden printouts of parsed functions, and its naming rules.

The expected printouts are in ``tests/golden/<function>.txt``. After a deliberate change to
the frontend or the printer, regenerate them with ``MYIA_REGEN_GOLDEN=1 pytest
tests/test_printer.py`` and review the diff.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from myia.frontend import parse
from myia.ir.clone import clone
from myia.ir.node import Constant, Graph
from myia.ir.printer import GraphPrinter, print_graph, str_node
from myia.primitives import P

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("MYIA_REGEN_GOLDEN") == "1"


# Functions whose printouts are stored ------------------------------------------------------


def while_loop(n):
    i = 0
    s = 0
    while i < n:
        s = s + i
        i = i + 1
    return s


def for_loop(xs):
    total = 0
    for x in xs:
        if x < 0:
            continue
        total = total + x
    return total


def closure(x, scale=2):
    def add_x(y, z=scale):
        return (x + y) * z

    return add_x(1) + (lambda: x)()


def recursion(n):
    if n <= 1:
        return 1
    return n * recursion(n - 1)


def branch(x, y):
    a = x if x > y else y
    if 0 < a < 10 and y:
        b = a - 1
    elif a == 10:
        b = 0
    else:
        b = -a
        print("negative", b)
    return b, math.pi


GOLDEN_FUNCTIONS = [while_loop, for_loop, closure, recursion, branch]


@pytest.mark.parametrize("fn", GOLDEN_FUNCTIONS, ids=lambda f: f.__name__)
def test_golden(fn):
    text = print_graph(parse(fn))
    path = GOLDEN / f"{fn.__name__}.txt"
    if REGEN:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"missing {path}: run with MYIA_REGEN_GOLDEN=1"
    assert text == path.read_text()


@pytest.mark.parametrize("fn", GOLDEN_FUNCTIONS, ids=lambda f: f.__name__)
def test_printout_is_stable(fn):
    g = parse(fn)
    text = print_graph(g)
    assert print_graph(g) == text
    # Copies print the same: names come from the originals, nothing depends on identity.
    assert print_graph(clone(g)) == text
    assert "0x" not in text


# Naming rules -------------------------------------------------------------------------------


def test_hand_built_graph():
    g = Graph("f")
    x = g.add_parameter("x")
    x2 = g.add_parameter("x")
    anon = g.add_parameter()
    a = g.apply(P.add, x, x2)
    a.debug.name = "a"
    b = g.apply(P.mul, a, anon)
    b.debug.name = "a"
    c = g.apply(P.make_tuple, b, 1.5, "s", None, True)
    g.return_(c)
    expected = """\
graph f(x, x.2, _2) {
  %a = add(x, x.2)
  %a.2 = mul(%a, _2)
  %1 = make_tuple(%a.2, 1.5, 's', None, True)
  return %1
}
"""
    assert print_graph(g) == expected


def test_free_variables_and_graph_names():
    outer = Graph("f")
    a = outer.add_parameter("a")
    t = outer.apply(P.mul, a, 2)
    inner = Graph("f")  # same name as its parent
    c = inner.add_parameter("c")
    inner.return_(inner.apply(P.add, t, inner.apply(P.add, a, c)))
    outer.return_(outer.apply(inner, 1))
    expected = """\
graph f(a) {
  %1 = mul(a, 2)
  %2 = @f.2(1)
  return %2
}

graph f.2(c) {
  %1 = add(f.a, c)
  %2 = add(f.%1, %1)
  return %2
}
"""
    assert print_graph(outer) == expected
    # Printing the inner graph alone still names the free variables by their owner.
    expected = """\
graph f(c) {
  %1 = add(f.2.a, c)
  %2 = add(f.2.%1, %1)
  return %2
}
"""
    assert print_graph(inner) == expected


def test_header_flags_defaults_and_reachable():
    g = Graph("h")
    g.add_parameter("x")
    g.add_parameter("rest")
    g.add_parameter("k")
    g.flags["vararg"] = True
    g.flags["core"] = True
    g.flags["level"] = 2
    g.kwonly = 1
    g.defaults["k"] = Constant(3)
    callee = Graph("callee")
    callee.return_(Constant(0))
    g.return_(g.apply(callee))
    text = print_graph(g, reachable=False)
    expected = """\
graph h(x, *rest, k=3) {  # flags: core, level=2
  %1 = @callee()
  return %1
}
"""
    assert text == expected
    assert "graph callee()" in print_graph(g)
    g.flags.clear()
    assert print_graph(g, reachable=False).startswith("graph h(x, rest, *, k=3) {\n")


@dataclass
class Point:
    x: int


def test_constants():
    p = GraphPrinter()
    assert p.constant(P.switch) == "switch"
    assert p.constant(3) == "3"
    assert p.constant(-2.5) == "-2.5"
    assert p.constant("abc") == "'abc'"
    assert p.constant("x" * 100).endswith("...'") and len(p.constant("x" * 100)) <= 40
    assert p.constant((1,)) == "(1,)"
    assert p.constant((1, (2, ("a", (3,))))) == "(1, (2, (...)))"
    assert p.constant(list(range(20))) == "[0, 1, 2, 3, 4, 5, 6, 7, ...]"
    assert p.constant(slice(None, 2)) == "slice(None, 2, None)"
    assert p.constant(np.zeros((2, 3))) == "ndarray(float64, (2, 3))"
    assert p.constant(np.float32(1.5)) == "float32(1.5)"
    assert p.constant(Point) == "<class Point>"
    assert p.constant(Point(1)) == "Point(x=1)"
    assert p.constant(np) == "<module numpy>"
    assert p.constant(test_constants) == "<function test_constants>"
    assert p.constant(object()) == "<object>"
    g = Graph("g")
    assert p.constant(g) == "@g"


def test_annotate_and_str_node():
    g = Graph("f")
    x = g.add_parameter("x")
    y = g.apply(P.neg, x)
    y.abstract = "int"
    g.return_(y)
    text = print_graph(g, annotate=lambda n: n.abstract)
    assert "  %1 = neg(x)  # int\n" in text
    assert str_node(y) == "f: %1 = neg(x)"
    assert str_node(x) == "x"


def test_broken_graph_still_prints():
    g = Graph("f")
    assert print_graph(g) == "graph f() {\n  return <no output>\n}\n"

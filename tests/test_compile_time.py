"""Compile time: analyses made once where they were made again and again.

Each test counts the work a stage does (the `Scopes` it builds, the lists it walks, the
hashes it computes) on a small program, so that what was quadratic in the size of a
program stays linear; the programs' results are checked as well.
"""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

from myia import vmap
from myia.abstract import AbstractScalar
from myia.api import myia
from myia.frontend import source
from myia.grad import closures as closures_module
from myia.grad import forward as forward_module
from myia.infer.calls import bind_primitive_args
from myia.infer.engine import Context
from myia.ir import analysis
from myia.ir.analysis import toposort
from myia.ir.node import Graph
from myia.primitives import P
from myia.testing import check_jvp

BACKENDS = ["debug", "numpy", "jax"]


def test_context_hash_is_computed_once():
    hashed = []

    class Counted(AbstractScalar):
        def __hash__(self):
            hashed.append(self)
            return super().__hash__()

    g = Graph()
    outer = Context(g, (Counted("float64"),))
    inner = Context(g, (AbstractScalar("int64"),), outer)
    for _ in range(5):
        hash(inner)
        hash(outer)
    assert len(hashed) == 1
    assert inner == Context(g, (AbstractScalar("int64"),), outer)
    assert hash(inner) == hash(Context(g, (AbstractScalar("int64"),), outer))
    assert inner != Context(g, (AbstractScalar("float64"),), outer)
    assert outer != inner


def test_primitive_called_positionally_is_not_bound_again(monkeypatch):
    binds = []
    bind = inspect.Signature.bind

    def counting(self, *args, **kwargs):
        binds.append(args)
        return bind(self, *args, **kwargs)

    monkeypatch.setattr(inspect.Signature, "bind", counting)
    f64 = AbstractScalar("float64")
    assert bind_primitive_args(P.add, [f64, f64], []) == [f64, f64]
    assert binds == []


def test_find_code_walks_a_module_once(monkeypatch):
    # Functions defined at the top of the module are found among its statements; nested
    # ones and lambdas in an index made by one walk of the module.
    walks = []
    walk = ast.walk

    def counting(node):
        walks.append(node)
        return walk(node)

    monkeypatch.setattr(source.ast, "walk", counting)
    text = "def a(x):\n    return x\n\n\ndef b(x):\n    f = lambda y: y + x\n"
    text += "    def g(z):\n        return z\n    return f, g\n"
    tree = ast.parse(text)
    code = compile(tree, "<test>", "exec")
    fns = {c.co_name: c for c in code.co_consts if inspect.iscode(c)}
    assert source.find_code(tree, fns["a"]).name == "a"
    assert source.find_code(tree, fns["b"]).name == "b"
    assert walks == []
    inner = {c.co_name: c for c in fns["b"].co_consts if inspect.iscode(c)}
    assert isinstance(source.find_code(tree, inner["<lambda>"]), ast.Lambda)
    assert source.find_code(tree, inner["g"]).name == "g"
    assert source.find_code(tree, compile("def c(): pass", "<t>", "exec").co_consts[0]) is None
    assert len(walks) == 1


def test_toposort_lists_each_nodes_inputs_once(monkeypatch):
    # Each node's successors were listed again after each of its inputs was visited:
    # quadratic in the number of inputs of a node.
    calls = []
    successors = analysis._successors

    def counting(graph, node, deps):
        calls.append(node)
        return successors(graph, node, deps)

    monkeypatch.setattr(analysis, "_successors", counting)
    g = Graph()
    xs = [g.add_parameter(f"x{i}") for i in range(40)]
    terms = [g.apply(P.mul, x, x) for x in xs]
    g.output = g.apply(P.make_tuple, *terms)
    order = toposort(g)
    assert order[-1] is g.output
    assert [n for n in order if n.is_apply][:-1] == terms
    assert len(calls) == len(set(calls))


def _counting_scopes(monkeypatch, module):
    made = []

    class Counting(analysis.Scopes):
        def __init__(self, *args, **kwargs):
            made.append(args)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(module, "Scopes", Counting)
    return made


def _inner(x):
    return np.sin(x) * x


def _middle(x):
    return _inner(x) + _inner(x * 2.0)


def _outer(x):
    return _middle(x) * _middle(x + 1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_forward_mode_indexes_the_program_once(monkeypatch, backend):
    # The tangent transform of a scope transforms the functions it calls with the same
    # `Scopes`: one per transformation, not one per function called (each walking all it
    # reaches).
    made = _counting_scopes(monkeypatch, forward_module)
    check_jvp(_outer, 0.7, backend=backend)
    assert len(made) == 1


def _scaled(x, w, b):
    return vmap(lambda v: v * w + b)(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_a_closure_indexes_its_scopes_once(monkeypatch, backend):
    # The free variables of the closure are checked with one `Scopes` (and the lifted copy
    # made with one more), not one per free variable.
    made = _counting_scopes(monkeypatch, closures_module)
    x = np.array([1.0, 2.0, 3.0])
    out = myia(_scaled, backend=backend)(x, 2.0, 0.5)
    np.testing.assert_allclose(np.asarray(out), x * 2.0 + 0.5)
    assert len(made) == 2

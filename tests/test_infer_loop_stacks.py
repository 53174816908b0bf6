"""The joins of a loop's stacks (`myia.infer.loop_stacks`): closures of one graph merged."""

from __future__ import annotations

from types import SimpleNamespace

from myia.abstract.data import AbstractFunction, AbstractScalar, GraphFunction
from myia.infer.engine import Context
from myia.infer.loop_stacks import LoopStacks
from myia.ir.node import Graph


class Joins(LoopStacks):
    """The state `LoopStacks` reads, of closures capturing nothing."""

    def __init__(self):
        self.closure_reps = {}
        self.closure_alias = {}
        self.scopes = SimpleNamespace(free_variables_total={})


def closures():
    parent, body = Graph("loop"), Graph("bprop")
    a = GraphFunction(body, Context(parent, (AbstractScalar("float64"),)))
    b = GraphFunction(body, Context(parent, (AbstractScalar("int64"),)))
    return a, b, AbstractFunction(frozenset([a, b]))


def test_closures_of_one_graph_are_one_option():
    joins = Joins()
    a, b, both = closures()
    assert joins._one_per_graph(both, frozenset([a])) == AbstractFunction(frozenset([a]))
    assert joins.closure_rep(b) == a


def test_two_joins_keeping_either_closure_make_one_stand_for_the_other():
    # A second join keeping the closure the first dropped: each standing for the other,
    # `closure_rep` (and the specialization of both) never returned.
    joins = Joins()
    a, b, both = closures()
    joins._one_per_graph(both, frozenset([a]))
    assert joins._one_per_graph(both, frozenset([b])) == AbstractFunction(frozenset([b]))
    assert joins.closure_reps == {b: a}
    assert joins.closure_rep(b) == a
    assert joins.closure_rep(a) == b  # a's context stands for b's (`closure_alias`)

"""The optimizer's output: the gradient of straight-line code is straight-line code, loops stay
loops, closures go where they can, and the pass list prints and verifies."""

from __future__ import annotations

import importlib.util
import math
import tracemalloc

import numpy as np
import pytest
from helpers import assert_same, scalar_loop
from opt_programs import (
    FULL_TREE,
    applies,
    f_sin,
    f_tanh,
    fact,
    optimized,
    run,
    specialized,
    tree_net,
)

from myia import grad, value_and_grad
from myia.abstract.data import (
    AbstractFunction,
    AbstractRecord,
    AbstractTuple,
)
from myia.ir.analysis import Scopes, reachable_graphs, toposort
from myia.ir.clone import clone
from myia.ir.node import Graph
from myia.ir.verify import VerifyError
from myia.opt import PASS_LIBRARY, PASSES, Pass, optimize, run_passes
from myia.opt.matcher import Matcher, prim_of, rewrite
from myia.opt.passes import ALL_RULES
from myia.opt.sweep import run_sweeps
from myia.primitives import P
from myia.vm import DebugVM

# The gradient of straight-line code is straight-line code ---------------------------------------


def assert_straight_line(g: Graph) -> None:
    """One graph, no tuple taken apart, no closure, partial, environment or scalar zero."""
    assert reachable_graphs(g) == [g]
    out = g.output
    if prim_of(out) is P.seq:
        # The forward value is kept where it may raise as the function does (``math.sin`` of
        # an infinite float); code generation writes only what may raise of it.
        out = out.inputs[2]
    nodes = [n for n in toposort(g) if n.is_apply]
    for n in nodes:
        p = prim_of(n)
        assert p is not None, f"a call to something else than a primitive: {n}"
        assert p not in (P.tuple_getitem, P.partial, P.gzeros, P.gadd, P.tuple_concat), n
        assert not p.name.startswith("env_"), n
        assert p is not P.make_tuple or n is out, "a tuple is built inside"
        for i in n.inputs:
            assert not (i.is_constant and isinstance(i.value, Graph)), "a graph constant"


def test_gradient_of_scalar_straight_line_code():
    g = optimized(grad(f_sin, "x", "y"), 1.0, 2.0)
    assert_straight_line(g)
    ops = sorted(prim_of(n).name for n in toposort(g) if n.is_apply)
    # The result, and the forward value sin(x) * y + x * x sequenced before it (it may raise).
    result = ["add", "add", "cos", "make_tuple", "mul", "sin"]
    assert ops == sorted([*result, "seq", "add", "mul", "mul"])
    # The forward value is not computed: only its sin, which may raise, and which dy reuses.
    source = grad(f_sin, "x", "y").specialization(1.0, 2.0).executable.source
    assert source.count("math.sin(") == 1 and "x * x" not in source, source


def test_gradient_of_array_straight_line_code():
    args = (np.ones((3, 4)) / 3, np.arange(4.0), np.ones(3))
    g = optimized(grad(f_tanh, "W", "b"), *args)
    assert_straight_line(g)
    assert len([n for n in toposort(g) if n.is_apply]) <= 12


def test_second_order_gradient_of_straight_line_code():
    g = optimized(grad(grad(f_sin)), 1.0, 2.0)
    assert_straight_line(g)


def test_mlp_gradient_is_one_graph():
    from test_grad_mlp import cost, make_problem

    model, x, y = make_problem(n=4, hidden=3)
    g = optimized(value_and_grad(cost, "model"), model, x, y)
    assert reachable_graphs(g) == [g]
    leftovers = (P.gadd, P.gzeros, P.tuple_concat, P.seq_slice_add, P.env_getitem, P.env_new)
    for n in toposort(g):
        assert prim_of(n) not in leftovers, n
        if prim_of(n) is P.tuple_getitem:
            assert n.inputs[1].is_parameter or prim_of(n.inputs[1]) is P.record_getattr


def test_mlp_step_over_a_tuple_of_layers_is_one_graph():
    # Folding ``tuple_len(make_tuple(...))`` to a constant kept the calls making the items
    # alive (for their errors): 6 graphs and 156 nodes instead of 1 and 80.
    from benchmarks.mlp_step import mlp_step, problem

    g = optimized(mlp_step, *problem(True, "small").inputs[0])
    assert reachable_graphs(g) == [g]
    assert len(applies(g)) <= 90


def test_names_and_locations_survive():
    def f(x):
        hidden = math.sin(x) * 2.0
        return hidden * hidden

    g = optimized(grad(f), 1.0)
    names = {n.debug.find_name() for n in toposort(g) if n.is_apply}
    assert "hidden" in names
    files = {loc.filename for n in toposort(g) if n.is_apply if (loc := n.debug.find_location())}
    assert __file__ in files


# Loops, recursion, tail calls -------------------------------------------------------------------


def count_while(n):
    i = 0
    s = 0
    while i < n:
        s += i
        i += 1
    return s


def test_loops_stay_loops_and_tail_calls_stay_tail_calls():
    g = optimized(count_while, 10)
    graphs = reachable_graphs(g)
    assert len(graphs) > 1  # the loop is not unrolled
    for h in graphs:
        out = h.output
        assert prim_of(out) not in (P.convert, P.seq), "a tail call wrapped in a conversion"


def test_optimized_loop_runs_in_constant_space():
    g = optimize(specialized(count_while, 5000))
    vm = DebugVM()
    vm.run(g, (10,))
    tracemalloc.start()
    try:
        assert vm.run(g, (5000,)) == count_while(5000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000


def test_recursion_is_not_inlined():
    g = optimized(fact, 5)
    assert any(Scopes(g).is_recursive(h) for h in reachable_graphs(g))


def test_dead_loop_variables_are_removed():
    def f(n):
        i = 0
        unused = 1.0
        while i < n:
            unused = unused * 2.0
            i = i + 1
        return i

    g = specialized(f, 3)
    before = {h.name: len(h.parameters) for h in reachable_graphs(g)}
    g = optimized(f, 3)
    after = {h.name: len(h.parameters) for h in reachable_graphs(g)}
    header = next(k for k in after if k.endswith("loop_header"))
    assert after[header] == before[header] - 1


def test_a_function_called_in_a_loop_is_inlined_there():
    def f(x, n):
        def step(v):
            return v * x + 1.0

        i = 0
        y = x
        while i < n:
            y = step(y)
            i = i + 1
        return y

    g = specialized(f, 1.5, 4)
    expected = run(g, (1.5, 4))
    g = run_passes(g, [PASS_LIBRARY["constants"]], verify=True)
    assert_same(run(g, (1.5, 4)), expected)
    g = optimized(f, 1.5, 4)
    graphs = reachable_graphs(g)
    assert not any(h.name == "step" for h in graphs)  # inlined in the loop's body
    assert all(Scopes(g).parents[h] is None for h in graphs)  # no closure left


def test_the_range_a_for_loop_carries_is_flattened():
    def f(x, n):
        for i in range(n):
            x = x * 0.5 + float(i)
        return x

    g = specialized(f, 1.5, 6)
    expected = run(g, (1.5, 6))
    g = run_passes(g, [PASS_LIBRARY["flatten"]], verify=True)
    assert_same(run(g, (1.5, 6)), expected)
    g = optimized(f, 1.5, 6)
    assert_same(run(g, (1.5, 6)), expected)
    for h in reachable_graphs(g):
        assert not any(isinstance(p.abstract, AbstractRecord) for p in h.parameters)
        for node in Scopes(h).nodes[h]:
            assert not (
                node.is_apply
                and node.inputs[0].is_constant
                and node.inputs[0].value is P.make_record
            )


def _fixed_loop(x, w):
    y = x
    for i in range(4):  # a known trip count: the first iteration is peeled
        y = math.sin(y * w) + float(i)
    return y


@pytest.mark.parametrize("fn, args", [(scalar_loop, (0.3, 7)), (_fixed_loop, (0.3, 1.5))])
def test_a_loop_gradient_pushes_values_not_closures(fn, args):
    g = specialized(grad(fn, 0), *args)
    expected = run(g, args)
    g = run_passes(g, [PASSES[0], PASS_LIBRARY["defunc"]], verify=True)
    assert_same(run(g, args), expected)
    g = optimized(grad(fn, 0), *args)
    pushes = [n for n in applies(g) if prim_of(n) is P.stack_push]
    assert pushes
    assert not any(isinstance(n.inputs[2].abstract, AbstractFunction) for n in pushes)
    # The sensitivities the backward loop carries are numbers, not a tuple rebuilt each time.
    params = [p for h in reachable_graphs(g) for p in h.parameters]
    assert not any(isinstance(p.abstract, AbstractTuple) for p in params)


def test_the_tail_of_a_branch_moves_into_the_branches():
    # Each `if` of a gradient returns a backpropagator that wraps its branch's: once the
    # wrappers move into the branches and merge there, a call makes one closure, not three.
    g = specialized(grad(tree_net, "w"), FULL_TREE, 0.7)
    expected = run(g, (FULL_TREE, 0.7))
    before = run_passes(clone(g), [PASSES[0]], verify=True)
    closures = [h for h in reachable_graphs(before) if Scopes(before).parents[h] is not None]
    assert len(closures) > 3
    g = run_passes(g, [PASSES[0], PASS_LIBRARY["tails"]], verify=True)
    assert_same(run(g, (FULL_TREE, 0.7)), expected)
    g = optimized(grad(tree_net, "w"), FULL_TREE, 0.7)
    scopes = Scopes(g)
    # One backpropagator for each way out of `tree_net`: a node, or a leaf by either test.
    assert len([h for h in scopes.graphs if scopes.parents[h] is not None]) == 3


def test_lambda_lifting_leaves_no_closure_that_is_only_called():
    def f(x, n):
        i = 0
        while i < n:
            x = x * 2.0 if x < 100.0 else x - float(i)
            i = i + 1
        return x

    g = specialized(f, 1.5, 6)
    expected = run(g, (1.5, 6))
    g = run_passes(g, [PASS_LIBRARY["lift"]], verify=True)
    assert_same(run(g, (1.5, 6)), expected)
    scopes = Scopes(g)
    assert all(scopes.parents[h] is None for h in scopes.graphs)


# The pass list ----------------------------------------------------------------------------------


def test_print_passes(monkeypatch, capsys):
    monkeypatch.setenv("MYIA_PRINT_PASSES", "1")
    optimize(specialized(f_sin, 1.0, 2.0))
    out = capsys.readouterr().out
    for p in PASSES:
        assert f"# ---- after pass {p.name}" in out
    assert "graph f_sin(x, y)" in out


def test_verify_after_each_pass_names_the_pass():
    def broken(graph):
        graph.output = graph.parameters[0]  # an int where a float is returned
        graph.output.abstract = None
        return graph

    with pytest.raises(VerifyError, match="after optimizer pass broken"):
        run_passes(specialized(f_sin, 1.0, 2.0), [Pass("broken", broken)], verify=True)


def test_rules_need_a_lhs_rhs_docstring():
    with pytest.raises(ValueError, match="lhs => rhs"):

        @rewrite(P.add)
        def undocumented(node, opt):
            """Do something."""

    assert all("=>" in r.lhs_rhs for r in Matcher(ALL_RULES).rules)


def test_sweeps_are_linear(tmp_path):
    # The rewrites done on the gradient of a chain of n operations grow like n.
    def chain(n):
        lines = ["import math", "", "", "def f(x):", "    y = x"]
        lines += [f"    y = math.sin(y) * x + {k}.0" for k in range(n)]
        lines.append("    return y")
        path = tmp_path / f"chain{n}.py"
        path.write_text("\n".join(lines) + "\n")
        spec = importlib.util.spec_from_file_location(f"chain{n}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.f

    counts = []
    for n in (25, 100):
        g = specialized(grad(chain(n)), 0.5)
        counts.append(sum(run_sweeps(g, ALL_RULES).values()))
    assert counts[1] <= 4 * counts[0] * 1.1

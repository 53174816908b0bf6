"""The optimizer: every rewrite fires and keeps what programs compute, every pass keeps it on a
table of programs (run in the reference interpreter before and after), and the gradient of
straight-line code comes out as straight-line code."""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import tracemalloc

import numpy as np
import pytest
from helpers import assert_same, scalar_loop

from myia import grad, value_and_grad
from myia.abstract import to_abstract
from myia.abstract.data import (
    AbstractConstant,
    AbstractFunction,
    AbstractRecord,
    AbstractTuple,
)
from myia.api import MyiaFunction
from myia.frontend import parse
from myia.infer.engine import Inferrer
from myia.infer.specialize import specialize
from myia.infer.verify_types import verify_types
from myia.ir.analysis import Scopes, reachable_graphs, toposort
from myia.ir.clone import clone
from myia.ir.node import Apply, Constant, Graph
from myia.ir.verify import VerifyError
from myia.opt import PASS_LIBRARY, PASSES, Pass, optimize, run_passes
from myia.opt.matcher import Matcher, prim_of, rewrite
from myia.opt.passes import ALL_RULES
from myia.opt.sweep import run_sweeps
from myia.primitives import P
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


# Every pass keeps what programs compute ---------------------------------------------------------


@pytest.mark.parametrize("name, fn, args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_passes_preserve_results(name, fn, args):
    base = specialized(fn, *args)
    expected = run(base, args)
    for p in [*PASS_LIBRARY.values(), None]:
        g = clone(base)
        g = run_passes(g, [p] if p is not None else PASSES, verify=True)
        assert_same(run(g, args), expected)


def test_effects_keep_their_order(capsys):
    g = specialized(effects, 2.0)
    expected = run(g, (2.0,))
    before = capsys.readouterr().out
    assert before == "start 2.0\nhelper 2.0\nend 6.0\n"
    g = optimize(g)
    assert run(g, (2.0,)) == expected
    assert capsys.readouterr().out == before
    assert len(reachable_graphs(g)) == 1  # helper_print was inlined, its print kept


# Each rewrite fires and keeps what programs compute ---------------------------------------------


def constant_condition(x):
    if 2 > 1:
        return x * 2.0
    return x


def count_up(n):
    i = 0
    while i < n:
        i = i + 1
    return i


def left_value(x):
    t = Tree(x, Tree(2.0 * x))
    if t.left is not None:
        return t.left.value
    return 0.0


def convert_output(g):
    """`g` with its output wrapped in a conversion to its own type (as specialization did
    for the tail call of a loop)."""
    out = g.output
    fn = Constant(P.convert)
    fn.abstract = AbstractFunction(frozenset([P.convert]))
    typ = Constant(out.abstract)
    typ.abstract = AbstractConstant(out.abstract)
    g.output = Apply([fn, out, typ], g)
    g.output.abstract = out.abstract
    return g


def _neg_neg(x):
    y = -x
    return -y


def _set_first(t, y):
    return P.tuple_setitem(t, 0, y)[0] * P.tuple_setitem(t, 0, y)[1]


def _forwarded(x, y):
    return x * y - y


def _forwards(x, y):
    return _forwarded(y, x)


RULE_CASES = [
    # (rule, function, arguments, what runs first: "" nothing, "others" every other rule)
    ("inline", with_closure, (1.0, 2.0), ""),
    ("forward_call", lambda x, y: _forwards(x, y), (1.0, 2.0), ""),
    ("compare_difference", lambda a, b: (a - b) > 0, (3, 2), ""),
    (
        "gadd_index_add",
        lambda a, v: P.gadd(a, P.array_index_add(P.gzeros(a), 1, v)),
        (np.array([1.0, 2.0, 3.0]), 2.0),
        "",
    ),
    ("getitem_make_tuple", lambda x, y: (x, y)[1], (1.0, 2.0), ""),
    ("getitem_tuple_concat", lambda x, y: ((x,) + (y, x))[1], (1.0, 2.0), ""),
    ("getitem_tuple_setitem", _set_first, ((1.0, 2.0), 3.0), ""),
    ("getitem_of_slice", lambda t: t[1:][1], ((1.0, 2.0, 3.0),), ""),
    ("concat_tuples", lambda x, y: (x,) + (y,), (1.0, 2.0), ""),
    ("setitem_make_tuple", lambda x, y: P.tuple_setitem((x, y), 1, x), (1.0, 2.0), ""),
    ("make_tuple_of_getitems", lambda t: (t[0], t[1]), ((1.0, 2),), ""),
    ("getattr_make_record", lambda x, y: Pt(x, y).y, (1.0, 2.0), ""),
    (
        "getattr_record_setattr",
        lambda p, v: P.record_setattr(p, "x", v).y,
        (Pt(1.0, 2.0), 3.0),
        "",
    ),
    (
        "getattr_from_fields",
        lambda p, v: P.record_from_fields(p, (v, v)).y,
        (Pt(1.0, 2.0), 3.0),
        "",
    ),
    ("fields_of_record", lambda x, y: P.record_fields(Pt(x, y)), (1.0, 2.0), ""),
    (
        "record_from_make_tuple",
        lambda p, v: P.record_from_fields(p, (v, v)),
        (Pt(1.0, 2.0), 3.0),
        "",
    ),
    ("setattr_make_record", lambda x, y: P.record_setattr(Pt(x, y), "x", y), (1.0, 2.0), ""),
    ("make_record_of_getattrs", lambda p: Pt(p.x, p.y), (Pt(1.0, 2.0),), ""),
    ("getitem_make_dict", lambda x, y: {"a": x, "b": y}["b"], (1.0, 2.0), ""),
    ("values_of_make_dict", lambda x, y: P.dict_values({"a": x, "b": y}), (1.0, 2.0), ""),
    ("setitem_make_dict", lambda x, y: P.dict_setitem({"a": x, "b": y}, "a", y), (1.0, 2.0), ""),
    (
        "dict_from_make_tuple",
        lambda d, y: P.dict_from_values(d, (y, y)),
        ({"a": 1.0, "b": 2.0}, 3.0),
        "",
    ),
    ("getitem_make_list", lambda x, y: [x, y][1], (1.0, 2.0), ""),
    ("len_make_list", lambda x, y: len([x, y]), (1.0, 2.0), ""),
    ("switch_constant", constant_condition, (3.0,), "others"),
    ("seq_droppable", while_sum, (5,), ""),
    ("neg_broadcast", grad(_sum_of_neg), (np.ones(3),), "others"),
    (
        "materialize_plain",
        grad(f_tanh, "W", "b"),
        (np.ones((3, 4)) / 3, np.arange(4.0), np.ones(3)),
        "others",
    ),
    ("convert_same", (f_sin, convert_output), (1.0, 2.0), ""),
    ("identity_value", lambda x: P.identity(x) * 2.0, (1.0,), ""),
    ("narrow_same", left_value, (2.0,), "others"),
    ("is_none_static", left_value, (2.0,), "others"),
    ("to_bool_of_bool", branches, (3.0, 1.0), ""),
    ("call_partial", lambda x, y: P.partial(f_sin, x)(y), (1.0, 2.0), ""),
    ("gzeros_static", lambda x, y: P.gzeros((x, y)), (1.0, 2), ""),
    ("getitem_gzeros", lambda a, b: P.gzeros((a, b))[0], (np.ones(2), np.ones(3)), ""),
    ("getattr_gzeros", lambda p: P.gzeros(p).y, (Pt(1.0, 2.0),), ""),
    (
        "setitem_gzeros",
        lambda a, b: P.tuple_setitem(P.gzeros((a, b)), 0, a),
        (np.ones(2), 1.0),
        "",
    ),
    (
        "setattr_gzeros",
        lambda p, v: P.record_setattr(P.gzeros(p), "x", v),
        (Pt(1.0, 2.0), 3.0),
        "",
    ),
    (
        "slice_add_tuples",
        lambda x, y: P.seq_slice_add((x, y, x), P.make_slice(1, None, None), (y, y)),
        (1.0, 2.0),
        "others",
    ),
    (
        "dict_setitem_gzeros",
        lambda d, v: P.dict_setitem(P.gzeros(d), "a", v),
        ({"a": 1.0, "b": 2.0}, 3.0),
        "",
    ),
    ("gadd_zero", lambda x: P.gadd(x, P.gzeros(x)), (np.ones(3),), ""),
    ("gadd_tuples", lambda x, y: P.gadd((x, y), (y, x)), (1.0, 2.0), ""),
    ("gadd_records", lambda x, y: P.gadd(Pt(x, y), Pt(y, x)), (1.0, 2.0), ""),
    ("gadd_numbers", lambda x, y: P.gadd(x, y), (1.0, 2.0), ""),
    (
        "gadd_envs",
        lambda x: P.env_getitem(P.gadd(P.env_setitem(P.env_new(), "a", x), P.env_new()), "a", 0.0),
        (1.0,),
        "",
    ),
    (
        "getitem_env",
        lambda x, y: P.env_getitem(
            P.env_setitem(P.env_setitem(P.env_new(), "a", x), "b", y), "a", 0.0
        ),
        (1.0, 2.0),
        "",
    ),
    (
        "env_add_empty",
        lambda x: P.env_getitem(
            P.env_add(P.env_new(), P.env_setitem(P.env_new(), "a", x)), "a", 0.0
        ),
        (1.0,),
        "",
    ),
    ("unbroadcast_same", lambda d, x: P.unbroadcast(d, x), (np.ones(3), np.zeros(3)), ""),
    ("broadcast_like_same", lambda x: P.broadcast_like(1, x), (2.0,), ""),
    ("mul_one", lambda x: x * 1 + 1.0 * x, (np.ones(3),), ""),
    ("mul_zero_integer", lambda n: n * 0, (7,), ""),
    ("add_zero", lambda n: n + 0, (7,), ""),
    ("sub_zero", lambda x: x - 0, (-0.0,), ""),
    ("div_one", lambda x: x / 1, (3.0,), ""),
    ("pow_one", lambda x: x**1, (3.0,), ""),
    ("neg_neg", _neg_neg, (3.0,), ""),
    ("broadcast_operand", lambda a: P.broadcast_like(2.0, a) * a, (np.ones(3),), ""),
    (
        "broadcast_operand",
        lambda a, b: a == P.broadcast_like(b, a),
        (np.ones((2, 3)), np.ones((2, 1))),
        "",
    ),
    ("reshape_same", lambda a: np.reshape(a, (2, 3)), (np.ones((2, 3)),), ""),
    ("known_value", lambda t: len(t), ((1.0, 2.0),), ""),
    ("getitem_constant", lambda x: C[1] * x, (2.0,), ""),
    ("make_tuple_constant", lambda x: (1, 2.5), (2.0,), ""),
    ("fold_constants", lambda x: x * P.add(2, 3), (2.0,), ""),
]
for _name in ("getsens_env", "delitem_env"):
    if any(r.name == _name for r in ALL_RULES):
        RULE_CASES.append(
            {
                "getsens_env": (
                    "getsens_env",
                    lambda x: P.env_getsens(P.env_setitem(P.env_new(), "a", x), "b", x),
                    (1.0,),
                    "",
                ),
                "delitem_env": (
                    "delitem_env",
                    lambda x: P.env_getitem(
                        P.env_delitem(P.env_setitem(P.env_new(), "a", x), "a"), "a", 0.0
                    ),
                    (1.0,),
                    "",
                ),
            }[_name]
        )


def test_every_rule_has_a_case():
    assert {r.name for r in ALL_RULES} == {c[0] for c in RULE_CASES}


@pytest.mark.parametrize("name, fn, args, first", RULE_CASES, ids=[c[0] for c in RULE_CASES])
def test_rule(name, fn, args, first):
    rule = next(r for r in ALL_RULES if r.name == name)
    assert "=>" in rule.lhs_rhs, rule
    fn, edit = fn if isinstance(fn, tuple) else (fn, None)
    g = specialized(fn, *args)
    if edit is not None:
        g = edit(g)
        verify_types(g)
    expected = run(g, args)
    if first == "others":
        run_sweeps(g, [r for r in ALL_RULES if r is not rule], cse=True)
        verify_types(g)
    stats = run_sweeps(g, [rule], cse=False)
    assert stats[name] > 0, f"{name} did not fire"
    verify_types(g)
    assert_same(run(g, args), expected)


def _plus_zero(x):
    return x + 0.0


def _times_zero(x):
    return x * 0.0


def _zero_minus(x):
    return 0.0 - x


def test_algebra_is_exact_only():
    # x + 0.0 is not x for x = -0.0, x * 0 is not 0 for x = inf: both are kept.
    for fn in (_plus_zero, _times_zero, _zero_minus):
        g = optimize(specialized(fn, 1.0))
        assert len(applies(g)) == 1
        assert math.copysign(1.0, run(optimize(specialized(fn, -0.0)), (-0.0,))) == math.copysign(
            1.0, fn(-0.0)
        )
        for v in (math.inf, -math.inf, math.nan):
            assert_same(run(optimize(specialized(fn, v)), (v,)), fn(v))


def test_cse_merges_equal_computations():
    def f(x, y):
        return (x * y) + (x * y) * (x * y)

    g = specialized(f, 2.0, 3.0)
    stats = run_sweeps(g, [], cse=True)
    assert stats["cse"] == 2
    assert [prim_of(n) for n in applies(g)].count(P.mul) == 2
    assert run(g, (2.0, 3.0)) == f(2.0, 3.0)


def _ignore_first(a, b):
    return b


def test_effects_in_expressions_are_kept(capsys):
    def f(x, y):
        return (x, print("a", y))[0] + _ignore_first(print("b", x), y)

    g = specialized(f, 1.0, 2.0)
    run(g, (1.0, 2.0))
    expected = capsys.readouterr().out
    assert expected == "a 2.0\nb 1.0\n"
    g = optimize(g)
    assert run(g, (1.0, 2.0)) == 3.0
    assert capsys.readouterr().out == expected


def _shared_statement(x, y):
    (x / y, x)  # a statement whose division the result computes too
    return (x / y) * 2.0


def _shared_call(n):
    y = fact(n)
    (y * 2.0, y)  # shares a call's result with the result
    return y * 2.0


def test_a_statement_computed_again_by_the_result_is_dropped():
    g = specialized(_shared_statement, 1.0, 2.0)
    g = run_passes(g, [PASSES[0]], verify=True)
    assert not any(prim_of(n) is P.seq for n in applies(g))
    assert run(g, (1.0, 2.0)) == 1.0
    with pytest.raises(ZeroDivisionError):
        run(g, (1.0, 0.0))  # the division still raises: the result computes it
    g = run_passes(specialized(_shared_call, 4), [PASSES[0]], verify=True)
    assert not any(prim_of(n) is P.seq for n in applies(g))
    assert run(g, (4,)) == 48.0


def _print_in_branch(x):
    if x > 0.0:
        print("positive")
        r = x
    else:
        r = -x
    return r


def _after_a_branch(x, y):
    return _print_in_branch(x) * (1.0 / y)


def test_a_tail_that_may_raise_stays_after_the_branch(capsys):
    with pytest.raises(ZeroDivisionError):
        MyiaFunction(_after_a_branch)(1.0, 0.0)
    assert capsys.readouterr().out == "positive\n"


def test_effects_are_never_merged(capsys):
    def f(x):
        print(x)
        print(x)
        return x

    g = optimize(specialized(f, 1.0))
    run(g, (1.0,))
    assert capsys.readouterr().out == "1.0\n1.0\n"


# The gradient of straight-line code is straight-line code ---------------------------------------


def assert_straight_line(g: Graph) -> None:
    """One graph, no tuple taken apart, no closure, partial, environment or scalar zero."""
    assert reachable_graphs(g) == [g]
    nodes = [n for n in toposort(g) if n.is_apply]
    for n in nodes:
        p = prim_of(n)
        assert p is not None, f"a call to something else than a primitive: {n}"
        assert p not in (P.tuple_getitem, P.partial, P.gzeros, P.gadd, P.tuple_concat), n
        assert not p.name.startswith("env_"), n
        assert p is not P.make_tuple or n is g.output, "a tuple is built inside"
        for i in n.inputs:
            assert not (i.is_constant and isinstance(i.value, Graph)), "a graph constant"


def test_gradient_of_scalar_straight_line_code():
    g = optimized(grad(f_sin, "x", "y"), 1.0, 2.0)
    assert_straight_line(g)
    ops = sorted(prim_of(n).name for n in toposort(g) if n.is_apply)
    assert ops == ["add", "add", "cos", "make_tuple", "mul", "sin"]


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

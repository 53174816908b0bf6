"""The optimizer: every rewrite fires and keeps what programs compute, every pass keeps it on a
table of programs (run in the reference interpreter before and after), and effects and errors
keep their order."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from helpers import assert_same
from opt_programs import (
    PROGRAMS,
    C,
    Pt,
    Tree,
    _sum_of_neg,
    applies,
    branches,
    effects,
    f_sin,
    f_tanh,
    fact,
    run,
    specialized,
    while_sum,
    with_closure,
)

from myia import grad
from myia.abstract.data import (
    AbstractConstant,
    AbstractFunction,
    AbstractScalar,
    AbstractTuple,
)
from myia.api import MyiaFunction
from myia.infer.verify_types import verify_types
from myia.ir.analysis import reachable_graphs
from myia.ir.clone import clone
from myia.ir.node import Apply, Constant
from myia.operations.lib import Range
from myia.opt import PASS_LIBRARY, PASSES, optimize, run_passes
from myia.opt.matcher import prim_of
from myia.opt.passes import ALL_RULES
from myia.opt.sweep import run_sweeps
from myia.primitives import P
from myia.testing import check_grad

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


def convert_tuple_output(g):
    """`g`, which returns a tuple of a float and an int, with its output converted to a tuple of
    two floats."""
    out = g.output
    to = AbstractTuple((out.abstract.elements[0], out.abstract.elements[0]))
    fn = Constant(P.convert)
    fn.abstract = AbstractFunction(frozenset([P.convert]))
    typ = Constant(to)
    typ.abstract = AbstractConstant(to)
    g.output = Apply([fn, out, typ], g)
    g.output.abstract = to
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


def _log_and_triple(a):
    return np.log(a), a * 3.0


def _unused_across_call(a):
    return np.sum(_log_and_triple(a)[1])  # the sensitivity of the log is zero


COLUMN = np.s_[:, None]  # x[:, None]: all of x, with an axis inserted

#: The type of a Python float, for ``env_sens``.
F64 = AbstractScalar("float64", weak=True)

RANGE = Range(1, 5, 1)

RULE_CASES = [
    # (rule, function, arguments, what runs first: "" nothing, "others" every other rule,
    # "together": the rule fires in a sweep of every rule, where the others expose its input)
    ("inline", with_closure, (1.0, 2.0), ""),
    ("forward_call", lambda x, y: _forwards(x, y), (1.0, 2.0), ""),
    ("compare_difference", lambda a, b: (a - b) > 0, (3, 2), ""),
    (
        "gadd_index_add",
        lambda a, v: P.gadd(a, P.array_index_add(P.gzeros(a), 1, v)),
        (np.array([1.0, 2.0, 3.0]), 2.0),
        "",
    ),
    (
        "index_add_everywhere",
        lambda a, v: P.array_index_add(P.gzeros(a), COLUMN, v) * 2.0,
        (np.array([1.0, 2.0, 3.0]), np.array([[4.0], [5.0], [6.0]])),
        "",
    ),
    ("getitem_make_tuple", lambda x, y: (x, y)[1], (1.0, 2.0), ""),
    ("getitem_tuple_concat", lambda x, y: ((x,) + (y, x))[1], (1.0, 2.0), ""),
    ("getitem_seq", lambda x, y: P.seq(P.assert_(x > 0.0, "x"), (x, y))[1], (1.0, 2.0), ""),
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
    ("convert_tuple", (lambda x, n: (x, n), convert_tuple_output), (1.0, 2), ""),
    ("identity_value", lambda x: P.identity(x) * 2.0, (1.0,), ""),
    ("narrow_same", left_value, (2.0,), "others"),
    ("sens_as_same", lambda x: P.sens_as(x * 2.0, x), (2.0,), ""),
    ("is_none_static", left_value, (2.0,), "others"),
    ("to_bool_of_bool", branches, (3.0, 1.0), ""),
    ("call_partial", lambda x, y: P.partial(f_sin, x)(y), (1.0, 2.0), ""),
    ("arg_of_partial", lambda x, y: P.partial_arg(P.partial(f_sin, x), 0) * y, (1.0, 2.0), ""),
    ("gzeros_static", lambda x, y: P.gzeros((x, y)), (1.0, 2), ""),
    ("gzeros_unread_typed", lambda x, n: x + P.gzeros_unread(n), (1.0, 2), ""),
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
        "sens_env",
        lambda x: P.env_sens(P.env_setitem(P.env_new(), "a", x), "a", F64),
        (1.0,),
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
    (
        "where_same",
        lambda c, x: P.where(c, x, x),
        (np.array([True, False, True]), np.ones(3)),
        "",
    ),
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
    ("mul_neg_constant", lambda a: -a * 2.0, (np.array([1.0, -0.0, np.inf, np.nan]),), ""),
    ("mul_neg_constant", lambda a: 2.0 * -a, (np.array([1.0, -0.0, np.inf]),), ""),
    (
        "triangle_of_sum",
        lambda a, b: np.tril(a + np.tril(b, 1), 1),
        (np.arange(12.0).reshape(3, 4), np.full((3, 4), np.inf)),
        "others",
    ),
    (
        "triangle_of_sum",
        lambda a, b: np.triu(np.triu(a) + b),
        (np.eye(3) + 1, np.ones(3)),
        "others",
    ),
    ("reshape_same", lambda a: np.reshape(a, (2, 3)), (np.ones((2, 3)),), ""),
    ("known_value", lambda t: len(t), ((1.0, 2.0),), ""),
    ("getitem_constant", lambda x: C[1] * x, (2.0,), ""),
    ("getattr_constant", lambda x: RANGE.stop * x, (2.0,), ""),
    ("make_tuple_constant", lambda x: (1, 2.5), (2.0,), ""),
    ("make_record_constant", lambda x: (Range(1, 5, 2), x), (2.0,), ""),
    ("fold_constants", lambda x: x * P.add(2, 3), (2.0,), ""),
    ("backpropagate_zero", grad(_unused_across_call), (np.array([0.5, 1.5]),), "together"),
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
    stats = run_sweeps(g, ALL_RULES if first == "together" else [rule], cse=False)
    assert stats[name] > 0, f"{name} did not fire"
    verify_types(g)
    assert_same(run(g, args), expected)


def _plus_zero(x):
    return x + 0.0


def _times_zero(x):
    return x * 0.0


def _zero_minus(x):
    return 0.0 - x


@dataclasses.dataclass
class _Mutable:
    a: int


def test_only_immutable_records_become_constants():
    # A record the caller could change is a new object per call; a frozen one may be shared.
    g = optimize(specialized(lambda x: (_Mutable(1), Range(1, 5, 2)), 2.0))
    assert [prim_of(n) for n in applies(g)].count(P.make_record) == 1
    m, r = run(g, (2.0,))
    assert m == _Mutable(1) and r == Range(1, 5, 2)


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


# A recursion's members used once ---------------------------------------------------------------


def _down_odd(n, x):
    if n == 0:
        return x
    return _down_even(n - 1, x * 2.0)


def _down_even(n, x):
    if n == 0:
        return x
    return _down_odd(n - 1, x + 1.0)


def test_a_member_of_a_recursion_called_once_is_inlined():
    # `_down_even` is called by `_down_odd` alone: its body is copied there, and `_down_odd`
    # calls itself (the gradient of a recursion then makes one backpropagator per call, not
    # one per function of the cycle).
    g = specialized(_down_odd, 5, 1.0)
    expected = [run(g, (n, 1.5)) for n in range(6)]
    g = optimize(g)
    names = [h.name for h in reachable_graphs(g)]
    assert "_down_even" not in names and "_down_odd" in names
    assert [run(g, (n, 1.5)) for n in range(6)] == expected == [1.5, 3.0, 4.0, 8.0, 9.0, 18.0]


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_gradient_of_a_recursion_of_two_functions(backend):
    check_grad(_down_odd, 5, 1.5, wrt=1, backend=backend)
    assert grad(_down_odd, "x", backend=backend)(5, 1.5) == 8.0

"""Regressions: crashes in control flow (issue #22), on every backend, against Python."""

# ruff: noqa: B007  (loops are written as a researcher writes them)

from __future__ import annotations

import gc
import time

import pytest

from myia import MyiaRecursionError, myia
from myia.frontend import parse
from myia.testing import check_grad
from myia.vm import Closure, debug_vm
from myia.vm.tracebacks import RECURSION_LIMIT

# An ``if`` statement followed by a conditional expression, ``and``/``or`` or a chained
# comparison: once the join block is inlined into both branches, the expression's closed
# branch is shared by the two copies of its switch.


def if_then_ifexp(x, y):
    if y > 0:
        x = x + 1.0
    return x if x > 0 else 0.5


def if_else_then_and(x, y):
    if y > 0:
        x = x * 2.0
    else:
        x = x - 3.0
    return x > 0 and x < 5.0


def if_then_or(x, y):
    z = x
    if x < y:
        z = y * 1.5
    return z or 2.0


def if_then_chain(x, y):
    if y > 1.0:
        x = x - y
    return 0.0 < x < 4.0


def two_ifs_ifexp(x, y):
    if x > 0:
        y = y + x
    if y > 2.0:
        x = x * y
    a = x * 2.0 if x > y else y * 3.0
    return a + (x if y > 0 else -x)


def elif_ifexp(x, y):
    if x > 1.0:
        s = x
    elif x > -1.0:
        s = y
    else:
        s = x * y
    return s * 2.0 if s > 0 else s * 0.5


ARGS = [(1.0, 1.0), (-2.0, 1.0), (0.5, -1.0), (3.0, 4.0), (-4.0, -0.5)]


@pytest.mark.parametrize(
    "fn", [if_then_ifexp, if_else_then_and, if_then_or, if_then_chain, two_ifs_ifexp, elif_ifexp]
)
@pytest.mark.parametrize("args", ARGS)
def test_if_then_expression_branch(check, fn, args):
    check(fn, *args)


@pytest.mark.parametrize("fn", [if_then_ifexp, two_ifs_ifexp, elif_ifexp])
@pytest.mark.parametrize("args", [(1.2, 1.3), (-2.0, 1.3), (0.7, -1.0), (3.0, 4.5)])
def test_if_then_expression_branch_grad(fn, args):
    check_grad(fn, *args)


def loop_ifexp(x, n):
    i = 0
    while i < n:
        x = x * 2.0 if x < 3.0 else x - 1.0
        i = i + 1
    return x


def for_ifexp(x, n):
    acc = 0.0
    for i in range(n):
        acc = acc + (x * i if acc < 5.0 else -x)
    return acc


def for_and(x, n):
    for _ in range(n):
        if x > 1.0 and x < 10.0:
            x = x * 1.5
        x = x + 0.25 if x < 0 else x
    return x


@pytest.mark.parametrize("fn", [loop_ifexp, for_ifexp, for_and])
@pytest.mark.parametrize("args", [(1.0, 4), (-0.7, 3), (2.5, 6)])
def test_loop_expression_branch(check, fn, args):
    check(fn, *args)


@pytest.mark.parametrize("fn", [loop_ifexp, for_ifexp, for_and])
@pytest.mark.parametrize("args", [(1.1, 4), (-0.7, 3), (2.3, 6)])
def test_loop_expression_branch_grad(fn, args):
    check_grad(fn, *args, wrt=0)


# A value printed or asserted, then returned: the returned value is the one computed before.


def print_then_return(x):
    s = x * 2.0
    print(s)
    return s


def assert_then_return(x):
    s = x * 2.0 + 10.0
    assert s > 0
    return s


def assert_msg_then_return(x):
    s = x - 1.0
    assert s != 0.0, "s must not be zero"
    return s


def print_in_branch(x):
    if x > 0:
        s = x * 3.0
        print("positive", s)
        return s
    s = -x
    print(s)
    return s


def print_in_loop(x, n):
    for i in range(n):
        x = x * 1.5
        print(i, x)
    return x


def print_twice(x):
    s = x + 1.0
    t = s * s
    print(s)
    print(t)
    return s, t


@pytest.mark.parametrize(
    "fn, args",
    [
        (print_then_return, (1.5,)),
        (assert_then_return, (-1.0,)),
        (assert_msg_then_return, (3.0,)),
        (print_in_branch, (2.0,)),
        (print_in_branch, (-2.0,)),
        (print_in_loop, (1.0, 3)),
        (print_twice, (0.5,)),
    ],
)
def test_effect_then_return(check, capsys, fn, args):
    check(fn, *args)


@pytest.mark.parametrize(
    "fn, args",
    [(print_then_return, (1.5,)), (assert_then_return, (-1.0,)), (print_in_branch, (-2.0,))],
)
def test_effect_then_return_grad(fn, args):
    check_grad(fn, *args)


@pytest.mark.parametrize("backend", [None, "debug"])
def test_assert_then_return_raises(backend):
    f = myia(assert_msg_then_return, backend=backend) if backend else myia(assert_msg_then_return)
    with pytest.raises(AssertionError, match="s must not be zero"):
        f(1.0)


# Gradients through ``break`` and early ``return`` in ``for i in range(...)`` loops, whose
# exits carry a zero sensitivity for the range that nothing reads.


def for_break(x, n):
    for i in range(n):
        x = x * 1.5
        if x > 5.0:
            break
    return x


def for_return(x, n):
    for i in range(n):
        x = x * 1.5
        if x > 5.0:
            return x * 2.0
    return x


def for_break_uses_index(x, n):
    acc = 0.0
    for i in range(1, n, 2):
        acc = acc + x * i
        if acc > 4.0:
            break
    return acc + x


def for_return_in_else(x, n):
    for i in range(n):
        if x < 2.0:
            x = x + x * x
        else:
            return x - i
    return x


def nested_for_break(x, n):
    for i in range(n):
        for j in range(n):
            x = x * 1.1
            if x > 3.0:
                break
        if x > 6.0:
            return x
    return x * 0.5


def while_break(x, n):
    i = 0
    while i < n:
        x = x * 1.3
        if x > 4.0:
            break
        i = i + 1
    return x


BREAKS = [for_break, for_return, for_break_uses_index, for_return_in_else, nested_for_break]


@pytest.mark.parametrize("fn", [*BREAKS, while_break])
@pytest.mark.parametrize("args", [(1.1, 10), (0.3, 3), (7.0, 4), (1.7, 0)])
def test_loop_exit(check, fn, args):
    check(fn, *args)


@pytest.mark.parametrize("fn", [*BREAKS, while_break])
@pytest.mark.parametrize("args", [(1.1, 10), (0.3, 3), (7.0, 4), (1.7, 0)])
def test_loop_exit_grad(fn, args):
    check_grad(fn, *args, wrt=0)


# Checks Python makes at run time: unpacking a sequence of the wrong length, a float bound of
# a ``range``.


def unpack2(t):
    a, b = t
    return a + b


def unpack3_list(xs):
    [a, b, c] = xs
    return a * b - c


def unpack_nested(t):
    (a, b), c = t
    return a + b + c


def unpack_in_for(pairs):
    s = 0.0
    for a, b in pairs:
        s = s + a * b
    return s


@pytest.mark.parametrize(
    "fn, arg",
    [
        (unpack2, (1.0, 2.0)),
        (unpack2, (1.0, 2.0, 3.0)),
        (unpack2, (1.0,)),
        (unpack2, ()),
        (unpack3_list, [1.0, 2.0, 3.0]),
        (unpack3_list, [1.0, 2.0]),
        (unpack3_list, [1.0, 2.0, 3.0, 4.0]),
        (unpack_nested, ((1.0, 2.0), 3.0)),
        (unpack_nested, ((1.0, 2.0, 5.0), 3.0)),
        (unpack_nested, ((1.0, 2.0), 3.0, 4.0)),
        (unpack_in_for, ((1.0, 2.0), (3.0, 4.0))),
        (unpack_in_for, ((1.0, 2.0), (3.0, 4.0, 5.0))),
    ],
)
def test_unpack_length(check, fn, arg):
    check(fn, arg)


def test_unpack_grad():
    check_grad(unpack3_list, [1.5, 2.0, -3.0])
    check_grad(unpack_nested, ((1.5, 2.0), -3.0))


def range_float(x):
    s = 0
    for i in range(x):
        s = s + i
    return s


def range2_float(a, b):
    s = 0
    for i in range(a, b):
        s = s + i
    return s


def range3_float(a, b, c):
    return len(range(a, b, c))


@pytest.mark.parametrize(
    "fn, args",
    [
        (range_float, (4,)),
        (range_float, (2.5,)),
        (range_float, (3.0,)),
        (range2_float, (1, 4)),
        (range2_float, (1.0, 4)),
        (range2_float, (1, 4.5)),
        (range3_float, (0, 10, 3)),
        (range3_float, (0, 10, 2.0)),
        (range3_float, (0, 10, 0)),
    ],
)
def test_range_bounds(check, fn, args):
    check(fn, *args)


# A recursion that never ends raises RecursionError quickly, with the Myia traceback.


def no_base_case(x):
    return no_base_case(x - 1.0) + 1.0


def wrong_base_case(n):
    if n < 0:
        return 0
    return wrong_base_case(n + 1) + 1


def mutual_a(x):
    return mutual_b(x * 0.5) + 1.0


def mutual_b(x):
    if x > 1e300:
        return x
    return mutual_a(x + 1.0)


def deep_but_finite(n):
    if n == 0:
        return 0
    return deep_but_finite(n - 1) + 1


@pytest.mark.parametrize("fn, arg", [(no_base_case, 1.0), (wrong_base_case, 1), (mutual_a, 1.0)])
def test_runaway_recursion(check, fn, arg, request, monkeypatch):
    if fn is not no_base_case and request.node.callspec.params["check"] != "myia":
        # The reference interpreter takes seconds per 200,000 levels: it runs `no_base_case`
        # to Myia's limit, the others to a tenth of it (the same code raises the same error).
        monkeypatch.setattr(debug_vm, "RECURSION_LIMIT", RECURSION_LIMIT // 10)
    # 200,000 calls allocate 200,000 frames: with the objects that earlier tests left alive
    # frozen, the collector's passes cost what they cost in a user's fresh process.
    gc.collect()
    gc.freeze()
    try:
        start = time.perf_counter()
        err = check(fn, arg)
        elapsed = time.perf_counter() - start
    finally:
        gc.unfreeze()
    assert elapsed < 10
    assert isinstance(err, RecursionError)


@pytest.mark.parametrize("backend", [None, "debug"])
def test_runaway_recursion_traceback(backend):
    f = myia(wrong_base_case, backend=backend) if backend else myia(wrong_base_case)
    with pytest.raises(MyiaRecursionError) as info:
        f(1)
    note = "\n".join(info.value.__notes__)
    assert "Myia traceback" in note
    assert "return wrong_base_case(n + 1) + 1" in note
    assert note.count("\n") < 100  # the middle of the runaway recursion is left out


@pytest.mark.parametrize("backend", [None, "debug"])
def test_deep_finite_recursion(backend):
    f = myia(deep_but_finite, backend=backend) if backend else myia(deep_but_finite)
    assert f(20_000) == 20_000


def test_recursion_limit_does_not_depend_on_earlier_runs(monkeypatch):
    # The interpreter checked the limit only past the deepest frame of all its runs.
    vm = debug_vm.DebugVM()
    graph = parse(deep_but_finite)
    assert vm.call(Closure(graph, None), [3_000]) == 3_000
    monkeypatch.setattr(debug_vm, "RECURSION_LIMIT", 1_000)
    with pytest.raises(MyiaRecursionError):
        vm.call(Closure(graph, None), [2_000])
    assert vm.max_depth >= 3_000

"""Python outside Myia's subset raises `MyiaSyntaxError`, an unknown name `MyiaNameError`: both
name the file, the line and its source text. Expected lines are found in the source (by a
marker on the line), never written down."""

from __future__ import annotations

import os

import pytest
from helpers import line_of

from myia import MyiaError, MyiaNameError, MyiaSyntaxError, myia

HERE = os.path.abspath(__file__)


@pytest.fixture(autouse=True)
def _no_leftover_parse_cache():
    """Every test parses its functions afresh (errors must not be cached as graphs)."""
    yield


def check_error(err: MyiaError, fn, marker: str) -> None:
    """`err` points at the line of `fn` containing `marker`: file, line number and text."""
    line = line_of(fn, marker)
    loc = err.location
    assert loc is not None, str(err)
    assert os.path.abspath(loc.filename) == HERE
    assert loc.line == line, str(err)
    text = str(err)
    assert f'File "{loc.filename}", line {line}' in text
    assert marker in text  # the source line itself
    assert "myia/" not in text.replace(HERE, "")  # no frame from inside the package


# Mutation -------------------------------------------------------------------------------------


def set_attribute(p):
    p.x = 1  # MARK
    return p


def set_item(a):
    a[0] = 1.0  # MARK
    return a


def set_item_augmented(a):
    a[0] += 1.0  # MARK
    return a


def list_append(xs):
    xs.append(1)  # MARK
    return xs


def list_extend_in_loop(xs, n):
    for i in range(n):
        if i > 2:
            xs.extend([i])  # MARK
    return xs


def dict_update(d):
    d.update({"a": 1})  # MARK
    return d


def delete(x):
    y = x
    del y  # MARK
    return x


# Statements -----------------------------------------------------------------------------------

G = 0


def uses_global(x):
    global G  # MARK
    return x + G


def uses_nonlocal(x):
    y = x

    def inner():
        nonlocal y  # MARK
        y = y + 1
        return y

    return inner()


def uses_try(x):
    try:  # MARK
        return 1 / x
    except ZeroDivisionError:
        return 0.0


def uses_with(x):
    with open(x) as f:  # MARK
        return f.read()


def uses_yield(x):
    yield x  # MARK


def uses_yield_from(x):
    yield from range(x)  # MARK


async def uses_await(x):  # MARK
    return await x


def nested_async(x):
    async def inner():  # MARK
        return x

    return inner


def class_inside(x):
    class Local:  # MARK
        pass

    return x


def uses_import(x):
    import math  # MARK

    return math.sqrt(x)


def uses_walrus(x):
    if (y := x + 1) > 2:  # MARK
        return y
    return x


def uses_comprehension(xs):
    return {x * 2 for x in xs}  # MARK


def uses_bare_raise(x):
    if x:
        raise  # MARK
    return x


def uses_match(x):
    match x:  # MARK
        case 1:
            return 1
    return 0


def nested_error(x):
    def inner(y):
        y.attr = x  # MARK
        return y

    return inner(x)


def closure_reads_later_variable(x):
    def g():
        return y + 1  # MARK

    y = x
    return g()


def closure_used_after_variable_changes(x):
    v = x

    def g(a):
        return a * v

    v = v + 1.0
    return g(1.0)  # MARK


def closure_used_in_loop_changing_variable(x):
    v = x
    g = lambda a: a * v  # noqa: E731
    for _ in range(2):
        if v > 10.0:
            break
        v = g(1.0) + 1.0  # MARK
    return v


def calls_bad_function(x):
    return set_attribute(x)


CASES = [
    set_attribute,
    set_item,
    set_item_augmented,
    list_append,
    list_extend_in_loop,
    dict_update,
    delete,
    uses_global,
    uses_nonlocal,
    uses_try,
    uses_with,
    uses_yield,
    uses_yield_from,
    uses_await,
    nested_async,
    class_inside,
    uses_import,
    uses_walrus,
    uses_comprehension,
    uses_bare_raise,
    uses_match,
    nested_error,
    closure_reads_later_variable,
    # Python reads `v` when `g` is called, Myia captured it where `g` is defined: refused,
    # where Myia computed with the old value (found by tests/fuzz_functions.py).
    closure_used_after_variable_changes,
    closure_used_in_loop_changing_variable,
]


def _call(fn):
    args = {"list_extend_in_loop": (1, 2)}.get(fn.__name__, (1,))
    return myia(fn)(*args)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_unsupported_construct(fn):
    with pytest.raises(MyiaSyntaxError) as info:
        _call(fn)
    check_error(info.value, fn, "# MARK")
    # The message says what Myia does not support or allow.
    assert "not" in info.value.message and "Myia" in info.value.message


def test_unsupported_construct_in_called_function():
    with pytest.raises(MyiaSyntaxError) as info:
        myia(calls_bad_function)(1)
    check_error(info.value, set_attribute, "# MARK")


def test_syntax_error_is_raised_again_on_the_next_call():
    f = myia(set_attribute)
    for _ in range(2):
        with pytest.raises(MyiaSyntaxError):
            f(1)


def test_mutation_messages_suggest_the_functional_form():
    with pytest.raises(MyiaSyntaxError, match=r"xs \+ \[") as info:
        myia(list_append)([1])
    assert "append" in info.value.message
    with pytest.raises(MyiaSyntaxError, match="attribute"):
        myia(set_attribute)(1)
    with pytest.raises(MyiaSyntaxError, match="item"):
        myia(set_item)([1.0])


# Names ----------------------------------------------------------------------------------------


def undefined_name(x):
    y = x + 1
    return y + undefined_thing  # noqa: F821  MARK


def undefined_in_nested(x):
    def inner(y):
        return y * not_defined_either  # noqa: F821  MARK

    return inner(x)


def undefined_in_branch(x):
    if x > 0:
        return x
    return missing_function(x)  # noqa: F821  MARK


def undefined_module_attribute(x):
    import_free = os.path
    return os.not_a_function(x) + import_free  # MARK


@pytest.mark.parametrize(
    "fn, name",
    [
        (undefined_name, "undefined_thing"),
        (undefined_in_nested, "not_defined_either"),
        (undefined_in_branch, "missing_function"),
        (undefined_module_attribute, "not_a_function"),
    ],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_undefined_name(fn, name):
    with pytest.raises(MyiaNameError) as info:
        myia(fn)(1)
    assert name in info.value.message
    check_error(info.value, fn, "MARK")


# Functions without source ----------------------------------------------------------------------

_SCOPE: dict = {}
exec("def made_by_exec(x):\n    return x * 2.0\n", _SCOPE)  # no source file to read


def calls_made_by_exec(x):
    return _SCOPE_FN(x) + 1.0  # MARK


_SCOPE_FN = _SCOPE["made_by_exec"]


def test_function_without_source_is_a_syntax_error():
    # It was MyiaInternalError("OSError: could not get source code").
    from myia import grad

    for compile_it in (myia, grad):
        with pytest.raises(MyiaSyntaxError, match="needs the source code of made_by_exec"):
            compile_it(_SCOPE_FN)(1.0)
    with pytest.raises(MyiaSyntaxError, match="needs the source code") as exc:
        myia(calls_made_by_exec)(1.0)
    check_error(exc.value, calls_made_by_exec, "MARK")

"""The language of API.md run through `@myia` and compared with plain Python: names.

Assignment and unpacking, arguments (defaults, keywords, ``*args``), starred unpacking, calls
to other functions and module constants, variables unbound on a path or assigned in a loop,
and calls with wrong arguments. Functions, recursion, branches and operators are in
``test_language.py``.
"""

from __future__ import annotations

import traceback

import numpy as np
import pytest
from helpers import examples, interpret, line_of, numbers
from hypothesis import given

from myia import MyiaTypeError, myia
from myia.testing import check_grad

# Assignment -----------------------------------------------------------------------------------


def unpacking(x, y):
    a, b = x, y
    (c, d), e = (a + 1, b + 1), a * b
    [f, g] = [c, d]
    b, a = a, b
    h = i = a + b
    return a, b, c, d, e, f, g, h, i


def augmented(x, y):
    s = x
    s += y
    s -= 1
    s *= 2
    p = y
    p **= 2
    t = (x,)
    t += (y,)
    return s, p, t


def augmented_div(x, y):
    a = x
    a /= y
    b = x
    b //= y
    c = x
    c %= y
    return a, b, c


def annotated(x):
    y: int = x + 1
    return y


def rebinding_parameter(x):
    x = x + 1
    x = x * 2
    return x


@examples
@given(numbers, numbers)
def test_assignment(check, x, y):
    check(unpacking, x, y)
    check(augmented, x, y)
    check(annotated, x)
    check(rebinding_parameter, x)


@examples
@given(numbers, numbers.filter(lambda v: v != 0))
def test_augmented_division(check, x, y):
    check(augmented_div, x, y)


# Arguments ------------------------------------------------------------------------------------


def with_defaults(x, y=2, z=3.5):
    return x + y * z


def kwonly(x, *, scale=2, shift):
    return x * scale + shift


def calls_with_keywords(x):
    return (
        with_defaults(x),
        with_defaults(x, 3),
        with_defaults(x, z=1),
        kwonly(x, shift=1),
        kwonly(x, shift=2, scale=x),
    )


def varargs(*xs):
    return len(xs), xs


def calls_varargs(x):
    return varargs(), varargs(x), varargs(x, x + 1, x + 2)


def nested_defaults(x):
    def f(a, b=1.5, *, c=1):
        return a + b + c

    return f(x), f(x, 2), f(1, c=x), f(a=3, b=x, c=5)


def nested_default_from_variable(x):
    def f(a, b=x):
        return a + b

    return f(1), f(1, 2)


@examples
@given(numbers)
def test_arguments(check, x):
    check(calls_with_keywords, x)
    check(calls_varargs, x)
    check(nested_defaults, x)


@pytest.mark.parametrize("x", [1, -2.5])
def test_default_from_variable(check, x):
    check(nested_default_from_variable, x)


def test_keywords_at_the_entry_point(check):
    check(with_defaults, 1.0, z=2.0)
    check(with_defaults, 1.0, y=4)
    check(with_defaults, x=1, y=2, z=3)


def test_keyword_only_at_the_entry_point(check):
    check(kwonly, 1.0, shift=2.0)
    check(kwonly, 1.0, shift=2.0, scale=3)
    check(kwonly, 3, shift=1, scale=2)


def test_wrong_arguments_at_the_entry_point():
    with pytest.raises(TypeError):
        with_defaults()
    from myia import MyiaTypeError

    with pytest.raises(MyiaTypeError):
        myia(with_defaults)()
    with pytest.raises(MyiaTypeError):
        myia(with_defaults)(1, 2, 3, 4)
    with pytest.raises(MyiaTypeError):
        myia(kwonly)(1, 2)


# Starred unpacking in displays and calls ----------------------------------------------------


def spread_displays(t, u, x):
    return (
        (*t, x),
        (x, *t, 1, *u, *t),
        (*t,),
        (*(),),
        [*t, *t],
        [x, *t, x],
        [*t, *[x, x]],
        (*{"a": x, "b": 2},),  # a dict's keys
    )


def three(a, b, c):
    return a * 100 + b * 10 + c


def spread_calls(t, x):
    return three(*t), three(x, *t[1:]), three(*t[:1], x, *t[2:]), varargs(*t, x, *t)


def spread_product(x, t):
    u = (*t, x, *t)
    return three(*u[2:]) + u[0] * u[1] * u[2] + sum([*t, x, x])


@examples
@given(numbers, numbers)
def test_starred_unpacking_in_displays_and_calls(check, x, y):
    # (*a, x), [*a, *b] and f(*args) spread tuples (and the elements of a list into a list)
    # as in Python; displays refused them.
    check(spread_displays, (x, y, 2), (), x)
    check(spread_displays, (x, y, 2.5), ("s", None), y)
    check(spread_calls, (x, y, 3), 2.0)


@pytest.mark.parametrize("backend", ["numpy", "debug", "jax", "native"])
def test_starred_unpacking_on_every_backend_and_its_gradient(backend):
    if backend in ("jax", "native"):
        pytest.importorskip({"jax": "jax", "native": "numba"}[backend])
    for args in ((1.5, (2.0, -3.0)), (-0.5, (0.25, 4.0))):
        assert myia(spread_product, backend=backend)(*args) == spread_product(*args)
    check_grad(spread_product, 1.5, (2.0, -3.0), wrt=(0, 1), backend=backend)


def spread_a_list(xs, x):
    return (*xs, x)  # MARK list


def call_with_a_list(xs):
    return three(*xs)  # MARK call


def spread_an_array(a):
    return (*a,)  # MARK array


def test_starred_unpacking_of_unknown_length_is_a_type_error_at_the_users_line():
    # A list's length is not part of its type (one type whatever its length): the tuple it
    # would spread into has no type at compile time.
    for fn, args, mark, match in [
        (spread_a_list, ([1.0, 2.0], 3.0), "MARK list", "length Myia does not know"),
        (call_with_a_list, ([1.0, 2.0, 3.0],), "MARK call", "length Myia does not know"),
        (spread_an_array, (np.ones(2),), "MARK array", "not a numpy.ndarray"),
    ]:
        fn(*args)  # Python: fine
        with pytest.raises(MyiaTypeError, match=match) as info:
            myia(fn)(*args)
        assert info.value.location.line == line_of(fn, mark)
    assert myia(lambda xs: [*xs, 1.0])([2.0]) == [2.0, 1.0]  # a list display takes it


def starred_targets(t):
    a, *rest = t
    first, *mid, last = t
    *init, z = t
    [p, q, *r] = t
    return a, rest, first, mid, last, init, z, p, q, r


def starred_in_a_sum(x, t):
    first, *mid, last = (x, *t)
    return first * last + sum(mid) * x


def starred_in_loops(ts):
    s = 0
    for a, *rest in ts:
        s = s + a * len(rest)
    return s, [len(r) + h for h, *r in ts]


def starred_of_mixed_types(t):
    a, *rest = t  # MARK mixed
    return rest


@pytest.mark.parametrize("backend", ["numpy", "debug", "jax", "native"])
def test_starred_assignment_targets_are_pythons(backend):
    # ``a, *rest = t`` was a MyiaSyntaxError. As in Python, the starred name is a list (of a
    # tuple's elements, a list's, an array's rows), possibly empty; too few elements raise
    # Python's ValueError.
    if backend in ("jax", "native"):
        pytest.importorskip({"jax": "jax", "native": "numba"}[backend])
    f = myia(starred_targets, backend=backend)
    for t in [
        (1, 2, 3), (1.5, -2.5), (True, False, True, 0), [1, 2, 3, 4, 5], [0.5, 1.5],
        np.arange(6.0).reshape(3, 2), np.arange(4, dtype=np.int8), ((1, 2), (3, 4), (5, 6)),
    ]:  # fmt: skip
        assert repr(f(t)) == repr(starred_targets(t)), t
    for t in [(1,), [2.0]]:
        with pytest.raises(ValueError, match=r"not enough values to unpack \(expected at least 2"):
            f(t)
    ts = ((1, 2, 3), (4, 5, 6))
    assert myia(starred_in_loops, backend=backend)(ts) == starred_in_loops(ts)
    args = (1.5, (2.0, -3.0, 0.5))
    assert myia(starred_in_a_sum, backend=backend)(*args) == starred_in_a_sum(*args)
    check_grad(starred_in_a_sum, *args, wrt=(0, 1), backend=backend)


def test_starred_assignment_of_mixed_types_is_a_type_error_at_the_users_line():
    # The list has one type: a string and a float cannot share one.
    assert starred_of_mixed_types((1, "s", 2.0)) == ["s", 2.0]
    with pytest.raises(MyiaTypeError, match="incompatible types") as info:
        myia(starred_of_mixed_types)((1, "s", 2.0))
    assert info.value.location.line == line_of(starred_of_mixed_types, "MARK mixed")


# Calls to other functions -----------------------------------------------------------------------


def plain_helper(x):
    return x * 3


@myia
def myia_helper(x):
    return x + 7


def calls_other_functions(x):
    return plain_helper(x) + myia_helper(x) + plain_helper(myia_helper(x))


SCALE = 4
OFFSETS = (1, 2, 3)


def reads_module_constants(x):
    return x * SCALE + OFFSETS[1]


@examples
@given(numbers)
def test_calls(check, x):
    check(calls_other_functions, x)
    check(reads_module_constants, x)
    assert myia_helper(x) == x + 7


def test_module_constants_read_at_compile_time():
    global SCALE
    f = myia(lambda x: x * SCALE)
    assert f(2) == 8
    old, SCALE = SCALE, 100
    try:
        assert f(2) == 8
    finally:
        SCALE = old


def test_method_of_myia_function_and_wrapper():
    assert myia_helper.__name__ == "myia_helper"
    assert myia_helper(1) == 8
    assert len(myia_helper.compiled_signatures()) >= 1


def test_myia_of_a_myia_function():
    # `myia(f)` of a function compiled by Myia already compiles what it compiles (it once
    # raised MyiaInternalError: "module, class, method, function ... got MyiaFunction").
    from myia import grad

    again = myia(myia_helper)
    assert again(1) == 8 and again.__name__ == "myia_helper"
    assert myia(backend="debug")(myia_helper)(2) == 9
    dscale = myia(grad(myia(lambda x, y: x * x * y)))
    assert dscale(3.0, 2.0) == 12.0
    assert grad(again)(1.0) == 1.0
    assert grad(dscale)(3.0, 2.0) == 4.0

    @myia
    def uses_them(x):
        return again(x) + dscale(x, 1.0)

    assert uses_them(2.0) == 9.0 + 4.0


def unbound_read(x):
    if x > 0:
        y = 1
    return y  # noqa: F821


def unbound_used(x):
    if x > 0:
        y = 1
    return y + 1  # noqa: F821


@pytest.mark.parametrize("fn", [unbound_read, unbound_used])
def test_unbound_local_in_interpreter(fn):
    # Reading a variable that no path assigned is Python's UnboundLocalError at run time.
    assert interpret(fn, 1) == fn(1)
    with pytest.raises(UnboundLocalError) as expected:
        fn(-1)
    with pytest.raises(UnboundLocalError) as got:
        interpret(fn, -1)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("fn", [unbound_read, unbound_used])
def test_unbound_local_when_compiled(fn):
    # A variable assigned on some paths only is tracked (`myia.frontend.blocks`): its value
    # where a path assigned it, Python's UnboundLocalError at the read where none did.
    assert myia(fn)(1) == fn(1)
    with pytest.raises(UnboundLocalError) as expected:
        fn(-1)
    with pytest.raises(UnboundLocalError) as got:
        myia(fn)(-1)
    assert str(got.value) == str(expected.value)
    text = "".join(traceback.format_exception(got.value))
    assert f'File "{__file__}", line {fn.__code__.co_firstlineno + 3}' in text, text


def last_of(xs, n):
    for i in range(n):
        last = xs[i] * 2.0
    return last


def first_positive(xs, n):
    for i in range(n):
        if xs[i] > 0:
            found = xs[i]
            break
    return found * found


def previous_step(x, n):
    for t in range(n):
        if t > 0:
            x = x + 0.5 * prev  # noqa: F821 (the previous iteration's)
        prev = x * x  # noqa: F841
    return x


@pytest.mark.parametrize("fn", [last_of, first_positive, previous_step])
@pytest.mark.parametrize("backend", ["numpy", "debug", "jax"])
def test_variables_assigned_in_a_loop(fn, backend):
    """A loop's last value read after it, or a value of the previous iteration."""
    xs = np.array([-1.0, 2.0, 3.0])
    cases = [(xs, 3), (xs, 0), (xs, 1)] if fn is not previous_step else [(0.3, 3), (0.3, 0)]
    f = myia(fn, backend=backend)
    for args in cases:
        try:
            expected = fn(*args)
        except UnboundLocalError as exc:
            with pytest.raises(UnboundLocalError, match=str(exc)):
                f(*args)
            continue
        assert f(*args) == expected
    if fn is previous_step:
        check_grad(fn, 0.3, 4, wrt=0, order=2)


def wrong_arity(x):
    def f(a, b):
        return a + b

    return f(x)  # MARK arity


def wrong_keyword(x):
    return with_defaults(x, w=2)  # MARK keyword


@pytest.mark.parametrize("run", [interpret, lambda f, *a: myia(f)(*a)])
@pytest.mark.parametrize(
    "fn, marker", [(wrong_arity, "MARK arity"), (wrong_keyword, "MARK keyword")]
)
def test_wrong_call_points_at_the_call(run, fn, marker):
    with pytest.raises(MyiaTypeError) as info:
        run(fn, 1.0)
    assert info.value.location.line == line_of(fn, marker)
    assert "myia/" not in str(info.value).replace(__file__, "")

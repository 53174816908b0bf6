"""Type errors are raised at compile time with a traceback through the user's source."""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

from myia import MyiaError, MyiaInternalError, MyiaTypeError, myia

HERE = os.path.abspath(__file__)


def line_of(fn, marker):
    """The line number of the line of `fn`'s source that contains `marker`."""
    lines, first = inspect.getsourcelines(fn)
    for i, text in enumerate(lines):
        if marker in text:
            return first + i
    raise AssertionError(f"{marker} not in {fn.__name__}")


def check_traceback(err, expected):
    """`expected` is a list of (function, marker): the frames, outermost first."""
    frames = [f for f in err.frames if f.location is not None]
    got = [(f.function, f.location.line) for f in frames]
    want = [(fn.__name__, line_of(fn, marker)) for fn, marker in expected]
    assert got[-len(want) :] == want, str(err)
    for f in frames:
        assert os.path.abspath(f.location.filename) == HERE
    text = str(err)
    for fn, marker in expected:
        assert f"line {line_of(fn, marker)}" in text
        assert marker in text  # the source line itself is shown
    assert "myia/" not in text.replace(HERE, "")


# Wrong types ------------------------------------------------------------------------------------


def inner_add(x, t):
    return x + t  # BAD-ADD


def outer_add(x):
    return inner_add(x, (1, 2)) * 2  # CALL-ADD


def test_operation_on_wrong_types():
    with pytest.raises(MyiaTypeError) as exc:
        myia(outer_add)(1.0)
    check_traceback(exc.value, [(outer_add, "CALL-ADD"), (inner_add, "BAD-ADD")])
    msg = str(exc.value)
    assert "add" in msg and "f64" in msg and "(i64, i64)" in msg


def takes_two(a, b):
    return a * b


def calls_with_three(x):
    y = x + 1
    return takes_two(x, y, 3)  # BAD-ARITY


def outer_arity(x):
    return calls_with_three(x) + 1  # CALL-ARITY


def test_wrong_number_of_arguments():
    with pytest.raises(MyiaTypeError) as exc:
        myia(outer_arity)(2.0)
    check_traceback(exc.value, [(outer_arity, "CALL-ARITY"), (calls_with_three, "BAD-ARITY")])
    assert "takes 2 positional arguments but 3 were given" in str(exc.value)


def takes_one(a):
    return a


def calls_one_with_two(x):
    return takes_one(x, x)  # BAD-ONE


def test_wrong_number_of_arguments_in_pythons_words():
    with pytest.raises(MyiaTypeError) as exc:
        myia(calls_one_with_two)(2.0)
    assert "takes_one() takes 1 positional argument but 2 were given" in str(exc.value)


def branches(x):
    if x > 0:  # BAD-BRANCH
        return x
    return (x, x)


def outer_branches(x):
    return branches(x)  # CALL-BRANCH


def test_incompatible_branches():
    with pytest.raises(MyiaTypeError) as exc:
        myia(outer_branches)(1.0)
    err = exc.value
    assert "incompatible" in str(err)
    assert "f64" in str(err) and "(f64, f64)" in str(err)
    lines = [f.location.line for f in err.frames if f.location is not None]
    assert line_of(outer_branches, "CALL-BRANCH") in lines


def uses_field(p):
    return p.z  # BAD-FIELD


def outer_field(p):
    return uses_field(p) + 1  # CALL-FIELD


def test_unknown_attribute():
    from dataclasses import dataclass

    @dataclass
    class P:
        x: float

    with pytest.raises(MyiaTypeError) as exc:
        myia(outer_field)(P(1.0))
    check_traceback(exc.value, [(outer_field, "CALL-FIELD"), (uses_field, "BAD-FIELD")])


def non_constant_index(t, i):
    return t[i] + 1  # BAD-INDEX


def test_tuple_index_must_be_known_for_mixed_tuples():
    with pytest.raises(MyiaTypeError) as exc:
        myia(non_constant_index)((1.0, (2.0,)), 0)
    check_traceback(exc.value, [(non_constant_index, "BAD-INDEX")])


def make_adder(y):
    return lambda x: x + y  # ADDER


def adder_two_types(x, y):
    add = make_adder(y)
    return add(x) + add(2)  # TWO-TYPES


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_returned_closure_called_with_two_argument_types(backend):
    # It was a type error ("called with different argument types"): the closure is now a
    # partial application of a closed function (tests/test_regress_fn_choice.py).
    assert myia(adder_two_types, backend=backend)(1, 2) == 7
    assert myia(adder_two_types, backend=backend)(1.5, 2.0) == adder_two_types(1.5, 2.0)


def test_argument_types_are_shown():
    with pytest.raises(MyiaTypeError) as exc:
        myia(outer_add)(np.ones((3, 10)))
    assert "f64 x 3 x 10" in str(exc.value)


def test_errors_are_myia_errors_not_internal():
    with pytest.raises(MyiaError) as exc:
        myia(outer_add)(1.0)
    assert not isinstance(exc.value, MyiaInternalError)
    assert exc.value.__cause__ is None or isinstance(exc.value.__cause__, MyiaError)


def test_unsupported_argument_type():
    with pytest.raises(MyiaTypeError):
        myia(outer_add)(object())


class Scaler:  # a plain class: not a dataclass
    def __init__(self, k):
        self.k = k

    def scale(self, x):
        return self.k * x


SCALER = Scaler(2.0)


def uses_a_plain_object(x):
    return SCALER.scale(x)  # PLAIN


def test_a_plain_objects_attribute_says_to_make_it_a_dataclass():
    with pytest.raises(MyiaTypeError, match="make Scaler a @dataclass") as info:
        myia(uses_a_plain_object)(1.0)
    check_traceback(info.value, [(uses_a_plain_object, "# PLAIN")])

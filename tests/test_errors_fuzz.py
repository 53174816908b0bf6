"""Programs a fuzzing of user mistakes and edge cases found wrong, on every backend.

Each program of `PROGRAMS` runs in Python and on each backend: the result must be Python's,
or the same exception (type and message) with the user's line in its Myia traceback and no
frame of the package. Each of `REFUSED` is a `MyiaTypeError` at its marked line.
"""

from __future__ import annotations

import dataclasses
import math
import os
import traceback

import numpy as np
import pytest

import myia
from myia import MyiaTypeError, grad
from myia.testing import check_grad

PACKAGE = os.path.dirname(os.path.abspath(myia.__file__))
BACKENDS = ["numpy", "debug"]
try:
    import jax  # noqa: F401

    BACKENDS.append("jax")
except ImportError:  # pragma: no cover - the extra is not installed
    pass
try:
    import numba  # noqa: F401

    BACKENDS.append("native")
except ImportError:  # pragma: no cover - the extra is not installed
    pass


def negative_base(a):
    return (-2.0) ** a  # a negative constant was written -2.0 ** a: -(2.0 ** a)


def negative_int_base(k):
    return (-2) ** k


def negative_root(a):
    return (-8) ** a  # a complex number, as in Python


def math_pow(x, y):
    return math.pow(x, y)  # MARK


def math_log_base(x, b):
    return math.log(x, b)  # MARK


def item_of(a):
    return a.item()  # MARK


def float_divmod(x, y):
    return divmod(x, y)  # MARK


def count_to(n):
    s = 0
    for _ in range(n):  # MARK
        s = s + 1
    return s


def norm_of(x, ord):
    return np.linalg.norm(x, ord=ord)  # MARK


def fro_along_rows(x):
    return np.linalg.norm(x, ord="fro", axis=0)  # MARK


def f_of_matrix(x):
    return np.linalg.norm(x, ord="f", axis=(0, 1))  # MARK


def one_norm_along(x):
    return np.linalg.norm(x, ord=1, axis=(0, 2))  # MARK


def norm_along_three_axes(x):
    return np.linalg.norm(x, axis=(0, 1, 2))  # MARK


PROGRAMS = [
    (negative_base, (2.0,)),
    (negative_int_base, (3,)),
    (negative_root, (1.0 / 3,)),
    (math_pow, (-1.0, 0.5)),  # math domain error (it was the complex number of ``**``)
    (math_pow, (0.0, -1.0)),  # math domain error (it was ZeroDivisionError)
    (math_pow, (-8.0, 3.0)),
    (math_pow, (4.0, 0.5)),
    (math_pow, (-math.inf, 0.5)),
    (math_pow, (0.0, -math.inf)),
    (math_log_base, (8.0, 2.0)),  # (the base was refused with an internal function's name)
    (math_log_base, (2.0, 1.0)),  # ZeroDivisionError
    (math_log_base, (0.0, 2.0)),  # math domain error
    (item_of, (np.arange(3.0),)),  # it said "cannot reshape"
    (item_of, (np.ones((1, 1)),)),
    (float_divmod, (1.0, 0.0)),  # Python's "float divmod()", not floor division's
    (float_divmod, (1, 0.0)),
    (float_divmod, (7.5, -2)),
    (count_to, (np.arange(3.0),)),  # it said "a condition must be a scalar"
    (count_to, (np.array(3.0),)),
    (count_to, (np.array(3),)),
    # NumPy's ValueErrors: they were an axis out of bounds, or a result, silently (ord=3 of
    # a matrix was its nuclear norm).
    (norm_of, (np.arange(3.0), "fro")),
    (norm_of, (np.arange(3.0), "nuc")),
    (norm_of, (np.ones((2, 2)), 3)),
    (norm_of, (np.ones((2, 2)), 0)),
    (norm_of, (np.ones((2, 2)), "bad")),
    (norm_of, (np.ones((2, 2, 2)), 1)),
    (fro_along_rows, (np.ones((2, 2)),)),
    (f_of_matrix, (np.ones((2, 2)),)),
    (one_norm_along, (np.arange(12.0).reshape(2, 3, 2),)),
    (norm_along_three_axes, (np.ones((2, 3, 2)),)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", PROGRAMS, ids=[f"{f.__name__}{args}" for f, args in PROGRAMS])
def test_as_python(fn, args, backend):
    try:
        expected = fn(*args)
    except Exception as exc:
        with pytest.raises(type(exc)) as info:
            myia.myia(fn, backend=backend)(*args)
        assert str(info.value) == str(exc)
        text = "".join(traceback.format_exception(info.value))
        assert PACKAGE not in text, text
        assert "# MARK" in text, text
        return
    got = myia.myia(fn, backend=backend)(*args)
    assert type(got) is type(expected) and np.array_equal(got, expected)


def test_gradients_of_math_pow_and_log_with_a_base():
    check_grad(math_pow, 1.5, 2.5)
    check_grad(math_pow, -2.0, 3.0, wrt=0)
    check_grad(math_log_base, 3.0, 2.0)


@dataclasses.dataclass
class Positive:
    value: float

    def __post_init__(self):
        if self.value < 0:
            raise ValueError("negative")


def make_positive(x):
    return Positive(x).value


def with_default(x, y=2.0):
    return x * y


def grad_of_default(x):
    return grad(with_default, "y")(x)  # MARK default


def first_key(d):
    return d.keys()[0]  # MARK


def first_value(d):
    return d.values()[0]  # MARK


def first_item(d):
    return d.items()[0]  # MARK


@dataclasses.dataclass
class Holder:
    d: dict


def first_key_of_a_field(h):
    return h.d.keys()[0]  # MARK


def named(x, s):
    return x * 2.0 if s == "ab" else x


@dataclasses.dataclass
class Pair:
    a: float
    b: float


def unexpected_keyword(x):
    return Pair(a=x, c=x)  # MARK


def grad_of_string(x):
    return grad(named, "s")(x, "ab")  # MARK


def lambda_arity(x):
    f = lambda a: a * 2.0  # noqa: E731
    return f(x, x)  # MARK


D = {"a": 1.0, "b": 2.0}

REFUSED = [
    # It was an internal error (IndexError).
    (grad_of_default, (1.0,), "which the call does not pass"),
    # Python's TypeErrors; these were the first key, value and item, silently.
    (first_key, (D,), "'dict_keys' object is not subscriptable"),
    (first_value, (D,), "'dict_values' object is not subscriptable"),
    (first_item, (D,), "'dict_items' object is not subscriptable"),
    (first_key_of_a_field, (Holder(D),), "'dict_keys' object is not subscriptable"),
    # Python checks unexpected keywords first (it reported the missing b).
    (unexpected_keyword, (1.0,), r"^Pair.__init__\(\) got an unexpected keyword argument 'c'"),
    # It returned the string.
    (grad_of_string, (1.0,), "grad with respect to argument 1, a string"),
    # Python names a lambda ``<lambda>`` (it was the enclosing function's name).
    (lambda_arity, (1.0,), r"^<lambda>\(\) takes 1 positional argument but 2 were given"),
]


@pytest.mark.parametrize("fn,args,said", REFUSED, ids=[f.__name__ for f, _, _ in REFUSED])
def test_refused_at_the_users_line(fn, args, said):
    with pytest.raises(MyiaTypeError, match=said) as info:
        myia.myia(fn)(*args)
    text = "".join(traceback.format_exception(info.value))
    assert PACKAGE not in text, text
    assert "# MARK" in str(info.value)


def test_grad_of_a_string_at_the_top_level_is_refused():
    with pytest.raises(MyiaTypeError, match="a string has no gradient"):
        grad(lambda s: 2.0)("ab")


@pytest.mark.parametrize("backend", ["debug", "numpy", "jax"])
def test_post_init_raises_as_python(backend):
    # Python runs __post_init__; Myia did not, silently (Positive(-1.0) was made).
    f = myia.myia(make_positive, backend=backend)
    assert f(1.5) == 1.5
    with pytest.raises(ValueError, match="negative"):
        f(-1.0)


def test_an_instance_with_a_post_init_passed_in_is_used():
    assert myia.myia(lambda p: p.value * 2.0)(Positive(1.5)) == 3.0


def exits(x):
    if x > 0.0:
        raise SystemExit(3)  # MARK
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_system_exit_raises_as_python(backend):
    # An exception that is not an `Exception` propagates as itself too, with the Myia
    # traceback as a note and no frame of the package (Myia's frames were all shown).
    with pytest.raises(SystemExit) as info:
        myia.myia(exits, backend=backend)(1.0)
    assert info.value.code == 3
    text = "".join(traceback.format_exception(info.value))
    assert PACKAGE not in text and "# MARK" in text, text
    with pytest.raises(SystemExit) as info:
        grad(exits, backend=backend)(1.0)
    text = "".join(traceback.format_exception(info.value))
    assert PACKAGE not in text and "# MARK" in text, text

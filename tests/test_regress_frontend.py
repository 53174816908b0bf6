"""Regression tests of the frontend on valid programs: where a function's source is found,
and calls that spread a tuple and a dict (``f(*t, **d)``).

Lambdas are found from their code object (file, first line, columns), whatever else is on
their line; each program is a module file of its own, written the way users write them.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import sys
import textwrap

import numpy as np
import pytest

from myia import MyiaTypeError, grad, myia

BACKENDS = ["numpy", "debug"]
try:
    import jax  # noqa: F401

    BACKENDS.append("jax")
except ImportError:  # pragma: no cover - the extra is not installed
    pass


def load(tmp_path, name, source):
    """Import `source` as module `name` from a file (so that Myia can find its source)."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, str(path)


# Lambdas on a line with other code ------------------------------------------------------------

LAMBDAS = """\
import math
from myia import myia, grad
try: r_try = myia(lambda x: math.sqrt(x))(4.0)
except ValueError: r_try = None
f_semi = myia(lambda x: x + 1); g_semi = 3
if True: r_if = myia(lambda x: x * 5)(2)
a_two, b_two = myia(lambda x: x * 2), myia(lambda y: y - 1)
table = {"inc": lambda x: x + 1, "triple": lambda x: x * 3}
pair = (lambda x: x - 10, lambda x: x * 10)
r_call = max(myia(lambda x: x * 7)(1), myia(lambda x: x * 8)(1))
nested = lambda x: (lambda y: y * 2)(x) + (lambda y: y * 3)(x)  # noqa: E731
long = lambda x: (x  # noqa: E731
    + 10
    * x)
same_a, same_b = (lambda x: x + 1.0), (lambda x: x + 1.0)
const_a, const_b = (lambda: 1.0), (lambda: 2.0)
dflt_a, dflt_b = (lambda x, k=1.0: x + k), (lambda x, k=2.0: x + k)
@(lambda fn: myia(fn))
def decorated(x): return x * 4
"""


@pytest.fixture
def lambdas(tmp_path):
    return load(tmp_path, "lambdas_of_lines", LAMBDAS)[0]


def test_lambda_after_try_and_semicolon(lambdas):
    assert lambdas.r_try == 2.0
    assert lambdas.f_semi(2) == 3
    assert lambdas.r_if == 10


def test_lambdas_in_calls_literals_and_decorators(lambdas):
    assert (lambdas.a_two(3), lambdas.b_two(3)) == (6, 2)
    assert myia(lambdas.table["triple"])(2) == 6
    assert myia(lambdas.table["inc"])(2) == 3
    assert myia(lambdas.pair[1])(2) == 20
    assert myia(lambdas.pair[0])(2) == -8
    assert lambdas.r_call == 8
    assert lambdas.decorated(2) == 8


def test_nested_and_multiline_lambdas(lambdas):
    assert myia(lambdas.nested)(1) == 5
    assert myia(lambdas.long)(2) == 22
    assert grad(lambdas.long)(2.0) == 11.0
    assert grad(lambdas.nested)(1.0) == 5.0
    assert myia(lambdas.same_b)(1.0) == 2.0
    assert (myia(lambdas.const_a)(), myia(lambdas.const_b)()) == (1.0, 2.0)
    assert (myia(lambdas.dflt_a)(0.0), myia(lambdas.dflt_b)(0.0)) == (1.0, 2.0)


def test_lambda_errors_point_at_the_lambda(tmp_path):
    source = """\
    import math
    from myia import myia
    def run():
        try: return myia(lambda x: math.sqrt(x))(-1.0)
        except ValueError as exc: return exc
    def bad():
        f = myia(lambda x: x + "a"); g = 3
        return f(1.0) + g
    """
    module, path = load(tmp_path, "lambda_errors", source)
    assert isinstance(module.run(), ValueError)  # Python's error, as Python raises it
    with pytest.raises(MyiaTypeError) as info:
        module.bad()
    assert info.value.location.filename == path
    assert info.value.location.line == 7
    assert 'f = myia(lambda x: x + "a"); g = 3' in str(info.value)
    assert "in bad.<locals>.<lambda>" in str(info.value)


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_lambdas_on_every_backend(lambdas, backend):
    assert myia(lambdas.table["triple"], backend=backend)(2.0) == 6.0
    assert myia(lambdas.nested, backend=backend)(1.0) == 5.0
    assert myia(lambdas.long, backend=backend)(1.0) == 11.0
    assert math.isclose(myia(lambdas.pair[1], backend=backend)(np.float64(0.5)), 5.0)


# Calls that spread a tuple and a dict ---------------------------------------------------------


def weighted(a, b, c=0.5):
    return a * 10.0 + b + c


def with_kwargs(a, **rest):
    return a + rest["z"] * 2.0


def scaled_sum(*xs, scale=1.0):
    return sum(xs) * scale


def spread_dict(x):
    d = {"b": x * x, "c": 3.0}
    return weighted(x, **d)


def spread_into_kwargs(x):
    return with_kwargs(x, **{"z": x, "w": 1.0})


def spread_both(x):
    t = (x, x, x)
    return scaled_sum(*t, **{"scale": 2.0})


def spread_builtin(x):
    t = (x, 2.0 * x)
    return max(*t)


def spread_to_chosen(x):
    h = (lambda a, b: a - b) if x > 0 else (lambda a, b: a + b)
    return h(**{"b": 1.0, "a": x})


def spread_to_closure(x):
    def inner(a, b=2.0):
        return a * b * x

    return inner(*(x,), **{"b": 3.0})


def spread_and_keywords(x):
    return weighted(x, **{"b": 1.0}, c=x)


def spread_tuple_defaults(x):
    t = (x, 2.0)
    return weighted(*t)


@dataclasses.dataclass
class Affine:
    a: float
    b: float = 2.0

    def scale(self, s, t=1.0):
        return self.a * s + t

    def __call__(self, x, y=0.0):
        return self.a * x + y + self.b


def spread_to_records(x):
    p = Affine(**{"a": x})
    return p.scale(**{"s": 3.0}) + p(*(x,), **{"y": 1.0})


def spread_to_numpy(x):
    return np.maximum(*(x, 0.5)) + np.sum(np.ones(2) * x, **{"axis": 0})


def keyword_only(x, *, s=1.0, t=0.0):
    return x * s + t


def forwards_kwargs(x, **kw):
    return keyword_only(x, **kw)


def forwards_everything(*args, **kw):
    return keyword_only(*args, **kw)


def spread_forwarding(x):
    return forwards_kwargs(x, s=3.0) + forwards_everything(x, t=1.0)


SPREADS = [
    spread_forwarding,
    spread_to_records,
    spread_to_numpy,
    spread_dict,
    spread_into_kwargs,
    spread_both,
    spread_builtin,
    spread_to_chosen,
    spread_to_closure,
    spread_and_keywords,
    spread_tuple_defaults,
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", SPREADS, ids=[f.__name__ for f in SPREADS])
def test_spread_calls(fn, backend):
    for x in (2.0, -1.5):
        assert myia(fn, backend=backend)(x) == fn(x)


@pytest.mark.parametrize("fn", SPREADS, ids=[f.__name__ for f in SPREADS])
def test_spread_calls_grad(fn):
    from grad_helpers import check_grad

    check_grad(fn, 2.0)


@pytest.mark.parametrize("fn", SPREADS, ids=[f.__name__ for f in SPREADS])
def test_spread_calls_interpreted(fn):
    from helpers import run_vm

    assert run_vm(fn, 2.0) == fn(2.0)


def test_forwarding_at_the_entry_point():
    assert myia(forwards_kwargs)(2.0, s=5.0) == 10.0
    assert grad(forwards_kwargs)(2.0, s=5.0) == 5.0
    assert myia(forwards_everything)(2.0, t=5.0) == 7.0


def spread_in_recursion(n, x):
    if n == 0:
        return x
    return spread_in_recursion(*(n - 1,), **{"x": weighted(x, **{"b": 2.0, "c": 0.0})})


def spread_in_loops(x):
    s = 0.0
    for i in range(3):
        s = s + keyword_only(*(x,), **{"s": float(i), "t": 1.0})
    k = 0
    while k < 2:
        s = s + keyword_only(*(x,), **{"t": s})
        k = k + 1
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_spread_calls_in_recursion_and_loops(backend):
    assert myia(spread_in_recursion, backend=backend)(3, 1.0) == spread_in_recursion(3, 1.0)
    assert myia(spread_in_loops, backend=backend)(2.0) == spread_in_loops(2.0)
    assert grad(spread_in_recursion, 1)(3, 1.0) == 1000.0
    from grad_helpers import check_grad

    check_grad(spread_in_loops, 2.0)


def test_spread_axis_stays_a_constant():
    def f(x):
        return np.sum(x, **{"axis": 0})

    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(myia(f)(x), f(x))


def spread_repeated(x):
    return weighted(x, **{"b": 1.0}, b=2.0)


def spread_twice(x):
    return weighted(x, **{"a": 1.0})


def spread_unknown(x):
    return weighted(x, **{"q": 1.0, "b": 2.0})


def spread_not_dict(x):
    return weighted(**x)


def spread_not_tuple(x):
    return weighted(*x)


@pytest.mark.parametrize(
    "fn,message",
    [
        (spread_repeated, "multiple values for keyword argument 'b'"),
        (spread_twice, "multiple values for argument 'a'"),
        (spread_unknown, "unexpected keyword argument 'q'"),
        (spread_not_dict, r"after \*\* must be a dict"),
        (spread_not_tuple, r"after \* must be a tuple"),
    ],
)
def test_spread_call_errors(fn, message):
    with pytest.raises(MyiaTypeError, match=message) as info:
        myia(fn)(1.0)
    loc = info.value.location
    assert (loc.filename, loc.line) == (__file__, fn.__code__.co_firstlineno + 1)
    assert str(info.value).count(f"in {fn.__name__}") == 1  # one frame for the call


# A mutating method used as a value ------------------------------------------------------------


def pops(xs):
    y = xs.pop()
    return y


def test_mutating_method_as_a_value_in_the_interpreter():
    from helpers import run_vm

    from myia import MyiaSyntaxError

    with pytest.raises(MyiaSyntaxError, match=r"pop\(...\) mutates") as info:
        run_vm(pops, [1.0])
    assert info.value.location.line == pops.__code__.co_firstlineno + 1
    with pytest.raises(MyiaSyntaxError, match=r"xs.pop\(...\) mutates xs") as info:
        myia(pops)([1.0])
    assert info.value.location.line == pops.__code__.co_firstlineno + 1


def test_parse_disturbed_by_another_thread(monkeypatch):
    """A parse another thread disturbed is parsed again (CPython 3.11's shared AST counter).

    Found on ``backend="jax"``: its code generator parsed while the native backend's
    background compile parsed too, and the user got ``SystemError: AST constructor
    recursion depth mismatch`` from inside Myia.
    """
    import ast

    from helpers import background_done

    from myia import pyast

    # (Patched, `ast.parse` is every thread's: earlier programs' threads end first.)
    background_done()
    real, failures = ast.parse, [2]

    def disturbed(*args, **kwargs):
        if failures[0]:
            failures[0] -= 1
            raise SystemError("AST constructor recursion depth mismatch (before=51, after=27)")
        return real(*args, **kwargs)

    monkeypatch.setattr(ast, "parse", disturbed)
    assert isinstance(pyast.parse("x = 1").body[0], ast.Assign)
    monkeypatch.setattr(ast, "parse", lambda *a, **k: (_ for _ in ()).throw(SystemError("other")))
    with pytest.raises(SystemError, match="other"):
        pyast.parse("x = 1")


def _zeros_in_branches(x, c):
    def make(n):
        return np.zeros(n) + x

    if c > 0:
        return make(3)
    return make(3) * 2.0


def _closure_in_a_loop_and_a_branch(x, n):
    def step(y, k):
        return np.tanh(y * x + np.ones(k))

    y = np.zeros(4)
    for _ in range(n):
        y = step(y, 4)
    if n > 2:
        y = step(y, 4)
    return np.sum(y)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_a_function_defined_once_is_called_directly_in_later_blocks(backend):
    # `make` reached the branch as a parameter of its block: a call of a function value,
    # on arguments broadened, so `np.zeros(3)` there had a shape unknown at compile time
    # (and the JAX backend ran the program on the host).
    f = myia(_zeros_in_branches, backend=backend)
    for c in (1, -1):
        np.testing.assert_array_equal(f(0.5, c), _zeros_in_branches(0.5, c))
        assert f.specialization(0.5, c).graph.output.abstract.shape == (3,)
    from myia.testing import check_grad

    g = myia(_closure_in_a_loop_and_a_branch, backend=backend)
    assert g(0.5, 3) == pytest.approx(_closure_in_a_loop_and_a_branch(0.5, 3))
    check_grad(_closure_in_a_loop_and_a_branch, 0.5, 3, wrt=0, backend=backend)

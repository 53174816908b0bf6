"""Regression tests of the frontend on valid programs: where a function's source is found,
and calls that spread a tuple and a dict (``f(*t, **d)``).

Lambdas are found from their code object (file, first line, columns), whatever else is on
their line; each program is a module file of its own, written the way users write them.
"""

from __future__ import annotations

import importlib.util
import math
import sys
import textwrap

import numpy as np
import pytest

from myia import MyiaTypeError, grad, myia


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

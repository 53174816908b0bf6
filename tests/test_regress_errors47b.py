"""User mistakes whose messages misled, or showed the frames of the package.

- ``myia.checkpoint(None)``, ``myia.checkpoint(f, loops="bogus")`` and ``myia.jacrev(g,
  argnums="x")`` at the top level showed the frames of the package under the user's call.
- ``np.concatenate(a, b)`` (the tuple forgotten) said only that the axis must be known at
  compile time; ``np.zeros(2, 3)`` (the shape's tuple forgotten) that the dtype must be.
  Both now say how to pass the arrays, or the shape, as one tuple.
- ``x.reshape()`` was a MyiaShapeError, "cannot reshape ... into shape ()"; it is NumPy's
  TypeError message.
- A call with too many positional arguments of a function with defaults (``np.exp(x, x, x,
  x)``, the ufunc's ``out`` one) said "takes 2 positional arguments"; it is Python's (and
  NumPy's) "takes from 1 to 2 positional arguments".
- ``x.tofile('a')`` said "unsupported operation getattr on (f64 x 3, 'tofile')"; it says that
  Myia does not support NumPy's array method, unlike a misspelt one (Python's message).

Each program is a module of its own written to ``tmp_path``, the faulty line marked ``# HERE``.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback

import numpy as np
import pytest

import myia
from myia import MyiaTypeError

PACKAGE = os.path.dirname(os.path.abspath(myia.__file__))
BACKENDS = ["numpy", "debug", "jax"]


def _backend(name):
    if name == "jax":
        pytest.importorskip("jax")
    return name


def user_module(tmp_path, name, source):
    """The module of `source`, written to ``tmp_path``, and its file name."""
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, str(path)


def check_at_line(exc, path, source):
    """`exc` names `path` at the line marked ``# HERE``, with its text, and no file of Myia."""
    line = next(i for i, t in enumerate(source.splitlines(), 1) if "# HERE" in t)
    text = source.splitlines()[line - 1].split("# HERE")[0].strip()
    shown = "".join(traceback.format_exception(exc))
    assert PACKAGE not in shown, shown
    assert f'File "{path}", line {line}' in shown, shown
    assert text in shown, shown


# Mistakes in a call of Myia's API at the top level ----------------------------------------------


def square_sum(x):
    return np.sum(x * x)


API_MISTAKES = [
    (lambda: myia.checkpoint(None), TypeError, "needs a function to checkpoint"),
    (lambda: myia.checkpoint(square_sum, loops="bogus"), ValueError, "loops must be one of"),
    (lambda: myia.checkpoint(loops="sqrt")(3), TypeError, "takes a Python function, not int"),
    (lambda: myia.jacrev(square_sum, argnums="x"), TypeError, "argnums is a position"),
    (lambda: myia.jacfwd(square_sum, argnums=1.5), TypeError, "argnums is a position"),
    (lambda: myia.hessian(square_sum, argnums=(0, "y")), TypeError, "argnums is a position"),
]


@pytest.mark.parametrize("k", range(len(API_MISTAKES)))
def test_a_mistake_in_a_call_of_a_transformation_shows_no_frame_of_the_package(k):
    call, cls, said = API_MISTAKES[k]
    with pytest.raises(cls, match=said) as info:
        call()
    assert type(info.value) is cls
    shown = "".join(traceback.format_exception(info.value))
    assert PACKAGE not in shown, shown
    assert __file__ in shown, shown


def test_checkpoint_and_jacrev_still_work_at_the_top_level():
    x = np.array([1.0, 2.0])
    assert myia.checkpoint(square_sum)(x) == 5.0
    assert np.allclose(myia.jacrev(square_sum)(x), 2 * x)


# Messages that say what the user meant ---------------------------------------------------------

SAID = [
    (
        "np.concatenate(x, x)",
        "the axis of concatenate must be known at compile time, got f64 x 3; to join arrays, "
        "pass them as one tuple: np.concatenate((a, b)), not np.concatenate(a, b)",
    ),
    (
        "np.stack(x, x)",
        "the axis of stack must be known at compile time, got f64 x 3; to join arrays, "
        "pass them as one tuple: np.stack((a, b)), not np.stack(a, b)",
    ),
    (
        "np.concatenate([x, x, x], x)",
        "the axis of concatenate must be known at compile time, got f64 x 3; to join arrays, "
        "pass them as one tuple: np.concatenate((a, b)), not np.concatenate(a, b)",
    ),
    (
        "np.zeros(2, 3) + x[0]",
        "the dtype of zeros must be known at compile time, got i64; the shape of an array is "
        "one tuple: np.zeros((2, 3)), not np.zeros(2, 3)",
    ),
    (
        "np.ones(2, 3) + x[0]",
        "the dtype of ones must be known at compile time, got i64; the shape of an array is "
        "one tuple: np.ones((2, 3)), not np.ones(2, 3)",
    ),
    (
        "np.full(2, 3, 4) + x[0]",
        "the dtype of full must be known at compile time, got i64; the shape of an array is "
        "one tuple: np.full((2, 3), fill_value), not np.full(2, 3, fill_value)",
    ),
    ("x.reshape()", "reshape() takes exactly 1 argument (0 given)"),
    ("np.exp(x, x, x, x)", "exp() takes from 1 to 2 positional arguments but 4 were given"),
    ("np.add(x, x, x, x)", "add() takes from 2 to 3 positional arguments but 4 were given"),
    ("scaled(x, 2.0, 3.0)", "scaled() takes from 1 to 2 positional arguments but 3 were given"),
]

#: NumPy's attributes that Myia lacks (NumPy runs them: ``tofile`` would write a file).
UNSUPPORTED = [
    ("x.tofile('a')", "Myia does not support the array method 'tofile'"),
    ("x.flags", "Myia does not support the array attribute 'flags'"),
]

SAID_MODULE = """\
import numpy as np


def scaled(x, scale=1.0):
    return x * scale


def f(x):
    return {expr}  # HERE
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(SAID)))
def test_a_mistake_says_what_the_user_meant(tmp_path, k, backend):
    backend = _backend(backend)
    expr, said = SAID[k]
    source = SAID_MODULE.format(expr=expr)
    module, path = user_module(tmp_path, f"said_{k}_{backend}", source)
    with pytest.raises(TypeError):  # Python's (NumPy's) class of error
        module.f(np.ones(3))
    with pytest.raises(MyiaTypeError) as info:
        myia.myia(module.f, backend=backend)(np.ones(3))
    assert info.value.message == said
    check_at_line(info.value, path, source)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(UNSUPPORTED)))
def test_a_numpy_attribute_myia_lacks_is_said_unsupported(tmp_path, k, backend):
    backend = _backend(backend)
    expr, said = UNSUPPORTED[k]
    source = SAID_MODULE.format(expr=expr)
    module, path = user_module(tmp_path, f"unsupported_{k}_{backend}", source)
    with pytest.raises(MyiaTypeError) as info:
        myia.myia(module.f, backend=backend)(np.ones(3))
    assert info.value.message == said
    check_at_line(info.value, path, source)


def test_a_misspelt_array_method_keeps_pythons_message():
    with pytest.raises(MyiaTypeError) as info:
        myia.myia(lambda x: x.tofil("a"))(np.ones(3))
    said = "'numpy.ndarray' object has no attribute 'tofil'. Did you mean: 'tofile'?"
    assert info.value.message == said


def test_the_right_calls_still_run():
    x = np.array([1.0, 2.0, 3.0])

    def f(x):
        a = np.concatenate((x, x)) + np.zeros((6,)) + np.full((6,), 1.0)
        return np.sum(a) + np.sum(x.reshape(3, 1)) + np.exp(x)[0]

    assert myia.myia(f)(x) == pytest.approx(f(x))

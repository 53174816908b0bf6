"""User mistakes and run-time errors that did not point at the user's line.

A shape error deferred to run time (``x + y`` after ``if b: x = x.T``, on the path where it
does not fit, `myia.infer.deferred`) was raised as ``MyiaShapeError(message)`` with no frames:
its ``location`` was None, and the debug backend showed its Myia traceback twice (in the
message and again as a note). It is now the compile-time error itself, with its frames, on
every backend, in a saved and loaded program too.

``raise ERROR`` of an exception instance defined in the user's module raised
``TypeError: 'ValueError' object is not callable`` (the instance was called as a class); it
raises the instance (a fresh copy per run, so that the notes of a run are not kept), and a
saved program holding one loads.

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
from myia import MyiaNameError, MyiaShapeError, MyiaTypeError, grad
from myia.saving import load, save

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


def marked(source):
    """The line number of ``# HERE`` in `source`, and its text."""
    line = next(i for i, t in enumerate(source.splitlines(), 1) if "# HERE" in t)
    return line, source.splitlines()[line - 1].split("# HERE")[0].strip()


def check_at_line(exc, path, source):
    """`exc` names `path` at the marked line with its text, once, and no file of Myia."""
    line, text = marked(source)
    shown = "".join(traceback.format_exception(exc))
    assert PACKAGE not in shown, shown
    assert f'File "{path}", line {line}' in shown, shown
    assert text in shown, shown
    assert shown.count("Myia traceback") == 1, shown


TRANSPOSE = """\
import numpy as np


def f(x, y, b):
    if b:
        x = x.T
    return np.sum(np.tanh(x + y) * y)  # HERE
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shape_error_deferred_to_run_time_has_the_users_location(tmp_path, backend):
    backend = _backend(backend)
    module, path = user_module(tmp_path, f"deferred_{backend}", TRANSPOSE)
    r, y = np.ones((2, 3)), np.ones((3, 2))
    line, _ = marked(TRANSPOSE)
    for fn in [myia.myia(module.f, backend=backend), myia.myia(grad(module.f), backend=backend)]:
        fn(r, y, True)  # the path where ``x + y`` fits runs
        for _ in range(2):  # (nothing a run adds to the error is kept for the next)
            with pytest.raises(MyiaShapeError, match=r"\(2, 3\) and \(3, 2\)") as info:
                fn(r, y, False)
            err = info.value
            assert err.location is not None, str(err)
            assert (err.location.filename, err.location.line) == (path, line)
            assert not getattr(err, "__notes__", None), err.__notes__
            check_at_line(err, path, TRANSPOSE)


def test_a_saved_program_keeps_the_location_of_a_deferred_shape_error(tmp_path):
    module, path = user_module(tmp_path, "deferred_saved", TRANSPOSE)
    r, y = np.ones((2, 3)), np.ones((3, 2))
    save(myia.myia(module.f), tmp_path / "f.myia", r, y, True)
    loaded = load(tmp_path / "f.myia")
    assert loaded(r, y, True) == pytest.approx(module.f(r, y, True))
    with pytest.raises(MyiaShapeError) as info:
        loaded(r, y, False)
    assert (info.value.location.filename, info.value.location.line) == (path, marked(TRANSPOSE)[0])
    check_at_line(info.value, path, TRANSPOSE)


RAISE_INSTANCE = """\
ERROR = ValueError("the learning rate must be positive")


def f(lr):
    if lr <= 0.0:
        raise ERROR  # HERE
    return lr * 2.0
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_raising_an_exception_instance_raises_it(tmp_path, backend):
    # It was ``TypeError: 'ValueError' object is not callable``.
    backend = _backend(backend)
    module, path = user_module(tmp_path, f"raise_instance_{backend}", RAISE_INSTANCE)
    fn = myia.myia(module.f, backend=backend)
    assert fn(0.5) == 1.0
    for _ in range(2):
        with pytest.raises(ValueError) as info:
            fn(-1.0)
        assert type(info.value) is ValueError
        assert info.value.args == ("the learning rate must be positive",)
        check_at_line(info.value, path, RAISE_INSTANCE)
    assert not hasattr(module.ERROR, "__notes__")  # the user's object is left as it was


def test_a_saved_program_raising_an_exception_instance_loads(tmp_path):
    module, path = user_module(tmp_path, "raise_instance_saved", RAISE_INSTANCE)
    save(myia.myia(module.f), tmp_path / "f.myia", 0.5)
    loaded = load(tmp_path / "f.myia")
    assert loaded(0.5) == 1.0
    with pytest.raises(ValueError, match="learning rate") as info:
        loaded(-1.0)
    check_at_line(info.value, path, RAISE_INSTANCE)


# Python's own errors, with Python's class and message -------------------------------------------

AS_PYTHON = [
    # ``a, b = xs`` of the wrong length raised ``myia.operations.lib.UnpackError``, a class of
    # Myia's that the user's traceback showed; it is Python's ValueError.
    ("def f(a):\n    x, y = a  # HERE\n    return x + y\n", (np.ones(3),)),
    ("def f(a):\n    x, y = (a, a, a)  # HERE\n    return x + y\n", (np.ones(3),)),
    ("def f(a):\n    x, y, z = (a, a)  # HERE\n    return x + y\n", (1.0,)),
    ("def f(a):\n    x, y, z, w = a  # HERE\n    return x + y\n", (np.ones(3),)),
    ("def f(a):\n    x, *r, y = a  # HERE\n    return x + y\n", (np.ones(1),)),
    # ``range(x.shape)`` was "unsupported operation sub on ((i64,), i64)".
    (
        "def f(x):\n    s = 0.0\n    for i in range(x.shape):  # HERE\n        s = s + x[i]\n"
        "    return s\n",
        (np.ones(3),),
    ),
    (
        "def f(x):\n    s = 0.0\n    for i in range(1, x.shape):  # HERE\n        s = s + x[i]\n"
        "    return s\n",
        (np.ones(3),),
    ),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(AS_PYTHON)))
def test_python_errors_are_pythons(tmp_path, k, backend):
    backend = _backend(backend)
    source, args = AS_PYTHON[k]
    module, path = user_module(tmp_path, f"as_python_{k}_{backend}", source)
    with pytest.raises(Exception) as expected:
        module.f(*args)
    with pytest.raises(Exception) as info:
        myia.myia(module.f, backend=backend)(*args)
    assert type(info.value) is type(expected.value)
    assert str(info.value) == str(expected.value)
    check_at_line(info.value, path, source)


# Misspelt names: Python's message and its suggestion --------------------------------------------

MISSPELT = [
    # The attribute of a module showed the module's repr (its file in site-packages).
    ("np.tahn(x)", "module 'numpy' has no attribute 'tahn'. Did you mean: 'tan'?"),
    ("np.exq(x)", "module 'numpy' has no attribute 'exq'. Did you mean: 'exp'?"),
    ("np.linalg.nrom(x)", "module 'numpy.linalg' has no attribute 'nrom'"),
    ("np.frobnicate(x)", "module 'numpy' has no attribute 'frobnicate'"),
    ("x * Config.rate", "type object 'Config' has no attribute 'rate'. Did you mean: 'rates'?"),
    # An undefined name: the close names of the function, the module and the builtins.
    ("x * wieght", "name 'wieght' is not defined. Did you mean: 'weight'?"),
    ("helpr(x)", "name 'helpr' is not defined. Did you mean: 'helper'?"),
    ("x * learning_rat", "name 'learning_rat' is not defined. Did you mean: 'learning_rate'?"),
    ("lenn((x,)) * x", "name 'lenn' is not defined. Did you mean: 'len'?"),
    ("x * undefined_thing", "name 'undefined_thing' is not defined"),
]

#: Misspelt attributes of a dataclass or an array: "unsupported operation getattr on (P(w ::
#: f64 x 3, bias :: f64), 'W')"; Python's AttributeError message and suggestion.
MISSPELT_ATTRIBUTES = [
    ("np.sum(p.W * x)", "'Params' object has no attribute 'W'. Did you mean: 'w'?"),
    ("p.totl() * x", "'Params' object has no attribute 'totl'. Did you mean: 'total'?"),
    ("p.frobnicate * x", "'Params' object has no attribute 'frobnicate'"),
    ("x.shap[0] * x", "'numpy.ndarray' object has no attribute 'shap'. Did you mean: 'shape'?"),
    (
        "x.resahpe(3, 1)",
        "'numpy.ndarray' object has no attribute 'resahpe'. Did you mean: 'reshape'?",
    ),
    ("x.detach()", "'numpy.ndarray' object has no attribute 'detach'"),
]

MISSPELT_MODULE = """\
import numpy as np


class Config:
    rates = 2.0


def helper(x):
    return x


def f(x, learning_rate=0.5):
    weight = np.ones(3)
    return {expr}  # HERE
"""


@pytest.mark.parametrize("k", range(len(MISSPELT)))
def test_a_misspelt_name_is_named_as_python_names_it(tmp_path, k):
    expr, said = MISSPELT[k]
    source = MISSPELT_MODULE.format(expr=expr)
    module, path = user_module(tmp_path, f"misspelt_{k}", source)
    with pytest.raises(MyiaNameError) as info:
        myia.myia(module.f)(np.ones(3))
    assert info.value.message == said
    check_at_line(info.value, path, source)


ATTRIBUTE_MODULE = """\
import dataclasses

import numpy as np


@dataclasses.dataclass
class Params:
    w: np.ndarray
    bias: float

    def total(self):
        return np.sum(self.w) + self.bias


def f(x):
    p = Params(x * 2.0, 1.0)
    return {expr}  # HERE
"""


@pytest.mark.parametrize("k", range(len(MISSPELT_ATTRIBUTES)))
def test_a_misspelt_attribute_is_named_as_python_names_it(tmp_path, k):
    expr, said = MISSPELT_ATTRIBUTES[k]
    source = ATTRIBUTE_MODULE.format(expr=expr)
    module, path = user_module(tmp_path, f"misspelt_attribute_{k}", source)
    with pytest.raises(MyiaTypeError) as info:
        myia.myia(module.f)(np.ones(3))
    assert info.value.message == said
    check_at_line(info.value, path, source)


def test_a_misspelt_attribute_of_a_module_passed_in_is_named_too():
    def f(x, m=np):
        return m.tahn(x)

    with pytest.raises(MyiaTypeError, match=r"'tahn'\. Did you mean: 'tan'\?"):
        myia.myia(f)(np.ones(3))


# A library function called with the wrong arguments is named as the user called it -------------

LIBRARY_ARGUMENTS = [
    # They were named by Myia's library code: np_dot(), numpy_ufunc.<locals>.ufunc1(), ...
    ("np.dot(x)", "dot() missing required argument 'b'"),
    ("np.exp(x, x, x, x)", "exp() takes from 1 to 2 positional arguments but 4 were given"),
    ("np.sum(x, axis=0, keepdim=True)", "sum() got an unexpected keyword argument 'keepdim'"),
    ("x.sum(axis=0, keepdim=True)", "sum() got an unexpected keyword argument 'keepdim'"),
    ("x + np.linspace(0.0)", "linspace() missing required argument 'stop'"),
    ("math.atan2(x[0])", "atan2() missing required argument 'y'"),
    ("max(x[0], x[1], axis=0)", "max() got an unexpected keyword argument 'axis'"),
]

LIBRARY_MODULE = """\
import math

import numpy as np


def f(x):
    return {expr}  # HERE
"""


@pytest.mark.parametrize("k", range(len(LIBRARY_ARGUMENTS)))
def test_a_library_function_is_named_as_the_user_called_it(tmp_path, k):
    expr, said = LIBRARY_ARGUMENTS[k]
    source = LIBRARY_MODULE.format(expr=expr)
    module, path = user_module(tmp_path, f"library_{k}", source)
    with pytest.raises(MyiaTypeError) as info:
        myia.myia(module.f)(np.ones(3))
    assert info.value.message == said
    check_at_line(info.value, path, source)


# Mistakes in a call of Myia's API --------------------------------------------------------------


def double(x):
    return x * 2.0


def inner_product(x, y):
    return np.sum(x * y)


API_MISTAKES = [
    # They showed the frames of the package (get_backend, MyiaFunction.__init__...).
    (lambda: myia.myia(double, backend="nmupy")(1.0), ValueError, "unknown backend 'nmupy'"),
    (lambda: myia.myia(double, device="gpu")(1.0), ValueError, "takes no option"),
    (lambda: myia.myia(double, backend="debug").generated_code(1.0), ValueError, "no source"),
    (lambda: myia.myia(double).lowered_text(1.0), ValueError, "does not use XLA"),
    (
        lambda: myia.jacrev(inner_product, argnums=5)(np.ones(2), np.ones(2)),
        ValueError,
        "no argument at position 5",
    ),
]


@pytest.mark.parametrize("k", range(len(API_MISTAKES)))
def test_a_mistake_in_a_call_of_the_api_shows_no_frame_of_the_package(k):
    call, cls, said = API_MISTAKES[k]
    with pytest.raises(cls, match=said) as info:
        call()
    shown = "".join(traceback.format_exception(info.value))
    assert PACKAGE not in shown, shown
    assert __file__ in shown, shown


def scaled(x, scale=1.0):
    return x * scale


@pytest.mark.parametrize("how", ["myia", "grad"])
def test_an_unknown_keyword_at_the_entry_is_pythons_complaint(how):
    # It was "scaled(): missing a required argument: 'x'" (inspect's first complaint).
    fn = myia.myia(scaled) if how == "myia" else grad(scaled)
    with pytest.raises(MyiaTypeError) as info:
        fn(y=1.0)
    assert str(info.value) == "scaled() got an unexpected keyword argument 'y'"
    with pytest.raises(MyiaTypeError) as info:
        fn(1.0, scael=2.0)
    said = "scaled() got an unexpected keyword argument 'scael'. Did you mean: 'scale'?"
    assert str(info.value) == said
    assert PACKAGE not in "".join(traceback.format_exception(info.value))

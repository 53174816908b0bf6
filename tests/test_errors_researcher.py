"""Wrong programs a researcher writes, under grad, vmap and jvp, on every backend.

Each program of `WRONG` is a plausible mistake (a matmul of the wrong shapes, a missing
argument, an index past the end in a loop, a loss that is not a scalar...). Run through a
transformation on each backend, it raises a `MyiaError` or the exception Python raises, with
the line marked ``# MARK`` in its traceback, no frame of the package, and the same frames as
the reference interpreter (the debug backend).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import os
import traceback

import numpy as np
import pytest

import myia
from myia import MyiaError, grad, jvp, vmap
from myia.saving import load, save

PACKAGE = os.path.dirname(os.path.abspath(myia.__file__))
COMPILED = ["numpy"]
COMPILED += ["jax"] if importlib.util.find_spec("jax") else []
COMPILED += ["native"] if importlib.util.find_spec("numba") else []


def mlp_wrong_shape(W, x):
    h = np.tanh(W @ x)  # MARK
    return np.sum(h)


def two_args(a, b):
    return a * b


def calls_with_one_arg(x):
    return two_args(x)  # MARK


def missing_key(d):
    return d["c"] * 2.0  # MARK


def past_the_end(x):
    s = 0.0
    for i in range(4):
        s = s + x[i] * x[i]  # MARK
    return s


def not_a_scalar(x):
    return x * 2.0  # MARK


def reshape_wrong(x):
    y = np.reshape(x, (4, 2))  # MARK
    return np.sum(y)


def concat_wrong(x, y):
    return np.sum(np.concatenate((x, y), axis=1))  # MARK


def unpack_three(x):
    a, b = (x, x, x)  # MARK
    return a + b


def range_of_float(x):
    s = 0.0
    for i in range(x):  # MARK
        s = s + i
    return s


def item_of_vector(x):
    return x.item()  # MARK


def log_negative(x):
    y = math.log(x - 2.0)  # MARK
    return y * x


def assert_positive(x):
    assert x > 0.0, "x must be positive"  # MARK
    return x * x


def raise_in_loop(x):
    s = 0.0
    for i in range(3):
        if x * i > 4.0:
            raise ValueError("diverged")  # MARK
        s = s + x * i
    return s


def broadcast_wrong(x, y):
    return np.sum(x + y)  # MARK


def int_div_zero(x, n):
    return x * (10 // n)  # MARK


@dataclasses.dataclass
class Params:
    w: float
    b: float


def field_typo(p, x):
    return p.weight * x + p.b  # MARK


def cholesky_not_positive(a):
    return np.sum(np.linalg.cholesky(a))  # MARK


def index_at(x, i):
    return x[i] * 2.0  # MARK


def loop_calls_helper(x):
    s = 0.0
    for i in range(5):
        s = s + index_at(x, i)  # MARK loop
    return s


def divide_down_to_zero(x):
    n = 3
    s = 0.0
    while n >= 0:
        s = s + x / n  # MARK
        n = n - 1
    return s


def logs_of_comprehension(x):
    ys = [math.log(x - i) for i in range(3)]  # MARK
    return sum(ys)


def closure_sqrt(x):
    def inner(y):
        return math.sqrt(y - x)  # MARK

    return inner(x) + x  # MARK call


def inner_acos(x):
    return math.acos(x)  # MARK


def middle_acos(x):
    return inner_acos(x) + 1.0  # MARK middle


def outer_acos(x):
    return middle_acos(x) * 2.0  # MARK outer


def take_runtime(x, i):
    return np.sum(np.take(x, i))  # MARK


def softmax_wrong_axis(x):
    e = np.exp(x - np.max(x, axis=1))  # MARK
    return np.sum(e / np.sum(e, axis=1))


def norm_fro_of_rows(x):
    return np.sum(np.linalg.norm(x, ord="fro", axis=1))  # MARK


def grad_of_a_vector(x):
    return grad(not_a_scalar)(x)  # MARK


def vmap_of_unequal(x, y):
    return vmap(two_args)(x, y)  # MARK


def lambda_arity(x):
    f = lambda a: a * 2.0  # noqa: E731
    return f(x, x)  # MARK


V = np.ones(3)
B2 = np.ones((2, 3))

WRONG = [
    (mlp_wrong_shape, "grad", (np.ones((3, 4)), V)),
    (mlp_wrong_shape, "vmap", (np.ones((2, 3, 4)), B2)),
    (calls_with_one_arg, "grad", (1.0,)),
    (missing_key, "grad", ({"a": 1.0, "b": 2.0},)),
    (past_the_end, "grad", (V,)),
    (past_the_end, "vmap", (B2,)),
    (past_the_end, "jvp", (V,)),
    (not_a_scalar, "grad", (V,)),
    (reshape_wrong, "vmap", (np.ones((2, 6)),)),
    (concat_wrong, "grad", (np.ones((2, 3)), np.ones((3, 3)))),
    (unpack_three, "grad", (1.0,)),  # it pointed at the return, not at the unpacking
    (range_of_float, "grad", (3.0,)),
    (item_of_vector, "grad", (V,)),
    (log_negative, "grad", (1.0,)),
    (log_negative, "jvp", (1.0,)),
    (assert_positive, "vmap", (np.array([1.0, -1.0]),)),
    (assert_positive, "jvp", (-1.0,)),
    (raise_in_loop, "grad", (3.0,)),
    (raise_in_loop, "vmap", (np.array([1.0, 3.0]),)),
    (broadcast_wrong, "vmap", (B2, np.ones((2, 4)))),
    (int_div_zero, "jvp", (1.0, 0)),
    (field_typo, "grad", (Params(1.0, 2.0), 3.0)),
    (cholesky_not_positive, "grad", (-np.eye(2),)),
    (loop_calls_helper, "grad", (V,)),
    (loop_calls_helper, "vmap", (B2,)),  # frames "vmap(f" and the ``for``; debug lost one
    (loop_calls_helper, "jvp", (V,)),
    (divide_down_to_zero, "grad", (1.0,)),
    (logs_of_comprehension, "grad", (1.5,)),
    (closure_sqrt, "grad", (1.0,)),
    (outer_acos, "grad", (2.0,)),
    (outer_acos, "jvp", (2.0,)),
    (take_runtime, "grad", (V, 7)),
    (take_runtime, "vmap", (B2, np.array([0, 7]))),
    (softmax_wrong_axis, "grad", (B2,)),
    (norm_fro_of_rows, "grad", (B2,)),
    (grad_of_a_vector, "plain", (V,)),
    (vmap_of_unequal, "plain", (np.ones(2), np.ones(3))),
    (lambda_arity, "grad", (1.0,)),
]


def run(fn, how, args, backend):
    """`fn` through transformation `how`, compiled for `backend`, on `args`."""
    if how == "grad":
        return grad(fn, backend=backend)(*args)
    if how == "plain":
        return myia.myia(fn, backend=backend)(*args)

    def transformed(*xs):
        return vmap(fn)(*xs) if how == "vmap" else jvp(fn, xs, xs)  # MARK transform

    return myia.myia(transformed, backend=backend)(*args)


def raised(fn, how, args, backend):
    """The exception raised, and the frames of its traceback."""
    with pytest.raises(BaseException) as info:
        run(fn, how, args, backend)
    exc = info.value
    text = "".join(traceback.format_exception(exc))
    assert PACKAGE not in text, text
    assert "# MARK\n" in text or "# MARK " in text, text
    assert (
        isinstance(exc, MyiaError)
        or type(exc).__module__ == "builtins"
        or (isinstance(exc, np.linalg.LinAlgError))
    ), text
    assert not isinstance(exc, myia.MyiaInternalError), text
    frames = [t.strip() for t in text.splitlines() if t.strip().startswith("File ")]
    return exc, (frames, getattr(exc, "__notes__", None))


@pytest.fixture(scope="module")
def reference():
    """The exceptions of the reference interpreter, by case."""
    return {}


@pytest.mark.parametrize("backend", ["debug", *COMPILED])
@pytest.mark.parametrize("fn,how,args", WRONG, ids=[f"{f.__name__}-{how}" for f, how, _ in WRONG])
def test_a_wrong_program_points_at_its_line(fn, how, args, backend, reference):
    exc, frames = raised(fn, how, args, backend)
    key = (fn.__name__, how)
    if backend == "debug":
        reference[key] = (type(exc), str(exc), frames)
    elif key in reference:
        assert (type(exc), str(exc), frames) == reference[key]


def test_a_function_that_always_raises_has_no_gradient_at_the_line_that_raises():
    # It pointed at the return (``return a + b``: "returns ⊥"), not at the unpacking.
    with pytest.raises(myia.MyiaTypeError, match="never returns") as info:
        grad(unpack_three)(1.0)
    assert str(info.value).splitlines()[-2].strip() == "a, b = (x, x, x)  # MARK"


def test_the_frames_of_a_batched_loop_are_the_users(tmp_path):
    # The batched graphs of a loop are ``vmap(f:loop)``: a frame was named "vmap(f", and the
    # debug backend lost the frame of the call of vmap (a tail call).
    for backend in ["debug", "numpy"]:
        with pytest.raises(IndexError) as info:
            run(loop_calls_helper, "vmap", (B2,), backend)
        note = "\n".join(info.value.__notes__)
        shown = [t.split(", in ")[1] for t in note.splitlines() if t.startswith("  File ")]
        assert shown == ["run.<locals>.transformed", "loop_calls_helper", "index_at"], note


def test_a_loaded_program_keeps_the_calls_down_to_an_error(tmp_path):
    # A program loaded (the disk cache, `myia.load`) showed the innermost line alone, in
    # ``grad(outer_acos)``, not the calls leading to it.
    save(grad(outer_acos), tmp_path / "g.myia", 0.5)
    with pytest.raises(ValueError, match="math domain error") as info:
        load(tmp_path / "g.myia")(2.0)
    note = "\n".join(info.value.__notes__)
    shown = [t.split(", in ")[1] for t in note.splitlines() if t.startswith("  File ")]
    assert shown == ["outer_acos", "middle_acos", "inner_acos"], note

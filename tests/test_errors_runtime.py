"""Where run-time errors point: at the user's line, on every backend, never into Myia.

A run-time error (an empty ``max``, an index out of range, a division by zero) is raised as
Python raises it, with the Myia traceback as a note. Raised inside Myia's library code
(``max``, ``np.take``, ``math.floor``, a backpropagator), the traceback still shows the
user's line that called it, even when optimization inlined the library code into the user's
function; an error of a backward pass says that it is in the gradient of its line.
"""

from __future__ import annotations

import importlib.util
import math
import os
import traceback

import numpy as np
import pytest

import myia
from myia import grad
from myia import myia as compile_

PACKAGE = os.path.dirname(os.path.abspath(myia.__file__))
BACKENDS = ["numpy", "debug"]
try:
    import jax  # noqa: F401

    BACKENDS.append("jax")
except ImportError:  # pragma: no cover - the extra is not installed
    pass


def line_of(fn, text):
    """The line of `fn`'s source file where `text` is, in `fn`."""
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, t in enumerate(lines) if text in t)


def notes(exc):
    return "\n".join(getattr(exc, "__notes__", []))


def check_note(exc, frames):
    """The note's frames are `frames`, ``(function, line)`` pairs, and nothing of Myia's.

    The Python traceback shows no frame of the package either (the API boundary cut them).
    """
    text = "".join(traceback.format_exception(exc))
    assert PACKAGE not in text, text
    note = notes(exc)
    assert note.startswith("Myia traceback"), note
    assert PACKAGE not in note, note
    shown = [
        (t.split(", in ", 1)[1], int(t.split(", line ")[1].split(",")[0]))
        for t in note.splitlines()
        if t.startswith("  File ")
    ]
    assert shown == frames, note
    for t in note.splitlines():
        if t.startswith("  File "):
            assert t.startswith(f'  File "{__file__}"'), note


def empty_max(x):
    xs = [x for _ in range(0)]
    return max(xs)


def take_out_of_range(x):
    return np.take(x, 10)


def floor_of_inf(x):
    return math.floor(x)


def helper_max(xs):
    return max(xs) * 2.0


def calls_helper_max(x):
    xs = [x for _ in range(0)]
    y = helper_max(xs)
    return y


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "fn,arg,exc,text",
    [
        (empty_max, 1.0, ValueError, "return max(xs)"),
        (take_out_of_range, np.ones(3), IndexError, "np.take(x, 10)"),
        (floor_of_inf, math.inf, OverflowError, "math.floor(x)"),
    ],
)
def test_library_errors_point_at_the_users_line(fn, arg, exc, text, backend):
    with pytest.raises(exc) as info:
        compile_(fn, backend=backend)(arg)
    check_note(info.value, [(fn.__name__, line_of(fn, text))])


@pytest.mark.parametrize("backend", BACKENDS)
def test_library_error_in_a_helper(backend):
    with pytest.raises(ValueError, match="empty sequence") as info:
        compile_(calls_helper_max, backend=backend)(1.0)
    check_note(
        info.value,
        [
            ("calls_helper_max", line_of(calls_helper_max, "y = helper_max(xs)")),
            ("helper_max", line_of(helper_max, "return max(xs)")),
        ],
    )


# Errors of the backward pass ------------------------------------------------------------------

GRAD = " (in the gradient of this line)"


def sqrt_of(x):
    return math.sqrt(x)


def sqrt_helper(x):
    return math.sqrt(x) * 2.0


def calls_sqrt_helper(x):
    y = sqrt_helper(x) + x
    return y


@pytest.mark.parametrize("backend", BACKENDS)
def test_division_by_zero_in_a_gradient(backend):
    # The forward pass runs (sqrt(0) = 0); the backward pass divides by 2 * sqrt(0).
    with pytest.raises(ZeroDivisionError) as info:
        grad(sqrt_of, backend=backend)(0.0)
    check_note(info.value, [("sqrt_of" + GRAD, line_of(sqrt_of, "math.sqrt(x)"))])


@pytest.mark.parametrize("backend", BACKENDS)
def test_division_by_zero_in_the_gradient_of_a_helper(backend):
    with pytest.raises(ZeroDivisionError) as info:
        grad(calls_sqrt_helper, backend=backend)(0.0)
    check_note(
        info.value,
        [
            ("calls_sqrt_helper" + GRAD, line_of(calls_sqrt_helper, "y = sqrt_helper(x) + x")),
            ("sqrt_helper" + GRAD, line_of(sqrt_helper, "math.sqrt(x) * 2.0")),
        ],
    )
    assert "◀" not in notes(info.value)


def sqrt_in_loop(x):
    s = 0.0
    for i in range(3):
        s = s + math.sqrt(x - i)  # MARK loop sqrt
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_division_by_zero_in_the_gradient_of_a_loop_body(backend):
    # The compiled backends showed the line of the ``for`` (that of the sum of the
    # sensitivities the backward loop passes on, computed in the same generated line).
    with pytest.raises(ZeroDivisionError) as info:
        grad(sqrt_in_loop, backend=backend)(2.0)
    check_note(info.value, [("sqrt_in_loop" + GRAD, line_of(sqrt_in_loop, "MARK loop sqrt"))])


def reciprocal(x):
    return 1.0 / x


@pytest.mark.parametrize("backend", BACKENDS)
def test_forward_error_is_at_its_line(backend):
    with pytest.raises(ZeroDivisionError) as info:
        compile_(reciprocal, backend=backend)(0.0)
    check_note(info.value, [("reciprocal", line_of(reciprocal, "1.0 / x"))])


def int_power(a, b):
    return np.power(a, b)  # MARK power


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_numpy_value_error_on_arrays_is_itself_not_a_shape_error(backend):
    # ``np.power`` of integers to a negative integer power: NumPy's ValueError, raised as
    # itself with the Myia traceback as a note, as a math domain error is. It was a
    # MyiaShapeError (every ValueError on arrays was taken for a shape mismatch).
    a, b = np.array([2, 3]), np.array([-1, 2])
    with pytest.raises(ValueError, match="negative integer powers") as info:
        compile_(int_power, backend=backend)(a, b)
    assert not isinstance(info.value, myia.MyiaError)
    check_note(info.value, [("int_power", line_of(int_power, "MARK power"))])


def reshape_to(x, c):
    y = x if c else np.concatenate((x, x[:1]))
    return np.reshape(y, (2, -1))  # MARK reshape


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shape_error_at_run_time_is_still_a_shape_error(backend):
    # The length of ``y`` is known at run time only (6 or 7): its reshape fails there.
    with pytest.raises(myia.MyiaShapeError, match="reshape"):
        compile_(reshape_to, backend=backend)(np.arange(6.0), False)


# Errors of batched code ---------------------------------------------------------------------


def small_only(x):
    assert x < 1.0, "small"  # MARK assert
    return x * 2.0


def row_of(x, i):
    return x[i]  # MARK row


def batched_assert(xs):
    return myia.vmap(small_only)(xs)  # MARK vmap


def batched_rows(x, idx):
    return myia.vmap(row_of, in_axes=(None, 0))(x, idx)  # MARK rows


def jacobian_of_assert(x):
    return myia.jacfwd(small_only)(x)  # MARK jacfwd


@pytest.mark.parametrize("backend", BACKENDS)
def test_errors_under_vmap_show_the_line_of_the_function_batched(backend):
    # The batched graph's nodes derive from the nodes of the function batched: an error
    # raised by them shows its line (the traceback stopped at the call of vmap).
    with pytest.raises(AssertionError, match="small") as info:
        compile_(batched_assert, backend=backend)(np.arange(3.0))
    check_note(
        info.value,
        [
            ("batched_assert", line_of(batched_assert, "MARK vmap")),
            ("small_only", line_of(small_only, "MARK assert")),
        ],
    )
    with pytest.raises(IndexError) as info:
        compile_(batched_rows, backend=backend)(np.ones((2, 3)), np.array([0, 7]))
    check_note(
        info.value,
        [
            ("batched_rows", line_of(batched_rows, "MARK rows")),
            ("row_of", line_of(row_of, "MARK row")),
        ],
    )
    with pytest.raises(AssertionError, match="small") as info:
        compile_(jacobian_of_assert, backend=backend)(2.0)
    assert f"line {line_of(small_only, 'MARK assert')}" in notes(info.value)


TOP_LEVEL = {
    "vmap": lambda: myia.vmap(small_only)(np.arange(3.0)),
    "jvp": lambda: myia.jvp(small_only, (2.0,), (1.0,)),
    "vjp": lambda: myia.vjp(small_only, 2.0),
    "vjp_fn": lambda: myia.vjp(small_only, 0.5)[1](1.0) + myia.vjp(small_only, 2.0)[1](1.0),
    "jacfwd": lambda: myia.jacfwd(small_only)(2.0),
    "jacrev": lambda: myia.jacrev(small_only)(2.0),
    "hessian": lambda: myia.hessian(small_only)(2.0),
}


@pytest.mark.parametrize("how", list(TOP_LEVEL))
def test_errors_under_top_level_transformations_show_no_frame_of_myia(how):
    # The transformations called from Python are entry points, as grad: the traceback
    # stops at the user's call (it showed the frames of myia/transforms/).
    with pytest.raises(AssertionError, match="small") as info:
        TOP_LEVEL[how]()
    assert f"line {line_of(small_only, 'MARK assert')}" in notes(info.value)
    assert PACKAGE not in "".join(traceback.format_exception(info.value))


def test_type_errors_of_top_level_transformations_show_no_frame_of_myia():
    for call in [
        lambda: myia.vmap(small_only)(np.ones(3), np.ones(3)),
        lambda: myia.jvp(small_only, (0.5,), (np.ones(3),)),
        lambda: myia.hessian(lambda x: "a")(2.0),  # (of a tuple, it is JAX's Hessians)
    ]:
        with pytest.raises(myia.MyiaTypeError) as info:
            call()
        assert PACKAGE not in "".join(traceback.format_exception(info.value))


def log_in_loop(x):
    s = 0.0
    for i in range(3):
        s = s + math.log(x - i)
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_frames_of_forward_mode_are_named_after_the_users_function(backend):
    # The tangent graph of ``g`` is ``∂g``: a frame was named ``∂▶log_in_loop``. (The columns
    # of the Hessian are one batched program: its tangent ``dx / (x - i)`` may divide by zero
    # before ``math.log(x - i)`` raises, both at the user's line.)
    with pytest.raises((ValueError, ZeroDivisionError), match="math domain|division") as info:
        compile_(lambda x: myia.hessian(log_in_loop)(x), backend=backend)(2.0)
    note = notes(info.value)
    assert "∂" not in note and "in log_in_loop" in note, note
    assert PACKAGE not in "".join(traceback.format_exception(info.value))


# Several nodes in one generated line ----------------------------------------------------------

NATIVE = ["native"] if importlib.util.find_spec("numba") else []


def sum_past_the_end(x):
    s = 0.0
    for i in range(4):
        s = s + x[i]  # MARK past the end
    return s


def sqrt_at_the_base(x, n):
    if n == 0:
        return math.sqrt(x)  # MARK base
    return sqrt_at_the_base(x, n - 1) * x  # MARK step


def calls_sqrt_at_the_base(x):
    return sqrt_at_the_base(x, 2)  # MARK top


def index_of_comprehension(x, n):
    xs = [x * i for i in range(3)]
    return xs[n]  # MARK index


@pytest.mark.parametrize("backend", BACKENDS + NATIVE)
def test_the_node_of_a_line_that_raised_is_the_one_shown(backend):
    # A generated line computes several nodes (the jump of a loop computes ``s + x[i]`` and
    # ``i + 1``): the column of the operation that raised tells which. The line of the
    # ``for`` was shown, or that of ``if n == 0`` for the gradient of the base case.
    with pytest.raises(IndexError) as info:
        grad(sum_past_the_end, backend=backend)(np.ones(3))
    check_note(info.value, [("sum_past_the_end", line_of(sum_past_the_end, "MARK past"))])
    with pytest.raises(ZeroDivisionError) as info:
        grad(calls_sqrt_at_the_base, backend=backend)(0.0)
    check_note(
        info.value,
        [
            ("calls_sqrt_at_the_base" + GRAD, line_of(calls_sqrt_at_the_base, "MARK top")),
            ("sqrt_at_the_base" + GRAD, line_of(sqrt_at_the_base, "MARK step")),
            ("sqrt_at_the_base" + GRAD, line_of(sqrt_at_the_base, "MARK base")),
        ],
    )


@pytest.mark.parametrize("backend", BACKENDS + NATIVE)
def test_an_index_whose_value_the_gradient_does_not_read_raises_at_its_line(backend):
    # ``xs[n]`` is computed for its errors alone (``seq(seq(xs, xs[n]), result)``): it was
    # not written, and the lazy sensitivity of ``xs`` raised in the backward pass instead,
    # "in the gradient of" the comprehension.
    with pytest.raises(IndexError, match="list index out of range") as info:
        grad(index_of_comprehension, backend=backend)(1.0, 5)
    check_note(
        info.value, [("index_of_comprehension", line_of(index_of_comprehension, "MARK index"))]
    )


@pytest.mark.parametrize("backend", BACKENDS + NATIVE)
def test_the_frames_of_a_recursion_inlined_once_are_its_own(backend):
    # ``sqrt_at_the_base`` is inlined into its caller, whose copy jumps to the same blocks as
    # the function itself: a frame of the function showed the caller's line before its own
    # (the debug backend lost the caller's frame, a tail call).
    with pytest.raises(ValueError, match="math domain error") as info:
        compile_(calls_sqrt_at_the_base, backend=backend)(-1.0)
    check_note(
        info.value,
        [
            ("calls_sqrt_at_the_base", line_of(calls_sqrt_at_the_base, "MARK top")),
            ("sqrt_at_the_base", line_of(sqrt_at_the_base, "MARK step")),
            ("sqrt_at_the_base", line_of(sqrt_at_the_base, "MARK base")),
        ],
    )
    assert "[Previous frame repeated 1 more times]" in notes(info.value)

"""Shape errors: `MyiaShapeError` with both shapes and a traceback through the user's source.

Each error is raised two user calls deep inside the compiled function (outer -> middle ->
inner). The test checks the class, that the message shows both shapes, and that the frames
(and the printed traceback) name each function at the right line, found from a marker comment
in the source rather than hard-coded.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from myia import myia
from myia.abstract import to_abstract
from myia.errors import MyiaShapeError, MyiaTypeError
from myia.frontend import parse
from myia.infer.engine import Inferrer

# matmul ---------------------------------------------------------------------------------------


def matmul_inner(a, b):
    return a @ b  # ERROR


def matmul_middle(a, b):
    return matmul_inner(a, b) * 2.0  # CALL


def matmul_outer(a, b):
    return matmul_middle(a, b)  # ENTRY


# broadcasting ---------------------------------------------------------------------------------


def broadcast_inner(a, b):
    return np.tanh(a) + b  # ERROR


def broadcast_middle(a, b):
    c = a * 2.0
    return broadcast_inner(c, b)  # CALL


def broadcast_outer(a, b):
    return np.sum(broadcast_middle(a, b))  # ENTRY


# reshape --------------------------------------------------------------------------------------


def reshape_inner(a, b):
    return np.reshape(a, (5, -1)) + b  # ERROR


def reshape_middle(a, b):
    return reshape_inner(a, b)  # CALL


def reshape_outer(a, b):
    return reshape_middle(a, b)  # ENTRY


# concatenate ----------------------------------------------------------------------------------


def concatenate_inner(a, b):
    return np.concatenate((a, b), axis=0)  # ERROR


def concatenate_middle(a, b):
    return concatenate_inner(a, b) - 1.0  # CALL


def concatenate_outer(a, b):
    return concatenate_middle(a, b)  # ENTRY


CASES = [
    # (functions outer/middle/inner, arguments, the shapes the message must show)
    (
        (matmul_outer, matmul_middle, matmul_inner),
        (np.ones((3, 4)), np.ones((5, 6))),
        ("(3, 4)", "(5, 6)"),
    ),
    (
        (broadcast_outer, broadcast_middle, broadcast_inner),
        (np.ones((3, 4), np.float32), np.ones((2, 1, 5), np.float32)),
        ("(3, 4)", "(2, 1, 5)"),
    ),
    (
        (reshape_outer, reshape_middle, reshape_inner),
        (np.ones((3, 4)), np.ones(1)),
        ("(3, 4)", "(5, -1)"),
    ),
    (
        (concatenate_outer, concatenate_middle, concatenate_inner),
        (np.ones((3, 4)), np.ones((2, 5))),
        ("(3, 4)", "(2, 5)"),
    ),
]


def line_of(fn: Callable[..., Any], marker: str) -> int:
    """Return the line number of the line of `fn`'s source that holds comment `marker`."""
    lines, first = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if line.rstrip().endswith(f"# {marker}"):
            return first + i
    raise AssertionError(f"no line marked {marker!r} in {fn.__name__}")


def check_error(err: MyiaShapeError, fns: tuple[Any, ...], shapes: tuple[str, str]) -> None:
    message = str(err)
    for s in shapes:
        assert s in err.message, (s, err.message)
    frames = [f for f in err.frames if f.location is not None]
    expected = [
        (fn.__name__, line_of(fn, marker)) for fn, marker in zip(fns, ("ENTRY", "CALL", "ERROR"))
    ]
    assert [(f.function, f.location.line) for f in frames[-3:]] == expected, err.frames
    assert all(f.location.filename == __file__ for f in frames), err.frames
    for name, line in expected:
        assert f"line {line}, in {name}" in message, message
    assert "internal error" not in message


@pytest.mark.parametrize(
    "fns, args, shapes", CASES, ids=["matmul", "broadcast", "reshape", "concatenate"]
)
def test_shape_error_from_inference(fns, args, shapes):
    with pytest.raises(MyiaShapeError) as info:
        Inferrer().infer(parse(fns[0]), tuple(to_abstract(a) for a in args))
    check_error(info.value, fns, shapes)


@pytest.mark.parametrize(
    "fns, args, shapes", CASES, ids=["matmul", "broadcast", "reshape", "concatenate"]
)
def test_shape_error_from_myia(fns, args, shapes):
    compiled = myia(fns[0])
    with pytest.raises(MyiaShapeError) as info:
        compiled(*args)
    check_error(info.value, fns, shapes)
    assert compiled.compiled_signatures() == []  # raised while compiling, before running


def test_unsupported_numpy_function_is_named():
    def uses_unsupported(a):
        return np.linalg.eig(a)  # UNSUPPORTED

    with pytest.raises(MyiaTypeError) as info:
        myia(uses_unsupported)(np.ones((3, 3)))
    assert "numpy.linalg.eig" in str(info.value)
    assert info.value.location.line == line_of(uses_unsupported, "UNSUPPORTED")
    assert "complex" in str(info.value) and "np.linalg.eigh" in str(info.value)


def test_eigvals_suggests_eigvalsh():
    def uses_eigvals(a):
        return np.linalg.eigvals(a)  # UNSUPPORTED

    with pytest.raises(MyiaTypeError, match="np.linalg.eigvalsh") as info:
        myia(uses_eigvals)(np.ones((3, 3)))
    assert info.value.location.line == line_of(uses_eigvals, "UNSUPPORTED")


def test_concatenate_of_a_list_is_numpys():
    # (Once refused, saying to use a tuple: a list's length is known at run time only, and
    # so is the length of the axis joined.)
    def concat_list(a):
        xs = [a, a]
        return np.concatenate(xs)

    a = np.arange(3.0)
    np.testing.assert_array_equal(myia(concat_list)(a), np.concatenate([a, a]))

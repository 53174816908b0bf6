"""The step debugger (`myia.debug.run`): scripted sessions, forward and backward."""

import io
import math

import numpy as np
import pytest

from myia import grad, myia
from myia.debug import run

HERE = __file__


def _line(fn, text):
    """The line number of `text` in the source of `fn` (this file)."""
    import inspect

    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(text)


def sum_of_squares(x, n):
    s = 0.0
    for i in range(n):
        y = math.sin(x * i)
        s = s + y * y
    return s


def session(fn, *args, commands, breakpoints=()):
    out = io.StringIO()
    result = run(fn, *args, commands=commands, breakpoints=breakpoints, stdout=out)
    return result, out.getvalue()


def answers(transcript, command):
    """What the debugger printed after each `command` (up to the next prompt or stop)."""
    out = []
    for block in transcript.split(f"(myia) {command}\n")[1:]:
        out.append(block.split("(myia)")[0].split("\n> ")[0].strip())
    return out


def test_a_loop_gradient_stops_in_the_reverse_phase_with_its_sensitivities():
    line_s = _line(sum_of_squares, "s = s + y * y")
    line_y = _line(sum_of_squares, "y = math.sin")
    x, n = 0.5, 3
    commands = ["c"]
    for _ in range(n):  # backward, last iteration first: at the line of s, then of y
        commands += ["p i", "g s", "p y", "s", "g y", "c"]
    result, out = session(
        grad(sum_of_squares, "x"),
        x,
        n,
        commands=commands,
        breakpoints=[f"{HERE}:{line_s} backward"],
    )
    assert result == pytest.approx(grad(sum_of_squares, "x")(x, n))
    stops = [s for s in out.splitlines() if s.startswith("> ")][1:]  # after the first line
    assert stops[: 2 * n : 2] == [f"> {HERE}({line_s}) sum_of_squares [backward]"] * n
    assert stops[1 : 2 * n : 2] == [f"> {HERE}({line_y}) sum_of_squares [backward]"] * n
    assert [int(v) for v in answers(out, "p i")] == [2, 1, 0]
    assert [float(v) for v in answers(out, "g s")] == [1.0, 1.0, 1.0]
    ys = [float(v) for v in answers(out, "p y")]
    assert ys == pytest.approx([math.sin(x * i) for i in (2, 1, 0)])
    # s = s + y * y sends 2 y ds to y.
    assert [float(v) for v in answers(out, "g y")] == pytest.approx([2 * y for y in ys])


def test_step_and_next_go_through_the_forward_lines():
    line_y = _line(sum_of_squares, "y = math.sin")
    line_s = _line(sum_of_squares, "s = s + y * y")
    _, out = session(sum_of_squares, 0.5, 2, commands=["n", "n", "p y", "n", "p s", "q"])
    stops = [s for s in out.splitlines() if s.startswith("> ")]
    assert stops[1:3] == [
        f"> {HERE}({line_y}) sum_of_squares",
        f"> {HERE}({line_s}) sum_of_squares",
    ]
    assert answers(out, "p y") == ["0.0"]  # i = 0
    assert answers(out, "p s") == ["0.0"]


def inner(v):
    w = v * 3.0
    return w + 1.0


def outer(v):
    a = inner(v) * 2.0
    return a


def test_step_enters_a_call_and_where_shows_the_calls():
    _, out = session(outer, 1.0, commands=["s", "w", "vars", "q"])
    stops = [s for s in out.splitlines() if s.startswith("> ")]
    assert stops[1] == f"> {HERE}({_line(inner, 'w = v * 3.0')}) inner"
    where = answers(out, "w")[0]
    assert "a = inner(v) * 2.0" in where and where.index("outer") < where.index("inner")
    assert answers(out, "vars")[0] == "v = 1.0"


def with_breakpoint(x):
    y = x * 2.0
    breakpoint()
    return np.sum(y)


def test_breakpoint_in_myia_code():
    x = np.arange(3.0)
    result, out = session(with_breakpoint, x, commands=["c", "p y", "c"])
    assert result == 6.0
    assert f"> breakpoint() {HERE}({_line(with_breakpoint, 'breakpoint()')})" in out
    assert answers(out, "p y") == [repr(x * 2.0)]
    # Elsewhere it does nothing, on every backend.
    for backend in ("numpy", "debug"):
        assert myia(with_breakpoint, backend=backend)(x) == 6.0
        np.testing.assert_allclose(grad(with_breakpoint, backend=backend)(x), 2.0)


def test_forward_only_breakpoints_and_clear():
    line_s = _line(sum_of_squares, "s = s + y * y")
    _, out = session(
        grad(sum_of_squares, "x"),
        0.5,
        2,
        commands=["c", "c", "b", "cl", "c"],
        breakpoints=[f"{line_s} forward"],
    )
    stops = [s for s in out.splitlines() if s.startswith("> ")]
    assert stops[1:] == [f"> {HERE}({line_s}) sum_of_squares"] * 2
    assert answers(out, "b") == [f"1: {HERE}:{line_s} (forward)"]


def test_a_session_on_standard_input_and_the_end_of_the_commands():
    stdin = io.StringIO("n\np x\nbogus\n")
    out = io.StringIO()
    assert run(sum_of_squares, 0.5, 2, stdin=stdin, stdout=out) == sum_of_squares(0.5, 2)
    text = out.getvalue()
    assert "*** unknown command 'bogus'" in text
    # The commands exhausted, the program runs to its end.
    assert session(sum_of_squares, 0.5, 2, commands=[])[0] == sum_of_squares(0.5, 2)


def test_errors_of_the_program_are_raised_as_on_the_interpreter():
    def bad(x):
        return math.log(x)

    with pytest.raises(ValueError):
        session(bad, -1.0, commands=["c"])

"""The errors Myia raises for user mistakes, each pointing at the user's source.

A `MyiaError` carries a message and a list of `Frame`s: the user's call stack from the entry
point down to the failing construct, each with the function name, file, line, source text and
(where known) the inferred types of the arguments. ``str(error)`` shows all of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .ir.node import Location


@dataclass(frozen=True)
class Frame:
    """One level of a Myia traceback."""

    function: str
    location: Location | None
    detail: str | None = None

    def format(self) -> str:
        loc = self.location
        if loc is None:
            head = f"  in {self.function}"
        else:
            head = f'  File "{loc.filename}", line {loc.line}, in {self.function}'
        lines = [head]
        if loc is not None:
            src = loc.source_line()
            if src:
                lines.append(f"    {src}")
        if self.detail:
            lines.append(f"    {self.detail}")
        return "\n".join(lines)


class MyiaError(Exception):
    """Base class of every error Myia raises while compiling a user's program."""

    def __init__(self, message: str, frames: Sequence[Frame] = ()):
        super().__init__(message)
        self.message = message
        self.frames = list(frames)

    @property
    def location(self) -> Location | None:
        """The location of the innermost frame."""
        for f in reversed(self.frames):
            if f.location is not None:
                return f.location
        return None

    def __str__(self) -> str:
        if not self.frames:
            return self.message
        tb = "\n".join(f.format() for f in self.frames)
        return f"{self.message}\nMyia traceback (most recent call last):\n{tb}"


class MyiaSyntaxError(MyiaError):
    """Python syntax outside the subset Myia compiles."""


class MyiaNameError(MyiaError):
    """A name that is not defined anywhere."""


class MyiaTypeError(MyiaError):
    """An operation on the wrong types, a wrong number of arguments, incompatible branches."""


class MyiaShapeError(MyiaTypeError):
    """Incompatible array shapes."""


class MyiaRecursionError(MyiaError, RecursionError):
    """A recursion deeper than Myia's limit: Python's `RecursionError`, as a `MyiaError`.

    Its message is Python's; the Myia traceback (`traceback`, a frame repeated in a row shown
    once, the first and last frames of a long mutual recursion) is a note, as for the other
    errors a program raises at run time.
    """

    def __init__(self, message: str, frames: Sequence[Frame] = (), traceback: str = ""):
        super().__init__(message, frames)
        self.traceback = traceback
        if traceback:
            self.add_note(traceback)

    def __str__(self) -> str:
        return self.message


class MyiaInternalError(MyiaError):
    """A fault inside Myia itself, not in the user's program."""

    def __init__(self, message: str, frames: Sequence[Frame] = ()):
        super().__init__(f"internal error in Myia (please report it): {message}", frames)


def program_error(exc: BaseException, traceback: str) -> BaseException:
    """`exc`, an exception the user's program raised at run time, with its Myia traceback.

    The exception propagates as itself, as in Python (a division by zero, ``raise`` in the
    program), with `traceback` (the user's frames) as a note; the API boundary then cuts the
    frames of the package from its Python traceback, as it does for a `MyiaError`.
    """
    exc.add_note(traceback)
    exc.__dict__["_myia_program_error"] = True
    return exc


def usage_error(exc: BaseException) -> BaseException:
    """`exc`, a mistake in a call of Myia's API (``backend="nmupy"``), raised as itself.

    As a program's error (`program_error`), the API boundary cuts the frames of the package
    from its Python traceback: the user's call is the last frame shown.
    """
    exc.__dict__["_myia_program_error"] = True
    return exc


def is_program_error(exc: BaseException) -> bool:
    """Whether `exc` was raised by the user's program, as `program_error` marks it."""
    return bool(getattr(exc, "__dict__", {}).get("_myia_program_error"))


def _distance(a: str, b: str) -> int:
    """Python's edit distance of names: 2 a change, 1 a change of case only."""
    prev = list(range(0, 2 * len(b) + 1, 2))
    for i, ca in enumerate(a, 1):
        cur = [2 * i]
        for j, cb in enumerate(b, 1):
            change = 0 if ca == cb else 1 if ca.lower() == cb.lower() else 2
            cur.append(min(prev[j] + 2, cur[j - 1] + 2, prev[j - 1] + change))
        prev = cur
    return prev[-1]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """Python's hint for a misspelt name: ``". Did you mean: 'tanh'?"``, or ``""``.

    The closest of `candidates` within Python's distance (that of its `NameError` and
    `AttributeError` messages), the first of the closest where several are.
    """
    best, best_distance = None, 0
    for c in candidates:
        if c == name or not isinstance(c, str) or abs(len(c) - len(name)) > 4:
            continue
        d = _distance(name, c)
        if d <= (len(name) + len(c) + 3) * 2 // 6 and (best is None or d < best_distance):
            best, best_distance = c, d
    return "" if best is None else f". Did you mean: {best!r}?"


def too_many_arguments(fname: str, npos: int, required: int, given: int) -> str:
    """Python's message for a call of `fname` with `given` positional arguments, too many.

    ``f() takes 2 positional arguments but 3 were given``; where `required` (those of the
    `npos` parameters with no default) is fewer, ``f() takes from 1 to 2 ...``, as Python's
    (NumPy's ufuncs say it too, their ``out`` a parameter with a default).
    """
    takes = f"{npos}" if required == npos else f"from {required} to {npos}"
    return (
        f"{fname}() takes {takes} positional argument{'s' * (takes != '1')} but {given} "
        f"{'was' if given == 1 else 'were'} given"
    )


def at(location: Location | None, function: str = "<module>") -> list[Frame]:
    """Return a one-frame traceback pointing at `location`."""
    return [Frame(function, location)]

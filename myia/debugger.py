"""A step debugger for Myia programs: pdb's commands over your lines, forward and backward.

`run(fn, *args)` runs ``fn(*args)`` on the reference interpreter (`myia.vm.stepper`), as
inference left the program (before optimization, so that every line and variable is still
there), and gives a prompt at the first line of your code. ``fn`` may be a function,
``myia(f)``, or ``grad(f)``: a gradient runs its forward pass, then its backward pass line by
line, each backward step shown at the forward line it differentiates, with ``[backward]``.

Commands (as pdb's, one per line)::

    s, step           run to the next line (into calls)
    n, next           run to the next line of this function or of a caller
    c, continue       run to a breakpoint (or to ``breakpoint()`` in the program)
    b [FILE:]LINE [forward|backward]
                      set a breakpoint (no argument: list them); ``backward``: only in the
                      reverse phase, ``forward``: only in the forward pass
    cl, clear [N]     remove breakpoint N (all without N)
    p NAME            print a variable's value (in the backward pass: its forward value)
    g NAME            print a variable's sensitivity (the gradient flowing back into it),
                      in the backward pass, once its operation was differentiated
    vars              print every variable of the function (and their sensitivities)
    l, list           show the lines around the current one
    w, where          show the calls that lead here
    q, quit           run to the end without stopping
    h, help           this text

`run` is scriptable: ``commands=[...]`` are read instead of standard input (the run goes on
to the end when they are exhausted), and ``stdout=`` receives what the debugger prints.
"""

from __future__ import annotations

import linecache
import sys
from dataclasses import dataclass
from typing import IO, Any

from .abstract.lattice import erase_functions
from .api import MyiaFunction, myia
from .boundary import boundary
from .frontend.cache import new_compilation
from .infer.engine import Inferrer
from .infer.specialize import specialize
from .vm.debug_vm import Frame, _origins, _site_frames
from .vm.stepper import Stepper, Stop

HELP = __doc__.split("Commands (as pdb's, one per line)::")[1].split("`run` is")[0]


@dataclass
class Breakpoint:
    """A line of a file where the debugger stops, in one pass or both (`phase` None)."""

    filename: str
    line: int
    phase: str | None = None

    def matches(self, stop: Stop) -> bool:
        loc = stop.place.location
        if loc.line != self.line or not _same_file(loc.filename, self.filename):
            return False
        return self.phase is None or (self.phase == "backward") == stop.place.backward

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}" + (f" ({self.phase})" if self.phase else "")


def _same_file(path: str, name: str) -> bool:
    return path == name or path.endswith("/" + name.lstrip("/"))


class Debugger:
    """The debugger's state and commands (see the module docstring); `run` makes one."""

    def __init__(
        self,
        commands: list[str] | None = None,
        stdin: IO[str] | None = None,
        stdout: IO[str] | None = None,
        breakpoints: tuple[str, ...] | list[str] = (),
    ):
        self.commands = list(commands) if commands is not None else None
        self.stdin = stdin
        self.stdout = stdout
        self.breakpoints: list[Breakpoint] = []
        self.mode = "step"  # stop at the first line, as pdb does
        self.next_depth = 0
        self.next_function: str | None = None
        self.stop: Stop | None = None
        self.default_file: str | None = None
        for spec in breakpoints:
            self.command(f"break {spec}")

    # Output ---------------------------------------------------------------------------------

    def print(self, *text: Any) -> None:
        print(*text, file=self.stdout if self.stdout is not None else sys.stdout)

    # Stopping -------------------------------------------------------------------------------

    def on_line(self, stop: Stop) -> None:
        """Called by the stepper at each new line: prompt if the program stops here."""
        if self.default_file is None:
            # Breakpoints set before the run with no file are in the program's first file.
            self.default_file = stop.place.location.filename
            for b in self.breakpoints:
                b.filename = b.filename or self.default_file
        if not self._stops(stop):
            return
        self.stop = stop
        why = "breakpoint() " if stop.breakpoint else ""
        self.print(f"> {why}{self._where(stop)}")
        self.print(f"-> {self._source(stop.place.location.filename, stop.place.location.line)}")
        self.prompt()

    def _stops(self, stop: Stop) -> bool:
        if self.mode == "quit":
            return False
        if stop.breakpoint or any(b.matches(stop) for b in self.breakpoints):
            return True
        if self.mode == "step":
            return True
        if self.mode != "next":
            return False
        # The next line of this function (its loops and branches are graphs called deeper),
        # or of a caller once it returns.
        return stop.depth <= self.next_depth or stop.place.function == self.next_function

    def _where(self, stop: Stop) -> str:
        loc, place = stop.place.location, stop.place
        phase = " [backward]" if place.backward else ""
        return f"{loc.filename}({loc.line}) {place.function}{phase}"

    @staticmethod
    def _source(filename: str, line: int) -> str:
        return linecache.getline(filename, line).strip()

    def prompt(self) -> None:
        """Read and run commands until one resumes the program."""
        while True:
            line = self._read()
            if line is None:
                self.mode = "quit"
                return
            if self.command(line):
                return

    def _read(self) -> str | None:
        if self.commands is not None:
            if not self.commands:
                return None
            line = self.commands.pop(0)
            self.print(f"(myia) {line}")
            return line
        stream = self.stdin if self.stdin is not None else sys.stdin
        if self.stdout is None:
            sys.stdout.write("(myia) ")
            sys.stdout.flush()
        line = stream.readline()
        return line.rstrip("\n") if line else None

    # Commands -------------------------------------------------------------------------------

    def command(self, line: str) -> bool:
        """Run one command; return whether it resumes the program."""
        word, _, rest = line.strip().partition(" ")
        rest = rest.strip()
        if word in ("s", "step"):
            self.mode = "step"
            return True
        if word in ("n", "next"):
            self.mode = "next"
            self.next_depth = self.stop.depth if self.stop is not None else 0
            self.next_function = self.stop.place.function if self.stop is not None else None
            return True
        if word in ("c", "cont", "continue"):
            self.mode = "continue"
            return True
        if word in ("q", "quit", "exit"):
            self.mode = "quit"
            return True
        handler = {
            "b": self._break,
            "break": self._break,
            "cl": self._clear,
            "clear": self._clear,
            "p": self._print_value,
            "print": self._print_value,
            "g": self._print_sensitivity,
            "grad": self._print_sensitivity,
            "vars": self._vars,
            "l": self._list,
            "list": self._list,
            "w": self._stack,
            "where": self._stack,
            "bt": self._stack,
            "h": self._help,
            "help": self._help,
        }.get(word)
        if handler is None:
            self.print(f"*** unknown command {word!r} (h for help)")
        else:
            handler(rest)
        return False

    def _break(self, arg: str) -> None:
        if not arg:
            for i, b in enumerate(self.breakpoints, 1):
                self.print(f"{i}: {b}")
            return
        where, _, phase = arg.partition(" ")
        phase = phase.strip() or None
        filename, _, line = where.rpartition(":")
        if phase not in (None, "forward", "backward") or not line.isdigit():
            self.print("*** usage: b [FILE:]LINE [forward|backward]")
            return
        filename = filename or self.default_file or ""
        self.breakpoints.append(Breakpoint(filename, int(line), phase))
        self.print(f"Breakpoint {len(self.breakpoints)} at {self.breakpoints[-1]}")

    def _clear(self, arg: str) -> None:
        if not arg:
            self.breakpoints.clear()
        elif arg.isdigit() and 0 < int(arg) <= len(self.breakpoints):
            del self.breakpoints[int(arg) - 1]
        else:
            self.print(f"*** no breakpoint {arg}")

    def _print_value(self, name: str) -> None:
        values = variables(self.stop.frame) if self.stop is not None else {}
        if name in values:
            self.print(_show(values[name]))
        else:
            self.print(f"*** no variable {name!r} here")

    def _print_sensitivity(self, name: str) -> None:
        stop = self.stop
        if stop is None or not stop.place.backward:
            self.print("*** sensitivities exist in the backward pass only")
        elif name in stop.sensitivities:
            self.print(_show(stop.sensitivities[name]))
        else:
            self.print(f"*** no sensitivity of {name!r} yet")

    def _vars(self, _: str) -> None:
        if self.stop is None:
            return
        for name, value in variables(self.stop.frame).items():
            self.print(f"{name} = {_show(value)}")
        for name, value in self.stop.sensitivities.items():
            self.print(f"sensitivity of {name} = {_show(value)}")

    def _list(self, _: str) -> None:
        if self.stop is None:
            return
        loc = self.stop.place.location
        for n in range(max(1, loc.line - 3), loc.line + 4):
            text = linecache.getline(loc.filename, n)
            if text:
                mark = "->" if n == loc.line else "  "
                self.print(f"{n:4d} {mark} {text.rstrip()}")

    def _stack(self, _: str) -> None:
        """The user's calls down to the current line, as in a Myia traceback."""
        if self.stop is None:
            return
        sites = []
        f: Frame | None = self.stop.frame
        while f is not None:
            # (A frame's position is after its call; the current one's is at its line.)
            sites.append((f.code, f.pc + 1 if f is self.stop.frame else f.pc))
            sites.extend(_origins(f))
            f = f.caller
        for frame in _site_frames(sites[::-1]):
            if frame.location is not None and not frame.function.startswith("∇"):
                self.print(frame.format())  # (not the wrapper that calls a gradient)

    def _help(self, _: str) -> None:
        self.print(HELP.strip("\n"))

    # Running --------------------------------------------------------------------------------

    def run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run ``fn(*args, **kwargs)`` under this debugger; return its result."""
        f = fn if isinstance(fn, MyiaFunction) else myia(fn)
        sig = f.signature(*args, **kwargs)
        bound = f._arguments(args, kwargs)
        new_compilation()
        inferrer = Inferrer()
        ctx, _ = inferrer.infer(f.graph(), tuple(sig))
        graph = specialize(inferrer, ctx)
        self._stepper = Stepper(self.on_line)
        return self._stepper.run(graph, bound)


def variables(frame: Frame) -> dict[str, Any]:
    """The variables of the user's function that `frame` runs, computed so far, by name.

    A variable assigned several times has its latest value. The function's closure
    environment adds the variables of the functions it is nested in (in a backward pass: the
    forward pass's values).
    """
    out: dict[str, Any] = {}
    chain: list[Frame] = []
    f: Frame | None = frame
    while f is not None:
        chain.append(f)
        f = f.env
    for fr in reversed(chain):  # outermost first: inner names win
        code = fr.code
        if code.graph.name.startswith("◀"):
            continue  # a backward pass: its variables are sensitivities (`Stop.sensitivities`)
        computed = {code.slots.get(n) for n in code.nodes[: fr.pc]}
        for node, slot in code.slots.items():
            name = node.debug.find_name()
            if not name or not name.isidentifier() or node.is_constant:
                continue
            if not (node.is_parameter or slot in computed) or slot >= len(fr.values):
                continue
            if node.abstract is not None and erase_functions(node.abstract) != node.abstract:
                continue  # a function, or a value paired with its backpropagator
            out[name] = fr.values[slot]
    return out


def _show(value: Any) -> str:
    return repr(value)


@boundary
def run(
    fn: Any,
    *args: Any,
    commands: list[str] | None = None,
    breakpoints: tuple[str, ...] | list[str] = (),
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    **kwargs: Any,
) -> Any:
    """Run ``fn(*args, **kwargs)`` under the step debugger and return its result.

    `fn` is a function, ``myia(f)`` or ``grad(f)`` (see `myia.debugger` for the commands).
    `commands` are read instead of `stdin` (the program runs to its end once they are
    exhausted); `breakpoints` are set before it starts (``"file.py:12"``, ``"12 backward"``);
    what the debugger prints goes to `stdout`.
    """
    return Debugger(commands, stdin, stdout, breakpoints).run(fn, *args, **kwargs)

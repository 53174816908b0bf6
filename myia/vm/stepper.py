"""The reference interpreter, one instruction at a time, telling a debugger where it is.

`Stepper` runs graphs as `DebugVM` does (the same frames, calls and errors), through a loop
that is slower but stops before each instruction: when the instruction is on another line of
the user's source than the one before it, or is a ``breakpoint()``, it calls
``on_line(stop)`` with a `Stop` describing where the program is. The debugger
(`myia.debugger`) decides there whether to give the user a prompt.

Each instruction's place is computed once per graph: the user's line it comes from (through
inlining and the gradient transform, `DebugInfo.call_chain`), the function, and the pass. An
instruction of a backward graph (``◀f``, or a backpropagator's call) is in the *backward*
pass, at the forward line it differentiates. Instructions of Myia's own library code have no
place: they run as part of the user's line that called them.

In the backward pass, the call of each operation's backpropagator receives the sensitivity
of that operation's result: the stepper keeps it, by the name of the variable the operation
computed, in the frame's *sensitivities* (`Stop.sensitivities`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..ir.node import BackwardInfo, Location, Node
from ..primitives import P, Primitive
from .debug_vm import CALL, OP, PRIM, PRIM2, RETURN, Code, DebugVM, Frame
from .tracebacks import RECURSION_LIMIT, _in_package


@dataclass(frozen=True)
class Place:
    """Where an instruction is in the user's source: file, line, function, and pass."""

    location: Location
    function: str
    backward: bool

    @property
    def key(self) -> tuple[str, int, bool]:
        return (self.location.filename, self.location.line, self.backward)


@dataclass
class Stop:
    """The program stopped before an instruction: where, in which frame, and why.

    Attributes:
        place: the user's line, function and pass.
        frame: the interpreter's frame (its values, and its closure environment).
        node: the node the instruction computes.
        depth: the number of frames below this one (a loop's iterations share one).
        breakpoint: whether a ``breakpoint()`` of the program stopped it.
        sensitivities: in the backward pass, the sensitivity of each variable of the
            function computed so far, by name.

    """

    place: Place
    frame: Frame
    node: Node
    depth: int
    breakpoint: bool = False
    sensitivities: dict[str, Any] = field(default_factory=dict)


#: Primitives that only move values (the gradient transform's plumbing): they belong to no
#: line of their own, and do not make the debugger stop.
PLUMBING = frozenset(
    [
        P.tuple_getitem, P.make_tuple, P.tuple_concat, P.env_new, P.env_setitem,
        P.env_getitem, P.env_add, P.gzeros, P.gadd, P.gmaterialize, P.broadcast_like,
        P.switch, P.partial, P.partial_arg, P.partial_fn, P.identity, P.seq,
    ]
)  # fmt: skip


def _places(code: Code) -> list[Place | None]:
    """The place of each instruction of `code` (None: Myia's library code, or no line)."""
    out: list[Place | None] = []
    for node in code.nodes:
        fn = node.inputs[0] if node is not None and node.is_apply else None
        if fn is not None and fn.is_constant and fn.value in PLUMBING:  # type: ignore[attr-defined]
            out.append(None)
            continue
        chain = node.debug.call_chain(code.graph.name) if node is not None else []
        user = [(f, loc) for f, loc in chain if not _in_package(loc.filename)]
        if not user:
            out.append(None)
            continue
        function, loc = user[-1]
        backward = any(f.startswith("◀") for f, _ in chain)
        name = function.split(":")[0].lstrip("▶◀")
        out.append(Place(loc, name, backward))
    return out


def _is_breakpoint(node: Node) -> bool:
    fn = node.inputs[0] if node.is_apply else None
    return fn is not None and fn.is_constant and fn.value is P.breakpoint_  # type: ignore[attr-defined]


def _sensitivity_of(node: Node) -> str | None:
    """The variable whose sensitivity a backpropagator's call receives, if it has a name."""
    info = node.debug
    while info is not None and not isinstance(info, BackwardInfo):
        info = info.origin  # a copy made by specialization
    if info is None or info.origin is None:
        return None
    return info.origin.find_name()


class Stepper(DebugVM):
    """A `DebugVM` that calls ``on_line(stop)`` at each new line of the user's source."""

    def __init__(self, on_line: Callable[[Stop], None]) -> None:
        super().__init__()
        self.on_line = on_line
        self._places: dict[Code, list[Place | None]] = {}
        self._last: tuple[str, int, bool] | None = None
        self._sens: dict[int, dict[str, Any]] = {}

    def places(self, code: Code) -> list[Place | None]:
        p = self._places.get(code)
        if p is None:
            p = self._places[code] = _places(code)
        return p

    def _before(self, frame: Frame, pc: int) -> None:
        code = frame.code
        place = self.places(code)[pc]
        node = code.nodes[pc]
        bp = _is_breakpoint(node)
        if place is None:
            return
        key = place.key
        if key == self._last and not bp:
            return
        self._last = key
        sens: dict[str, Any] = {}
        if place.backward:
            sens = self._sens.setdefault(id(frame.values), {})
            instr = code.instrs[pc]
            if instr[0] is CALL:
                # The sensitivity of the line's variable is computed: it is what its
                # backpropagator, about to run, receives.
                self._record_sensitivity(frame, pc, instr[3](frame.values))
        self.on_line(Stop(place, frame, node, frame.depth, bp, sens))

    def _record_sensitivity(self, frame: Frame, pc: int, args: tuple[Any, ...]) -> None:
        name = _sensitivity_of(frame.code.nodes[pc])
        if name is not None and args:
            self._sens.setdefault(id(frame.values), {})[name] = args[0]

    def _loop(self, frame: Frame) -> Any:
        """Run `frame` to completion as `DebugVM._loop` does, stopping at each new line."""
        resolved = self.resolved
        try:
            while True:
                pc = frame.pc
                self._before(frame, pc)
                opcode, out, fn, get, is_tail, has_kw = frame.code.instrs[pc]
                frame.pc = pc + 1
                values = frame.values
                if opcode is PRIM2:
                    values[out] = fn(values[get], values[is_tail])
                    continue
                if opcode is PRIM:
                    values[out] = fn(*get(values))
                    continue
                if opcode is RETURN:
                    self._sens.pop(id(values), None)
                    result = values[out]
                    caller = frame.caller
                    if caller is None:
                        return result
                    caller.values[frame.caller_out] = result
                    frame = caller
                    continue
                args = get(values)
                if opcode is OP:
                    key = (fn, *map(type, args))
                    callee = resolved.get(key)
                    fn = callee if callee is not None else self._resolve(fn, args, key)
                else:
                    assert opcode is CALL
                    fn = values[fn]
                self._record_sensitivity(frame, pc, args)
                if type(fn) is Primitive and not fn.effect and not has_kw:
                    if fn is not P.apply_star:
                        values[out] = fn.impl(*args)
                        continue
                res = self._apply(fn, list(args), frame, out, is_tail, has_kw)
                if type(res) is Frame:
                    if is_tail:  # a level of a user's recursion made a loop (`DebugVM`)
                        res.levels = frame.levels + (res.code.entry or frame.code.steps)
                    frame = res
                    if frame.depth > RECURSION_LIMIT or frame.levels > RECURSION_LIMIT:
                        raise RecursionError("maximum recursion depth exceeded")
                else:
                    values[out] = res
        except Exception as exc:
            self._fail(frame, exc)

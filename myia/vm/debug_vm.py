"""The reference interpreter ("debug VM"): runs any graph of the IR on Python values.

It is the ground truth every pass is tested against, so it is faithful: it evaluates each
graph's nodes in topological order, calls primitives' Python implementations, resolves
operations by the kinds of their runtime arguments, and calls graphs and closures.

It never recurses in Python: a call pushes a `Frame` (frames are linked to their callers), and
a call in tail position replaces the caller's frame, so a loop of a million iterations (a
tail-recursive graph) runs in constant space and non-tail recursion is bounded by memory only.

To be fast enough for such loops, each graph is prepared once into a `Code`: every node gets
a *slot* in a list of values, constants are stored in the initial values, free variables and
closures are loaded when a frame starts, and each call becomes a flat instruction tuple.
"""

from __future__ import annotations

import types
from operator import itemgetter
from typing import Any

from ..errors import Frame as ErrorFrame
from ..errors import (
    MyiaError,
    MyiaInternalError,
    MyiaShapeError,
    MyiaSyntaxError,
    MyiaTypeError,
    program_error,
    too_many_arguments,
)
from ..frontend.blocks import Unbound
from ..ir.analysis import Scopes
from ..ir.node import Graph, Location, Node
from ..operations.core import Mutation, NoMatch, Operation, kind_of
from ..operations.ops import StaticOperation, callable_record, post_init
from ..primitives import P, Primitive
from ..primitives.structure import KeywordArgument, Partial
from .calls import UserException, _bind_primitive, _keyword_arguments, _kind_name, construct
from .nans import _checked
from .tracebacks import (
    _KEPT,
    RECURSION_LIMIT,
    _format_traceback,
    _in_package,
    _unbound_error,
    is_shape_error,
    recursion_error,
    user_frames,
)

# Opcodes of the instructions of a `Code`. Every instruction is a tuple
# ``(opcode, out, fn, get, is_tail, has_kw)``: `out` is the slot of the result, `get` reads
# the argument values from the frame's values, and `fn` depends on the opcode:
PRIM = 0  # fn is the implementation of a pure primitive called without keywords
PRIM2 = 4  # the same with two arguments, read from slots `get` and `is_tail` (the hot case)
OP = 1  # fn is an Operation, resolved on the types of the arguments
CALL = 2  # fn is the slot of the function to call
RETURN = 3  # out is the slot of the graph's output


class Closure:
    """A graph together with the frame holding its free variables (None if it has none)."""

    __slots__ = ("graph", "env", "code")

    def __init__(self, graph: Graph, env: Frame | None):
        self.graph = graph
        self.env = env
        self.code: Code | None = None

    def __repr__(self) -> str:
        return f"<closure {self.graph.name}>"


def _getter(slots: list[int]) -> Any:
    """Return a function reading the values at `slots` from a list of values, as a tuple."""
    if len(slots) > 1:
        return itemgetter(*slots)
    if len(slots) == 1:
        (i,) = slots
        return lambda values: (values[i],)
    return lambda values: ()


class Code:
    """A graph prepared for interpretation.

    Attributes:
        slots: the slot of each node (parameters first, then constants and computed nodes).
        init: the initial values of a frame after its parameters (constants filled in).
        prologue: ``(slot, node)`` for each free variable and closure, loaded by `DebugVM`
            when a frame starts.
        instrs: the instructions, in topological order, ending with a `RETURN`.
        nodes: the node computed by each instruction (for tracebacks).
        simple_call: whether positional arguments can be bound without looking at names.

    """

    __slots__ = (
        "graph",
        "nparams",
        "slots",
        "init",
        "prologue",
        "instrs",
        "nodes",
        "simple_call",
        "user",
        "function",
        "entry",
        "steps",
    )

    def __init__(self, graph: Graph, vm: DebugVM):
        assert graph.output is not None, f"graph {graph} has no output"
        self.graph = graph
        self.nparams = len(graph.parameters)
        self.simple_call = not (
            graph.flags.get("vararg") or graph.flags.get("kwarg") or graph.kwonly
        )
        loc = graph.debug.find_location()
        self.user = loc is None or not _in_package(loc.filename)
        #: The function the graph is part of (its blocks and batched copies are).
        self.function = _function_of(graph.name)
        # A tail call of a user's function, or a jump out of a graph that holds one of its
        # recursive calls inlined, is one level of recursion (`RECURSION_LIMIT`).
        self.entry = bool(graph.flags.get("user_function"))
        self.steps = bool(graph.flags.get("recursive_call"))
        self.slots: dict[Node, int] = {p: i for i, p in enumerate(graph.parameters)}
        values: list[Any] = [None] * self.nparams
        self.prologue: list[tuple[int, Node]] = []
        self.instrs: list[tuple[Any, ...]] = []
        self.nodes: list[Node] = []

        def slot(node: Node) -> int:
            s = self.slots.get(node)
            if s is None:
                s = self.slots[node] = len(values)
                values.append(None)
                if node.is_constant:
                    v = node.value
                    if isinstance(v, Graph) and vm.parent(v) is not None:
                        self.prologue.append((s, node))
                    else:
                        values[s] = Closure(v, None) if isinstance(v, Graph) else v
                elif node.graph is not graph:
                    self.prologue.append((s, node))
            return s

        order = [n for n in vm.scopes.toposort(graph) if n.is_apply]
        for node in order:
            if _is_seq(node):
                # seq(before, after) is `after`: `before` was computed first (toposort).
                self.slots[node] = slot(node.inputs[2])
                continue
            fn, *args = node.inputs
            arg_slots = [slot(a) for a in args]
            out = slot(node)
            has_kw = any(_is_kwarg(a) for a in args)
            get = _getter(arg_slots)
            f = fn.value if fn.is_constant else None
            if type(f) is Primitive and not f.effect and not has_kw and f is not P.apply_star:
                impl = _checked(f) if vm.check_nans else f.impl
                if len(arg_slots) == 2:
                    instr = (PRIM2, out, impl, arg_slots[0], arg_slots[1], False)
                else:
                    instr = (PRIM, out, impl, get, False, False)
            elif isinstance(f, Operation) and (key := _op_key(f, args)) is not None:
                instr = (OP, out, key, get, False, has_kw)
            else:
                instr = (CALL, out, slot(fn), get, False, has_kw)
            self.instrs.append(instr)
            self.nodes.append(node)
        tail = _strip_seq(graph.output)
        if self.nodes and self.nodes[-1] is tail and self.instrs[-1][0] not in (PRIM, PRIM2):
            self.instrs[-1] = (*self.instrs[-1][:4], True, self.instrs[-1][5])
        self.instrs.append((RETURN, slot(graph.output), None, None, False, False))
        self.nodes.append(graph.output)
        self.init = values[self.nparams :]


def _op_key(op: Operation, args: list[Node]) -> Any:
    """Return how an `OP` instruction names its operation in `DebugVM.resolved`.

    That is the operation itself, or for a `StaticOperation` the operation and its static
    arguments (None if they are not hashable constants: the instruction is then a plain call).
    """
    if not isinstance(op, StaticOperation):
        return op
    try:
        statics = tuple(args[i].value if args[i].is_constant else [] for i in op.static)
        hash(statics)
    except (TypeError, IndexError):
        return None
    return (op, statics)


def _is_seq(node: Node) -> bool:
    return node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is P.seq


def _is_kwarg(node: Node) -> bool:
    return node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is P.make_kwarg


def _strip_seq(node: Node) -> Node:
    while _is_seq(node):
        node = node.inputs[2]
    return node


class Frame:
    """The activation of a graph: the values of its slots, its closure environment, its caller.

    `caller_out` is the slot of the caller's values that receives this frame's result; `pc`
    the index of the next instruction (saved while a callee runs). A frame made by a tail call
    replaces its caller's frame; for tracebacks, `origin` keeps ``(code, pc, origin)`` of the
    call site in the user's code that led to it by tail calls, and those before it of other
    functions (one per function: a loop's jumps do not grow it, `_tail_origin`).
    `depth` is the number of frames below it (its callers); `levels` the levels of a user's
    recursion that the tail calls leading to it made (each one a frame in Python).
    """

    __slots__ = (
        "code",
        "values",
        "env",
        "pc",
        "caller",
        "caller_out",
        "origin",
        "depth",
        "levels",
    )

    def __init__(
        self,
        code: Code,
        values: list[Any],
        env: Frame | None,
        caller: Frame | None,
        out: int,
        origin: tuple[Any, ...] | None = None,
    ):
        self.code = code
        self.values = values
        self.env = env
        self.pc = 0
        self.caller = caller
        self.caller_out = out
        self.origin = origin
        self.depth = 0 if caller is None else caller.depth + 1
        self.levels = 0


class DebugVM:
    """Interprets graphs. One instance caches prepared code, scopes and resolved operations."""

    def __init__(self, *, check_nans: bool = False) -> None:
        #: Whether each primitive that makes a NaN or an infinity from finite arguments
        #: raises `FloatingPointError` at its node (``debug_nans=True``).
        self.check_nans = check_nans
        self.codes: dict[Graph, Code] = {}
        self.scopes = Scopes()
        # Operations resolved at run time, by (operation, types of the arguments...).
        self.resolved: dict[tuple[Any, ...], Any] = {}
        #: The largest number of frames alive at once (one per call being evaluated) so far:
        #: tail calls replace their caller's frame, so a loop leaves it unchanged.
        self.max_depth = 0

    # Preparation ----------------------------------------------------------------------------

    def code(self, graph: Graph) -> Code:
        c = self.codes.get(graph)
        if c is None:
            c = self.codes[graph] = Code(graph, self)
        return c

    def parent(self, graph: Graph) -> Graph | None:
        if graph not in self.scopes.parents:
            self.scopes.add(graph)
        return self.scopes.parents[graph]

    def make_closure(self, graph: Graph, frame: Frame | None) -> Closure:
        """Return the closure of `graph` made in `frame` (or an enclosing frame)."""
        parent = self.parent(graph)
        if parent is None:
            return Closure(graph, None)
        env = frame
        while env is not None and env.code.graph is not parent:
            env = env.env
        if env is None:
            raise MyiaTypeError(f"closure {graph.name} escapes the scope of its free variables")
        return Closure(graph, env)

    def _new_frame(
        self,
        fn: Closure,
        args: Any,
        caller: Frame | None,
        out: int,
        origin: tuple[Any, ...] | None = None,
    ) -> Frame:
        code = fn.code
        if code is None:
            code = fn.code = self.code(fn.graph)
        frame = Frame(code, [*args, *code.init], fn.env, caller, out, origin)
        if code.prologue:
            values = frame.values
            for s, node in code.prologue:
                if node.is_constant:
                    values[s] = self.make_closure(node.value, frame)
                else:
                    values[s] = self._lookup(fn.env, node)
        return frame

    def _lookup(self, env: Frame | None, node: Node) -> Any:
        """Return the value of `node` (a node of an enclosing graph) in environment `env`."""
        while env is not None and env.code.graph is not node.graph:
            env = env.env
        if env is None:
            raise MyiaInternalError(f"free variable {node} has no enclosing frame")
        return env.values[env.code.slots[node]]

    # Running --------------------------------------------------------------------------------

    def run(self, graph: Graph, args: tuple[Any, ...]) -> Any:
        """Call `graph` (a closed graph) on `args` and return its result."""
        return self.call(Closure(graph, None), list(args))

    def call(self, fn: Any, args: list[Any]) -> Any:
        """Call any Myia function value on `args`.

        An exception raised by the program (``raise``, ``assert``) or at run time (division by
        zero, an index out of range) propagates as itself, with the Myia traceback as a note.
        """
        result = self._apply(fn, args, None, -1, False, True)
        if type(result) is Frame:
            result = self._loop(result)
        if type(result) is Unbound:
            raise _unbound_error(result)
        return result

    def _loop(self, frame: Frame) -> Any:
        """Run `frame` (and the frames it calls) to completion; return its result."""
        resolved = self.resolved
        apply_star = P.apply_star
        values = frame.values
        instrs = frame.code.instrs
        pc = frame.pc
        peak = frame.depth  # this run's deepest frame (the limit is checked on a new one)
        try:
            while True:
                opcode, out, fn, get, is_tail, has_kw = instrs[pc]
                pc += 1
                if opcode is PRIM2:
                    values[out] = fn(values[get], values[is_tail])
                    continue
                if opcode is PRIM:
                    values[out] = fn(*get(values))
                    continue
                if opcode is RETURN:
                    result = values[out]
                    caller = frame.caller
                    if caller is None:
                        return result
                    caller.values[frame.caller_out] = result
                    frame = caller
                    values = frame.values
                    instrs = frame.code.instrs
                    pc = frame.pc
                    continue
                args = get(values)
                if opcode is OP:
                    key = (fn, *map(type, args))
                    callee = resolved.get(key)
                    fn = callee if callee is not None else self._resolve(fn, args, key)
                else:
                    fn = values[fn]
                tf = type(fn)
                if tf is Primitive and not fn.effect and not has_kw and fn is not apply_star:
                    values[out] = fn.impl(*args)
                    continue
                code = fn.code if tf is Closure else None
                if (
                    code is not None
                    and not has_kw
                    and not code.prologue
                    and code.simple_call
                    and len(args) == code.nparams
                ):
                    # The common case of `_apply`, inlined.
                    if is_tail:
                        levels = frame.levels
                        if code.entry or frame.code.steps:
                            levels += 1
                            if levels > RECURSION_LIMIT:
                                raise RecursionError("maximum recursion depth exceeded")
                        frame = Frame(
                            code,
                            [*args, *code.init],
                            fn.env,
                            frame.caller,
                            frame.caller_out,
                            _tail_origin(frame, pc),
                        )
                        frame.levels = levels
                    else:
                        frame.pc = pc
                        frame = Frame(code, [*args, *code.init], fn.env, frame, out)
                        if frame.depth > peak:
                            peak = frame.depth
                            if peak > RECURSION_LIMIT:
                                raise RecursionError("maximum recursion depth exceeded")
                else:
                    frame.pc = pc
                    res = self._apply(fn, list(args), frame, out, is_tail, has_kw)
                    if type(res) is not Frame:
                        values[out] = res
                        continue
                    if is_tail:
                        res.levels = frame.levels + (res.code.entry or frame.code.steps)
                        if res.levels > RECURSION_LIMIT:
                            raise RecursionError("maximum recursion depth exceeded")
                    frame = res
                    if frame.depth > peak:
                        peak = frame.depth
                        if peak > RECURSION_LIMIT:
                            raise RecursionError("maximum recursion depth exceeded")
                values = frame.values
                instrs = frame.code.instrs
                pc = frame.pc
        except Exception as exc:
            frame.pc = pc
            self._fail(frame, exc)
        finally:
            self.max_depth = max(self.max_depth, peak)

    def _fail(self, frame: Frame, exc: Exception) -> Any:
        """Raise what an exception raised while running `frame` becomes, with its traceback."""
        if isinstance(exc, UserException) and not isinstance(exc.exception, MyiaError):
            err = exc.exception
            program_error(err, _format_traceback(self._traceback(frame)))
            raise err from None
        if isinstance(exc, UserException):
            exc = exc.exception  # a `MyiaError` raised at run time (`myia.infer.deferred`)
        if isinstance(exc, MyiaError):
            if not exc.frames:
                exc.frames = self._traceback(frame)
            raise exc
        err = self._error(frame, exc)
        if err is exc:
            raise exc
        raise err from exc

    def _resolve(self, op_key: Any, args: tuple[Any, ...], key: tuple[Any, ...]) -> Any:
        """Resolve an operation on `args` (the slow path of `_loop`); remember it under `key`."""
        op = op_key[0] if type(op_key) is tuple else op_key
        callee = self.resolved[key] = self._callee(self.resolve(op, list(args)))
        return callee

    def _callee(self, fn: Any) -> Any:
        """Prepare the callee an operation resolved to: a Python function becomes a closure."""
        if isinstance(fn, types.FunctionType):
            from ..frontend import parse

            return Closure(parse(fn), None)
        if isinstance(fn, Graph) and self.parent(fn) is None:
            return Closure(fn, None)
        return fn

    def _apply(
        self,
        fn: Any,
        args: list[Any],
        frame: Frame | None,
        out: int,
        is_tail: bool,
        has_kw: bool,
    ) -> Any:
        """Apply `fn` to `args`: return its value, or the new `Frame` that computes it."""
        while True:
            t = type(fn)
            if t is Closure:
                code = fn.code
                if code is None:
                    code = fn.code = self.code(fn.graph)
                if has_kw or not code.simple_call or len(args) != code.nparams:
                    args = self.bind(fn, args)
                if is_tail and frame is not None:
                    origin = _tail_origin(frame, frame.pc)
                    return self._new_frame(fn, args, frame.caller, frame.caller_out, origin)
                return self._new_frame(fn, args, frame, out)
            if t is Primitive:
                if fn is P.apply_star:
                    has_kw = len(args) > 2
                    fn, args = args[0], [*args[1], *_keyword_arguments(args[2:])]
                    continue
                if has_kw and any(type(a) is KeywordArgument for a in args):
                    args = _bind_primitive(fn, args)
                if fn.effect:
                    try:
                        return fn.impl(*args)
                    except BaseException as exc:  # (``raise SystemExit`` too)
                        raise UserException(exc) from None
                return fn.impl(*args)
            if t is Partial:
                args = [*fn.args, *args]
                fn = fn.fn
                continue
            if isinstance(fn, Operation):
                fn = self._callee(self.resolve(fn, args))
                continue
            if isinstance(fn, Graph):
                fn = self.make_closure(fn, frame)
                continue
            if isinstance(fn, types.FunctionType):
                fn = self._callee(fn)
                continue
            if isinstance(fn, type):
                record = construct(fn, args)
                check = post_init(fn)
                if check is not None:
                    self.call(self._callee(check), [record])
                return record
            call = callable_record(type(fn))
            if call is not None:  # a dataclass instance with a ``__call__`` method
                args = [fn, *args]
                fn = self._callee(call)
                continue
            raise MyiaTypeError(f"{fn!r} is not callable")

    def resolve(self, op: Operation, args: list[Any]) -> Any:
        """Return the callee of operation `op` for runtime arguments `args`."""
        static = op.static if isinstance(op, StaticOperation) else ()
        kinds = tuple(a if i in static else kind_of(a) for i, a in enumerate(args))
        try:
            return op.resolve(kinds)
        except Mutation as exc:
            from ..frontend.subset import mutation_message

            message = mutation_message(f"the {exc.kind.__name__}", exc.method)
            raise MyiaSyntaxError(message) from None
        except NoMatch as exc:
            if exc.args:
                raise MyiaTypeError(exc.args[0]) from None
            for a in args:
                if type(a) is Unbound:
                    raise UserException(_unbound_error(a)) from None
            shown = ", ".join(_kind_name(k) for k in kinds)
            raise MyiaTypeError(f"unsupported operation {op.name} on ({shown})") from None

    def bind(self, fn: Closure, args: list[Any]) -> list[Any]:
        """Match call arguments (positional and keyword) to the parameters of `fn`."""
        g = fn.graph
        params = g.parameters
        vararg = g.flags.get("vararg", False)
        kwarg = g.flags.get("kwarg", False)
        if len(args) == len(params) and not vararg and not g.kwonly and not kwarg:
            if not any(type(a) is KeywordArgument for a in args):
                return args
        names = g.param_names
        npos = len(params) - g.kwonly - (1 if vararg else 0) - (1 if kwarg else 0)
        pos = [a for a in args if type(a) is not KeywordArgument]
        kws = {a.key: a.value for a in args if type(a) is KeywordArgument}
        values: dict[str, Any] = {}
        for name, v in zip(names[:npos], pos):
            values[name] = v
        extra = pos[npos:]
        if vararg:
            values[names[npos]] = tuple(extra)
        elif extra:
            required = sum(n not in g.defaults for n in names[:npos])
            raise MyiaTypeError(too_many_arguments(g.name, npos, required, len(pos)))
        rest: dict[str, Any] = {}
        for k, v in kws.items():
            if k in values or (k not in names and not kwarg) or (kwarg and k == names[-1]):
                raise MyiaTypeError(f"{g.name}() got an unexpected keyword argument {k!r}")
            (values if k in names else rest)[k] = v
        if kwarg:
            values[names[-1]] = rest
        out = []
        for name in names:
            if name in values:
                out.append(values[name])
            elif name in g.defaults:
                d = g.defaults[name]
                out.append(d.value if d.is_constant else self._lookup(fn.env, d))
            else:
                raise MyiaTypeError(f"{g.name}() missing required argument {name!r}")
        return out

    # Errors ---------------------------------------------------------------------------------

    def _traceback(self, frame: Frame) -> list[ErrorFrame]:
        """Return the user's frames, from the entry point down to where `frame` is.

        Frames of graphs defined inside the Myia package (its library code) are left out,
        unless the program itself is library code, and the frames of the blocks of one
        function (its branches and loops) are shown as one.
        """
        sites: list[tuple[Code, int]] = []
        f: Frame | None = frame
        while f is not None:
            sites.append((f.code, f.pc))
            sites.extend(_origins(f))
            f = f.caller
        sites.reverse()
        if len(sites) > 2 * _KEPT:
            # A runaway recursion (200,000 frames): its first and last calls, as it is shown.
            skipped = ErrorFrame(f"[{len(sites) - 2 * _KEPT} more calls]", None)
            return [*_site_frames(sites[:_KEPT]), skipped, *_site_frames(sites[-_KEPT:])]
        return _site_frames(sites)

    def _error(self, frame: Frame, exc: Exception) -> Exception:
        """Return the error to raise for an exception that a primitive raised.

        A `TypeError` or `AttributeError` means an operation on values of the wrong types, a
        `ValueError` on arrays about their shapes (`is_shape_error`) incompatible shapes: Myia
        errors, which type inference reports
        before running. Other exceptions (division by zero, an index out of range, a math
        domain error) are run-time errors of the program, raised as themselves, as Python
        would, with the Myia traceback as a note.
        """
        frames = self._traceback(frame)
        message = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, (TypeError, AttributeError)):
            return MyiaTypeError(message, frames)
        if isinstance(exc, ValueError) and _on_arrays(frame) and is_shape_error(exc):
            return MyiaShapeError(message, frames)
        if isinstance(exc, RecursionError):
            return recursion_error(exc, frames)
        program_error(exc, _format_traceback(frames))
        return exc


def _on_arrays(frame: Frame) -> bool:
    """Whether the failing instruction of `frame` had an array argument."""
    code = frame.code
    node = code.nodes[frame.pc - 1]
    args = [frame.values[code.slots[i]] for i in node.inputs[1:] if i in code.slots]
    return any(hasattr(a, "shape") and hasattr(a, "ndim") for a in args)


def _function_of(name: str) -> str:
    """The user's function of the graph named `name` (``vmap(▶f:loop)`` is ``f``)."""
    while name.startswith("vmap(") and name.endswith(")"):
        name = name[5:-1]
    return name.split(":")[0].lstrip("▶◀∂")


def _tail_origin(frame: Frame, pc: int) -> tuple[Any, ...] | None:
    """The `Frame.origin` of the frame that `frame` tail-calls from position `pc`.

    The call site of a user's graph, before the sites that led to `frame`; a site of the same
    function as `frame` (the block that jumped to this one) is replaced.
    """
    origin = frame.origin
    code = frame.code
    if not code.user:
        return origin
    if origin is not None and origin[0].function == code.function:
        origin = origin[2]
    return (code, pc, origin)


def _origins(frame: Frame) -> list[tuple[Code, int]]:
    """The call sites of `frame`'s `Frame.origin`, innermost first."""
    out = []
    o = frame.origin
    while o is not None:
        out.append((o[0], o[1]))
        o = o[2]
    return out


def _site_frames(sites: list[tuple[Code, int]]) -> list[ErrorFrame]:
    """The user's frames of the interpreter's frames `sites` (code, position), outermost first."""
    calls: list[tuple[str, Location | None]] = []
    for code, pc in sites:
        node = code.nodes[pc - 1] if 0 < pc <= len(code.nodes) else None
        name = code.graph.name
        chain = node.debug.call_chain(name) if node is not None else []
        calls.extend(chain or [(name, code.graph.debug.find_location())])
    return user_frames(calls)

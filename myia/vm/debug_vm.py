"""The reference interpreter ("debug VM"): runs any graph of the IR on Python values.

It is the ground truth every pass is tested against, so it is faithful rather than fast: it
evaluates each graph's nodes in topological order, calls primitives' Python implementations,
resolves operations by the kinds of their runtime arguments, and calls graphs and closures.

It never recurses in Python: calls push frames on an explicit stack, and a call in tail
position replaces the caller's frame, so a loop of a million iterations (a tail-recursive
graph) runs in constant stack space and non-tail recursion is bounded by memory only.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from operator import itemgetter
from typing import Any

from ..errors import Frame as ErrorFrame
from ..errors import MyiaError, MyiaTypeError
from ..ir.analysis import Scopes
from ..ir.node import Graph, Node
from ..operations.core import NoMatch, Operation, kind_of
from ..operations.ops import StaticOperation
from ..primitives import P, Primitive
from ..primitives.structure import KeywordArgument, Partial

CONST, LOCAL, FREE, CLOSURE = 0, 1, 2, 3


class Closure:
    """A graph together with the frame holding its free variables (None if it has none)."""

    __slots__ = ("graph", "env")

    def __init__(self, graph: Graph, env: Frame | None):
        self.graph = graph
        self.env = env

    def __repr__(self) -> str:
        return f"<closure {self.graph.name}>"


class Code:
    """A graph prepared for interpretation: its schedule and how to fetch each input.

    Each instruction is ``(node, inputs, getters, is_tail, has_kw)``. When every input is a
    local node or a constant, ``getters`` is None and the inputs are read from the frame's
    values, which start as a copy of `consts`; otherwise `DebugVM.fetch` reads each one.
    """

    __slots__ = ("graph", "instrs", "output", "params", "consts", "simple_call")

    def __init__(self, graph: Graph, vm: DebugVM):
        self.graph = graph
        self.params = graph.parameters
        self.simple_call = not graph.flags.get("vararg") and not graph.kwonly
        order = [n for n in vm.scopes.toposort(graph) if n.is_apply]
        tails = _tail_nodes(graph)
        # The last instructions may be `seq` wrappers around a tail call: skip them.
        last = len(order)
        while last > 0 and order[last - 1] in tails and _is_seq(order[last - 1]):
            last -= 1
        self.consts: dict[Node, Any] = {}
        self.instrs = []
        for i, node in enumerate(order):
            getters = [vm.getter(graph, inp) for inp in node.inputs]
            for (kind, x), inp in zip(getters, node.inputs):
                if kind == CONST:
                    self.consts[inp] = x
            simple = all(kind in (CONST, LOCAL) for kind, _ in getters)
            is_tail = node in tails and i == last - 1 and not _is_seq(node)
            has_kw = any(
                inp.is_apply and inp.inputs[0].is_constant and inp.inputs[0].value is P.make_kwarg
                for inp in node.inputs
            )
            inputs = tuple(node.inputs)
            fetch_all = itemgetter(*inputs) if len(inputs) > 1 else _single(inputs[0])
            self.instrs.append((node, fetch_all, None if simple else getters, is_tail, has_kw))
        assert graph.output is not None, f"graph {graph} has no output"
        self.output = vm.getter(graph, graph.output)


def _single(node: Node) -> Any:
    def get(values: dict[Node, Any]) -> tuple[Any]:
        return (values[node],)

    return get


def _is_seq(node: Node) -> bool:
    return node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is P.seq


def _tail_nodes(graph: Graph) -> set[Node]:
    tails = set()
    node = graph.output
    while node is not None and node.is_apply and node.graph is graph:
        tails.add(node)
        node = node.inputs[2] if _is_seq(node) else None
    return tails


class Frame:
    """The activation of a graph: values of its nodes, its closure environment, its caller."""

    __slots__ = ("code", "values", "env", "pc", "caller", "caller_node")

    def __init__(self, code: Code, env: Frame | None, caller: Frame | None, caller_node: Any):
        self.code = code
        self.values: dict[Node, Any] = code.consts.copy()
        self.env = env
        self.pc = 0
        self.caller = caller
        self.caller_node = caller_node


class DebugVM:
    """Interprets graphs. One instance caches prepared code and scopes across calls."""

    def __init__(self) -> None:
        self.codes: dict[Graph, Code] = {}
        self.scopes = Scopes()

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

    def getter(self, graph: Graph, node: Node) -> tuple[int, Any]:
        if node.is_constant:
            v = node.value
            if isinstance(v, Graph):
                if self.parent(v) is None:
                    return (CONST, Closure(v, None))
                return (CLOSURE, v)
            return (CONST, v)
        if node.graph is graph:
            return (LOCAL, node)
        return (FREE, node)

    def fetch(self, frame: Frame, getter: tuple[int, Any]) -> Any:
        kind, x = getter
        if kind == LOCAL:
            return frame.values[x]
        if kind == CONST:
            return x
        if kind == FREE:
            env = frame.env
            g = x.graph
            while env.code.graph is not g:
                env = env.env
            return env.values[x]
        return self.make_closure(x, frame)

    def make_closure(self, graph: Graph, frame: Frame | None) -> Closure:
        parent = self.parent(graph)
        if parent is None:
            return Closure(graph, None)
        env = frame
        while env is not None and env.code.graph is not parent:
            env = env.env
        if env is None:
            raise MyiaTypeError(f"closure {graph.name} escapes the scope of its free variables")
        return Closure(graph, env)

    # Running --------------------------------------------------------------------------------

    def run(self, graph: Graph, args: tuple[Any, ...]) -> Any:
        """Call `graph` (a closed graph) on `args` and return its result."""
        return self.call(Closure(graph, None), list(args))

    def call(self, fn: Any, args: list[Any]) -> Any:
        """Call any Myia function value on `args`.

        An exception raised by the program (``raise``, ``assert``) propagates as itself.
        """
        stack: list[Frame] = []
        try:
            result = self._apply(fn, args, None, None, stack, False)
            if not stack:
                return result
            return self._loop(stack)
        except UserException as exc:
            raise exc.exception from None

    def _loop(self, stack: list[Frame]) -> Any:
        fetch = self.fetch
        while True:
            frame = stack[-1]
            code = frame.code
            instrs = code.instrs
            values = frame.values
            n = len(instrs)
            while frame.pc < n:
                node, fetch_all, getters, is_tail, has_kw = instrs[frame.pc]
                frame.pc += 1
                if getters is None:
                    fn, *args = fetch_all(values)
                else:
                    fn, *args = [fetch(frame, g) for g in getters]
                tf = type(fn)
                if tf is Operation:
                    try:
                        fn = fn._cache[tuple(map(kind_of, args))]
                        tf = type(fn)
                    except KeyError:
                        pass
                if tf is Primitive and not fn.effect and not has_kw:
                    try:
                        values[node] = fn.impl(*args)
                    except MyiaError:
                        raise
                    except Exception as exc:
                        raise self._error(stack, node, exc) from exc
                    continue
                try:
                    res = self._apply(fn, args, frame, node, stack, is_tail, has_kw)
                except (MyiaError, UserException) as exc:
                    if isinstance(exc, MyiaError) and not exc.frames:
                        exc.frames = self._traceback(stack, node)
                    raise
                except Exception as exc:
                    raise self._error(stack, node, exc) from exc
                if res is _PUSHED:
                    break
                values[node] = res
            else:
                result = fetch(frame, code.output)
                stack.pop()
                caller = frame.caller
                if caller is None:
                    return result
                caller.values[frame.caller_node] = result

    def _apply(
        self,
        fn: Any,
        args: list[Any],
        frame: Frame | None,
        node: Any,
        stack: list[Frame],
        is_tail: bool,
        has_kw: bool = True,
    ) -> Any:
        """Apply `fn`: return its value, or push a frame and return `_PUSHED`."""
        while True:
            t = type(fn)
            if t is Closure:
                code = self.codes.get(fn.graph) or self.code(fn.graph)
                if has_kw or not code.simple_call or len(args) != len(code.params):
                    args = self.bind(fn, args)
                if is_tail and frame is not None:
                    stack.pop()
                    new = Frame(code, fn.env, frame.caller, frame.caller_node)
                else:
                    new = Frame(code, fn.env, frame, node)
                values = new.values
                for p, v in zip(code.params, args):
                    values[p] = v
                stack.append(new)
                return _PUSHED
            if t is Primitive:
                if any(type(a) is KeywordArgument for a in args):
                    args = _bind_primitive(fn, args)
                if fn.effect:
                    try:
                        return fn.impl(*args)
                    except Exception as exc:
                        raise UserException(exc) from None
                return fn.impl(*args)
            if t is Partial:
                args = [*fn.args, *args]
                fn = fn.fn
                continue
            if isinstance(fn, Operation):
                fn = self.resolve(fn, args)
                continue
            if isinstance(fn, Graph):
                fn = self.make_closure(fn, frame)
                continue
            if isinstance(fn, types.FunctionType):
                from ..frontend import parse

                fn = Closure(parse(fn), None)
                continue
            if isinstance(fn, type):
                return construct(fn, args)
            raise MyiaTypeError(f"{fn!r} is not callable")

    def resolve(self, op: Operation, args: list[Any]) -> Any:
        """The callee of operation `op` for runtime arguments `args`."""
        static = op.static if isinstance(op, StaticOperation) else ()
        kinds = tuple(a if i in static else kind_of(a) for i, a in enumerate(args))
        try:
            return op.resolve(kinds)
        except NoMatch:
            shown = ", ".join(_kind_name(k) for k in kinds)
            raise MyiaTypeError(f"unsupported operation {op.name} on ({shown})") from None

    def bind(self, fn: Closure, args: list[Any]) -> list[Any]:
        """Match call arguments (positional and keyword) to the parameters of `fn`."""
        g = fn.graph
        params = g.parameters
        if len(args) == len(params) and not g.flags.get("vararg") and not g.kwonly:
            if not any(type(a) is KeywordArgument for a in args):
                return args
        names = g.param_names
        vararg = g.flags.get("vararg", False)
        npos = len(params) - g.kwonly - (1 if vararg else 0)
        pos = [a for a in args if type(a) is not KeywordArgument]
        kws = {a.key: a.value for a in args if type(a) is KeywordArgument}
        values: dict[str, Any] = {}
        for name, v in zip(names[:npos], pos):
            values[name] = v
        extra = pos[npos:]
        if vararg:
            values[names[npos]] = tuple(extra)
        elif extra:
            raise MyiaTypeError(
                f"{g.name}() takes {npos} positional arguments but {len(pos)} were given"
            )
        for k, v in kws.items():
            if k not in names or k in values:
                raise MyiaTypeError(f"{g.name}() got an unexpected keyword argument {k!r}")
            values[k] = v
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

    def _lookup(self, env: Frame | None, node: Node) -> Any:
        while env is not None and env.code.graph is not node.graph:
            env = env.env
        assert env is not None
        return env.values[node]

    # Errors ---------------------------------------------------------------------------------

    def _traceback(self, stack: list[Frame], node: Node) -> list[ErrorFrame]:
        frames = []
        for f in stack[:-1]:
            at_node = f.code.instrs[f.pc - 1][0] if f.pc else None
            frames.append(_frame_at(f.code.graph, at_node))
        if stack:
            frames.append(_frame_at(stack[-1].code.graph, node))
        return frames

    def _error(self, stack: list[Frame], node: Node, exc: Exception) -> MyiaError:
        return MyiaTypeError(f"{type(exc).__name__}: {exc}", self._traceback(stack, node))


_PUSHED = object()


class UserException(Exception):
    """Carries an exception the user's program raised out of the interpreter loop."""

    def __init__(self, exception: BaseException):
        super().__init__(exception)
        self.exception = exception


def _frame_at(graph: Graph, node: Node | None) -> ErrorFrame:
    name = graph.name.split(":")[0]
    loc = node.debug.find_location() if node is not None else graph.debug.find_location()
    return ErrorFrame(name, loc)


def _kind_name(k: Any) -> str:
    return getattr(k, "__name__", repr(k))


def _bind_primitive(prim: Primitive, args: list[Any]) -> list[Any]:
    pos = [a for a in args if type(a) is not KeywordArgument]
    kws = {a.key: a.value for a in args if type(a) is KeywordArgument}
    try:
        bound = prim.signature.bind(*pos, **kws)
    except TypeError as exc:
        raise MyiaTypeError(f"{prim.name}: {exc}") from None
    bound.apply_defaults()
    return list(bound.args)


def construct(cls: type, args: list[Any]) -> Any:
    """Call a class: build a dataclass instance (fields bound like its ``__init__``)."""
    if dataclasses.is_dataclass(cls):
        pos = [a for a in args if type(a) is not KeywordArgument]
        kws = {a.key: a.value for a in args if type(a) is KeywordArgument}
        try:
            bound = inspect.signature(cls).bind(*pos, **kws)
        except TypeError as exc:
            raise MyiaTypeError(f"{cls.__name__}(): {exc}") from None
        bound.apply_defaults()
        fields = [bound.arguments[f.name] for f in dataclasses.fields(cls) if f.init]
        return P.make_record.impl(cls, *fields)
    if issubclass(cls, BaseException):
        return cls(*args)
    raise MyiaTypeError(f"calling {cls.__name__} is not supported in Myia")

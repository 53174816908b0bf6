"""The frontend: Python functions to graphs, by SSA construction over their AST.

`parse(fn)` returns the graph of a Python function (cached per function object). Each basic
block becomes a graph (see `myia.frontend.blocks`); loops become tail-recursive graphs;
``break``, ``continue`` and ``return`` are jumps. Branches inside expressions (``and``, ``or``,
conditional expressions, chained comparisons) become closures selected by ``switch``.
Constructs outside the subset raise `MyiaSyntaxError` at their line.
"""

from __future__ import annotations

import ast
import types
from typing import Any

from ..abstract.data import UNASSIGNED
from ..errors import MyiaSyntaxError, at
from ..ir.node import Constant, DebugInfo, Graph, Location, Node
from ..operations import ops
from ..primitives import P
from . import appends, attributes, cache, calls, comprehensions, defaults, late_reads
from .assignments import BINOPS, Assignments
from .blocks import BOUND, Block, Jump, Unbound
from .branches import BranchExpressions
from .data_expressions import DataExpressions
from .resolve import functions_in_constant, lookup_global, resolve_global
from .scope import attribute_chain, bound_names, walk_scope
from .source import find_code, module_ast, no_source_error
from .subset import UNSUPPORTED_STATEMENTS, mutating_call_message
from .windows import WindowFacts, range_bounds


def parse(fn: types.FunctionType) -> Graph:
    """Return the graph of Python function `fn`, parsing it if it has no current graph.

    The graph is cached while the globals it read stay the same (`myia.frontend.cache`).
    """
    graph = cache.current(fn)
    if graph is None:
        graph = Graph(fn.__qualname__)
        from ..grad.registry import CUSTOM_BPROPS

        if fn in CUSTOM_BPROPS:
            graph.flags["bprop"] = CUSTOM_BPROPS[fn]
        # Flags of Myia's own functions: "checkpoint" and "checkpoint_loops"
        # (`myia.checkpoint`), "noinline", "at_call_site" (its body is parsed into its
        # callers: `myia.transforms.derivatives.jvp_`, `vjp_`, `jacrev_`, `jacfwd_`, `hessian_`).
        graph.flags.update(getattr(fn, "__myia_flags__", {}))
        positions = getattr(fn, "sequence_argument", False)
        if positions:  # True: the first argument; else the positions of those arguments
            graph.flags["sequence_argument"] = (0,) if positions is True else tuple(positions)
        cache.start(fn, graph)
        ok = False
        try:
            SourceFunction(fn).parse_into(graph)
            _chunk_loops(fn, graph)
            ok = True
        finally:
            cache.finish(fn, ok)
        cache.used(fn, graph)
    return graph


def _chunk_loops(fn: types.FunctionType, graph: Graph) -> None:
    """Chunk the loops of `graph`, the graph of `fn`, if `myia.checkpoint` asked for it."""
    if getattr(fn, "__myia_flags__", {}).get("checkpoint_loops"):
        from ..grad.loop_checkpoint import chunk_loops

        chunk_loops(graph, cache.deps(fn))


_bound: dict[Graph, Graph] = {}


def bound_graph(fn: types.FunctionType, graph: Graph) -> Graph:
    """`graph` (the graph of `fn`) taking one argument per parameter, bound by the caller.

    Python binds the arguments of a call from Python (``myia(f)(...)``, ``grad(f)(...)``):
    ``*args`` arrives as a tuple, ``**kwargs`` as a dict. The graph itself is returned when
    its parameters are all positional.
    """
    if not (graph.flags.get("vararg") or graph.flags.get("kwarg") or graph.kwonly):
        return graph
    out = _bound.get(graph)
    if out is None:
        out = _bound[graph] = Graph(fn.__qualname__)
        try:
            SourceFunction(fn).parse_into(out, bound=True)
            _chunk_loops(fn, out)
        except BaseException:
            del _bound[graph]
            raise
    return out


class SourceFunction:
    """The source of a Python function: its AST node, found from its code object.

    The node is the ``def`` or ``lambda`` the code object was compiled from: in the file the
    code names, at its first line (a ``def``'s first decorator, if any) and, for a lambda, at
    the columns its instructions come from (`code.co_positions`). A function's ``__name__``
    and ``__wrapped__`` play no part: a renamed function, one of two lambdas on a line and a
    wrapper made by `functools.wraps` are each parsed from their own code.
    """

    def __init__(self, fn: types.FunctionType):
        self.fn = fn
        code = fn.__code__
        self.filename = code.co_filename
        tree = module_ast(code.co_filename)
        node = find_code(tree, code) if tree is not None else None
        if node is None:
            raise no_source_error(fn)
        self.node = appends.rewrite(node, ops.list_append)
        #: The variables each function (its AST node) tracks (`myia.frontend.blocks`).
        self.tracked: dict[ast.AST, set[str]] = {}
        #: The variables a read may find unassigned, by function, found by the last parse.
        self.found: dict[ast.AST, set[str]] = {}

    def location(self, node: ast.AST) -> Location:
        return Location(
            self.filename,
            getattr(node, "lineno", 1),
            getattr(node, "col_offset", 0),
            getattr(node, "end_lineno", None),
            getattr(node, "end_col_offset", None),
        )

    def parse_into(self, graph: Graph, bound: bool = False) -> None:
        """Parse the function into `graph`.

        With `bound`, the graph takes one argument per parameter, ``*args`` as a tuple,
        keyword-only parameters positionally, ``**kwargs`` as a dict (see `bound_graph`).
        """
        node = self.node
        graph.debug.location = self.location(node)
        if isinstance(node, ast.AsyncFunctionDef):
            raise MyiaSyntaxError(
                "async functions (and await) are not supported by Myia",
                at(self.location(node), node.name),
            )
        flags = dict(graph.flags)
        while True:
            self.found = {}
            self.windows = WindowFacts()
            fp = FunctionParser(self, node, graph, parent=None)
            _flag_user_function(self.fn, graph)
            defaults.of_function(self.fn, node, graph, fp, self.location)
            fp.parse_body()
            self.windows.settle()
            new = {f: names - self.tracked.get(f, set()) for f, names in self.found.items()}
            if not any(new.values()):
                break
            # Some reads may find a variable unassigned: parse again, tracking those.
            for f, names in new.items():
                self.tracked.setdefault(f, set()).update(names)
            graph.parameters, graph.output, graph.defaults, graph.kwonly = [], None, {}, 0
            graph.flags = dict(flags)
        if bound:
            graph.flags.pop("vararg", None)
            graph.flags.pop("kwarg", None)
            graph.kwonly = 0


def _flag_user_function(fn: types.FunctionType, graph: Graph) -> None:
    """Flag `graph`, a ``def`` or ``lambda`` of the user's, ``user_function``.

    A call of it that the optimizer turns into a jump (a tail call of a recursion) is still
    one level of recursion, counted against `RECURSION_LIMIT` (`myia.opt.inline`); the
    loops of Myia's own library, written as tail recursion, are loops.
    """
    if (fn.__module__ or "").partition(".")[0] != "myia":
        graph.flags["user_function"] = True


def _is_len_call(node: ast.expr) -> bool:
    """Whether `node` is ``len(x)``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and len(node.args) == 1
        and not node.keywords
    )


class FunctionParser(Assignments, BranchExpressions, DataExpressions):
    """Parses one function (top-level, nested ``def`` or ``lambda``) into a graph."""

    def __init__(
        self,
        source: SourceFunction,
        node: ast.FunctionDef | ast.Lambda,
        graph: Graph,
        parent: FunctionParser | None,
        def_block: Block | None = None,
    ):
        self.source = source
        self.node = node
        self.graph = graph
        self.parent = parent
        self.def_block = def_block
        self.name = getattr(node, "name", "<lambda>")
        #: The variables that some read may find unassigned (`myia.frontend.blocks`).
        self.tracked = source.tracked.get(node, set())
        args = node.args
        scope = walk_scope(node.body)
        self.bindings = bound_names(scope)
        self.locals = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        for star in (args.vararg, args.kwarg):
            if star is not None:
                self.locals.add(star.arg)
        self.locals.update(self.bindings)
        self.nested_defs: dict[str, Graph] = {}
        for n in scope:
            if isinstance(n, ast.FunctionDef) and n.name not in self.nested_defs:
                self.nested_defs[n.name] = Graph(n.name, source.location(n))
        self.loops: list[tuple[Block, Block]] = []
        #: The loop statements being parsed, outermost first (`late_reads.loop_reads`).
        self.loop_stmts: list[ast.While | ast.For] = []
        self.narrowed: dict[str, str] = {}
        self.late_defaults: dict[str, str | Node] = {}
        self.block_count = 0
        self.global_cache: dict[str, Constant] = {}
        # Where the name being read is used (for the location of a `MyiaNameError`).
        self.use_location: Location | None = None
        #: The function's first block (`defined_once`).
        self.entry: Block | None = None

    # Names ----------------------------------------------------------------------------------

    def is_local(self, name: str) -> bool:
        return name in self.locals

    def unassigned_read(self, name: str) -> None:
        """Note that a read may find local variable `name` unassigned (see `tracked`)."""
        self.source.found.setdefault(self.node, set()).add(name)

    def tracks(self, name: str) -> bool:
        """Whether variable `name` (of this function or one enclosing it) is tracked."""
        if self.is_local(name):
            return name in self.tracked
        return self.parent is not None and self.parent.tracks(name)

    def read_variable(self, block: Block, name: str, node: ast.AST) -> Node:
        """The value of variable `name` read by `node` in `block`: Python's error if unassigned.

        A tracked variable's flag is tested (`myia.frontend.blocks`): where it is known true
        the value is read as it is; where it is known false no path assigns the variable
        (an `Unbound`, which type inference reports at this read); else the read is
        ``switch(flag, λ v: v, λ v: raise UnboundLocalError(...))(value)``. A closure that
        reads a variable some paths leave unassigned where it is defined is refused, as one
        that reads a variable assigned after it is (`read_nonlocal`).
        """
        value = block.read(name)
        if not self.tracks(name):
            return value
        flag = block.read(BOUND + name)
        where = self.loc(node)
        if flag.is_constant and flag.value:
            return value
        if flag.is_constant:
            return Constant(Unbound(name, where, self.name), DebugInfo(name, where))
        if not self.is_local(name):
            raise MyiaSyntaxError(
                f"{self.name} reads {name!r}, which some paths have not assigned where "
                f"{self.name} is defined: Myia closures capture the values variables have where "
                f"they are defined (assign {name!r} on every path before defining {self.name})",
                at(where, self.name),
            )
        message = f"cannot access local variable {name!r} where it is not associated with a value"
        dbg = DebugInfo(name, where)
        assigned = Graph(f"{self.graph.name}:{name}_assigned", where)
        assigned.output = assigned.add_parameter(name)
        unassigned = Graph(f"{self.graph.name}:{name}_unassigned", where)
        unassigned.add_parameter(name)
        unassigned.output = unassigned.apply(P.raise_, UnboundLocalError, message, debug=dbg)
        choice = block.apply(P.switch, flag, assigned, unassigned, debug=dbg)
        return block.apply(choice, value, debug=dbg)

    def read_nonlocal(self, name: str) -> Node:
        """Return the value of a name this function does not bind (enclosing or global)."""
        var = name[len(BOUND) :] if name.startswith(BOUND) else name
        if self.parent is not None and self.parent.binds(var):
            if var in self.parent.nested_defs and self.parent.def_count(var) == 1:
                if var != name:
                    return Constant(True)
                return Constant(self.parent.nested_defs[name], DebugInfo(name))
            assert self.def_block is not None
            location = self.use_location
            # (A value the enclosing function makes for the read is made at this read.)
            outer = self.def_block.function
            outer.use_location, saved = location, outer.use_location
            try:
                value = self.def_block.read(name)
            finally:
                outer.use_location = saved
            if value.is_constant and (
                isinstance(value.value, Unbound) or value.value is UNASSIGNED
            ):
                # Python would read the variable when the closure is called; Myia captures
                # its value where the closure is defined, and there it has none.
                raise MyiaSyntaxError(
                    f"{self.name} reads {name!r}, which is not assigned yet where {self.name} "
                    "is defined: Myia closures capture the values variables have where they "
                    f"are defined (define {self.name} after assigning {name!r})",
                    at(location, self.name),
                )
            return value
        if name not in self.global_cache:
            loc = self.use_location or self.source.location(self.node)
            self.global_cache[name] = resolve_global(self.source.fn, name, loc, self.name)
            cache.read(None, name, lookup_global(self.source.fn, name))
        c = self.global_cache[name]
        return Constant(c.value, DebugInfo(name, c.debug.location))

    def binds(self, name: str) -> bool:
        """Whether this function or one enclosing it binds `name`."""
        return name in self.locals or (self.parent is not None and self.parent.binds(name))

    def def_count(self, name: str) -> int:
        """How many times this function binds `name`."""
        return self.bindings.count(name)

    def defined_once(self, name: str) -> Node | None:
        """The function of nested ``def name``, where that is the value of every later read.

        A ``def`` in the first block, which nothing else binds, is read by the later blocks as
        the function itself (a constant), not as a parameter each block passes on: a call of
        it in a branch or a loop is then a direct call, specialized for its arguments
        (``np.zeros(n)`` of a constant ``n`` there keeps its shape).
        """
        entry = self.entry
        if entry is None or name not in entry.assigned or name in self.tracked:
            return None
        if name not in self.nested_defs or self.def_count(name) != 1:
            return None
        return Constant(entry.variables[name].value, DebugInfo(name))  # type: ignore[attr-defined]

    # Helpers --------------------------------------------------------------------------------

    def loc(self, node: ast.AST) -> Location:
        return self.source.location(node)

    def dbg(self, node: ast.AST, name: str | None = None) -> DebugInfo:
        return DebugInfo(name, self.loc(node))

    def error(self, node: ast.AST, message: str) -> MyiaSyntaxError:
        return MyiaSyntaxError(message, at(self.loc(node), self.name))

    def new_block(self, kind: str, node: ast.AST) -> Block:
        self.block_count += 1
        return Block(self, Graph(f"{self.graph.name}:{kind}", self.loc(node)))

    # Entry ----------------------------------------------------------------------------------

    def parse_body(self) -> None:
        args = self.node.args
        entry = self.entry = Block(self, self.graph)
        positional = [*args.posonlyargs, *args.args]
        for a in positional:
            entry.write(a.arg, self.graph.add_parameter(a.arg, self.dbg(a, a.arg)))
        if args.posonlyargs:
            self.graph.flags["posonly"] = len(args.posonlyargs)
        if args.vararg is not None:
            a = args.vararg
            entry.write(a.arg, self.graph.add_parameter(a.arg, self.dbg(a, a.arg)))
            self.graph.flags["vararg"] = True
        for a in args.kwonlyargs:
            entry.write(a.arg, self.graph.add_parameter(a.arg, self.dbg(a, a.arg)))
        self.graph.kwonly = len(args.kwonlyargs)
        if args.kwarg is not None:
            # ``**kwargs``: the last parameter, a dict of the keyword arguments left over.
            a = args.kwarg
            entry.write(a.arg, self.graph.add_parameter(a.arg, self.dbg(a, a.arg)))
            self.graph.flags["kwarg"] = True
        entry.sealed = True
        defaults.bind(self, entry)
        late = late_reads.check(self.node)
        if late is not None:
            raise self.error(*late)
        if isinstance(self.node, ast.Lambda):
            value = self.expr(entry, self.node.body)
            entry.finish(value)
            return
        end = self.statements(entry, self.node.body)
        if end is not None and not end.terminated:
            end.finish(Constant(None, DebugInfo(None, self.loc(self.node))))

    def parse_nested(self, node: ast.FunctionDef | ast.Lambda, block: Block, graph: Graph) -> None:
        """Parse a nested ``def``/``lambda`` whose definition is in `block`."""
        graph.debug.location = self.loc(node)
        fp = FunctionParser(self.source, node, graph, parent=self, def_block=block)
        _flag_user_function(self.source.fn, graph)
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        for a, d in zip(positional[len(positional) - len(args.defaults) :], args.defaults):
            graph.defaults[a.arg] = self.expr(block, d)
        for a, d in zip(args.kwonlyargs, args.kw_defaults):
            if d is not None:
                graph.defaults[a.arg] = self.expr(block, d)
        defaults.hoist(self, fp, block, graph)
        late = late_reads.loop_reads(node, self)
        if late:
            graph.flags["loop_reads"] = late
        fp.parse_body()

    # Statements -----------------------------------------------------------------------------

    def statements(self, block: Block, stmts: list[ast.stmt]) -> Block | None:
        """Parse `stmts` from `block`; return the block control reaches at the end, if any."""
        for stmt in stmts:
            if block.terminated:
                break
            method = getattr(self, f"stmt_{type(stmt).__name__}", None)
            if method is None:
                what = UNSUPPORTED_STATEMENTS.get(type(stmt), f"{type(stmt).__name__} statements")
                raise self.error(stmt, f"{what} are not supported by Myia")
            block = method(block, stmt)
            if block is None:
                return None
        return block

    def stmt_Pass(self, block: Block, stmt: ast.Pass) -> Block:
        return block

    def stmt_Expr(self, block: Block, stmt: ast.Expr) -> Block:
        if isinstance(stmt.value, ast.Constant):
            return block  # docstrings and other bare constants
        self._reject_mutating_call(stmt.value)
        node = self.expr(block, stmt.value)
        block.effects.append(node)
        return block

    def _reject_mutating_call(self, call: ast.expr) -> None:
        """Reject a statement ``obj.append(v)``: see `mutating_call_message`."""
        message = mutating_call_message(call)
        if message is not None:
            found = appends.append_call(ast.Expr(call))
            why = appends.why_not(self.node, found[0]) if found else None
            if why is not None:
                message += f" ({why})"
            raise self.error(call, message)

    def stmt_Return(self, block: Block, stmt: ast.Return) -> None:
        if stmt.value is None:
            value: Node = Constant(None, self.dbg(stmt))
        else:
            value = self.expr(block, stmt.value)
        block.finish(value)
        return None

    def stmt_FunctionDef(self, block: Block, stmt: ast.FunctionDef) -> Block:
        for deco in stmt.decorator_list:
            raise self.error(deco, "decorators on nested functions are not supported by Myia")
        graph = self.nested_defs.get(stmt.name)
        if graph is None or graph.output is not None:
            graph = Graph(stmt.name, self.loc(stmt))
        self.parse_nested(stmt, block, graph)
        block.write(stmt.name, Constant(graph, self.dbg(stmt, stmt.name)))
        return block

    def stmt_If(self, block: Block, stmt: ast.If) -> Block | None:
        saved = dict(self.narrowed)
        self.fallthrough: list[dict[str, str]] = []
        try:
            after = self._if(block, stmt)
        finally:
            reaching, self.fallthrough = self.fallthrough, []
            self.narrowed = saved
        if len(reaching) == 1:
            # An early exit (``if x is None: return``): after the `if`, the chains keep the
            # types of the one branch that goes on.
            self.narrowed = reaching[0]
        return after

    def _narrow(self, block: Block, test: ast.expr) -> list[str]:
        """Name the attribute chains a test narrows (``t.left is None``, ``isinstance``).

        In the branches, the same chain then reads that variable, which type inference
        narrows in each branch (see `myia.infer.narrow`). The tests of an ``and``/``or`` are
        named from their first operand (the others may only be evaluated after it). Return the
        variables tested (locals and named chains), which the closures of a conditional
        expression or ``and``/``or`` receive as parameters.
        """
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test = test.operand
        if isinstance(test, ast.BoolOp):
            return self._narrow(block, test.values[0])
        subject = None
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            if isinstance(test.ops[0], (ast.Is, ast.IsNot)):
                subject = test.left
            elif isinstance(test.ops[0], (ast.Eq, ast.NotEq)) and _is_len_call(test.left):
                subject = test.left.args[0]  # ``len(t) == 2``: a union of tuples narrowed
        elif isinstance(test, ast.Call) and isinstance(test.func, ast.Name):
            if test.func.id == "isinstance" and test.args:
                subject = test.args[0]
        chain = attribute_chain(subject) if subject is not None else None
        if chain is None:
            return []
        if "." not in chain:
            return [chain] if chain in self.locals else []
        var = self.narrowed.get(chain)
        if var is None:
            var = f"${chain}"
            self.locals.add(var)
            value = self.expr(block, subject)
            block.write(var, value)
            self.narrowed[chain] = var
        return [var]

    def _if(self, block: Block, stmt: ast.If) -> Block | None:
        true_block = self.new_block("if_true", stmt)
        false_block = self.new_block("if_false", stmt.orelse[0] if stmt.orelse else stmt)
        narrowed = self._jump_if(block, stmt.test, true_block, false_block, stmt)
        true_block.seal()
        false_block.seal()
        after = self.new_block("if_after", stmt)
        reached = False
        fallthrough = []
        for b, body, tested in zip((true_block, false_block), (stmt.body, stmt.orelse), narrowed):
            self.narrowed = dict(tested)
            end = self.statements(b, body)
            if end is not None and not end.terminated:
                end.jump(after, debug=self.dbg(stmt))
                reached = True
                fallthrough.append(self.narrowed)
        self.fallthrough = fallthrough
        after.seal()
        return after if reached else None

    def _jump_if(
        self,
        block: Block,
        test: ast.expr,
        if_true: Block,
        if_false: Block,
        stmt: ast.If | ast.While,
        shared: tuple[bool, bool] = (False, False),
    ) -> tuple[dict[str, str], dict[str, str]]:
        """Jump from `block` to `if_true` or `if_false` as `test` is true or false.

        ``not``, ``and`` and ``or`` jump through a block per operand (as Python evaluates
        them), so that each operand's type test narrows what the operands after it and the
        branch it leads to read: in ``if a is not None and b is not None:`` the body sees
        both narrowed. A target reached from several operands (`shared`) is reached through
        a block of its own from each (both targets of a `switch` take the same parameters,
        which only the operand jumping has). Return the attribute chains named (`_narrow`)
        on the way to each target: those named on every path to it.
        """
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            went = self._jump_if(block, test.operand, if_false, if_true, stmt, shared[::-1])
            return went[1], went[0]
        if not isinstance(test, ast.BoolOp):
            self._narrow(block, test)
            targets = [
                self.new_block("edge", test) if s else t
                for t, s in zip((if_true, if_false), shared)
            ]
            block.branch(self.truth(block, test), *targets, debug=self.dbg(stmt))
            for edge, target, s in zip(targets, (if_true, if_false), shared):
                if s:
                    edge.seal()
                    edge.jump(target, debug=self.dbg(stmt))
            return dict(self.narrowed), dict(self.narrowed)
        is_and = isinstance(test.op, ast.And)
        first: dict[str, str] | None = None
        for value in test.values[:-1]:
            nxt = self.new_block("and" if is_and else "or", value)
            targets = (nxt, if_false) if is_and else (if_true, nxt)
            flags = (False, True) if is_and else (True, False)
            went = self._jump_if(block, value, *targets, stmt, flags)
            nxt.seal()
            if first is None:
                # The chains of the first operand are named before any jump: on every path.
                first = went[1] if is_and else went[0]
            self.narrowed = dict(went[0] if is_and else went[1])
            block = nxt
        flags = (shared[0], True) if is_and else (True, shared[1])
        last = self._jump_if(block, test.values[-1], if_true, if_false, stmt, flags)
        assert first is not None
        return (last[0], first) if is_and else (first, last[1])

    def _loop(
        self, block: Block, stmt: ast.While | ast.For, prepare: Any, body_start: Any
    ) -> Block | None:
        header = self.new_block("loop_header", stmt)
        block.jump(header, debug=self.dbg(stmt))
        body = self.new_block("loop_body", stmt)
        after = self.new_block("loop_after", stmt)
        exit_block = self.new_block("loop_else", stmt) if stmt.orelse else after
        prepare(header, body, exit_block)
        body.seal()
        self.loops.append((header, after))
        self.loop_stmts.append(stmt)
        start = body_start(body)
        end = self.statements(start, stmt.body)
        self.loops.pop()
        self.loop_stmts.pop()
        if end is not None and not end.terminated:
            end.jump(header, debug=self.dbg(stmt))
        header.seal()
        if stmt.orelse:
            exit_block.seal()
            end = self.statements(exit_block, stmt.orelse)
            if end is not None and not end.terminated:
                end.jump(after, debug=self.dbg(stmt))
        after.seal()
        return after if after.preds else None

    def stmt_While(self, block: Block, stmt: ast.While) -> Block | None:
        # The test jumps as an `if`'s does: its type tests narrow the body.
        saved = dict(self.narrowed)

        def prepare(header: Block, body: Block, exit_block: Block) -> None:
            self.narrowed = dict(self._jump_if(header, stmt.test, body, exit_block, stmt)[0])

        try:
            return self._loop(block, stmt, prepare, lambda b: b)
        finally:
            self.narrowed = saved

    def stmt_For(self, block: Block, stmt: ast.For) -> Block | None:
        self.block_count += 1
        itvar = f"$iter{self.block_count}"
        iterable = self.expr(block, stmt.iter)
        block.write(itvar, block.apply(ops.myia_iter, iterable, debug=self.dbg(stmt.iter)))
        self.locals.add(itvar)
        dbg = self.dbg(stmt.iter)

        def prepare(header: Block, body: Block, exit_block: Block) -> None:
            cond = header.apply(ops.myia_hasnext, header.read(itvar), debug=dbg)
            header.branch(cond, body, exit_block, debug=self.dbg(stmt))

        def body_start(body: Block) -> Block:
            pair = body.apply(ops.myia_next, body.read(itvar), debug=dbg)
            body.write(itvar, body.apply(P.tuple_getitem, pair, 1, debug=dbg))
            item = body.apply(P.tuple_getitem, pair, 0, debug=self.dbg(stmt.target))
            bounds = range_bounds(stmt.iter, iterable)
            if bounds is not None:
                self.source.windows.ranges[item] = bounds
            self.assign(body, stmt.target, item)
            return body

        return self._loop(block, stmt, prepare, body_start)

    def stmt_Break(self, block: Block, stmt: ast.Break) -> None:
        block.jump(self.loops[-1][1], debug=self.dbg(stmt))
        return None

    def stmt_Continue(self, block: Block, stmt: ast.Continue) -> None:
        block.jump(self.loops[-1][0], debug=self.dbg(stmt))
        return None

    def stmt_Assert(self, block: Block, stmt: ast.Assert) -> Block:
        cond = self.truth(block, stmt.test)
        msg = self.expr(block, stmt.msg) if stmt.msg is not None else Constant(None)
        block.effects.append(block.apply(P.assert_, cond, msg, debug=self.dbg(stmt)))
        return block

    def stmt_Raise(self, block: Block, stmt: ast.Raise) -> None:
        exc = stmt.exc
        if exc is None:
            raise self.error(stmt, "a bare raise is not supported by Myia")
        if isinstance(exc, ast.Call):
            if exc.keywords:
                raise self.error(exc, "keyword arguments to an exception are not supported")
            cls = self.expr(block, exc.func)
            args = [self.expr(block, a) for a in exc.args]
        else:
            cls = self.expr(block, exc)
            args = []
        block.finish(block.apply(P.raise_, cls, *args, debug=self.dbg(stmt)))
        return None

    # Expressions ----------------------------------------------------------------------------

    def expr(self, block: Block, node: ast.expr) -> Node:
        """Return the node computing `node` in `block`."""
        method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            raise self.error(node, f"{type(node).__name__} expressions are not supported by Myia")
        return method(block, node)

    def truth(self, block: Block, node: ast.expr) -> Node:
        value = self.expr(block, node)
        return block.apply(ops.truth, value, debug=self.dbg(node))

    def expr_Constant(self, block: Block, node: ast.Constant) -> Node:
        return Constant(node.value, self.dbg(node))

    def expr_Name(self, block: Block, node: ast.Name) -> Node:
        self.use_location = self.loc(node)
        value = self.read_variable(block, node.id, node)
        if value.is_constant:
            return self.constant(block, value.value, node.id, node)
        return value

    def constant(self, block: Block, value: Any, name: str, node: ast.expr) -> Node:
        """The constant `value` named `name`; a tuple of functions is built in the IR."""
        dbg = DebugInfo(name, self.loc(node))
        built = functions_in_constant(
            value, name, dbg.location, lambda *a: block.apply(*a, debug=dbg)
        )
        return built if built is not None else Constant(value, dbg)

    def expr_BinOp(self, block: Block, node: ast.BinOp) -> Node:
        op = BINOPS.get(type(node.op))
        if op is None:
            raise self.error(node, f"operator {type(node.op).__name__} is not supported by Myia")
        left = self.expr(block, node.left)
        right = self.expr(block, node.right)
        return block.apply(op, left, right, debug=self.dbg(node))

    def expr_UnaryOp(self, block: Block, node: ast.UnaryOp) -> Node:
        operand = self.expr(block, node.operand)
        if isinstance(node.op, ast.Not):
            t = block.apply(ops.truth, operand, debug=self.dbg(node))
            return block.apply(P.logical_not, t, debug=self.dbg(node))
        op = {ast.USub: ops.neg, ast.UAdd: ops.pos, ast.Invert: ops.invert}[type(node.op)]
        return block.apply(op, operand, debug=self.dbg(node))

    def expr_Call(self, block: Block, node: ast.Call) -> Node:
        return calls.parse_call(self, block, node)

    def expr_Attribute(self, block: Block, node: ast.Attribute) -> Node:
        return attributes.parse_attribute(self, block, node)

    def expr_Lambda(self, block: Block, node: ast.Lambda) -> Node:
        graph = Graph(f"{self.graph.name}:lambda", self.loc(node))
        self.parse_nested(node, block, graph)
        return Constant(graph, self.dbg(node, "<lambda>"))

    def expr_ListComp(self, block: Block, node: ast.ListComp) -> Node:
        """A comprehension: a nested function of loops, called on its first iterable."""
        return comprehensions.parse(self, block, node)

    expr_GeneratorExp = expr_DictComp = expr_SetComp = expr_ListComp

    def expr_Starred(self, block: Block, node: ast.Starred) -> Node:
        raise self.error(node, "starred expressions are not supported by Myia")

    def expr_Yield(self, block: Block, node: ast.Yield) -> Node:
        raise self.error(node, "yield is not supported by Myia (generators have effects)")

    expr_YieldFrom = expr_Yield

    def expr_Await(self, block: Block, node: ast.Await) -> Node:
        raise self.error(node, "await is not supported by Myia")

    def expr_NamedExpr(self, block: Block, node: ast.NamedExpr) -> Node:
        raise self.error(node, "assignment expressions (:=) are not supported by Myia")


__all__ = ["Jump", "parse"]

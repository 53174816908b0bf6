"""Python code generation: typed graphs to the source of a Python module.

Each top-level graph becomes a Python function, named after the user's function; each
closure (a graph with free variables) a *maker* ``mk_g(fv...)`` that defines and returns the
function, so that a closure captures the values of its free variables when it is made (as
Myia's semantics say), even when the graph making it runs as a ``while`` loop.

Tail calls become control flow. The blocks of a function (the graphs its tail calls reach,
used nowhere else: the branches, loop headers and bodies the frontend made) are compiled into
the function that enters them: a block with one predecessor is written inline where it is
jumped to; a block jumped to from several places, or from itself (a loop), is a *state* of a
``while True`` loop: a jump assigns the block's parameters and ``continue``s. So a loop of a
million iterations is a Python ``while`` loop, in the primal and in the gradient.

Variables are named after the user's variables (``y``, ``y_2``...), so the code can be read;
`Module.nodes` maps each line back to the node it computes, for tracebacks.
"""

from __future__ import annotations

import builtins
import keyword
import math
import re
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..abstract import show
from ..abstract.data import AbstractValue
from ..infer.specialize import Dead
from ..ir.analysis import Scopes, reachable_graphs, toposort
from ..ir.node import Apply, Constant, Graph, Node
from ..opt.effects import droppable, droppable_tree
from ..primitives import P, Primitive
from . import runtime
from .lower import INLINABLE, LOWER, UNREAD
from .reuse import BufferReuse

_LITERALS = (bool, int, str, type(None))
#: The runtime value of each function never called that has its own `Dead`.
_DEAD_FNS: weakref.WeakKeyDictionary[Dead, Any] = weakref.WeakKeyDictionary()


def _dead_fn() -> Any:
    """A new function standing for one never called (`runtime.dead`, as another object)."""

    def dead(*args: Any) -> Any:
        return runtime.dead(*args)

    return dead


@dataclass
class Module:
    """The generated source of a program, the globals it runs in and its entry function."""

    source: str
    globals: dict[str, Any]
    entry: str
    filename: str
    nodes: dict[int, Node] = field(default_factory=dict)
    #: for the node of a line, the nodes written inside its expression with their text
    #: (the column of the operation that raised tells which of them raised, `runtime`)
    inner: dict[Node, list[tuple[Node, str]]] = field(default_factory=dict)
    #: for a block written inside the function of another graph, the jump that enters it, by
    #: (that graph, block) (the call site of an inlined function's first block leads to the
    #: user's line; a block may be written in several functions)
    entries: dict[tuple[Graph, Graph], Node] = field(default_factory=dict)
    #: the graph of each generated function, by its name
    functions: dict[str, Graph] = field(default_factory=dict)
    #: whether the code may recurse deeper than Python's default limit (non-tail calls of
    #: recursive graphs, or calls of function values)
    deep: bool = False


class Namer:
    """Unique Python identifiers, derived from the user's names where there are some."""

    def __init__(self) -> None:
        self.used: set[str] = set(keyword.kwlist) | set(dir(builtins)) | {"np", "math"}
        self.names: dict[Any, str] = {}

    def fresh(self, base: str | None) -> str:
        base = _sanitize(base or "v")
        name = base
        i = 2
        while name in self.used:
            name = f"{base}_{i}"
            i += 1
        self.used.add(name)
        return name

    def __call__(self, key: Any, base: str | None) -> str:
        name = self.names.get(key)
        if name is None:
            name = self.names[key] = self.fresh(base)
        return name


_REPLACE = {"▶": "fwd_", "◀": "bwd_", "∇": "grad_", "%": "", ":": "_", ".": "_"}


def _sanitize(base: str) -> str:
    for k, v in _REPLACE.items():
        base = base.replace(k, v)
    base = re.sub(r"\W", "_", base, flags=re.ASCII).strip("_") or "v"
    if base[0].isdigit():
        base = "v" + base
    return base


def _strip_seq(node: Node) -> Node:
    while _is_call_of(node, P.seq):
        node = node.inputs[2]
    return node


def _is_call_of(node: Node, prim: Primitive) -> bool:
    return node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is prim


def _graph_of(node: Node) -> Any:
    """The graph held by constant `node` (or the DEAD marker of a branch never taken)."""
    if node.is_constant and isinstance(node.value, (Graph, Dead)):
        return node.value
    return None


def _tail_targets(call: Node) -> list[Graph] | None:
    """The graphs a tail call `call` may jump to (None if it is not a call of known graphs)."""
    if not call.is_apply:
        return None
    fn = call.inputs[0]
    g = _graph_of(fn)
    if g is not None:
        return [g]
    if _is_call_of(fn, P.switch):
        targets = [_graph_of(b) for b in fn.inputs[2:]]
        if all(t is not None for t in targets):
            return targets  # type: ignore[return-value]
    return None


def _program_graphs(entry: Graph) -> list[Graph]:
    """Every graph of the program of `entry`: those its graph constants reach, and more.

    A node of a graph that only closures read (a backpropagator's stack, pushed where the
    forward pass computes it) is no part of its graph's toposort, so the graphs its constants
    hold are not reached through them (`reachable_graphs`); `Scopes` follows free variables
    too. Missing, their uses of a variable were not counted: it was computed as a statement
    whose value was dropped, and the closure read an undefined name (a `NameError`).
    """
    graphs = reachable_graphs(entry)
    known = set(graphs)
    for g in Scopes(graphs).graphs:
        if g not in known:
            known.add(g)
            graphs.append(g)
    return graphs


def _forget_unread(graphs: list[Graph]) -> set[Node]:
    """Replace the inputs whose values the lowerings never read (`UNREAD`) by constants.

    This is done before free variables are computed, so that a closure does not keep alive
    (and its maker take) a value that only gave a type: the tree a zero sensitivity stands
    for, or the parts of a concatenation whose sizes the types give. An input that may raise
    and that nothing else uses is kept, and returned: it is computed as a statement, since
    the error must still happen.
    """
    kept: set[Node] = set()
    orders = {g: toposort(g) for g in graphs}
    users: dict[Node, int] = {}
    for order in orders.values():
        for node in order:
            if node.is_apply:
                for i in node.inputs:
                    users[i] = users.get(i, 0) + 1
    for order in orders.values():
        for node in order:
            if not node.is_apply:
                continue
            fn = node.inputs[0]
            rule = UNREAD.get(fn.value) if fn.is_constant else None  # type: ignore[attr-defined, call-overload]
            for i in rule(node) if rule is not None else ():
                old = node.inputs[i]
                if old.is_constant:
                    continue
                if users.get(old, 0) < 2 and not droppable_tree(old, old.graph):
                    kept.add(old)  # computed all the same, as a statement
                    continue
                users[old] -= 1
                c = Constant(None, old.debug.derive())
                c.abstract = old.abstract
                node.inputs[i] = c
    return kept


class CodeGenerator:
    """Generates one `Module` for the graphs reachable from an entry graph."""

    #: Whether a closure takes its free variables as default values of parameters (``def
    #: g(x, a=a)``: one function and one tuple made per closure) rather than in cells (a
    #: function, a tuple and a cell per free variable). Every object made that holds others
    #: counts towards the collector's next pass, and a gradient keeps a closure per call
    #: until its backward pass: fewer objects, fewer passes over the objects alive.
    closure_defaults = True
    #: Whether the jumps of a user's recursion made a loop count its levels (``_depth``,
    #: `RecursionError` past `RECURSION_LIMIT`).
    count_recursion = True

    def __init__(
        self, entry: Graph, *, split_lines: bool = False, reuse_min_bytes: int | None = None
    ):
        self.entry = entry
        #: Whether a node of one user's line is never written inside the expression of a node
        #: of another (`myia.profiling` times generated lines).
        self.split_lines = split_lines
        self.graphs = _program_graphs(entry)
        #: Nodes only a lowering that does not read them uses, computed for their errors.
        self.kept = _forget_unread(self.graphs)
        self.scopes = Scopes(self.graphs)
        self.names = Namer()
        self.globals: dict[str, Any] = {"np": np, "math": math, "__builtins__": builtins}
        self.global_values: dict[Any, str] = {}
        self.lines: list[str] = []
        self.line_nodes: dict[int, Node] = {}
        #: The nodes written inside the expression of each line's node (`Module.inner`), and
        #: those written since the statement being written began, with their text.
        self.inner: dict[Node, list[tuple[Node, str]]] = {}
        self.pending: list[tuple[Node, str]] = []
        self.entries: dict[tuple[Graph, Graph], Node] = {}
        self.deep = False
        self._count_uses()
        #: The buffer reuse pass (`myia.compile.reuse`), for arrays of at least
        #: `reuse_min_bytes` (None: every operation makes a new array).
        self.reuse = BufferReuse(self, reuse_min_bytes) if reuse_min_bytes is not None else None

    # Analysis -------------------------------------------------------------------------------

    def _count_uses(self) -> None:
        """Find the uses of every node, the tail calls, and how each graph is used."""
        self.uses: dict[Node, list[tuple[Apply, int]]] = {}
        self.tail_calls: dict[Graph, Node | None] = {}
        for g in self.graphs:
            assert g.output is not None
            out = _strip_seq(g.output)
            self.tail_calls[g] = out if _tail_targets(out) is not None else None
            if not g.output.is_constant:
                self.uses.setdefault(g.output, []).append((None, -1))  # type: ignore[arg-type]
            for node in self.scopes.toposort(g):
                if node.is_apply:
                    for i, inp in enumerate(node.inputs):
                        self.uses.setdefault(inp, []).append((node, i))
        for g, tail in self.tail_calls.items():
            # A tail call whose value something else reads too (the value of a conditional
            # expression that the code before the return uses) is a call, not a jump.
            if tail is not None and not self.only_returned(tail):
                self.tail_calls[g] = None
        # graph -> [(graph using it, whether the use is a jump: a tail call of it)]
        self.graph_uses: dict[Any, list[tuple[Graph, bool]]] = {self.entry: [(self.entry, False)]}
        for g in self.graphs:
            tail = self.tail_calls[g]
            for node in self.scopes.toposort(g):
                if not node.is_apply:
                    continue
                for i, inp in enumerate(node.inputs):
                    sub = _graph_of(inp)
                    if sub is None:
                        continue
                    jump = (node is tail and i == 0) or (
                        i >= 2
                        and tail is not None
                        and tail.inputs[0] is node
                        and _is_call_of(node, P.switch)
                        and len(self.uses.get(node, ())) == 1
                    )
                    self.graph_uses.setdefault(sub, []).append((g, jump))
            for d in g.defaults.values():
                sub = _graph_of(d)
                if sub is not None:
                    self.graph_uses.setdefault(sub, []).append((g, False))

    def plan(self, entry: Graph) -> tuple[list[Graph], dict[Graph, int]]:
        """The blocks compiled into `entry`'s function, and which of them are loop states."""
        parent = self.scopes.parents.get(entry)
        fvs = set(self.scopes.free_variables_total.get(entry, ()))
        group = [entry]
        members = {entry}
        i = 0
        while i < len(group):
            g = group[i]
            i += 1
            tail = self.tail_calls.get(g)
            for t in _tail_targets(tail) or [] if tail is not None else []:
                if t in members or isinstance(t, Dead):
                    continue
                if self.scopes.parents.get(t) is not parent or t.flags.get("vararg"):
                    continue
                if not set(self.scopes.free_variables_total.get(t, ())) <= fvs:
                    continue
                members.add(t)
                group.append(t)
        # A block also called from elsewhere has a function of its own too: the jumps of the
        # group stay jumps (a loop whose blocks are entered from several places is a loop).
        preds: dict[Graph, int] = {g: 0 for g in group}
        for g in group:
            tail = self.tail_calls.get(g)
            for t in (_tail_targets(tail) or []) if tail is not None else []:
                if t in preds:
                    preds[t] += 1
        states: dict[Graph, int] = {}
        for g in group:
            # Every cycle has a block jumped to from outside it and from inside it, or it
            # goes through the entry: those blocks are enough to make loops of all cycles.
            if preds[g] > 1 or (g is entry and preds[g] > 0):
                states[g] = len(states)
        return group, states

    def _steps(self, target: Graph) -> bool:
        """Whether the jump to loop state `target` being written makes a call of a recursion.

        It does when it enters a user's function, or when a block written since the last
        state (`steps_pending`) holds a recursive call that inlining made a jump: it counts
        one level of recursion, as the call did in Python (``RecursionError`` past
        `RECURSION_LIMIT` levels). The jumps of a user's ``while`` loop count nothing.
        """
        return bool(
            self.count_recursion
            and target in self.states
            and (self.steps_pending or target.flags.get("user_function"))
        )

    def count_level(self, indent: int, tail: Node) -> None:
        """Count a level of recursion: ``RecursionError`` past `RECURSION_LIMIT` levels."""
        self.emit(indent, "_depth += 1", tail)
        self.emit(indent, f"if _depth > {runtime.RECURSION_LIMIT}:", tail)
        self.emit(indent + 1, "raise RecursionError('maximum recursion depth exceeded')", tail)

    def _reachable_in(self, entry: Graph, members: set[Graph]) -> set[Graph]:
        seen = {entry}
        todo = [entry]
        while todo:
            g = todo.pop()
            tail = self.tail_calls.get(g)
            for t in (_tail_targets(tail) or []) if tail is not None else []:
                if t in members and t not in seen:
                    seen.add(t)
                    todo.append(t)
        return seen

    # Output ---------------------------------------------------------------------------------

    def emit(self, indent: int, text: str, node: Node | None = None) -> None:
        self.lines.append("    " * indent + text)
        if node is not None:
            self.line_nodes[len(self.lines)] = node
            if self.pending:
                inner = self.inner.setdefault(node, [])
                inner.extend(r for r in self.pending if r[1] in text and r not in inner)

    def global_value(self, value: Any, base: str, key: Any = None) -> str:
        """The name of a global holding `value` (one per object, or per `key` where given)."""
        key = id(value) if key is None else key
        name = self.global_values.get(key)
        if name is None:
            name = self.global_values[key] = self.names.fresh(base)
            self.globals[name] = value
        return name

    def generate(self) -> Module:
        self.function_names: dict[Graph, str] = {}
        self.done: set[Graph] = set()
        self.todo: list[Graph] = [self.entry]
        entry_name = self.fn_name(self.entry)
        while self.todo:
            g = self.todo.pop()
            if g in self.done:
                continue
            self.done.add(g)
            self.function(g)
            self.emit(0, "")
        filename = f"<myia {entry_name}>"
        source = "\n".join(self.lines) + "\n"
        return Module(
            source,
            self.globals,
            entry_name,
            filename,
            self.line_nodes,
            {n: r for n, r in self.inner.items() if r},
            self.entries,
            {name: g for g, name in self.function_names.items()},
            self.deep,
        )

    def fn_name(self, g: Graph) -> str:
        name = self.function_names.get(g)
        if name is None:
            name = self.function_names[g] = self.names.fresh(g.debug.find_name() or "fn")
        return name

    def need(self, g: Graph) -> str:
        """The name of `g`'s function (or maker), generating it if not done yet."""
        if g not in self.done:
            self.todo.append(g)
        return self.fn_name(g)

    # Functions ------------------------------------------------------------------------------

    def function(self, g: Graph) -> None:
        parent = self.scopes.parents.get(g)
        params = [self.var(p) for p in g.parameters]
        indent = 0
        self.current = g
        if parent is not None:
            fvs = [self.var(n) for n in self.closure_fvs(g)]
            self.emit(0, f"def mk_{self.fn_name(g)}({', '.join(fvs)}):", g.output)
            indent = 1
            if self.closure_defaults and not set(fvs) & set(params):
                params += [f"{v}={v}" for v in fvs]
        self.emit(indent, f"def {self.fn_name(g)}({', '.join(params)}):", g.output)
        group, states = self.plan(g)
        self.group = set(group)
        self.states = states
        self.in_loop = False
        body = indent + 1
        self.steps_pending = False
        if (
            self.count_recursion
            and states
            and any(
                m.flags.get("recursive_call") or (m in states and m.flags.get("user_function"))
                for m in group
            )
        ):
            self.emit(body, "_depth = 0", g.output)
        if g not in states:
            self.block(g, body)
        else:
            if len(states) > 1:
                self.emit(body, f"_state = {states[g]}")
        if states:
            self.in_loop = True
            self.emit(body, "while True:")
            ordered = sorted(states, key=states.get)  # type: ignore[arg-type]
            if len(ordered) == 1:
                start = len(self.lines) - 1
                self.block(ordered[0], body + 1)
                self.while_condition(start, body)
            else:
                for k, s in enumerate(ordered):
                    kw = "if" if k == 0 else "elif"
                    self.emit(body + 1, f"{kw} _state == {k}:")
                    self.block(s, body + 2)
                self.emit(body + 1, "else:")
                self.emit(body + 2, "raise AssertionError('unreachable')")
        if parent is not None:
            self.emit(1, f"return {self.fn_name(g)}")

    def while_condition(self, start: int, indent: int) -> None:
        """Write the loop that starts at line `start` as ``while cond:``, if it tests first.

            while True:                 while cond:
                if cond:                    body
                    body          =>    exit
                    continue
                else:
                    exit

        (or the same with the branches swapped and ``not cond``): the test of a ``for`` loop
        over a ``range`` is then the loop's own, with no jump per iteration. The exit must
        not jump back to the loop.
        """
        lines = self.lines[start:]
        nodes = [self.line_nodes.get(start + 1 + k) for k in range(len(lines))]
        pad = "    " * (indent + 1)
        head = lines[1] if len(lines) > 1 else ""
        if not (head.startswith(pad + "if ") and head.endswith(":")):
            return
        tops = [k for k in range(2, len(lines)) if not lines[k].startswith(pad + "    ")]
        if len(tops) != 1 or lines[tops[0]] != pad + "else:":
            return
        k = tops[0]
        cond = head[len(pad) + 3 : -1]
        then, other = list(range(2, k)), list(range(k + 1, len(lines)))
        last = pad + "    continue"
        if lines[then[-1]] == last and not any(lines[j].strip() == "continue" for j in other):
            loop, rest = then[:-1], other
        elif lines[other[-1]] == last and not any(lines[j].strip() == "continue" for j in then):
            loop, rest, cond = other[:-1], then, f"not {cond}"
        else:
            return
        out = [("    " * indent + f"while {cond}:", nodes[1])]
        out += [(lines[j][4:], nodes[j]) for j in loop] or [(pad + "pass", None)]
        out += [(lines[j][8:], nodes[j]) for j in rest]
        del self.lines[start:]
        for j in range(start + 1, start + 1 + len(lines)):
            self.line_nodes.pop(j, None)
        for text, node in out:
            self.lines.append(text)
            if node is not None:
                self.line_nodes[len(self.lines)] = node

    def block(self, g: Graph, indent: int) -> None:
        """Write the statements of block `g`, ending with its return or jumps."""
        pending = self.steps_pending
        if g in self.states:  # a loop's state: the levels since the last one are counted
            self.steps_pending = False
        self.steps_pending = self.steps_pending or bool(g.flags.get("recursive_call"))
        try:
            self._block(g, indent)
        finally:
            self.steps_pending = pending

    def _block(self, g: Graph, indent: int) -> None:
        self.block_graph = g
        tail = self.tail_calls.get(g)
        targets = _tail_targets(tail) if tail is not None else None
        local = targets is not None and any(t in self.group for t in targets)
        skip: set[Node] = set()
        if local:
            assert tail is not None
            skip.add(tail)
            if _is_call_of(tail.inputs[0], P.switch):
                skip.add(tail.inputs[0])
        assert g.output is not None
        out = _strip_seq(g.output)
        if not local and out.is_apply and out.graph is g and not self.inlined(out):
            # Computed in the return, unless something else reads it first (``print(s)``).
            if self.only_returned(out):
                skip.add(out)
        for node in self.scopes.toposort(g):
            if node.is_apply and node not in skip:
                self.statement(node, indent)
        self.pending = []
        if not local:
            text = self.call(out) if out in skip else self.expr(out)
            self.emit(indent, f"return {text}", out)
            return
        assert tail is not None and targets is not None
        args = [self.expr(a) for a in tail.inputs[1:]]
        fn = tail.inputs[0]
        if len(targets) == 1:
            self.jump(targets[0], args, indent, tail)
        else:
            self.emit(indent, f"if {self.expr(fn.inputs[1])}:", tail)
            self.jump(targets[0], args, indent + 1, tail)
            self.emit(indent, "else:", tail)
            self.jump(targets[1], args, indent + 1, tail)

    def jump(self, target: Graph, args: list[str], indent: int, tail: Node) -> None:
        if isinstance(target, Dead):
            self.emit(indent, "raise AssertionError('unreachable branch')", tail)
            return
        if target not in self.group:
            self.deep = self.deep or self.scopes.is_recursive(target)
            self.emit(indent, f"return {self.callee(target)}({', '.join(args)})", tail)
            return
        self.entries.setdefault((self.current, target), tail)
        if target not in self.states:
            # A block jumped to from here only: its parameters are names for the arguments
            # (unless it has a function of its own too, whose parameters need their names).
            own = not all(jump and u in self.group for u, jump in self.graph_uses.get(target, []))
            pairs = []
            for p, a in zip(target.parameters, args):
                if (
                    a.isidentifier()
                    and not keyword.iskeyword(a)
                    and p not in self.names.names
                    and not own
                ):
                    self.names.names[p] = a
                else:
                    pairs.append((p, a))
        else:
            pairs = list(zip(target.parameters, args))
        pairs = [(p, a) for p, a in pairs if self.var(p) != a]
        if pairs:
            lhs = ", ".join(self.var(p) for p, _ in pairs)
            self.emit(indent, f"{lhs} = {', '.join(a for _, a in pairs)}", tail)
        if target in self.states:
            if self._steps(target):
                self.count_level(indent, tail)
            if len(self.states) > 1:
                self.emit(indent, f"_state = {self.states[target]}", tail)
            if self.in_loop:
                self.emit(indent, "continue", tail)
            elif not pairs and len(self.states) == 1:
                # Before the loop, a jump falls through to it; a branch needs a statement.
                self.emit(indent, "pass", tail)
            return
        self.block(target, indent)

    # Nodes ----------------------------------------------------------------------------------

    def var(self, node: Node) -> str:
        return self.names(node, node.debug.find_name())

    def only_returned(self, node: Node) -> bool:
        """Whether only the return reads `node`: directly, or through ``seq(a, node)``.

        A ``seq`` that something else reads (``s = seq(print(x), v)``, then ``s + 1``) makes
        `node` read before the return: it must be a statement of its own.
        """
        return all(
            u is None or (_is_call_of(u, P.seq) and i == 2 and self.only_returned(u))
            for u, i in self.uses.get(node, ())
        )

    def inlined(self, node: Apply) -> bool:
        """Whether `node` is written inside its single user's expression."""
        fn = node.inputs[0]
        if not (fn.is_constant and fn.value in INLINABLE) or node in self.kept:
            return False
        users = self.uses.get(node, [])
        if len(users) != 1:
            return False
        user, i = users[0]
        if user is None or user.graph is not node.graph:
            return False
        seq = user
        while _is_call_of(seq, P.seq) and i == 2:
            # ``seq(a, node)`` is `node` wherever it is used: written in one place only.
            seq_users = self.uses.get(seq, [])
            if len(seq_users) != 1 or seq_users[0][0] is None:
                return False
            seq, i = seq_users[0]
        if _is_call_of(seq, P.seq) and i == 1:
            # Computed for its errors alone (``seq(seq(xs, xs[n]), r)``): no expression reads
            # it, and no statement writes a ``seq``; `node` is a statement of its own.
            return False
        if self.split_lines and _line_of(node) != _line_of(user):
            return False
        return True

    def statement(self, node: Apply, indent: int) -> None:
        """Write the statement computing `node`, unless it is written where it is used."""
        self.pending = []
        if _is_call_of(node, P.seq) or self.inlined(node):
            return
        if self.unread(node):
            if self.droppable_expression(node):
                return  # a value computed for nothing, which cannot raise (nor its inputs
                # written inside its expression)
            self.emit(indent, self.call(node), node)
        else:
            self.emit(indent, f"{self.var(node)} = {self.call(node)}", node)
        if self.reuse is not None:
            for name in self.reuse.released(node):
                self.emit(indent, f"del {name}")

    def unread(self, node: Node) -> bool:
        """Whether `node` is computed for its errors alone: only ``seq`` reads it, as a statement.

        ``seq(a, node)`` is `node`: that `seq` must be unread in turn.
        """
        users = self.uses.get(node, [])
        return bool(users) and all(
            u is not None and _is_call_of(u, P.seq) and (i == 1 or self.unread(u))
            for u, i in users
        )

    def droppable_expression(self, node: Apply) -> bool:
        """Whether not writing `node`'s expression is unobservable.

        Its inputs that are statements of their own are computed all the same; those written
        inside its expression must not raise either.
        """
        if not droppable(node, node.graph):
            return False
        return all(
            self.droppable_expression(i)
            for i in node.inputs[1:]
            if i.is_apply and i.graph is node.graph and self.inlined(i)
        )

    def expr(self, node: Node) -> str:
        """The Python expression of `node`'s value."""
        if node.is_constant:
            return self.constant(node)
        if node.is_apply and node.graph is self.block_graph:
            if _is_call_of(node, P.seq):
                return self.expr(node.inputs[2])
            if self.inlined(node):
                text = self.call(node)
                self.pending.append((node, text))
                return text
        return self.var(node)

    def call(self, node: Apply) -> str:
        fn, *args = node.inputs
        rank = self.reuse.enter(node) if self.reuse is not None else 0
        arg_exprs = [self.expr(a) for a in args]
        if fn.is_constant:
            v = fn.value
            if isinstance(v, Primitive):
                if self.reuse is not None:
                    text = self.reuse.write(node, arg_exprs, rank)
                    if text is not None:
                        return text
                lower = LOWER.get(v)
                text = lower(arg_exprs, node, self) if lower is not None else None
                if text is not None:
                    return text
                impl = self.global_value(v.impl, f"{v.name}_")
                return f"{impl}({', '.join(arg_exprs)})"
            if isinstance(v, (Graph, Dead)):
                self.deep = self.deep or (isinstance(v, Graph) and self.scopes.is_recursive(v))
                return f"{self.callee(v)}({', '.join(arg_exprs)})"
        self.deep = True
        return f"{self.expr(fn)}({', '.join(arg_exprs)})"

    def callee(self, g: Graph) -> str:
        """The expression of the function value of graph `g` (making its closure if needed)."""
        if isinstance(g, Dead):
            # Each function never called is its own object (`Dead`): ``is`` tells them apart.
            fn = runtime.dead if g.name is None else _DEAD_FNS.setdefault(g, _dead_fn())
            return self.global_value(fn, "dead")
        name = self.need(g)
        if self.scopes.parents.get(g) is None:
            return name
        if g is self.current and not self.closure_defaults:
            return name
        # A closure refers to itself through a new closure: the function referring to itself
        # (through a cell) would be a reference cycle, which only the garbage collector frees.
        fvs = [self.expr(n) for n in self.closure_fvs(g)]
        return f"mk_{name}({', '.join(fvs)})"

    def closure_fvs(self, g: Graph) -> list[Node]:
        """The free variables a closure's maker takes (one per name: parameters may alias)."""
        out: dict[str, Node] = {}
        for n in self.scopes.free_variables_total[g]:
            out.setdefault(self.var(n), n)
        return list(out.values())

    def constant(self, node: Node) -> str:
        v = node.value
        if isinstance(v, (Graph, Dead)):
            return self.callee(v)
        if type(v) in _LITERALS or (type(v) is float and math.isfinite(v)):
            text = repr(v)
            # A negative number is a unary minus: ``(-2.0) ** x``, not ``-2.0 ** x``.
            return f"({text})" if text.startswith("-") else text
        if type(v) is tuple and all(type(x) in _LITERALS for x in v):
            return repr(v)
        if isinstance(v, AbstractValue):
            # Equal types are one global: which of them are one object varies between runs.
            try:
                key = ("type", v, hash(v))
            except TypeError:  # a type holding an unhashable constant
                key = None
            return self.global_value(v, show(v), key)
        base = getattr(v, "__name__", None) or getattr(v, "name", None) or type(v).__name__
        # A NumPy scalar: equal ones are one global (a program loaded from the disk cache
        # has a copy of the value for each of its constants).
        key = (type(v), v.tobytes()) if isinstance(v, np.generic) else None
        return self.global_value(v, f"_{base}" if isinstance(base, str) else "_k", key)


def _line_of(node: Node) -> tuple[str, int] | None:
    loc = node.debug.find_location()
    return (loc.filename, loc.line) if loc is not None else None


#: The smallest array an elementwise operation of the NumPy backend writes into a dead
#: temporary rather than a new array (`myia.compile.reuse`), in bytes.
REUSE_MIN_BYTES = 4096


def generate(entry: Graph, *, reuse: bool = False) -> Module:
    """Generate the Python module of `entry` (a closed, typed graph) and what it reaches.

    With `reuse`, elementwise operations write into dead temporaries of at least
    `REUSE_MIN_BYTES` (the NumPy backend's code; not code that may run on other arrays).
    """
    return generate_with(lambda b: CodeGenerator(entry, reuse_min_bytes=b), reuse)[1]


def generate_with(make: Any, reuse: bool) -> tuple[Any, Module]:
    """The generator ``make(reuse_min_bytes)`` that wrote a sound module, and the module.

    With `reuse`, the temporaries where the buffer reuse pass did not hold are banned from it
    and the module written again, until it holds everywhere.
    """
    banned: set[Node] = set()
    while True:
        gen = make(REUSE_MIN_BYTES if reuse else None)
        if gen.reuse is None:
            return gen, gen.generate()
        gen.reuse.banned = banned
        module = gen.generate()
        unsound = gen.reuse.unsound()
        if not unsound:
            return gen, module
        banned |= unsound

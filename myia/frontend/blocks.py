"""SSA construction (Braun et al. 2013): basic blocks as graphs, jumps as tail calls.

Every basic block of a Python function becomes a `Graph`. A jump from one block to another is
a tail call whose arguments are the variables the target reads: ``target(x, y)``, or, for a
conditional jump, ``switch(cond, if_true, if_false)(x, y)`` where both targets take the same
parameters. Parameters are created on demand when a block reads a variable it did not assign
(the phi nodes of SSA form); a block whose predecessors are not all known yet (a loop header
while its body is being parsed) is *unsealed* and fills in the arguments of its incoming jumps
when it is sealed.

A variable that a read may find unassigned on some path (``for x in xs: last = x`` then
``return last``; Python raises ``UnboundLocalError`` there) is *tracked*: it starts as
`UNASSIGNED`, and beside it a flag (the variable ``BOUND + name``) says whether a path
assigned it: false at the entry, true in a block that assigns it, a parameter where paths
meet. Each read of a tracked variable tests the flag (`FunctionParser.read_variable`). The
parser learns which variables to track by parsing once (`Unbound` values are made where a
read may find one unassigned) and parses again tracking them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..abstract.data import UNASSIGNED
from ..ir.node import Apply, Constant, DebugInfo, Graph, Location, Node, Parameter
from ..primitives import P


class Unbound:
    """The value of a local variable read before any assignment on some path.

    `location` and `function` are those of the read that made it (the first read that may
    find the variable unassigned), where type inference reports it.
    """

    def __init__(self, name: str, location: Location | None = None, function: str = "?"):
        self.name = name
        self.location = location
        self.function = function

    def __repr__(self) -> str:
        return f"<unbound {self.name}>"


#: The prefix of the name of the flag that says whether a tracked variable is assigned.
BOUND = "?bound "


class Jump:
    """A jump from `source` to one target, or to two targets with shared parameters."""

    def __init__(self, source: Block, targets: list[Block], apply: Apply):
        self.source = source
        self.targets = targets
        self.apply = apply
        self.vars: list[str] = []

    def add_var(self, name: str) -> None:
        """Pass variable `name` along this jump (and make every target take it)."""
        if name in self.vars:
            return
        self.vars.append(name)
        index = len(self.apply.inputs)
        self.apply.inputs.append(Constant(None))
        for t in self.targets:
            t.ensure_param(name)
        self.apply.inputs[index] = self.source.read(name)


class Block:
    """A basic block of a function being parsed.

    Attributes:
        graph: the graph of the block.
        variables: the current SSA value of each variable assigned or read in the block.
        preds: the jumps into this block.
        sealed: whether every predecessor is known.
        effects: nodes to evaluate, in order, before the block's final jump or return.
        terminated: whether the block has its output (return, jump or raise).

    """

    def __init__(self, function: Any, graph: Graph):
        self.function = function
        self.graph = graph
        self.variables: dict[str, Node] = {}
        #: The variables this block assigns (so far).
        self.assigned: set[str] = set()
        self.phis: dict[str, Parameter] = {}
        self.preds: list[Jump] = []
        self.sealed = False
        self.effects: list[Node] = []
        self.terminated = False

    # Reading and writing variables ---------------------------------------------------------

    def write(self, name: str, node: Node) -> None:
        self.variables[name] = node
        self.assigned.add(name)

    def read(self, name: str) -> Node:
        """Return the SSA value of `name` at the current end of this block."""
        if name.startswith(BOUND):
            return self._read_flag(name)
        if name in self.variables:
            return self.variables[name]
        if not self.function.is_local(name):
            return self.function.read_nonlocal(name)
        if self.sealed and not self.preds:
            where = self.function.use_location
            if name in self.function.tracked:
                return Constant(UNASSIGNED, DebugInfo(name, where))
            self.function.unassigned_read(name)
            unbound = Unbound(name, where, self.function.name)
            return Constant(unbound, DebugInfo(name, where))
        if self is not self.function.entry:
            value = self.function.defined_once(name)
            if value is not None:
                return value
        return self.add_phi(name)

    def _read_flag(self, name: str) -> Node:
        """Whether tracked variable ``name[len(BOUND):]`` is assigned at the end of this block."""
        var = name[len(BOUND) :]
        if var in self.assigned:
            return Constant(True)
        if name in self.variables:
            return self.variables[name]
        if not self.function.is_local(var):
            return self.function.read_nonlocal(name)
        if self.sealed and not self.preds:
            return Constant(False)
        return self.add_phi(name)

    def ensure_param(self, name: str) -> Parameter:
        """Make this block take variable `name` as a parameter."""
        if name in self.phis:
            return self.phis[name]
        shown = f"{name[len(BOUND) :]}_assigned" if name.startswith(BOUND) else name
        p = self.graph.add_parameter(shown)
        self.phis[name] = p
        facts = getattr(getattr(self.function, "source", None), "windows", None)
        if facts is not None:  # for the windows' bounds (`myia.frontend.windows`)
            facts.phis[p] = (self, name)
        self.variables.setdefault(name, p)
        if self.sealed:
            for j in self.preds:
                j.add_var(name)
        return p

    def add_phi(self, name: str) -> Node:
        p = self.ensure_param(name)
        return self.variables[name] if name in self.variables else p

    def seal(self) -> None:
        """Mark every predecessor as known and pass the parameters along each of them."""
        if self.sealed:
            return
        self.sealed = True
        for name in list(self.phis):
            for j in self.preds:
                j.add_var(name)

    # Outputs --------------------------------------------------------------------------------

    def apply(self, fn: Any, *args: Any, debug: DebugInfo | None = None) -> Apply:
        return self.graph.apply(fn, *args, debug=debug)

    def finish(self, node: Node) -> None:
        """Set the block's output to `node`, after its pending effects."""
        for eff in reversed(self.effects):
            node = self.graph.apply(P.seq, eff, node, debug=node.debug.derive())
        self.graph.output = node
        self.terminated = True

    def jump(self, target: Block, debug: DebugInfo | None = None) -> Jump:
        """End this block with a jump to `target`."""
        app = self.graph.apply(target.graph, debug=debug)
        j = Jump(self, [target], app)
        target.preds.append(j)
        self.finish(app)
        if target.sealed:
            for name in list(target.phis):
                j.add_var(name)
        return j

    def branch(
        self, cond: Node, if_true: Block, if_false: Block, debug: DebugInfo | None = None
    ) -> Jump:
        """End this block with ``switch(cond, if_true, if_false)(vars...)``."""
        sw = self.graph.apply(P.switch, cond, if_true.graph, if_false.graph, debug=debug)
        app = self.graph.apply(sw, debug=debug)
        j = Jump(self, [if_true, if_false], app)
        if_true.preds.append(j)
        if_false.preds.append(j)
        self.finish(app)
        return j


class ExpressionBlock(Block):
    """The body of a closure made for a branch inside an expression (``a if c else b``).

    It reads variables from the enclosing block (as free variables), except those it receives
    as parameters; it assigns only the attribute chains that a test inside it narrows.
    """

    def __init__(
        self, function: Any, graph: Graph, enclosing: Block, params: tuple[str, ...] = ()
    ):
        super().__init__(function, graph)
        self.enclosing = enclosing
        self.sealed = True
        # Variables the closure receives as parameters (those its test narrows).
        for name in params:
            self.variables[name] = graph.add_parameter(name.lstrip("$"))

    def read(self, name: str) -> Node:
        if name in self.variables:
            return self.variables[name]
        return self.enclosing.read(name)


def make_block(function: Any, name: str, location: Any, factory: Callable[..., Block] = Block):
    """Create a block with a fresh graph named `name`."""
    return factory(function, Graph(name, location))

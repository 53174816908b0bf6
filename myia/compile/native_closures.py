"""Function values in the machine code of a whole program: tagged tuples of free values.

Numba takes no closure that escapes a function, nor a function chosen at run time. A
gradient has such values where its loops follow one another or its forward loops may run no
iteration: the forward pass of a loop returns its backpropagator, a closure over the loop's
stack, or a closed graph when the loop did not run, and the backpropagator of the code
before it calls the one it received. In the machine code of a whole program
(`myia.compile.native_whole`), every function value is defunctionalized:

- the graphs that may flow to one place form a *class* (the options of function types
  that share an option);
- a value of graph ``G``, member ``t`` of its class, is the tuple ``(t, env_0, ..., env_k)``,
  where ``env_t`` holds ``G``'s free values and each other ``env_i`` a value of the same
  type (zeros, empty stacks), so that every value of a class has one Numba type;
- a closure is lambda-lifted: its free variables are its first parameters;
- a call of a function value calls the class's dispatcher ``_fcall_c_n(f, args...)``, which
  calls the member of tag ``f[0]`` on its free values and the arguments.

Environments and records that are constants (the zero sensitivities of a ``range``) are
``None``: the program may pass them around but not read them (an attribute is not machine
code). A function value whose class contains itself (the backpropagator of a recursion's
node holds its children's) is ``(tag, index)`` into lists of environments instead
(`myia.compile.native_fenvs`). A callee that is not a graph is not machine code (`NotWhole`).
"""

from __future__ import annotations

import math
from typing import Any

from ..abstract.data import (
    ENV,
    AbstractFunction,
    AbstractRecord,
    AbstractScalar,
    AbstractStack,
    AbstractTuple,
)
from ..infer.specialize import Dead
from ..ir.node import Graph, Node
from ..primitives import P, Primitive
from ..primitives.grad import EnvInstance
from ..records import is_record_value

_ZEROS = {"float64": "0.0", "int64": "0", "bool": "False"}


class NotWhole(Exception):
    """The program cannot be machine code whole; the message says why."""


def opaque_constant(value: Any) -> bool:
    """Whether `value` is written ``None`` in the machine code (an environment, a record)."""
    return isinstance(value, EnvInstance) or is_record_value(value)


def constant_text(value: Any) -> str | None:
    """The machine code's expression of a constant tuple of numbers (None: another value)."""
    if type(value) is not tuple:
        return None
    items = []
    for v in value:
        if type(v) is tuple:
            text = constant_text(v)
        elif type(v) in (bool, int) or (type(v) is float and math.isfinite(v)):
            text = repr(v)
        elif v is None or opaque_constant(v):
            text = "None"
        else:
            return None
        if text is None:
            return None
        items.append(text)
    return "(" + "".join(f"{t}, " for t in items) + ")"


def opaque_type(a: Any) -> bool:
    """Whether values of type `a` may only be such constants in the machine code."""
    return a is ENV or isinstance(a, AbstractRecord)


class Closures:
    """The classes of function values of a program written by generator `gen`.

    A class is found by following values: a *slot* is a node and a path of tuple indices in
    its value; the slots of a function value are united where it flows (a call's arguments
    to the callee's parameters, its output to the call, tuples, ``switch``, ``seq``), the
    callees of a call of a function value being the members of its class so far, until
    nothing changes.
    """

    def __init__(self, gen: Any):
        self.gen = gen
        self._parent: dict[Any, Any] = {}
        applies = [n for g in gen.graphs for n in gen.scopes.toposort(g) if n.is_apply]
        consts = {
            inp
            for n in applies
            for inp in n.inputs[1:]
            if inp.is_constant and isinstance(inp.value, (Graph, Dead))
        }
        consts |= {
            g.output
            for g in gen.graphs
            if g.output.is_constant and isinstance(g.output.value, (Graph, Dead))
        }
        # In the order of the program, so that the source is the same in every process.
        order = {n: k for k, n in enumerate(n for a in applies for n in a.inputs)}
        self._consts = sorted(consts, key=lambda c: order.get(c, len(order)))
        #: class root -> its member graphs, in order (the tag is the index)
        self.members: dict[Any, list[Any]] = {}
        changed = True
        while changed:
            self._collect()
            changed = False
            for node in applies:
                changed |= self._flow(node)
        self._collect()
        #: (class root, arity) -> the name of its dispatcher
        self.dispatchers: dict[tuple[Any, int], str] = {}
        #: The types of the dispatchers' parameters, by name.
        self.local_types: dict[str, list[Any]] = {}
        self._index = {root: k for k, root in enumerate(self.members)}
        self._visiting: set[Any] = set()
        self._indexed: set[Any] | None = None
        #: The environment lists of the members of indexed classes, ``(root, tag)`` -> its
        #: position in ``_fe`` and the Numba type of its environments (`native_fenvs`).
        self.env_lists: dict[tuple[Any, int], tuple[int, str]] = {}
        #: The source of the helpers that append an environment to its list.
        self.env_source: list[str] = []

    # Classes --------------------------------------------------------------------------------

    def _find(self, slot: Any) -> Any:
        self._parent.setdefault(slot, slot)
        while self._parent[slot] != slot:
            self._parent[slot] = self._parent[self._parent[slot]]
            slot = self._parent[slot]
        return slot

    def _collect(self) -> None:
        self.members = {}
        for c in self._consts:
            members = self.members.setdefault(self._find((c, ())), [])
            if c.value not in members:
                members.append(c.value)

    def _unite(self, a: Node, pa: tuple, b: Node, pb: tuple) -> bool:
        changed = False
        for q in _fn_paths(_at(a.abstract, pa)) | _fn_paths(_at(b.abstract, pb)):
            ra, rb = self._find((a, pa + q)), self._find((b, pb + q))
            if ra != rb:
                self._parent[ra] = rb
                changed = True
        return changed

    def _flow(self, node: Node) -> bool:
        fn, *args = node.inputs
        changed = False
        if fn.is_constant and isinstance(fn.value, Primitive):
            prim = fn.value
            if prim is P.make_tuple:
                for i, a in enumerate(args):
                    changed |= self._unite(node, (i,), a, ())
            elif prim is P.tuple_getitem and args[1].is_constant:
                changed |= self._unite(node, (), args[0], (args[1].value,))
            elif prim is P.switch:
                for a in args[1:]:
                    changed |= self._unite(node, (), a, ())
            elif prim in (P.seq, P.identity):
                changed |= self._unite(node, (), args[-1], ())
            elif any(_fn_paths(a.abstract) for a in [node, *args]):
                raise NotWhole(f"a function value is used by {prim.name}")
            return changed
        if fn.is_constant:
            callees = [fn.value] if isinstance(fn.value, Graph) else []
        else:
            callees = [
                g for g in self.members.get(self._find((fn, ())), ()) if isinstance(g, Graph)
            ]
        for g in callees:
            for p, a in zip(g.parameters, args):
                changed |= self._unite(p, (), a, ())
            changed |= self._unite(node, (), g.output, ())
        return changed

    def root(self, node: Node, path: tuple = ()) -> Any:
        """The class of the function value at `path` in `node`'s value."""
        root = self._find((node, path))
        if not self.members.get(root):
            raise NotWhole("a function value has no known callee")
        return root

    def _env(self, g: Graph) -> list[Node]:
        if self.gen.scopes.parents.get(g) is None:
            return []
        return self.gen.closure_fvs(g)

    def indexed(self, root: Any) -> bool:
        """Whether the values of class `root` are ``(tag, index)`` (it may contain itself)."""
        if self._indexed is None:
            edges: dict[Any, set[Any]] = {}
            for r, members in self.members.items():
                out = edges[r] = set()
                for m in members:
                    if isinstance(m, Graph):
                        for n in self._env(m):
                            out |= {self._find((n, q)) for q in _fn_paths(n.abstract)}
            self._indexed = set()
            for r in edges:
                seen: set[Any] = set()
                todo = list(edges[r])
                while todo:
                    x = todo.pop()
                    if x == r:
                        self._indexed.add(r)
                        break
                    if x not in seen:
                        seen.add(x)
                        todo.extend(edges.get(x, ()))
        return root in self._indexed

    # Values ---------------------------------------------------------------------------------

    def value(self, node: Node) -> str:
        """The expression of the function value of constant `node` (a graph)."""
        g = node.value
        if isinstance(g, Dead):
            raise NotWhole("a function value is a function never called")
        root = self.root(node)
        members = self.members[root]
        if any(isinstance(m, Dead) for m in members):
            raise NotWhole("a function value may be a function never called")
        for m in members:
            self.gen.need(m)  # the dispatchers call every member
        if g not in members:  # pragma: no cover - every graph used as a value was found
            raise NotWhole("a function value was not found")
        if self.indexed(root):
            return native_fenvs.indexed_value(self, root, members.index(g), self._env(g))
        envs = [
            "(" + "".join(f"{self.gen.expr(n)}, " for n in self._env(m)) + ")"
            if m is g
            else self._zero_env(m)
            for m in members
        ]
        return f"({members.index(g)}, {', '.join(envs)})"

    def _zero_env(self, g: Any) -> str:
        if isinstance(g, Dead):
            raise NotWhole("a function value is a function never called")
        return "(" + "".join(f"{self.zero(n, ())}, " for n in self._env(g)) + ")"

    def zero(self, node: Node, path: tuple) -> str:
        """A value of the type at `path` in `node`'s value (of a member not taken)."""
        a = _at(node.abstract, path)
        if isinstance(a, AbstractScalar) and a.dtype in _ZEROS:
            return _ZEROS[a.dtype]
        if isinstance(a, AbstractTuple):
            es = [self.zero(node, path + (i,)) for i in range(len(a.elements))]
            return "(" + "".join(f"{e}, " for e in es) + ")"
        if isinstance(a, AbstractStack):
            return f"_snew_{self.gen.stack_helpers(a)}()"
        if a is ENV:
            return self.gen.envs.empty()
        if opaque_type(a):
            return "None"
        if isinstance(a, AbstractFunction):
            root = self.root(node, path)
            if self.indexed(root):
                return "(0, 0)"  # never called
            if root in self._visiting:
                raise NotWhole("a function value holds a function value of its own kind")
            self._visiting.add(root)
            try:
                members = self.members[root]
                return f"(0, {', '.join(self._zero_env(m) for m in members)})"
            finally:
                self._visiting.discard(root)
        raise NotWhole(f"a free value of a function value is of type {a}")

    # Calls ----------------------------------------------------------------------------------

    def direct(self, g: Graph, args: list[str]) -> str:
        """The call of graph `g` (lifted: its free values first) on `args`."""
        if isinstance(g, Dead):
            raise NotWhole("the program calls a function never called")
        fvs = [self.gen.expr(n) for n in self._env(g)]
        return f"{self.gen.need(g)}({', '.join(fvs + args)})"

    def dispatch(self, fn: Node, args: list[str]) -> str:
        """The call of function value `fn` on `args`, through its class's dispatcher."""
        root = self.root(fn)
        if any(isinstance(m, Dead) for m in self.members[root]):
            raise NotWhole("a function value may be a function never called")
        key = (root, len(args))
        name = self.dispatchers.get(key)
        if name is None:
            name = self.dispatchers[key] = self.gen.names.fresh(
                f"_fcall_{self._index[root]}_{len(args)}"
            )
        self.local_types.setdefault("_f", []).append(fn.abstract)
        return f"{name}({', '.join([self.gen.expr(fn), *args])})"

    def dispatcher_lines(self) -> list[str]:
        """The source lines of the dispatchers called (after the program's functions)."""
        lines: list[str] = []
        for (root, arity), name in self.dispatchers.items():
            xs = [f"_x{i}" for i in range(arity)]
            lines.append(f"def {name}({', '.join(['_f', *xs])}):")
            members = self.members[root]
            for t, g in enumerate(members):
                for x, p in zip(xs, g.parameters[len(g.parameters) - arity :]):
                    self.local_types.setdefault(x, []).append(p.abstract)
                call = ""
                if self.indexed(root):
                    env = self._env(g)
                    fvs = native_fenvs.indexed_env(self, root, t, env)
                    if env:
                        # One read of the environment, its free values then read from it.
                        call = f"_e = {fvs[0]}; "
                        fvs = [f"_e[{i}]" for i in range(len(env))]
                        types = AbstractTuple(tuple(n.abstract for n in env))
                        self.local_types.setdefault("_e", []).append(types)
                else:
                    fvs = [f"_f[{t + 1}][{i}]" for i in range(len(self._env(g)))]
                call += f"return {self.gen.fn_name(g)}({', '.join(fvs + xs)})"
                if t < len(members) - 1:
                    lines += [f"    if _f[0] == {t}:", f"        {call}"]
                else:
                    lines.append(f"    {call}")
            lines.append("")
        return lines


def _at(a: Any, path: tuple) -> Any:
    """The type at `path` (tuple indices) in values of type `a` (None: no such element)."""
    for i in path:
        if not isinstance(a, AbstractTuple) or not 0 <= i < len(a.elements):
            return None
        a = a.elements[i]
    return a


def _fn_paths(a: Any) -> set[tuple]:
    """The paths of the function values in values of type `a`."""
    if isinstance(a, AbstractFunction):
        return {()}
    if isinstance(a, AbstractTuple):
        return {(i, *q) for i, e in enumerate(a.elements) for q in _fn_paths(e)}
    return set()


def lift(lines: list[str], start: int, name: str) -> None:
    """Make the closure maker written from line `start` a function taking its free values.

    ``def mk_g(fvs): / def g(params): / body / return g`` becomes ``def g(fvs, params): /
    body`` (the body one level less indented).
    """
    head = lines[start]
    assert head.startswith(f"def mk_{name}(") and lines[start + 1].startswith(f"    def {name}(")
    fvs = head[len(f"def mk_{name}(") : -2]
    params = lines[start + 1][len(f"    def {name}(") : -2]
    body = lines[start + 2 :]
    while body and body[-1] in ("", f"    return {name}"):
        body.pop()
    both = ", ".join(p for p in (fvs, params) if p)
    lines[start:] = [f"def {name}({both}):"] + [
        ln[4:] if ln.startswith("    ") else ln for ln in body
    ]


from . import native_fenvs  # noqa: E402 (it reads `NotWhole`)

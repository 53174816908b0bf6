"""The native backend's generator: a program's source, its loops outlined to machine code.

`NativeGenerator` lowers the typed, optimized graph to Python source, the NumPy backend's
generator with two changes:

- **Loops.** Each ``while cond:`` loop whose variables are scalars (and typed stacks) and whose
  body computes on them with scalar primitives is *outlined*: its code becomes a function of
  a separate module, compiled by ``numba.njit``; the host code calls it, and, where it
  cannot (Numba refuses the code) or where it signals an error, runs the original Python
  loop from the same inputs::

      try:
          y, i = _native_loop(y, i, n, x)      # machine code
          _native = True
      except Exception:
          _native = False
      if not _native:
          while i < n:                          # the NumPy backend's code, line for line
              ...

  So an error (``ZeroDivisionError``, a math domain error) is raised by the host code, at
  the user's line, as on the NumPy backend. The machine code raises wherever Python would:
  division by zero (Numba's ``error_model="python"``), and ``math`` functions and ``**``
  whose result is not finite from finite operands (Python raises ``ValueError`` or
  ``OverflowError`` there, or computes a complex number). Numba never sees the user's code,
  only the code Myia generated from its own IR.

- **Stacks.** The loop stacks of gradients (persistent linked cells on the NumPy backend)
  become typed growable buffers when their elements are tuples of Python scalars (whose
  ints surely fit in int64, `native_stacks`): a struct-of-arrays ``(arrays, n, used)``,
  one array per leaf of the element, doubling when full. ``used`` (a one-element array
  shared by the versions of a buffer) says how far the buffer was written: a push on an
  older version copies first, so stacks stay persistent. Pushing and popping are the same
  functions in the host code and in outlined loops; the machine code of a whole program
  keeps its stacks in an arena (`native_arena`).

The same generator writes a whole program without outlining (`whole_generator`), for
`native_whole`. It writes source only: `myia.compile.native_backend` loads and runs it.
"""

from __future__ import annotations

import ast
from typing import Any

from .. import pyast
from ..abstract.data import BOTTOM, AbstractFunction, AbstractScalar, AbstractStack
from ..infer.specialize import Dead
from ..ir.node import Apply, Graph, Node
from ..primitives import P, Primitive
from ..primitives.grad import EnvInstance
from .codegen import CodeGenerator
from .native_arrays import constant_key, has_array, list_stack_source, slice_text
from .native_closures import Closures, constant_text, lift, opaque_constant
from .native_envs import ENV_OPS, Envs
from .native_fenvs import FE
from .native_lowering import lower as lower_whole
from .native_records import RC, Records
from .native_source import (
    _ASSIGN,
    _DEF,
    _FORMAT,
    _INLINE,
    _INT_NATIVE,
    _JIT,
    _WALRUS,
    _WORD,
    _Kernel,
    _leaves,
    _math_helper,
    _weak_leaf,
    stack_helper_source,
)
from .native_stacks import counter_step as _counter_step
from .native_stacks import empty_element as _empty_element
from .native_stacks import is_empty_new, typed_stacks
from .native_stacks import python_int as _python_int

#: Primitives whose results on Python ints may exceed int64 and are not checked.
_INT_ARITH = frozenset([P.pow_, P.left_shift])

#: Arithmetic on Python ints, checked: it raises ``OverflowError`` near where int64 would
#: wrap around (the host loop then computes with Python's unbounded ints). The test is on
#: the float result: LLVM may assume that signed arithmetic does not overflow.
CHECKED = {P.add: "_iadd", P.sub: "_isub", P.mul: "_imul", P.neg: "_ineg", P.abs_: "_iabs"}

#: The stack primitives lowered to the typed buffers' helpers.
_STACK_OPS = frozenset(
    [P.stack_new, P.stack_of_functions, P.stack_push, P.stack_pop, P.stack_empty]
)


def _callees(fn: Node) -> list[Graph]:
    """The graphs a call of `fn` may enter (a graph, a ``switch`` of graphs, a closure)."""
    if fn.is_constant and isinstance(fn.value, Graph):
        return [fn.value]
    if fn.is_apply and fn.inputs[0].is_constant and fn.inputs[0].value is P.switch:
        return [b.value for b in fn.inputs[2:] if b.is_constant and isinstance(b.value, Graph)]
    a = fn.abstract
    if isinstance(a, AbstractFunction):
        return [o.graph for o in a.options if isinstance(getattr(o, "graph", None), Graph)]
    return []


class NativeGenerator(CodeGenerator):
    """The NumPy backend's generator, with loops outlined to machine code and typed stacks."""

    #: The outlined loops of a closure read its free variables from its cells.
    closure_defaults = False

    def __init__(
        self,
        entry: Graph,
        plain: bool = False,
        outline: bool = True,
        reuse_min_bytes: int | None = None,
    ):
        # The caller runs `unshare_empty_stacks(entry)` first, where not `plain`. Buffer
        # reuse (`myia.compile.reuse`) is the host code's: it writes into arrays, which the
        # machine code never takes.
        super().__init__(entry, reuse_min_bytes=reuse_min_bytes)
        #: Whether this generator writes the NumPy backend's code only (no machine code).
        self.plain = plain
        #: Whether loops are outlined (else the code is the whole program's, `native_whole`).
        self.outline_loops = outline and not plain
        self.names.used.update({"_native", RC, FE})
        #: Why stacks stay linked cells (None: they are typed buffers).
        self.stack_reason = (
            "disabled" if plain else typed_stacks(self.graphs, self.scopes, not self.outline_loops)
        )
        #: The stack helpers whose stacks are typed lists (of arrays, `native_arrays`).
        self.list_stacks: set[int] = set()
        #: element type -> index of its stack helpers
        self.stack_types: dict[Any, int] = {}
        self.helper_source: list[str] = []
        self.kernels: list[str] = []
        self.kernel_names: list[str] = []
        self.math: set[tuple[str, int]] = set()
        #: Why each loop left on the host stays there.
        self.refused: list[str] = []
        self._fn_start = 0
        #: The types of the empty stacks among the inputs of the call being written.
        self._hint: dict[Node, Any] = {}
        #: Whether the code calls the checked arithmetic on Python ints.
        self.int_helpers = False
        #: The function values of the whole program's machine code (`native_closures`).
        self.closures = None if outline or plain else Closures(self)
        #: The environments of the whole program's machine code (`native_envs`).
        self.envs = None if outline or plain else Envs(self)
        #: The recursive records the whole program's machine code reads (`native_records`).
        self.records = None if outline or plain else Records()
        #: The host's conversion of the arguments for that machine code (None: none).
        self.convert: Any = None

    # Typed stacks ---------------------------------------------------------------------------

    def stack_helpers(self, a: AbstractStack) -> int:
        """The index of the push/pop/new helpers of stacks of `a`'s element type."""
        if _empty_element(a.element):
            a = AbstractStack(AbstractScalar("float64", weak=True))  # never pushed on
        k = self.stack_types.get(a.element)
        if k is not None:
            return k
        k = self.stack_types[a.element] = len(self.stack_types)
        if not self.outline_loops and has_array(a.element):
            self.list_stacks.add(k)
            self.helper_source.append(list_stack_source(k, a.element))
        else:
            self.helper_source.append(stack_helper_source(k, a.element, not self.outline_loops))
        return k

    def _position_type(self, user: Apply, i: int, seen: set[Node] | None = None) -> Any:
        """The type that input `i` of `user` has where it is used (an empty stack's).

        An empty stack passed to a graph whose parameter is an empty stack too takes the
        type of what that parameter is used as, and so on.
        """
        seen = set() if seen is None else seen
        fn = user.inputs[0]
        if i == 1 and fn.is_constant and fn.value is P.stack_push:
            return user.abstract
        if fn.is_constant and fn.value in (P.identity, P.seq) and user not in seen:
            seen.add(user)
            return self._used_as(user, seen)
        for callee in _callees(fn):
            params = callee.parameters
            if i - 1 < len(params):
                p = params[i - 1]
                a = p.abstract
                if isinstance(a, AbstractStack) and a.element is not BOTTOM:
                    return a
                if p not in seen:
                    seen.add(p)
                    a = self._used_as(p, seen)
                    if a is not None:
                        return a
        return None

    def _used_as(self, node: Node, seen: set[Node]) -> Any:
        for u, j in self.uses.get(node, ()):
            if u is not None:
                a = self._position_type(u, j, seen)
                if a is not None:
                    return a
        return None

    def _hints_of(self, user: Apply) -> dict[Node, Any]:
        hints = {}
        for i, inp in enumerate(user.inputs):
            if i and is_empty_new(inp):
                hints[inp] = self._position_type(user, i)
        return hints

    def _is_typed_new(self, node: Node) -> bool:
        return self.stack_reason is None and is_empty_new(node)

    def constant(self, node: Node) -> str:
        if self.closures is not None:
            if isinstance(node.value, (Graph, Dead)):
                return self.closures.value(node)
            text = constant_text(node.value) or slice_text(node.value)
            if text is not None:
                return text
        return super().constant(node)

    def global_value(self, value: Any, base: str, key: Any = None) -> str:
        if self.envs is not None and isinstance(value, EnvInstance):
            return self.envs.constant(value)
        if self.closures is not None and opaque_constant(value):
            return "None"  # never read by the machine code (`native_closures`)
        if self.closures is not None and key is None:
            # Equal arrays are one constant: a program loaded from the disk cache has a copy
            # of the value for each of its constants, and its source is the same.
            key = constant_key(value)
        return super().global_value(value, base, key)

    def expr(self, node: Node) -> str:
        if self._is_typed_new(node):
            # An empty stack, shared by stacks of several types: each use makes its own.
            a = self._hint.get(node)
            if not isinstance(a, AbstractStack):
                a = AbstractStack(AbstractScalar("float64", weak=True))
            return f"_snew_{self.stack_helpers(a)}()"
        return super().expr(node)

    def statement(self, node: Apply, indent: int) -> None:
        if self._is_typed_new(node):
            return
        super().statement(node, indent)

    def block(self, g: Graph, indent: int) -> None:
        tail = self.tail_calls.get(g)
        old = self._hint
        if tail is not None and tail.is_apply:
            self._hint = {**old, **self._hints_of(tail)}
        try:
            super().block(g, indent)
        finally:
            self._hint = old

    def call(self, node: Apply) -> str:
        old = self._hint
        hints = self._hints_of(node) if self.stack_reason is None else {}
        if hints:
            self._hint = {**old, **hints}
        try:
            return self._call(node)
        finally:
            self._hint = old

    def _call(self, node: Apply) -> str:
        fn = node.inputs[0]
        if self.closures is not None and not (fn.is_constant and isinstance(fn.value, Primitive)):
            args = [self.expr(a) for a in node.inputs[1:]]
            if not fn.is_constant:
                return self.closures.dispatch(fn, args)
            if isinstance(fn.value, (Graph, Dead)):
                return self.closures.direct(fn.value, args)
        if self.closures is not None and fn.is_constant:
            text = lower_whole(self, node)  # arrays and trees (`native_lowering`)
            if text is not None:
                return text
        if self.envs is not None and fn.is_constant and fn.value in ENV_OPS:
            return self.envs.call(node, [self.expr(a) for a in node.inputs[1:]])
        checked = CHECKED.get(fn.value) if fn.is_constant else None  # type: ignore[call-overload]
        if checked and not self.plain and _python_int(node.abstract) and not _counter_step(node):
            self.int_helpers = True
            return f"{checked}({', '.join(self.expr(a) for a in node.inputs[1:])})"
        if self.stack_reason is None and fn.is_constant:
            prim = fn.value
            if prim in (
                P.stack_new,
                P.stack_of_functions,
                P.stack_push,
                P.stack_pop,
                P.stack_empty,
            ):
                args = [self.expr(a) for a in node.inputs[1:]]
                st = (
                    node.abstract
                    if prim in (P.stack_new, P.stack_of_functions, P.stack_push)
                    else node.inputs[1].abstract
                )
                if isinstance(st, AbstractStack):
                    k = self.stack_helpers(st)
                    name = {
                        P.stack_new: "_snew",
                        P.stack_of_functions: "_snew",
                        P.stack_push: "_spush",
                        P.stack_pop: "_spop",
                        P.stack_empty: None,
                    }[prim]
                    if name is None:
                        return f"({args[0]}[1] == 0)"
                    return f"{name}_{k}({', '.join(args)})"
        return super().call(node)

    # Loops ----------------------------------------------------------------------------------

    def function(self, g: Graph) -> None:
        self._fn_start = start = len(self.lines)
        super().function(g)
        if self.closures is not None and self.scopes.parents.get(g) is not None:
            lift(self.lines, start, self.fn_name(g))
        if len(self.states) > 1 and self.outline_loops:
            # A loop of several states (``_state`` says which block runs next): outlined
            # whole when it ends its function.
            indent = 1 if self.scopes.parents.get(g) is None else 2
            head = "    " * indent + "while True:"
            loops = [i for i in range(start, len(self.lines)) if self.lines[i] == head]
            if loops and self.scopes.parents.get(g) is None:
                reason = self.outline(loops[0], len(self.lines), indent, returns=True)
                if reason is not None:
                    self.refused.append(reason)

    def while_condition(self, start: int, indent: int) -> None:
        super().while_condition(start, indent)
        if not self.outline_loops:
            return
        pad = "    " * indent
        head = self.lines[start]
        if not head.startswith(pad + "while "):
            return
        k = start + 1
        while k < len(self.lines) and self.lines[k].startswith(pad + "    "):
            k += 1
        returns = head == pad + "while True:"
        if returns and (len(self.states) != 1 or k != len(self.lines)):
            self.refused.append("a loop has several states")
            return
        reason = self.outline(start, k, indent, returns)
        if reason is not None:
            self.refused.append(reason)

    def int_overflow(self, node: Apply) -> bool:
        """Whether `node` computes on Python ints past int64 with no check (``**``, ``<<``)."""
        prim = node.inputs[0].value if node.inputs[0].is_constant else None  # type: ignore[attr-defined]
        return prim in _INT_ARITH and _python_int(node.abstract) and not _counter_step(node)

    def _nodes_of(self, lo: int, hi: int) -> list[Node]:
        return [n for i, n in self.line_nodes.items() if lo < i <= hi]

    def _local_types(self) -> dict[str, list[Any]]:
        counter = [AbstractScalar("int64", weak=True)]
        out: dict[str, list[Any]] = {"_state": counter, "_depth": counter}
        for node, name in self.names.names.items():
            if isinstance(node, Node):
                out.setdefault(name, []).append(node.abstract)
        for helpers in (self.closures, self.envs):
            for name, types in (helpers.local_types if helpers else {}).items():
                out.setdefault(name, []).extend(types)
        return out

    def _value_ok(self, types: list[Any], output: bool) -> bool:
        for a in types:
            if isinstance(a, AbstractStack):
                if self.stack_reason is not None or a.element is BOTTOM:
                    return False
            elif not _weak_leaf(a):
                return False
        return bool(types)

    def outline(self, start: int, end: int, indent: int, returns: bool) -> str | None:
        """Make the loop at lines ``[start, end)`` a call of machine code, or say why not.

        A loop that `returns` (``while True:`` at the end of its function, left by its
        returns) returns the function's result; another one, the values of its
        variables read after it.
        """
        pad = "    " * indent
        loop = self.lines[start:end]
        # The graphs of the loop: their Python-int arithmetic must fit in int64.
        graphs = {n.graph for n in self._nodes_of(start, end) if n.graph is not None}
        for g in graphs:
            for node in self.scopes.toposort(g):
                if not node.is_apply or not node.inputs[0].is_constant:
                    continue
                prim = node.inputs[0].value
                if isinstance(prim, Primitive) and self.int_overflow(node):
                    return f"{prim.name} of Python ints has no overflow (int64 in machine code)"
        locals_ = self._local_types()
        helpers = {f"_spush_{k}" for k in self.stack_types.values()}
        helpers |= {f"_spop_{k}" for k in self.stack_types.values()}
        helpers |= {f"_snew_{k}" for k in self.stack_types.values()}
        helpers |= set(CHECKED.values())
        body = "\n".join(line[len(pad) :] for line in loop)
        try:
            tree = pyast.parse(body)
        except SyntaxError:  # pragma: no cover - the generator writes valid code
            return "the loop's code does not parse"
        ints = {n for n, ts in locals_.items() if all(map(_python_int, ts))}
        checker = _Kernel(set(locals_), helpers | {"_istep"}, ints)
        tree = checker.visit(tree)
        if checker.bad:
            return checker.bad
        self.int_helpers |= checker.steps
        # Names defined before the loop in this function; names read after it.
        before: set[str] = set()
        for line in self.lines[self._fn_start : start]:
            m = _DEF.match(line)
            if m:
                before.update(p.strip() for p in m.group(1).split(",") if p.strip())
            m = _ASSIGN.match(line)
            if m:
                before.update(p.strip() for p in m.group(1).split(",") if p.strip())
            before.update(_WALRUS.findall(line))
        after = set(_WORD.findall("\n".join(self.lines[end:])))
        temporaries = checker.stored - before
        inputs = sorted((checker.loaded & set(locals_)) - temporaries)
        outputs = [] if returns else sorted(checker.stored & after & set(locals_))
        out = self.current.output.abstract
        if returns and not (self._value_ok([out], True) or _leaves(out, "x", [])):
            return "the function's result is not a Python scalar"
        if not outputs and not returns:
            return "the loop computes nothing read after it"
        missing = [n for n in inputs + outputs if n not in before]
        if missing:
            return f"{missing[0]} is not defined before the loop"
        for name in set(inputs) | set(outputs):
            if not self._value_ok(locals_[name], name in outputs):
                return f"{name} is not a Python scalar or a typed stack"
        self.math |= checker.math
        kname = f"_native_loop_{len(self.kernels)}"
        ins, outs = ", ".join(inputs), ", ".join(outputs) + ","
        kbody = "\n".join("    " + line for line in ast.unparse(tree).splitlines())
        tail = "" if returns else f"    return ({outs})\n"
        self.kernels.append(f"@{_JIT}\ndef {kname}({ins}):\n{kbody}\n{tail}")
        self.kernel_names.append(kname)
        flag = self.names.fresh("_native")
        head_node = self.line_nodes.get(start + 1)
        nodes = {i: self.line_nodes.get(i + 1) for i in range(start, len(self.lines))}
        result = self.names.fresh("result") if returns else outs
        new: list[tuple[str, Node | None]] = [
            (f"{pad}try:", head_node),
            (f"{pad}    {result} = {kname}({ins})", head_node),
            (f"{pad}    {flag} = True", head_node),
            (f"{pad}except Exception:", head_node),
            (f"{pad}    {flag} = False", head_node),
        ]
        if returns:
            new.append((f"{pad}if {flag}:", head_node))
            new.append((f"{pad}    return {result}", head_node))
            new += [(self.lines[i], nodes[i]) for i in range(start, end)]
        else:
            new.append((f"{pad}if not {flag}:", head_node))
            new += [("    " + self.lines[i], nodes[i]) for i in range(start, end)]
        new += [(self.lines[i], nodes[i]) for i in range(end, len(self.lines))]
        del self.lines[start:]
        for i in list(self.line_nodes):
            if i > start:
                del self.line_nodes[i]
        for text, node in new:
            self.lines.append(text)
            if node is not None:
                self.line_nodes[len(self.lines)] = node
        return None

    def native_source(self) -> str:
        """The source of the module of machine code: helpers, checked math, the loops."""
        parts = [f"# {_FORMAT}\nimport math\n\nimport numpy as np\nfrom numba import njit\n"]
        parts += [
            f"@{_INLINE}\n" + h.replace("\n\ndef ", f"\n\n@{_INLINE}\ndef ")
            for h in self.helper_source
        ]
        parts += [_math_helper(n, a) for n, a in sorted(self.math)]
        if self.int_helpers:
            parts.append(_INT_NATIVE.format(jit=_INLINE))
        parts += self.kernels
        return "\n\n".join(parts)


def whole_generator(graph: Graph) -> tuple[NativeGenerator, str]:
    """The generator of `graph` written without outlining, and its entry's name.

    Raises `NotWhole` where its function values cannot be machine code.
    """
    gen = NativeGenerator(graph, outline=False)
    entry = gen.generate().entry
    assert gen.closures is not None and gen.envs is not None and gen.records is not None
    gen.lines += gen.closures.dispatcher_lines() + gen.envs.lines
    convert = gen.records.converter([p.abstract for p in graph.parameters])
    if gen.records.layouts:
        gen.convert = convert
    return gen, entry

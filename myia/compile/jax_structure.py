"""The JAX backend's rewriting of generated code: Python control flow as JAX's.

`Structure` rewrites the module `myia.compile.jax_codegen.JaxGenerator` generates, as a
Python syntax tree, so that the code ``jax.jit`` traces has no Python control flow on values
(see `myia.compile.jax_codegen` for the forms it writes): loops as ``jax_while`` (one
``lax.while_loop``), state machines as one ``lax.while_loop`` over a ``lax.switch``, ``if`` as
``jax_cond``; `Expressions` rewrites conditional expressions and ``not``.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from .. import pyast
from ..abstract.data import AbstractScalar
from .jax_ast import (
    _assigned,
    _call,
    _def,
    _forward_order,
    _free_reads,
    _jumps,
    _listed,
    _loads,
    _name,
    _recursive,
    _stores,
    _terminates,
    _trivial,
    _tuple,
    _unreachable,
    _walk,
)

_BOOL = AbstractScalar("bool")
_INT = AbstractScalar("int64")


class Unsupported(Exception):
    """The generated code has a form the rewriting into JAX's control flow does not know."""


def _thunks(exits: list[ast.expr]) -> ast.List:
    """``[lambda: e0, lambda: e1, ...]``: the values of a loop's exits.

    Each is computed in the branch of its exit (`jax_control.jax_select`), where what
    another exit's path assigns is unset.
    """
    noargs = ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None
    )
    noargs.defaults = []
    return ast.List([ast.Lambda(noargs, e) for e in exits], ast.Load())


# Analyses of the generated code ---------------------------------------------------------------


class Expressions(ast.NodeTransformer):
    """``a if c else b`` as ``lax.cond``, ``not x`` of a traced value as ``logical_not``."""

    def visit_Call(self, node: ast.Call) -> Any:
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and f.func.id == "jax_cond":
            # (then if c else other)(args...): the call in each branch.
            test, then, other = f.args
            args = node.args
            return _call(
                "jax_cond",
                test,
                ast.Lambda(_no_args(), ast.Call(then.body, args, [])),  # type: ignore[attr-defined]
                ast.Lambda(_no_args(), ast.Call(other.body, args, [])),  # type: ignore[attr-defined]
            )
        return node

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        self.generic_visit(node)
        return _call(
            "jax_cond",
            node.test,
            ast.Lambda(_no_args(), node.body),
            ast.Lambda(_no_args(), node.orelse),
        )

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _call("jax_not", node.operand)
        return node


def _no_args() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])


class _Jumps(ast.NodeTransformer):
    """A state's jumps as returns of ``(_state, *live)`` (`_Structure.sequence`)."""

    def __init__(self, live: list[str], first: int, exits: list[ast.expr]):
        self.live, self.first, self.exits = live, first, exits

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        return node

    def visit_Continue(self, node: ast.Continue) -> Any:
        return ast.Return(_tuple(self.live))

    def visit_Return(self, node: ast.Return) -> Any:
        number = ast.Constant(self.first + len(self.exits))
        self.exits.append(node.value)  # type: ignore[arg-type]
        return [ast.Assign([_name("_state", True)], number), ast.Return(_tuple(self.live))]


class Structure:
    """Rewrites generated code so that its control flow is JAX's (see the module's doc)."""

    def __init__(self, types: dict[str, Any], names: Any, globals_: dict[str, Any]):
        self.types = types
        self.names = names
        self.globals = globals_

    def fresh(self, base: str) -> str:
        return self.names.fresh(base)

    def type_of(self, name: str) -> Any:
        if name == "_state":
            return _INT
        t = self.types.get(name)
        if t is None:
            raise Unsupported(f"the type of {name} is not known")
        return t

    def sequence(
        self, states: list[list[ast.stmt]], order: list[int], bound: set[str]
    ) -> list[ast.stmt]:
        """States that never jump back (join points) as ``lax.cond``s in order, not a loop.

            while True:                      _state, a, b = jax_cond(_state == 0, s0, skip)
                if _state == 0: s0     =>    _state, b = jax_cond(_state == 1, s1, skip)
                elif _state == 1: s1         return b
                ...

        Each state's ``lax.cond`` gives ``_state`` and the variables that the states after it
        (or the exits) read: a ``continue`` returns them, a ``return`` the number of states
        plus the number of its exit, whose expression is computed after the last state.
        Each variable crosses only the ``lax.cond``s between where it is assigned and where
        it is read; a loop's state would hold all of them in every iteration.
        """
        ends: set[str] = set()
        for st in states:
            for n in _walk(st):
                if isinstance(n, ast.Return) and n.value is not None:
                    ends |= _loads(n.value)
        assigned = set().union(*map(_stores, states)) | {"_state"}
        reads = [_free_reads(st, set()) for st in states]
        unset = (set().union(*reads) | ends) - bound - self.toplevel - set(self.globals)
        out = self.inits(sorted(unset & set(self.types)), bound)
        before = set(bound) | (unset & set(self.types))
        # What the states after each one (and the exits) read.
        later = [ends]
        for k in reversed(order[1:]):
            later.append(later[-1] | reads[k])
        exits: list[ast.expr] = []  # numbered as the jumps are written
        for i, k in enumerate(order):
            live = ["_state", *sorted(assigned & later[len(order) - 1 - i] - {"_state"})]
            jumps = _Jumps(live, len(states), exits)
            body = [y for x in states[k] for y in _listed(jumps.visit(x))]
            name, skip = self.fresh(f"state{k}"), self.fresh("skip")
            defaults = sorted(_stores(body) & before)
            test = ast.Compare(_name("_state"), [ast.Eq()], [ast.Constant(k)])
            value = _call("jax_cond", test, _name(name), _name(skip))
            out += [
                _def(name, [], self.stmts(body, before), defaults),
                _def(skip, [], [ast.Return(_tuple(live))]),
                ast.Assign([_tuple(live, True)], value),
            ]
            before = before | set(live)
        if len(exits) == 1:
            out.append(ast.Return(exits[0]))
        elif exits:
            index = ast.BinOp(_name("_state"), ast.Sub(), ast.Constant(len(states)))
            out.append(ast.Return(_call("jax_select", index, _thunks(exits))))
        return out

    def types_global(self, names: list[str], head: list[Any]) -> str:
        value = tuple(head) + tuple(self.type_of(n) for n in names)
        g = self.fresh("T_state")
        self.globals[g] = value
        return g

    def module(self, source: str) -> str:
        tree = pyast.parse(source)
        if _recursive(tree):
            raise Unsupported("it recurses (recursion stays on the host)")
        tree = Expressions().visit(tree)
        self.toplevel = {s.name for s in tree.body if isinstance(s, ast.FunctionDef)}
        tree.body = [self.function(s) if isinstance(s, ast.FunctionDef) else s for s in tree.body]
        ast.fix_missing_locations(tree)
        return ast.unparse(tree) + "\n"

    def function(self, fn: ast.FunctionDef, outer: set[str] | None = None) -> ast.FunctionDef:
        """`fn` with its control flow rewritten; `outer`: the names bound where it is defined.

        A closure reads the names of its enclosing function that it does not assign: they
        are defined, and must not start as placeholders (which would make them local).
        """
        params = {a.arg for a in fn.args.args}
        free = (outer or set()) - _stores(fn.body) - params
        fn.body = self.stmts(fn.body, params | free)
        return fn

    # Statements -----------------------------------------------------------------------------

    def stmts(self, stmts: list[ast.stmt], bound: set[str]) -> list[ast.stmt]:
        """`stmts` with their control flow rewritten; `bound`: the names defined before."""
        out: list[ast.stmt] = []
        bound = set(bound)
        for k, s in enumerate(stmts):
            rest = stmts[k + 1 :]
            if isinstance(s, ast.If):
                return out + self.branch(s, rest, bound)
            if isinstance(s, ast.While):
                if isinstance(s.test, ast.Constant) and s.test.value is True:
                    return out + self.machine(s, bound)
                out += self.loop(s, rest, bound)
                bound |= _stores(s.body)
                continue
            if isinstance(s, ast.FunctionDef):
                s = self.function(s, bound)
            out.append(s)
            bound |= _stores([s])
        return out

    def branch(self, s: ast.If, rest: list[ast.stmt], bound: set[str]) -> list[ast.stmt]:
        """``if``/``else`` as ``return jax_cond(c, then_, else_)``, or as a join (`join`)."""
        falls = [not _terminates(arm) for arm in (s.body, s.orelse)]
        if all(falls) and not _trivial(rest) and not _jumps(s.body + s.orelse):
            return self.join(s, rest, bound)
        arms = []
        for arm, fall in zip((s.body, s.orelse), falls):
            # The rewriting changes the statements in place: a second arm gets a copy.
            arms.append(arm + (copy.deepcopy(rest) if all(falls) else rest) if fall else arm)
        then, other = arms
        if _unreachable(then):
            return self.stmts(other, bound)
        if _unreachable(other):
            return self.stmts(then, bound)
        if not all(isinstance(a[-1], ast.Return) or _terminates(a) for a in arms):
            raise Unsupported("a branch that does not return")
        names = [self.fresh("then"), self.fresh("other")]
        out: list[ast.stmt] = []
        for name, arm in zip(names, arms):
            defaults = sorted(_stores(arm) & bound)
            body = self.stmts(arm, bound)
            out.append(_def(name, [], body, defaults))
        out.append(ast.Return(_call("jax_cond", s.test, _name(names[0]), _name(names[1]))))
        return out

    def join(self, s: ast.If, rest: list[ast.stmt], bound: set[str]) -> list[ast.stmt]:
        """An ``if`` both of whose arms fall through, as ``names = jax_cond(...)``, then the rest.

            if c:                        def then_():  a; return (x, y)
                a                        def other_(): b; return (x, y)
            else:                 =>     x, y = jax_cond(c, then_, other_)
                b                        rest
            rest

        Neither arm returns or jumps: both fall through on every path. ``x, y``: what the
        arms assign and the rest reads. The rest is written once: copied into both arms, the
        statements after ``if``s in sequence (the blocks before a loop of join points) would
        be written, and traced, once per path through them. A name that an arm may leave
        unassigned, and nothing assigned before, starts as a placeholder.
        """
        names = sorted((_stores(s.body) | _stores(s.orelse)) & _free_reads(rest, set()))
        unset = sorted(set(names) - bound - (_assigned(s.body) & _assigned(s.orelse)))
        out = self.inits(unset, bound)
        before = set(bound) | set(unset)
        fns = [self.fresh("then"), self.fresh("other")]
        for name, arm in zip(fns, (s.body, s.orelse)):
            body = self.stmts([*arm, ast.Return(_tuple(names))], before)
            out.append(_def(name, [], body, sorted(_stores(arm) & before)))
        value = _call("jax_cond", s.test, _name(fns[0]), _name(fns[1]))
        out.append(ast.Assign([_tuple(names, True)], value))
        return out + self.stmts(rest, before | set(names))

    def loop(self, s: ast.While, rest: list[ast.stmt], bound: set[str]) -> list[ast.stmt]:
        """``while cond: body`` as one ``lax.while_loop`` (`jax_while`)."""
        if any(isinstance(n, (ast.Return, ast.Continue, ast.Break)) for n in ast.walk(s)):
            raise Unsupported("a loop that tests first and returns from its body")
        assigned = _stores(s.body)
        later = _loads(s.test) | _free_reads(s.body, set()) | _free_reads(rest, set())
        carry = sorted(assigned & later)
        if not carry:
            raise Unsupported("a loop that changes nothing")
        inits = self.inits(carry, bound)
        cond, body, st = self.fresh("loop_cond"), self.fresh("loop_body"), self.fresh("carry")
        unpack = ast.Assign([_tuple(carry, True)], _name(st))
        types = self.types_global(carry, [])
        inner = set(bound) | set(carry)
        return [
            _def(cond, [st], [unpack, ast.Return(s.test)]),
            _def(body, [st], self.stmts([unpack, *s.body, ast.Return(_tuple(carry))], inner)),
            *inits,
            ast.Assign(
                [_tuple(carry, True)],
                _call("jax_while", _name(cond), _name(body), _tuple(carry), _name(types)),
            ),
        ]

    def inits(self, carry: list[str], bound: set[str]) -> list[ast.stmt]:
        """Values for the loop variables not defined before the loop: placeholders."""
        out: list[ast.stmt] = []
        for n in carry:
            if n not in bound:
                t = self.fresh("T_var")
                self.globals[t] = self.type_of(n)
                out.append(ast.Assign([_name(n, True)], _call("placeholder", _name(t))))
        return out

    def machine(self, s: ast.While, bound: set[str]) -> list[ast.stmt]:
        """``while True:`` over one or several states as a ``lax.while_loop`` of a switch.

        The loop's state is ``(go, exit, variables...)``: ``go`` is false once a ``return``
        was reached, ``exit`` says which; the variables are those assigned in the loop and
        read in a later iteration or by an exit. The exits' expressions are computed after
        the loop (one ``lax.switch`` if there are several).
        """
        body = s.body
        states: list[list[ast.stmt]]
        if (
            len(body) == 1
            and isinstance(body[0], ast.If)
            and isinstance(body[0].test, ast.Compare)
            and isinstance(body[0].test.left, ast.Name)
            and body[0].test.left.id == "_state"
        ):
            states = []
            node: Any = body[0]
            while isinstance(node, ast.If):
                states.append(node.body)
                node = node.orelse[0] if len(node.orelse) == 1 else None
                if node is not None and not isinstance(node, ast.If):
                    break
        else:
            states = [body]
        order = _forward_order(states)
        if order is not None:
            return self.sequence(states, order, bound)
        exits: list[ast.expr] = []
        for st in states:
            for n in ast.walk(ast.Module(st, [])):
                if isinstance(n, ast.Return):
                    exits.append(n.value)  # type: ignore[arg-type]
                if isinstance(n, (ast.While, ast.Break)):
                    raise Unsupported("a loop inside a state machine")
        numbered: list[ast.expr] = []  # the exits in the order `Jumps` numbers them
        assigned = _stores(body)
        later = set().union(*(_free_reads(st, set()) for st in states))
        for e in exits:
            later |= _loads(e)
        if len(states) > 1:
            later.add("_state")
        carry = sorted(assigned & later)
        # A state that this path never enters may read variables it does not define
        # (`lax.switch` traces every state): placeholders.
        unset = (later - assigned - bound - self.toplevel - set(self.globals) - {"_state"}) & set(
            self.types
        )
        go, ex = self.fresh("go"), self.fresh("exit")
        full = [go, ex, *carry]
        types = self.types_global(carry, [_BOOL, _INT])
        st_name = self.fresh("carry")
        unpack = ast.Assign([_tuple(full, True)], _name(st_name))
        counter = iter(range(len(exits)))

        class Jumps(ast.NodeTransformer):
            def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
                return node

            def visit_Continue(self, node: ast.Continue) -> Any:
                return ast.Return(
                    ast.Tuple(
                        [ast.Constant(True), ast.Constant(0), *_tuple(carry).elts], ast.Load()
                    )
                )

            def visit_Return(self, node: ast.Return) -> Any:
                k = next(counter)
                numbered.append(node.value)  # type: ignore[arg-type]
                return ast.Return(
                    ast.Tuple(
                        [ast.Constant(False), ast.Constant(k), *_tuple(carry).elts], ast.Load()
                    )
                )

        jumps = Jumps()
        states = [[jumps.visit(x) for x in st] for st in states]
        exits = numbered
        inner = set(bound) | set(full)
        if len(states) == 1:
            loop_body = self.stmts([unpack, *states[0]], inner)
        else:
            names = [self.fresh(f"state{k}") for k in range(len(states))]
            loop_body = [unpack]
            for name, st in zip(names, states):
                loop_body.append(
                    _def(name, [], self.stmts(st, inner), sorted(_stores(st) & inner))
                )
            loop_body.append(
                ast.Return(
                    _call(
                        "jax_switch",
                        _name("_state"),
                        ast.List([_name(n) for n in names], ast.Load()),
                    )
                )
            )
        body_name = self.fresh("loop_body")
        cond_name = self.fresh("loop_cond")
        out: list[ast.stmt] = [
            _def(
                cond_name,
                [st_name],
                [ast.Return(ast.Subscript(_name(st_name), ast.Constant(0), ast.Load()))],
            ),
            _def(body_name, [st_name], loop_body),
            ast.Assign([_name(go, True)], ast.Constant(True)),
            ast.Assign([_name(ex, True)], ast.Constant(0)),
            *self.inits(carry + sorted(unset), bound),
            ast.Assign(
                [_tuple(full, True)],
                _call("jax_while", _name(cond_name), _name(body_name), _tuple(full), _name(types)),
            ),
        ]
        if len(exits) == 1:
            out.append(ast.Return(exits[0]))
        elif exits:
            out.append(ast.Return(_call("jax_select", _name(ex), _thunks(exits))))
        return out

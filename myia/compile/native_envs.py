"""Environments in the machine code of a whole program: tuples of slots, one per key and type.

The backward pass of a loop whose members' parameters differ in type (nested loops, a loop
whose counter is a parameter) returns the sensitivities of the loop's arguments in an
environment, under the key `myia.grad.loops.ARGS`: an environment erases the type of what
it holds. Numba takes no dictionary of values of several types; in the machine code of a
whole program (`myia.compile.native_whole`) an environment is a tuple with one slot
``(present, value)`` for each key and type that the program sets (``env_setitem``), so that
every environment of the program has one Numba type:

    env_new()                     => ((False, zero_0), ..., (False, zero_k))
    env_setitem(e, key, v)        => e with v present in the slot of (key, type of v), and
                                     the key's other slots absent
    env_getitem(e, key, default)  => the value of the slot of (key, type), else default
    env_sens(e, key, typ)         => the value of the slot of (key, typ), which is present
    env_add(a, b)                 => the slots of a and b, summed where both are present

A read of a key the program never sets reads nothing (its default); a read of a key under
another type than those set is not machine code; an ``env_sens`` of a slot that is absent
raises (the host code runs the program again). An
environment holding function values, environments or stacks, and the other environment
primitives, are not machine code (`NotWhole`).
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import ENV, AbstractRecord, AbstractScalar, AbstractTuple
from ..ir.node import Node
from ..primitives import P
from ..primitives.grad import EMPTY_ENV
from .native_closures import NotWhole

_ZEROS = {"float64": "0.0", "int64": "0", "bool": "False"}

#: The environment primitives written as tuples of slots.
ENV_OPS = frozenset(
    [P.env_new, P.env_setitem, P.env_getitem, P.env_sens, P.env_getsens, P.env_add, P.env_delitem]
)


def _zero(a: Any, add: bool = False) -> str | None:
    """A value of type `a` (None: not a type of a slot); with `add`, only types ``+`` sums."""
    if isinstance(a, AbstractScalar) and a.dtype in _ZEROS:
        return _ZEROS[a.dtype]
    if isinstance(a, AbstractTuple):
        es = [_zero(e, add) for e in a.elements]
        if None in es:
            return None
        return "(" + "".join(f"{e}, " for e in es) + ")"
    if isinstance(a, AbstractRecord) and not add:
        return "None"  # a constant record (`native_closures.opaque_constant`)
    return None


class Envs:
    """The slots of the environments of a program written by generator `gen`."""

    def __init__(self, gen: Any):
        self.gen = gen
        #: (key, type) -> index of its slot
        self.slots: dict[tuple[Any, Any], int] = {}
        self._zeros: list[str] = []
        #: The source lines of the helpers the program calls.
        self.lines: list[str] = []
        self._helpers: dict[Any, str] = {}
        #: The types of the helpers' parameters, by name.
        self.local_types: dict[str, list[Any]] = {"_e": [ENV], "_b": [ENV], "_s": [ENV]}
        for g in gen.graphs:
            for node in gen.scopes.toposort(g):
                if node.is_apply and node.inputs[0].is_constant:
                    if node.inputs[0].value is P.env_setitem:
                        self._slot(node.inputs[2], node.inputs[3].abstract)

    def _slot(self, key: Node, a: Any) -> None:
        if not key.is_constant:
            raise NotWhole("an environment's key is not a constant")
        k = (key.value, a)
        if k not in self.slots:
            zero = _zero(a)
            if zero is None:
                raise NotWhole(f"an environment holds a value of type {a}")
            self.slots[k] = len(self.slots)
            self._zeros.append(zero)

    def _of_key(self, key: Node) -> list[int]:
        return [i for (k, _), i in self.slots.items() if k == key.value]

    def empty(self) -> str:
        """The expression of the empty environment."""
        return "(" + "".join(f"(False, {z}), " for z in self._zeros) + ")"

    def constant(self, value: Any) -> str:
        """The expression of an environment that is a constant."""
        if value is not EMPTY_ENV and value.contents:
            raise NotWhole("an environment that is a constant holds values")
        return self.empty()

    def call(self, node: Node, args: list[str]) -> str:
        """The expression of `node`, a call of an environment primitive on `args`."""
        prim = node.inputs[0].value
        if prim is P.env_new:
            return self.empty()
        if prim is P.env_add:
            return f"{self._add()}({args[0]}, {args[1]})"
        key = node.inputs[2]
        if not key.is_constant:
            raise NotWhole("an environment's key is not a constant")
        if prim in (P.env_setitem, P.env_delitem):
            mine = -1
            if prim is P.env_setitem:
                mine = self.slots[(key.value, node.inputs[3].abstract)]
            return self._setter(mine, set(self._of_key(key)), args)
        if prim is P.env_sens:
            a = node.inputs[3].value
        else:
            a = node.abstract
        i = self.slots.get((key.value, a))
        if prim is P.env_sens:
            if i is None:
                raise NotWhole("the program reads from an environment what it never set")
            return f"{self._sens()}({args[0]}[{i}])"
        default = args[2] if prim is P.env_getitem else _zero(a, add=True)
        if default is None:
            raise NotWhole(f"a zero of type {a} in an environment")
        if i is None:
            if self._of_key(key):
                raise NotWhole("an environment's value is read as another type than set")
            return default
        return f"({args[0]}[{i}][1] if {args[0]}[{i}][0] else {default})"

    def _helper(self, key: Any, base: str, params: str, body: list[str]) -> str:
        name = self._helpers.get(key)
        if name is None:
            name = self._helpers[key] = self.gen.names.fresh(base)
            self.lines += [f"def {name}({params}):", *(f"    {b}" for b in body), ""]
        return name

    def _setter(self, mine: int, others: set[int], args: list[str]) -> str:
        """``env_setitem`` (`mine` the slot set) or ``env_delitem``: `others` made absent."""
        items = []
        for i, z in enumerate(self._zeros):
            if i == mine:
                items.append("(True, _v)")
            elif i in others:
                items.append(f"(False, {z})")
            else:
                items.append(f"_e[{i}]")
        body = [f"return ({''.join(t + ', ' for t in items)})"]
        if mine >= 0:
            a = next(t for (_, t), i in self.slots.items() if i == mine)
            self.local_types.setdefault("_v", []).append(a)
            name = self._helper(("set", mine), "_env_set", "_e, _v", body)
            return f"{name}({args[0]}, {args[2]})"
        name = self._helper(("del", frozenset(others)), "_env_del", "_e", body)
        return f"{name}({args[0]})"

    def _sens(self) -> str:
        body = ["if not _s[0]:", "    raise AssertionError('an environment has no such key')"]
        return self._helper("sens", "_env_sens", "_s", [*body, "return _s[1]"])

    def _add(self) -> str:
        items = []
        for (_, a), i in self.slots.items():
            if _zero(a, add=True) is None:
                raise NotWhole(f"a sum of values of type {a} in an environment")
            both = _sum(f"_e[{i}][1]", f"_b[{i}][1]", a)
            items.append(
                f"(_e[{i}][0] or _b[{i}][0], ({both}) if _e[{i}][0] and _b[{i}][0] else "
                f"(_e[{i}][1] if _e[{i}][0] else _b[{i}][1]))"
            )
        body = [f"return ({''.join(t + ', ' for t in items)})"]
        return self._helper("add", "_env_add", "_e, _b", body)


def _sum(a: str, b: str, t: Any) -> str:
    """The expression of the sum of `a` and `b`, of type `t`."""
    if isinstance(t, AbstractTuple):
        es = [_sum(f"{a}[{i}]", f"{b}[{i}]", e) for i, e in enumerate(t.elements)]
        return "(" + "".join(f"{e}, " for e in es) + ")"
    return f"{a} + {b}"

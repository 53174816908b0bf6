"""Named rewrites and the matcher that applies them, indexed by the head of a node.

A rewrite is a function ``rule(node, opt) -> Node | None`` decorated with `rewrite`, whose
docstring says what it does, then gives its ``lhs => rhs`` form::

    @rewrite(P.tuple_getitem)
    def getitem_make_tuple(node, opt):
        \"\"\"Take an element of a tuple built in place.

        tuple_getitem(make_tuple(x0, ..., xn), i) => xi
        \"\"\"
        ...

The rule receives an `Apply` whose inputs are already in normal form, and `opt`, the sweep
that runs it (`myia.opt.sweep.Sweep`: node construction and program information). It returns
the node that replaces `node` (which must compute the same value, with a compatible type, and
be visible wherever `node` is), or None when it does not apply.

The `Matcher` indexes rules by the *head* of the nodes they rewrite (as tinygrad's
`PatternMatcher` indexes its patterns by op), so a node is only shown the rules that can
match it. The head of ``prim(args)`` is the primitive; of a call to a graph constant it is
`GRAPH_CALL`; of a call whose function is computed by ``prim(...)`` (``switch(c, f, g)(x)``,
``partial(f, a)(b)``) it is ``Called(prim)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..ir.node import Apply, Graph, Node
from ..primitives import Primitive


class _GraphCall:
    """The head of a call to a graph constant: ``@g(args)``."""

    def __repr__(self) -> str:
        return "GRAPH_CALL"


GRAPH_CALL: Any = _GraphCall()


@dataclass(frozen=True)
class Called:
    """The head of a call whose function is the result of primitive `prim`."""

    prim: Primitive

    def __repr__(self) -> str:
        return f"Called({self.prim.name})"


RuleFn = Callable[[Apply, Any], "Node | None"]


@dataclass(frozen=True, eq=False)
class Rewrite:
    """A named rewrite: `fn` rewrites the nodes whose head is one of `heads`."""

    name: str
    heads: tuple[Any, ...]
    fn: RuleFn
    doc: str

    def __call__(self, node: Apply, opt: Any) -> Node | None:
        return self.fn(node, opt)

    @property
    def lhs_rhs(self) -> str:
        """The rewrite's ``lhs => rhs`` form: the first line of its docstring with ``=>``."""
        for line in self.doc.splitlines():
            if "=>" in line:
                return line.strip()
        return ""

    def __repr__(self) -> str:
        return f"<rewrite {self.name}: {self.lhs_rhs}>"


def rewrite(*heads: Any) -> Callable[[RuleFn], Rewrite]:
    """Declare the decorated function as a rewrite of the nodes with one of `heads`."""

    def deco(fn: RuleFn) -> Rewrite:
        doc = fn.__doc__ or ""
        if "=>" not in doc:
            raise ValueError(f"rewrite {fn.__name__} needs an 'lhs => rhs' line in its docstring")
        return Rewrite(fn.__name__, tuple(heads), fn, doc)

    return deco


def head_of(node: Node) -> Any:
    """Return the key under which the rules for `node` are indexed (None: no rules)."""
    fn = node.inputs[0]
    if fn.is_constant:
        v = fn.value  # type: ignore[attr-defined]
        if type(v) is Primitive:
            return v
        if type(v) is Graph:
            return GRAPH_CALL
        return None
    if fn.is_apply:
        f = fn.inputs[0]
        if f.is_constant and type(f.value) is Primitive:  # type: ignore[attr-defined]
            return Called(f.value)  # type: ignore[attr-defined]
    return None


class Matcher:
    """Applies a set of rewrites, indexed by head (rules of one head in the order given).

    A rule whose head is the class `Primitive` itself applies to calls of every primitive,
    after the rules of the primitive's own head.
    """

    def __init__(self, rules: Iterable[Rewrite]):
        self.rules = list(rules)
        self._specific: dict[Any, list[Rewrite]] = {}
        self._generic: list[Rewrite] = []
        for r in self.rules:
            for h in r.heads:
                if h is Primitive:
                    self._generic.append(r)
                else:
                    self._specific.setdefault(h, []).append(r)
        self._index: dict[Any, list[Rewrite]] = {}

    def rules_for(self, head: Any) -> list[Rewrite]:
        """Return the rules to try on a node of head `head`, in order."""
        rules = self._index.get(head)
        if rules is None:
            rules = list(self._specific.get(head, ()))
            if type(head) is Primitive:
                rules += self._generic
            self._index[head] = rules
        return rules

    def match(self, node: Apply, opt: Any) -> tuple[Rewrite, Node] | None:
        """Return the first rule that rewrites `node` and the replacement, or None."""
        rules = self.rules_for(head_of(node))
        if not rules:
            return None
        for rule in rules:
            new = rule.fn(node, opt)
            if new is not None and new is not node:
                return rule, new
        return None

    def __contains__(self, name: str) -> bool:
        return any(r.name == name for r in self.rules)


# Pattern helpers (used by the rules) ------------------------------------------------------------


def args_of(node: Node, prim: Primitive) -> list[Node] | None:
    """Return the arguments of `node` if it is a call ``prim(args...)``, else None."""
    if node.is_apply:
        fn = node.inputs[0]
        if fn.is_constant and fn.value is prim:  # type: ignore[attr-defined]
            return node.inputs[1:]
    return None


def prim_of(node: Node) -> Primitive | None:
    """Return the primitive `node` calls, or None."""
    if node.is_apply:
        fn = node.inputs[0]
        if fn.is_constant and type(fn.value) is Primitive:  # type: ignore[attr-defined]
            return fn.value  # type: ignore[attr-defined]
    return None


class _NoValue:
    def __repr__(self) -> str:
        return "NO_VALUE"


NO_VALUE: Any = _NoValue()


def value_of(node: Node) -> Any:
    """Return the value of `node` if it is a constant, else `NO_VALUE`."""
    return node.value if node.is_constant else NO_VALUE  # type: ignore[attr-defined]

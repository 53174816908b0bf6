"""Constant parameters: a parameter that always receives the same constant becomes it.

A loop is a group of graphs calling one another (`myia.opt.callsites`); a value the loop
does not change is passed from iteration to iteration, so inside the loop it is a parameter
even when the loop is entered with a constant. Most usefully, a function defined before the
loop and called in it is a closure constant passed along: once it is known in the loop, its
calls are calls of a known graph, which the simplifier inlines (closure elimination where the
callee is known). A position ``k`` of a group qualifies when every call passes at position
``k`` either one same constant or a parameter that itself always gets it (the loop passing it
on, maybe through another of its graphs). The parameter's uses take the constant, and
dead-code elimination then removes it.

A closure constant brings its free variables: the loop's graphs then use them, so they become
closures of the function the closure was made in, which is where the loop is entered from
(the call passing the closure sees its free variables) and where the loop's graphs call
themselves from.
"""

from __future__ import annotations

from ..ir.analysis import Scopes
from ..ir.node import Constant, Graph, Node
from .callsites import CallSites, Group
from .cse import const_key


def _same(a: Constant, b: Constant) -> bool:
    if a is b:
        return True
    va, vb = a.value, b.value
    if isinstance(va, Graph) or isinstance(vb, Graph):
        return va is vb
    ka, kb = const_key(va), const_key(vb)
    return ka is not None and ka == kb and ka[0] != "id" and a.abstract == b.abstract


class _Varying:
    def __repr__(self) -> str:
        return "VARYING"


VARYING = _Varying()


def constant_positions(sites: CallSites) -> dict[tuple[Group, int], Constant]:
    """Return the parameter positions that always receive one constant, with it.

    A position gets the constants passed there directly, and what the positions whose
    parameters are passed there get (a loop passing a value on from one of its graphs to
    another): the value is propagated until stable (each position changes at most twice).
    """
    position: dict[Node, tuple[Group, int]] = {}
    for group in sites.groups:
        for m in group.members:
            for k, p in enumerate(m.parameters):
                position[p] = (group, k)
    value: dict[tuple[Group, int], object] = {}
    succs: dict[tuple[Group, int], list[tuple[Group, int]]] = {}

    def meet(pos: tuple[Group, int], v: object) -> bool:
        old = value.get(pos)
        if old is VARYING or old is v:
            return False
        if old is None:
            new = v
        elif v is VARYING or not _same(old, v):  # type: ignore[arg-type]
            new = VARYING
        else:
            return False
        value[pos] = new
        return True

    for group in sites.groups:
        if not group.calls or not group.editable:
            for k in range(group.nparams):
                value[(group, k)] = VARYING
            continue
        for call in group.calls:
            for k, a in enumerate(call.inputs[1:]):
                src = position.get(a) if a.is_parameter else None
                if src is not None:
                    succs.setdefault(src, []).append((group, k))
                else:
                    meet((group, k), a if a.is_constant else VARYING)
    work = list(value)
    while work:
        src = work.pop()
        for dst in succs.get(src, ()):
            if meet(dst, value[src]):
                work.append(dst)
    return {pos: v for pos, v in value.items() if isinstance(v, Constant)}  # type: ignore[misc]


def _visible(c: Constant, group: Group, scopes: Scopes) -> bool:
    """Whether constant `c` can be used in the members of `group`.

    A closure made in one of them cannot: each iteration makes its own.
    """
    if not isinstance(c.value, Graph):
        return True
    members = set(group.members)
    return not any(a in members for a in scopes.ancestors(c.value))


def propagate_constants(graph: Graph, stats: dict[str, int] | None = None) -> Graph:
    """Replace the parameters of `graph`'s program that always get one constant by it.

    `stats`, if given, counts the parameters replaced under ``"constants"``.
    """
    replaced = 0
    sites = CallSites(graph)
    scopes = sites.scopes
    found = constant_positions(sites)
    for group in sites.groups:
        consts = {
            k: c
            for k in range(group.nparams)
            if (c := found.get((group, k))) is not None and _visible(c, group, scopes)
        }
        if not consts:
            continue
        for m in group.members:
            subst: dict[Node, Node] = {}
            for k, c in consts.items():
                p = m.parameters[k]
                new = Constant(c.value, p.debug.derive())
                new.abstract = p.abstract  # the type the loop's nodes were given
                subst[p] = new
            sites.substitute(m, subst)
            replaced += len(subst)
    if stats is not None:
        stats["constants"] = replaced
    return graph

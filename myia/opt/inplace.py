"""In-place accumulation: sensitivities of arrays read element by element, updated in place.

The backward loop of a loop reading ``a[i]`` carries the sensitivity of ``a`` and updates it
with ``array_index_add`` at each iteration, which copies it: O(n) per element read. Where
nothing else can see the array updated, the update may write it instead
(`myia.primitives.inplace`):

    array_index_add(a, i, v) => array_index_add_inplace(a, i, v)   (a owned, read here alone)
    window_add(a, i, v, axis) => window_add_inplace(a, i, v, axis)  (``x[i:i + k]``'s)

A value is *owned* when no other reference to it exists: the result of ``array_index_add``
(a copy), of ``zeros`` or ``gzeros`` (a new array), of ``array_index_add_inplace`` on an
owned value, and the parameter of a loop (a position of a group of graphs whose calls are
all known, `myia.opt.callsites`) that every call passes an owned value read by that call
alone. A call that passes something else there
(the zero a backward loop starts from, shared by every call) passes ``owned_copy`` of it
instead: one copy per loop, not one per iteration. Positions are made owned only where that
pays: where a parameter is read once, by an update or by a call passing it on to such a
position, in its own graph (a closure may run many times: it never updates a value it
captures).

The sum of two arrays that an update alone reads is made a new array, which it writes:

    array_index_add(gadd(a, b), i, v) => array_index_add_inplace(gadd_owned(a, b), i, v)

The pass runs last, on the program compiled: the in-place primitives are never constant
folded, merged or differentiated.
"""

from __future__ import annotations

from ..abstract.data import AbstractArray
from ..ir.node import Apply, DebugInfo, Graph, Node
from ..primitives import P
from .callsites import CallSites, Group
from .matcher import prim_of
from .sweep import typed_constant

_UPDATES = (P.array_index_add, P.array_index_add_inplace, P.window_add, P.window_add_inplace)
#: Each update, and the one writing into its first argument.
_IN_PLACE = {
    P.array_index_add: P.array_index_add_inplace,
    P.window_add: P.window_add_inplace,
}
#: The primitives whose result is owned: a new array, or an owned array updated.
_FRESH = (*_UPDATES, P.owned_copy, P.zeros, P.gzeros, P.gadd_owned)


def _array_sum(n: Node) -> bool:
    """Whether `n` is ``gadd`` of two arrays of its own type (not 0-d)."""
    if prim_of(n) is not P.gadd:
        return False
    a = n.abstract
    return (
        isinstance(a, AbstractArray)
        and a.shape != ()
        and all(x.abstract == a for x in n.inputs[1:])  # type: ignore[union-attr]
    )


def accumulate_in_place(root: Graph) -> Graph:
    """Update owned sensitivities in place (see the module doc)."""
    sites = CallSites(root)
    graphs = sites.scopes.graphs
    users: dict[Node, list[tuple[Apply, int]]] = {}
    outputs: set[Node] = set()
    for g in graphs:
        for n in sites.scopes.nodes[g]:
            if n.is_apply:
                for k, i in enumerate(n.inputs):
                    users.setdefault(i, []).append((n, k))  # type: ignore[arg-type]
        if g.output is not None:
            outputs.add(g.output)

    def sole_use(n: Node) -> tuple[Apply, int] | None:
        """The one use of `n`, in its own graph, if it has exactly one."""
        us = users.get(n, ())
        if len(us) != 1 or n in outputs:
            return None
        user, k = us[0]
        return (user, k) if user.graph is n.graph else None

    # The positions that pay: a parameter read once, by an update or passed on to one.
    position: dict[Node, tuple[Group, int]] = {}
    for group in sites.groups:
        for m in group.members:
            for k, p in enumerate(m.parameters):
                position[p] = (group, k)

    def candidate(group: Group, k: int) -> bool:
        ps = [m.parameters[k] for m in group.members]
        a = ps[0].abstract
        if not (isinstance(a, AbstractArray) and a.shape != ()):
            return False
        return all(len(users.get(p, ())) <= 1 and p not in outputs for p in ps)

    owned: dict[tuple[Group, int], None] = {}  # in the order found (the copies made)
    changed = True
    while changed:
        changed = False
        for p, pos in position.items():
            if pos in owned or not candidate(*pos):
                continue
            use = sole_use(p)
            if use is None:
                continue
            user, k = use
            if prim_of(user) in _UPDATES and k == 1:
                owned[pos] = None
                changed = True
            elif k >= 1 and user.is_apply:
                callee = sites.called_group(user)
                if callee is not None and (callee, k - 1) in owned:
                    owned[pos] = None
                    changed = True

    def fresh(n: Node) -> bool:
        """Whether `n` is owned (no other reference to its value), if read once."""
        if n.is_apply:
            a = n.abstract
            return prim_of(n) in _FRESH and isinstance(a, AbstractArray) and a.shape != ()  # type: ignore[arg-type]
        return n.is_parameter and position.get(n) in owned

    # Calls into owned positions pass owned values.
    for group, k in owned:
        for call in group.calls:
            arg = call.inputs[k + 1]
            if fresh(arg) and sole_use(arg) == (call, k + 1):
                continue
            copy = Apply(
                [typed_constant(P.owned_copy), arg], call.graph, DebugInfo(origin=arg.debug)
            )
            copy.abstract = arg.abstract
            call.inputs = [*call.inputs[: k + 1], copy, *call.inputs[k + 2 :]]
            users.setdefault(copy, []).append((call, k + 1))
    # Updates of owned values read there alone write them.
    for g in graphs:
        for n in list(sites.scopes.nodes[g]):
            inplace = _IN_PLACE.get(prim_of(n))
            if inplace is None:
                continue
            a = n.inputs[1]
            if _array_sum(a) and sole_use(a) == (n, 1):
                a.inputs = [typed_constant(P.gadd_owned, debug=a.inputs[0].debug), *a.inputs[1:]]
            if fresh(a) and sole_use(a) == (n, 1):
                fn = typed_constant(inplace, debug=n.inputs[0].debug)
                n.inputs = [fn, *n.inputs[1:]]
    return root

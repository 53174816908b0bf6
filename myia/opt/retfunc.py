"""Results of loops: a loop returns the values its result is made of, not the result itself.

A loop is a *tail family*: graphs only ever called (`CallSites` groups) whose outputs are
tail calls to one another, except at its exits (the *leaves*). What a leaf returns, the calls
of the family from elsewhere (its *entries*) receive. The gradient of a loop returns two such
results that cost more than the numbers they carry:

- **A backpropagator.** The forward pass of a loop returns ``(y, G)``: a closure ``G`` over the
  values the backward pass needs (the loop's stack). When one leaf makes it and every entry
  only takes it out of the tuple and calls it, the loop returns the free values instead and
  the caller calls ``G`` lifted (its free variables its first parameters)::

      leaf:  make_tuple(y, G)            => make_tuple(y, make_tuple(fv1, ..., fvk))
      entry: tuple_getitem(f(xs), i)(a)  => G'(tuple_getitem(tuple_getitem(f(xs), i), 0), ..., a)

- **An environment.** The backward pass of a loop returns ``env_setitem(env, k, v)`` or the
  pair ``(env, v)``, where ``env`` is a parameter every iteration passes on unchanged: the
  loop returns ``v`` and each entry sets it in the environment it passed, or pairs it::

      leaf:  env_setitem(env, k, v)      => v
      entry: f(..., e, ...)              => env_setitem(e, k, f(..., e, ...))
      leaf:  make_tuple(env, v)          => v
      entry: f(..., e, ...)              => make_tuple(e, f(..., e, ...))

The environment's parameter is then dead (`myia.opt.dce`), the closure is inlined where it is
called and ``env_sens`` (or ``tuple_getitem``) reads ``v`` back: the gradient of a loop is
numbers and stacks only, which compiled code (the native backend) takes whole.
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import ENV, AbstractFunction, AbstractTuple, GraphFunction
from ..ir.node import Apply, Constant, Graph, Node, Parameter
from ..primitives import P
from .callsites import CallSites, Group
from .defunc import _uses as node_uses
from .matcher import prim_of
from .sweep import typed_apply, typed_constant


class _Family:
    """A tail family: its groups, members, leaves, tail calls and entries."""

    def __init__(self, groups: list[Group]):
        self.groups = groups
        self.members = [m for g in groups for m in g.members]
        tails = {m.output for m in self.members}
        #: The group each call of the family calls.
        self.callee = {c: g for g in groups for c in g.calls}
        #: The calls of a member that are a member's output.
        self.tails = [c for g in groups for c in g.calls if c in tails]
        #: The calls from elsewhere (or not in tail position).
        self.entries = [c for g in groups for c in g.calls if c not in tails]
        self.leaves = [m for m in self.members if m.output not in self.tails]


def _families(sites: CallSites) -> list[_Family]:
    parent: dict[int, int] = {id(g): id(g) for g in sites.groups}
    by_id = {id(g): g for g in sites.groups}

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for group in sites.groups:
        for m in group.members:
            out = m.output
            if out is None or not out.is_apply:
                continue
            callee = sites.called_group(out)  # type: ignore[arg-type]
            if callee is not None:
                parent[find(id(group))] = find(id(callee))
    classes: dict[int, list[Group]] = {}
    for i in parent:
        classes.setdefault(find(i), []).append(by_id[i])
    return [_Family(gs) for gs in classes.values()]


def _retype(fam: _Family, new: Any) -> None:
    """Give the members and tail calls of `fam` the type of its new result."""
    for call in fam.tails:
        call.abstract = new
    for m in fam.members:
        if getattr(m, "abstract", None) is not None:
            m.abstract = new  # type: ignore[attr-defined]


def _is_graph(node: Node) -> bool:
    return node.is_constant and type(node.value) is Graph  # type: ignore[attr-defined]


def _has_function(a: Any) -> bool:
    if isinstance(a, AbstractFunction):
        return True
    return isinstance(a, AbstractTuple) and any(map(_has_function, a.elements))


def _closure_leaf(fam: _Family, sites: CallSites, uses: dict) -> tuple[int, Graph] | None:
    """Position and graph of the closure the one leaf of `fam` returns in a tuple, if any."""
    if len(fam.leaves) != 1:
        return None
    leaf = fam.leaves[0]
    out = leaf.output
    if prim_of(out) is not P.make_tuple or sites.scopes.parents.get(leaf) is not None:
        return None
    if uses.get(out, []) != [(None, -1)]:
        return None  # the tuple is also used in the leaf
    fvs = sites.scopes.free_variables_total
    elements = out.inputs[1:]  # type: ignore[union-attr]
    found = [(i, c.value) for i, c in enumerate(elements) if _is_graph(c) and fvs.get(c.value)]  # type: ignore[attr-defined]
    if len(found) != 1:
        return None
    [(i, g)] = found
    if g.defaults or g.kwonly or g.flags.get("vararg") or len(uses.get(elements[i], [])) != 1:
        return None
    if sites.scopes.parents.get(g) is not leaf:
        return None
    if any(_has_function(f.abstract) for f in sites.scopes.free_variables_total[g]):
        return None  # G closes over functions (closures of the leaf)
    inner = set(sites.scope(g))
    for h in inner:
        for n in sites.scopes.nodes[h]:
            for c in n.inputs if n.is_apply else ():
                if _is_graph(c) and c.value not in inner and fvs.get(c.value):  # type: ignore[attr-defined]
                    return None  # G uses another closure of the leaf
    for call in fam.entries:
        for user, k in uses.get(call, ()):
            if user is None or prim_of(user) is not P.tuple_getitem or k != 1:
                return None
            j = user.inputs[2]
            if not j.is_constant or type(j.value) is not int:
                return None
            if j.value == i and not all(u is not None and q == 0 for u, q in uses.get(user, ())):
                return None  # the closure used as a value
    return i, g


def _return_free_values(fam: _Family, sites: CallSites, uses: dict) -> bool:
    found = _closure_leaf(fam, sites, uses)
    if found is None:
        return False
    i, g = found
    leaf = fam.leaves[0]
    out: Apply = leaf.output  # type: ignore[assignment]
    fvs = list(sites.scopes.free_variables_total[g])
    types = AbstractTuple(tuple(f.abstract for f in fvs))
    # Lift G: its free variables become its first parameters.
    params = [Parameter(g, debug=f.debug.derive()) for f in fvs]
    for p, f in zip(params, fvs):
        p.abstract = f.abstract
    g.parameters = [*params, *g.parameters]
    sites.substitute(g, dict(zip(fvs, params)))
    # The leaf returns the free values.
    elements = list(out.abstract.elements)  # type: ignore[attr-defined]
    elements[i] = types
    new = AbstractTuple(tuple(elements))
    inputs = list(out.inputs[1:])
    inputs[i] = typed_apply(leaf, types, P.make_tuple, *fvs)
    leaf.output = typed_apply(leaf, new, P.make_tuple, *inputs)
    _retype(fam, new)
    # Each entry calls the lifted G on them.
    fn = typed_constant(g, AbstractFunction(frozenset([GraphFunction(g)])))
    for call in fam.entries:
        call.abstract = new
        for user, _ in uses.get(call, ()):
            if user.inputs[2].value != i:
                continue
            user.abstract = types
            for site, _ in uses.get(user, ()):
                parts = [
                    typed_apply(site.graph, f.abstract, P.tuple_getitem, user, j)
                    for j, f in enumerate(fvs)
                ]
                site.inputs = [fn, *parts, *site.inputs[1:]]
    return True


#: The key standing for a pair ``(env, value)`` (what a loop's backward pass returns).
_PAIR = Constant(object())


def _env_leaf(fam: _Family) -> tuple[_Family, dict[Group, int], Any, Any] | None:
    """The part of `fam` that threads one environment to its leaves, and how, if any.

    That is the position of the environment among the parameters of each group, the key
    and the value's type. A member that starts the environment (``env_new()``) is left
    out: its tail call becomes an entry.
    """
    while True:
        group_of = {m: g for g in fam.groups for m in g.members}
        pos: dict[Group, int] = {}
        found = None
        for leaf in fam.leaves:
            out = leaf.output
            parts = out.inputs[1:]  # type: ignore[union-attr]
            if prim_of(out) is P.env_setitem:
                env, key, value = parts
            elif prim_of(out) is P.make_tuple and len(parts) == 2 and parts[0].abstract == ENV:
                (env, value), key = parts, _PAIR
            else:
                return None
            if not env.is_parameter or env.graph is not leaf or not key.is_constant:
                return None
            this = (key.value, value.abstract)  # type: ignore[attr-defined]
            j = leaf.parameters.index(env)  # type: ignore[arg-type]
            if (found is not None and this != found) or pos.setdefault(group_of[leaf], j) != j:
                return None
            found = this
        if found is None:
            return None
        starts: set[Group] = set()
        changed = True
        while changed:  # positions spread backward, from the leaves to the groups before
            changed = False
            for c in fam.tails:
                callee, caller = fam.callee[c], group_of[c.graph]  # type: ignore[index]
                if callee not in pos or caller in starts:
                    continue
                arg = c.inputs[1 + pos[callee]]
                if not arg.is_parameter or arg.graph is not c.graph:
                    starts.add(caller)  # the environment starts here
                    changed = True
                    continue
                j = c.graph.parameters.index(arg)  # type: ignore[union-attr, arg-type]
                if caller not in pos:
                    pos[caller] = j
                    changed = True
                elif pos[caller] != j:
                    return None
        keep = [g for g in fam.groups if g in pos and g not in starts]
        if len(keep) == len(fam.groups):
            return fam, pos, found[0], found[1]
        if not keep:
            return None
        fam = _Family(keep)


def _return_env_value(fam: _Family) -> bool:
    part = _env_leaf(fam)
    if part is None:
        return False
    fam, pos, key, new = part
    for leaf in fam.leaves:
        leaf.output = leaf.output.inputs[-1]  # type: ignore[union-attr]
    _retype(fam, new)
    for call in fam.entries:
        env_type = call.abstract
        wrapped = Apply(list(call.inputs), call.graph, call.debug.derive())
        wrapped.abstract = new
        # The entry node itself becomes the result: its users see the same type.
        env = call.inputs[1 + pos[fam.callee[call]]]
        if key is _PAIR.value:
            call.inputs = [typed_constant(P.make_tuple), env, wrapped]
        else:
            call.inputs = [typed_constant(P.env_setitem), env, typed_constant(key), wrapped]
        call.abstract = env_type
    return True


def return_values(root: Graph) -> Graph:
    """Make the loops of `root`'s program return values instead of closures and environments."""
    for rewrite in (_return_free_values, _return_env_value):
        sites = CallSites(root)
        uses = node_uses(sites)[0]
        for fam in _families(sites):
            if rewrite is _return_free_values:
                rewrite(fam, sites, uses)  # type: ignore[call-arg]
            else:
                rewrite(fam)  # type: ignore[call-arg]
    return root


def _drop_unread(fam: _Family, uses: dict) -> bool:
    """Return only the elements of `fam`'s tuple that its entries read.

    leaf: make_tuple(a, b, c) => make_tuple(b);  entry: tuple_getitem(f(xs), 1) => ...(f(xs), 0)
    """
    if not fam.leaves or not fam.entries:
        return False
    outs = [leaf.output for leaf in fam.leaves]
    if any(prim_of(o) is not P.make_tuple for o in outs):
        return False
    size = len(outs[0].inputs) - 1  # type: ignore[union-attr]
    if any(len(o.inputs) - 1 != size for o in outs):  # type: ignore[union-attr]
        return False
    old = fam.entries[0].abstract
    if not isinstance(old, AbstractTuple) or len(old.elements) != size:
        return False
    getters = []
    for call in fam.entries:
        for user, k in uses.get(call, ()):
            if user is None or prim_of(user) is not P.tuple_getitem or k != 1:
                return False
            j = user.inputs[2]
            if not j.is_constant or type(j.value) is not int or not 0 <= j.value < size:
                return False
            getters.append(user)
    keep = sorted({u.inputs[2].value for u in getters})
    if len(keep) == size:
        return False
    new = AbstractTuple(tuple(old.elements[j] for j in keep))
    for leaf in fam.leaves:
        inputs = leaf.output.inputs  # type: ignore[union-attr]
        leaf.output = typed_apply(leaf, new, P.make_tuple, *(inputs[1 + j] for j in keep))
    _retype(fam, new)
    for call in fam.entries:
        call.abstract = new
    for user in getters:
        user.inputs[2] = typed_constant(keep.index(user.inputs[2].value))
    return True


def drop_unread_results(root: Graph) -> Graph:
    """Make the loops of `root`'s program return only the elements of tuples that are read."""
    sites = CallSites(root)
    uses = node_uses(sites)[0]
    for fam in _families(sites):
        _drop_unread(fam, uses)
    return root

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

  ``G`` may sit deeper in the result (the forward mode of a gradient returns
  ``((y, G), (dy, dG))``), and several leaves may make it (copies, or one simplified where
  the stacks are known empty: the loop's exit before its first iteration).

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

from ..abstract.data import (
    BOTTOM,
    ENV,
    AbstractFunction,
    AbstractStack,
    AbstractTuple,
    GraphFunction,
)
from ..ir.node import Apply, Constant, Graph, Node, Parameter
from ..primitives import P
from .callsites import CallSites, Group
from .defunc import _has_function, _is_fn_stack, _match, _same_value
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


def _closure_path(out: Node, sites: CallSites, uses: dict) -> tuple[int, ...] | None:
    """Positions of the one closure in the tuple `out` (nested: ``((y, G), (dy, dG))``)."""
    if prim_of(out) is not P.make_tuple:
        return None
    fvs = sites.scopes.free_variables_total
    found = []
    for i, c in enumerate(out.inputs[1:]):  # type: ignore[union-attr]
        if _is_graph(c) and fvs.get(c.value):  # type: ignore[attr-defined]
            found.append((i,))
        elif prim_of(c) is P.make_tuple and len(uses.get(c, [])) == 1:
            inner = _closure_path(c, sites, uses)
            if inner is not None:
                found.append((i, *inner))
        elif _has_function(c.abstract):
            return None
    return found[0] if len(found) == 1 else None


def _at(out: Node, path: tuple[int, ...]) -> Node:
    for i in path:
        out = out.inputs[1 + i]  # type: ignore[union-attr]
    return out


def _entry_uses(node: Node, path: tuple[int, ...], uses: dict) -> bool:
    """Whether the tuple `node` is only taken apart, and its closure at `path` only called."""
    if not path:
        return all(u is not None and q == 0 for u, q in uses.get(node, ()))
    for user, k in uses.get(node, ()):
        if user is None or prim_of(user) is not P.tuple_getitem or k != 1:
            return False
        j = user.inputs[2]
        if not j.is_constant or type(j.value) is not int:  # type: ignore[attr-defined]
            return False
        if j.value == path[0] and not _entry_uses(user, path[1:], uses):  # type: ignore[attr-defined]
            return False
    return True


def _leaf_closure(
    leaf: Graph, sites: CallSites, uses: dict
) -> tuple[tuple[int, ...], Graph] | None:
    """Positions and graph of the closure `leaf` returns in a tuple, if one may be lifted."""
    out = leaf.output
    if prim_of(out) is not P.make_tuple or sites.scopes.parents.get(leaf) is not None:
        return None
    if uses.get(out, []) != [(None, -1)]:
        return None  # the tuple is also used in the leaf
    fvs = sites.scopes.free_variables_total
    path = _closure_path(out, sites, uses)  # type: ignore[arg-type]
    if path is None:
        return None
    c = _at(out, path)  # type: ignore[arg-type]
    g = c.value  # type: ignore[attr-defined]
    if g.defaults or g.kwonly or g.flags.get("vararg") or len(uses.get(c, [])) != 1:
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
    return path, g


def _same_leaf(
    first: Graph, leaf: Graph, path: tuple[int, ...], fvs: list[Node]
) -> list[Node] | None:
    """The values `leaf` gives the free variables `fvs` of the closure `first` returns.

    Where `leaf` is a copy of `first` (its result built alike from its parameters), whose
    closure at `path` was simplified for what it knew of them (a loop's exit reached before
    any iteration: its stacks known empty, the backward loop gone), `first`'s closure on
    `leaf`'s parameters computes the same. A stack known empty is a new empty stack.
    """
    if leaf.name != first.name or len(leaf.parameters) != len(first.parameters):
        return None
    if not _alike(first.output, leaf.output, path, first, leaf):
        return None
    # `leaf` knows more than `first` (a stack never pushed where `first`'s may be), never
    # less: `first`'s closure is the general one.
    narrower = False
    for p, q in zip(first.parameters, leaf.parameters):
        if p.abstract == q.abstract:
            continue
        if not (isinstance(p.abstract, AbstractStack) and not _never_pushed(p.abstract)):
            return None
        if not _never_pushed(q.abstract):
            return None
        narrower = True
    if not narrower:
        return None
    values: list[Node] = []
    for f in fvs:
        if not f.is_parameter or f.graph is not first:
            return None
        v = leaf.parameters[first.parameters.index(f)]  # type: ignore[arg-type]
        if v.abstract != f.abstract:
            if not (isinstance(f.abstract, AbstractStack) and _never_pushed(v.abstract)):
                return None
            v = typed_apply(leaf, f.abstract, P.stack_new)
        values.append(v)
    return values


def _never_pushed(a: Any) -> bool:
    return isinstance(a, AbstractStack) and (
        a.element is BOTTOM or a.element == AbstractFunction(frozenset())
    )


def _alike(a: Node, b: Node, path: tuple[int, ...] | None, ga: Graph, gb: Graph) -> bool:
    """Whether `a` (of `ga`) and `b` (of `gb`) compute alike, but for the closures at `path`."""
    if path == ():
        return _is_graph(a) and _is_graph(b) and a.value.name == b.value.name  # type: ignore[attr-defined]
    if a.is_parameter or b.is_parameter:
        return (
            a.is_parameter
            and b.is_parameter
            and a.graph is ga
            and b.graph is gb
            and ga.parameters.index(a) == gb.parameters.index(b)  # type: ignore[arg-type]
        )
    if a.is_constant or b.is_constant:
        return a.is_constant and b.is_constant and _same_value(a.value, b.value)  # type: ignore[attr-defined]
    if a.graph is not ga or b.graph is not gb or len(a.inputs) != len(b.inputs):  # type: ignore[union-attr]
        return False
    tuple_ = prim_of(a) is P.make_tuple
    return all(
        _alike(x, y, path[1:] if tuple_ and path and k == 1 + path[0] else None, ga, gb)
        for k, (x, y) in enumerate(zip(a.inputs, b.inputs))  # type: ignore[union-attr]
    )


def _closure_leaf(
    fam: _Family, sites: CallSites, uses: dict
) -> tuple[tuple[int, ...], Graph, dict[Graph, list[Node]]] | None:
    """Positions and graph of the closure the leaves of `fam` return in a tuple, if any.

    The tuple may hold it in a tuple (the forward mode of a gradient returns the pair of the
    value ``(y, G)`` and its tangent). Several leaves (a loop's test peeled before it) must
    return, at the same place, copies of one closure (`myia.opt.defunc._match`) or that
    closure simplified for stacks they know empty (`_same_leaf`): the values each gives its
    free variables are returned by the third result.
    """
    found = [_leaf_closure(leaf, sites, uses) for leaf in fam.leaves]
    for first, f in enumerate(found):
        if f is None:
            continue
        fv_of = _free_values(fam, found, first, sites)
        if fv_of is None:
            continue
        if not all(_entry_uses(call, f[0], uses) for call in fam.entries):
            return None  # the closure used as a value
        return f[0], f[1], fv_of
    return None


def _free_values(
    fam: _Family, found: list[Any], first: int, sites: CallSites
) -> dict[Graph, list[Node]] | None:
    """The values each leaf of `fam` gives the free variables of leaf `first`'s closure."""
    path, rep = found[first]
    fvs = list(sites.scopes.free_variables_total[rep])
    fv_of = {fam.leaves[first]: fvs}
    for leaf, f in zip(fam.leaves, found):
        if leaf is fam.leaves[first]:
            continue
        m = None if f is None or f[0] != path else _match(rep, f[1], fvs, sites.scopes)
        if m is None or any(v.abstract != fv.abstract for v, fv in zip(m, fvs)):
            m = _same_leaf(fam.leaves[first], leaf, path, fvs)
        if m is None:
            return None
        fv_of[leaf] = m
    return fv_of


def _replaced(out: Apply, path: tuple[int, ...], value: Node) -> Apply:
    """A copy of the tuple `out` with `value` at `path` (each tuple on the way retyped)."""
    i = path[0]
    inputs = list(out.inputs[1:])
    inputs[i] = value if len(path) == 1 else _replaced(inputs[i], path[1:], value)  # type: ignore[arg-type]
    elements = list(out.abstract.elements)  # type: ignore[attr-defined]
    elements[i] = inputs[i].abstract
    return typed_apply(out.graph, AbstractTuple(tuple(elements)), P.make_tuple, *inputs)  # type: ignore[arg-type]


def _retype_entry_uses(node: Node, a: Any, path: tuple[int, ...], call_g: Any, uses: dict):
    """Retype the parts of an entry's result `node` (new type `a`) along `path`; call G'."""
    node.abstract = a
    if not path:
        fn, fvs = call_g
        for site, _ in uses.get(node, ()):
            parts = [
                typed_apply(site.graph, f.abstract, P.tuple_getitem, node, j)
                for j, f in enumerate(fvs)
            ]
            site.inputs = [fn, *parts, *site.inputs[1:]]
        return
    for user, _ in uses.get(node, ()):
        if user.inputs[2].value == path[0]:
            _retype_entry_uses(user, a.elements[path[0]], path[1:], call_g, uses)


def _return_free_values(fam: _Family, sites: CallSites, uses: dict, fn_stacks: bool) -> bool:
    found = _closure_leaf(fam, sites, uses)
    if found is None:
        return False
    path, g, fv_of = found
    fvs = next(iter(fv_of.values()))
    if not fn_stacks and any(_is_fn_stack(f.abstract) for f in fvs):
        return False
    types = AbstractTuple(tuple(f.abstract for f in fvs))
    # Lift G: its free variables become its first parameters.
    params = [Parameter(g, debug=f.debug.derive()) for f in fvs]
    for p, f in zip(params, fvs):
        p.abstract = f.abstract
    g.parameters = [*params, *g.parameters]
    sites.substitute(g, dict(zip(fvs, params)))
    # The leaves return the free values.
    for leaf, values in fv_of.items():
        out: Apply = leaf.output  # type: ignore[assignment]
        leaf.output = _replaced(out, path, typed_apply(leaf, types, P.make_tuple, *values))
    new = next(iter(fv_of)).output.abstract  # type: ignore[union-attr]
    _retype(fam, new)
    # Each entry calls the lifted G on them.
    fn = typed_constant(g, AbstractFunction(frozenset([GraphFunction(g)])))
    for call in fam.entries:
        _retype_entry_uses(call, new, path, (fn, fvs), uses)
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
    returned_values(root)
    return root


def returned_values(root: Graph, fn_stacks: bool = True) -> int:
    """`return_values` on `root`'s program; the number of closures it returned the values of.

    Without `fn_stacks`, a closure over a stack of closures is left: that stack, returned,
    could no longer be defunctionalized (`myia.opt.defunc`).
    """
    count = 0
    for rewrite in (_return_free_values, _return_env_value):
        sites = CallSites(root)
        uses = node_uses(sites)[0]
        for fam in _families(sites):
            if rewrite is _return_free_values:
                count += rewrite(fam, sites, uses, fn_stacks)  # type: ignore[call-arg]
            else:
                rewrite(fam)  # type: ignore[call-arg]
    return count


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

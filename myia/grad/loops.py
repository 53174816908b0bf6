"""Gradients of loops that are loops: a forward loop pushing on a stack, a backward loop popping.

A loop is a strongly connected set of graphs in the graph of tail calls, whose members refer
to one another by those tail calls only (a *loop SCC*: the header, body and blocks of a
``while`` or ``for``, or a tail-recursive function; a loop in the body of a function that
recurses otherwise is one too, the recursion keeping the plain transform; a non-tail call of a
member from a member disqualifies the loop, which keeps the plain transform too; `ENABLED`
turns the whole scheme off). Differentiated by the plain J transform, the backpropagator of
each iteration would call the next iteration's before its own body: the backward pass would
recurse as deep as the loop ran. Instead, for a member ``g`` of a loop:

- its *core* ``▶g`` (built by `myia.grad.jtransform` in loop mode) computes ``g``'s body
  except the tail call and returns ``(cond, args, ◀g)``: the switch condition selecting the
  callee (or None), the tail call's arguments, and ``◀g``, the backpropagator of ``g``'s own
  body. ``◀g`` closes over ``g``'s forward values only (not over the next iteration), so its
  type does not nest: it maps the sensitivities of the tail call's arguments to
  ``(env, d_params...)``, like any backpropagator.
- its *wrapper* ``▶g:loop(params..., state...)`` calls the core, pushes ``◀g`` on ``g``'s own
  stack (a *closed* ``◀g``, which holds no forward value, is a constant and is not pushed)
  and tail-calls the callee's wrapper with the new state: the forward pass stays a loop.
  When a member has several predecessors in the loop (a join after an ``if``), or which one
  ran before cannot be told from the stacks, every member also pushes its index on a stack of
  *tags*.
- the *backward loop* ``◀n:loop(state..., d, env)`` starts from before block ``n`` ran, with
  the sensitivities ``d`` of ``n``'s parameters (a tuple: the sensitivities of the loop's
  variables are loop variables, not an environment) and ``env``, those of the loop's free
  variables. It finds the member ``p`` that ran before ``n`` (the only predecessor, or the
  tag popped), pops ``◀p`` from ``p``'s stack, applies it, and tail-calls ``◀p:loop``: the
  backward pass is a loop too, which generated code turns into a ``while`` loop. At the
  start of the loop (no tag left, or the predecessor's stack empty) it returns the pair
  ``(env, d)``; where the members' parameters differ in type, ``env`` with ``d`` under the
  key `ARGS` instead (an environment erases the type of what it holds).
- an *exit* ``▶t:exit(params..., state...)``, for a callee ``t`` outside the loop (the block
  after the loop, a ``return``), calls ``t``'s ordinary forward graph and returns its value
  and a backpropagator that runs the backward loop from before ``t``.
- an *entry* ``▶g:entry(params...)``, what a call from outside the loop calls, starts the
  wrapper on empty stacks and gives the usual ``(value, bprop)``, ``bprop`` returning
  ``(env, d_params...)``. The members entered from outside are the loop's `entries`; a
  backward loop only checks for the start at those.

The stack (`myia.primitives.stack`) is a persistent cons list: a push is O(1), so time and
memory are linear in the number of iterations, and every call that is not a tail call
returns before the next iteration: the depth of calls is bounded on any backend. The
gradient is an ordinary graph: differentiated again, its wrappers and backward loops are
loops themselves, and the stack primitives have backpropagators. A stack never pushed on a
path (its element type ⊥) is known empty there (`stack_empty` infers a constant), so the
backward loop is not inferred popping it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..abstract.data import AbstractTuple, declare_unknown_dims
from ..abstract.lattice import erase_functions
from ..infer.specialize import Dead
from ..ir.analysis import Scopes
from ..ir.node import Apply, Constant, DebugInfo, Graph, Node
from ..primitives import P
from ..primitives.grad import EnvKey
from .activity import activity_key, current_activity, using


class _ArgsKey(EnvKey):
    """The environment key of the sensitivities of a loop's tail-call arguments."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "key(args)"


ARGS = _ArgsKey()


@dataclass
class Tail:
    """The tail call of a loop member.

    It is ``fn(args...)`` under `chain` (the ``seq`` and identity ``convert`` nodes between it
    and the output); ``fn`` is a member or ``switch(cond, targets...)``.
    """

    call: Apply
    chain: list[Node]
    switch: Apply | None
    targets: tuple[Graph | object, ...]

    @property
    def args(self) -> list[Node]:
        return list(self.call.inputs[1:])

    @property
    def cond(self) -> Node | None:
        return self.switch.inputs[1] if self.switch is not None else None

    @property
    def skip(self) -> set[Node]:
        """The nodes the core of the member does not compute."""
        out = {self.call, *self.chain}
        if self.switch is not None:
            out.add(self.switch)
        return out


@dataclass
class Loop:
    """A loop SCC: its members (in a fixed order) and the tail call of each."""

    members: list[Graph]
    tails: dict[Graph, Tail]
    entries: set[Graph]
    built: dict[tuple[object, ...], _Built] = field(default_factory=dict)


@dataclass
class _Built:
    wrappers: dict[Graph, Graph]
    entries: dict[Graph, Graph]


#: Whether loops are differentiated into loops (off: the plain J transform, whose backward
#: pass of a loop recurses as deep as the loop ran).
ENABLED = True

_loops: dict[Graph, Loop | None] = {}
_cores: dict[tuple[Graph, object], Graph] = {}
_pending: list[tuple[Loop, dict[Graph, Graph], _Built, Any]] = []


def forget() -> None:
    """Forget the loops found and built so far (see `myia.grad.jtransform.forget`)."""
    _loops.clear()
    _cores.clear()
    _pending.clear()


# Analysis -----------------------------------------------------------------------------------


def loop_known(g: Graph) -> bool:
    """Whether `loop_of` knows `g` already (it then needs no `Scopes`)."""
    return not ENABLED or g in _loops


def loop_of(g: Graph, scopes: Scopes | None = None) -> Loop | None:
    """Return the loop SCC of `g`, or None (not recursive, or not by tail calls only)."""
    if not ENABLED:
        return None
    if g in _loops:
        return _loops[g]
    scopes = scopes if scopes is not None else Scopes(g)
    if not scopes.is_recursive(g):
        _loops[g] = None
        return None
    # The loop is the component of `g` in the graph of tail calls: in a recursive function
    # whose body has a loop, the loop's blocks call one another by tail calls, the recursive
    # call is not one (the recursion keeps the plain transform; the loop becomes a loop).
    members = _component(g, _tail_targets)
    if len(members) == 1 and g not in _tail_targets(g):
        _loops[g] = None
        return None
    loop = _analyze(members, scopes)
    for m in members:
        _loops[m] = loop
    return loop


def _tail_targets(g: Graph) -> list[Graph]:
    tail = _tail_call(g)
    return [t for t in tail.targets if isinstance(t, Graph)] if tail is not None else []


def _component(g: Graph, successors: Callable[[Graph], list[Graph]]) -> list[Graph]:
    """Return the strongly connected component of `g` in the graph given by `successors`."""
    order: list[Graph] = []
    seen = {g}
    todo = [g]
    while todo:
        h = todo.pop()
        order.append(h)
        for c in successors(h):
            if c not in seen:
                seen.add(c)
                todo.append(c)
    back: dict[Graph, list[Graph]] = {}
    for h in order:
        for c in successors(h):
            back.setdefault(c, []).append(h)
    reach = {g}
    todo = [g]
    while todo:
        h = todo.pop()
        for p in back.get(h, ()):
            if p not in reach:
                reach.add(p)
                todo.append(p)
    return [h for h in order if h in reach]


def _member(v: object, members: set[Graph]) -> bool:
    return isinstance(v, Graph) and v in members


def _is_call_of(node: Node, prim: object) -> bool:
    return node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is prim


def _identity_convert(node: Node) -> bool:
    if not _is_call_of(node, P.convert) or len(node.inputs) != 3:
        return False
    x, typ = node.inputs[1], node.inputs[2]
    return typ.is_constant and x.abstract is not None and erase_functions(x.abstract) == typ.value


def _tail(m: Graph, members: set[Graph]) -> Tail | None:
    """The tail call of `m` if it calls a member of the loop (directly or by a switch)."""
    tail = _tail_call(m)
    if tail is None or not any(_member(t, members) for t in tail.targets):
        return None
    return tail


def _tail_call(m: Graph) -> Tail | None:
    """The call of a graph constant (or a switch of them) `m` returns, if there is one."""
    chain: list[Node] = []
    node = m.output
    while node is not None:
        if _is_call_of(node, P.seq) and node.graph is m:
            chain.append(node)
            node = node.inputs[2]
        elif _identity_convert(node) and node.graph is m:
            chain.append(node)
            node = node.inputs[1]
        else:
            break
    if node is None or not node.is_apply or node.graph is not m:
        return None
    fn = node.inputs[0]
    if fn.is_constant and isinstance(fn.value, Graph):
        return Tail(node, chain, None, (fn.value,))
    if _is_call_of(fn, P.switch) and fn.graph is m and len(fn.inputs) == 4:
        branches = fn.inputs[2:]
        if all(b.is_constant for b in branches):
            return Tail(node, chain, fn, tuple(b.value for b in branches))
    return None


def _analyze(members: list[Graph], scopes: Scopes) -> Loop | None:
    mset = set(members)
    tails: dict[Graph, Tail] = {}
    scopes.add(members)
    for m in members:
        if m.flags.get("bprop") is not None or scopes.parents.get(m) in mset:
            return None
        tail = _tail(m, mset)
        if tail is None:
            return None
        nargs = len(tail.call.inputs) - 1
        for t in tail.targets:
            if isinstance(t, Graph):
                if len(t.parameters) != nargs or t.flags.get("bprop") is not None:
                    return None
                if t not in mset and scopes.parents.get(t) in mset:
                    return None
            elif not isinstance(t, Dead):
                return None
        # Members are referenced only by the tail call, and what the tail call computes is
        # used by the output alone.
        skip = tail.skip
        for node in scopes.nodes[m]:
            if not node.is_apply:
                continue
            for i, inp in enumerate(node.inputs):
                if inp.is_constant and _member(inp.value, mset):
                    ok = (node is tail.call and i == 0 and tail.switch is None) or (
                        node is tail.switch and i >= 2
                    )
                    if not ok:
                        return None
                if inp in skip and node not in skip:
                    return None
        if m.output is not None and m.output.is_constant and _member(m.output.value, mset):
            return None
        tails[m] = tail
    skipped = set().union(*(t.skip for t in tails.values()))
    # The members a call from outside the loop starts it at: those referenced by the graphs
    # around it (and those `loop_entry` is asked for).
    entries: set[Graph] = set()
    for h in scopes.graphs:
        if h in mset:
            continue
        if any(n in skipped for n in scopes.free_variables_direct[h]):
            return None  # a closure using what a tail call computes
        for node in scopes.nodes[h]:
            if node.is_apply:
                refs = (i.value for i in node.inputs if i.is_constant)
                entries.update(v for v in refs if _member(v, mset))
    return Loop(members, tails, entries)


# Forward graphs -----------------------------------------------------------------------------


def register_core(g: Graph, core: Graph) -> None:
    """Record `core`, the loop-mode forward graph of member `g` (see the module docstring)."""
    _cores[(g, activity_key())] = core


def loop_entry(g: Graph) -> Graph:
    """Return the forward graph of loop member `g` as called from outside its loop."""
    loop = _loops[g]
    assert loop is not None
    loop.entries.add(g)
    cores = tuple(_core(m) for m in loop.members)
    key = (*cores, frozenset(loop.entries))
    built = loop.built.get(key)
    if built is None:
        members = loop.members
        built = loop.built[key] = _Built(
            {m: _wrapper(m) for m in members},
            {m: _graph(f"▶{m.name}:entry", m) for m in members},
        )
        # The graphs are filled once the cores are (a loop referenced from its own scope is
        # entered before that scope's backward graphs exist): see `flush`.
        _pending.append((loop, dict(zip(members, cores)), built, current_activity()))
        flush()
    return built.entries[g]


def _bprop_of(core: Graph) -> Graph:
    """``◀m``, the backpropagator the core of member ``m`` returns."""
    out = core.output
    while _is_call_of(out, P.seq):  # the effects of the member's body, sequenced before
        out = out.inputs[2]
    return out.inputs[3].value


def _complete(core: Graph) -> bool:
    return core.output is not None and _bprop_of(core).output is not None


def flush() -> None:
    """Build the loops entered so far whose cores are complete."""
    i = 0
    while i < len(_pending):
        loop, cores, built, activity = _pending[i]
        if all(_complete(c) for c in cores.values()):
            del _pending[i]
            with using(activity):
                _build(loop, cores, built)
        else:
            i += 1


def _core(m: Graph) -> Graph:
    key = (m, activity_key())
    if key not in _cores:
        from .jtransform import transform_scope

        transform_scope(m)
    return _cores[key]


def _graph(name: str, origin: Graph) -> Graph:
    g = Graph()
    g.debug = DebugInfo(name, origin.debug.find_location(), origin.debug)
    return g


def _wrapper(m: Graph) -> Graph:
    """The forward wrapper ``▶m:loop`` of member `m`: a tail call of it is one of `m`.

    Of a user's function, it is flagged ``user_function`` too: the forward loop of a user's
    tail recursion counts its levels as the recursion does (`myia.opt.inline`).
    """
    w = _graph(f"▶{m.name}:loop", m)
    if m.flags.get("user_function"):
        w.flags["user_function"] = True
    return w


def _params(new: Graph, old: Graph) -> list[Node]:
    declare_unknown_dims(new, old)
    return [new.add_parameter(debug=p.debug.derive()) for p in old.parameters]


def _build(loop: Loop, cores: dict[Graph, Graph], built: _Built) -> None:
    from .jtransform import fprop

    members = loop.members
    index = {m: i for i, m in enumerate(members)}
    # ◀m, the backpropagator of member m's body; a closed one (no forward value in it) is a
    # constant of the backward pass, the others are pushed on their member's stack.
    bprops = {m: _bprop_of(cores[m]) for m in members}
    closed = {m: not Scopes(bprops[m]).free_variables_total[bprops[m]] for m in members}
    preds: dict[Graph, list[Graph]] = {}
    for m in members:
        for t in dict.fromkeys(loop.tails[m].targets):
            if isinstance(t, Graph):
                preds.setdefault(t, []).append(m)
    # Which member ran before: known when it is unique, found by which stack is empty at the
    # start of the loop; otherwise each member pushes its index on a stack of tags.
    tags = any(len(ps) > 1 for ps in preds.values()) or any(
        closed[preds[m][0]] for m in loop.entries
    )
    sens_types = [args_sens_type(m.parameters).value for m in members]
    pair = all(t == sens_types[0] for t in sens_types)
    layout = _Layout([m for m in members if not closed[m]], tags, pair)

    wrappers, entries = built.wrappers, built.entries
    backs: dict[Graph, Graph] = {}
    exits: dict[Graph, Graph] = {}

    def back(n: Graph) -> Graph:
        """``◀n:loop(state..., d, env)``: the backward pass from before ``n`` ran."""
        b = backs.get(n)
        if b is None:
            b = backs[n] = _graph(f"◀{n.name}:loop", n)
            _backward(b, n, preds[n], layout, index, bprops, closed, back, n in loop.entries)
        return b

    def target(t: object) -> Node:
        if not isinstance(t, Graph):
            return Constant(t)  # a branch never taken
        if t in wrappers:
            return Constant(wrappers[t])
        x = exits.get(t)
        if x is None:
            x = exits[t] = _exit(t, fprop(t), layout, back(t))
        return Constant(x)

    for m in members:
        tail = loop.tails[m]
        w = wrappers[m]
        params = _params(w, m)
        state = [w.add_parameter(name) for name in layout.names]
        r = w.apply(cores[m], *params)
        if not closed[m]:
            j = layout.stacks.index(m)
            state[j] = w.apply(P.stack_push, state[j], w.apply(P.tuple_getitem, r, 2))
        if layout.tags:
            state[-1] = w.apply(P.stack_push, state[-1], Constant(index[m]))
        args = w.apply(P.tuple_getitem, r, 1)
        # A parameter the tail call passes on as it is goes straight to the callee, so that
        # inference sees the wrapper pass it unchanged (`Scopes.invariant_parameters`).
        jargs = [
            params[m.parameters.index(a)]
            if a.is_parameter and a.graph is m
            else w.apply(P.tuple_getitem, args, i)
            for i, a in enumerate(tail.args)
        ]
        if tail.switch is None:
            fn: Node = target(tail.targets[0])
        else:
            cond = w.apply(P.tuple_getitem, r, 0)
            fn = w.apply(P.switch, cond, *(target(t) for t in tail.targets))
        w.output = w.apply(fn, *jargs, *state, debug=DebugInfo(origin=tail.call.debug))
        _entry(entries[m], m, w, layout)


def _no_free_variables(bp: Graph) -> bool:
    """Whether the environment `bp` returns is always empty (``env_new()``)."""
    out = bp.output
    return _is_call_of(out, P.make_tuple) and _is_call_of(out.inputs[1], P.env_new)


@dataclass
class _Layout:
    """The state the forward pass of a loop carries.

    A stack per member whose backpropagator is not closed, then (if needed) the stack of the
    indices of the members that ran.
    """

    stacks: list[Graph]
    tags: bool
    #: Whether every member's parameters have sensitivities of one type: the backward loop
    #: returns ``(env, d)``, otherwise ``env`` with ``d`` (of any member) under `ARGS`.
    pair: bool

    @property
    def names(self) -> list[str]:
        return [f"stack_{m.name}" for m in self.stacks] + (["tags"] if self.tags else [])


def _backward(
    b: Graph,
    n: Graph,
    preds: list[Graph],
    layout: _Layout,
    index: dict[Graph, int],
    bprops: dict[Graph, Graph],
    closed: dict[Graph, bool],
    back: Callable[[Graph], Graph],
    entry: bool,
) -> None:
    """Build ``◀n:loop(state..., d, env)``, the backward loop from before ``n`` ran.

    ``d`` holds the sensitivities of ``n``'s parameters, ``env`` those of the loop's free
    variables. It pops which member ``p`` ran before ``n``, applies ``◀p`` and goes on from
    before ``p``, until the loop's start, where it returns ``(env, d)`` (or ``env`` with ``d``
    under `ARGS`, `_Layout.pair`).
    """
    nstate = len(layout.names)

    def block(name: str) -> tuple[Graph, list[Node]]:
        g = _graph(name, n)
        return g, [g.add_parameter(x) for x in [*layout.names, "d", "env", "tag"]]

    done, dparams = block(f"◀{n.name}:start")
    if layout.pair:
        done.output = done.apply(P.make_tuple, dparams[nstate + 1], dparams[nstate])
    else:
        done.output = done.apply(P.env_setitem, dparams[nstate + 1], ARGS, dparams[nstate])

    def run(p: Graph) -> Graph:
        g, ps = block(f"◀{n.name}:from:{p.name}")
        state, d, env = list(ps[:nstate]), ps[nstate], ps[nstate + 1]
        if closed[p]:
            bp: Node = Constant(bprops[p])
        else:
            j = layout.stacks.index(p)
            top = g.apply(P.stack_pop, state[j])
            bp = g.apply(P.tuple_getitem, top, 0)
            state[j] = g.apply(P.tuple_getitem, top, 1)
        r = g.apply(bp, d)
        if not _no_free_variables(bprops[p]):
            env = g.apply(P.env_add, env, g.apply(P.tuple_getitem, r, 0))
        sens = [g.apply(P.tuple_getitem, r, i + 1) for i in range(len(p.parameters))]
        dp = g.apply(P.make_tuple, *sens)
        g.output = g.apply(back(p), *state, dp, env)
        return g

    def guarded(p: Graph) -> Graph:
        if closed[p] or not layout.tags:
            return run(p)
        # The tag says p ran, so its stack is not empty; where inference finds it never
        # pushed (a path on which p never runs), the check keeps it from typing the pop.
        g, params = block(f"◀{n.name}:if:{p.name}")
        empty = g.apply(P.stack_empty, params[layout.stacks.index(p)])
        g.output = g.apply(g.apply(P.switch, empty, done, run(p)), *params)
        return g

    def dispatch(ps: list[Graph]) -> Graph:
        if len(ps) == 1:
            return guarded(ps[0])
        g, params = block(f"◀{n.name}:which")
        tag = params[-1]
        fn = g.apply(P.switch, g.apply(P.eq, tag, index[ps[0]]), guarded(ps[0]), dispatch(ps[1:]))
        g.output = g.apply(fn, *params)
        return g

    state = [b.add_parameter(x) for x in layout.names]
    d = b.add_parameter("d")
    env = b.add_parameter("env")
    if layout.tags:
        # The stack of tags starts with -1 (pushed by the entry): which member ran before.
        top = b.apply(P.stack_pop, state[-1])
        tag: Node = b.apply(P.tuple_getitem, top, 0)
        state[-1] = b.apply(P.tuple_getitem, top, 1)
        empty = b.apply(P.eq, tag, -1)
    else:
        tag = Constant(-1)
        if entry:
            empty = b.apply(P.stack_empty, state[layout.stacks.index(preds[0])])
    step = dispatch(preds)
    fn: Node = b.apply(P.switch, empty, done, step) if entry else Constant(step)
    b.output = b.apply(fn, *state, d, env, tag)


def args_sens_type(args: list[Node]) -> Constant:
    """The abstract value of the tuple of the sensitivities of `args` (typed nodes)."""
    from ..primitives.grad import sens_type

    return Constant(AbstractTuple(tuple(sens_type(a.abstract) for a in args)))


def _entry(e: Graph, m: Graph, wrapper: Graph, layout: _Layout) -> None:
    """``▶m:entry(params)``: the loop from empty stacks, with the usual bprop."""
    params = _params(e, m)
    state = [e.apply(P.stack_of_functions) for _ in layout.stacks]
    if layout.tags:
        state.append(e.apply(P.stack_push, e.apply(P.stack_new), -1))
    r = e.apply(wrapper, *params, *state)
    b = _graph(f"◀{m.name}:entry", m)
    dout = b.add_parameter("dout")
    back = b.apply(e.apply(P.tuple_getitem, r, 1), dout)
    if layout.pair:
        fvs = b.apply(P.tuple_getitem, back, 0)
        sens = b.apply(P.tuple_getitem, back, 1)
    else:
        sens = b.apply(P.env_sens, back, ARGS, args_sens_type(m.parameters))
        fvs = b.apply(P.env_delitem, back, ARGS)
    b.output = b.apply(P.tuple_concat, b.apply(P.make_tuple, fvs), sens)
    e.output = e.apply(P.make_tuple, e.apply(P.tuple_getitem, r, 0), Constant(b))


def _exit(t: Graph, jt: Graph, layout: _Layout, backward: Graph) -> Graph:
    """``▶t:exit(params, state...)``: ``t`` called from the loop, then the backward loop."""
    x = _graph(f"▶{t.name}:exit", t)
    params = _params(x, t)
    state = [x.add_parameter(name) for name in layout.names]
    r = x.apply(jt, *params)
    b = _graph(f"◀{t.name}:exit", t)
    dout = b.add_parameter("dout")
    d = b.apply(x.apply(P.tuple_getitem, r, 1), dout)
    sens = b.apply(P.make_tuple, *(b.apply(P.tuple_getitem, d, i + 1) for i in range(len(params))))
    b.output = b.apply(backward, *state, sens, b.apply(P.tuple_getitem, d, 0))
    x.output = x.apply(P.make_tuple, x.apply(P.tuple_getitem, r, 0), Constant(b))
    return x

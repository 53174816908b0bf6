"""Loops run in checkpointed chunks of growing length: O(sqrt n) memory for their gradients.

``myia.checkpoint(f, loops="sqrt")`` marks `f`'s graph ``checkpoint_loops``; when it is
parsed, `chunk_loops` rewrites each of its loops (a set of blocks calling one another by tail
calls, entered at one block, its *header* ``H``), before inference and before any gradient:

- ``chunk(state, k)``, flagged ``checkpoint``, runs at most ``k`` iterations from ``state``
  (the arguments of ``H``): copies of the loop's blocks, each taking three more parameters,
  the state its iteration started from, ``j`` (the iterations done) and ``k``. The jump back to
  ``H`` counts (``j + 1``) and returns ``(k, args)`` after ``k`` iterations; a jump out of the
  loop (``break``, a ``return``, the loop's test failing) returns ``(j, start)``: the loop ends
  in iteration ``j < k``, which started from ``start``.
- the call entering the loop, ``H(*s)``, becomes ``run_chunked(chunk, H, s)``: a loop calling
  ``chunk(s, k)`` with ``k`` = 1, 2, 3, ..., until a chunk ends early; then ``H`` runs from the
  state that chunk returned: it leaves the loop within that iteration, and runs what follows.

The trip count ``n`` need not be known: after ``c`` chunks, ``c (c + 1) / 2`` iterations have
run, so there are about ``sqrt(2 n)`` chunks of at most as many iterations. Under `grad`, the
forward pass keeps one state per chunk and the backward pass recomputes one chunk at a time
(`myia.checkpoint`): memory grows as O(sqrt n), and the time is that of one more forward pass,
plus the last, partial iteration run twice (its ``print`` prints twice). Loops nested in the
body are chunked in their turn (in the copies a chunk runs). Everything is ordinary Myia
code: the gradient of the chunked loop is the gradient of loops and checkpointed calls, at any
order, on every backend.
"""

from __future__ import annotations

from ..ir.clone import clone_graphs
from ..ir.node import Apply, Constant, Graph, Node
from ..primitives import P

#: The values of ``loops=`` that `myia.checkpoint` accepts.
STRATEGIES = ("sqrt",)


def run_chunked(chunk, finish, state):
    """``finish(*state)``, the loop ``chunk`` runs, in chunks of 1, 2, 3... iterations."""
    k = 1
    going = True
    while going:
        ran, state = chunk(state, k)
        going = ran == k
        k = k + 1
    return finish(*state)


def chunk_loops(graph: Graph, others: set[Graph]) -> None:
    """Rewrite the loops of `graph` (just parsed) to run in checkpointed chunks.

    `others` are the graphs of the other functions `graph` uses: their loops are their own.
    """
    _chunk_graphs(_own_graphs(graph, others))


def _own_graphs(graph: Graph, others: set[Graph]) -> list[Graph]:
    """`graph` and the graphs it reaches by constants, without entering `others`."""
    out: dict[Graph, None] = {}
    todo = [graph]
    while todo:
        g = todo.pop()
        if g in out or g in others:
            continue
        out[g] = None
        for node in _nodes(g):
            todo.extend(
                i.value for i in node.inputs if i.is_constant and isinstance(i.value, Graph)
            )
    return list(out)


def _nodes(g: Graph) -> list[Apply]:
    """The applies of `g` itself (free variables excluded)."""
    seen: set[Node] = set()
    out: list[Apply] = []
    todo = [g.output] if g.output is not None else []
    while todo:
        n = todo.pop()
        if n in seen or not n.is_apply or n.graph is not g:
            continue
        seen.add(n)
        out.append(n)  # type: ignore[arg-type]
        todo.extend(n.inputs)
    return out


def _tail(g: Graph) -> tuple[Apply, Apply | None] | None:
    """``(call, switch)``: the tail call of `g` (under ``seq``), of a graph or of a switch."""
    node = g.output
    while node is not None and _is_call_of(node, P.seq) and node.graph is g:
        node = node.inputs[2]
    if node is None or not node.is_apply or node.graph is not g:
        return None
    fn = node.inputs[0]
    if fn.is_constant and isinstance(fn.value, Graph):
        return node, None  # type: ignore[return-value]
    if _is_call_of(fn, P.switch) and fn.graph is g and len(fn.inputs) == 4:
        if all(b.is_constant and isinstance(b.value, Graph) for b in fn.inputs[2:]):
            return node, fn  # type: ignore[return-value]
    return None


def _is_call_of(node: Node, prim: object) -> bool:
    return node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is prim


def _targets(g: Graph) -> list[Graph]:
    tail = _tail(g)
    if tail is None:
        return []
    call, switch = tail
    if switch is None:
        return [call.inputs[0].value]
    return [b.value for b in switch.inputs[2:]]


def _loops(graphs: list[Graph]) -> list[list[Graph]]:
    """The strongly connected components of `graphs` by tail calls that are loops (Tarjan)."""
    gset = set(graphs)
    index: dict[Graph, int] = {}
    low: dict[Graph, int] = {}
    stack: list[Graph] = []
    on: set[Graph] = set()
    out: list[list[Graph]] = []
    for root in graphs:
        if root in index:
            continue
        work = [(root, iter([t for t in _targets(root) if t in gset]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            g, it = work[-1]
            t = next(it, None)
            if t is not None:
                if t not in index:
                    index[t] = low[t] = len(index)
                    stack.append(t)
                    on.add(t)
                    work.append((t, iter([u for u in _targets(t) if u in gset])))
                elif t in on:
                    low[g] = min(low[g], index[t])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[g])
            if low[g] == index[g]:
                comp = []
                while True:
                    h = stack.pop()
                    on.discard(h)
                    comp.append(h)
                    if h is g:
                        break
                if len(comp) > 1 or g in _targets(g):
                    out.append(comp[::-1])
    return out


def _chunk_graphs(graphs: list[Graph]) -> None:
    for members in _loops(graphs):
        mset = set(members)
        refs = _references(graphs, mset)
        if refs is None:
            continue
        entries = {v for _, _, v in refs}
        if len(entries) != 1:
            continue  # a loop entered at several blocks keeps its form
        header = entries.pop()
        copies = _chunk_copies(members, header)
        if copies is None:
            continue
        chunk, new_graphs = copies
        enter = _enter(header, chunk)
        for node, i, _ in refs:
            node.inputs[i] = Constant(enter)
        _chunk_graphs(new_graphs)


def _references(graphs: list[Graph], mset: set[Graph]) -> list[tuple[Apply, int, Graph]] | None:
    """Where graphs outside the loop refer to its members; None if a member is used otherwise.

    Members are referenced by tail calls (or a switch of tail calls) alone.
    """
    refs = []
    for g in graphs:
        tail = _tail(g)
        allowed: set[tuple[Node, int]] = set()
        if tail is not None:
            call, switch = tail
            allowed = {(call, 0)} if switch is None else {(switch, 2), (switch, 3)}
        for node in _nodes(g):
            for i, inp in enumerate(node.inputs):
                if inp.is_constant and inp.value in mset:
                    if (node, i) not in allowed:
                        return None
                    if g not in mset:
                        refs.append((node, i, inp.value))
        if g.output is not None and g.output.is_constant and g.output.value in mset:
            return None
    return refs


def _chunk_copies(members: list[Graph], header: Graph) -> tuple[Graph, list[Graph]] | None:
    """``chunk(state, k)``: at most ``k`` iterations of the loop; the graphs it is made of.

    Each copied block takes three more parameters: ``start`` (the state the iteration
    started from, spread), ``j`` (the iterations done) and ``k``. It returns ``(k, state)``
    after ``k`` iterations, ``(j, start)`` where the loop is left in iteration ``j < k``.
    """
    cloner = clone_graphs(members)
    copies = {m: cloner.graphs[m] for m in members}
    head = copies[header]
    nh = len(header.parameters)
    pause = _pause(header)
    gate = _gate(header, head, pause)
    exits: dict[int, Graph] = {}
    for m in members:
        c = copies[m]
        tail = _tail(c)
        if tail is None:
            return None
        call, switch = tail
        extra = [c.add_parameter(f"start{i}") for i in range(nh)]
        j, k = c.add_parameter("j"), c.add_parameter("k")
        if switch is None and call.inputs[0].value is head:
            # The jump back, counted in the block itself, so that the chunk's loop has the
            # blocks of the loop and no other.
            args = call.inputs[1:]
            j1 = c.apply(P.add, j, 1)
            fn = c.apply(P.switch, c.apply(P.lt, j1, k), Constant(head), Constant(pause))
            call.inputs[:] = [fn, *args, *args, j1, k]
            continue
        holder = call if switch is None else switch
        for i in [0] if switch is None else [2, 3]:
            t = holder.inputs[i].value
            if t is head:
                holder.inputs[i] = Constant(gate)
            elif t not in copies.values():
                n = len(call.inputs) - 1
                if n not in exits:
                    exits[n] = _out(header, n, nh)
                holder.inputs[i] = Constant(exits[n])
        call.inputs.extend([*extra, j, k])
    chunk = Graph(f"{header.name}:chunk", header.debug.find_location())
    chunk.flags["checkpoint"] = True  # its gradient recomputes it (`myia.checkpoint`)
    state = chunk.add_parameter("state")
    k = chunk.add_parameter("k")
    ps = [chunk.apply(P.tuple_getitem, state, i) for i in range(nh)]
    chunk.output = chunk.apply(head, *ps, *ps, Constant(0), k)
    return chunk, list(cloner.graphs.values())


def _gate(header: Graph, head: Graph, pause: Graph) -> Graph:
    """The jump back to the header from a branch, counted.

    ``again(args, start, j, k) => head(args, args, j + 1, k)`` while ``j + 1 < k``, else
    `_pause`: the chunk has run its ``k`` iterations.
    """
    nh = len(header.parameters)
    g = Graph(f"{header.name}:again")
    args = [g.add_parameter(f"a{i}") for i in range(nh)]
    for i in range(nh):
        g.add_parameter(f"start{i}")
    j, k = g.add_parameter("j"), g.add_parameter("k")
    j1 = g.apply(P.add, j, 1)
    fn = g.apply(P.switch, g.apply(P.lt, j1, k), head, pause)
    g.output = g.apply(fn, *args, *args, j1, k)
    return g


def _pause(header: Graph) -> Graph:
    """The end of a chunk after ``k`` iterations: ``pause(args, start, k, k) => (k, args)``."""
    nh = len(header.parameters)
    g = Graph(f"{header.name}:pause")
    args = [g.add_parameter(f"a{i}") for i in range(nh)]
    for i in range(nh):
        g.add_parameter(f"start{i}")
    g.add_parameter("j")
    k = g.add_parameter("k")
    g.output = g.apply(P.make_tuple, k, g.apply(P.make_tuple, *args))
    return g


def _out(header: Graph, nargs: int, nh: int) -> Graph:
    """A jump out of the loop: ``(j, start)``."""
    g = Graph(f"{header.name}:out")
    for i in range(nargs):
        g.add_parameter(f"a{i}")
    start = [g.add_parameter(f"start{i}") for i in range(nh)]
    j = g.add_parameter("j")
    g.add_parameter("k")
    g.output = g.apply(P.make_tuple, j, g.apply(P.make_tuple, *start))
    return g


def _enter(header: Graph, chunk: Graph) -> Graph:
    """``enter(*s) = run_chunked(chunk, header, s)``: what calls entering the loop call."""
    from ..frontend import parse

    g = Graph(f"{header.name}:chunked", header.debug.find_location())
    ps = [g.add_parameter(debug=p.debug.derive()) for p in header.parameters]
    state = g.apply(P.make_tuple, *ps)
    g.output = g.apply(parse(run_chunked), Constant(chunk), Constant(header), state)
    return g

"""Inlining: a call to a known graph is replaced by a copy of the graph's body.

``g(args)`` is inlined when `g` is a graph constant that cannot reach itself (recursion and
loops are never inlined, so the program stays finite and loops stay loops) or that is called
there alone (a member of a recursion used once: the recursion keeps its other members) or
that is the small core of a loop's member (`myia.grad.loops`: called by the loop's wrappers
only, it is copied into each), takes its
arguments positionally, and does not reach a ``raise`` (a raised exception's traceback shows
the call it went through), and is not flagged ``noinline`` (the runs of a checkpointed
call: their values are freed when the call returns). Graphs used once, small graphs and,
within a budget of copied nodes per sweep, every other non-recursive graph are inlined: the
output of AD is made of small forward and backward graphs, and inlining them all is what
lets the other rules see ``tuple_getitem(make_tuple(...))`` and calls of known closures.

The copy is made by `myia.ir.clone.Cloner` with the graphs nested in `g` (its closures),
which are copied too and refer to the copied body; `g`'s free variables are left as they are,
and are visible where `g` is called (the caller is nested where `g` is). Inlining never turns
a tail call into a non-tail call: the call's value becomes the copied output, in the same
position, and the tail calls of `g` stay in tail position of the caller when the call was.
"""

from __future__ import annotations

from typing import Any

from ..ir.node import Apply, Graph, Node, is_apply_of
from ..primitives import P
from .matcher import GRAPH_CALL, Rewrite, rewrite

#: Graphs of at most this many applies (with their closures) are inlined at every call.
SMALL = 64


def can_inline(g: Graph, call: Apply, info: Any) -> bool:
    """Whether the call `call` of graph constant `g` may be inlined (see the module doc)."""
    if not info.known(g) or g in info.raises:
        return False
    if info.is_recursive(g) and not _sole_call(g, call, info) and not _core_call(g, info):
        return False
    if g.flags.get("vararg") or g.kwonly or len(g.parameters) != len(call.inputs) - 1:
        return False
    if g.flags.get("noinline"):
        return False
    return g.output is not None


def _sole_call(g: Graph, call: Apply, info: Any) -> bool:
    """Whether `call` is the one use of recursive graph `g`, in a graph outside `g`'s scope.

    Inlining it then removes `g` (a member of a cycle of calls: the cycle gets shorter, and
    a loop, a graph that calls itself, stays one). ``info.once`` remembers the graphs so
    inlined in this sweep: a copy made by one of them may call another graph of the cycle,
    whose count of uses is then out of date until the next sweep.
    """
    if info.uses.get(g, 0) != 1 or g in info.once or call.graph in info.scope(g):
        return False
    info.once.add(g)
    return True


def _core_call(g: Graph, info: Any) -> bool:
    """Whether `g` is the small core of a loop's member, called by its loop's wrappers.

    The forward pass of a loop's member is a core (its body) called by a wrapper (the push
    of its backpropagator and the jump to the next member, `myia.grad.loops`). A core that
    recurses through a call in the loop's body (a loop in a recursive function) is called
    by two wrappers when its loop's first iteration was specialized apart: each gets its
    copy, the core is gone, and the wrappers keep the recursion.
    """
    return bool(g.flags.get("loop_core")) and info.scope_size(g) <= SMALL


@rewrite(GRAPH_CALL)
def inline(node: Apply, opt: Any) -> Node | None:
    """Inline a call to a graph that is not recursive.

    g(a1, ..., an) => body of g with a1, ..., an for its parameters  (g not recursive)
    """
    g = node.inputs[0].value  # type: ignore[attr-defined]
    info = opt.info
    if not can_inline(g, node, info):
        return None
    if info.uses.get(g, 0) > 1 and info.scope_size(g) > SMALL and opt.budget <= 0:
        return None
    _keep_recursion_step(g, node, opt)
    return opt.inline(g, node.inputs[1:], node)


def _keep_recursion_step(g: Graph, call: Apply, opt: Any) -> None:
    """Flag the graph of `call` ``recursive_call`` when `call` is a step of a user's recursion.

    A tail call of a user's recursive function (or of a graph that holds one) becomes a jump
    once inlined: the graph that makes it then counts one level of recursion per jump it
    makes (the backends bound the depth as Python does, `RECURSION_LIMIT`). A user's ``while``
    loop is made of blocks, never flagged: it runs as long as it runs.
    """
    if not (g.flags.get("user_function") or g.flags.get("recursive_call")):
        return
    out = call.graph.output and opt.resolve(call.graph.output)
    while out is not None and is_apply_of(out, P.seq):
        out = opt.resolve(out.inputs[2])
    if out is call and opt.info.is_recursive(g):
        call.graph.flags["recursive_call"] = True


@rewrite(GRAPH_CALL)
def forward_call(node: Apply, opt: Any) -> Node | None:
    """Call directly the graph that a graph only forwards to.

    g(a1, ..., an) => h(b1, ..., bm)  (g's body is the call h(...) of its parameters and
    constants, h another graph)

    The blocks the frontend and AD make often only pass their parameters on (a loop's block
    that jumps back to its header); recursive ones are not inlined, and this takes them out
    of the loop all the same.
    """
    g = node.inputs[0].value  # type: ignore[attr-defined]
    out = g.output
    if out is None or not out.is_apply or out.graph is not g:
        return None
    h = out.inputs[0]
    if not h.is_constant or type(h.value) is not Graph or h.value is g:  # type: ignore[attr-defined]
        return None
    if g.flags.get("vararg") or g.kwonly or g.defaults:
        return None
    if len(g.parameters) != len(node.inputs) - 1 or not opt.info.known(g):
        return None
    back = h.value.output  # type: ignore[attr-defined]
    if back is not None and back.is_apply and back.inputs[0].is_constant:
        if back.inputs[0].value is g:  # type: ignore[attr-defined]
            return None  # two graphs that only call each other: an endless loop, kept
    subst = dict(zip(g.parameters, node.inputs[1:]))
    args = []
    for i in out.inputs[1:]:
        if i in subst:
            args.append(subst[i])
        elif i.is_constant and not isinstance(i.value, Graph):  # type: ignore[attr-defined]
            args.append(i)
        else:
            return None
    _keep_recursion_step(g, node, opt)
    return opt.apply(h, *args, like=node, abstract=node.abstract)


INLINE: list[Rewrite] = [inline, forward_call]

"""The optimizer's pass list: named passes, each a function from a graph to a graph.

`optimize` runs `PASSES` in order on a specialized program (the graph and every graph it
reaches; passes transform the graphs in place and return the root). With
``myia.api.VERIFY_PASSES`` on (``MYIA_VERIFY_PASSES=1``; the optimizer's tests) the structure and
the types of the program are verified after each pass;
with the environment variable ``MYIA_PRINT_PASSES=1`` the program is printed after each pass,
under a header naming it.

The rewrite passes sweep the program with groups of named rules (`myia.opt.matcher`):

- ``inline``: calls to non-recursive graphs (`myia.opt.inline`);
- ``fold``: constant folding and values known to inference (`myia.opt.algebra`);
- ``algebra``: exact algebraic identities on scalars and arrays (`myia.opt.algebra`);
- ``data``: tuples, records, dicts and lists built and taken apart (`myia.opt.rewrites`);
- ``control``: constant switches, pure ``seq``, identity conversions, partial applications
  called (`myia.opt.rewrites`);
- ``grad``: environments, zeros and sums of sensitivities (`myia.opt.grad_rules`);
- ``cse``: common subexpressions (`myia.opt.cse`).

The default pipeline runs them together as ``simplify`` (one sweep applies every rule, which
is what makes it fast: an inlined body is simplified as it is copied), computes in the forward
pass what backpropagators compute from forward values alone (``hoist``), turns the stacks of
backpropagators of loop gradients into stacks of the values they close over (``defunc``),
moves what a graph does after its last conditional into the branches (``tails``: the
backpropagator of an ``if`` then merges with its branch's), passes the tuple and record
parameters of loops as their elements (``flatten``), then turns the parameters that always
receive one constant into it (``constants``: a function called in a loop becomes known
there), removes dead parameters (``dce``), simplifies again what that exposed, lifts the
closures left (``lift``), and updates in place the sensitivities of arrays that nothing else
references (``inplace``: a loop reading k elements of an array). Each pass can also run
alone, which is how the tests check them one by one.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..grad.api import SIMPLIFY
from ..ir.clone import clone
from ..ir.node import Graph
from .algebra import ALGEBRA, FOLD
from .constprop import propagate_constants
from .dce import dce
from .defunc import defunctionalize, defunctionalized
from .flatten import flatten_parameters
from .grad_rules import GRAD, GRAD_CALLS
from .hoist import hoist_backward
from .inline import INLINE
from .inplace import accumulate_in_place
from .lift import lambda_lift
from .matcher import Matcher, Rewrite
from .retfunc import drop_unread_results, return_values, returned_values
from .rewrites import CONTROL, DATA
from .sweep import run_sweeps
from .tails import move_tails

#: Every rule, in the order tried on a node (rules of one head keep this order).
ALL_RULES: list[Rewrite] = [*GRAD_CALLS, *INLINE, *CONTROL, *DATA, *GRAD, *ALGEBRA, *FOLD]

RULE_GROUPS: dict[str, list[Rewrite]] = {
    "inline": INLINE,
    "fold": FOLD,
    "algebra": ALGEBRA,
    "data": DATA,
    "control": CONTROL,
    "grad": [*GRAD_CALLS, *GRAD],
}


@dataclass
class Pass:
    """A named pass: `run` transforms a program (given by its root graph) and returns it."""

    name: str
    run: Callable[[Graph], Graph]
    doc: str = ""
    #: How often each rule fired in the last run (rewrite passes only).
    stats: dict[str, int] = field(default_factory=dict)

    def __call__(self, graph: Graph) -> Graph:
        return self.run(graph)


def rewrite_pass(name: str, rules: Iterable[Rewrite], *, cse: bool = False, doc: str = "") -> Pass:
    """Make a pass that sweeps the program with `rules` (and CSE) until nothing changes."""
    matcher = Matcher(rules)
    p = Pass(
        name, lambda g: g, doc or f"rewrite with the rules {', '.join(r.name for r in rules)}"
    )

    def run(graph: Graph) -> Graph:
        p.stats = dict(run_sweeps(graph, matcher, cse=cse))
        return graph

    p.run = run
    return p


def simplify_pass() -> Pass:
    """Every rewrite rule and CSE, swept together to a fixpoint."""
    return rewrite_pass("simplify", ALL_RULES, cse=True, doc="every rule and CSE, to a fixpoint")


def constants_again_pass() -> Pass:
    """Constant parameters that simplification exposed, simplified in turn where any.

    A loop's backward pass learns that a variable is a constant (the zero sensitivity of a
    range) once the backpropagators are inlined; its uses fold (``Range(0, 0, 0)``) once it
    is one.
    """
    simplify = simplify_pass()
    p = Pass("constants+simplify", lambda g: g, "constant parameters, then every rule if any")

    def run(graph: Graph) -> Graph:
        stats: dict[str, int] = {}
        propagate_constants(graph, stats)
        if stats["constants"]:
            simplify.run(graph)
            stats.update(simplify.stats)
        p.stats = stats
        return graph

    p.run = run
    return p


#: One pass per group of rules, plus CSE, DCE and lifting: for tests and experiments.
PASS_LIBRARY: dict[str, Pass] = {
    **{name: rewrite_pass(name, rules) for name, rules in RULE_GROUPS.items()},
    "cse": rewrite_pass("cse", [], cse=True, doc="merge equal pure computations"),
    "simplify": simplify_pass(),
    "constants": Pass(
        "constants", propagate_constants, "parameters that always get one constant become it"
    ),
    "constants+simplify": constants_again_pass(),
    "dce": Pass("dce", dce, "remove parameters nobody reads (loop-carried ones included)"),
    "flatten": Pass(
        "flatten", flatten_parameters, "tuple and record parameters passed as their elements"
    ),
    "hoist": Pass(
        "hoist",
        lambda g: hoist_backward(g, PASS_LIBRARY["hoist"].stats),
        "backpropagators' arithmetic on their free values computed in the forward pass",
    ),
    "defunc": Pass(
        "defunc", defunctionalize, "stacks of closures become stacks of their free values"
    ),
    "tails": Pass(
        "tails", move_tails, "what a graph does after its last conditional moves into the branches"
    ),
    "retfunc": Pass(
        "retfunc", return_values, "loops return values, not closures and environments"
    ),
    "unread": Pass("unread", drop_unread_results, "loops return only the values read"),
    "lift": Pass("lift", lambda_lift, "lambda lifting of closures only called directly"),
    "inplace": Pass(
        "inplace", accumulate_in_place, "sensitivities of arrays with one owner updated in place"
    ),
}

#: The default pipeline.
PASSES: list[Pass] = [
    simplify_pass(),
    PASS_LIBRARY["hoist"],
    PASS_LIBRARY["defunc"],
    PASS_LIBRARY["tails"],
    PASS_LIBRARY["flatten"],
    PASS_LIBRARY["constants"],
    PASS_LIBRARY["dce"],
    PASS_LIBRARY["retfunc"],
    simplify_pass(),
    PASS_LIBRARY["constants+simplify"],
    PASS_LIBRARY["dce"],
    PASS_LIBRARY["unread"],
    PASS_LIBRARY["lift"],
    PASS_LIBRARY["inplace"],
]


#: The passes run on a gradient before it is differentiated again: ``defunc`` turns the stacks
#: of a loop's backpropagators into stacks of numbers, ``tails`` merges the backpropagator of an
#: ``if`` with its branch's.
BETWEEN_ORDERS: list[Pass] = [
    simplify_pass(),
    PASS_LIBRARY["defunc"],
    PASS_LIBRARY["tails"],
    simplify_pass(),
]


def simplify_gradient(graph: Graph) -> Graph:
    """A simplified copy of the gradient program `graph`, which is differentiated again.

    Its closures, environments, tuples of sensitivities and zeros are gone, so that the next
    order differentiates its arithmetic, not its plumbing (`myia.grad.api.simplified`).
    """
    return optimize(clone(graph), BETWEEN_ORDERS)


def closures_to_values(root: Graph) -> Graph:
    """``defunc`` and ``retfunc`` from the innermost loop out, until no closure is left to do.

    A loop's stack is defunctionalized before the loop returns it (``retfunc``), and an
    outer loop's stack, whose closures close over an inner loop's backpropagator, after the
    inner loop returns that backpropagator's values instead.
    """
    for _ in range(16):
        changed = defunctionalized(root, functions=False)
        changed += returned_values(root, fn_stacks=False)
        if not changed:
            break
    return root


#: The passes run on a program before it is batched (``vmap``): the stacks and the results of
#: its loops hold values, not closures (the batching transform takes values, not functions).
BEFORE_VMAP: list[Pass] = [
    simplify_pass(),
    Pass("values", closures_to_values, "stacks and loops of closures become their values"),
    PASS_LIBRARY["tails"],
    simplify_pass(),
]


def simplify_for_vmap(graph: Graph) -> Graph:
    """A simplified copy of `graph`, which is then batched (`myia.grad.batching`)."""
    return optimize(clone(graph), BEFORE_VMAP)


SIMPLIFY.update(gradient=simplify_gradient, vmap=simplify_for_vmap)


def _verify_enabled() -> bool:
    api = sys.modules.get("myia.api")
    return bool(getattr(api, "VERIFY_PASSES", False))


def run_passes(graph: Graph, passes: Iterable[Pass], *, verify: bool | None = None) -> Graph:
    """Run `passes` on `graph` in order, printing and verifying after each as configured."""
    from ..infer.verify_types import verify_types
    from ..ir.printer import print_graph
    from ..ir.verify import VerifyError

    if verify is None:
        verify = _verify_enabled()
    printing = os.environ.get("MYIA_PRINT_PASSES", "") not in ("", "0")
    for p in passes:
        t0 = time.perf_counter()
        graph = p.run(graph)
        dt = time.perf_counter() - t0
        if printing:
            stats = ", ".join(f"{k} {v}" for k, v in sorted(p.stats.items()))
            print(
                f"# ---- after pass {p.name} ({dt * 1000:.1f} ms){': ' + stats if stats else ''}"
            )
            print(print_graph(graph))
        if verify:
            try:
                verify_types(graph)
            except VerifyError as exc:
                raise VerifyError(f"after optimizer pass {p.name}: {exc}") from exc
    return graph


def optimize(graph: Graph, passes: Iterable[Pass] | None = None) -> Graph:
    """Optimize the specialized program `graph` with `passes` (default `PASSES`).

    The cyclic garbage collector is paused meanwhile: the optimizer allocates many small
    objects, each pass of the collector would walk the whole heap, and the nodes it drops
    are collected afterwards all the same.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return run_passes(graph, PASSES if passes is None else passes)
    finally:
        if enabled:
            gc.enable()

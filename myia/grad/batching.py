"""``vmap``: batching as a transformation of the typed graph, before running.

``vmap(f, in_axes, out_axes)(args)`` is a function value (`VmapSpec` at inference):

- at inference (`infer_vmap_call`), ``f`` is inferred on one example (each batched argument
  without its batch axis) and the result gets a batch axis at ``out_axes``;
- at specialization (`build_vmap_graph`), ``f``'s specialized graph, simplified, is batched by
  `Batcher`, and the graph built is inferred and specialized in turn, so that ``vmap``
  composes with ``grad`` and with itself.

Each value of the per-example graph is either unbatched (the same for every example) or
batched, with its batch axis first (a batched scalar is an array of the batch size). A
primitive whose arguments are all unbatched is copied; otherwise its rule
(`myia.grad.batch_registry`) gives its batched form, or, without one, it runs once per example
in a compiled loop (`myia.grad.batch_lib.vmap_loop`). A branch on a batched condition computes
both sides and selects per example (the branches must be pure); a loop whose condition is
batched runs while some example is not done, and the examples that are keep their values. A
construct it cannot batch (a closure called as a value) makes the whole function run once per
example in a compiled loop.
"""

from __future__ import annotations

import copy
from typing import Any

from ..abstract.data import (
    ENV,
    NONE,
    AbstractArray,
    AbstractDict,
    AbstractKeyword,
    AbstractList,
    AbstractScalar,
    AbstractStack,
    AbstractTuple,
    AbstractValue,
    GraphFunction,
    PartialFunction,
    has_unknown_dims,
    show,
)
from ..abstract.lattice import broaden
from ..errors import MyiaTypeError
from ..ir.analysis import Scopes, reachable_graphs, toposort
from ..ir.node import Apply, Constant, Graph, Node
from ..primitives import P, Primitive
from ..primitives.batching import JvpSpec, TransformSpec, VmapSpec
from ..primitives.grad import NO_ZERO, zero_of_type
from . import batch_rules  # noqa: F401  (registers the rules)
from .batch_lib import vmap_loop, vmap_loop_checked
from .batch_registry import BATCH_RULES
from .batch_types import (
    _check_axes,
    _per_element,
    as_called,
    batched_type,
    example_types,
    in_axes_of,
    keyword_spec,
    out_axes_of,
    parts,
)
from .closures import (
    fixed_arity,
    gradient_of_lifted,
    lifted_closure,
    partial_spec,
    pass_free_variables,
    star_parameter,
    with_defaults,
)


def infer_vmap_call(inferrer: Any, spec: VmapSpec, args: list[AbstractValue]) -> AbstractValue:
    """The type of ``vmap(f)(args)``: ``f``'s result on one example, with a batch axis."""
    if isinstance(spec.fn, PartialFunction):  # its arguments bound, not batched
        spec, args = partial_spec(spec, args)
    target = keyword_target(spec.fn)
    if target is not None and any(isinstance(a, AbstractKeyword) for a in args):
        from ..infer.calls import bind_graph_args

        keys = tuple(a.key for a in args if isinstance(a, AbstractKeyword))
        npos = len(args) - len(keys)
        spec = keyword_spec(spec, target.graph, npos, keys)
        args = bind_graph_args(inferrer, target, args)
    examples, n = example_types(spec, args)
    if _fn_value(Graph(), spec.fn) is None and closure_inside(spec.fn) is None:
        raise MyiaTypeError(
            "vmap of a gradient or vmap of a function that reads variables of an enclosing "
            "function is not supported yet: define it at the top level and pass those "
            "values as arguments (with in_axes None)"
        )
    result = inferrer.call(spec.fn, as_called(spec.fn, examples))
    out_axes = out_axes_of(spec, result)
    _check_axes(out_axes, "out_axes")
    return batched_type(result, n, out_axes)


def _sig(e: Any, ax: Any) -> Any:
    """The batchedness of an argument of per-example type `e` batched on axes `ax`."""
    if isinstance(ax, tuple):
        return tuple(_sig(x, a) for x, a in zip(_per_element(e, ax, "in_axes"), ax))
    return False if ax is None else full(e)


# Batchedness ----------------------------------------------------------------------------------
#
# Whether a value is batched: False (nothing in it is), True (an array or scalar batched on
# axis 0), or a tuple of those for a tuple whose elements differ.


def full(a: Any) -> Any:
    """The batchedness of a batched value of per-example type `a`: every array and scalar."""
    if isinstance(a, (AbstractArray, AbstractScalar, AbstractStack)) or a is ENV:
        return True  # (a stack's or an environment's elements are batched: `Batcher.full`)
    ps = parts(a)
    return tuple(full(e) for _, _, e in ps) if ps is not None else False


def batched(bt: Any) -> bool:
    """Whether anything in a value of batchedness `bt` is batched."""
    return any(batched(b) for b in bt) if isinstance(bt, tuple) else bool(bt)


def element(bt: Any, i: int) -> Any:
    return bt[i] if isinstance(bt, tuple) else bt


def rank(a: Any) -> int:
    """The number of dimensions of one example of type `a` (0 for scalars)."""
    return len(a.shape) if isinstance(a, AbstractArray) else 0


def rebuild(g: Graph, a: Any, nodes: list[Node]) -> Node:
    """The tuple, dict or record of type `a` (its elements changed) made of `nodes` in `g`."""
    if isinstance(a, AbstractTuple):
        return g.apply(P.make_tuple, *nodes)
    if isinstance(a, AbstractDict):
        return g.apply(P.make_dict, a.keys, *nodes)
    return g.apply(P.make_record, a.cls, *nodes)


def _mapped(g: Graph, a: Any, f: Any, *vs: Node) -> Node:
    """``f(*elements, type)`` of each element of the tuples or records `vs` of type `a`."""
    return rebuild(
        g,
        a,
        [f(*(g.apply(get, v, key) for v in vs), e) for get, key, e in parts(a) or ()],
    )


def _join_bt(a: Any, b: Any) -> Any:
    """The batchedness batched where `a` or `b` is."""
    if a is True or b is True:
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return tuple(_join_bt(x, y) for x, y in zip(a, b))
    if isinstance(a, tuple):
        return a if not b else True
    if isinstance(b, tuple):
        return b if not a else True
    return bool(a or b)


#: The primitives making an empty stack or environment: batched, as every one (`Batcher.full`).
_NEW_STACKS = (P.stack_new, P.stack_of_functions, P.env_new)


class CannotBatch(Exception):
    """The function has a construct the batching transform does not batch."""


def reaches_effect(g: Graph) -> bool:
    """Whether `g`, or a graph it reaches, calls an effectful primitive (print, raise...)."""
    return any(
        n.is_apply
        and n.inputs[0].is_constant
        and isinstance(n.inputs[0].value, Primitive)
        and n.inputs[0].value.effect
        for h in reachable_graphs(g)
        for n in toposort(h)
    )


def _graph_switch(node: Apply) -> bool:
    """Whether `node` is ``switch(c, A, B)`` between graphs (batched where it is called)."""
    fn = node.inputs[0]
    return (
        fn.is_constant
        and fn.value is P.switch
        and all(b.is_constant and isinstance(b.value, Graph) for b in node.inputs[2:])
    )


# The transform --------------------------------------------------------------------------------


class Batcher:
    """Builds the batched graphs of the graphs of a specialized program, for a batch of `n`."""

    def __init__(self, n: int, stack_bts: dict[Any, Any] | None = None):
        self.n = n
        self.done: dict[Any, Graph] = {}
        #: The batchedness of the elements of the stacks of each type (`stack_element`)
        self.stack_bts: dict[Any, Any] = dict(stack_bts or {})
        self.stacks_used: set[Any] = set()
        self.again = False  # a stack's elements turned out more batched than assumed
        self.graph: Graph = None  # type: ignore[assignment]  # the graph being built
        self.source: Node | None = None  # the node being batched

    def apply(self, fn: Any, *args: Any) -> Apply:
        """A node of the graph being built, derived from the node being batched.

        (A run-time error of the batched node shows the user's line of `source`.)
        """
        new = self.graph.apply(fn, *args)
        if self.source is not None:
            new.debug.origin = self.source.debug
        return new

    def batch(
        self, g: Graph, sig: tuple[Any, ...], tail_of: Graph | None = None, out_axes: Any = 0
    ) -> Graph:
        """The batched graph of `g`, its parameters batched as `sig`, its result fully batched.

        With `tail_of`, `g` ends with a tail call to `tail_of` (a loop's body): the batched
        graph returns the tuple of that call's arguments instead (the next state). The parts
        of the result whose `out_axes` are None are left unbatched (they must not be batched).
        """
        key = (g, sig, tail_of, out_axes)
        if key in self.done:
            return self.done[key]
        ng = self.done[key] = Graph(f"vmap({g.name})")
        ng.debug.origin = g.debug
        outer, self.graph = self.graph, ng
        source = self.source
        try:
            env: dict[Node, tuple[Node, Any]] = {}
            for p, bt in zip(g.parameters, sig):
                env[p] = (ng.add_parameter(p.debug.find_name()), bt)
            out = g.output
            assert out is not None
            if tail_of is not None:
                # The next iteration, after the statements (`seq`) computed for every example.
                while out.is_apply and out.inputs[0].is_constant and out.inputs[0].value is P.seq:
                    out = out.inputs[2]
                if not (
                    out.is_apply and out.inputs[0].is_constant and out.inputs[0].value is tail_of
                ):
                    raise CannotBatch("a loop body that does not end with the next iteration")
            for node in toposort(g):
                if node.is_apply and node not in (out, g.output) and not _graph_switch(node):
                    self.source = node
                    env[node] = self.node(g, node, env)
            self.source = out
            if tail_of is not None:
                args = [self.value(i, env) for i in out.inputs[1:]]
                ng.output = self.apply(
                    P.make_tuple,
                    *[self.full(v, bt, i.abstract) for (v, bt), i in zip(args, out.inputs[1:])],
                )
            else:
                v, bt = self.value(out, env) if not out.is_apply else self.node(g, out, env)
                ng.output = self.full_out(v, bt, out.abstract, out_axes)
        finally:
            self.graph, self.source = outer, source
        return ng

    def value(self, node: Node, env: dict[Node, tuple[Node, Any]]) -> tuple[Node, Any]:
        if node in env:
            return env[node]
        if node.is_constant:
            if isinstance(node.value, Graph):
                raise CannotBatch("a function used as a value")
            return Constant(node.value), False
        raise CannotBatch("a free variable")

    def full(self, v: Node, bt: Any, a: Any) -> Node:
        """`v` (batchedness `bt`, per-example type `a`) with every array and scalar batched."""
        if bt is True or bt == full(a):
            return v
        ps = parts(a)
        if ps is not None:
            bts = [element(bt, i) for i in range(len(ps))]
            return rebuild(
                self.graph,
                a,
                [self.full(self.apply(get, v, k), b, e) for (get, k, e), b in zip(ps, bts)],
            )
        if isinstance(a, AbstractStack) or a is ENV:
            # Every stack or environment made in the batched program holds batched values
            # (a loop's stack gets its first element in one iteration, batched or not, and
            # the others in the next): only one made empty is batched as it is.
            if v.is_apply and v.inputs[0].is_constant and v.inputs[0].value in _NEW_STACKS:
                return v
            raise CannotBatch(f"a {show(a)} of values that are not batched")
        if not isinstance(a, (AbstractArray, AbstractScalar)):
            return v
        shape = a.shape if isinstance(a, AbstractArray) else ()
        if any(d is None for d in shape):
            raise CannotBatch("an unbatched array of unknown shape to broadcast")
        return self.apply(P.broadcast_to, v, (self.n, *shape))

    def widen(self, v: Node, bt: Any, target: Any, a: Any) -> Node:
        """`v` (batchedness `bt`, per-example type `a`) batched as `target` (at least `bt`)."""
        if bt == target or not batched(target):
            return v
        if target is True or target == full(a):
            return self.full(v, bt, a)
        ps = parts(a)
        assert ps is not None and isinstance(target, tuple)
        return rebuild(
            self.graph,
            a,
            [
                self.widen(self.apply(get, v, k), element(bt, i), element(target, i), e)
                for i, (get, k, e) in enumerate(ps)
            ],
        )

    def stack_element(self, stack: Any, bt: Any = None) -> Any:
        """The batchedness of the elements of stacks of type `stack`, joined with `bt`.

        Stacks of one type (their values broadened) hold elements batched alike, so that a
        value popped has the batchedness of every value pushed there: a tag of the branch
        taken, pushed unbatched, stays unbatched. When a push makes the elements of stacks
        already pushed or popped more batched, the batching runs again with them so (`again`).
        """
        key = broaden(stack.element)
        old = self.stack_bts.get(key)
        new = old if bt is None else bt if old is None else _join_bt(old, bt)
        if new is None:
            new = False
        if new != old:
            self.stack_bts[key] = new
            if key in self.stacks_used:
                self.again = True
        self.stacks_used.add(key)
        return new

    def full_out(self, v: Node, bt: Any, a: Any, ax: Any) -> Node:
        """`full`, but the parts of `v` of axis None (in the tree of axes `ax`) unbatched."""
        if ax is None:
            if batched(bt):
                raise MyiaTypeError(
                    f"vmap: out_axes None for a result of type {show(a)} that depends on the "
                    "batched arguments (None is for results that are not batched)"
                )
            return v
        ps = parts(a)
        if isinstance(ax, tuple) and ps is not None and len(ps) == len(ax):
            return rebuild(
                self.graph,
                a,
                [
                    self.full_out(self.apply(get, v, k), element(bt, i), e, x)
                    for i, ((get, k, e), x) in enumerate(zip(ps, ax))
                ],
            )
        return self.full(v, bt, a)

    def node(self, g: Graph, node: Apply, env: dict[Node, tuple[Node, Any]]) -> tuple[Node, Any]:
        """The batched node of `node` and its batchedness."""
        fn = node.inputs[0]
        if fn.is_apply and fn.inputs[0].is_constant and fn.inputs[0].value is P.switch:
            return self.switch_call(g, node, fn, env)
        args = [self.value(i, env) for i in node.inputs[1:]]
        if not fn.is_constant:
            raise CannotBatch("a call of a function value")
        f = fn.value
        if f in _NEW_STACKS:
            return self.apply(f, *[v for v, _ in args]), True
        if not any(batched(bt) for _, bt in args):
            return self.apply(f, *[v for v, _ in args]), False
        if isinstance(f, Graph):
            callee = self.batch(f, tuple(bt for _, bt in args))
            return self.apply(callee, *[v for v, _ in args]), full(node.abstract)
        if not isinstance(f, Primitive):
            raise CannotBatch(f"a call of {f!r}")
        if f is P.switch:
            return self.select(args[0], args[1:], node.inputs[2:], node.abstract)
        if _holds_list(node.abstract):
            # A list of batched values (``list(xs)`` of a tuple of batched leaves: ``jacfwd``
            # with respect to a list) has no batched form: once per example.
            raise CannotBatch("a list made of batched values")
        if f is P.make_slice and any(batched(bt) for _, bt in args):
            # NumPy's ``x[i:i + 3]`` may be shorter for some examples: once per example.
            raise CannotBatch("a slice whose bounds vary per example")
        rule = BATCH_RULES.get(f)
        out = rule(self, node, [v for v, _ in args], [bt for _, bt in args]) if rule else None
        if out is not None:
            return out
        if has_unknown_dims(node.abstract):
            # ``x[x > 0]``: each example's result may have its own shape, which no batch of
            # them has: the function runs once per example (its results stacked must agree).
            raise CannotBatch("a result whose shape may vary per example")
        return self.loop(f, node, args)

    def all_full(self, args: list[tuple[Node, Any]], node: Apply) -> list[Node]:
        return [self.full(v, bt, i.abstract) for (v, bt), i in zip(args, node.inputs[1:])]

    def loop(self, f: Any, node: Apply, args: list[tuple[Node, Any]]) -> tuple[Node, Any]:
        """``f`` on each example, in a compiled loop: for a primitive without a rule.

        The loop calls a graph applying ``f`` to the constant arguments in place (an axis
        stays a constant) and to the others as parameters.
        """
        one = Graph(f"{f}:example")
        inputs: list[Node] = []
        axes: list[int | None] = []
        vals: list[Node] = []
        for (v, bt), i in zip(args, node.inputs[1:]):
            if not batched(bt) and v.is_constant:
                inputs.append(Constant(v.value))
                continue
            inputs.append(one.add_parameter())
            axes.append(0 if batched(bt) else None)
            vals.append(self.full(v, bt, i.abstract) if batched(bt) else v)
        one.output = one.apply(f, *inputs)
        one.output.debug.origin = node.debug
        out = _looped(self.graph, one, tuple(axes), vals, self.n, node.abstract)
        return out, full(node.abstract)

    def select(self, c: tuple[Node, Any], xs: list[tuple[Node, Any]], nodes: Any, a: Any):
        """``x if c else y`` (``switch`` on values), per example where `c` is batched."""
        (cv, cbt), (x, xbt), (y, ybt) = c, xs[0], xs[1]
        if not cbt:
            if xbt == ybt:
                return self.apply(P.switch, cv, x, y), xbt
            return self.apply(P.switch, cv, self.full(x, xbt, a), self.full(y, ybt, a)), full(a)
        return self.where(cv, self.full(x, xbt, a), self.full(y, ybt, a), a), full(a)

    def where(self, c: Node, x: Node, y: Node, a: Any) -> Node:
        """Per example (`c` batched, per-example scalar), `x` where `c` holds, else `y`."""
        if parts(a) is not None:
            return _mapped(self.graph, a, lambda x, y, e: self.where(c, x, y, e), x, y)
        if not isinstance(a, (AbstractArray, AbstractScalar)):
            if x is y or a == NONE or (x.is_constant and y.is_constant and x.value is y.value):
                return x  # the same value either way
            # (An environment of sensitivities, a function, a stack: no value per example.)
            raise CannotBatch(f"a choice per example between two values of type {show(a)}")
        r = rank(a)
        cc = self.apply(P.expand_dims, c, tuple(range(1, r + 1))) if r else c
        return self.apply(P.where, cc, x, y)

    def switch_call(self, g: Graph, node: Apply, sw: Apply, env: Any) -> tuple[Node, Any]:
        """``switch(c, A, B)(args)``: a branch, or a loop's test when `A` or `B` continues `g`."""
        c, bt = self.value(sw.inputs[1], env)
        branches = [b.value for b in sw.inputs[2:]]
        if not all(b.is_constant and isinstance(b.value, Graph) for b in sw.inputs[2:]):
            raise CannotBatch("a switch between function values")
        args = [self.value(i, env) for i in node.inputs[1:]]
        sig = tuple(bt for _, bt in args)
        vals = [v for v, _ in args]
        if not bt:
            a, b = (self.batch(h, sig) for h in branches)
            return self.apply(self.apply(P.switch, c, a, b), *vals), full(node.abstract)
        loops = [g in reachable_graphs(h) for h in branches]
        if not any(loops):
            if any(reaches_effect(h) for h in branches):
                raise CannotBatch("a branch with effects on a batched condition")
            return self.branches(c, branches, args, node), full(node.abstract)
        if all(loops):
            raise CannotBatch("both branches continue the loop")
        return self.masked_loop(g, c, branches, loops.index(True), args, env, node)

    def branches(self, c: Node, branches: list[Graph], args: list[Any], node: Apply) -> Node:
        """``switch(c, A, B)(args)`` on a batched `c`: each side where some example takes it.

        When every example takes one side, only that side runs. Otherwise both run and
        `where` picks each example's; each side runs on the arguments of its own examples,
        the others' replaced by those of its first example (as the "double where"): a side
        never sees arguments outside its domain (``sqrt`` of a negative, an index out of
        range), so its values and its derivatives are finite where they are discarded.
        """
        sig = tuple(bt for _, bt in args)
        a, b = (self.batch(h, sig) for h in branches)
        names = [p.debug.find_name() for p in branches[0].parameters]
        cases = []
        for kind in ("a", "b", "mixed"):
            h = Graph(f"{branches[0].name}:{kind}")
            hc = h.add_parameter("cond")
            ps = [h.add_parameter(n) for n in names]
            if kind == "mixed":
                outer, self.graph = self.graph, h
                try:
                    ya = self.apply(a, *self.own(hc, ps, args, node))
                    yb = self.apply(b, *self.own(self.apply(P.logical_not, hc), ps, args, node))
                    h.output = self.where(hc, ya, yb, node.abstract)
                finally:
                    self.graph = outer
            else:
                h.output = h.apply(a if kind == "a" else b, *ps)
            cases.append(h)
        some = Graph(f"{branches[0].name}:some")
        sc = some.add_parameter("cond")
        sps = [some.add_parameter(n) for n in names]
        if self.n == 0:  # no example takes either side: the results are empty
            return self.apply(cases[0], c, *[v for v, _ in args])
        anyc = _any(some, sc)
        some.output = some.apply(some.apply(P.switch, anyc, cases[2], cases[1]), sc, *sps)
        every = _any(self.graph, self.apply(P.logical_not, c), negated=True)
        return self.apply(self.apply(P.switch, every, cases[0], some), c, *[v for v, _ in args])

    def own(self, c: Node, ps: list[Node], args: list[Any], node: Apply) -> list[Node]:
        """Parameters `ps`, in the examples where `c` fails, replaced by its first example's."""
        k = self.apply(P.argmax, c, None, False)
        out = []
        for p, (_, bt), i in zip(ps, args, node.inputs[1:]):
            out.append(p if not batched(bt) else self.substitute(c, k, p, bt, i.abstract))
        return out

    def substitute(self, c: Node, k: Node, v: Node, bt: Any, a: Any) -> Node:
        if bt is True:
            return self.where(c, v, self.apply(P.array_getitem, v, k), a)
        if not bt:
            return v
        ps = parts(a) or []
        return rebuild(
            self.graph,
            a,
            [
                self.substitute(c, k, self.apply(get, v, key), element(bt, i), e)
                for i, (get, key, e) in enumerate(ps)
            ],
        )

    def masked_loop(self, g, c, branches, k, args, env, node) -> tuple[Node, Any]:
        """The test of a loop on a batched condition: run while some example continues.

        ``g(s) = switch(c, body, after)(args)`` with ``body`` ending with ``g(s')`` (or
        ``body`` is ``g``, and ``args`` are ``s'``): while some example continues, the
        batched ``g`` computes ``s'`` for every example, keeps ``s`` where the example is
        done, and goes on; then ``after`` runs once on every example. The body runs on the
        arguments of the examples that continue, those of the examples that are done
        replaced by the first continuing example's (as `branches`' sides): it never sees a
        state that Python's loop did not compute, so Python's errors are raised where an
        example that continues raises them (`P.python_errors`) and never for one that is done,
        and its values and derivatives are finite where they are discarded.
        """
        body, after = branches[k], branches[1 - k]
        if reaches_effect(body):
            raise CannotBatch("a loop with effects on a batched condition")
        going = c if k == 0 else self.apply(P.logical_not, c)
        sig = tuple(bt for _, bt in args)
        vals = [v for v, _ in args]
        nstate = len(g.parameters)
        gsig = tuple(full(p.abstract) for p in g.parameters)
        state = [self.full(*env[p], p.abstract) for p in g.parameters]
        # The branches' parameters: each node passed once (a state passed on unchanged is
        # then selected from itself, where(c, s, s) => s).
        passed = list(dict.fromkeys([*state, *vals, going]))
        again = Graph(f"{g.name}:again")
        done = Graph(f"{g.name}:done")
        for h in (again, done):
            for v in passed:
                h.add_parameter(v.debug.find_name() if isinstance(v, Apply) else None)

        def inside(h: Graph, nodes: list[Node]) -> list[Node]:
            return [h.parameters[passed.index(v)] for v in nodes]

        outer, self.graph = self.graph, again
        try:
            hs, hv, (hgoing,) = inside(again, state), inside(again, vals), inside(again, [going])
            if body is g:  # (the next state, computed before the test)
                steps = [self.full(v, bt, p.abstract) for v, bt, p in zip(hv, sig, g.parameters)]
            else:
                bg = self.batch(body, sig, tail_of=g)
                step = self.apply(bg, *self.own(hgoing, hv, args, node))
                steps = [
                    self._passed_on(bg, i, hv) or self.apply(P.tuple_getitem, step, i)
                    for i in range(nstate)
                ]
            nxt = [
                self.where(hgoing, x, s, p.abstract) for x, s, p in zip(steps, hs, g.parameters)
            ]
            again.output = self.apply(self.batch(g, gsig), *nxt)
        finally:
            self.graph = outer
        done.output = done.apply(self.batch(after, sig), *inside(done, vals))
        if self.n == 0:  # no example continues (nor has a first example)
            return self.apply(done, *passed), full(node.abstract)
        anyc = _any(self.graph, going)
        return self.apply(self.apply(P.switch, anyc, again, done), *passed), full(node.abstract)

    @staticmethod
    def _passed_on(bg: Graph, i: int, args: list[Node]) -> Node | None:
        """``args[j]``, where the batched loop body `bg` passes its parameter `j` on unchanged.

        (The element `i` of the next state is then that argument, not the one substituted.)
        """
        out = bg.output.inputs[i + 1]
        return args[bg.parameters.index(out)] if out in bg.parameters else None


def _none_on_values(a: Any, ax: Any) -> bool:
    """Whether the tree of axes `ax` has None for an array or a scalar of type `a`."""
    if ax is None:
        return full(a) is not False
    ps = parts(a)
    if isinstance(ax, tuple) and ps is not None and len(ps) == len(ax):
        return any(_none_on_values(e, x) for (_, _, e), x in zip(ps, ax))
    return False


def _looped(g: Graph, f: Any, axes: tuple[Any, ...], vals: list[Node], n: int, a: Any) -> Node:
    """`vmap_loop` of `f` (results of type `a`): empty results for an empty batch.

    No example to run: `f` is not called (its first example, which gives the type of the
    results in the loop, does not exist).
    """
    if n == 0:
        empty = zero_of_type(batched_type(a, 0, 0))
        if empty is not NO_ZERO:
            return Constant(copy.deepcopy(empty))  # not the shared (read-only) zeros
    loop = vmap_loop_checked if has_unknown_dims(a) else vmap_loop
    return g.apply(loop, f, axes, g.apply(P.make_tuple, *vals), n)


def _any(g: Graph, c: Node, negated: bool = False) -> Node:
    """Whether some example's `c` holds (with `negated`: none does), for any batch size."""
    count = g.apply(P.reduce_sum, c, None, False, None)
    return g.apply(P.eq if negated else P.gt, count, 0)


# The graph of ``vmap(f)(args)`` ---------------------------------------------------------------


def _moved(g: Graph, v: Node, a: Any, src: Any, dst: Any) -> Node:
    """`v` (type `a`) with axis `src` of each array moved to `dst` (trees of axes: per element)."""
    if isinstance(src, tuple) or isinstance(dst, tuple):
        n = len(parts(a) or ())
        srcs = src if isinstance(src, tuple) else (src,) * n
        dsts = dst if isinstance(dst, tuple) else (dst,) * n
        steps = iter(zip(srcs, dsts))
        return _mapped(g, a, lambda x, e: _moved(g, x, e, *next(steps)), v)
    if src is None or dst is None:
        return v
    if parts(a) is not None:
        return _mapped(g, a, lambda x, e: _moved(g, x, e, src, dst), v)
    if not isinstance(a, AbstractArray) or src % len(a.shape) == dst % len(a.shape):
        return v
    return g.apply(P.moveaxis, v, src, dst)


def _simplified(primal: Graph) -> Graph:
    """A simplified copy of `primal`: its calls inlined, its plumbing gone."""
    from .api import SIMPLIFY

    if not SIMPLIFY or Scopes(primal).free_variables_total[primal]:
        return primal
    return SIMPLIFY["vmap"](primal)


def build_vmap_graph(primal: Graph, spec: VmapSpec, args: list[AbstractValue]) -> Graph:
    """The graph computing ``vmap(primal)`` on arguments of types `args` (untyped)."""
    spec = VmapSpec(spec.fn, spec.in_axes, out_axes_of(spec, primal.output.abstract))
    axes = in_axes_of(spec, args)
    examples, n = example_types(spec, args)
    g = Graph(spec.name)
    params = [g.add_parameter(p.debug.find_name()) for p in primal.parameters]
    moved = [_moved(g, p, a, ax, 0) for p, a, ax in zip(params, args, axes)]
    if n is None:
        raise MyiaTypeError("vmap: the size of the batch must be known at compile time")
    sig = tuple(_sig(e, ax) for e, ax in zip(examples, axes))
    batcher = Batcher(n)
    try:
        simple = _simplified(primal)
        for _ in range(16):
            batched_primal = batcher.batch(simple, sig, None, spec.out_axes)
            if not batcher.again:
                break
            batcher = Batcher(n, batcher.stack_bts)
        else:
            raise CannotBatch("stacks whose elements are batched differently each time")
        out: Node = g.apply(batched_primal, *moved)
    except CannotBatch:
        if _none_on_values(primal.output.abstract, spec.out_axes):
            raise MyiaTypeError(
                "vmap: out_axes None where the function runs once per example (its control "
                "flow cannot be batched): return the unbatched results from outside vmap"
            ) from None
        # Once per example: the arguments batched in part are batched in whole.
        batcher.graph = g
        vals = [
            batcher.full(v, bt, e) if batched(bt) else v for v, bt, e in zip(moved, sig, examples)
        ]
        summed = _summed_gradient(g, spec, vals, sig, examples, n)
        if summed is not None:
            out = summed
        else:
            markers = tuple(0 if batched(bt) else None for bt in sig)
            out = _looped(g, primal, markers, vals, n, primal.output.abstract)
    result = primal.output.abstract
    g.output = _moved(g, out, batched_type(result, n, 0), 0, spec.out_axes)
    return g


def _summed_gradient(
    g: Graph, spec: VmapSpec, vals: list[Node], sig: Any, examples: Any, n: int
) -> Node | None:
    """``vmap(grad(f))`` as the gradient of the sum of the batched losses (None if not one).

    The examples are independent: the gradient of ``sum_i f(x_i)`` with respect to the
    batch ``x`` is the batch of the gradients of ``f`` at each ``x_i``. An unbatched argument
    differentiated is broadcast first, one copy per example, whose gradients are then the
    examples' own. It serves where the gradient graph cannot be batched (the stack of a
    loop's gradient) while ``f`` can be: its loops are batched, then differentiated.
    """
    from ..primitives.grad import GradSpec
    from .api import positions, returns_tuple

    fn = spec.fn
    if not isinstance(fn, GradSpec) or fn.value or fn.aux or _fn_value(Graph(), fn.fn) is None:
        return None
    pos = positions(fn, len(vals))
    b = Batcher(n)
    b.graph = g
    args = [
        b.full(v, False, e) if i in pos and not batched(bt) else v
        for i, (v, bt, e) in enumerate(zip(vals, sig, examples))
    ]
    axes = tuple(0 if i in pos or batched(bt) else None for i, bt in enumerate(sig))
    loss = Graph(f"Σ{spec.name}")
    params = [loss.add_parameter(f"x{i}") for i in range(len(vals))]
    inner = _fn_value(loss, fn.fn)
    per_example = loss.apply(loss.apply(P.vmap_of, inner, axes, 0), *params)
    loss.output = loss.apply(P.reduce_sum, per_example, None, False, None)
    wrt = (tuple(pos),) if returns_tuple(fn) else (pos[0],)
    return g.apply(g.apply(P.grad_of, loss, wrt, False, False), *args)


def _fn_value(g: Graph, fn: Any) -> Node | None:
    """A node of `g` for function value `fn` (None where it is a closure).

    `fn` is a function that captures nothing, or a gradient or ``vmap`` of one.
    """
    from ..infer.fnvalues import _captures_nothing
    from ..primitives.grad import GradSpec

    if isinstance(fn, GraphFunction) and _captures_nothing(fn):
        return Constant(fn.graph)
    inner = _fn_value(g, fn.fn) if isinstance(fn, (GradSpec, TransformSpec)) else None
    if inner is None:
        return None
    if isinstance(fn, GradSpec):
        return g.apply(P.grad_of, inner, fn.wrt, fn.value, fn.aux)
    if isinstance(fn, JvpSpec):
        return g.apply(P.jvp_of, inner)
    return g.apply(P.vmap_of, inner, fn.in_axes, fn.out_axes)


def vmap_primal(spec: VmapSpec, examples: list[AbstractValue]) -> Graph:
    """The specialized graph of ``spec.fn`` on one example (a new, nested specialization)."""
    from ..infer.engine import Inferrer
    from ..infer.specialize import Specializer

    g = Graph(spec.name)
    params = [g.add_parameter(f"x{i}") for i in range(len(examples))]
    f = _fn_value(g, spec.fn)
    assert f is not None  # `infer_vmap_call` refused closures
    called = as_called(spec.fn, examples)
    sources = list(params)
    fg = getattr(spec.fn, "graph", None)
    if called is not examples and fg is not None and fg.flags.get("kwarg"):
        # ``**kwargs``: the last parameter is the dict of the keywords, each read from it.
        d = sources.pop()
        n = len(called) - len(sources)
        sources += [g.apply(P.dict_getitem, d, a.key) for a in called[len(called) - n :]]
    args = [
        g.apply(P.make_kwarg, a.key, p) if isinstance(a, AbstractKeyword) else p
        for p, a in zip(sources, called)
    ]
    g.output = g.apply(f, *args)
    nested = Inferrer()
    gctx, _ = nested.infer(g, tuple(examples))
    return Specializer(nested).run(gctx)


def keyword_target(fn: Any) -> GraphFunction | None:
    """The function whose parameters a call of `fn` binds keywords to, if any.

    `fn` itself, or the one `fn` is a gradient of: ``grad(f)(x, y=v)`` binds as ``f(x, y=v)``.
    """
    from ..primitives.grad import GradSpec

    while isinstance(fn, GradSpec):
        fn = fn.fn
    return fn if isinstance(fn, GraphFunction) else None


def closure_inside(fn: Any) -> GraphFunction | None:
    """The closure `fn` is, or the closure `fn` is the gradient of (``grad(clo)``), if any."""
    from ..primitives.grad import GradSpec

    if isinstance(fn, GradSpec) and not isinstance(fn.fn, GradSpec):
        fn = fn.fn
    return fn if is_closure(fn) else None


def is_closure(fn: Any) -> bool:
    """Whether function value `fn` reads variables of an enclosing function."""
    from ..infer.fnvalues import _captures_nothing

    return isinstance(fn, GraphFunction) and not _captures_nothing(fn)


def vmap_graph(
    spec: VmapSpec, args: list[AbstractValue], closure: Graph | None, call: Apply
) -> tuple[Graph, list[AbstractValue]]:
    """The graph of the call `call` of ``vmap(f)`` on `args`, and its argument types.

    A closure's specialization `closure` is lifted: its free variables become parameters
    that are not batched, and `call` passes them.
    """
    if closure is None:
        primal = vmap_primal(spec, example_types(spec, args)[0])
        return build_vmap_graph(primal, spec, args), args
    fvs = pass_free_variables(
        call,
        closure,
        "vmap of a closure called away from where it is defined: pass the values it reads "
        "as arguments (with in_axes None)",
    )
    lifted = lifted_closure(closure, fvs)
    kwarg = bool(getattr(spec.fn, "graph", closure).flags.get("kwarg"))
    k = star_parameter(closure, example_types(spec, args)[0], kwarg)
    if not is_closure(spec.fn):  # ``vmap(grad(clo))``: the gradient of the closure lifted
        lifted = gradient_of_lifted(with_defaults(lifted, len(args), spec.fn.fn), spec.fn)
    elif k is not None:
        # A closure taking ``*args`` (``jacfwd(f)`` of a closure `f`): its specialization
        # takes them as one tuple, which the free variables follow ("tuple indexing
        # expects a tuple", with no user line, before), after the dict of ``**kwargs``
        # if it takes them (empty: `keyword_spec` refuses keywords for it).
        lifted = fixed_arity(lifted, k, len(args), kwarg)
    else:
        lifted = with_defaults(lifted, len(args), spec.fn)
    axes = in_axes_of(spec, args) + (None,) * len(fvs)
    args = [*args, *(fv.abstract for fv in fvs)]
    return build_vmap_graph(lifted, VmapSpec(spec.fn, axes, spec.out_axes), args), args


def _holds_list(a: Any) -> bool:
    """Whether a value of type `a` is or holds a list."""
    if isinstance(a, AbstractList):
        return True
    ps = getattr(a, "elements", None) or getattr(a, "values", None)
    return isinstance(ps, tuple) and any(map(_holds_list, ps))

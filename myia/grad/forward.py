"""Forward mode: the tangent transform of typed graphs.

For a graph ``g(x1, ..., xn)``, ``tangent_graph(g)`` is a graph ``(x1, t1, ..., xn, tn)``
returning ``(value, tangent)``: the value of ``g`` and its derivative along the tangents
``t1, ..., tn`` of its parameters (a Jacobian-vector product). Arguments and tangents are
interleaved, so that a partial application of a transformed function binds both.

Every node of ``g`` gets a value and a tangent in the new graph:

- a primitive call computes its value as before, and its tangent by the primitive's rule
  (`myia.grad.registry`: a ``@jvp`` rule, a ``linear`` mark, or, failing those, a rule
  derived from its backpropagator: the gradient of ``<bprop(u), t>``, linear in ``u``);
- a call of a graph or of a function value calls its tangent graph on the values and
  tangents of the arguments: a tail call stays a tail call, so the tangent of a loop is a
  loop (no stack), and the tangent of a recursion a recursion;
- a function value is its tangent graph (a closure made in ``g`` is transformed with ``g``
  and reads the values and tangents of its free variables); its own tangent is an empty
  environment, the sensitivity type of a function;
- data structures have structured tangents: a tuple's is the tuple of its elements'.

Integers, booleans and values of primitives without derivative have zero tangents, as do
constants and values of enclosing graphs outside the transformed scope. The output is
untyped: it is inferred and specialized like any program, so that it can be differentiated
again (``grad`` of ``jvp``, ``jvp`` of ``grad``) or batched.
"""

from __future__ import annotations

from ..abstract.data import has_unknown_dims
from ..errors import MyiaTypeError
from ..frontend import parse
from ..ir.analysis import Scopes
from ..ir.node import Constant, DebugInfo, Graph, Node
from ..primitives import P, Primitive
from ..primitives.grad import NO_ZERO, no_gradient, sens_type, zero_of_type
from .jtransform import _closed_graph, _is_function
from .registry import BPROPS, JVPS, JVPS_ZERO, LINEAR, NONDIFFERENTIABLE

_tangents: dict[Graph, Graph] = {}


def tangent_graph(g: Graph, scopes: Scopes | None = None) -> Graph:
    """The tangent graph of specialized graph `g`: ``(x1, t1, ...) -> (value, tangent)``.

    `scopes`, if given, is a `Scopes` of the graphs being transformed (which the transform
    does not change) that `g` is added to: the graphs a transformed scope calls are
    transformed with the caller's, so that each graph is indexed once, not once per scope
    that reaches it (quadratic in the size of the program).
    """
    t = _tangents.get(g)
    if t is None:
        if g.flags.get("bprop") is not None:
            t = _tangents[g] = _custom_tangent(g)
            return t
        _ScopeTangent(g, scopes).run()
        t = _tangents[g]
    return t


def _custom_tangent(g: Graph) -> Graph:
    """The tangent graph of `g`, whose backpropagator the user gave (`custom_bprop`).

    Its tangent is the transpose of that backpropagator (`_derived`), so that forward and
    reverse mode agree on the derivative the user chose.
    """
    t = Graph()
    t.debug = DebugInfo(f"∂{g.name}", g.debug.find_location(), g.debug)
    params = [t.add_parameter(f"x{i}") for i in range(2 * len(g.parameters))]
    xs, ts = params[0::2], params[1::2]
    out = t.apply(g, *xs)
    d = _derived(t, parse(g.flags["bprop"]), xs, out, ts)
    t.output = t.apply(P.make_tuple, out, d)
    return t


class _ScopeTangent:
    """Transforms a graph and every graph nested in it, together."""

    def __init__(self, root: Graph, scopes: Scopes | None = None):
        if scopes is None:
            scopes = Scopes(root)
        else:
            scopes.add(root)
        self.scopes = scopes
        self.members = self.scopes.scope(root)
        self.graphs: dict[Graph, Graph] = {}
        self.values: dict[Node, Node] = {}
        self.tangents: dict[Node, Node] = {}
        #: Graph calls, to the call of their tangent graph (which returns the pair).
        self.pairs: dict[Node, Node] = {}
        #: Tangents known to be zero, for which no rule is applied.
        self.zeros: set[Node] = set()

    def run(self) -> None:
        for g in self.members:
            t = Graph()
            t.debug = DebugInfo(f"∂{g.name}", g.debug.find_location(), g.debug)
            if g.flags.get("user_function"):  # its tail calls count levels of recursion
                t.flags["user_function"] = True
            self.graphs[g] = _tangents[g] = t
        for g in self.members:
            self.build(g)

    def build(self, g: Graph) -> None:
        t = self.graphs[g]
        for p in g.parameters:
            self.values[p] = t.add_parameter(debug=p.debug.derive())
            dp = t.add_parameter(f"d{p.debug.find_name() or ''}")
            if _is_function(p.abstract) or no_gradient(p.abstract):
                dp = self.zero(p, t)  # what the caller passes is zero
            self.tangents[p] = dp
        types = [p.abstract for p in g.parameters]
        if any(a is not None and has_unknown_dims(a) for a in types):
            t.flags["param_types"] = tuple(x for a in types for x in (a, sens_type(a)))
        from .jtransform import _sites

        for node in self.scopes.toposort(g):
            if node.is_apply:
                _sites.append((g.name, node.debug.find_location()))  # the line of an error
                try:
                    self.apply(node, t)
                finally:
                    _sites.pop()
        assert g.output is not None
        t.output = self.pair(g.output, t)

    # References -----------------------------------------------------------------------------

    def value(self, node: Node, t: Graph) -> Node:
        """The value of `node` (an input of a node of a member) in the tangent graphs."""
        if node.is_constant:
            v = node.value
            if isinstance(v, Graph):
                t_v = self.graphs.get(v) or tangent_graph(v, self.scopes)
                return Constant(t_v, node.debug.derive())
            if isinstance(v, Primitive):
                raise MyiaTypeError(
                    f"jvp of a program that passes primitive {v.name} as a value is not "
                    "supported: wrap it in a function"
                )
            return Constant(v, node.debug.derive())
        if node in self.values:
            return self.values[node]
        # A free variable from outside the transformed scope: a constant of the tangent.
        if _is_function(node.abstract):
            closed = _closed_graph(node.abstract)
            if closed is None:
                from .jtransform import free_function_frames, free_function_message

                raise MyiaTypeError(
                    free_function_message("jvp of", node), free_function_frames(t, node)
                )
            return Constant(tangent_graph(closed, self.scopes), node.debug.derive())
        return node

    def tangent(self, node: Node, t: Graph) -> Node:
        """The tangent of `node`: zero for constants and values from outside the scope."""
        d = self.tangents.get(node)
        if d is None:
            d = self.zero(node, t)
        return d

    def zero(self, node: Node, t: Graph) -> Node:
        """A zero tangent for `node`, in the type of its tangents."""
        a = node.abstract
        if _is_function(a):
            z: Node = t.apply(P.env_new)
        else:
            v = zero_of_type(a) if a is not None else NO_ZERO
            if v is not NO_ZERO:
                z = Constant(v)
            else:
                z = t.apply(P.gmaterialize, t.apply(P.gzeros, self.value(node, t)))
        self.zeros.add(z)
        return z

    def pair(self, node: Node, t: Graph) -> Node:
        """``(value, tangent)`` of `node`, a graph's output: a call stays a tail call."""
        if node in self.pairs:
            return self.pairs[node]
        if _is_call_of(node, P.seq):
            return t.apply(P.seq, self.value(node.inputs[1], t), self.pair(node.inputs[2], t))
        return t.apply(P.make_tuple, self.value(node, t), self.tangent(node, t))

    # Calls ----------------------------------------------------------------------------------

    def apply(self, node: Node, t: Graph) -> None:
        fn, *args = node.inputs
        dbg = node.debug.derive
        if fn.is_constant and isinstance(fn.value, Primitive):
            self.primitive(node, fn.value, args, t)
            return
        callee = self.value(fn, t)
        inputs = [x for a in args for x in (self.value(a, t), self.tangent(a, t))]
        app = t.apply(callee, *inputs, debug=dbg())
        self.pairs[node] = app
        self.values[node] = t.apply(P.tuple_getitem, app, 0, debug=dbg())
        if _is_function(node.abstract) or no_gradient(node.abstract):
            self.tangents[node] = self.zero(node, t)
        else:
            origin = DebugInfo(origin=node.debug)
            self.tangents[node] = t.apply(P.tuple_getitem, app, 1, debug=origin)

    def primitive(self, node: Node, prim: Primitive, args: list[Node], t: Graph) -> None:
        dbg = node.debug.derive
        vals = [self.value(a, t) for a in args]
        if prim is P.partial:
            # Binds values and tangents alike (the tangent graph interleaves them).
            bound = [x for a in args[1:] for x in (self.value(a, t), self.tangent(a, t))]
            self.values[node] = t.apply(P.partial, vals[0], *bound, debug=dbg())
            self.tangents[node] = self.zero(node, t)
            return
        if prim is P.partial_arg:
            # The tangent partial application binds each argument's value, then its tangent.
            i = args[1].value
            self.values[node] = t.apply(prim, vals[0], Constant(2 * i), *vals[2:], debug=dbg())
            if _is_function(node.abstract) or no_gradient(node.abstract):
                self.tangents[node] = self.zero(node, t)
            else:
                d = t.apply(prim, vals[0], Constant(2 * i + 1), *vals[2:], debug=dbg())
                self.tangents[node] = d
            return
        if prim is P.partial_fn:
            self.values[node] = t.apply(prim, *vals, debug=dbg())
            self.tangents[node] = self.zero(node, t)
            return
        if prim is P.apply_star:
            raise MyiaTypeError("jvp of a call with *args of unknown length is not supported")
        out = self.values[node] = t.apply(prim, *vals, debug=dbg())
        tans = [self.tangent(a, t) for a in args]
        a = node.abstract
        if (
            _is_function(a)
            or no_gradient(a)
            or prim in NONDIFFERENTIABLE
            or (prim is not P.switch and all(d in self.zeros for d in tans))
        ):
            self.tangents[node] = self.zero(node, t)
            return
        if prim is P.seq:
            self.tangents[node] = tans[1]
            return
        if prim is P.switch:
            if tans[1] in self.zeros and tans[2] in self.zeros:
                d = self.zero(node, t)
            else:
                d = t.apply(P.switch, vals[0], tans[1], tans[2])
        elif prim is P.convert:
            # (The type may reach the call as a parameter, in a closure a call made: the
            # result's type is the one converted to.)
            typ = args[1].value if args[1].is_constant else node.abstract
            d = t.apply(P.convert, tans[0], Constant(sens_type(typ)))
        elif prim in JVPS:
            rule = JVPS[prim]
            for i, d in enumerate(tans):  # a known zero's term left out (`JVPS_ZERO`)
                if d in self.zeros and (prim, i) in JVPS_ZERO:
                    rule = JVPS_ZERO[prim, i]
                    break
            d = t.apply(parse(rule), *vals, out, *tans)
        elif prim in LINEAR:
            pos, after = LINEAR[prim]
            ins = [
                d if i in pos or (after is not None and i >= after) else v
                for i, (v, d) in enumerate(zip(vals, tans))
            ]
            d = t.apply(prim, *ins)
        elif prim in BPROPS:
            d = _derived(t, parse(BPROPS[prim]), vals, out, tans)
        else:
            raise MyiaTypeError(f"primitive {prim.name} has no derivative yet")
        d.debug = DebugInfo(origin=node.debug)
        self.tangents[node] = d


def _derived(t: Graph, bprop: Graph, vals: list[Node], out: Node, tans: list[Node]) -> Node:
    """The tangent of a call from its backpropagator `bprop`, linear in the sensitivity ``u``.

    It is the transpose: the gradient of ``u -> <bprop(*vals, out, u), tans>`` (at a zero
    ``u``, on which it does not depend), a closure in `t` so that the arguments that must be
    known at compile time (a flag, an axis) stay constants.
    """
    from .forward_lib import pulled

    h = Graph()
    h.debug = DebugInfo(f"∂{bprop.name}", bprop.debug.find_location(), bprop.debug)
    u = h.add_parameter("u")
    h.output = h.apply(parse(pulled), h.apply(bprop, *vals, out, u), h.apply(P.make_tuple, *tans))
    zero = t.apply(P.gmaterialize, t.apply(P.gzeros, out))
    gradient = t.apply(P.grad_of, Constant(h), Constant((0,)), Constant(False), Constant(False))
    return t.apply(P.gmaterialize, t.apply(gradient, zero))


def _is_call_of(node: Node, prim: Primitive) -> bool:
    return node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is prim

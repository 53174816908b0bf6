"""The J transform: reverse-mode AD as a transformation of graphs.

For a graph ``g``, ``fprop(g)`` is a graph with the same parameters that returns
``(value, bprop)``: the value of ``g`` and a *backpropagator* closure. Calling ``bprop(dout)``
returns ``(env, d_param_1, ..., d_param_n)``: the sensitivities of the parameters and, in the
environment ``env``, those of the free variables of ``g``. This is the transform of Pearlmutter
and Siskind, "Reverse-mode AD in a functional framework: Lambda the ultimate backpropagator".

In the forward graph, every call ``f(x, y)`` becomes ``J(f)(x, y)``, which returns the value
and the backpropagator of that call; ``J`` of a graph constant is its forward graph, ``J`` of a
primitive a small graph built from its backpropagator (`myia.grad.registry`), and data are
their own ``J``. The backpropagator of ``g`` (nested in its forward graph, so it sees the values
and backpropagators of the forward pass as free variables) calls the backpropagators of the
calls in reverse order and adds up (`gadd`) the sensitivities each node receives. A closure
made in ``g`` returns the sensitivities of its free variables in its environment; ``g`` takes
those of its own nodes out of it (`env_getitem`) and passes the rest on in its own.

Loops (graphs calling one another by tail calls only) are transformed so that their gradient
is a loop too: the forward pass pushes each iteration's backpropagator on a stack and the
backward pass pops them (`myia.grad.loops`); a member of a loop is transformed here in *loop
mode*, into a core graph that leaves the tail call to its wrapper.

The transform applies to *specialized* graphs: operations are resolved to primitives and
graphs, keyword arguments bound. Its output is untyped: it is inferred and specialized like any
program, which is what makes ``grad(grad(f))`` work: the gradient is an ordinary graph.
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import AbstractArray, AbstractTuple, declare_unknown_dims
from ..errors import MyiaTypeError
from ..frontend import parse
from ..ir.analysis import Scopes, captures, toposort
from ..ir.node import BackwardInfo, Constant, DebugInfo, Graph, Node
from ..primitives import P, Primitive
from ..primitives.grad import NO_ZERO, EnvKey, no_gradient, zero_of_type
from .activity import activity_key, current_activity
from .loops import Loop, flush, loop_entry, loop_known, loop_of, register_core
from .loops import forget as forget_loops
from .registry import BPROPS, NONDIFFERENTIABLE, REFUSED, SPECIAL


class FreeVariableKey(EnvKey):
    """The key of a free variable's sensitivity in an environment."""

    __slots__ = ("node",)

    def __init__(self, node: Node):
        self.node = node

    def __repr__(self) -> str:
        return f"key({self.node.debug.find_name() or '?'})"


_fprops: dict[tuple[Graph, object], Graph] = {}
_jprims: dict[tuple[Primitive, int], Graph] = {}
_keys: dict[Node, FreeVariableKey] = {}


def forget() -> None:
    """Forget the graphs transformed so far (at the end of a compilation, `myia.api`).

    Their forward graphs and keys are keyed by the specialized graphs of one compilation,
    which no later compilation sees (each infers and specializes anew): kept, they would keep
    every program ever differentiated alive, with its graphs, for the life of the process.
    """
    _fprops.clear()
    _keys.clear()
    forget_loops()


def key_of(node: Node) -> FreeVariableKey:
    """The environment key of free variable `node`."""
    k = _keys.get(node)
    if k is None:
        k = _keys[node] = FreeVariableKey(node)
    return k


def fprop(g: Graph) -> Graph:
    """The forward graph of `g` (free variables outside `g` are treated as constants).

    It is made for the current activity (`myia.grad.activity`, see `current_activity`): a
    graph differentiated with respect to different inputs has one forward graph per activity.
    """
    key = (g, activity_key())
    f = _fprops.get(key)
    if f is None:
        if g.flags.get("bprop") is not None:
            f = _fprops[key] = _custom_fprop(g)
            return f
        # One `Scopes` of what `g` reaches serves the loop analysis and the transform (each
        # built its own: two walks of every graph below each graph transformed).
        scopes = None if loop_known(g) else Scopes(g)
        loop = loop_of(g, scopes)
        if g.flags.get("checkpoint") and loop is None:
            f = _fprops[key] = _checkpoint_fprop(g, scopes)
            return f
        if loop is not None:
            return loop_entry(g)
        transform_scope(g, scopes)
        f = _fprops[key]
    return f


def transform_scope(g: Graph, scopes: Scopes | None = None) -> None:
    """Transform `g` and the graphs nested in it (free variables outside are constants).

    `scopes`, if given, is a `Scopes` of `g` made since the graphs last changed.
    """
    _ScopeTransform(g, scopes).run()


def _custom_fprop(g: Graph) -> Graph:
    """The forward graph of `g`, whose backpropagator the user gave (`custom_bprop`)."""
    f = Graph(f"▶{g.name}", g.debug.find_location())
    params = [f.add_parameter(p.debug.find_name()) for p in g.parameters]
    out = f.apply(g, *params)
    b = Graph(f"◀{g.name}")
    b.flags["backpropagator"] = True
    dout = b.add_parameter("dout")
    # The user's backpropagator receives a concrete sensitivity (`myia.primitives.lazy_sens`).
    sens = b.apply(parse(g.flags["bprop"]), *params, out, b.apply(P.gmaterialize, dout))
    b.output = b.apply(P.tuple_concat, b.apply(P.make_tuple, b.apply(P.env_new)), sens)
    f.output = f.apply(P.make_tuple, out, Constant(b))
    return f


def _checkpoint_fprop(g: Graph, scopes: Scopes | None = None) -> Graph:
    """The forward graph of `g`, a checkpointed call (`myia.checkpoint`).

    ``J(g)(*args)`` is ``jcheckpoint(F, *args)``, where ``F`` is `g`'s ordinary forward graph:
    the forward pass keeps ``F``'s value and drops its backpropagator; the backward pass runs
    ``F`` again on the saved arguments and calls the backpropagator that run builds.
    """
    from . import lib

    site = _draw_site(g, {})
    if site is not None:
        from ..errors import Frame

        raise MyiaTypeError(
            "a checkpointed function (myia.checkpoint) draws random numbers: its backward "
            "pass would run it again and draw other numbers; draw them outside and pass them "
            "in as arguments",
            [Frame(*site)],
        )
    t = _ScopeTransform(g, scopes)
    t.run()
    ordinary = t.forward[g]
    f = Graph()
    f.debug = DebugInfo(f"▶{g.name}", g.debug.find_location(), g.debug)
    params = [f.add_parameter(debug=p.debug.derive()) for p in g.parameters]
    f.output = f.apply(parse(lib.jcheckpoint), Constant(ordinary), *params)
    return f


def _draw_site(g: Graph, memo: dict[Graph, Any]) -> Any:
    """``(function, location)`` of a random draw a call of `g` makes, in user code if it can."""
    from ..abstract.data import AbstractFunction, GraphFunction, in_order

    if g in memo:
        return memo[g]
    memo[g] = None  # a recursive call adds no draw
    for node in toposort(g):
        if not node.is_apply:
            continue
        here = (g.name.split(":")[0], node.debug.find_location())
        fn = node.inputs[0]
        if fn.is_constant and fn.value is P.random_draw:
            memo[g] = here
            return here
        callees = [i.value for i in node.inputs if i.is_constant and isinstance(i.value, Graph)]
        for i in node.inputs:
            if isinstance(i.abstract, AbstractFunction):
                options = in_order(i.abstract.options)
                callees += [o.graph for o in options if isinstance(o, GraphFunction)]
        for c in callees:
            inner = _draw_site(c, memo)
            if inner is not None:
                if _internal(inner[1]) and not _internal(here[1]):
                    inner = here
                memo[g] = inner
                return inner
    return None


def _internal(loc: Any) -> bool:
    from ..infer.traceback import is_internal

    return loc is None or is_internal(loc.filename)


def _is_call_of(node: Node, prim: Primitive) -> bool:
    return node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is prim


def _may_have_effect(node: Node) -> bool:
    """Whether `node` calls an effect (``print``, a draw) or a graph (which may print)."""
    if not node.is_apply:
        return False
    fn = node.inputs[0]
    if not fn.is_constant:
        return True
    v = fn.value
    return isinstance(v, Graph) or (isinstance(v, Primitive) and v.effect)


class _ScopeTransform:
    """Transforms a graph and every graph nested in it, together."""

    def __init__(self, root: Graph, scopes: Scopes | None = None):
        self.root = root
        self.scopes = scopes if scopes is not None else Scopes(root)
        self.members = self.scopes.scope(root)
        self.forward: dict[Graph, Graph] = {}
        self.backward: dict[Graph, Graph] = {}
        self.values: dict[Node, Node] = {}
        self.bprops: dict[Node, Node] = {}
        self.loops: dict[Graph, Loop] = {}
        self.activity = current_activity()

    def run(self) -> None:
        for g in self.members:
            f = Graph()
            f.debug = DebugInfo(f"▶{g.name}", g.debug.find_location(), g.debug)
            if g.flags.get("user_function"):  # its tail calls count levels of recursion
                f.flags["user_function"] = True
            b = Graph()
            b.debug = DebugInfo(f"◀{g.name}", g.debug.find_location(), g.debug)
            b.flags["backpropagator"] = True  # linear in its argument (`backpropagate_zero`)
            self.forward[g] = f
            self.backward[g] = b
            loop = loop_of(g, self.scopes) if g.flags.get("bprop") is None else None
            if loop is not None:
                self.loops[g] = loop
                f.flags["loop_core"] = True  # inlined in its wrappers (`myia.opt.inline`)
                register_core(g, f)
            else:
                _fprops[(g, activity_key())] = f
        for g in self.members:
            self.build_forward(g)
        for g in self.members:
            self.build_backward(g)
        flush()  # the loops entered from this scope

    # Forward --------------------------------------------------------------------------------

    def jref(self, node: Node, g: Graph, f: Graph) -> Node:
        """The forward-pass counterpart of `node`, an input of a node of `g`."""
        if node.is_constant:
            v = node.value
            if isinstance(v, Graph):
                if v in self.loops:
                    target = loop_entry(v)
                else:
                    _sites.append((g.name, node.debug.find_location()))  # `refused`'s traceback
                    try:
                        target = self.forward.get(v) or fprop(v)  # custom_bprop: not members
                    finally:
                        _sites.pop()
                return Constant(target, node.debug.derive())
            if isinstance(v, Primitive):
                return Constant(_jprim_value(v), node.debug.derive())
            return Constant(v, node.debug.derive())
        if node in self.values:
            return self.values[node]
        if node.graph in self.forward:
            raise AssertionError(f"node {node} used before it is computed")
        # A free variable from outside the transformed scope: a constant of the gradient.
        closed = _closed_graph(node.abstract)
        if closed is not None:
            # A function that captures nothing: its forward graph, as for a graph constant.
            return Constant(fprop(closed), node.debug.derive())
        if node.abstract is not None and (
            _is_function(node.abstract) or _holds_closure(node.abstract)
        ):
            raise MyiaTypeError(
                free_function_message("differentiating", node), free_function_frames(g, node)
            )
        return node

    def build_forward(self, g: Graph) -> None:
        f = self.forward[g]
        tail = self.loops[g].tails[g] if g in self.loops else None
        skip = tail.skip if tail is not None else ()
        for p in g.parameters:
            np_ = f.add_parameter(debug=p.debug.derive())
            self.values[p] = np_
        declare_unknown_dims(f, g)
        for node in self.scopes.toposort(g):
            if not node.is_apply or node in skip:
                continue
            fn, *args = node.inputs
            _sites.append((g.name, node.debug.find_location()))  # the line of an error
            try:
                jargs = [self.jref(a, g, f) for a in args]
            finally:
                _sites.pop()
            if fn.is_constant and (_nondifferentiable(fn.value) or self.plain(node, fn.value)):
                # No derivative: the forward pass computes the value alone, and the backward
                # pass gives the arguments no sensitivity.
                self.refused(node)
                # A zero nobody reads is read once differentiated again: the sensitivities of
                # the values holding it add up its own (compiled code passes None for it).
                prim = P.gzeros if fn.value is P.gzeros_unread else fn.value
                self.values[node] = f.apply(prim, *jargs, debug=node.debug.derive())
                continue
            if fn.is_constant and isinstance(fn.value, Primitive):
                jfn: Node = Constant(jprim(fn.value, len(args)), fn.debug.derive())
            else:
                jfn = self.jref(fn, g, f)
            app = f.apply(jfn, *jargs, debug=node.debug.derive())
            if fn.is_constant and fn.value is P.switch:
                # The value of a switch stays a switch, so that inference calls the branch it
                # selects as it calls a branch (on unbroadened, possibly constant arguments).
                val = f.apply(P.switch, *jargs, debug=node.debug.derive())
            else:
                val = f.apply(P.tuple_getitem, app, 0, debug=node.debug.derive())
            bp = f.apply(P.tuple_getitem, app, 1, debug=DebugInfo(origin=node.debug))
            self.values[node] = val
            self.bprops[node] = bp
        if tail is not None:
            # Loop mode: (condition, arguments of the tail call, backpropagator of g's body).
            cond = self.jref(tail.cond, g, f) if tail.cond is not None else Constant(None)
            args = f.apply(P.make_tuple, *(self.jref(a, g, f) for a in tail.args))
            out = f.apply(P.make_tuple, cond, args, Constant(self.backward[g]))
            for node in reversed(tail.chain):
                # The statements sequenced before the tail call (a `print` in the loop's
                # body) stay sequenced before the core's result: they are its effects.
                if _is_call_of(node, P.seq) and _may_have_effect(node.inputs[1]):
                    out = f.apply(P.seq, self.jref(node.inputs[1], g, f), out)
            f.output = out
            return
        assert g.output is not None
        out = self.jref(g.output, g, f)
        f.output = f.apply(P.make_tuple, out, Constant(self.backward[g]))

    # Backward -------------------------------------------------------------------------------

    def build_backward(self, g: Graph) -> None:
        b = self.backward[g]
        tail = self.loops[g].tails[g] if g in self.loops else None
        dout = b.add_parameter("dargs" if tail is not None else "dout")
        contributions: dict[Node, list[Any]] = {}

        def add(node: Node, sens: Any) -> None:
            if no_gradient(node.abstract):
                return  # an integer: its sensitivity is zero, whatever flows into it
            if not self.active(node):
                return  # depends on no input differentiated: nothing flows back from it
            contributions.setdefault(node, []).append(sens)

        def total(node: Node) -> Node:
            parts = contributions.get(node)
            if not parts:
                # A constant zero keeps no forward value alive (loops), and an array's is
                # allocated once (a leaf of a tree gives its weights a zero at every call).
                static = tail is not None or isinstance(node.abstract, AbstractArray)
                zero = zero_of_type(node.abstract) if static else NO_ZERO
                if zero is not NO_ZERO:
                    return Constant(zero)
                if (
                    node.is_parameter
                    and not self.active(node)
                    and (tail is None or no_gradient(node.abstract))
                ):
                    # Every call passes an inactive value, whose sensitivity the caller
                    # drops; a loop's member passes its arguments' to another member, which
                    # drops those that have no gradient (a list of indices).
                    return b.apply(P.gzeros_unread, self.fwd(node))
                return b.apply(P.gzeros, self.fwd(node))
            dense = [dense_sens(node, p) for p in parts]
            acc = dense[0]
            for p in dense[1:]:
                acc = b.apply(P.gadd, acc, p)
            return acc

        def dense_sens(node: Node, sens: Any) -> Node:
            """A contribution to `node`, as a node (an element's made a whole tuple's)."""
            if not isinstance(sens, _Element):
                return sens
            return b.apply(
                P.tuple_setitem, b.apply(P.gzeros, self.fwd(node)), sens.index, sens.sens
            )

        def give(inp: Node, sens: Any) -> None:
            """Add the contribution `sens()` to input `inp` of a node, unless a constant."""
            if inp.is_constant and not (
                isinstance(inp.value, Graph) and inp.value in self.forward
            ):
                return
            add(inp, sens())

        assert g.output is not None
        if tail is None:
            add(g.output, dout)
        else:
            # Loop mode: `dout` is the tuple of the sensitivities of the tail call's arguments.
            for i, a in enumerate(tail.args):
                if a.is_constant and not (isinstance(a.value, Graph) and a.value in self.forward):
                    continue
                add(a, b.apply(P.tuple_getitem, dout, i))
        # In reverse order, every user of a node is processed before the node itself; a
        # closure made in g (a graph constant) comes after its free variables in `toposort`,
        # so its environment is split among them at its own position.
        for node in reversed(self.scopes.toposort(g)):
            if node not in contributions or node.is_parameter:
                continue
            if node.is_apply and node not in self.bprops:
                continue  # nondifferentiable
            if node.is_apply and self.structural(node, contributions, give, total):
                continue
            if node.is_constant:
                if isinstance(node.value, Graph) and node.value in self.forward:
                    env = total(node)
                    for fv in self.scopes.free_variables_total[node.value]:
                        zero = b.apply(P.gzeros, self.fwd(fv))
                        add(fv, b.apply(P.env_getitem, env, key_of(fv), zero))
                continue
            r = b.apply(self.bprops[node], total(node), debug=BackwardInfo(origin=node.debug))
            for i, inp in enumerate(node.inputs):
                give(inp, lambda i=i, r=r: b.apply(P.tuple_getitem, r, i))
        # Free variables of g itself go into its own environment.
        env: Node = b.apply(P.env_new)
        for fv in self.scopes.free_variables_total[g]:
            if fv in contributions and (fv.graph in self.forward):
                env = b.apply(P.env_setitem, env, key_of(fv), total(fv))
        sens = [total(p) for p in g.parameters]
        b.output = b.apply(P.make_tuple, env, *sens)

    def structural(self, node: Node, contributions: dict, give: Any, total: Any) -> bool:
        """Pass the sensitivity of `node` on to its inputs at transform time, if it may.

        So it does for the primitives that only move values: a value computed and not used (a
        statement's value that ``seq`` drops, an element of a tuple that is never read) gets
        no sensitivity at all, rather than a zero that its backpropagator would multiply
        through (``0 * inf`` is ``nan``, and ``0 / 0.0`` raises).

        - ``seq(before, after)``: ``before`` gets nothing, ``after`` the sensitivity;
        - ``t[i]`` (a constant index of a tuple): ``t`` gets the sensitivity of element ``i``
          alone (`_Element`), made a whole tuple only where it is needed;
        - ``make_tuple(x0, ..., xn)`` whose sensitivity is made of elements: each ``xi`` gets
          the contributions to element ``i``, and nothing if there are none.
        """
        fn = node.inputs[0]
        if not fn.is_constant:
            return False
        prim = fn.value
        args = node.inputs[1:]
        if prim is P.seq:
            give(args[1], lambda: total(node))
            return True
        if prim is P.tuple_getitem:
            t, i = args
            elems = getattr(t.abstract, "elements", None)
            if not (isinstance(t.abstract, AbstractTuple) and i.is_constant):
                return False
            idx = i.value
            if type(idx) is not int or not -len(elems) <= idx < len(elems):
                return False
            give(t, lambda: _Element(idx % len(elems), total(node)))
            return True
        if prim is P.make_tuple:
            parts = contributions.get(node, [])
            if not all(isinstance(p, _Element) for p in parts):
                return False
            for p in parts:
                give(args[p.index], lambda p=p: p.sens)
            return True
        return False

    def active(self, node: Node) -> bool:
        """Whether `node` may depend on an input the gradient is taken of."""
        return self.activity is None or self.activity.active(node)

    def plain(self, node: Node, fn: Any) -> bool:
        """Whether primitive call `node` is computed as it is, without a backpropagator.

        So is a call that is inactive (it depends on no input the gradient is taken of) and
        handles no function (functions have a J form, which the primitive would see).
        """
        if not isinstance(fn, Primitive) or fn is P.switch or self.active(node):
            return False
        if _is_function(node.abstract):
            return False
        if any(i.is_constant and isinstance(i.value, Graph) for i in node.inputs):
            return False
        return not any(_is_function(i.abstract) for i in node.inputs[1:])

    def refused(self, node: Node) -> None:
        """Raise if a gradient would flow through `node`, whose primitive refuses it."""
        why = REFUSED.get(node.inputs[0].value)  # type: ignore[attr-defined]
        if why is None or not self.active(node):
            return
        message = why(*node.inputs[1:])
        if message is not None:
            from ..errors import Frame
            from ..infer.traceback import is_internal

            # The calls down to `node` whose graphs are being transformed, in user code.
            sites = [*_sites, (node.graph.name, node.debug.find_location())]  # type: ignore[union-attr]
            user = [(n, loc) for n, loc in sites if loc and not is_internal(loc.filename)]
            raise MyiaTypeError(message, [Frame(n.split(":")[0], loc) for n, loc in user[-1:]])

    def fwd(self, node: Node) -> Node:
        """The forward value of `node`, seen from a backward graph."""
        if node.is_constant:
            return node
        return self.values.get(node, node)


class _Element:
    """A contribution to the sensitivity of a tuple: `sens` at `index`, zero elsewhere."""

    __slots__ = ("index", "sens")

    def __init__(self, index: int, sens: Node):
        self.index = index
        self.sens = sens


def _nondifferentiable(v: Any) -> bool:
    return isinstance(v, Primitive) and v in NONDIFFERENTIABLE


#: The locations of the calls whose callees `jref` is transforming, outermost first.
_sites: list[Any] = []


def free_function_message(what: str, node: Node) -> str:
    """Why a function-valued free variable (`node`) of a function differentiated is refused."""
    name = node.debug.find_name()
    var = f"the variable {name}" if name else "a variable"
    return (
        f"{what} a function that calls a function it reads from {var}, made outside it "
        "(a closure passed through a loop, a parameter of the function it is in, or one of "
        "several functions chosen at run time), is not supported yet: make the function "
        "inside the function transformed, or pass the values it reads as arguments of a "
        "function defined at the top level"
    )


def free_function_frames(g: Graph, value: Node | None = None) -> list[Any]:
    """The user's line where a transformation of `g` (or of a call it makes) is refused.

    Where every site is Myia's library (``jacrev``'s own closures), the line of `value`, the
    function value refused, where the user made it.
    """
    from ..errors import Frame
    from ..infer.traceback import is_internal

    sites = [*_sites, (g.name, g.debug.find_location())]
    if value is not None:
        made = value.graph.name if value.graph is not None else g.name
        sites.insert(0, (made, value.debug.find_location()))
        if value.graph is not None:  # (a parameter: the loop or function it is passed to)
            sites.insert(0, (made, value.graph.debug.find_location()))
    user = [(n, loc) for n, loc in sites if loc and not is_internal(loc.filename)]
    return [Frame(n.split(":")[0].lstrip("▶◀"), loc) for n, loc in user[-1:]]


def _closed_graph(a: Any) -> Graph | None:
    """The graph of a function value of type `a`, if it is one graph that captures nothing."""
    from ..abstract.data import AbstractFunction, GraphFunction

    if not (isinstance(a, AbstractFunction) and len(a.options) == 1):
        return None
    (f,) = a.options
    if not isinstance(f, GraphFunction) or captures(f.graph):
        return None
    return f.graph


def _holds_closure(a: Any, seen: set[int] | None = None) -> bool:
    """Whether a value of type `a` holds a function that captures variables.

    A tuple (list, dict, record) of closures, free in a function differentiated, is refused as
    a closure is (it was an internal error when the function called one of them).
    """
    from ..abstract.data import (
        AbstractDict,
        AbstractFunction,
        AbstractList,
        AbstractRecord,
        AbstractUnion,
        GraphFunction,
    )

    seen = set() if seen is None else seen
    if id(a) in seen:
        return False
    seen.add(id(a))
    if isinstance(a, AbstractFunction):
        return any(isinstance(f, GraphFunction) and captures(f.graph) for f in a.options)
    if isinstance(a, AbstractTuple):
        parts: Any = a.elements
    elif isinstance(a, AbstractList):
        parts = (a.element,)
    elif isinstance(a, AbstractDict):
        parts = a.values
    elif isinstance(a, AbstractRecord):
        parts = a.fields
    elif isinstance(a, AbstractUnion):
        parts = a.options
    else:
        return False
    return any(_holds_closure(p, seen) for p in parts)


def _is_function(a: Any) -> bool:
    from ..abstract.data import AbstractFunction

    return isinstance(a, AbstractFunction)


# Primitives -----------------------------------------------------------------------------------


def _jprim_value(prim: Primitive) -> Graph:
    """``J(prim)`` for a primitive passed as a value (called on its positional parameters)."""
    params = prim.signature.parameters.values()
    if prim in SPECIAL or any(
        p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params
    ):
        raise MyiaTypeError(
            f"differentiating a program that passes primitive {prim.name} as a value is not "
            "supported: wrap it in a function"
        )
    return jprim(prim, len(params))


def jprim(prim: Primitive, nargs: int) -> Graph:
    """``J(prim)`` for a call with `nargs` arguments: returns ``(out, bprop)``.

    ``bprop(dout)`` returns ``(env_new(), *backpropagator(args..., out, dout))``.
    """
    key = (prim, nargs)
    g = _jprims.get(key)
    if g is not None:
        return g
    if prim in SPECIAL:
        from . import lib

        g = _jprims[key] = parse(getattr(lib, f"j{prim.name}"))
        return g
    g = Graph(f"J({prim.name})")
    _jprims[key] = g
    params = [g.add_parameter(f"x{i}") for i in range(nargs)]
    out = g.apply(prim, *params)
    b = Graph(f"◀{prim.name}")
    b.flags["backpropagator"] = True
    dout = b.add_parameter("dout")
    if prim in BPROPS:
        sens = b.apply(parse(BPROPS[prim]), *params, out, dout, debug=BackwardInfo())
        result = b.apply(P.tuple_concat, b.apply(P.make_tuple, b.apply(P.env_new)), sens)
    elif prim in NONDIFFERENTIABLE:
        zeros = [b.apply(P.gzeros, p) for p in params]
        result = b.apply(P.make_tuple, b.apply(P.env_new), *zeros)
    else:
        raise MyiaTypeError(f"primitive {prim.name} has no derivative yet")
    b.output = result
    g.output = g.apply(P.make_tuple, out, Constant(b))
    return g

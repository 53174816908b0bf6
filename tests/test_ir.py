"""The graph IR: analyses, cloning, inlining and the verifier."""

from __future__ import annotations

import pytest

from myia.frontend import parse
from myia.frontend.defaults import NOT_GIVEN
from myia.ir import analysis
from myia.ir.analysis import (
    Scopes,
    captures,
    direct_free_variables,
    reachable_graphs,
    toposort,
    uses,
)
from myia.ir.clone import Cloner, clone, clone_graphs, inline
from myia.ir.node import Apply, Constant, Graph, Node, Parameter
from myia.ir.printer import print_graph
from myia.ir.verify import VerifyError, verify
from myia.primitives import P
from myia.vm import DebugVM

# Functions parsed by the tests ------------------------------------------------------------


def while_sum(n):
    i = 0
    s = 0
    while i < n:
        s = s + i
        i = i + 1
    return s


def for_sum(xs):
    t = 0
    for x in xs:
        t = t + x
    return t


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def closure(x):
    def add_x(y):
        return x + y

    return add_x(1) + add_x(2)


def nested_closures(a):
    def mid(b):
        def inner(c):
            return a * 100 + b * 10 + c

        return inner(3)

    return mid(2)


def closure_default(x):
    def f(y, z=x * 2):
        return y + z

    return f(1) + f(1, 1)


def make_adder(x):
    y = x + 1

    def adder(z):
        return y + z

    return adder


def use_adder(x):
    return make_adder(x)(10)


def branches(x, y):
    a = x if x > y else y
    b = 0 < x < 10 and y > 0
    if a > 3:
        a = a - 3
    elif b:
        a = a + 1
    else:
        a = -a
    return a, b


def break_continue(n):
    i = 0
    s = 0
    while True:
        i = i + 1
        if i > n:
            break
        if i % 3 == 0:
            continue
        s = s + i
    return s


def for_else(xs, target):
    for x in xs:
        if x == target:
            found = True
            break
    else:
        found = False
    return found


def kwonly(x, *, k=3):
    return x * k


def varargs(x, *rest):
    return x + len(rest)


def lambdas(x):
    f = lambda y: y * x  # noqa: E731
    return f(2) + (lambda: x)()


def unpack(t):
    a, (b, c) = t
    assert a > 0, "a must be positive"
    return a + b * c


def raises(x):
    if x < 0:
        raise ValueError("negative")
    return x


FUNCTIONS = [
    (while_sum, (10,)),
    (for_sum, ([1, 2, 3],)),
    (for_sum, ((4.5, 1.5),)),
    (fact, (6,)),
    (closure, (5,)),
    (nested_closures, (1,)),
    (closure_default, (4,)),
    (use_adder, (3,)),
    (branches, (5, 2)),
    (branches, (1, 2)),
    (branches, (-1, 0)),
    (break_continue, (10,)),
    (for_else, ([1, 2, 3], 2)),
    (for_else, ([1, 2, 3], 5)),
    (kwonly, (2,)),
    (varargs, (1, 2, 3)),
    (lambdas, (3,)),
    (unpack, ((1, (2, 3)),)),
    (raises, (3,)),
]


def run(graph: Graph, *args):
    return DebugVM().run(graph, args)


def graph_nodes(root: Graph) -> tuple[set[Graph], set[Node]]:
    """Every graph reachable from `root` and every node they hold (constants included)."""
    scopes = Scopes(root)
    nodes: set[Node] = set()
    for g in scopes.graphs:
        nodes.update(g.parameters)
        nodes.update(scopes.toposort(g))
        nodes.update(g.defaults.values())
        nodes.add(g.output)
    return set(scopes.graphs), nodes


# Hand-built graphs -------------------------------------------------------------------------


def diamond() -> tuple[Graph, dict[str, Node]]:
    """g(x, y) = sub(add(mul(x, y), x), mul(x, y))."""
    g = Graph("g")
    x = g.add_parameter("x")
    y = g.add_parameter("y")
    a = g.apply(P.mul, x, y)
    b = g.apply(P.add, a, x)
    out = g.apply(P.sub, b, a)
    g.return_(out)
    return g, {"x": x, "y": y, "a": a, "b": b, "out": out}


def nest() -> tuple[Graph, Graph, Graph, dict[str, Node]]:
    """outer(a) = mid(a * 2); mid(b) = inner(b + 1); inner(c) = a + b + c (two levels)."""
    outer = Graph("outer")
    a = outer.add_parameter("a")
    mid = Graph("mid")
    b = mid.add_parameter("b")
    inner = Graph("inner")
    c = inner.add_parameter("c")
    ab = inner.apply(P.add, a, b)
    inner.return_(inner.apply(P.add, ab, c))
    b1 = mid.apply(P.add, b, 1)
    mid.return_(mid.apply(inner, b1))
    a2 = outer.apply(P.mul, a, 2)
    outer.return_(outer.apply(mid, a2))
    return outer, mid, inner, {"a": a, "b": b, "c": c, "ab": ab, "b1": b1, "a2": a2}


def through_a_closure() -> tuple[Graph, Graph, Graph]:
    """e(y) = s; s() = k, where n = y + 1; k() = n.

    ``s`` reads ``y`` only in ``n``, a node of its own that only the closure ``k`` uses: it is
    not reachable from ``s``'s output.
    """
    e = Graph("e")
    y = e.add_parameter("y")
    s = Graph("s")
    n = s.apply(P.add, y, 1)
    k = Graph("k")
    k.return_(n)
    s.return_(Constant(k))
    e.return_(Constant(s))
    return e, s, k


def chain(n: int) -> Graph:
    """f(x) = x + 1 + 1 + ... (n additions): a very deep chain of nodes."""
    g = Graph("chain")
    node: Node = g.add_parameter("x")
    for _ in range(n):
        node = g.apply(P.add, node, 1)
    g.return_(node)
    return g


# Analyses -----------------------------------------------------------------------------------


def test_toposort_order():
    g, n = diamond()
    order = toposort(g)
    applies = [node for node in order if node.is_apply]
    assert applies == [n["a"], n["b"], n["out"]]
    assert [node for node in order if node.is_parameter] == [n["x"], n["y"]]
    # Inputs first, left to right: the callee constant of `out` comes first.
    assert order[0].is_constant and order[0].value is P.sub
    position = {node: i for i, node in enumerate(order)}
    for node in applies:
        assert all(position[i] < position[node] for i in node.inputs)
    assert len(order) == len(set(order))


def test_toposort_excludes_free_variables():
    outer, mid, inner, n = nest()
    order = toposort(inner)
    assert n["a"] not in order and n["b"] not in order
    assert n["c"] in order and n["ab"] in order


def test_toposort_deep_graph():
    g = chain(50_000)
    assert len([n for n in toposort(g) if n.is_apply]) == 50_000
    assert run(g, 1) == 50_001


def test_free_variables_and_scopes():
    outer, mid, inner, n = nest()
    assert set(direct_free_variables(inner)) == {n["a"], n["b"]}
    assert direct_free_variables(mid) == []
    assert direct_free_variables(outer) == []
    scopes = Scopes(outer)
    assert set(scopes.free_variables_total[mid]) == {n["a"]}
    assert scopes.free_variables_total[outer] == []
    assert scopes.parents == {outer: None, mid: outer, inner: mid}
    assert scopes.children(outer) == [mid]
    assert scopes.children(mid) == [inner]
    assert scopes.children(inner) == []
    assert scopes.ancestors(inner) == [mid, outer]
    assert set(scopes.scope(outer)) == {outer, mid, inner}
    assert set(scopes.scope(mid)) == {mid, inner}


def test_scopes_of_a_nested_root():
    # The parents of a nested graph are found from the graph alone.
    outer, mid, inner, n = nest()
    scopes = Scopes(inner)
    assert scopes.parents[inner] is mid
    assert scopes.ancestors(inner) == [mid, outer]


def test_scopes_of_parsed_closures():
    g = parse(nested_closures)
    scopes = Scopes(g)
    by_name = {h.name: h for h in scopes.graphs}
    assert scopes.parents[g] is None
    assert scopes.parents[by_name["mid"]] is g
    assert scopes.parents[by_name["inner"]] is by_name["mid"]
    # Loop blocks are closed graphs.
    loop_scopes = Scopes(parse(while_sum))
    assert all(p is None for p in loop_scopes.parents.values())


def test_captures():
    outer, mid, inner, _ = nest()
    assert captures(inner)  # reads a and b itself
    assert captures(mid)  # reads nothing itself, but makes inner, which reads a
    assert not captures(outer)
    e, s, k = through_a_closure()
    assert captures(k) and captures(s)
    assert not captures(e)


def test_captures_is_what_scopes_say():
    roots = [parse(fn) for fn, _ in FUNCTIONS] + [nest()[0], through_a_closure()[0]]
    for root in roots:
        for g in Scopes(root).graphs:
            assert captures(g) == bool(Scopes(g).free_variables_total[g]), g


def test_captures_of_a_closure_reading_a_variable_walks_it_alone(monkeypatch):
    # Indexing everything reachable (and the enclosing graphs) for each closure asked about
    # made the second-order gradient of np.diff spend most of its time in `Scopes`.
    outer, mid, inner, _ = nest()

    def no_scopes(*args):
        raise AssertionError("Scopes built")

    monkeypatch.setattr(analysis, "Scopes", no_scopes)
    assert captures(inner)


def test_uses():
    g, n = diamond()
    u = uses([g])
    assert u[n["a"]] == [(n["b"], 1), (n["out"], 2)]
    assert u[n["x"]] == [(n["a"], 1), (n["b"], 2)]
    assert u[n["b"]] == [(n["out"], 1)]
    assert n["out"] not in u


def test_reachable_graphs():
    g = parse(while_sum)
    graphs = reachable_graphs(g)
    assert graphs[0] is g
    assert {h.name for h in graphs} == {
        "while_sum",
        "while_sum:loop_header",
        "while_sum:loop_body",
        "while_sum:loop_after",
    }
    assert len(graphs) == len(set(graphs))
    outer, mid, inner, _ = nest()
    assert set(reachable_graphs(outer)) == {outer, mid, inner}


# Cloning ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn, args", FUNCTIONS, ids=lambda v: getattr(v, "__name__", ""))
def test_clone_runs_the_same(fn, args):
    g = parse(fn)
    text = print_graph(g)
    expected = fn(*args) if fn is not raises else 3
    g2 = clone(g)
    assert run(g2, *args) == expected
    assert run(g, *args) == expected
    verify(g2)
    # A total copy shares no graph and no node with the original, and has the same text.
    graphs, nodes = graph_nodes(g)
    graphs2, nodes2 = graph_nodes(g2)
    assert not graphs & graphs2
    assert not nodes & nodes2
    assert print_graph(g2) == text
    assert print_graph(g) == text  # the original is untouched


@pytest.mark.parametrize("fn, args", FUNCTIONS, ids=lambda v: getattr(v, "__name__", ""))
def test_clone_scope_only(fn, args):
    g = parse(fn)
    scopes = Scopes(g)
    cloner = Cloner()
    g2 = cloner.clone(g, total=False)
    assert set(cloner.graphs) == set(scopes.scope(g))
    expected = fn(*args) if fn is not raises else 3
    assert run(g2, *args) == expected
    verify(g2)
    # The copy's scope is made of copies; graphs outside the scope (loop blocks, other
    # functions) are shared, not copied.
    assert set(Scopes(g2).scope(g2)) == set(cloner.graphs.values())
    assert set(reachable_graphs(g2)) - set(cloner.graphs.values()) <= set(reachable_graphs(g))


def test_clone_mapping_and_debug_info():
    g = parse(closure_default)
    cloner = Cloner()
    g2 = cloner.clone(g)
    assert cloner.graphs[g] is g2
    assert cloner[g] is g2
    for old, new in cloner.graphs.items():
        assert new.debug.origin is old.debug
        assert new.name == old.name
        assert new.kwonly == old.kwonly
        assert new.flags == old.flags and new.flags is not old.flags
        assert new.param_names == old.param_names
        assert [cloner[p] for p in old.parameters] == new.parameters
        assert all(p.graph is new for p in new.parameters)
        assert set(new.defaults) == set(old.defaults)
        for k, d in old.defaults.items():
            assert new.defaults[k] is cloner[d]
        assert new.output is cloner[old.output]
    for old, new in cloner.nodes.items():
        assert type(new) is type(old)
        assert new.debug.origin is old.debug
        assert new.debug.find_name() == old.debug.find_name()
        assert new.debug.find_location() == old.debug.find_location()
        if old.is_apply:
            assert new.graph is cloner.graphs[old.graph]
            assert new.inputs == [cloner[i] for i in old.inputs]
        if old.is_constant and isinstance(old.value, Graph):
            assert new.value is cloner.graphs[old.value]
        elif old.is_constant:
            assert new.value is old.value
    # The default of the nested `f` is computed in `closure_default` (a hidden variable that
    # `f` reads as a free variable, its default a marker): the copy of `f` reads the copy's.
    f2 = next(h for h in cloner.graphs.values() if h.name == "f")
    assert f2.defaults["z"].value is NOT_GIVEN
    copies = set(cloner.graphs.values())
    free = [fv for h in copies for fv in direct_free_variables(h)]
    assert free and all(fv.graph in copies for fv in free)


def test_clone_nested_graph_keeps_outside_free_variables():
    outer, mid, inner, n = nest()
    cloner = Cloner()
    mid2 = cloner.clone(mid, total=False)
    assert set(cloner.graphs) == {mid, inner}
    inner2 = cloner[inner]
    ab2 = cloner[n["ab"]]
    # `a` (owned by outer, outside the copied scope) is kept; `b` is remapped.
    assert ab2.inputs[1] is n["a"]
    assert ab2.inputs[2] is cloner[n["b"]] and ab2.inputs[2].graph is mid2
    assert Scopes(inner2).ancestors(inner2) == [mid2, outer]
    # A total copy of a nested graph does not copy its ancestors either.
    total = Cloner()
    total.clone(mid)
    assert set(total.graphs) == {mid, inner}
    # Until outer makes it, the copy is a closure that nothing creates.
    with pytest.raises(VerifyError, match="never made as a closure"):
        verify(mid2)
    # Use the copy in place of the original: outer still computes the same.
    expected = run(outer, 5)
    call = outer.output
    outer.return_(outer.apply(mid2, *call.inputs[1:]))
    assert run(outer, 5) == expected == 5 + 10 + 11
    verify(outer)


def test_clone_keeps_constants_of_graphs_outside():
    g = parse(while_sum)
    g2 = clone(g, total=False)
    header = g.output.inputs[0].value
    assert g2.output.inputs[0].value is header
    assert g2.output.inputs[0] is not g.output.inputs[0]


def test_clone_deep_graph():
    g = chain(30_000)
    g2 = clone(g)
    assert run(g2, 0) == 30_000
    assert not set(toposort(g)) & set(toposort(g2))


def test_clone_graphs_several_roots():
    g1 = parse(closure)
    g2 = parse(fact)
    cloner = clone_graphs([g1, g2])
    assert run(cloner[g1], 5) == closure(5)
    assert run(cloner[g2], 5) == 120
    # Only the scopes are copied: fact's blocks are shared.
    assert len(cloner.graphs) == 2 + 1


def test_clone_copies_abstract():
    g, n = diamond()
    n["a"].abstract = "int"
    cloner = Cloner()
    cloner.clone(g)
    assert cloner[n["a"]].abstract == "int"


# Inlining -----------------------------------------------------------------------------------


def test_inline_simple():
    f, n = diamond()
    caller = Graph("caller")
    p = caller.add_parameter("p")
    q = caller.apply(P.add, p, 1)
    out = inline(f, [q, Constant(3)], caller)
    caller.return_(caller.apply(P.mul, out, 2))
    assert run(caller, 4) == 2 * ((5 * 3 + 5) - 5 * 3)
    verify(caller)
    _, f_nodes = graph_nodes(f)
    _, caller_nodes = graph_nodes(caller)
    assert not {x for x in f_nodes if not x.is_constant} & caller_nodes
    assert all(x.graph in (caller, None) for x in caller_nodes)
    assert run(f, 2, 3) == 2  # the inlined graph is untouched


def test_inline_parameter_and_constant_outputs():
    ident = Graph("ident")
    x = ident.add_parameter("x")
    ident.return_(x)
    caller = Graph("caller")
    p = caller.add_parameter("p")
    assert inline(ident, [p], caller) is p
    const = Graph("const")
    const.add_parameter("x")
    const.return_(Constant(7))
    node = inline(const, [p], caller)
    assert node.is_constant and node.value == 7


def test_inline_with_closures():
    # Inline a parsed function whose body makes closures over its parameter and locals.
    h = parse(closure)
    caller = Graph("caller")
    z = caller.add_parameter("z")
    arg = caller.apply(P.add, z, 10)
    cloner = Cloner()
    out = cloner.inline(h, [arg], caller)
    caller.return_(out)
    assert run(caller, 1) == closure(11)
    verify(caller)
    # The nested closure was copied and now reads the caller's node.
    (add_x,) = [g for g in Scopes(h).scope(h) if g is not h]
    add_x2 = cloner[add_x]
    assert add_x2 is not add_x
    assert Scopes(caller).parents[add_x2] is caller
    assert arg in direct_free_variables(add_x2)
    assert run(h, 11) == closure(11)


def test_inline_twice_and_nested_free_variables():
    outer, mid, inner, n = nest()
    # Inline the call to `inner` in `mid`: its free variables `a` and `b` are kept.
    call = mid.output
    mid.return_(inline(inner, call.inputs[1:], mid))
    assert run(outer, 5) == 5 + 10 + 11
    verify(outer)
    # Inline the same graph twice into one caller (one cloner per inlining).
    f, _ = diamond()
    caller = Graph("caller")
    p = caller.add_parameter("p")
    first = inline(f, [p, p], caller)
    second = inline(f, [first, p], caller)
    caller.return_(second)
    assert run(caller, 3) == run(f, run(f, 3, 3), 3)
    verify(caller)


def test_inline_errors():
    f, _ = diamond()
    caller = Graph("caller")
    p = caller.add_parameter("p")
    with pytest.raises(ValueError, match="2 parameters"):
        inline(f, [p], caller)
    cloner = Cloner()
    cloner.inline(f, [p, p], caller)
    with pytest.raises(ValueError, match="already"):
        cloner.inline(f, [p, p], caller)


def test_inline_deep_graph():
    g = chain(30_000)
    caller = Graph("caller")
    p = caller.add_parameter("p")
    caller.return_(inline(g, [p], caller))
    assert run(caller, 1) == 30_001


# Verifier -----------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", sorted({fn for fn, _ in FUNCTIONS}, key=lambda f: f.__name__))
def test_verify_accepts_parsed_graphs(fn):
    verify(parse(fn))


def test_verify_accepts_hand_built_graphs():
    verify(diamond()[0])
    outer, mid, inner, _ = nest()
    verify(outer)
    verify(inner)
    verify(chain(20_000))


def test_verify_checks_hook():
    g, n = diamond()
    seen = []

    def record(graph, node):
        seen.append(node)
        return None

    verify(g, checks=[record])
    assert set(seen) >= {n["x"], n["y"], n["a"], n["b"], n["out"]}

    def no_mul(graph, node):
        if node.is_apply and node.inputs[0].is_constant and node.inputs[0].value is P.mul:
            return "mul is not allowed here"
        return None

    with pytest.raises(VerifyError, match="mul is not allowed") as info:
        verify(g, checks=[no_mul])
    assert info.value.graph is g and info.value.node is n["a"]


def broken(what: str) -> Graph:
    """A graph with one defect, named by `what`."""
    g, n = diamond()
    if what == "no output":
        g.output = None
    elif what == "non-node input":
        n["b"].inputs[2] = 3
    elif what == "no inputs":
        n["b"].inputs = []
    elif what == "foreign parameter":
        other = Graph("other")
        other.return_(Constant(0))
        n["b"].inputs[2] = Parameter(other, "stray")
    elif what == "parameter not listed":
        n["b"].inputs[2] = Parameter(g, "stray")
    elif what == "parameter listed twice":
        g.parameters.append(n["x"])
    elif what == "parameter of another graph listed":
        g.parameters.append(Parameter(Graph("other"), "z"))
    elif what == "cycle":
        n["a"].inputs[1] = n["b"]
    elif what == "constant in a graph":
        c = Constant(1)
        c.graph = g
        n["b"].inputs[2] = c
    elif what == "node without graph":
        n["b"].inputs[2] = Apply([Constant(P.neg), n["x"]], None)  # type: ignore[arg-type]
    elif what == "kwonly":
        g.kwonly = 5
    elif what == "unknown default":
        g.defaults["nope"] = Constant(1)
    elif what == "local default":
        g.defaults["y"] = n["a"]
    elif what == "sibling free variable":
        # `g` uses a node of an unrelated graph, which never makes `g` as a closure.
        other = Graph("other")
        o = other.add_parameter("o")
        other.return_(other.apply(P.neg, o))
        n["b"].inputs[2] = other.output
    elif what == "two unrelated owners":
        g1, g2 = Graph("g1"), Graph("g2")
        p1, p2 = g1.add_parameter("p1"), g2.add_parameter("p2")
        g1.return_(p1)
        g2.return_(p2)
        clo = Graph("clo")
        clo.return_(clo.apply(P.add, p1, p2))
        g.return_(g.apply(P.add, g.output, g.apply(clo)))
    elif what == "escaping node":
        # `g` uses a node computed inside a closure it calls.
        clo = Graph("clo")
        inside = clo.apply(P.add, n["x"], 1)
        clo.return_(inside)
        g.return_(g.apply(P.add, g.apply(clo), inside))
    else:
        raise AssertionError(what)
    return g


@pytest.mark.parametrize(
    "what, message",
    [
        ("no output", "no output"),
        ("non-node input", "not a node"),
        ("no inputs", "no inputs"),
        ("foreign parameter", "not in the parameter list of other"),
        ("parameter not listed", "not in the parameter list of g"),
        ("parameter listed twice", "listed twice"),
        ("parameter of another graph listed", "parameter of another graph"),
        ("cycle", "cycle"),
        ("constant in a graph", "constant belongs to a graph"),
        ("node without graph", "belongs to no graph"),
        ("kwonly", "kwonly"),
        ("unknown default", "unknown parameter"),
        ("local default", "neither a constant nor a free variable"),
        ("sibling free variable", "never made as a closure"),
        ("two unrelated owners", "does not enclose it"),
        ("escaping node", "nested in itself|does not enclose it"),
    ],
)
def test_verify_rejects(what, message):
    g = broken(what)
    with pytest.raises(VerifyError, match=message) as info:
        verify(g)
    assert "in graph " in str(info.value)


def test_verify_error_names_graph_and_node():
    g = broken("parameter not listed")
    with pytest.raises(VerifyError) as info:
        verify(g)
    assert info.value.graph is g
    assert isinstance(info.value.node, Parameter)
    assert "in graph g:" in str(info.value) and "'stray'" in str(info.value)


def test_verify_finds_errors_in_reachable_graphs():
    g = parse(closure)
    g2 = clone(g)
    inner = next(h for h in reachable_graphs(g2) if h is not g2)
    inner.output.inputs.append(7)
    with pytest.raises(VerifyError, match=f"in graph {inner.name}"):
        verify(g2)

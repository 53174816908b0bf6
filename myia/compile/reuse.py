"""Buffer reuse: an elementwise operation writes its result into a dead temporary.

A pass of the Python backend's code generation (`myia.compile.codegen.CodeGenerator`, with
``reuse_min_bytes``)::

    np.exp((-0.5 * np.maximum(d2, 0.0)))
      =>  np.exp((b_2 := np.multiply(-0.5, (b := np.maximum(d2, 0.0)), out=b)), out=b_2)

Each array operation of NumPy allocates its result; for arrays of hundreds of kilobytes the
allocator returns the freed ones to the system and the next ones pay page faults, and even
when it does not, a new buffer is memory the cache has not seen. Where an operand of an
elementwise operation is a *temporary* that nothing reads after it, of the result's shape
and dtype, the operation is written as its ufunc with ``out=`` that operand.

An operand qualifies when (a liveness analysis over the straight-line code of one block):

- it is *fresh*: computed by an operation that returns a new array (an elementwise
  operation, a matrix product, ``np.eye``...), never a parameter (the user's inputs), a view
  (a transpose, an index, a reshape), nor what an implementation may return unchanged;
- every use of it is by an operation that reads it and returns something else: none keeps
  it (a tuple, a closure's free variable, a backpropagator's, the graph's output, a jump's
  argument) nor returns a view of it, and every use is in the same block as it;
- every other use is already computed when the operation runs: in an earlier statement of
  the block, or inside the operation's own operands;
- its shape and dtype (all known at compile time) are the result's, and its size is at least
  ``reuse_min_bytes`` (below a few kilobytes, a new array costs less than the keywords).

An operand written inside the expression (used once) is named by an assignment expression;
one of its own is named already. The same analysis deletes a variable holding such an
array after the statement of its last use (`BufferReuse.released`): a Python variable keeps
its array alive until the function returns, and the arrays alive at once are the memory the
allocator takes from the system (and faults in) on every call.

Results are those of the code without the pass, elementwise bit for bit; a sum of an array
written into a temporary may add its terms in another order (the temporary's memory order,
where NumPy would have chosen another for a new array). The native backend's host code runs
it too (its machine code takes no array); the JAX generator does not (its arrays are
immutable).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import AbstractArray, AbstractScalar
from ..ir.node import Apply, Node
from ..primitives import P, Primitive

#: The elementwise primitives written as NumPy ufuncs (their lowerings call them, or the
#: Python operators that do), and the ufunc of each.
UFUNCS: dict[Primitive, str] = {
    P.add: "np.add",
    P.sub: "np.subtract",
    P.mul: "np.multiply",
    P.truediv: "np.true_divide",
    P.neg: "np.negative",
    P.maximum: "np.maximum",
    P.minimum: "np.minimum",
    P.gadd_owned: "np.add",
    P.exp: "np.exp",
    P.log: "np.log",
    P.log1p: "np.log1p",
    P.log2: "np.log2",
    P.log10: "np.log10",
    P.expm1: "np.expm1",
    P.sqrt: "np.sqrt",
    P.sin: "np.sin",
    P.cos: "np.cos",
    P.tan: "np.tan",
    P.asin: "np.arcsin",
    P.acos: "np.arccos",
    P.atan: "np.arctan",
    P.sinh: "np.sinh",
    P.asinh: "np.arcsinh",
    P.acosh: "np.arccosh",
    P.atanh: "np.arctanh",
    P.cosh: "np.cosh",
    P.tanh: "np.tanh",
}

#: Primitives whose array result is always a new array.
FRESH: set[Primitive] = set(UFUNCS) | {P.matmul, P.eye, P.tril, P.triu, P.lower_half, P.undiagonal}

#: Primitives that read their array operands and neither keep them nor return a view of them.
READERS: set[Primitive] = FRESH | {
    P.eq,
    P.ne,
    P.lt,
    P.le,
    P.gt,
    P.ge,
    P.reduce_sum,
    P.reduce_max,
    P.reduce_min,
    P.reduce_mean,
    P.where,
    P.clip,
    P.cholesky,
    P.triangular_solve,
    P.triangular_matmul,
}


def _prim(node: Node) -> Any:
    if not node.is_apply:
        return None
    fn = node.inputs[0]
    return fn.value if fn.is_constant else None  # type: ignore[attr-defined]


def _strip_seq(node: Node) -> Node:
    while _prim(node) is P.seq:
        node = node.inputs[2]
    return node


class BufferReuse:
    """The buffer reuse pass of one generator: which operand an operation may write into.

    The generator reports each expression it writes (`enter`, before its operands), and asks
    `write` for the text of each elementwise operation once its operands are written.
    """

    def __init__(self, gen: Any, min_bytes: int):
        self.gen = gen
        self.min_bytes = min_bytes
        #: node -> (the line its statement is written at, its rank among the expressions)
        self.seen: dict[Node, tuple[int, int]] = {}
        self.count = 0
        self._candidates: dict[Node, bool] = {}
        self._uses: dict[Node, list[tuple[Any, int]]] = {}
        self.all_uses = self.use_map()
        #: (a temporary written into, a use of it the generator was not expected to write)
        self.pending: list[tuple[Node, Node]] = []
        #: Temporaries never written into (a first generation found them unsound).
        self.banned: set[Node] = set()
        #: The expressions written since the last statement, and the variables deleted.
        self.statement_nodes: list[Node] = []
        self.released_nodes: set[Node] = set()
        #: The temporaries written into or deleted, and the expressions written twice.
        self.decided: list[Node] = []
        self.repeated: set[Node] = set()

    def use_map(self) -> dict[Node, list[tuple[Any, int]]]:
        """The uses of every node, in every graph the generator's scopes know.

        (Those of the closures the generator reaches through others' constants included,
        which its own use counts may leave out.)
        """
        out: dict[Node, list[tuple[Any, int]]] = {}
        scopes = self.gen.scopes
        for g in list(scopes.graphs):
            if g.output is not None and not g.output.is_constant:
                out.setdefault(g.output, []).append((None, -1))
            for node in scopes.toposort(g):
                if node.is_apply:
                    for i, inp in enumerate(node.inputs):
                        out.setdefault(inp, []).append((node, i))
        return out

    def uses(self, t: Node) -> list[tuple[Any, int]]:
        """The uses of `t`'s value: those of ``seq(x, t)`` (which is `t`) are `t`'s own.

        ``seq(t, x)`` computes `t` for its errors alone: not a use of its value.
        """
        out = self._uses.get(t)
        if out is None:
            out = []
            for u, i in self.all_uses.get(t, ()):
                if u is not None and _prim(u) is P.seq:
                    if i == 2:
                        out += self.uses(u)
                else:
                    out.append((u, i))
            self._uses[t] = out
        return out

    def enter(self, node: Node) -> int:
        """Note that `node`'s expression is being written; returns its rank."""
        rank = self.count
        self.count += 1
        if node in self.seen:
            self.repeated.add(node)
        self.seen[node] = (len(self.gen.lines), rank)
        self.statement_nodes.append(node)
        return rank

    def released(self, stmt: Node) -> list[str]:
        """The variables to delete after the statement of `stmt`: arrays read for the last time.

        A Python variable keeps its array alive until the function returns; deleted after
        its last use, the array's memory serves the next ones. The variable must be a
        statement of this block whose every use is by an expression of the block already
        written (none a jump, a return, a closure's).
        """
        nodes, self.statement_nodes = self.statement_nodes, []
        line = self.seen[stmt][0] if stmt in self.seen else -1
        out = []
        for n in nodes:
            for i in n.inputs[1:]:
                t = _strip_seq(i)
                if t in self.released_nodes or not self.deletable(t, line):
                    continue
                self.released_nodes.add(t)
                out.append(self.gen.var(t))
        return out

    def deletable(self, t: Node, line: int) -> bool:
        """Whether `t` is a variable of a big array whose every use is written by `line`."""
        if not (t.is_apply and self.big_array(t.abstract)):
            return False
        where = self.seen.get(t)
        if where is None or where[0] >= line or t.graph is not self.gen.block_graph:
            return False  # (not a variable written before: a parameter, or inlined here)
        if t in self.gen.kept or t in self.banned:
            return False
        pending = []
        for u, _ in self.uses(t):
            if u is None or u.graph is not t.graph:
                return False
            w = self.seen.get(u)
            if w is None and self.value_dead(u):
                pending.append(u)
            elif w is None or w[0] > line:
                return False
        self.pending += [(t, u) for u in pending]
        self.decided.append(t)
        return True

    def big_array(self, a: Any) -> bool:
        """Whether `a` is an array type of known shape and at least `min_bytes`."""
        if not (isinstance(a, AbstractArray) and a.shape and None not in a.shape):
            return False
        return int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize >= self.min_bytes

    def candidate(self, t: Node) -> bool:
        """Whether `t` is a fresh array that only readers in its own block use."""
        ok = self._candidates.get(t)
        if ok is None:
            ok = self._candidates[t] = (
                _prim(t) in FRESH
                and self.big_array(t.abstract)
                and all(
                    u is not None and u.graph is t.graph and _prim(u) in READERS and i > 0
                    for u, i in self.uses(t)
                )
            )
        return ok

    def value_dead(self, u: Node) -> bool:
        """Whether nothing uses `u`'s value: an expression the generator does not write.

        ``seq(seq(x, (dx, dy)), dx)`` computes ``(dx, dy)`` for its errors; where that
        expression is never written, its operands are not read either. Where one is written
        after all, the code is generated again without the reuse (`unsound`).
        """
        return all(u2 is not None and self.value_dead(u2) for u2, _ in self.uses(u))

    def dead_after(self, t: Node, node: Apply, rank: int) -> bool:
        """Whether nothing reads `t` once `node` (whose rank is `rank`) has run."""
        line = self.seen[node][0]
        pending = []
        for u, _ in self.uses(t):
            if u is node:
                continue
            where = self.seen.get(u)
            if u is None:
                return False
            if where is None and self.value_dead(u):
                pending.append(u)
            elif where is None or not (where[0] < line or where[1] > rank):
                return False
        self.pending += [(t, u) for u in pending]
        self.decided.append(t)
        return True

    def unsound(self) -> set[Node]:
        """The temporaries written into (or deleted) where the analysis did not hold.

        A use thought never written was written, or an expression reading the temporary
        was written twice (evaluated twice: once after the temporary was written into).
        """
        out = {t for t, u in self.pending if u in self.seen}
        final = self.use_map()
        out |= {t for t in self.decided if final.get(t, []) != self.all_uses.get(t, [])}
        if self.repeated:
            out |= {t for t in self.decided if any(u in self.repeated for u, _ in self.uses(t))}
        return out

    def write(self, node: Apply, args: list[str], rank: int) -> str | None:
        """The text of `node` written into a dead operand, or None where none qualifies."""
        ufunc = UFUNCS.get(_prim(node))
        a = node.abstract
        if ufunc is None or not self.big_array(a):
            return None
        inputs = node.inputs[1:]
        if not all(isinstance(i.abstract, (AbstractArray, AbstractScalar)) for i in inputs):
            return None
        for k, t in enumerate(map(_strip_seq, inputs)):
            if t.abstract != a or t in self.banned or not self.candidate(t):
                continue
            if not self.dead_after(t, node, rank):
                continue
            if self.seen[t][1] > rank:  # written inside this expression: named here
                name = self.gen.names.fresh("b")
                args = [*args]
                args[k] = f"({name} := {args[k]})"
            else:
                name = args[k]
                assert name == self.gen.var(t)
            return f"{ufunc}({', '.join(args)}, out={name})"
        return None

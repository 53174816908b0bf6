"""The Python syntax of generated code, read and built for the JAX backend's rewriting.

`myia.compile.jax_structure` rewrites the NumPy backend's generated functions (branches, and
loops over states) into JAX's control flow. These helpers read that code (the names a block
reads, assigns on every path, or carries out; whether it ends in a jump; the order of the
states of a loop that never jumps back) and build its pieces (names, tuples, calls, defs).
"""

from __future__ import annotations

import ast
from typing import Any


def _loads(node: ast.AST) -> set[str]:
    """The names `node` reads (for a function definition: its free names)."""
    if isinstance(node, ast.FunctionDef):
        inner = set().union(*(_loads(s) for s in node.body)) if node.body else set()
        params = {a.arg for a in node.args.args}
        defaults = (
            set().union(*(_loads(d) for d in node.args.defaults)) if node.args.defaults else set()
        )
        return (inner - params - _stores(node.body)) | defaults
    if isinstance(node, ast.Lambda):
        return _loads(node.body) - {a.arg for a in node.args.args}
    out: set[str] = set()
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        out.add(node.id)
    for child in ast.iter_child_nodes(node):
        out |= _loads(child)
    return out


def _stores(stmts: list[ast.stmt]) -> set[str]:
    """The names assigned by `stmts` (not inside the functions they define)."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, ast.FunctionDef):
            out.add(s.name)
            continue
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
    return out


def _free_reads(stmts: list[ast.stmt], bound: set[str]) -> set[str]:
    """The names `stmts` may read before assigning them (not in `bound`)."""
    return _flow(stmts, bound)[0]


def _flow(stmts: list[ast.stmt], bound: set[str]) -> tuple[set[str], set[str]]:
    """The names `stmts` may read before assigning them (not in `bound`), and their stores.

    One walk (an ``elif`` chain is as deep as it is long).
    """
    bound = set(bound)
    reads: set[str] = set()
    stores: set[str] = set()
    for s in stmts:
        if isinstance(s, ast.Assign):
            reads |= _loads(s.value) - bound
            for t in s.targets:
                names = {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
                bound |= names
                stores |= names
        elif isinstance(s, ast.If):
            reads |= _loads(s.test) - bound
            (r1, s1), (r2, s2) = _flow(s.body, bound), _flow(s.orelse, bound)
            reads |= r1 | r2
            bound |= s1 & s2
            stores |= s1 | s2
        elif isinstance(s, ast.While):
            reads |= _loads(s.test) - bound
            r, st = _flow(s.body, bound)
            reads |= r
            stores |= st
        elif isinstance(s, ast.FunctionDef):
            reads |= _loads(s) - bound
            bound.add(s.name)
            stores.add(s.name)
        else:
            reads |= _loads(s) - bound
            stores |= _stores([s])
    return reads, stores


def _terminates(stmts: list[ast.stmt]) -> bool:
    """Whether every path through `stmts` ends in a return, continue or raise."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Continue, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _terminates(last.body) and _terminates(last.orelse)
    if isinstance(last, ast.While) and isinstance(last.test, ast.Constant) and last.test.value:
        return True
    return False


def _assigned(stmts: list[ast.stmt]) -> set[str]:
    """The names `stmts` assign on every path that falls through them."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, ast.If):
            arms = [a for a in (s.body, s.orelse) if not _terminates(a)]
            out |= set.intersection(*map(_assigned, arms)) if arms else set()
        elif not isinstance(s, ast.While):
            out |= _stores([s])
    return out


def _walk(stmts: list[ast.stmt]) -> list[ast.AST]:
    """The nodes of `stmts`, not inside the functions they define."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(stmts)
    while todo:
        n = todo.pop()
        out.append(n)
        if not isinstance(n, (ast.FunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(n))
    return out


def _jumps(stmts: list[ast.stmt]) -> bool:
    """Whether `stmts` hold a ``return`` or ``continue`` (not in the functions they define)."""
    return any(isinstance(n, (ast.Return, ast.Continue)) for n in _walk(stmts))


def _listed(x: Any) -> list[Any]:
    return x if isinstance(x, list) else [x]


def _forward_order(states: list[list[ast.stmt]]) -> list[int] | None:
    """An order of the states of a state machine in which every jump goes forward.

    None if the states make a loop (a jump back, or one that is not ``_state = k``).
    """
    if len(states) < 2:
        return None
    succ: list[set[int]] = []
    for st in states:
        nodes = _walk(st)
        targets = set()
        for n in nodes:
            if isinstance(n, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "_state" for t in n.targets
            ):
                if not (isinstance(n.value, ast.Constant) and isinstance(n.value.value, int)):
                    return None
                targets.add(n.value.value)
            if isinstance(n, (ast.While, ast.Break)):
                return None
        if not all(0 <= t < len(states) for t in targets):
            return None
        succ.append(targets)
    indeg = [0] * len(states)
    for ts in succ:
        for t in ts:
            indeg[t] += 1
    ready = [k for k in range(len(states)) if indeg[k] == 0]
    order: list[int] = []
    while ready:
        k = ready.pop(0)
        order.append(k)
        for t in sorted(succ[k]):
            indeg[t] -= 1
            if indeg[t] == 0:
                ready.append(t)
    return order if len(order) == len(states) else None


def _trivial(stmts: list[ast.stmt]) -> bool:
    """Whether `stmts` is at most a ``return`` or a jump (as cheap to copy as to join)."""
    return len(stmts) <= 1 and (not stmts or isinstance(stmts[0], (ast.Return, ast.Continue)))


def _unreachable(stmts: list[ast.stmt]) -> bool:
    """Whether `stmts` is ``raise AssertionError(...)`` (a branch that is never taken)."""
    return (
        len(stmts) == 1
        and isinstance(stmts[0], ast.Raise)
        and isinstance(stmts[0].exc, ast.Call)
        and isinstance(stmts[0].exc.func, ast.Name)
        and stmts[0].exc.func.id == "AssertionError"
    )


def _recursive(tree: ast.Module) -> bool:
    """Whether a function of the module reaches itself through calls (its loops are loops)."""
    defs = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef)}
    edges = {
        k: {n.id for n in ast.walk(d) if isinstance(n, ast.Name) and n.id in defs}
        for k, d in defs.items()
    }
    state: dict[str, int] = {}

    def visit(k: str) -> bool:
        state[k] = 1
        for j in edges[k]:
            if state.get(j) == 1 or (j not in state and visit(j)):
                return True
        state[k] = 2
        return False

    return any(k not in state and visit(k) for k in defs)


def _name(n: str, store: bool = False) -> ast.Name:
    return ast.Name(n, ast.Store() if store else ast.Load())


def _tuple(names: list[str], store: bool = False) -> ast.Tuple:
    return ast.Tuple([_name(n, store) for n in names], ast.Store() if store else ast.Load())


def _call(fn: str, *args: ast.expr) -> ast.Call:
    return ast.Call(_name(fn), list(args), [])


def _def(
    name: str, params: list[str], body: list[ast.stmt], defaults: list[str] = ()
) -> ast.FunctionDef:  # type: ignore[assignment]
    args = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(p) for p in [*params, *defaults]],
        kwonlyargs=[],
        kw_defaults=[],
        defaults=[_name(d) for d in defaults],
    )
    return ast.FunctionDef(name, args, body, [], None)

"""The stacks of a whole program's machine code: regions of one arena, made per call.

In the machine code of a whole program (`myia.compile.native_whole`), the loop stacks of
gradients live in an *arena*: one buffer of 8-byte words, allocated by the entry function
when it is called, whose address every function of the program receives as a hidden first
argument. A stack is three integers ``(base, height, capacity)``: its region of the arena
starts at word `base`, whose value says how far the region was written (shared by the
versions of the stack, so a push on an older version copies, and stacks stay persistent);
row ``i`` (the ``i``-th pushed element, one word per leaf) follows at ``base + 1 + i * m``.

So a loop that pushes or pops carries integers only: no array, no reference count, no
allocation. A full stack grows in place when its region ends the arena's used part (the
usual case of one stack growing in a loop), else it is copied to a new region of twice its
height. Before a counted loop that pushes once an iteration on a stack (``while stop >
i: i, s = i + 1, push(s, x)``), the stack makes room for the loop's pushes at once
(`reserve_counted_loops`). A full arena does not grow: the push or the reservation raises,
and the entry runs the program again with an arena 16 times larger, or of twice the words
that the push or reservation needed (the program has no effect, so running it again is
safe). A reservation fails before its loop runs: a program whose counted loops outgrow the
first arena's 32 KB redoes only what it did before them.
Words 0 to 2 of the arena hold the index of its first free word, the words needed when it
was full (0 while it is not), and its size.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from .. import pyast
from ..abstract.data import AbstractTuple

#: The words of a new arena (32 KB), and the factor of its size on each retry.
ARENA_WORDS = 4096
ARENA_GROWTH = 16
#: The most words of an arena (8 TB): a program whose stacks need more runs on the host.
_MOST_WORDS = 2**40

#: The imports of a module whose stacks are in an arena.
ARENA_IMPORT = "from myia.compile.native_memory import load_f, load_i, store_f, store_i\n"

#: The module-level names that the arena's helpers read (no function of a program may have one).
_HELPER_GLOBALS = frozenset(["load_f", "load_i", "store_f", "store_i", "_sgrow"])

#: Grows a full stack (or copies an older version before a push) to a capacity of `want`
#: elements at least: the cold path of a push, and a reservation.
GROW_SOURCE = '''
def _sgrow(_ar, base, cap, n, m, want):
    """The base and capacity of a stack of height n with room for `want` elements of m words."""
    top = load_i(_ar, 0)
    if cap > 0 and load_i(_ar, base) == n and base + 1 + cap * m == top:
        new = base
        new_cap = max(2 * cap, want)
    else:
        new = top
        new_cap = max(8, 2 * n, want)
    if new_cap > (load_i(_ar, 2) - new - 1) // m:
        store_i(_ar, 1, new + 1 + new_cap * m if new_cap < 2**40 else 2**62)
        raise MemoryError("the stacks' arena is full")
    end = new + 1 + new_cap * m
    store_i(_ar, 0, end)
    if new != base:
        for i in range(n * m):
            store_i(_ar, new + 1 + i, load_i(_ar, base + 1 + i))
        store_i(_ar, new, n)
    return new, new_cap
'''

_STORE = {"float64": "store_f(_ar, row + {j}, {p})", "int64": "store_i(_ar, row + {j}, {p})"}
_STORE["bool"] = "store_i(_ar, row + {j}, int({p}))"
_LOAD = {"float64": "load_f(_ar, row + {j})", "int64": "load_i(_ar, row + {j})"}
_LOAD["bool"] = "load_i(_ar, row + {j}) != 0"


def arena_helper_source(k: int, element: Any, leaves: list[tuple[str, str]]) -> str:
    """The source of ``_snew_k``, ``_spush_k``, ``_spop_k``, ``_sreserve_k``: stacks in the arena.

    The stacks hold `element` values; `leaves` are the element's leaves, ``(access path,
    dtype)``. Push, pop and ``_sreserve_k(_ar, s, count)`` (`s` with room for `count` more
    pushes) take the arena's address first.
    """
    m = len(leaves)
    if m == 0:
        # Elements of no leaf (empty tuples): a stack is its height, with no words.
        return (
            f"def _snew_{k}():\n    return (0, 0, 0)\n\n"
            f"def _spush_{k}(_ar, s, x):\n    return (s[0], s[1] + 1, s[2])\n\n"
            f"def _spop_{k}(_ar, s):\n    if s[1] == 0:\n"
            f"        raise IndexError('pop from an empty stack')\n"
            f"    return ((), (s[0], s[1] - 1, s[2]))\n\n"
            f"def _sreserve_{k}(_ar, s, count):\n    return s\n"
        )
    write = "\n".join("    " + _STORE[d].format(j=j, p=p) for j, (p, d) in enumerate(leaves))

    def rebuild(t: Any, it: Any) -> str:
        if isinstance(t, AbstractTuple):
            return "(" + "".join(rebuild(e, it) + ", " for e in t.elements) + ")"
        j, d = next(it)
        return _LOAD[d].format(j=j)

    top = rebuild(element, iter(enumerate(d for _, d in leaves)))
    return (
        f"def _snew_{k}():\n    return (0, 0, 0)\n\n"
        f"def _spush_{k}(_ar, s, x):\n    base, n, cap = s\n"
        f"    if n == cap or load_i(_ar, base) != n:\n"
        f"        base, cap = _sgrow(_ar, base, cap, n, {m}, n + 1)\n"
        f"    row = base + 1 + n * {m}\n{write}\n    store_i(_ar, base, n + 1)\n"
        f"    return (base, n + 1, cap)\n\n"
        f"def _spop_{k}(_ar, s):\n    base, n, cap = s\n    if n == 0:\n"
        f"        raise IndexError('pop from an empty stack')\n"
        f"    n -= 1\n    row = base + 1 + n * {m}\n"
        f"    return ({top}, (base, n, cap))\n\n"
        f"def _sreserve_{k}(_ar, s, count):\n    base, n, cap = s\n"
        f"    if count > 0 and (n + count > cap or load_i(_ar, base) != n):\n"
        f"        base, cap = _sgrow(_ar, base, cap, n, {m}, n + count)\n"
        f"    return (base, n, cap)\n"
    )


def _counted(test: ast.expr) -> tuple[ast.expr, str] | None:
    """``(stop, i)`` of a loop test ``stop > i`` or ``i < stop`` (a name `i`), else None."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(op, ast.Lt):
        left, right = right, left
    elif not isinstance(op, ast.Gt):
        return None
    if isinstance(right, ast.Name) and isinstance(left, (ast.Name, ast.Constant)):
        return left, right.id
    return None


def _assigned(body: list[ast.stmt]) -> tuple[dict[str, list[ast.expr | None]], bool]:
    """The values the statements `body` assign to each name, and whether they all run once.

    A value is None where the name is assigned other than by a statement of `body` of the
    form ``a, b = (x, y)`` or ``a = x`` (in a nested statement, by a walrus, a for).
    """
    values: dict[str, list[ast.expr | None]] = {}
    top: set[int] = set()
    for st in body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            target, value = st.targets[0], st.value
            if isinstance(target, ast.Name):
                pairs = [(target, value)]
            elif (
                isinstance(target, ast.Tuple)
                and isinstance(value, ast.Tuple)
                and len(target.elts) == len(value.elts)
            ):
                pairs = list(zip(target.elts, value.elts))
            else:
                continue
            for t, v in pairs:
                if isinstance(t, ast.Name):
                    values.setdefault(t.id, []).append(v)
                    top.add(id(t))
    once = True
    for node in (n for st in body for n in ast.walk(st)):
        if isinstance(node, (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom)):
            once = False
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            if id(node) not in top:
                values.setdefault(node.id, []).append(None)
    return values, once


def _step(value: ast.expr | None, i: str) -> bool:
    """Whether `value` is ``i + 1`` (or ``1 + i``, or ``_istep(i, 1)``, its checked form)."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        args = value.args
        return (
            value.func.id == "_istep"
            and len(args) == 2
            and isinstance(args[0], ast.Name)
            and args[0].id == i
            and isinstance(args[1], ast.Constant)
            and args[1].value == 1
        )
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return False
    one = [x for x in (value.left, value.right) if isinstance(x, ast.Constant) and x.value == 1]
    name = [x for x in (value.left, value.right) if isinstance(x, ast.Name) and x.id == i]
    return bool(one and name)


def reserve_counted_loops(
    fn: ast.FunctionDef, helpers: dict[str, str], is_int: Callable[[str], bool]
) -> ast.FunctionDef:
    """Make the stacks of `fn` room for the pushes of its counted loops, before each loop.

    ``while stop > i: ... i, s = i + 1, _spush_k(s, x) ...`` gets ``s = _sreserve_k(s,
    stop - i)`` before it, where the loop runs its body to the end (no break, continue or
    return), its counter `i` (an int, by `is_int`) is assigned ``i + 1`` once, `stop` (an int)
    is not assigned, and stack `s` is assigned its push once, in statements of the loop's
    body (not nested in another). `helpers` maps the name of each push helper to that of
    its reservation. The calls take no arena yet (`thread_arena` adds it). A reservation
    only places a stack: the pushes still check.
    """
    for node in list(ast.walk(fn)):
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and any(isinstance(st, ast.While) for st in stmts):
                out: list[ast.stmt] = []
                for st in stmts:
                    out += _reservations(st, helpers, is_int)
                    out.append(st)
                setattr(node, field, out)
    return fn


def _reservations(
    loop: ast.stmt, helpers: dict[str, str], is_int: Callable[[str], bool]
) -> list[ast.stmt]:
    """The statements that make room on the stacks of `loop` before it (none if not counted)."""
    if not isinstance(loop, ast.While) or loop.orelse:
        return []
    counted = _counted(loop.test)
    if counted is None:
        return []
    stop, i = counted
    values, once = _assigned(loop.body)
    if isinstance(stop, ast.Name):
        if stop.id in values or not is_int(stop.id):
            return []
    elif type(stop.value) is not int:  # type: ignore[attr-defined]
        return []
    if not once or not is_int(i) or len(values.get(i, [])) != 1 or not _step(values[i][0], i):
        return []
    out = []
    for name, vs in values.items():
        v = vs[0]
        if len(vs) != 1 or not (isinstance(v, ast.Call) and isinstance(v.func, ast.Name)):
            continue
        arg = v.args[0] if v.args else None
        if v.func.id in helpers and isinstance(arg, ast.Name) and arg.id == name:
            reserve = f"{name} = {helpers[v.func.id]}({name}, {ast.unparse(stop)} - {i})"
            out.append(pyast.parse(reserve).body[0])
    return out


def _fresh(base: str, taken: set[str]) -> str:
    name, i = base, 1
    while name in taken:
        i += 1
        name = f"{base}_{i}"
    return name


def thread_arena(
    functions: dict[str, ast.FunctionDef], entry: str, users: set[str], jit: str
) -> tuple[list[str], str | None]:
    """The program's functions with the arena as their first argument, and its new entry.

    Every function of the program takes the arena's address first and passes it on to the
    functions and stack helpers (`users`) it calls; the entry becomes an inner function,
    and a function of the entry's name and arguments (decorated with `jit`) allocates the
    arena and calls it, again with a larger arena when it was full. Returns the sources,
    or ``([], why)`` when the program uses one of its functions as a value or names one as
    a helper of the arena.
    """
    if _HELPER_GLOBALS & set(functions):
        return [], "a function of the program has the name of a helper of the arena"
    taken = {n.id for f in functions.values() for n in ast.walk(f) if isinstance(n, ast.Name)}
    taken |= {a.arg for f in functions.values() for a in ast.walk(f) if isinstance(a, ast.arg)}
    taken |= set(functions) | users
    ar = _fresh("_ar", taken)
    inner = _fresh(f"_arena_{entry}", taken)
    out = []
    for name, fn in functions.items():
        fn = pyast.parse(ast.unparse(fn)).body[0]
        assert isinstance(fn, ast.FunctionDef)
        called = set()
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in functions or node.func.id in users:
                    called.add(id(node.func))
                    node.args.insert(0, ast.Name(ar, ast.Load()))
                    if node.func.id == entry:
                        node.func.id = inner
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id in functions and id(node) not in called:
                return [], "a function of the program is used as a value"
        fn.args.args.insert(0, ast.arg(ar))
        if name == entry:
            fn.name = inner
        out.append(f"@{jit}\n{ast.unparse(fn)}\n")
    names = [f"_a{i}" for i in range(len(functions[entry].args.args))]
    params, args = ", ".join(names), "".join(f", {n}" for n in names)
    call = _fresh(f"_arena_call_{entry}", taken | {inner})
    # The arena is an array, alive while `call` runs (it is its argument).
    out.append(f"@{jit}\ndef {call}(_heap{args}):\n    return {inner}(_heap.ctypes.data{args})\n")
    out.append(
        f"@{jit}\ndef {entry}({params}):\n"
        f"    _size = {ARENA_WORDS}\n"
        "    while True:\n"
        "        _heap = np.empty(_size, np.int64)\n"
        "        _heap[0] = 3\n        _heap[1] = 0\n        _heap[2] = _size\n"
        "        try:\n"
        f"            return {call}(_heap{args})\n"
        "        except Exception:\n"
        "            pass\n"
        "        if _heap[1] == 0:  # an error of the program's: the host code raises it\n"
        "            raise RuntimeError('the machine code raised an error')\n"
        f"        if _heap[1] > {_MOST_WORDS}:  # the host code runs it\n"
        "            raise RuntimeError('the stacks need more words than an arena holds')\n"
        f"        _size = max(_size * {ARENA_GROWTH}, 2 * _heap[1])\n"
    )
    return out, None

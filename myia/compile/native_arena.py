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
height. A full arena does not grow: the push raises, and the entry runs the program again
with an arena 16 times larger (the program has no effect, so running it again is safe): a
program that needs more than the first arena's 32 KB redoes up to a fifteenth of its work.
Words 0 to 2 of the arena hold the index of its first free word, a flag set when it is full,
and its size.
"""

from __future__ import annotations

import ast
from typing import Any

from ..abstract.data import AbstractTuple

#: The words of a new arena (32 KB), and the factor of its size on each retry.
ARENA_WORDS = 4096
ARENA_GROWTH = 16

#: The imports of a module whose stacks are in an arena.
ARENA_IMPORT = "from myia.compile.native_memory import load_f, load_i, store_f, store_i\n"

#: The module-level names that the arena's helpers read (no function of a program may have one).
_HELPER_GLOBALS = frozenset(["load_f", "load_i", "store_f", "store_i", "_sgrow"])

#: Grows a full stack (or copies an older version before a push): the cold path of a push.
GROW_SOURCE = '''
def _sgrow(_ar, base, cap, n, m):
    """The base and capacity of a stack of height n after a push (m words an element)."""
    top = load_i(_ar, 0)
    if cap > 0 and load_i(_ar, base) == n and base + 1 + cap * m == top:
        new = base
        new_cap = 2 * cap
    else:
        new = top
        new_cap = max(8, 2 * n)
    end = new + 1 + new_cap * m
    if end > load_i(_ar, 2):
        store_i(_ar, 1, 1)
        raise MemoryError("the stacks' arena is full")
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
    """The source of ``_snew_k``, ``_spush_k`` and ``_spop_k``: stacks of `element` in the arena.

    `leaves` are the element's leaves, ``(access path, dtype)``; push and pop take the
    arena's address first.
    """
    m = len(leaves)
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
        f"        base, cap = _sgrow(_ar, base, cap, n, {m})\n"
        f"    row = base + 1 + n * {m}\n{write}\n    store_i(_ar, base, n + 1)\n"
        f"    return (base, n + 1, cap)\n\n"
        f"def _spop_{k}(_ar, s):\n    base, n, cap = s\n    if n == 0:\n"
        f"        raise IndexError('pop from an empty stack')\n"
        f"    n -= 1\n    row = base + 1 + n * {m}\n"
        f"    return ({top}, (base, n, cap))\n"
    )


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
        fn = ast.parse(ast.unparse(fn)).body[0]
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
        f"        _size *= {ARENA_GROWTH}\n"
    )
    return out, None

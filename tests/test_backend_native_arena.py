"""The stacks of a whole program's machine code make room for a counted loop before it.

`myia.compile.native_arena.reserve_counted_loops`: a loop ``while stop > i`` whose body
pushes once on a stack and steps ``i + 1`` has its stack grown to ``stop - i`` more elements
first, so that an arena too small fails before the loop runs, and the program runs again
with an arena of the words needed.
"""

from __future__ import annotations

import ast
import re

import numpy as np
import pytest
from helpers import own_cache_dir, scalar_loop  # noqa: F401 (a fixture)

from myia import grad
from myia.compile import native_arena

# Its tests share the module's disk cache of machine code: one xdist worker runs them all.
pytestmark = pytest.mark.xdist_group(__name__)

numba = pytest.importorskip("numba")


def _reserved(source: str, ints=("i", "stop", "k")) -> str:
    fn = ast.parse(source).body[0]
    out = native_arena.reserve_counted_loops(
        fn, {"_spush_0": "_sreserve_0"}, set(ints).__contains__
    )
    return ast.unparse(out)


LOOP = """
def f(i, stop, s, y):
    while stop > i:
        y_2 = y * 2.0
        i, y, s = (i + 1, y_2, _spush_0(s, y))
    return s
"""


@pytest.mark.parametrize(
    "old, new",
    [
        ("while stop > i:", "while i < stop:"),
        ("while stop > i:", "while 10 > i:"),
        ("(i + 1, y_2,", "(1 + i, y_2,"),
    ],
)
def test_counted_loops_reserve_their_stacks(old, new):
    source = _reserved(LOOP.replace(old, new))
    stop = "10" if "10 >" in new else "stop"
    assert f"s = _sreserve_0(s, {stop} - i)\n    while" in source, source


@pytest.mark.parametrize(
    "old, new",
    [
        ("        y_2 = y * 2.0\n", "        if y > 1.0:\n            break\n"),  # may end early
        ("(i + 1, y_2,", "(i + 2, y_2,"),  # not a count of iterations
        ("        y_2 = y * 2.0\n", "        stop = stop - 1\n"),  # the bound moves
        ("        y_2 = y * 2.0\n", "        if y > 1.0:\n            s = _snew_0()\n"),
        ("_spush_0(s, y)", "_spush_0(t, y)"),  # another stack's push
        ("while stop > i:", "while stop > k + i:"),
        ("while stop > i:", "while stop >= i:"),
        ("while stop > i:", "while stop > j:"),  # j is not an int
        ("while stop > i:", "while 2.5 > i:"),
    ],
)
def test_other_loops_reserve_nothing(old, new):
    changed = LOOP.replace(old, new)
    assert changed != LOOP
    assert "_sreserve" not in _reserved(changed)


def _module():
    """Compiled stack helpers of float elements in the arena (stack type 0)."""
    from myia.abstract.data import AbstractScalar
    from myia.compile.native_backend import NativeBackend
    from myia.compile.native_source import _INLINE, _JIT

    element = AbstractScalar("float64", weak=True)
    helpers = native_arena.arena_helper_source(0, element, [("x", "float64")])
    source = "\n\n".join(
        [
            "import numpy as np\nfrom numba import njit\n" + native_arena.ARENA_IMPORT,
            f"@{_JIT}{native_arena.GROW_SOURCE}",
            f"@{_INLINE}\n" + helpers.replace("\n\ndef ", f"\n\n@{_INLINE}\ndef "),
        ]
    )
    return vars(NativeBackend().load(source))


def test_a_reserved_stack_does_not_move_while_it_is_pushed():
    m = _module()
    arena = np.empty(3 + 1 + 8 + 1 + 40, np.int64)
    arena[:3] = (3, 0, len(arena))
    ar = arena.ctypes.data
    s1 = m["_spush_0"](ar, m["_snew_0"](), 1.0)
    other = m["_spush_0"](ar, m["_snew_0"](), -1.0)  # its region follows s1's
    s = m["_sreserve_0"](ar, s1, 30)  # copied past `other`, with room for 31 elements
    assert s[1:] == (1, 31) and s[0] != s1[0]
    assert m["_sreserve_0"](ar, s, 30) == s  # room already
    assert m["_sreserve_0"](ar, s, 0) == s
    base = s[0]
    for i in range(30):
        s = m["_spush_0"](ar, s, float(i))
        assert s[0] == base and s[2] == 31
    top, rest = m["_spop_0"](ar, s)
    assert top == 29.0 and rest[1] == 30
    assert m["_spop_0"](ar, s1)[0] == 1.0 and m["_spop_0"](ar, other)[0] == -1.0
    # A reservation on the older version s1 (pushed on since) copies it.
    t = m["_sreserve_0"](ar, s1, 2)
    assert t[0] != s[0] and m["_spop_0"](ar, t)[0] == 1.0
    with pytest.raises(MemoryError):
        m["_sreserve_0"](ar, t, 1000)
    assert arena[1] >= 1000 > len(arena)  # the words needed: the program runs again


def _native(fn, args):
    sig = fn.signature(*args)
    return fn._cache[sig].executable


@pytest.mark.parametrize("n", [2047, 2048, 2049, 5000])
def test_counted_loop_past_the_first_arena_fails_before_it_runs(n):
    """The arena is too small at the reservation: the second arena is of the words needed."""
    g = grad(scalar_loop, backend="native", background=False)
    expected = grad(scalar_loop)(0.3, n)
    assert g(0.3, n) == expected
    ex = _native(g, (0.3, n))
    assert ex.whole.fn is not None, ex.whole.reason
    source = ex.whole.source
    assert re.search(r"= _sreserve_0\(_ar, \w+, \w+ - \w+\)\n    while", source), source
    module = ex.backend.load(source)
    call = getattr(module, re.search(r"^def (_arena_call_\w+)\(", source, re.M).group(1))
    arena = np.empty(native_arena.ARENA_WORDS, np.int64)
    arena[:3] = (3, 0, len(arena))
    if n < 4090:
        assert call(arena, 0.3, n) == expected
    else:
        with pytest.raises(MemoryError):
            call(arena, 0.3, n)
        # One region of n elements (the peeled first iteration's push, grown in place):
        # the loop failed at its reservation, not at a doubling after it had run.
        assert arena[1] == 3 + 1 + n
    ex.host.fn = None  # the host code is not called
    assert g(0.3, n) == expected


def tuple_loop(x, n):
    y = x
    z = 0.0
    for _ in range(n):
        y = y * 0.999 + 0.001
        z = z + y * y * x
    return z


@pytest.mark.parametrize("n", [3, 1500])
def test_stacks_of_tuples_reserve_their_words(n):
    """A loop whose stack holds three floats an element (1500 of them outgrow the arena)."""
    g = grad(tuple_loop, backend="native", background=False)
    expected = grad(tuple_loop)(0.3, n)
    assert g(0.3, n) == expected
    ex = _native(g, (0.3, n))
    assert ex.whole.fn is not None, ex.whole.reason
    assert re.search(r"= _sreserve_0\(_ar, \w+, \w+ - \w+\)\n    while", ex.whole.source)
    ex.host.fn = None
    assert g(0.3, n) == expected

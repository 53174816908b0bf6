"""The native backend: the NumPy backend's results, with loops as machine code (Numba)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import os
import re
import subprocess
import sys
import textwrap
import threading
import traceback

import numpy as np
import pytest
from helpers import assert_same, line_of, own_cache_dir, scalar_loop  # noqa: F401 (a fixture)
from test_loops import (
    count_for,
    nested_while,
    while_break_continue,
    while_else,
    while_float,
    while_return,
)

from myia import grad, myia, value_and_grad
from myia.testing import check_grad

# Its tests share the module's disk cache of machine code: one xdist worker runs them all.
pytestmark = pytest.mark.xdist_group(__name__)

numba = pytest.importorskip("numba")


def newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def int_loop(n):
    total = 0
    i = 0
    while i < n:
        total = total + i % 7
        i = i + 1
    return total


def mixed(x, n):
    s = 0.0
    for i in range(n):
        if i % 2 == 0:
            s = s + math.exp(-x * i)
        else:
            s = s - x / (i + 1.0)
    return s


def counter_loop(x, n):
    y = x
    for i in range(n):
        y = math.sin(y) * 0.5 + 0.1 * x * i
    return y


def counter_while(x, n):
    y = x
    i = 0
    while i < n:
        i = i + 1
        y = y * 0.5 + x * i
    return y


def counter_from(x, m, n):
    y = x
    i = m
    while i < n:
        i = i + 1
        y = y * 0.5 + x * i
    return y


def big_ints(n):
    p = 1
    for _ in range(n):
        p = p * 3
    return p


def loop_div(x, n):
    y = 1.0
    for i in range(n):
        y = y + x / (n - 2 - i)  # DIV-LINE
    return y


def loop_log(x, n):
    y = 0.0
    for i in range(n):
        y = y + math.log(x - i)  # LOG-LINE
    return y


def loop_sin(x, n):
    y = 0.0
    for i in range(n):
        y = y + math.sin(x * i)  # SIN-LINE (sin(inf) raises, as math's does)
    return y


def loop_assert(x, n):
    y = x
    for _ in range(n):
        y = y * 0.5
        assert y > 0.1, "too small"  # ASSERT-LINE
    return y


@dataclasses.dataclass
class Tree:
    value: float
    left: Tree | None
    right: Tree | None


def tree_sum(t, w):
    if t is None:
        return 0.0
    return t.value * w + tree_sum(t.left, w) + tree_sum(t.right, w)


TREE = Tree(1.0, Tree(2.0, None, None), Tree(3.0, Tree(4.0, None, None), None))


def _native(fn, args):
    return fn.specialization(*args).executable


def _twice(f, args):
    """The first call (host code while the machine code loads) and one with machine code."""
    first = f(*args)
    ex = _native(f, args)
    ex.wait()
    return first, f(*args), ex


@pytest.mark.parametrize(
    "fn, args",
    [
        (scalar_loop, (0.3, 50)),
        (scalar_loop, (0.3, 0)),
        (newton_sqrt, (2.0,)),
        (newton_sqrt, (1e6,)),
        (int_loop, (20,)),
        (mixed, (0.7, 9)),
    ],
)
def test_primal_matches_numpy_backend(fn, args):
    expected = myia(fn)(*args)
    f = myia(fn, backend="native")
    first, second, ex = _twice(f, args)
    assert_same(first, expected)
    assert_same(second, expected)
    assert ex.native and ex.ready, ex.reason


@pytest.mark.parametrize(
    "fn, args, wrt, native",
    [
        (scalar_loop, (0.3, 50), ("x",), True),
        (scalar_loop, (0.3, 0), ("x",), False),  # no iteration: no loop was entered
        (newton_sqrt, (2.0,), ("a",), True),
        # Branches in the loop: its backward pass reads environments (host code).
        (mixed, (0.7, 9), ("x",), False),
    ],
)
def test_gradient_matches_numpy_backend(fn, args, wrt, native):
    expected = value_and_grad(fn, *wrt)(*args)
    g = value_and_grad(fn, *wrt, backend="native")
    first, got, ex = _twice(g, args)
    np.testing.assert_allclose(first[1], expected[1], rtol=1e-12)
    assert type(got[0]) is type(expected[0])
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)
    if native:
        assert ex.native and ex.ready, ex.reason
    # Called again (the stacks' buffers are reused or copied, never shared wrongly).
    np.testing.assert_allclose(g(*args)[1], expected[1], rtol=1e-12)


@pytest.mark.parametrize(
    "fn, args",
    [
        (while_float, (37.0,)),
        (while_break_continue, (10,)),
        (while_return, (50,)),
        (while_else, (3,)),
        (nested_while, (7,)),
        (count_for, (100,)),
    ],
)
def test_language_loops_match_numpy_backend(fn, args):
    f = myia(fn, backend="native", background=False)
    assert_same(f(*args), myia(fn)(*args))


def test_gradient_loops_are_machine_code():
    g = grad(scalar_loop, backend="native")
    ex = _native(g, (0.3, 10))
    assert ex.native_source.count("def _native_loop_") == 2  # forward and backward sweeps
    assert "_spush_0" in ex.native_source and "_spop_0" in ex.native_source
    assert "STACK" not in ex.source  # typed buffers, not linked cells


@pytest.mark.parametrize(
    "fn, args",
    [
        (newton_sqrt, (2.0,)),
        (scalar_loop, (0.3, 10)),
        (counter_loop, (0.3, 10)),  # the stack holds the counter, a Python int
        (counter_while, (0.3, 7)),
    ],
)
def test_gradient_is_one_native_function(fn, args):
    """Forward loop, stack and backward loop: one call of machine code from Python."""
    g = grad(fn, backend="native", background=False)
    assert g(*args) == grad(fn)(*args)
    ex = _native(g, args)
    assert ex.whole.fn is not None, ex.whole.reason
    check_grad(fn, *args, wrt=0, backend="native")
    assert "Env" not in ex.whole.source and "def mk_" not in ex.whole.source
    # The host code is not called: a program whose host code fails shows it.
    ex.host.fn = None
    assert g(*args) == grad(fn)(*args)


def test_whole_program_errors_are_the_host_codes():
    """The machine code raises: the host code runs again and raises at the user's line."""
    g = grad(loop_log, backend="native", background=False)
    for _ in range(2):  # the second call finds the direct call of the machine code
        assert_same(g(3.0, 2), grad(loop_log)(3.0, 2))
    assert _native(g, (3.0, 2)).whole.fn is not None
    assert g._direct == ((float, int), _native(g, (3.0, 2)).whole.fn)
    with pytest.raises(ValueError) as expected:
        grad(loop_log)(1.5, 3)
    with pytest.raises(ValueError) as got:
        g(1.5, 3)
    assert str(got.value) == str(expected.value)
    assert _user_lines(got.value)[-1] == _user_lines(expected.value)[-1]


def _arena(words):
    """An arena of `words` words for the stack helpers of machine code (`native_arena`)."""
    arena = np.empty(words, np.int64)
    arena[:3] = (3, 0, words)
    return arena


def _arena_helpers(module, k, arena):
    """The helpers of stacks `k` of a native module, their arena bound (as on the host)."""
    addr = arena.ctypes.data
    push, pop = module[f"_spush_{k}"], module[f"_spop_{k}"]
    return module[f"_snew_{k}"], lambda s, x: push(addr, s, x), lambda s: pop(addr, s)


def test_typed_stacks_are_persistent():
    """A push on an older version of a stack copies: both versions keep their tops."""
    g = grad(scalar_loop, backend="native", background=False)
    g(0.3, 3)
    ex = _native(g, (0.3, 3))
    host = ex.host.module.globals
    arena = _arena(4096)
    machine = _arena_helpers(vars(ex.backend.load(ex.whole.source)), 0, arena)
    outlined = vars(ex.backend.load(ex.native_source))  # the helpers of loops outlined alone
    helpers = [[d[f"_s{op}_0"] for op in ("new", "push", "pop")] for d in (host, outlined)]
    for new, push, pop in (*helpers, machine):
        s1 = push(new(), 1.0)
        s2 = push(s1, 2.0)
        s3 = push(s1, 3.0)  # s1 was pushed on already: a copy
        big = s3
        for i in range(20):  # grows past the first capacity (doubling)
            big = push(big, float(i))
        assert pop(s2)[0] == 2.0 and pop(s3)[0] == 3.0 and pop(pop(s3)[1])[0] == 1.0
        assert pop(big)[0] == 19.0 and big[1] == 22
        with pytest.raises(IndexError):
            pop(new())


def test_arena_stacks_of_tuples_of_floats_ints_and_bools():
    """The arena's stacks hold each leaf of a tuple in a word; two stacks interleave."""
    from myia.abstract.data import AbstractScalar, AbstractTuple
    from myia.compile import native_arena
    from myia.compile.native_backend import NativeBackend
    from myia.compile.native_source import _INLINE, _JIT, _leaves

    element = AbstractTuple(
        [
            AbstractScalar("float64", weak=True),
            AbstractTuple([AbstractScalar("int64", weak=True), AbstractScalar("bool", weak=True)]),
        ]
    )
    leaves = []
    assert _leaves(element, "x", leaves)
    helpers = native_arena.arena_helper_source(0, element, leaves)
    source = "\n\n".join(
        [
            "import numpy as np\nfrom numba import njit\n" + native_arena.ARENA_IMPORT,
            f"@{_JIT}{native_arena.GROW_SOURCE}",
            f"@{_INLINE}\n" + helpers.replace("\n\ndef ", f"\n\n@{_INLINE}\ndef "),
        ]
    )
    arena = _arena(3 + 2 * (1 + 3 * 8) + (1 + 3 * 16))
    new, push, pop = _arena_helpers(vars(NativeBackend().load(source)), 0, arena)
    a, b = new(), new()
    for i in range(12):  # a outgrows its region, which b's follows: it is copied
        a = push(a, (0.5 * i, (-(2**40) - i, i % 2 == 0)))
        if i < 8:
            b = push(b, (1.0, (i, True)))
    for i in reversed(range(12)):
        (x, (j, flag)), a = pop(a)
        assert (x, j, flag) == (0.5 * i, -(2**40) - i, i % 2 == 0)
        assert type(x) is float and type(j) is int and type(flag) is bool
    assert pop(b)[0] == (1.0, (7, True))
    with pytest.raises(MemoryError):  # the arena is full: the program runs again
        for _ in range(12):
            b = push(b, (2.0, (0, False)))
    assert arena[1] > len(arena)  # the words the push needed


@pytest.mark.parametrize("n", [5_000, 100_000])
def test_gradient_past_the_first_arena_is_machine_code(n):
    """A program whose stacks outgrow the arena runs again, natively, with a larger one."""
    g = grad(scalar_loop, backend="native", background=False)
    expected = grad(scalar_loop)(0.3, n)
    assert g(0.3, n) == expected
    ex = _native(g, (0.3, n))
    assert ex.whole.fn is not None, ex.whole.reason
    ex.host.fn = None  # the host code is not called
    assert g(0.3, n) == expected


def test_gradient_loops_count_no_references(tmp_path):
    """The forward and backward loops of a whole program carry integers for their stacks.

    Their machine code (compiled afresh, to be inspected) calls no reference count and no
    allocation of Numba's runtime: the arena, an array, is made by the entry only.
    """
    import importlib.util

    g = grad(scalar_loop, backend="native", background=False)
    g(0.3, 10)
    source = _native(g, (0.3, 10)).whole.source
    path = tmp_path / "myia_native_probe.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("myia_native_probe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.grad_scalar_loop(0.3, 10) == grad(scalar_loop)(0.3, 10)
    loops = re.findall(r"^def ((?:fwd|bwd)_\w+)\(", source, re.M)
    assert len(loops) == 2, source
    for name in loops:
        asm = "".join(getattr(module, name).inspect_asm().values())
        # The loop's own work: the forward calls sin (and cos, for the backward pass, which
        # multiplies by what it pops: `myia.opt.hoist`).
        work = r"\bsin\b" if name.startswith("fwd") else r"\bv?mulsd\b"
        assert re.search(work, asm), name
        for runtime in ("NRT_incref", "NRT_decref", "NRT_MemInfo_alloc", "NRT_Allocate"):
            assert runtime not in asm, (name, runtime)


def test_outlined_loops_push_in_place():
    """A loop outlined alone (not in a whole program) pushes on its stack's buffer in place.

    A push copies to a larger buffer only when the buffer is full (``_sgrow_k``); otherwise it
    writes the buffer it was given and returns it, so that the loop's machine code carries one
    array and counts no reference to a buffer merged from two paths.
    """
    g = grad(scalar_loop, backend="native", background=False)
    args = (0.3, 2000)
    g(*args)
    ex = _native(g, args)
    forward = ex.kernel("_native_loop_1")
    assert "_spush_0" in ex.native_source.split("def _native_loop_1")[1]
    new = ex.host.module.globals["_snew_0"]
    pushed, y = forward(1, 2000, new(), 0.3, 0.3)
    buf, n = pushed
    assert n == 1999 and buf.shape[0] > n + 4  # grown by doubling: room for 4 more
    again, _ = forward(1, 5, pushed, 0.3, y)
    assert again[1] == n + 4
    assert again[0].ctypes.data == buf.ctypes.data  # the same buffer, written in place
    np.testing.assert_array_equal(again[0][1 : n + 1], buf[1 : n + 1])
    # The forward loop's pushes, popped by the backward pass, give the host's gradient.
    assert g(*args) == grad(scalar_loop)(*args)


def test_python_ints_past_int64_are_computed_by_the_host():
    f = myia(big_ints, backend="native", background=False)
    for _ in range(2):
        assert_same(f(5), 3**5)
    assert _native(f, (5,)).native
    assert_same(f(70), 3**70)  # the machine code overflows: the host loop computes it


def test_stacks_of_the_users_ints_are_the_hosts():
    """A loop's gradient pushes a counter that starts at the user's int: it may not fit in
    int64, and the stacks stay the host's (Python ints past int64 are pushed and popped)."""
    g = grad(counter_from, "x", backend="native", background=False)
    for args in [(0.3, 2, 9), (0.3, 2**70, 2**70 + 3)]:
        assert_same(g(*args), grad(counter_from, "x")(*args))
        assert "int64" in _native(g, args).generator.stack_reason
    check_grad(counter_from, 0.3, 2**70, 2**70 + 3, wrt=0, backend="native")


def test_trees_run_on_the_host():
    f = myia(tree_sum, backend="native")
    assert_same(f(TREE, 2.0), myia(tree_sum)(TREE, 2.0))
    ex = _native(f, (TREE, 2.0))
    assert not ex.native and ex.reason
    g = grad(tree_sum, "w", backend="native")
    assert_same(g(TREE, 2.0), grad(tree_sum, "w")(TREE, 2.0))


def array_loop(x, W, b):
    h = np.zeros((32, 64))
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ W + h * 0.5 + b)
    return np.sum(h)


def test_array_code_is_the_numpy_backends():
    # A loop of arrays stays on the host, whose code writes elementwise results into dead
    # temporaries (`myia.compile.reuse`) as the NumPy backend's does.
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(5, 32, 16)), rng.normal(size=(16, 64)) / 4, rng.normal(size=64))
    native, numpy = grad(array_loop, "W", backend="native"), grad(array_loop, "W")
    code = native.generated_code(*args)
    assert "out=" in code and code == numpy.generated_code(*args)
    np.testing.assert_array_equal(native(*args), numpy(*args))


def _user_lines(exc):
    """The lines of this file that the error's report (Myia's traceback) shows."""
    text = "".join(traceback.format_exception(exc))
    here = os.path.abspath(__file__)
    return [int(n) for n in re.findall(rf'File "{re.escape(here)}", line (\d+)', text)]


@pytest.mark.parametrize(
    "fn, args, error, marker",
    [
        (loop_div, (1.0, 3), ZeroDivisionError, "DIV-LINE"),
        (loop_log, (1.5, 3), ValueError, "LOG-LINE"),
        (loop_sin, (math.inf, 3), ValueError, "SIN-LINE"),
        (loop_assert, (1.0, 5), AssertionError, "ASSERT-LINE"),
    ],
)
def test_errors_are_the_numpy_backends(fn, args, error, marker):
    with pytest.raises(error) as expected:
        myia(fn)(*args)
    f = myia(fn, backend="native", background=False)
    with pytest.raises(error) as got:
        f(*args)
    assert str(got.value) == str(expected.value)
    assert line_of(fn, marker) in _user_lines(got.value)
    assert _user_lines(got.value)[-1] == _user_lines(expected.value)[-1]
    # The same program without the error runs (natively where it can).
    ok = (3.0, 1)
    assert_same(f(*ok), myia(fn)(*ok))


_SCRIPT = """
import json, sys, time
t0 = time.perf_counter()
from myia import grad
from helpers import scalar_loop
g = grad(scalar_loop, backend="native", background=False)
t1 = time.perf_counter()
value = g(0.3, 100)
t2 = time.perf_counter()
ex = g.specialization(0.3, 100).executable
assert ex.ready and ex.whole.fn is not None, ex.whole.reason
stats = [sum(ex.whole.fn.stats.cache_hits.values())]
print(json.dumps({"value": value, "first_call": t2 - t1, "hits": stats}))
"""


def test_background_first_call_runs_the_host_code():
    g = grad(scalar_loop, backend="native")
    ex = _native(g, (0.3, 20))
    assert g(0.3, 20) == grad(scalar_loop)(0.3, 20)
    ex.wait()
    assert ex.ready
    assert g(0.3, 20) == grad(scalar_loop)(0.3, 20)


def prints_and_doubles(x):
    print("x =", x)
    return 2 * x


def test_numba_messages_in_a_thread_leave_the_stream_set_meanwhile():
    # Numba builds its error messages in colorama's ``ColorShell`` (where colorama is
    # installed): ``init()`` wraps sys.stdout, ``deinit()`` puts back the stream it saw. Myia
    # compiles in threads: a message built across the main thread's redirection put back the
    # older stream, and the program's print went there (numba/numba#3027).
    from myia.compile.native_backend import NativeBackend

    errors = NativeBackend().numba.core.errors
    if not hasattr(errors, "ColorShell"):
        pytest.skip("Numba without colorama touches no stream")
    entered, leave = threading.Event(), threading.Event()

    def numba_message():
        with errors.ColorShell():
            entered.set()
            leave.wait(30)

    older, newer = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(older):
        thread = threading.Thread(target=numba_message)
        thread.start()
        assert entered.wait(30)
        with contextlib.redirect_stdout(newer):
            leave.set()
            thread.join()
            assert myia(prints_and_doubles, backend="debug")(3) == 6
    assert (older.getvalue(), newer.getvalue()) == ("", "x = 3\n")
    assert "refused" in errors.termcolor().errmsg("refused")  # (its messages still made)


def _run_twice(tmp_path, script: str) -> list[dict]:
    """Run `script` in two new processes sharing the disk cache `tmp_path`: their JSON outputs."""
    env = dict(os.environ, MYIA_CACHE_DIR=str(tmp_path), MYIA_CACHE_PROGRAMS="1")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = [root, os.path.join(root, "tests"), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(path)
    import json

    runs = []
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(script)],
            env=env,
            cwd=root,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout.splitlines()[-1]))
    return runs


def test_disk_cache_across_processes(tmp_path):
    cold, warm = _run_twice(tmp_path, _SCRIPT)
    assert cold["value"] == warm["value"] == grad(scalar_loop)(0.3, 100)
    assert cold["hits"] == [0], cold
    assert all(h > 0 for h in warm["hits"]), warm
    assert list((tmp_path / "native").glob("myia_native_*.py"))


_FIRST_CALL = """
import json, sys
from myia import disk_cache, grad
from myia.compile import native_whole
from helpers import scalar_loop
started = []
start = native_whole.WholeProgram.start
def spy(self, args):
    started.append("numba" in sys.modules)
    start(self, args)
native_whole.WholeProgram.start = spy
g = grad(scalar_loop, backend="native")
value = g(0.3, 100)
ex = g.specialization(0.3, 100).executable
ex.wait()
print(json.dumps({"value": value, "again": g(0.3, 100), "hit": disk_cache.STATS["hit"],
                  "numba_before_thread": started, "native": ex.whole.fn is not None}))
"""


def test_a_first_call_in_a_new_process_waits_for_no_numba(tmp_path):
    # The program loaded from the disk cache (Myia's graphs) runs its first call as host
    # code; the thread that imports Numba and loads the machine code starts after it.
    cold, warm = _run_twice(tmp_path, _FIRST_CALL)
    assert warm["hit"] == 1, warm
    assert cold["numba_before_thread"] == warm["numba_before_thread"] == [False]
    expected = grad(scalar_loop)(0.3, 100)
    assert cold["value"] == warm["value"] == warm["again"] == expected
    assert warm["native"], warm

"""The disk cache of compiled programs (`myia.disk_cache`).

A new process calling a function with a signature compiled before loads the program and
parses nothing; a change to the function's code, to a function it calls, to a global or a
module attribute it reads, to a closure cell, to a method of an argument's class, or to the
options misses and compiles the program again, with the new result. Damaged files are
compiled again; the cache can be turned off. Every test uses its own cache directory.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from myia import disk_cache, grad, myia, value_and_grad

ROOT = Path(__file__).resolve().parent.parent

# The program of the tests that run in new processes: ``main()`` returns JSON values.
PROGRAM = """
import numpy as np

SCALE = 2.0

def helper(x):
    return np.tanh(x) * SCALE

def main_fn(x, y):
    return np.sum(helper(x) @ y) + 1.0

def main():
    import myia
    x = np.linspace(0.0, 1.0, 6).reshape(2, 3)
    y = np.ones((3, 2))
    return float(myia.myia(main_fn)(x, y))
"""

RUN = """
import json, sys
import myia.frontend.cache as parse_cache
from myia import disk_cache
import prog
out = prog.main()
print(json.dumps({"out": out, "stats": disk_cache.STATS, "parsed": len(parse_cache._cache)}))
"""


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "cache").mkdir()
    return tmp_path


def run(workdir: Path, source: str | None = None, **env: str) -> dict:
    """Run ``prog.main()`` in a new process (writing `source` to prog.py first)."""
    if source is not None:
        (workdir / "prog.py").write_text(textwrap.dedent(source))
    environ = dict(os.environ)
    environ.update(
        PYTHONPATH=f"{ROOT}{os.pathsep}{workdir}",
        MYIA_CACHE_DIR=str(workdir / "cache"),
        MYIA_CACHE_PROGRAMS="1",
        PYTHONDONTWRITEBYTECODE="1",
    )
    environ.update(env)
    proc = subprocess.run(
        [sys.executable, "-c", RUN], env=environ, cwd=workdir, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def expected(scale: float = 2.0, offset: float = 1.0) -> float:
    x = np.linspace(0.0, 1.0, 6).reshape(2, 3)
    return float(np.sum(np.tanh(x) * scale @ np.ones((3, 2))) + offset)


def programs(workdir: Path) -> list[Path]:
    d = workdir / "cache" / "programs"
    return sorted(d.glob("*.myia")) if d.exists() else []


# In new processes ----------------------------------------------------------------------------


def test_a_new_process_loads_the_program_and_parses_nothing(workdir):
    first = run(workdir, PROGRAM)
    assert first["stats"]["miss"] == 1 and first["stats"]["store"] == 1
    assert first["parsed"] > 0
    assert first["out"] == pytest.approx(expected())
    second = run(workdir)
    assert second["stats"]["hit"] == 1 and second["stats"]["store"] == 0
    assert second["parsed"] == 0  # no function parsed: no inference, no optimization
    assert second["out"] == first["out"]
    assert len(programs(workdir)) == 1


@pytest.mark.parametrize(
    "old, new, value",
    [
        ("SCALE = 2.0", "SCALE = 3.0", expected(3.0)),  # a global the helper reads
        ("np.tanh(x) * SCALE", "np.tanh(x) * SCALE * 2", expected(4.0)),  # the helper's code
        ("+ 1.0", "+ 5.0", expected(2.0, 5.0)),  # the entry's code
    ],
)
def test_a_change_to_the_source_misses(workdir, old, new, value):
    run(workdir, PROGRAM)
    changed = run(workdir, PROGRAM.replace(old, new))
    assert changed["stats"]["hit"] == 0 and changed["stats"]["store"] == 1
    assert changed["out"] == pytest.approx(value)
    again = run(workdir)
    assert again["stats"]["hit"] == 1 and again["out"] == changed["out"]


def test_an_attribute_of_another_module_is_checked(workdir):
    (workdir / "conf.py").write_text("SCALE = 2.0\n")
    source = PROGRAM.replace("SCALE = 2.0", "import conf").replace("* SCALE", "* conf.SCALE")
    assert run(workdir, source)["out"] == pytest.approx(expected())
    (workdir / "conf.py").write_text("SCALE = 0.5\n")
    changed = run(workdir)
    assert changed["stats"]["hit"] == 0 and changed["out"] == pytest.approx(expected(0.5))


def test_a_closure_cell_is_checked(workdir):
    source = """
    import os
    import numpy as np

    def make(scale):
        def f(x):
            return np.sum(np.tanh(x)) * scale
        return f

    def main():
        import myia
        f = make(float(os.environ["SCALE"]))
        return float(myia.myia(f)(np.linspace(0.0, 1.0, 6)))
    """
    x = np.linspace(0.0, 1.0, 6)
    assert run(workdir, source, SCALE="2")["out"] == pytest.approx(2 * np.sum(np.tanh(x)))
    changed = run(workdir, SCALE="3")
    assert changed["stats"]["hit"] == 0 and changed["out"] == pytest.approx(3 * np.sum(np.tanh(x)))
    assert run(workdir, SCALE="3")["stats"]["hit"] == 1


def test_a_method_of_an_argument_class_is_checked(workdir):
    source = """
    from dataclasses import dataclass
    import numpy as np

    @dataclass
    class Point:
        x: float
        y: float

        def norm2(self):
            return self.x * self.x + self.y * self.y

    def f(p):
        return p.norm2() + 1.0

    def main():
        import myia
        return float(myia.myia(f)(Point(3.0, 4.0)))
    """
    assert run(workdir, source)["out"] == 26.0
    assert run(workdir)["stats"]["hit"] == 1
    changed = run(workdir, source.replace("self.y * self.y", "2 * self.y * self.y"))
    assert changed["stats"]["hit"] == 0 and changed["out"] == 42.0


def test_a_cached_gradient_matches_finite_differences(workdir):
    source = """
    import numpy as np
    from myia import value_and_grad
    from myia.testing import check_grad

    def loss(w, x):
        return np.sum(np.tanh(x @ w) ** 2)

    def main():
        rng = np.random.default_rng(0)
        w, x = rng.normal(size=(3, 2)), rng.normal(size=(4, 3))
        check_grad(loss, w, x, wrt=0)
        value, g = value_and_grad(loss)(w, x)
        return [float(value), g.tolist()]
    """
    first = run(workdir, source)
    assert first["stats"]["store"] >= 1
    second = run(workdir)
    assert second["stats"]["hit"] >= 1 and second["stats"]["store"] == 0
    assert second["parsed"] == 0
    assert second["out"] == first["out"]


LOOP = """
import math

SCALE = 2.0

def loop(n, x):
    s = 0.0
    for i in range(n):
        s = s + math.sin(x * i) * SCALE
    return s

def main():
    import myia
    return myia.myia(loop, backend=BACKEND)(50, 0.3)
"""


@pytest.mark.parametrize("backend", ["jax", "native", "debug"])
def test_other_backends(workdir, backend):
    if backend != "debug":
        pytest.importorskip({"jax": "jax", "native": "numba"}[backend])
    import math

    value = sum(math.sin(0.3 * i) * 2.0 for i in range(50))
    first = run(workdir, LOOP.replace("BACKEND", repr(backend)))
    second = run(workdir)
    assert second["stats"]["hit"] == 1 and second["parsed"] == 0
    assert first["out"] == pytest.approx(value) and second["out"] == pytest.approx(value)
    changed = run(workdir, LOOP.replace("BACKEND", repr(backend)).replace("2.0", "3.0"))
    assert changed["stats"]["hit"] == 0 and changed["out"] == pytest.approx(value * 1.5)


def test_a_damaged_file_is_compiled_again(workdir):
    run(workdir, PROGRAM)
    (path,) = programs(workdir)
    text = path.read_bytes()
    for damaged in (b"", b"garbage", text[: len(text) // 2], text.replace(b"tanh", b"tang")):
        path.write_bytes(damaged)
        out = run(workdir)
        assert out["stats"]["hit"] == 0 and out["stats"]["store"] == 1
        assert out["out"] == pytest.approx(expected())
    assert run(workdir)["stats"]["hit"] == 1


def test_processes_sharing_the_cache(workdir):
    (workdir / "prog.py").write_text(textwrap.dedent(PROGRAM))
    environ = dict(
        os.environ,
        PYTHONPATH=f"{ROOT}{os.pathsep}{workdir}",
        MYIA_CACHE_DIR=str(workdir / "cache"),
        MYIA_CACHE_PROGRAMS="1",
    )
    command = [sys.executable, "-c", RUN]
    procs = [
        subprocess.Popen(command, env=environ, cwd=workdir, stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    for p in procs:
        out, _ = p.communicate()
        assert p.returncode == 0
        assert json.loads(out.strip().splitlines()[-1])["out"] == pytest.approx(expected())
    assert len(programs(workdir)) == 1
    assert not [p for p in (workdir / "cache" / "programs").iterdir() if p.suffix == ".tmp"]
    assert run(workdir)["stats"]["hit"] == 1


@pytest.mark.parametrize("env", [{"MYIA_CACHE_DIR": ""}, {"MYIA_CACHE_PROGRAMS": "0"}])
def test_the_cache_can_be_turned_off(workdir, env):
    for _ in range(2):
        out = run(workdir, PROGRAM, **env)
        assert out["stats"]["hit"] == 0 and out["stats"]["store"] == 0
    assert programs(workdir) == []


# In this process (the parse cache is warm: each test compiles new `myia` functions) -------


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MYIA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(disk_cache, "ENABLED", True)
    monkeypatch.setattr(disk_cache, "STATS", dict.fromkeys(disk_cache.STATS, 0))
    return tmp_path


@pytest.fixture
def module(tmp_path, monkeypatch):
    """A module of the user's, imported from a file."""
    path = tmp_path / "mod_user.py"
    path.write_text(
        textwrap.dedent(
            """
            import numpy as np

            TABLE = np.arange(3.0)

            def scaled(x):
                return x * TABLE

            def halved(x):
                return x * 0.5

            def f(x):
                return np.sum(scaled(x))
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("mod_user", None)
    mod = importlib.import_module("mod_user")
    yield mod
    sys.modules.pop("mod_user", None)


def test_hits_and_misses_in_one_process(cache, module):
    x = np.ones(3)
    assert myia(module.f)(x) == 3.0
    assert disk_cache.STATS["store"] == 1
    assert myia(module.f)(x) == 3.0
    assert disk_cache.STATS["hit"] == 1
    module.TABLE = np.arange(3.0) * 2  # another array: a miss
    assert myia(module.f)(x) == 6.0
    module.TABLE[0] = 10.0  # the same array, changed in place: a miss
    assert myia(module.f)(x) == 16.0
    assert disk_cache.STATS["hit"] == 1 and disk_cache.STATS["store"] == 3
    module.scaled = module.halved  # another helper
    assert myia(module.f)(x) == 1.5
    assert myia(module.f)(np.ones(4)) == 2.0  # another signature


def test_options_are_part_of_the_key(cache, module):
    x = np.ones(3)
    assert myia(module.f)(x) == 3.0
    np.testing.assert_allclose(grad(module.f)(x), np.arange(3.0))
    value, g = value_and_grad(module.f)(x)
    assert value == 3.0
    np.testing.assert_allclose(g, np.arange(3.0))
    assert myia(module.f, debug_nans=True)(x) == 3.0
    assert disk_cache.STATS["hit"] == 0 and disk_cache.STATS["store"] == 4
    np.testing.assert_allclose(grad(module.f)(x), np.arange(3.0))
    assert disk_cache.STATS["hit"] == 1


def test_what_a_new_process_cannot_find_is_not_cached(cache, module):
    @dataclasses.dataclass
    class Local:  # a class a new process cannot find by its name
        x: float

    def norm(p):
        return p.x * p.x

    assert myia(norm)(Local(3.0)) == 9.0
    assert disk_cache.STATS["uncacheable"] == 1 and disk_cache.STATS["store"] == 0
    assert myia(norm)(Local(3.0)) == 9.0
    assert disk_cache.STATS["hit"] == 0


def second(t):
    return t[1] * 0.5


def test_arguments_nested_deeply_are_not_cached(cache):
    # A tuple nested 400 levels deep: its key was a bare RecursionError.
    t = 1.0
    for _ in range(400):
        t = (t,)
    assert myia(second)((t, 2.0)) == 1.0
    assert disk_cache.STATS["uncacheable"] == 1


def test_the_programs_of_the_saving_tests_are_loaded_with_equal_results(cache):
    from helpers import assert_same
    from test_saving import PROGRAMS

    for _, fn, args in PROGRAMS:
        disk_cache.ENABLED = False
        expected_value = fn(*args)  # compiled without the disk cache
        disk_cache.ENABLED = True
        for _ in range(2):  # compiled and stored, then loaded
            if hasattr(fn, "wrt"):
                make = value_and_grad if fn.value else grad
                again = make(fn._wrapped or fn.fn, *fn.wrt)
            else:
                again = myia(fn._wrapped or fn.fn)
            assert_same(again(*args), expected_value)
    assert disk_cache.STATS["hit"] == disk_cache.STATS["store"] == len(PROGRAMS)


def test_a_loaded_gradient_is_profiled_forward_and_backward_as_a_compiled_one(cache):
    from test_profiling import W, X, one_heavy_line

    from myia import profile

    def rows():
        p = profile(grad(one_heavy_line), show=False)
        p(W, X)
        return {(r.line, r.backward) for r in p.last.rows}

    compiled = rows()
    assert disk_cache.STATS["store"] == 1
    loaded = rows()
    assert disk_cache.STATS["hit"] == 1
    assert loaded == compiled and any(backward for _, backward in loaded)


def noisy(x, rng):
    return np.sum(x * rng.normal(size=3)) + rng.uniform()


def test_a_loaded_program_draws_the_same_numbers(cache):
    x = np.arange(3.0)
    first = myia(noisy)(x, np.random.default_rng(1))
    assert disk_cache.STATS["store"] == 1
    again = myia(noisy)(x, np.random.default_rng(1))
    assert disk_cache.STATS["hit"] == 1 and again == first


def test_a_gradient_through_checkpoints_is_loaded_with_equal_results(cache):
    from test_checkpoint import X, Y, closure_inside, two_blocks

    for fn in (two_blocks, closure_inside):
        disk_cache.ENABLED = False
        expected_value = grad(fn, 0, 1)(X, Y)
        disk_cache.ENABLED = True
        for _ in range(2):  # compiled and stored, then loaded
            got = grad(fn, 0, 1)(X, Y)
            for a, b in zip(got, expected_value):
                np.testing.assert_allclose(a, b, rtol=1e-12)
    assert disk_cache.STATS["hit"] == disk_cache.STATS["store"] == 2

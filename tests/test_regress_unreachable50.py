"""Second derivatives of a loop whose body takes the gradient of a closure that loops.

``w = w - grad(loss)(w)`` in a ``for`` loop, ``loss`` looping in turn: ``grad(grad(f))``
raised "a branch proved unreachable was taken" (on the debug backend, "DEAD is not
callable") for some PYTHONHASHSEED values, and ``hessian(f)`` and top-level
``vmap(grad(f))`` for every one. A backpropagator that the second-order forward loop pushes
on its stack was specialized as never called: building a graph finishes the inference of its
context where that was tentative, and interpreting it again called the backpropagator, made
in a context built before. The specializer now looks again at the values it found never
called once every graph is built (`Specializer.revive`).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from myia import grad, hessian, vmap

XS = np.array([0.7, -1.3])


def times_x(x):
    # loss(w) = 2 w x: w ends at -4 x, f = 16 x**2.
    def loss(w):
        s = 0.0
        for _i in range(2):
            s = s + w * x
        return s

    w = 0.0
    for _k in range(2):
        w = w - grad(loss)(w)
    return w * w


def squared_distance(x):
    # loss(w) = 2 (w - x)**2: w ends at -8 x, f = 64 x**2.
    def loss(w):
        s = 0.0
        for _i in range(2):
            s = s + (w - x) ** 2
        return s

    w = 0.0
    for _k in range(2):
        w = w - grad(loss)(w)
    return w * w


def scaled_square(x):
    # loss(w) = 2 w**2 x: w ends at (1 - 4 x)**2, f = (1 - 4 x)**2.
    def loss(w):
        s = 0.0
        for _i in range(2):
            s = s + w * w * x
        return s

    w = 1.0
    for _k in range(2):
        w = w - grad(loss)(w)
    return w


#: Each program with its first and second derivatives in closed form.
PROGRAMS = {
    "times_x": (times_x, lambda x: 32.0 * x, lambda x: 32.0),
    "squared_distance": (squared_distance, lambda x: 128.0 * x, lambda x: 128.0),
    "scaled_square": (scaled_square, lambda x: -8.0 * (1.0 - 4.0 * x), lambda x: 32.0),
}


def check(name: str) -> None:
    """Check `name`'s second derivatives and batched gradient (run in a child process)."""
    f, d1, d2 = PROGRAMS[name]
    assert np.isclose(grad(grad(f))(0.7), d2(0.7))
    assert np.isclose(hessian(f)(0.7), d2(0.7))
    assert np.allclose(vmap(grad(f))(XS), [d1(x) for x in XS])


def test_closed_forms_agree_with_finite_differences():
    # The closed forms (run in Python: `grad` is only called in Myia code here) against
    # central differences of the primal with the inner gradient written by hand.
    inner = {
        "times_x": lambda w, x: 2.0 * x,
        "squared_distance": lambda w, x: 4.0 * (w - x),
        "scaled_square": lambda w, x: 4.0 * w * x,
    }
    start = {"times_x": 0.0, "squared_distance": 0.0, "scaled_square": 1.0}
    finals = {"times_x": "sq", "squared_distance": "sq", "scaled_square": "id"}

    def primal(name, x):
        w = start[name]
        for _ in range(2):
            w = w - inner[name](w, x)
        return w * w if finals[name] == "sq" else w

    h = 1e-4
    for name, (_, d1, d2) in PROGRAMS.items():
        for x in (0.7, -1.3):
            fd1 = (primal(name, x + h) - primal(name, x - h)) / (2 * h)
            fd2 = (primal(name, x + h) - 2 * primal(name, x) + primal(name, x - h)) / h**2
            assert np.isclose(fd1, d1(x), rtol=1e-6), name
            assert np.isclose(fd2, d2(x), rtol=1e-4), name


@pytest.mark.parametrize("backend", ["numpy", "debug"])
@pytest.mark.parametrize("seed", ["1", "2", "3"])
def test_second_order_under_each_hash_seed(seed, backend, tmp_path):
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import test_regress_unreachable50 as t\n"
        "for name in sys.argv[2:]:\n    t.check(name)\n"
    )
    # The debug backend interprets: the program the failure was found in only.
    names = list(PROGRAMS) if backend == "numpy" else ["times_x"]
    env = {
        **os.environ,
        "PYTHONHASHSEED": seed,
        "MYIA_BACKEND": backend,
        "MYIA_CACHE_DIR": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-c", code, os.path.dirname(__file__), *names],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_vmap_of_vmap_of_the_gradient():
    xs = np.array([[0.7, -1.3], [0.2, 1.1]])
    assert np.allclose(vmap(vmap(grad(times_x)))(xs), 32.0 * xs)

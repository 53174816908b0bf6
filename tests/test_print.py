"""``print`` inside Myia code: f-strings, ``sep``, ``end``, ``file``, and program order."""

import importlib.util
import math
import sys

import numpy as np
import pytest

from myia import grad, myia
from myia.debug import print_grad
from myia.errors import MyiaTypeError
from myia.testing import check_grad


def _installed(name):
    return importlib.util.find_spec(name) is not None


#: Every backend (the optional ones when installed): prints come in program order on each.
BACKENDS = [
    "numpy",
    "debug",
    pytest.param("jax", marks=pytest.mark.skipif(not _installed("jax"), reason="no jax")),
    pytest.param("native", marks=pytest.mark.skipif(not _installed("numba"), reason="no numba")),
]


def fstrings(x, a, n):
    print(f"x={x:.3f} r={x!r:>8} a={a} n={n:{n}d} p={x:.{n}f} {'lit'} {x=} {n + 1:03d}")
    s = f"{n}"
    print(s, s, sep="")
    print(f"{x * 2:e}", f"{(x, n)}", f"{a.shape}", f"{a[0]:.2f}")
    return x


def sep_end_file(x, n):
    print("a", x, n, sep="-", end="!\n")
    print("to stderr", x, file=sys.stderr)
    print("to stdout", file=sys.stdout)
    print(end="")
    print()
    print("no newline", end="")
    return x + 1.0


def arrays(a, b):
    print(a)
    print(b * 2)
    print(f"{a}")
    print(repr(b) if False else f"{b!r}")
    return np.sum(a)


def in_loop(x, n):
    y = x
    for i in range(n):
        y = y * 2.0
        print(f"iteration {i}: {y:.1f}")
    while y > 1.0:
        y = y / 4.0
        print("while", y)
    return y


def in_branch(x):
    if x > 0:
        print(f"positive {x}")
        y = x * 2.0
    else:
        print(f"negative {x}")
        y = x * 3.0
    print("after", "branch" if x > 0 else "other")
    return y


def recursive(n):
    if n == 0:
        print("bottom")
        return 0
    print(f"down {n}")
    r = recursive(n - 1)
    print(f"up {n}")
    return r + n


def closure(x):
    def show(label, v):
        print(f"{label}: {v:.2f}")
        return v

    a = show("first", x)
    b = show("second", x * 2.0)
    return a + b


def joined_string(x, c):
    s = "fixed" if c else f"made {x}"
    print(s)
    return x


CASES = [
    (fstrings, (1.25, np.arange(3.0), 3)),
    (sep_end_file, (2.5, 4)),
    (arrays, (np.arange(6.0).reshape(2, 3), np.array([1, 2, 3], dtype=np.int32))),
    (in_loop, (1.5, 3)),
    (in_branch, (1.5,)),
    (in_branch, (-1.5,)),
    (recursive, (3,)),
    (closure, (1.0,)),
    (joined_string, (1.0, True)),
    (joined_string, (1.0, False)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_prints_as_python(fn, args, backend, capsys):
    expected = fn(*args)
    want = capsys.readouterr()
    got = myia(fn, backend=backend)(*args)
    assert got == expected
    out = capsys.readouterr()
    assert out.out == want.out
    assert out.err == want.err


@pytest.mark.parametrize("backend", BACKENDS)
def test_prints_once_per_forward_pass_under_grad(backend, capsys):
    def f(x, n):
        y = x
        for i in range(n):
            print(f"step {i}")
            y = y * x
        if y > 0:
            print(f"y={y:.2f}")
        return y

    g = grad(f, backend=backend)(1.5, 2)
    assert g == pytest.approx(3 * 1.5**2)
    assert capsys.readouterr().out == "step 0\nstep 1\ny=3.38\n"


def test_generated_code_prints_to_the_stream_at_run_time(capsys):
    f = myia(sep_end_file)
    f(1.0, 2)
    first = capsys.readouterr()
    assert "to stderr" in first.err and "to stderr" not in first.out
    f(1.0, 2)  # compiled once: the streams are looked up at each call
    assert capsys.readouterr() == first


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_rejects_other_files(backend):
    def f(x):
        print(x, file=x)
        return x

    with pytest.raises(MyiaTypeError, match="file must be sys.stdout or sys.stderr"):
        myia(f, backend=backend)(1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_format_errors_are_python_errors(backend):
    def f(x):
        return f"{x:d}"

    with pytest.raises(ValueError):
        f(1.5)
    with pytest.raises(ValueError):
        myia(f, backend=backend)(1.5)


def test_fstring_is_a_string_value():
    def f(x, n):
        s = f"{x:.1f}/{n}"
        return s

    assert myia(f)(1.25, 3) == "1.2/3"


@pytest.mark.parametrize("backend", BACKENDS)
def test_prints_in_a_recursion_under_grad(backend, capsys):
    def rec(x, n):
        if n == 0:
            return x
        print(f"level {n}")
        return rec(x * x, n - 1)

    assert grad(rec, "x", backend=backend)(1.5, 2) == pytest.approx(4 * 1.5**3)
    assert capsys.readouterr().out == "level 2\nlevel 1\n"


# ``myia.debug.print_grad``: the gradient flowing back into a value, printed in the reverse
# phase.

PRINT_GRAD_BACKENDS = ["numpy", "debug", "jax", "native"]


def watched_layer(w, x):
    h = print_grad(np.tanh(x @ w), "h")
    return np.sum(h**2)


def watched_loop(x, n):
    for i in range(n):
        x = print_grad(x * 2.0 + i, "x")
    return x * x


def watched_twice(x):
    y = print_grad(math.sin(x), "y")
    return y * y + 3.0 * y


def _backend_or_skip(backend):
    if backend in ("jax", "native"):
        pytest.importorskip("jax" if backend == "jax" else "numba")
    return backend


@pytest.mark.parametrize("backend", PRINT_GRAD_BACKENDS)
def test_print_grad_prints_the_gradient_in_the_reverse_phase(backend, capsys):
    backend = _backend_or_skip(backend)
    w = np.array([[0.5, -0.25], [0.125, 1.0]])
    x = np.array([[1.0, 2.0]])
    gw = grad(watched_layer, backend=backend)(w, x)
    h = np.tanh(x @ w)
    assert capsys.readouterr().out == f"h: {2 * h}\n"
    np.testing.assert_allclose(gw, x.T @ (2 * h * (1 - h**2)))
    check_grad(watched_layer, w, x)


@pytest.mark.parametrize("backend", PRINT_GRAD_BACKENDS)
def test_print_grad_in_a_loop_prints_each_iteration_last_first(backend, capsys):
    backend = _backend_or_skip(backend)
    assert grad(watched_loop, "x", backend=backend)(1.0, 3) == 192.0
    # x1 = 2, x2 = 5, x3 = 12; the loss is x3**2: d/dx3 = 24, d/dx2 = 48, d/dx1 = 96.
    assert capsys.readouterr().out == "x: 24.0\nx: 48.0\nx: 96.0\n"


@pytest.mark.parametrize("backend", ["numpy", "debug"])
def test_print_grad_prints_nothing_without_a_gradient(backend, capsys):
    assert myia(watched_twice, backend=backend)(0.5) == pytest.approx(watched_twice(0.5))
    assert watched_twice(0.5) == pytest.approx(math.sin(0.5) ** 2 + 3 * math.sin(0.5))
    assert capsys.readouterr().out == ""


def test_print_grad_sums_every_use_and_composes_with_second_order(capsys):
    x = 0.75
    dy = 2 * math.sin(x) + 3.0
    assert grad(watched_twice)(x) == pytest.approx(dy * math.cos(x))
    assert capsys.readouterr().out == f"y: {dy!r}\n"
    second = grad(grad(watched_twice))(x)
    expected = 2 * math.cos(x) ** 2 - (2 * math.sin(x) + 3.0) * math.sin(x)
    assert second == pytest.approx(expected)
    assert capsys.readouterr().out.startswith("y: ")
    check_grad(watched_twice, x)

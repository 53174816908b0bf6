"""``print`` inside Myia code: f-strings, ``sep``, ``end``, ``file``, and program order."""

import sys

import numpy as np
import pytest

from myia import grad, myia
from myia.errors import MyiaTypeError

BACKENDS = ["numpy", "debug"]


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

"""Copies of one function in the JAX backend's generated code are made one function.

`myia.compile.jax_copies.without_copies` replaces each top-level function that is the same
as an earlier one but for its names (its variables, and the names of functions that are
copies of one another) by that one; a difference in a constant, a global's value or a
builtin keeps both.
"""

from __future__ import annotations

import ast

import pytest

from myia.abstract.data import AbstractScalar
from myia.compile.jax_copies import without_copies


def _functions(source: str) -> list[str]:
    return [s.name for s in ast.parse(source).body if isinstance(s, ast.FunctionDef)]


MAKERS = """
def main(a, b):
    return mk_f(a)(b) + mk_f_2(b)(a) + g(a) + g_2(b)

def mk_f(x):
    def f(y):
        z = x * y + C
        return h(z)
    return f

def mk_f_2(x_2):
    def f_2(y_2):
        z_2 = x_2 * y_2 + C_2
        return h_2(z_2)
    return f_2

def h(u):
    return u - 1.0

def h_2(u_2):
    return u_2 - 1.0

def g(v):
    return v * 0.0

def g_2(v_2):
    return v_2 * 0
"""


def test_copies_are_one_function_and_compute_the_same():
    globals_ = {"C": AbstractScalar("float64"), "C_2": AbstractScalar("float64")}
    out = without_copies(MAKERS, globals_, "main")
    # mk_f_2 and h_2 are copies (the same but for names, and h_2 a copy of h); g_2 is not
    # (0 is not 0.0, though 0 == 0.0).
    assert _functions(out) == ["main", "mk_f", "h", "g", "g_2"]
    assert "mk_f(b)(a)" in out
    env: dict = {"C": 2.0, "C_2": 2.0}
    exec(MAKERS, env)
    merged: dict = {"C": 2.0, "C_2": 2.0}
    exec(out, merged)
    assert merged["main"](3.0, 4.0) == env["main"](3.0, 4.0)


def test_globals_of_other_values_keep_both():
    globals_ = {"C": AbstractScalar("float64"), "C_2": AbstractScalar("int64")}
    out = without_copies(MAKERS, globals_, "main")
    assert "mk_f_2" in _functions(out) and "h_2" not in _functions(out)


def test_other_builtins_keep_both():
    source = "def main(x):\n    return f(x) + f_2(x)\n\ndef f(a):\n    return len(a)\n\n"
    source += "def f_2(b):\n    return abs(b)\n"
    assert _functions(without_copies(source, {}, "main")) == ["main", "f", "f_2"]


def test_functions_calling_copies_of_each_other_are_copies():
    source = """
def main(n):
    return even(n) + even_2(n)

def even(n_1):
    return True if n_1 == 0 else odd(n_1 - 1)

def odd(n_2):
    return False if n_2 == 0 else even(n_2 - 1)

def even_2(n_3):
    return True if n_3 == 0 else odd_2(n_3 - 1)

def odd_2(n_4):
    return False if n_4 == 0 else even_2(n_4 - 1)
"""
    out = without_copies(source, {}, "main")
    assert _functions(out) == ["main", "even", "odd"]
    assert "even(n) + even(n)" in out


def test_the_entry_stays():
    source = "def f(a):\n    return a + 1\n\ndef main(b):\n    return b + 1\n"
    source += "\ndef g(c):\n    return f(c) + main(c)\n"
    out = without_copies(source, {}, "main")
    assert _functions(out) == ["main", "g"]
    assert "main(c) + main(c)" in out


def test_a_function_binding_a_global_name_is_left_alone():
    source = "def main(a):\n    return f(a) + f_2(a)\n\ndef f(x):\n    K = x\n    return K\n\n"
    source += "def f_2(y):\n    K_2 = y\n    return K_2\n"
    assert _functions(without_copies(source, {"K": 1}, "main")) == ["main", "f", "f_2"]


def test_closures_of_one_code_in_a_union_join_as_one():
    pytest.importorskip("jax")
    from myia.compile import jax_skeletons as sk

    def make(x):
        def f(y):
            return x + y

        return f

    def other(x):
        def g(y):
            return x * y

        return g

    union = sk.merge(sk.split(make(1.0), []), sk.split(other(2.0), []))
    assert union[0] == "union" and len(union[1]) == 2
    # A closure of f's code holding a value of another skeleton joins f's alternative.
    joined = sk.merge(union, sk.split(make((1.0, 2.0)), []))
    assert joined[0] == "union" and len(joined[1]) == 2
    assert sk._fits_in(sk.split(make((1.0, 2.0)), []), joined)
    assert sk._fits_in(sk.split(make(1.0), []), joined)

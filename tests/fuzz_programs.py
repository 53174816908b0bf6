"""A generator of random programs in the subset Myia compiles, for differential testing.

`program(seed)` writes the source of a module that defines ``f(x, y)`` (two floats in, a
float out) and a few helper functions it calls. The programs use scalar arithmetic, smooth
math functions, ``if``/``else``, ``while`` loops with bounded trip counts, ``for`` over
``range``, tuples, conditional expressions and ``and``/``or`` in conditions. Values stay
bounded (``math.tanh`` wraps what could grow), so that no program overflows.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from typing import Any

UNARY = ["math.sin", "math.cos", "math.tanh", "math.exp"]


class Generator:
    """Random statements and expressions over a growing set of float variables."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.helpers: list[str] = []
        self.nhelpers = 0

    def const(self) -> str:
        return repr(round(self.rng.uniform(-2.0, 2.0), 2))

    def expr(self, names: list[str], depth: int = 0) -> str:
        r = self.rng.random()
        if depth >= 3 or r < 0.25:
            return self.rng.choice(names) if self.rng.random() < 0.8 else self.const()
        a = self.expr(names, depth + 1)
        b = self.expr(names, depth + 1)
        if r < 0.55:
            return f"({a} {self.rng.choice(['+', '-', '*'])} {b})"
        if r < 0.65:
            return f"({a} / (1.0 + {b} * {b}))"
        if r < 0.8:
            fn = self.rng.choice(UNARY)
            return f"{fn}(math.tanh({a}))" if fn == "math.exp" else f"{fn}({a})"
        if r < 0.88:
            return f"({a} if {self.cond(names, depth + 1)} else {b})"
        if r < 0.94 and self.nhelpers < 3:
            return self.call(names, depth)
        return f"math.tanh({a})"

    def cond(self, names: list[str], depth: int = 0) -> str:
        a = self.expr(names, depth + 2)
        op = self.rng.choice(["<", ">", "<=", ">="])
        c = f"{a} {op} {self.const()}"
        r = self.rng.random()
        if r < 0.15:
            return f"({c} and {self.rng.choice(names)} > {self.const()})"
        if r < 0.3:
            return f"({c} or {self.rng.choice(names)} < {self.const()})"
        if r < 0.35:
            return f"not ({c})"
        return c

    def call(self, names: list[str], depth: int) -> str:
        name = f"h{self.nhelpers}"
        self.nhelpers += 1
        body = self.block(["a", "b"], 1, 2)
        self.helpers.append(f"def {name}(a, b):\n{body}")
        return f"{name}({self.expr(names, depth + 1)}, {self.expr(names, depth + 1)})"

    def block(self, names: list[str], indent: int, nstmts: int) -> str:
        """Statements, then a return of a float; `names` are the variables in scope."""
        names = list(names)
        pad = "    " * indent
        out: list[str] = []
        for _ in range(nstmts):
            out += self.statement(names, pad)
        out.append(f"{pad}return {self.expr(names)}")
        return "\n".join(out) + "\n"

    def statement(self, names: list[str], pad: str) -> list[str]:
        r = self.rng.random()
        target = self.rng.choice(names) if self.rng.random() < 0.5 else f"v{len(names)}"
        if r < 0.35:
            line = [f"{pad}{target} = {self.expr(names)}"]
        elif r < 0.5:
            line = [
                f"{pad}if {self.cond(names)}:",
                f"{pad}    {target} = {self.expr(names)}",
                f"{pad}else:",
                f"{pad}    {target} = {self.expr(names)}",
            ]
        elif r < 0.6:
            # Assigned in one branch only: `target` must be defined before.
            if target not in names:
                target = names[0]
            line = [f"{pad}if {self.cond(names)}:", f"{pad}    {target} = {self.expr(names)}"]
        elif r < 0.72:
            n = self.rng.randint(0, 4)
            if target not in names:
                line = [f"{pad}{target} = {self.const()}"]
            else:
                line = []
            line += [
                f"{pad}for i in range({n}):",
                f"{pad}    {target} = math.tanh({target} + {self.expr(names + ['i'])})",
            ]
        elif r < 0.84:
            n = self.rng.randint(0, 3)
            if target not in names:
                line = [f"{pad}{target} = {self.const()}"]
            else:
                line = []
            line += [
                f"{pad}k = 0",
                f"{pad}while k < {n}:",
                f"{pad}    {target} = math.tanh({target} * {self.expr(names)})",
                f"{pad}    k = k + 1",
            ]
        else:
            a, b = self.expr(names), self.expr(names)
            line = [
                f"{pad}t = ({a}, {b})",
                f"{pad}{target} = t[{self.rng.randint(0, 1)}] + t[1] * {self.const()}",
            ]
        if target not in names:
            names.append(target)
        return line


def program(seed: int) -> str:
    """The source of a random module defining ``f(x, y)`` (see the module's docstring)."""
    gen = Generator(seed)
    body = gen.block(["x", "y"], 1, gen.rng.randint(1, 5))
    main = f"def f(x, y):\n{body}"
    return "import math\n\n\n" + "\n\n".join(gen.helpers + [main])


_LOADED: dict[int, tuple[Any, Any, Any]] = {}


def load_program(seed: int, directory: Path) -> tuple[Any, Any, Any]:
    """``(f, myia(f), grad(f, "x", "y"))`` of the program of `seed`, made once per session.

    Its module is written in `directory` (the first time). The fuzzing tests and the saving
    tests share them: each compilation is done once, and each test checks what it checks.
    """
    if seed not in _LOADED:
        from myia import grad, myia

        path = directory / f"fuzz_{seed}.py"
        path.write_text(program(seed))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        f = module.f
        _LOADED[seed] = (f, myia(f), grad(f, "x", "y"))
    return _LOADED[seed]

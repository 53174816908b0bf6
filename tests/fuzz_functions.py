"""A generator of random array programs with functions, closures, recursion and loops.

`program(seed)` writes the source of a module defining ``f(x, y)``: two NumPy arrays (or an
array and a scalar) of small shapes chosen per program, of dtype float64 or float32, and a
float result (a reduction). Its statements assign expressions of `fuzz_arrays`; branch on
values; run ``for`` loops whose body calls a closure capturing the loop variable and outer
values; pass functions (lambdas, nested functions) to helpers that apply them in a loop;
recurse with a bounded depth, constant or chosen by values; ``break`` and ``continue`` on
values; run ``while`` loops whose trip count depends on values; and carry dataclasses and
tuples through loops. `inputs(seed)` gives the arguments to call it with.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
from fuzz_arrays import ArrayExprs, Shape

HEADER = """\
from dataclasses import dataclass

import numpy as np


@dataclass
class State:
    a: object
    b: object


def apply(fn, a, n):
    for _ in range(n):
        a = fn(a)
    return a
"""


class Generator:
    """Random statements over array variables of tracked shapes."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.dtype = "float32" if self.rng.random() < 0.3 else "float64"
        dims = [self.rng.randint(1, 4) for _ in range(3)]
        self.ex = ArrayExprs(self.rng, self.dtype, dims)
        m, n, k = dims
        self.shapes: list[Shape] = [(m, n), (n,), (m, 1), (1, n), (n, k), ()]
        self.x = (m, n)
        self.y = self.rng.choice([(n,), (m, 1), (m, n), (n, k), ()])
        self.helpers: list[str] = []
        self.count = 0
        # The loop counter as an operand: an int is a strong type to NumPy's functions
        # (`np.maximum(i, i)` is int64), which would make float32 values float64.
        self.i = "i" if self.dtype == "float64" else "np.float32(i)"

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def shape(self) -> Shape:
        return self.rng.choice(self.shapes)

    def expr(self, shape: Shape, names: dict[str, Shape], depth: int = 1) -> str:
        return self.ex.expr(shape, names, depth)

    def cond(self, names: dict[str, Shape]) -> str:
        a = self.expr(self.shape(), names, 2)
        red = self.rng.choice(["np.sum", "np.max", "np.mean"])
        c = f"{red}({a}) {self.rng.choice(['<', '>'])} {self.ex.const()}"
        r = self.rng.random()
        if r < 0.15:
            return f"({c} and {self.expr((), names, 2)} > {self.ex.const()})"
        if r < 0.25:
            return f"({c} or {self.expr((), names, 2)} < {self.ex.const()})"
        return c

    def block(self, names: dict[str, Shape], indent: int, nstmts: int) -> str:
        """Statements, then the return of a scalar; `names` are the variables in scope."""
        names = dict(names)
        pad = "    " * indent
        out: list[str] = []
        for _ in range(nstmts):
            out += self.statement(names, pad)
        out.append(f"{pad}return {self.rng.choice(['np.sum', 'np.mean'])}({self.result(names)})")
        return "\n".join(out) + "\n"

    def result(self, names: dict[str, Shape]) -> str:
        shape = self.shape()
        last = [n for n in names if n.startswith("v")]
        if last and self.rng.random() < 0.7:
            shape = names[last[-1]]
            return f"{last[-1]} + {self.expr(shape, names, 2)}"
        return self.expr(shape, names)

    def target(self, names: dict[str, Shape]) -> tuple[str, Shape, list[str]]:
        """A variable to assign (an existing one, or a new one given a first value)."""
        old = [n for n in names if n not in ("x", "y")]
        if old and self.rng.random() < 0.5:
            t = self.rng.choice(old)
            return t, names[t], []
        shape = self.shape()
        t = self.fresh("v")
        return t, shape, [f"{t} = {self.expr(shape, names)}"]

    def statement(self, names: dict[str, Shape], pad: str) -> list[str]:
        r = self.rng.random()
        t, shape, first = self.target(names)
        scope = dict(names)
        scope[t] = shape
        n = self.rng.randint(0, 4)
        lines: list[str]
        if r < 0.2:
            lines = [f"{t} = {self.expr(shape, names)}"] if not first else first
        elif r < 0.32:
            lines = first + [
                f"if {self.cond(scope)}:",
                f"    {t} = {self.expr(shape, scope)}",
                "else:",
                f"    {t} = {self.expr(shape, scope)}",
            ]
        elif r < 0.44:  # a closure capturing the loop variable and an outer value
            g = self.fresh("step")
            outer = dict(scope)
            outer[self.i] = ()
            inner = {**outer, "a": shape}
            lines = first + [
                f"for i in range({n}):",
                f"    def {g}(a):",
                f"        return np.tanh(a * {self.ex.const()} + {self.expr(shape, inner)})",
                f"    {t} = {g}({t})",
            ]
        elif r < 0.52:  # a function passed as an argument
            fn = f"lambda a: np.tanh(a + {self.expr(shape, {**scope, 'a': shape}, 2)})"
            lines = first + [f"{t} = apply({fn}, {t}, {n})"]
        elif r < 0.62:  # recursion
            lines = first + [f"{t} = {self.recursion(shape, t, scope)}"]
        elif r < 0.74:  # break / continue on values, maybe calling a closure
            word = self.rng.choice(["break", "continue"])
            step = f"np.tanh({t} + {self.expr(shape, {**scope, self.i: ()})})"
            lines = list(first)
            if self.rng.random() < 0.5:
                g = self.fresh("g")
                # (Not reading `t`, which the loop assigns: a closure captures values.)
                inner = {**{k: v for k, v in scope.items() if k != t}, "a": shape}
                lines.append(f"def {g}(a):")
                lines.append(f"    return np.tanh(a * {self.expr(shape, inner)})")
                step = f"{g}({t}) + {step}"
            lines += [
                f"for i in range({n}):",
                f"    if {self.cond(scope)}:",
                f"        {word}",
                f"    {t} = {step}",
            ]
        elif r < 0.82:  # a trip count that depends on values
            k = self.fresh("k")
            red = self.rng.choice(["np.sum", "np.max"])
            bound = round(self.rng.uniform(0.2, 3.0), 2)
            lines = first + [
                f"{k} = 0",
                f"while {k} < {n} and {red}({t} * {t}) < {bound}:",
                f"    {t} = np.tanh({t} * 1.5 + {self.expr(shape, scope)})",
                f"    {k} = {k} + 1",
            ]
        elif r < 0.9:  # a dataclass or a tuple carried through a loop
            lines = first + self.carried(t, shape, scope, n)
        else:
            lines = first + [f"{t} = {self.call(shape, scope)}"]
        names[t] = shape
        return [pad + line for line in lines]

    def recursion(self, shape: Shape, t: str, scope: dict[str, Shape]) -> str:
        g = self.fresh("rec")
        inner = {"a": shape}
        if self.rng.random() < 0.5:  # a constant depth
            body = [
                f"def {g}(a, k):",
                f"    return a if k == 0 else {g}(np.tanh({self.expr(shape, inner)}), k - 1)",
            ]
            self.helpers.append("\n".join(body) + "\n")
            return f"{g}({t}, {self.rng.randint(0, 4)})"
        body = [  # a depth chosen by the values
            f"def {g}(a, k):",
            f"    if k <= 0 or np.sum(a) > {self.ex.const()}:",
            "        return a",
            f"    return {g}(np.tanh(a + {self.expr(shape, inner)}), k - 1)",
        ]
        self.helpers.append("\n".join(body) + "\n")
        return f"{g}({t}, {self.rng.randint(0, 4)})"

    def carried(self, t: str, shape: Shape, scope: dict[str, Shape], n: int) -> list[str]:
        other = self.rng.choice([(), shape])
        s = self.fresh("s")
        inner = {**scope, "p": shape, "q": other}
        step_a = f"np.tanh(p * {self.ex.const()} + {self.expr(shape, inner)})"
        step_b = f"np.tanh(q + {self.expr(other, inner)})"
        if self.rng.random() < 0.5:
            return [
                f"{s} = State({t}, {self.expr(other, scope)})",
                f"for i in range({n}):",
                f"    p, q = {s}.a, {s}.b",
                f"    {s} = State({step_a}, {step_b})",
                f"{t} = {s}.a + {s}.b",
            ]
        return [
            f"{s} = ({t}, {self.expr(other, scope)})",
            f"for i in range({n}):",
            f"    p, q = {s}",
            f"    {s} = ({step_a}, {step_b})",
            f"{t} = {s}[0] * {s}[1]",
        ]

    def call(self, shape: Shape, scope: dict[str, Shape]) -> str:
        h = self.fresh("h")
        sa, sb = self.shape(), self.shape()
        body = self.block({"a": sa, "b": sb}, 1, self.rng.randint(1, 2))
        self.helpers.append(f"def {h}(a, b):\n{body}")
        return f"{self.expr(shape, scope)} * {h}({self.expr(sa, scope)}, {self.expr(sb, scope)})"


def program(seed: int) -> str:
    """The source of a random module defining ``f(x, y)`` (see the module's docstring)."""
    gen = Generator(seed)
    body = gen.block({"x": gen.x, "y": gen.y}, 1, gen.rng.randint(1, 3))
    main = f"def f(x, y):\n{body}"
    return "\n\n".join([HEADER, *gen.helpers, main])


def inputs(seed: int, point: int = 0) -> tuple[Any, Any]:
    """Arguments for the program of `seed`: arrays (or a scalar) of its shapes and dtype."""
    gen = Generator(seed)
    rng = np.random.default_rng([seed, point])
    dtype = np.dtype(gen.dtype)
    x = rng.uniform(-1.0, 1.0, gen.x).astype(dtype)
    if gen.y == ():
        y = float(rng.uniform(-1.0, 1.0)) if dtype == np.float64 else dtype.type(rng.uniform())
    else:
        y = rng.uniform(-1.0, 1.0, gen.y).astype(dtype)
    return x, y


def load(seed: int, directory: Path) -> Any:
    """The module of the program of `seed`, written in `directory` and imported."""
    path = directory / f"fuzzf_{seed}.py"
    path.write_text(program(seed))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module

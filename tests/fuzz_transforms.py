"""Random array programs with array or tuple results, for fuzzing the transformations.

`program(seed)` writes the source of a module defining ``f(x, y)`` and ``fs(x, y)``: ``f``'s
statements are those of `fuzz_functions` (branches, loops with closures, recursion,
``break``, value-dependent ``while`` loops, dataclasses and tuples carried through loops,
helpers), in float64, and it returns an array of one of the program's shapes (or a pair of an
array and a scalar) that depends on ``x``; ``fs`` is a scalar function of ``f``'s result (for
``grad`` and ``hessian``). `inputs(seed, point)` gives arguments; `load` imports the module.
The references of the transformations need no trust in them: a Python loop over examples for
``vmap``, central differences of the Python function for the derivatives.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np
from fuzz_arrays import Shape
from fuzz_functions import HEADER, Generator


class Spec:
    """The program of a seed: its source, shapes, and whether ``f`` returns a pair."""

    def __init__(self, seed: int):
        gen = Generator(seed)
        gen.dtype = gen.ex.dtype = "float64"
        gen.i = "i"
        names: dict[str, Shape] = {"x": gen.x, "y": gen.y}
        lines: list[str] = []
        for _ in range(gen.rng.randint(1, 3)):
            lines += gen.statement(names, "    ")
        last = [n for n in names if n.startswith("v")]
        if last and gen.rng.random() < 0.7:
            self.out: Shape = names[last[-1]]
            ret = f"{last[-1]} + {gen.expr(self.out, names, 2)}"
        else:
            self.out = gen.shape()
            ret = gen.expr(self.out, names)
        ret = f"({ret}) * (1.0 + np.mean(np.sin(x)) * {gen.ex.expr((), names, 2)})"
        self.pair = gen.rng.random() < 0.25
        if self.pair:
            ret = f"{ret}, {gen.expr((), names)}"
            scalar = "    return np.sum(np.tanh(r[0])) * r[1]\n"
        else:
            scalar = "    return np.sum(np.sin(r))\n"
        main = "def f(x, y):\n" + "\n".join([*lines, f"    return {ret}"]) + "\n"
        fs = "def fs(x, y):\n    r = f(x, y)\n" + scalar
        self.source = "\n\n".join([HEADER, *gen.helpers, main, fs])
        self.x, self.y = gen.x, gen.y


def inputs(seed: int, point: int = 0) -> tuple[Any, Any]:
    """Arguments for the program of `seed`: a float64 array and an array or a float."""
    spec = Spec(seed)
    rng = np.random.default_rng([seed, point])
    x = rng.uniform(-1.0, 1.0, spec.x)
    y = float(rng.uniform(-1.0, 1.0)) if spec.y == () else rng.uniform(-1.0, 1.0, spec.y)
    return x, y


def load(seed: int, directory: Path) -> Any:
    """The module of the program of `seed`, written in `directory` and imported."""
    path = directory / f"fuzzt_{seed}.py"
    path.write_text(Spec(seed).source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module

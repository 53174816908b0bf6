"""Random NumPy expressions of a known shape, for the generated programs of `fuzz_functions`.

`ArrayExprs(rng, dtype, dims)` writes expressions over named arrays whose shapes it tracks:
``expr(shape, names)`` is the source of an expression of exactly `shape` (``()`` is a
scalar), built from elementwise math with broadcasting (rows, columns, scalars), ``@``,
reductions (``sum``/``mean``/``max``/``min``, with ``axis`` and ``keepdims``, as functions
and as methods), indexing and slicing with constants, ``np.where``, ``reshape``, ``.T`` and
``np.concatenate``. Values stay bounded: ``np.exp`` only sees ``np.tanh`` of something, and
divisions are by ``1 + a * a``. Float32 programs make their constants with that dtype, so
that nothing promotes to float64 by accident.
"""

from __future__ import annotations

import random

UNARY = ["np.sin", "np.cos", "np.tanh", "np.exp"]
REDUCE = ["sum", "mean", "max", "min"]

Shape = tuple[int, ...]


def broadcastable(shape: Shape) -> list[Shape]:
    """Shapes that broadcast against `shape` without changing it: scalars, rows, columns."""
    out: list[Shape] = [(), shape]
    if len(shape) >= 1:
        out.append(shape[-1:])
    if len(shape) == 2:
        out += [(1, shape[1]), (shape[0], 1)]
    return out


class ArrayExprs:
    """Expressions of a requested shape over variables of known shapes."""

    def __init__(self, rng: random.Random, dtype: str, dims: list[int]):
        self.rng = rng
        self.dtype = dtype
        self.dims = dims

    def const(self) -> str:
        c = repr(round(self.rng.uniform(-2.0, 2.0), 2))
        return c if self.dtype == "float64" else f"np.float32({c})"

    def filled(self, shape: Shape, value: str) -> str:
        return f"np.full({shape!r}, {value}, dtype=np.{self.dtype})"

    def leaf(self, shape: Shape, names: dict[str, Shape], depth: int = 0) -> str:
        same = [n for n, s in names.items() if s == shape]
        if same and self.rng.random() < 0.85:
            return self.rng.choice(same)
        if not same and depth < 4 and self.rng.random() < 0.6:  # derived from other shapes
            how = self.rng.choice([self.reduction, self.matmul, self.index, self.reshaped])
            return how(shape, names, depth)
        if shape == ():
            if names and self.rng.random() < 0.6:
                n = self.rng.choice(list(names))
                return n if names[n] == () else f"np.{self.rng.choice(REDUCE)}({n})"
            return self.const()
        flipped = [n for n, s in names.items() if len(s) == 2 and s[::-1] == shape]
        if flipped and self.rng.random() < 0.5:
            return f"{self.rng.choice(flipped)}.T"
        size = [n for n, s in names.items() if s and _size(s) == _size(shape) and s != shape]
        if size and self.rng.random() < 0.5:
            return f"{self.rng.choice(size)}.reshape({_shape_src(shape)})"
        return self.filled(shape, self.leaf((), names, depth + 1))

    def expr(self, shape: Shape, names: dict[str, Shape], depth: int = 0) -> str:
        r = self.rng.random()
        if depth >= 3 or r < 0.2:
            return self.leaf(shape, names, depth)
        sub = self.rng.choice(broadcastable(shape))
        if r < 0.42:
            a, b = self.expr(shape, names, depth + 1), self.expr(sub, names, depth + 1)
            if self.rng.random() < 0.5:
                a, b = b, a
            op = self.rng.choice(["+", "-", "*", "*", "/"])
            if op == "/":
                return f"({a} / (1.0 + {b} * {b}))"
            return f"({a} {op} {b})"
        if r < 0.52:
            fn = self.rng.choice(UNARY)
            a = self.expr(shape, names, depth + 1)
            return f"{fn}(np.tanh({a}))" if fn == "np.exp" else f"{fn}({a})"
        if r < 0.6:
            c = self.expr(self.rng.choice(broadcastable(shape)), names, depth + 2)
            a, b = self.expr(shape, names, depth + 1), self.expr(sub, names, depth + 1)
            return f"np.where({c} > {self.const()}, {a}, {b})"
        if r < 0.72:
            return self.reduction(shape, names, depth)
        if r < 0.8:
            return self.matmul(shape, names, depth)
        if r < 0.88:
            return self.index(shape, names, depth)
        if r < 0.94:
            return self.reshaped(shape, names, depth)
        if r < 0.97 and shape and shape[0] >= 2:
            i = self.rng.randint(1, shape[0] - 1)
            a = self.expr((i, *shape[1:]), names, depth + 1)
            b = self.expr((shape[0] - i, *shape[1:]), names, depth + 1)
            return f"np.concatenate(({a}, {b}), axis=0)"
        if len(shape) == 2 and shape[1] >= 2:
            j = self.rng.randint(1, shape[1] - 1)
            a = self.expr((shape[0], j), names, depth + 1)
            b = self.expr((shape[0], shape[1] - j), names, depth + 1)
            return f"np.concatenate(({a}, {b}), axis=1)"
        a, b = self.expr(shape, names, depth + 1), self.expr(sub, names, depth + 1)
        return f"np.maximum({a}, {b})"

    def reduction(self, shape: Shape, names: dict[str, Shape], depth: int) -> str:
        red = self.rng.choice(REDUCE)
        k = self.rng.choice(self.dims)
        if shape == ():
            src = self.rng.choice([(k,), (k, self.rng.choice(self.dims))])
            a = self.expr(src, names, depth + 1)
            return f"np.{red}({a})" if self.rng.random() < 0.6 else f"{a}.{red}()"
        if len(shape) == 1:
            axis = self.rng.randint(0, 1)
            src = (k, shape[0]) if axis == 0 else (shape[0], k)
            keep = ""
        elif shape[0] == 1 or shape[1] == 1:
            axis = 0 if shape[0] == 1 else 1
            src = (k, shape[1]) if axis == 0 else (shape[0], k)
            keep = ", keepdims=True"
        else:
            return self.leaf(shape, names, depth + 1)
        a = self.expr(src, names, depth + 1)
        if self.rng.random() < 0.6:
            return f"np.{red}({a}, axis={axis}{keep})"
        return f"{a}.{red}(axis={axis}{keep})"

    def matmul(self, shape: Shape, names: dict[str, Shape], depth: int) -> str:
        j = self.rng.choice(self.dims)
        if shape == ():
            left, right = (j,), (j,)
        elif len(shape) == 1:
            left, right = (shape[0], j), (j,)
        else:
            left, right = (shape[0], j), (j, shape[1])
        a, b = self.expr(left, names, depth + 1), self.expr(right, names, depth + 1)
        return f"({a} @ {b})"

    def index(self, shape: Shape, names: dict[str, Shape], depth: int) -> str:
        k = self.rng.choice(self.dims)
        i = self.rng.randint(-k, k - 1)
        if len(shape) < 2 and self.rng.random() < 0.5:
            a = self.expr((k, *shape), names, depth + 1)
            return f"{a}[{i}]"
        if len(shape) == 1:
            if self.rng.random() < 0.5:
                a = self.expr((shape[0], k), names, depth + 1)
                return f"{a}[:, {i}]"
            start = self.rng.randint(0, 2)
            a = self.expr((shape[0] + start,), names, depth + 1)
            stop = "" if self.rng.random() < 0.5 else start + shape[0]
            return f"{a}[{start}:{stop}]"
        if len(shape) == 2:
            start = self.rng.randint(0, 2)
            a = self.expr((shape[0], shape[1] + start), names, depth + 1)
            return f"{a}[:, {start}:]"
        a = self.expr((k,), names, depth + 1)
        return f"{a}[{i}]"

    def reshaped(self, shape: Shape, names: dict[str, Shape], depth: int) -> str:
        if len(shape) == 2 and self.rng.random() < 0.5:
            return f"{self.expr(shape[::-1], names, depth + 1)}.T"
        if len(shape) == 2:
            return f"{self.expr((_size(shape),), names, depth + 1)}.reshape({_shape_src(shape)})"
        if len(shape) == 1:
            n = shape[0]
            pairs = [(a, n // a) for a in range(1, n + 1) if n % a == 0]
            src = self.rng.choice(pairs)
            return f"{self.expr(src, names, depth + 1)}.reshape(-1)"
        return self.leaf(shape, names, depth + 1)


def _size(shape: Shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _shape_src(shape: Shape) -> str:
    return ", ".join(map(str, shape))

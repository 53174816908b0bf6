"""The arguments and checks of the table-driven array tests (`test_arrays`, `test_numpy_more`).

`A` describes a random argument; `check_abstract` and `check_value` compare what Myia infers
and computes with NumPy's result, as `as_myia_result` gives it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from myia.abstract import (
    AbstractArray,
    AbstractConstant,
    AbstractScalar,
    AbstractTuple,
    to_abstract,
)
from myia.infer.engine import Inferrer

# Arguments ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class A:
    """A random array argument (a NumPy scalar when `shape` is ``()``).

    `kind`: ``normal``; ``pos`` (in [0.5, 2]); ``unit`` (in (-0.9, 0.9)); ``int`` (in
    [-5, 5]); ``nat`` (in [1, 5]); ``bool``.
    """

    shape: tuple[int, ...]
    dtype: str = "float64"
    kind: str = "normal"

    def make(self, rng: np.random.Generator) -> Any:
        s = self.shape
        values = {
            "normal": lambda: rng.standard_normal(s),
            "pos": lambda: rng.uniform(0.5, 2.0, s),
            "unit": lambda: rng.uniform(-0.9, 0.9, s),
            "int": lambda: rng.integers(-5, 6, s),
            "nat": lambda: rng.integers(1, 6, s),
            "bool": lambda: rng.random(s) > 0.5,
        }[self.kind]()
        out = np.asarray(values).astype(self.dtype)
        return out[()] if s == () else out


def make_args(spec: tuple[Any, ...], seed: int = 0) -> tuple[Any, ...]:
    rng = np.random.default_rng(seed)
    return tuple(s.make(rng) if isinstance(s, A) else s for s in spec)


def f(*shape: int, dtype: str = "float64", kind: str = "normal") -> A:
    return A(tuple(shape), dtype, kind)


def f32(*shape: int, kind: str = "normal") -> A:
    return A(tuple(shape), "float32", kind)


def i64(*shape: int, kind: str = "int") -> A:
    return A(tuple(shape), "int64", kind)


FLOATS = st.sampled_from(["float64", "float32"])
SEEDS = st.integers(0, 2**16)


@st.composite
def binary_args(draw: Any, kind: str = "normal", rkind: str | None = None, dtypes: Any = FLOATS):
    """Two operands of broadcastable shapes (rank differences, size-1 axes, scalars), either
    possibly a Python scalar."""
    (s1, s2), _ = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    d1, d2 = draw(dtypes), draw(dtypes)
    a, b = A(s1, d1, kind), A(s2, d2, rkind or kind)
    py = draw(st.sampled_from([None, None, 0, 1]))
    if py is not None:
        d = d2 if py == 0 else d1
        pyd = "float64" if "float" in d else "bool" if d == "bool" else "int64"
        value = make_args((A((), pyd, kind if py == 0 else rkind or kind),), draw(SEEDS))[0]
        a, b = (value.item(), b) if py == 0 else (a, value.item())
    return (a, b)


@st.composite
def unary_args(draw: Any, kind: str = "normal", dtypes: Any = FLOATS):
    """One operand: an array of any shape up to rank 3, or a NumPy scalar."""
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
    return (A(shape, draw(dtypes), kind),)


@st.composite
def reduce_args(draw: Any, kind: str = "normal"):
    """An array of rank 1 to 3 and an ``axis`` (None, an int or a tuple) valid for it."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    axis = draw(st.one_of(st.none(), hnp.valid_tuple_axes(len(shape), min_size=1)))
    if axis is not None and len(axis) == 1 and draw(st.booleans()):
        axis = axis[0]
    return (A(shape, draw(FLOATS), kind), axis)


# The checks -----------------------------------------------------------------------------------


class RecordingInferrer(Inferrer):
    """An inferrer that records the names of the primitives it infers."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def call_primitive(self, prim: Any, args: list[Any]) -> Any:
        self.seen.add(prim.name)
        return super().call_primitive(prim, args)


def check_abstract(a: Any, expected: Any, where: str = "result") -> None:
    """Check that abstract value `a` describes the NumPy value `expected`."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(a, AbstractTuple), (where, a)
        assert len(a.elements) == len(expected), (where, a)
        for i, (x, e) in enumerate(zip(a.elements, expected)):
            check_abstract(x, e, f"{where}[{i}]")
    elif isinstance(expected, np.ndarray):
        assert isinstance(a, AbstractArray), (where, a, expected)
        assert a.shape == expected.shape, (where, a, expected.shape)
        assert a.dtype == expected.dtype.name, (where, a, expected.dtype)
    elif isinstance(expected, np.generic):
        assert isinstance(a, AbstractScalar), (where, a, type(expected))
        assert not a.weak or _python_result(expected), (where, a, type(expected))
        assert a.dtype == expected.dtype.name, (where, a, expected.dtype)
    elif isinstance(expected, np.dtype):
        assert a == AbstractConstant(expected), (where, a, expected)
    else:
        assert isinstance(a, AbstractScalar) and a.weak, (where, a, type(expected))
        assert a.dtype == to_abstract(expected).dtype, (where, a, type(expected))


def _python_result(expected: np.generic) -> bool:
    """Whether Myia may give a Python scalar where NumPy gives `expected`, a NumPy scalar.

    By design, elementwise primitives on Python scalars compute with Python's operators and
    `math` (a float stays a float): ``np.exp(1.0)`` is a Python float in Myia. Only the kind of
    the scalar differs, not its dtype or its value.
    """
    return expected.dtype.name in ("float64", "int64", "bool")


def check_value(got: Any, expected: Any, where: str = "result") -> None:
    """Check that `got` is `expected`: same kinds, shapes and dtypes, close values."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, tuple) and len(got) == len(expected), (where, got)
        for i, (g, e) in enumerate(zip(got, expected)):
            check_value(g, e, f"{where}[{i}]")
        return
    if isinstance(expected, np.generic) and type(got) in (bool, int, float):
        assert _python_result(expected), (where, type(got), type(expected))
        expected = expected.item()
    assert type(got) is type(expected), (where, type(got), type(expected))
    if isinstance(expected, np.dtype):
        assert got == expected, where
        return
    if isinstance(expected, (np.ndarray, np.generic)):
        assert got.shape == expected.shape and got.dtype == expected.dtype, (where, got, expected)
        tol = 1e-5 if expected.dtype in (np.float32, np.float16) else 1e-9
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg=where)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12, err_msg=where)


def as_myia_result(value: Any) -> Any:
    """Return NumPy's result as Myia gives it: a 0-d array as a NumPy scalar (Myia's results
    are never 0-d arrays), a list of arrays (``np.split``) as a tuple (its length is static).
    """
    if isinstance(value, (tuple, list)):
        return tuple(as_myia_result(v) for v in value)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    return value

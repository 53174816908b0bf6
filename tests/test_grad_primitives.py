"""One table-driven test of the gradient of every primitive, against finite differences.

Each entry of `CASES` names the primitives it covers, a function using them (a primitive
itself, or a function written with NumPy whose compile-time arguments are fixed in its
closure) and argument specs (random float64 arrays of a few shapes, broadcasting corner cases
for elementwise primitives). For each set of arguments, `myia.testing.check_grad` compares
the gradient of ``args -> <fn(*args), ct>`` (``ct`` a random cotangent of the output) with
central differences, at the first order, and at the second order for the scalar math
primitives. The test also checks that each function compiles to the primitives it claims to
cover, and that every primitive has a backpropagator, a ``nondifferentiable`` mark or a
forward graph of its own (``SPECIAL``), and that every differentiable one is in the table.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from myia import myia
from myia.abstract import AbstractScalar
from myia.grad import jtransform
from myia.grad.registry import BPROPS, NONDIFFERENTIABLE, SPECIAL
from myia.primitives import PRIMITIVES, P, Primitive, special
from myia.testing import check_grad, vdot

# Arguments ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class F:
    """A random float64 array of `shape` (a NumPy scalar for ``()``).

    `kind`: ``normal``; ``pos`` (in [0.5, 2]); ``unit`` (in [-0.9, 0.9]); ``sep``
    (distinct values at least 0.1 apart: no ties for max and min).
    """

    shape: tuple[int, ...] = ()
    kind: str = "normal"

    def make(self, rng: np.random.Generator) -> Any:
        s, n = self.shape, int(np.prod(self.shape))
        v = {
            "normal": lambda: rng.standard_normal(s),
            "pos": lambda: rng.uniform(0.5, 2.0, s),
            "unit": lambda: rng.uniform(-0.9, 0.9, s),
            "sep": lambda: rng.permutation(n).reshape(s) * 0.1 + rng.uniform(0, 0.05, s),
        }[self.kind]()
        return np.asarray(v, np.float64)[()] if s == () else np.asarray(v, np.float64)


@dataclasses.dataclass(frozen=True)
class PY:
    """A random Python float."""

    kind: str = "normal"

    def make(self, rng: np.random.Generator) -> float:
        return float(F((), self.kind).make(rng))


def f(*shape: int, kind: str = "normal") -> F:
    return F(shape, kind)


def make_args(spec: tuple[Any, ...], seed: int) -> tuple[Any, ...]:
    rng = np.random.default_rng(seed)
    return tuple(s.make(rng) if isinstance(s, (F, PY)) else s for s in spec)


# Shapes for elementwise primitives: scalars, rank differences, size-1 axes on both sides.
UNARY = [(PY(),), (f(2, 3),)]
BINARY = [(PY(), PY()), (f(2, 3), f(3)), (f(2, 1), f(1, 3)), (f(3), PY()), (f(), f(2))]


# Functions written with NumPy (compile-time arguments fixed in closures) -----------------------


def reduction(npfn: Any, axis: Any, keepdims: bool = False) -> Callable[..., Any]:
    def reduce(x):
        return npfn(x, axis=axis, keepdims=keepdims)

    return reduce


def reshape(x):
    return np.reshape(x, (3, -1))


def transpose(x):
    return np.transpose(x, (2, 0, -2))


def transpose_method(x):
    return x.T + x.transpose()


def swapaxes(x):
    return np.swapaxes(x, 0, 2)


def expand_squeeze(x):
    return np.squeeze(np.expand_dims(x, (0, 2)), 0)


def squeeze_all(x):
    return np.squeeze(x)


def concatenate(x, y):
    return np.concatenate((x, y, x), axis=1)


def concatenate_flat(x, y):
    return np.concatenate((x, y), axis=None)


def stack(x, y):
    return np.stack((x, y), axis=-1)


def split(x):
    a, b, c = np.split(x, (1, 3), axis=1)
    return (a, b * 2.0, c)


def split_sections(x):
    a, b = np.split(x, 2)
    return a * b


def getitem(x):
    return x[1, ::2] + x[-1, 1:4]


def getitem_fancy(x, i):
    return x[i, None, 1:]


def take(x, i):
    return np.take(x, i, axis=1)


def take_flat(x, i):
    return np.take(x, i)


def matmul(x, y):
    return x @ y


def dot(x, y):
    return np.dot(x, y)


def where(c, x, y):
    return np.where(c, x, y)


def clip(x, lo, hi):
    return np.clip(x, lo, hi)


def clip_above(x, hi):
    return np.clip(x, None, hi)


def clip_below(x, lo):
    return np.clip(x, lo, None)


def to_float32(x):
    return x.astype(np.float32)


def full(v):
    return np.full((2, 3), v)


def full_like(a, v):
    return np.full_like(a, v)


def conv(stride: Any, padding: Any, dilation: Any, groups: int) -> Callable[..., Any]:
    def conv2d(x, w):
        return P.conv2d(x, w, stride, padding, dilation, groups)

    return conv2d


def pool(kernel: Any, stride: Any, padding: Any) -> Callable[..., Any]:
    def max_pool2d(x):
        return P.max_pool2d(x, kernel, stride, padding)

    return max_pool2d


def nondifferentiable(x, y):
    """Functions with zero derivatives: their gradient is zero."""
    a = np.floor(x) + np.ceil(x) * np.sign(x) + (x // y) + (x < y) + np.argmax(x) * x.size
    b = np.zeros_like(x) + np.ones(x.shape) * np.arange(3.0) + len(x) + x.ndim
    return a + b + float(int(x[0] > 0)) + np.ones_like(x, dtype=np.float64)


# Data structures, control and the primitives of the gradient transform


@dataclasses.dataclass
class Pair:
    a: Any
    b: Any


def tuples(x, y):
    t = (x, y * x) + (y,)
    u = t[1:]
    return t[0] * u[0] + u[1]


def lists(x, y):
    lst = [x, y] + [x * y]
    return lst[0] * lst[2] + lst[1] * lst[-1] + lst[1:][0]


def dicts(x, y):
    d = {"a": x, "b": y * x}
    a, b = d.values()
    e = P.dict_from_items(("p", "q"), (x * y, y))
    return d["a"] * d["b"] + a * b + e["p"] * e["q"]


def list_builtins(x, y):
    total = sum([x[:2] * y, y])  # list_sum_start
    halves = np.split(x, 2)  # sections_as_list
    return total + halves[0] * halves[1]


def list_joins(x, y):
    parts = []
    for i in range(3):
        parts.append(x * (i + 1.0) + y)
    stacked = np.stack(parts, axis=1)  # stack_list
    joined = np.concatenate(parts)  # concatenate_list
    return np.sum(stacked * stacked) + np.sum(np.sin(joined))


def list_unjoins(d, x):
    """`unstack_list` and `unconcatenate_list` (gradient helpers) on their own."""
    rows = P.unstack_list(d, [x, x * 2.0, x], 0)
    pieces = P.unconcatenate_list(d.reshape(-1), [x, x, x[:1], x[1:]], 0)
    return rows[1] * pieces[0] + rows[2] * pieces[1]


def records(x, y):
    p = Pair(x, y * x)
    return p.a * p.b


def control(x, y):
    z = x * y if np.sum(x) > 0 else x - y
    w = P.identity(z)
    print(w.shape)
    return P.switch(y[0] > 0, w, z * 2.0)


def promotion(x, y):
    z = x if y > 0 else 1  # a float or an int: converted to a float
    v = x * 2.0 if y > 0 else None  # a float converted to a float | None where it is made
    return z * x + (1.0 if v is None else v)


def unions(x, y):
    p = None if y[0] > 10 else Pair(x, y)
    if p is None:
        return x
    return p.a * p.b


def retyped(x, y):
    # The backpropagator of narrow retypes sensitivities to unions (`unions`, order 2).
    q = P.sens_as((x * y, y * x), (x, y))
    return q[0] * q[1] + q[0]


def partials(x, y):
    total = x.sum  # a method: a partial application
    return total(axis=0) * y.mean()


def apply_star(x, y):
    t = (x, y)
    # A closure called on a tuple: specialization writes ``apply_star`` out as the call on
    # the elements (see WRITTEN_OUT), whose gradient this checks.
    scaled = lambda a, b: where(a > b, a, b) * x  # noqa: E731
    return scaled(*t)


def environments(x, y):
    e = P.env_setitem(P.env_new(), "k", x * y)
    e = P.env_add(e, P.env_setitem(P.env_new(), "k", x))
    return P.env_getitem(e, "k", y)


PY_FLOAT = AbstractScalar("float64", True)  # the abstract value of a Python float


def environments_loop(x, y):
    # What the backward pass of a loop does with its environments (myia.grad.loops).
    e = P.env_setitem(P.env_setitem(P.env_new(), "a", x * y), "b", (y, x))
    e = P.env_delitem(e, "b")
    return P.env_sens(e, "a", PY_FLOAT) + P.env_getsens(e, "b", (y, x))[1] * y


def stacks(x, y):
    s = P.stack_push(P.stack_push(P.stack_new(), x * y), y * y)
    top = P.stack_pop(s)
    below = P.stack_pop(top[1])
    d = P.stack_unpush(P.stack_push(P.stack_new(), x), y)
    z = P.stack_unpush(P.stack_new(), y)
    return top[0] * below[0] + d[1] * y + z[1]


def setitems(x, y):
    t = P.tuple_setitem((x, y, x), 1, x * y)
    lst = P.list_setitem([x, y], 0, x * x)
    d = P.dict_setitem({"a": x, "b": y}, "a", y * y)
    r = P.record_setattr(Pair(x, y), "b", x * y)
    s = P.seq_slice_add((x, y, y), P.make_slice(1, None, None), (x, x * y))
    return t[1] * t[2] + lst[0] * lst[1] + d["a"] * d["b"] + r.a * r.b + s[1] * s[2]


def lazy_sensitivities(x, y):
    # Sensitivities of lists built sparsely and summed lazily (myia.primitives.lazy_sens).
    one = P.list_index_sens([x, y, x], 1, x * y)
    part = P.list_index_sens([x, y, x], P.make_slice(-2, None, None), [y * y, x])
    m = P.gmaterialize(P.gadd(P.gadd(one, part), P.gzeros([x, y, x])))
    n = P.gmaterialize(((x, [y]), P.list_index_sens([(x, y)], 0, (y, x * y))))
    return m[0] + m[1] * m[2] + y * m[1] + n[0][1][0] * n[1][0][1]


def conversions(x, y):
    t = P.list_as_tuple([x, y * x], (0.0, 0.0))
    s = P.list_to_tuple([y, x * x], 2)
    r = P.record_from_fields(Pair(x, y), P.record_fields(Pair(y, x * x)))
    d = P.dict_from_values({"a": x, "b": y}, (y, x * y))
    u = P.tuple_as_list((x * x, y, x * y))
    return t[0] * t[1] + r.a * r.b + d["a"] * d["b"] + u[0] * u[2] - u[1] + s[0] * s[1]


def broadcasts(x, y):
    return P.unbroadcast(x * y, y) + P.broadcast_like(y * y, x)


def index_add(a, v):
    return P.array_index_add(a * a, (1, P.make_slice(None, None, 2)), v * a[0, :2])


def index_add_inplace(a, v):
    # The optimizer writes them on arrays nothing else reads: here a fresh copy.
    b = P.owned_copy(a * a)
    return P.array_index_add_inplace(b, (1, P.make_slice(None, None, 2)), v * a[0, :2])


def windows(a, v, i):
    # A window, its sensitivity added into an array, and in place into a fresh copy.
    w = P.dynamic_window(a * a, i, 2, 1)
    b = P.window_add(a, i - 1, v * w, 1)
    return P.window_add_inplace(P.owned_copy(b * a), -3, w * a[:, :2], 1)


def gadd(x, y):
    return P.gadd((x * y, y), (x, y))[0]


def gadd_owned(x, y):
    return P.gadd_owned(x * y, y) * x


def _mul_add(a, b):
    return a * b + b


def partial_two_types(x, y):
    # One partial application called with a float and an int: each call reads the argument
    # the partial bound (`partial_arg`) and calls the function's specialization for its types.
    p = functools.partial(_mul_add, x * y)
    return p(x) + p(2)


def _sub_mul(a, b):
    return (a - b) * b


def _chosen_two_types(c, x, y):
    # Partial applications chosen at run time, called with a float and an int: the call tests
    # which function the value applies (`partial_fn`) and reads the arguments it bound.
    p = functools.partial(_mul_add, x * y) if c else functools.partial(_sub_mul, y)
    return p(x) + p(2)


def partial_chosen_two_types(x, y):
    return _chosen_two_types(x * x + 1.0 > 0.0, x, y) * _chosen_two_types(x * x < -1.0, y, x)


def python_errors(x, y):
    # The check of vmap's batched math functions: the result itself, checked.
    return P.python_errors(np.log(x) * y, "log", x, None)


def float_parts(x, y):
    """`frexp` and `ldexp`: the mantissa's slope ``2 ** -e``, ``ldexp``'s ``2 ** i``."""
    m, e = P.frexp(x * y)
    return P.ldexp(m * x, 3) + m * e


def invert(a, i):
    """`untake`, `unconcatenate`, `unstack` (gradient helpers) on their own."""
    u = P.untake(a[:, :3], a, i, 1)
    pieces = P.unconcatenate(a * a, (a[:, :1], a[:, 1:]), 1)
    rows = P.unstack(a, (a[0], a[0], a[0]), 0)
    return u + pieces[1][:, :1] * rows[2]


def conv_grads(x, w, d):
    """The transposed convolutions (gradient helpers) on their own."""
    dx = P.conv2d_input_grad(x, w, d, 2, 1, 1, 1)
    dw = P.conv2d_weight_grad(x, w, d, 2, 1, 1, 1)
    return (dx * x, dw * w)


def pool_grads(x, e):
    """The routing of max pooling's sensitivities (gradient helpers) on their own."""
    return (P.max_pool2d_grad(x, e[:, :, :2, :2], 2, None, 0), P.max_pool2d_gather(x, e, 2, 2, 0))


def linalg_fns(m, b):
    """np.linalg on a symmetric positive definite matrix built from `m`."""
    a = m @ m.T + 3.0 * np.eye(3)
    x = np.linalg.solve(a, b) + np.linalg.inv(a) @ b
    return x * np.linalg.det(a) * 0.01 + np.linalg.slogdet(a)[1] + np.linalg.cholesky(a) @ b


def triangular(m, b):
    t = P.tril(m, 0) + 3.0 * np.eye(3)
    u = P.triu(m, 1) + 3.0 * np.eye(3)
    return P.triangular_solve(t, b, True, False) + P.triangular_solve(u, b, False, True)


def triangular_products(m, b):
    t = P.triangular_matmul(m, b, True, False) + P.triangular_matmul(m, b, False, True)
    return t + P.lower_half(m * m) @ b


#: The special functions of arrays, and digamma and polygamma, are SciPy's (optional).
SCIPY = special.scipy_special() is not None
NEED_SCIPY = set() if SCIPY else {"erf", "erfc", "gammaln", "digamma", "polygamma"}


def polygammas(x):
    return P.polygamma(0, x) * P.polygamma(1, x) + P.polygamma(2, x)


def decompositions(m, b):
    """The decompositions, through functions of them that LAPACK's sign choices leave alone."""
    q, r = P.qr(m)
    w, v = P.eigh(m @ m.T + 3.0 * np.eye(3), True)
    u, s, vh = P.svd(m[:, :2], False)
    return (q @ r + v * v * w + (u * s) @ vh @ m[:2, :]) @ b + P.pinv(m) @ b


def copies(x, d):
    """tile, repeat and pad, and their adjoints on their own."""
    t = P.untile(P.tile(x, (2, 1)) * 2.0, x, (2, 1))
    r = P.unrepeat(P.repeat(x, 2, 1) ** 2, x, 2, 1)
    p = P.unpad(P.pad(x, 1, "reflect", 0) ** 2, x, 1, "reflect")
    return t + r + p + P.untile(d, x, 1) * x


def array_extra_fns(x, y):
    s = np.einsum("ij,jk->ik", x, y) + np.cumsum(x, axis=1) @ y
    d = np.diag(np.diagonal(x)) + np.broadcast_to(y[:, :1], (3, 3))
    return s + np.sort(x, axis=1) @ y + d @ y


def lambda_reorder(x):
    return np.flip(x, 1) * np.roll(x, 1, axis=2) + np.moveaxis(np.moveaxis(x, 0, -1), -1, 0)


def along_grads(x, d):
    """The scatter of take_along_axis's sensitivity, and its adjoint, on their own."""
    i = np.argsort(x, axis=1)
    u = P.untake_along_axis(d, x, i, 1)
    return u * x + P.undiagonal(d[0], x, 0, 0, 1)


# The table ------------------------------------------------------------------------------------


@dataclasses.dataclass
class Case:
    """Primitives `prims`, covered by checking the gradient of `fn` on each of `args`: up to
    order `order` on the first, at the first order on the others."""

    prims: tuple[str, ...]
    fn: Any
    args: list[tuple[Any, ...]]
    order: int = 1
    options: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def name(self) -> str:
        return getattr(self.fn, "name", None) or self.fn.__name__


def case(prims: str, fn: Any, args: list[tuple[Any, ...]], order: int = 1, **options: Any) -> Case:
    return Case(tuple(prims.split()), fn, args, order, options)


def call(prim: Primitive, nargs: int) -> Any:
    """A function calling `prim` (a primitive passed as a value is not differentiable)."""
    if nargs == 1:

        def fn(x):
            return prim(x)

    else:

        def fn(x, y):
            return prim(x, y)

    fn.name = prim.name  # type: ignore[attr-defined]
    return fn


def unary(prim: Primitive, args: list[tuple[Any, ...]], order: int = 1) -> Case:
    return case(prim.name, call(prim, 1), args, order)


def binary(prim: Primitive, args: list[tuple[Any, ...]], order: int = 1) -> Case:
    return case(prim.name, call(prim, 2), args, order)


def scalar_math(prim: Primitive, kind: str = "normal") -> Case:
    """A unary math primitive: first order on scalars and arrays, second order on a float."""
    return unary(prim, [(PY(kind),), (f(2, 3, kind=kind),)], order=2)


SCALARS = [(PY(), PY())]
DIVISION = [(PY(), PY("pos")), (f(2, 3), f(3, kind="pos")), (f(2, 1), f(1, 3, kind="pos"))]
MATMUL = [(f(2, 3), f(3, 4)), (f(3), f(2, 3, 4)), (f(2, 1, 2, 3), f(3)), (f(3), f(3))]
MATMUL.append((f(2, 1, 2, 3), f(4, 3, 2)))  # batch axes broadcast
MATMUL += [(f(2, 3), f(3)), (f(3), f(3, 4))]  # a matrix and a vector: an outer product
CONV_GRADS = (f(1, 2, 5, 5), f(4, 2, 3, 3), f(1, 4, 3, 3))  # x, w, dout
MASK = np.array([[True, False, True], [False, False, True]])

CASES = [
    binary(P.add, BINARY),
    binary(P.sub, BINARY),
    binary(P.mul, BINARY, order=2),
    binary(P.truediv, DIVISION, order=2),
    binary(P.pow_, [(PY("pos"), PY()), (f(2, 3, kind="pos"), f(3)), (f(3, kind="pos"), 3)], 2),
    binary(P.pow_ieee, [(PY("pos"), PY()), (f(2, 3, kind="pos"), f(3))], 2),
    binary(P.mod, DIVISION),
    binary(P.atan2, BINARY, order=2),
    binary(P.copysign, BINARY, order=2),
    binary(P.maximum, BINARY),
    binary(P.minimum, BINARY),
    unary(P.neg, UNARY),
    unary(P.abs_, UNARY),
    unary(P.to_float, [(PY(),), (f(),)]),
    *(scalar_math(p) for p in (P.exp, P.expm1, P.sin, P.cos, P.tan, P.atan)),
    *(scalar_math(p) for p in (P.sinh, P.cosh, P.tanh, P.asinh)),
    *(scalar_math(p, "unit") for p in (P.atanh,)),
    unary(P.acosh, [(1.5,), (np.array([1.2, 3.0, 40.0]),)], order=2),
    *(scalar_math(p) for p in (P.erf, P.erfc) if SCIPY),
    *(scalar_math(p, "pos") for p in (P.gammaln, P.digamma) if SCIPY),
    *([case("polygamma", polygammas, [(PY("pos"),), (f(2, 3, kind="pos"),)], 2)] if SCIPY else []),
    *(scalar_math(p, "pos") for p in (P.log, P.log_ieee, P.log1p, P.log2, P.log10, P.sqrt)),
    *(scalar_math(p, "unit") for p in (P.asin, P.acos)),
    case("reduce_sum", reduction(np.sum, (0, 2)), [(f(2, 3, 4),)]),
    case("reduce_sum", reduction(np.sum, 1, True), [(f(2, 3, 4),)]),
    case("reduce_sum", reduction(np.sum, None), [(f(2, 3),), (f(),)]),
    case("reduce_mean", reduction(np.mean, -1), [(f(2, 3),)]),
    case("reduce_mean", reduction(np.mean, None, True), [(f(2, 3),)]),
    case("reduce_prod", reduction(np.prod, 0), [(f(3, 2, kind="pos"),)]),
    case("reduce_prod", reduction(np.prod, None), [(f(2, 3, kind="pos"),)]),
    # Second order differentiates the exclusive products of np.prod's gradient.
    case("reduce_prod exclusive_cumprod", reduction(np.prod, 1), [(f(2, 3),)], order=2),
    case("reduce_max", reduction(np.max, 1), [(f(3, 4, kind="sep"),)]),
    case("reduce_max", reduction(np.max, (0, 1), True), [(f(2, 3, 2, kind="sep"),)]),
    case("reduce_min", reduction(np.min, None), [(f(3, 4, kind="sep"),)]),
    case("reshape", reshape, [(f(2, 3),)]),
    case("transpose", transpose, [(f(2, 3, 4),)]),
    case("transpose", transpose_method, [(f(2, 2),)]),
    case("swapaxes", swapaxes, [(f(2, 3, 4),)]),
    case("expand_dims squeeze", expand_squeeze, [(f(2, 3),)]),
    case("squeeze", squeeze_all, [(f(2, 1, 3, 1),)]),
    case("concatenate", concatenate, [(f(2, 3), f(2, 2))]),
    case("concatenate", concatenate_flat, [(f(2, 3), f(4))]),
    case("stack", stack, [(f(2, 3), f(2, 3))]),
    case("split", split, [(f(2, 5),)]),
    case("split", split_sections, [(f(4, 2),)]),
    case("array_getitem", getitem, [(f(3, 5),)]),
    case("array_getitem", getitem_fancy, [(f(3, 4), np.array([0, 2, 0]))]),
    case("take", take, [(f(3, 5), np.array([0, 2, 0, 4]))]),
    case("take", take_flat, [(f(3, 5), np.array([[0, 2], [0, 14]]))]),
    case("matmul", matmul, MATMUL),
    case("matmul", matmul, [(f(2, 3), f(3, 2)), (f(2, 3), f(3)), (f(3), f(3, 2))], order=2),
    case("dot", dot, [*MATMUL[:1], (f(2, 3), f(2, 3, 4)), (f(2, 2, 3), f(3)), (f(2, 3), PY())]),
    case("dot", dot, [(f(3), f(3)), (PY(), f(2))]),
    case("where", where, [(MASK, f(2, 3), f(3)), (np.array([True, False]), PY(), f(2, 1))]),
    case("clip", clip, [(f(2, 3), f(3, kind="unit"), PY("unit"))]),
    case("clip", clip_above, [(f(2, 3), PY("unit"))]),
    case("clip", clip_below, [(f(2, 3), f(2, 1, kind="unit"))]),
    case("astype", to_float32, [(f(2, 3),)], eps=1e-3, rtol=1e-3, atol=1e-3),
    case("full", full, [(f(3),), (PY(),)]),
    case("full_like", full_like, [(f(2, 3), PY()), (f(2, 3), f(3))]),
    case("cholesky inv det slogdet solve", linalg_fns, [(f(3, 3), f(3, 2))], order=2),
    case("triangular_solve tril triu", triangular, [(f(3, 3), f(3, 2))], order=2),
    case("triangular_matmul lower_half", triangular_products, [(f(3, 3), f(3, 2))], order=2),
    case("qr eigh svd pinv", decompositions, [(f(3, 3), f(3, 2))], order=2),
    case("tile untile repeat unrepeat pad unpad", copies, [(f(3, 3), f(3, 3))], order=2),
    case(
        "einsum cumsum diagonal undiagonal broadcast_to take_along_axis",
        array_extra_fns,
        [(f(3, 3, kind="sep"), f(3, 2))],
        order=2,
    ),
    case("flip roll moveaxis", lambda_reorder, [(f(2, 3, 4),)], order=2),
    case("untake_along_axis undiagonal", along_grads, [(f(3, 3, kind="sep"), f(3, 3))], order=2),
    case("conv2d", conv(1, 0, 1, 1), [(f(1, 2, 4, 4), f(3, 2, 2, 2))]),
    case("conv2d", conv(2, 1, 1, 1), [(f(2, 2, 5, 5), f(3, 2, 3, 3))]),
    case("conv2d", conv((1, 2), (1, 0), 2, 2), [(f(1, 4, 6, 5), f(4, 2, 2, 3))]),
    case("conv2d", conv(1, 1, 1, 1), [(f(1, 1, 3, 3), f(2, 1, 2, 2))], order=2),
    case("max_pool2d", pool(2, None, 0), [(f(1, 2, 4, 4, kind="sep"),)]),
    case("max_pool2d", pool(3, 2, 1), [(f(2, 1, 5, 5, kind="sep"),)], order=2),
    case("", nondifferentiable, [(f(3), f(3, kind="pos"))]),
    case("make_tuple tuple_getitem tuple_concat", tuples, [(PY(), PY()), (f(2), f(2))], order=2),
    case("make_list list_getitem list_concat", lists, [(PY(), PY()), (f(2), f(2))]),
    case("make_dict dict_getitem dict_values dict_from_items", dicts, SCALARS),
    case("list_sum_start sections_as_list", list_builtins, [(f(4), f(2))]),
    case("stack_list concatenate_list", list_joins, [(f(2), f(2))], order=2),
    case("unstack_list unconcatenate_list", list_unjoins, [(f(3, 2), f(2))]),
    case("make_record record_getattr", records, [(PY(), PY()), (f(2), f(2))]),
    case("switch seq identity", control, [(f(2), f(2))]),
    case("narrow", unions, [(f(2), f(2))], order=2),
    case("sens_as", retyped, SCALARS, order=2),
    case("convert", promotion, [(PY(), PY("pos"))]),
    case("partial", partials, [(f(2, 3), f(3))]),
    case("apply_star", apply_star, [(f(2, 3), f(3))]),
    case("env_new env_setitem env_getitem env_add", environments, SCALARS),
    case("env_delitem env_getsens env_sens", environments_loop, SCALARS, order=2),
    case("stack_push stack_pop stack_unpush", stacks, SCALARS, order=2),
    case(
        "tuple_setitem list_setitem dict_setitem record_setattr seq_slice_add", setitems, SCALARS
    ),
    case("list_index_sens gmaterialize", lazy_sensitivities, SCALARS, order=2),
    case(
        "list_as_tuple list_to_tuple tuple_as_list record_fields record_from_fields"
        " dict_from_values",
        conversions,
        SCALARS,
    ),
    case("unbroadcast broadcast_like", broadcasts, [(f(2, 3), f(3))]),
    case("array_index_add", index_add, [(f(3, 4), f(2))]),
    case("array_index_add_inplace owned_copy", index_add_inplace, [(f(3, 4), f(2))]),
    case("dynamic_window window_add window_add_inplace", windows, [(f(3, 4), f(3, 2), 1)], 2),
    case("gadd", gadd, [(PY(), PY()), (f(2), f(2))]),
    case("frexp ldexp", float_parts, SCALARS, order=2),
    case("python_errors", python_errors, [(f(3, kind="pos"), f(3))], order=2),
    case("gadd_owned", gadd_owned, [(f(3), f(3))], order=2),
    case("partial_arg", partial_two_types, SCALARS, order=2),
    case("partial_fn", partial_chosen_two_types, SCALARS, order=2),
    case("untake unconcatenate unstack", invert, [(f(3, 4), np.array([0, 2, 2]))]),
    case("conv2d_input_grad conv2d_weight_grad", conv_grads, [CONV_GRADS]),
    case(
        "max_pool2d_grad max_pool2d_gather",
        pool_grads,
        [(f(1, 2, 4, 4, kind="sep"), f(1, 2, 4, 4))],
    ),
]


# The test -------------------------------------------------------------------------------------

_LOSSES: dict[Any, Any] = {}


def contracted(fn: Any) -> Any:
    """``(args, ct) -> <fn(*args), ct>``, compiled by Myia (once per function)."""
    loss = _LOSSES.get(fn)
    if loss is None:

        def loss_fn(args, ct):
            return vdot(fn(*args), ct)

        loss = _LOSSES[fn] = myia(loss_fn)
    return loss


def random_like(x: Any, rng: np.random.Generator) -> Any:
    if isinstance(x, (tuple, list)):
        return type(x)(random_like(v, rng) for v in x)
    if isinstance(x, (float, np.floating, np.ndarray)) and np.result_type(x).kind == "f":
        out = rng.standard_normal(np.shape(x))
        return float(out) if isinstance(x, float) else np.asarray(out, np.result_type(x))[()]
    return x


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"{c.name}-{i}") for i, c in enumerate(CASES)]
)
def test_gradient(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    differentiated: set[str] = set()  # the primitives whose J the gradients use
    jprim = jtransform.jprim

    def recording_jprim(prim: Primitive, nargs: int) -> Any:
        differentiated.add(prim.name)
        return jprim(prim, nargs)

    monkeypatch.setattr(jtransform, "jprim", recording_jprim)
    for seed, spec in enumerate(case.args):
        args = make_args(spec, seed)
        out = case.fn(*args)
        order = case.order if seed == 0 else 1
        if isinstance(out, float):
            check_grad(case.fn, *args, order=order, seed=seed, **case.options)
        else:
            ct = random_like(out, np.random.default_rng(seed))
            check_grad(
                contracted(case.fn), args, ct, wrt=0, order=order, seed=seed, **case.options
            )
    # The transform calls a nondifferentiable primitive directly (no J): nothing to record.
    missing = set(case.prims) - differentiated - {p.name for p in NONDIFFERENTIABLE}
    # ``f(*t, **d)`` reaches the transform written out as ``f(t[0], ..., k=d["k"])``.
    missing -= WRITTEN_OUT
    assert not missing, f"{case.name} does not differentiate {missing}"


#: Primitives whose derivative raises a `MyiaTypeError` at compile time (never a wrong value).
NO_DERIVATIVE_YET = {
    # The gradient of np.prod's exclusive products: the third derivative of np.prod.
    "exclusive_cumprod_grad",
    # Their tangent (forward mode): the third derivative of np.prod in forward mode.
    "exclusive_cumprod_jvp",
}


def test_primitives_with_no_derivative_yet_are_refused_at_compile_time() -> None:
    from myia import grad
    from myia.errors import MyiaTypeError

    def prod(x):
        return np.prod(x)

    second = grad(lambda x: np.sum(grad(prod)(x)))
    np.testing.assert_allclose(second(np.array([2.0, 3.0])), [1.0, 1.0])
    with pytest.raises(MyiaTypeError, match="exclusive_cumprod_grad has no derivative yet"):
        grad(lambda x: np.sum(grad(lambda y: np.sum(grad(prod)(y)))(x)))(np.array([2.0, 3.0]))


# Primitives that specialization replaces by the calls they stand for.
WRITTEN_OUT = {"apply_star"}


def test_every_primitive_is_differentiable_or_marked() -> None:
    missing = [
        name
        for name, p in PRIMITIVES.items()
        if p not in BPROPS
        and p not in NONDIFFERENTIABLE
        and p not in SPECIAL
        and name not in NO_DERIVATIVE_YET
    ]
    assert not missing, f"primitives without a backpropagator or a mark: {missing}"


def test_every_differentiable_primitive_is_checked() -> None:
    covered = {p for c in CASES for p in c.prims}
    unchecked = [
        name
        for name, p in PRIMITIVES.items()
        if p not in NONDIFFERENTIABLE and name not in covered | NO_DERIVATIVE_YET | NEED_SCIPY
    ]
    assert not unchecked, f"differentiable primitives missing from the table: {unchecked}"

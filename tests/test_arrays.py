"""One table-driven test over every array primitive: inferred types and values against NumPy.

Each entry of `CASES` is a function written with NumPy, the primitives it exercises, and the
arguments to call it on: a list of argument specs, or a hypothesis strategy drawing them
(shapes from `hypothesis.extra.numpy`, with broadcasting corner cases). For each set of
arguments, the test checks that the shape and dtype that type inference gives equal those of
NumPy's result, and that running the function with `myia` gives NumPy's value and dtype.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from array_checks import (
    A,
    RecordingInferrer,
    as_myia_result,
    binary_args,
    check_abstract,
    check_value,
    f,
    f32,
    i64,
    make_args,
    reduce_args,
    unary_args,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from myia import MyiaShapeError, myia
from myia import nn as public_nn
from myia.abstract import to_abstract
from myia.frontend import parse
from myia.infer.registry import INFER_RULES
from myia.primitives import PRIMITIVES, P, array, nn, scalar

# Functions written with NumPy -----------------------------------------------------------------


def add(x, y):
    return x + y


def sub(x, y):
    return x - y


def mul(x, y):
    return x * y


def truediv(x, y):
    return x / y


def floordiv(x, y):
    return x // y


def mod(x, y):
    return x % y


def pow_(x, y):
    return x**y


def pow_ieee(x, y):
    return P.pow_ieee(x, y)  # ``**`` as NumPy computes it (the derivatives of ``**`` use it)


def log_ieee(x):
    return P.log_ieee(x)  # log as NumPy computes it, nan below 0 (the derivatives of ``**``)


def compare(x, y):
    return x == y, x != y, x < y, x <= y, x > y, x >= y


def maximum(x, y):
    return np.maximum(x, y), np.minimum(x, y)


def atan2(x, y):
    return np.arctan2(x, y)


def logical(x, y):
    return np.logical_and(x, y), np.logical_or(x, y), np.logical_not(x)


def bitwise(x, y):
    return x & y, x | y, x ^ y, ~x


def shift(x, y):
    return x << y, x >> y


def scale_f32(x):
    return x * 2.0 + 1 - x / 3


def neg_abs_sign(x):
    return -x, np.abs(x), abs(x), np.sign(x)


def floor_ceil(x):
    return np.floor(x), np.ceil(x)


def exp_fns(x):
    return np.exp(x), np.expm1(x), np.tanh(x), np.sinh(x), np.cosh(x)


def log_fns(x):
    return np.log(x), np.log1p(x), np.sqrt(x), np.log2(x), np.log10(x)


def trig(x):
    return np.sin(x), np.cos(x), np.tan(x), np.arcsin(x), np.arccos(x), np.arctan(x)


def inverse_hyperbolic(x):
    # arccosh of (-0.9, 0.9) is nan (outside its domain), as NumPy's; of x + 2.0 it is not.
    return np.arcsinh(x), np.arccosh(x + 2.0), np.arccosh(x), np.arctanh(x)


def copysign(x, y):
    return np.copysign(x, y)


def where(c, x, y):
    return np.where(c > 0, x, y)


def where_scalar(c, x):
    return np.where(c > 0, x, 0.0)


def clip(x):
    return np.clip(x, -0.5, 0.5), np.clip(x, a_min=None, a_max=0.25)


def clip_arrays(x, lo, hi):
    return np.clip(x, lo, hi)


# Reductions take their axis as a compile-time constant: these make a function per axis.


def np_sum(axis):
    def fn(x):
        return np.sum(x, axis=axis)

    return fn


def np_sum_keepdims(axis):
    def fn(x):
        return np.sum(x, axis, keepdims=True)

    return fn


def np_mean(axis):
    def fn(x):
        return np.mean(x, axis=axis, keepdims=True)

    return fn


def np_prod(axis):
    def fn(x):
        return np.prod(x, axis=axis)

    return fn


def np_max(axis):
    def fn(x):
        return np.max(x, axis=axis)

    return fn


def np_min(axis):
    def fn(x):
        return np.amin(x, axis, keepdims=True)

    return fn


def arg_max_min(x):
    return np.argmax(x), np.argmin(x, axis=0, keepdims=True)


def reduce_dtypes(x):
    return np.sum(x, dtype="float64"), np.mean(x), np.prod(x, dtype=np.float32)


def methods(x):
    return (
        x.sum(),
        x.mean(axis=0, keepdims=True),
        x.prod(-1),
        x.max(axis=(0, 1)),
        x.min(0),
        x.argmax(axis=-1),
        x.argmin(),
        x.astype(np.float32),
        x.clip(0.0, None),
        x.swapaxes(0, 1),
        x.take((0, 2), axis=1),
        x.dot(x.T),
        x.copy(),
    )


def methods_varargs(x):
    return x.reshape(4, 6), x.transpose(1, 2, 0)


def methods_varargs_tuple(x):
    return x.reshape((3, -1)), x.transpose((2, 0, 1))


def methods_varargs_none(x):
    return x.reshape(-1), x.transpose()


def same_method_twice(x):
    return x.sum(axis=0), x.sum(axis=1), x.reshape(4, 6), x.reshape(-1)


def mixed_forms(x):
    return np.sum(x), x.sum(axis=0), np.argmax(x), x.argmax(axis=0)


def mixed_types(x, y):
    return x.sum() + y.sum()


def matmul(x, y):
    return x @ y, np.matmul(x, y)


def dot(x, y):
    return np.dot(x, y), x.dot(y)


def transpose(x):
    return x.T, np.transpose(x)


def transpose_axes(x):
    return np.transpose(x, (1, 2, 0)), np.transpose(x, axes=(-1, 0, 1))


def swapaxes(x):
    return np.swapaxes(x, 0, -1)


def reshape(x):
    return np.reshape(x, (2, -1)), np.reshape(x, 24)


def flatten(x):
    return x.flatten(), x.ravel()


def expand_squeeze(x):
    y = np.expand_dims(x, 0)
    z = np.expand_dims(x, (1, -1))
    return y, z, np.squeeze(z), np.squeeze(z, axis=1), np.squeeze(z, (1, -1))


def getitem_basic(x):
    return x[1], x[-1, 2], x[1:, ::2], x[::-1, None, 1:3], x[..., 0], x[0, ..., None], x[:, -2:]


def getitem_dynamic(x, i):
    return x[i], x[i, 1:], x[-1, i]


def getitem_gather(x, idx):
    return x[idx], x[:, idx], x[idx, 1:], np.take(x, idx, axis=1)


def take_flat(x, idx):
    return np.take(x, idx)


def concatenate(x, y):
    return np.concatenate((x, y)), np.concatenate((x, y, x), axis=0)


def concatenate_axis(x, y):
    return np.concatenate((x, y), axis=1), np.concatenate((x, y), axis=None)


def stack(x, y):
    return np.stack((x, y)), np.stack((x, y, x), axis=-1), np.stack((x, y), axis=1)


def stack_scalars(x, y):
    return np.stack((x, y))


def split(x):
    a, b = np.split(x, 2)
    return a, b, np.split(x, (1, 3), axis=1)


def creation(x):
    return (
        np.zeros((2, 3)),
        np.ones(4, dtype=np.float32),
        np.full((2, 2), 3.5),
        np.full(3, 7),
        np.zeros(x.shape, dtype=x.dtype),
        np.ones((x.shape[0], 2), "int32"),
        np.zeros(3, dtype=bool),
        np.zeros(2, int),
        np.ones(2, float),
    )


def creation_like(x):
    return (
        np.zeros_like(x),
        np.ones_like(x),
        np.ones_like(x, dtype=np.int32),
        np.full_like(x, 2.5),
        np.full_like(x, 1, dtype="float32"),
    )


def arange(x):
    return (
        np.arange(5),
        np.arange(2, 11, 3),
        np.arange(0.0, 1.0, 0.25),
        np.arange(4, dtype=np.float32),
        np.arange(x.shape[0]),
    )


def astype(x):
    return x.astype(np.float32)


def astype_str(x):
    return x.astype("int32")


def astype_same(x):
    return x.astype(x.dtype)


def astype_bool(x):
    return x.astype(bool)


def attributes(x):
    return x.shape, x.ndim, x.size, x.dtype, len(x), np.shape(x), np.ndim(x), np.size(x)


def conv(x, w):
    return P.conv2d(x, w)


def conv_options(x, w):
    return P.conv2d(x, w, stride=2, padding=1, dilation=(2, 1))


def conv_groups(x, w):
    return P.conv2d(x, w, stride=(1, 2), padding=(1, 0), groups=2)


def pool(x):
    return P.max_pool2d(x, 2), P.max_pool2d(x, (3, 2), stride=1, padding=1)


# Reference implementations (plain loops over output pixels: obviously right, small inputs).


def conv2d_reference(x, w, stride=1, padding=0, dilation=1, groups=1):
    pair = lambda v: (v, v) if isinstance(v, int) else v  # noqa: E731
    (sh, sw), (ph, pw), (dh, dw) = pair(stride), pair(padding), pair(dilation)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow), np.result_type(x, w))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = xp[
                    :,
                    g * cg : (g + 1) * cg,
                    i * sh : i * sh + dh * (kh - 1) + 1 : dh,
                    j * sw : j * sw + dw * (kw - 1) + 1 : dw,
                ]
                out[:, oc, i, j] = np.sum(patch * w[oc], axis=(1, 2, 3))
    return out


def max_pool2d_reference(x, kernel, stride=None, padding=0):
    pair = lambda v: (v, v) if isinstance(v, int) else v  # noqa: E731
    (kh, kw), (ph, pw) = pair(kernel), pair(padding)
    sh, sw = pair(stride) if stride is not None else (kh, kw)
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=-np.inf)
    oh = (x.shape[2] + 2 * ph - kh) // sh + 1
    ow = (x.shape[3] + 2 * pw - kw) // sw + 1
    out = np.empty(x.shape[:2] + (oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = xp[:, :, i * sh : i * sh + kh, j * sw : j * sw + kw].max(axis=(2, 3))
    return out


def conv_ref(x, w):
    return conv2d_reference(x, w)


def conv_options_ref(x, w):
    return conv2d_reference(x, w, stride=2, padding=1, dilation=(2, 1))


def conv_groups_ref(x, w):
    return conv2d_reference(x, w, stride=(1, 2), padding=(1, 0), groups=2)


def pool_ref(x):
    return max_pool2d_reference(x, 2), max_pool2d_reference(x, (3, 2), stride=1, padding=1)


# The table ------------------------------------------------------------------------------------


@dataclasses.dataclass
class Case:
    """An entry of the table: `fn` (written with NumPy) exercises primitives `prims`.

    `args` is a list of argument specs or a hypothesis strategy of them; `reference`
    computes the expected result when NumPy has no such function (convolution).
    """

    name: str
    fn: Callable[..., Any]
    prims: tuple[str, ...]
    args: Any
    reference: Callable[..., Any] | None = None
    marks: Any = ()
    static: bool = False

    def __post_init__(self) -> None:
        self.compiled = myia(self.fn)

    def function(self, args: tuple[Any, ...]) -> tuple[Any, Any, tuple[Any, ...]]:
        """Return the function, its compiled version and its arguments for `args`.

        When `static`, the last argument is a compile-time constant: `fn` makes the function.
        """
        if self.static:
            fn = self.fn(args[-1])
            return fn, myia(fn), args[:-1]
        return self.fn, self.compiled, args


NUMBERS = st.sampled_from(["float64", "float32", "int64"])

CASES = [
    # Elementwise arithmetic, broadcasting and promotion (Python scalars are weak).
    Case("add", add, ("add",), binary_args(dtypes=NUMBERS)),
    Case("sub", sub, ("sub",), binary_args(dtypes=NUMBERS)),
    Case("mul", mul, ("mul",), binary_args(dtypes=NUMBERS)),
    Case("truediv", truediv, ("truediv",), binary_args("normal", "pos", NUMBERS)),
    Case("floordiv", floordiv, ("floordiv",), binary_args("int", "nat", NUMBERS)),
    Case("mod", mod, ("mod",), binary_args("int", "nat", NUMBERS)),
    Case("pow", pow_, ("pow",), binary_args("pos", "normal")),
    Case("pow_ieee", pow_ieee, ("pow_ieee",), binary_args("pos", "normal"), reference=np.power),
    Case("compare", compare, ("eq", "ne", "lt", "le", "gt", "ge"), binary_args("int")),
    Case("maximum", maximum, ("maximum", "minimum"), binary_args(dtypes=NUMBERS)),
    Case("atan2", atan2, ("atan2",), binary_args()),
    Case("copysign", copysign, ("copysign",), binary_args(dtypes=NUMBERS)),
    Case(
        "logical",
        logical,
        ("logical_and", "logical_or", "logical_not"),
        binary_args("bool", dtypes=st.just("bool")),
    ),
    Case(
        "bitwise",
        bitwise,
        ("bitwise_and", "bitwise_or", "bitwise_xor", "invert"),
        binary_args("int", dtypes=st.just("int64")),
    ),
    Case(
        "bitwise_bool",
        bitwise,
        ("bitwise_and", "bitwise_or", "bitwise_xor", "invert"),
        binary_args("bool", dtypes=st.just("bool")),
    ),
    Case(
        "shift", shift, ("left_shift", "right_shift"), binary_args("int", "nat", st.just("int64"))
    ),
    Case(
        "scale_f32",
        scale_f32,
        ("mul", "add", "sub", "truediv"),
        [(f32(3, 4),), (f32(),), (f(2, 1),), (i64(3),), (2.5,), (3,)],
    ),
    # Elementwise math.
    Case("neg_abs_sign", neg_abs_sign, ("neg", "abs", "sign"), unary_args(dtypes=NUMBERS)),
    Case("floor_ceil", floor_ceil, ("floor", "ceil"), unary_args(dtypes=NUMBERS)),
    Case("exp", exp_fns, ("exp", "expm1", "tanh", "sinh", "cosh"), unary_args()),
    Case("log", log_fns, ("log", "log1p", "sqrt", "log2", "log10"), unary_args("pos")),
    Case("log_ieee", log_ieee, ("log_ieee",), unary_args("normal", NUMBERS), reference=np.log),
    Case("trig", trig, ("sin", "cos", "tan", "asin", "acos", "atan"), unary_args("unit")),
    Case(
        "inverse_hyperbolic",
        inverse_hyperbolic,
        ("asinh", "acosh", "atanh"),
        unary_args("unit", NUMBERS),
    ),
    Case(
        "where",
        where,
        ("where",),
        [
            (f(3, 4), f(3, 4), f(3, 4)),
            (f(3, 1), f32(4), f32(1, 4)),
            (f(4), f32(2, 1), 0.5),
            (f(), 1.0, 2),
            (f(2, 3), i64(3), 7),
        ],
    ),
    Case("where_scalar", where_scalar, ("where",), [(f(3), f32(3)), (f(2, 3), f(3)), (f(), 2)]),
    Case("clip", clip, ("clip",), [(f(3, 4),), (f32(5),), (f32(),), (i64(4),)]),
    Case(
        "clip_arrays",
        clip_arrays,
        ("clip",),
        [(f(3, 4), f(4), f(3, 1)), (f32(2, 3), -0.5, f32(3)), (i64(5), 0, 2.5)],
    ),
    # Reductions.
    Case("sum", np_sum, ("reduce_sum",), reduce_args(), static=True),
    Case("sum_keepdims", np_sum_keepdims, ("reduce_sum",), reduce_args(), static=True),
    Case("mean", np_mean, ("reduce_mean",), reduce_args(), static=True),
    Case("prod", np_prod, ("reduce_prod",), reduce_args("pos"), static=True),
    Case("max", np_max, ("reduce_max",), reduce_args(), static=True),
    Case("min", np_min, ("reduce_min",), reduce_args(), static=True),
    Case("argmax", arg_max_min, ("argmax", "argmin"), [(f(5),), (f32(3, 4),), (i64(2, 3, 4),)]),
    Case(
        "reduce_dtypes",
        reduce_dtypes,
        ("reduce_sum", "reduce_mean", "reduce_prod"),
        [(i64(3, 4),), (f32(5),), (A((2, 2), "int32"),), (A((3,), "bool", "bool"),)],
    ),
    # Products.
    Case(
        "matmul",
        matmul,
        ("matmul",),
        [
            (f(3, 4), f(4, 5)),
            (f(4), f(4, 5)),
            (f(3, 4), f(4)),
            (f(4), f32(4)),
            (f32(2, 3, 4), f32(4, 2)),
            (f(2, 1, 3, 4), f(5, 4, 2)),
        ],
    ),
    Case(
        "dot",
        dot,
        ("dot",),
        [
            (f(3, 4), f(4, 5)),
            (f(4), f(4)),
            (f(3, 4), f(4)),
            (f(2, 3, 4), f(5, 4, 2)),
            (f32(3, 4), 2.0),
            (f32(3), f32(3)),
        ],
    ),
    # Shapes.
    Case("transpose", transpose, ("transpose",), [(f(3, 4),), (f32(2, 3, 4),), (f(5),)]),
    Case("transpose_axes", transpose_axes, ("transpose",), [(f(2, 3, 4),)]),
    Case("swapaxes", swapaxes, ("swapaxes",), [(f(2, 3, 4),), (f32(1, 2, 3, 4),)]),
    Case("reshape", reshape, ("reshape",), [(f(2, 3, 4),), (f32(4, 6),)]),
    Case("flatten", flatten, ("reshape",), [(f(2, 3, 4),), (i64(5),)]),
    Case("expand_squeeze", expand_squeeze, ("expand_dims", "squeeze"), [(f(3, 4),), (f32(5),)]),
    # Indexing.
    Case("getitem", getitem_basic, ("array_getitem",), [(f(4, 5),), (f32(3, 4, 5),)]),
    Case(
        "getitem_dynamic",
        getitem_dynamic,
        ("array_getitem",),
        [(f(4, 5), 1), (f(4, 5), -2), (f32(3, 4, 2), 0)],
    ),
    Case(
        "gather",
        getitem_gather,
        ("array_getitem", "take"),
        [(f(4, 5), np.array([0, 3, 3])), (f32(3, 4), np.array([[0, 1], [2, -1]]))],
    ),
    Case("take_flat", take_flat, ("take",), [(f(4, 5), np.array([0, 19, 7])), (f(3), (2, 0))]),
    # Joining and splitting.
    Case(
        "concatenate",
        concatenate,
        ("concatenate",),
        [(f(2, 3), f(4, 3)), (f32(3), f32(5)), (f(1, 2, 2), f32(3, 2, 2))],
    ),
    Case("concatenate_axis", concatenate_axis, ("concatenate",), [(f(2, 3), f(2, 4))]),
    Case("stack", stack, ("stack",), [(f(2, 3), f(2, 3)), (f32(4), f32(4))]),
    Case("stack_scalars", stack_scalars, ("stack",), [(f(), f()), (1.0, f32())]),
    Case("split", split, ("split",), [(f(4, 4),), (f32(2, 6),)]),
    # Creation and conversion.
    Case("creation", creation, ("zeros", "ones", "full"), [(f(3, 2),), (f32(4),)]),
    Case(
        "creation_like",
        creation_like,
        ("zeros_like", "ones_like", "full_like"),
        [(f(3, 2),), (f32(4),), (i64(2, 2),), (f(),)],
    ),
    Case("arange", arange, ("arange",), [(f(3),), (f(7, 2),)]),
    Case("astype", astype, ("astype",), [(f(3, 2),), (i64(2, 2),), (f(),)]),
    Case("astype_str", astype_str, ("astype",), [(f(3, 2),), (f32(),)]),
    Case("astype_same", astype_same, ("astype",), [(f32(3, 2),), (i64(),)]),
    Case("astype_bool", astype_bool, ("astype",), [(f(3, 2),), (i64(4),)]),
    # Array methods and attributes.
    Case(
        "methods",
        methods,
        (
            "reduce_sum",
            "reduce_mean",
            "reduce_prod",
            "reduce_max",
            "reduce_min",
            "argmax",
            "argmin",
            "astype",
            "clip",
            "swapaxes",
            "take",
            "dot",
            "transpose",
        ),
        [(f(3, 3),), (f32(4, 4),)],
    ),
    Case("methods_varargs", methods_varargs, ("reshape", "transpose"), [(f(2, 3, 4),)]),
    Case("methods_tuple", methods_varargs_tuple, ("reshape", "transpose"), [(f(2, 3, 4),)]),
    Case("methods_none", methods_varargs_none, ("reshape", "transpose"), [(f32(2, 3, 4),)]),
    Case("same_method_twice", same_method_twice, ("reduce_sum", "reshape"), [(f(2, 3, 4),)]),
    Case("mixed_forms", mixed_forms, ("reduce_sum", "argmax"), [(f(3, 4),)]),
    Case("mixed_types", mixed_types, ("reduce_sum",), [(f(3, 4), f32(2))]),
    Case(
        "attributes",
        attributes,
        ("shape", "ndim", "size", "dtype_of", "array_len"),
        [(f(3, 2),), (f32(4),), (i64(2, 3, 4),)],
    ),
    # Neural networks (NCHW).
    Case(
        "conv2d",
        conv,
        ("conv2d",),
        [(f(2, 3, 6, 5), f(4, 3, 3, 2)), (f32(1, 2, 4, 4), f32(3, 2, 1, 1))],
        reference=conv_ref,
    ),
    Case(
        "conv2d_options",
        conv_options,
        ("conv2d",),
        [(f(2, 3, 7, 6), f(4, 3, 3, 3))],
        reference=conv_options_ref,
    ),
    Case(
        "conv2d_groups",
        conv_groups,
        ("conv2d",),
        [(f(2, 4, 5, 6), f(6, 2, 3, 2))],
        reference=conv_groups_ref,
    ),
    Case(
        "max_pool2d",
        pool,
        ("max_pool2d",),
        [(f(2, 3, 6, 5),), (f32(1, 2, 4, 4),)],
        reference=pool_ref,
    ),
]


# The checks -----------------------------------------------------------------------------------


def check_case(case: Case, spec: tuple[Any, ...], seed: int = 0) -> None:
    fn, compiled, args = case.function(make_args(spec, seed))
    with np.errstate(all="ignore"):
        expected = as_myia_result((case.reference or fn)(*args))
    inferrer = RecordingInferrer()
    _, abstract = inferrer.infer(parse(fn), tuple(to_abstract(a) for a in args))
    check_abstract(abstract, expected)
    assert set(case.prims) <= inferrer.seen, set(case.prims) - inferrer.seen
    with np.errstate(all="ignore"):
        got = compiled(*args)
    check_value(got, expected)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name, marks=c.marks) for c in CASES])
def test_array_primitive(case: Case) -> None:
    if isinstance(case.args, st.SearchStrategy):

        @settings(max_examples=15, deadline=None)
        @given(case.args, st.integers(0, 2**16))
        def run(spec: tuple[Any, ...], seed: int) -> None:
            check_case(case, spec, seed)

        run()
    else:
        for i, spec in enumerate(case.args):
            check_case(case, spec, i)


# Coverage of the table ------------------------------------------------------------------------

# Scalar conversions (``float(x)``...) and Python's ``round(x, ndigits)`` of a float are not
# array operations.
NOT_ARRAY = {"to_float", "to_int", "to_bool", "round_decimal"}


def _primitives_of(*modules: Any) -> set[str]:
    """Return the names of the primitives declared in `modules` (not those they import)."""
    return {
        p.name
        for m in modules
        for p in vars(m).values()
        if isinstance(p, type(P.add)) and p.impl.__module__ == m.__name__
    }


def test_every_array_primitive_is_in_the_table() -> None:
    covered = {p for case in CASES for p in case.prims}
    missing = _primitives_of(array, nn, scalar) - NOT_ARRAY - covered
    assert not missing, f"array primitives missing from the table: {sorted(missing)}"


def test_every_primitive_has_a_type_rule() -> None:
    missing = [name for name, p in PRIMITIVES.items() if p not in INFER_RULES]
    assert not missing, f"primitives without a type rule: {missing}"


# The public names: myia.nn ----------------------------------------------------------------------


def nn_layer(x, w):
    h = public_nn.conv2d(x, w, stride=(1, 2), padding=1, dilation=1, groups=2)
    return public_nn.max_pool2d(np.maximum(h, 0.0), 2, stride=1, padding=(1, 0))


def test_myia_nn_conv2d_and_max_pool2d():
    # conv2d and max_pool2d had no public names (only `P.conv2d` of myia.primitives).
    from myia import grad
    from myia.testing import check_grad

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 4, 5, 6)), rng.standard_normal((6, 2, 3, 3))
    h = np.maximum(conv2d_reference(x, w, stride=(1, 2), padding=1, groups=2), 0.0)
    expected = max_pool2d_reference(h, 2, stride=1, padding=(1, 0))
    for backend in ("numpy", "debug"):
        np.testing.assert_allclose(myia(nn_layer, backend=backend)(x, w), expected, rtol=1e-12)
    np.testing.assert_allclose(nn_layer(x, w), expected, rtol=1e-12)  # plain Python: NumPy
    assert public_nn.conv2d(x, w, groups=2).shape == (2, 6, 3, 4)
    assert public_nn.max_pool2d(x, 2).shape == (2, 4, 2, 3)
    check_grad(lambda x, w: np.sum(nn_layer(x, w) ** 2), x, w, wrt=(0, 1))
    ties = grad(lambda x: np.sum(public_nn.max_pool2d(x, 2)))(np.ones((1, 1, 2, 2)))
    assert ties.tolist() == [[[[1.0, 0.0], [0.0, 0.0]]]]  # to the first maximum
    with pytest.raises(MyiaShapeError, match="conv2d"):
        myia(lambda x, w: public_nn.conv2d(x, w))(x, rng.standard_normal((6, 3, 3, 3)))

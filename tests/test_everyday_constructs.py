"""Everyday constructs in compiled code and under `grad`, compared with Python (see
`test_everyday`): callable dataclasses, ``functools.partial``, constant strings, special
floats, bitwise operators, NumPy scalar casts, ``hasattr``/``getattr``, defaults, ``is``,
`myia.ArithmeticData`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math

import numpy as np
import pytest

from myia import ArithmeticData, grad, myia
from myia.errors import MyiaTypeError
from myia.testing import check_grad


def _inc(x):
    return x + 1.0


def _dbl(x):
    return 2.0 * x


FUNCTIONS = (_inc, _dbl, math.sin)


# Other everyday constructs -------------------------------------------------------------------


@dataclasses.dataclass
class Linear:
    w: np.ndarray
    b: float

    def __call__(self, x):
        return self.w * x + self.b


@dataclasses.dataclass
class MLP:
    first: Linear
    second: Linear

    def __call__(self, x, scale=1.0):
        return self.second(np.tanh(self.first(x))) * scale


def call_model(model, x):
    return model(x)


def call_models(models, x):
    for m in models:
        x = m(x)
    return x


def call_nested(model, x):
    return model(x, scale=2.0) + model(x)


def _mul3(a, b, c=1.0):
    return a * b * c


def _add3(a, b, c=1.0):
    return a + b * c


def partials(x, y):
    g = functools.partial(_mul3, x)
    h = functools.partial(_add3, y, 3.0)
    k = functools.partial(g, x * y)
    return g(y, c=y) * h(x) + k(y) + functools.partial(math.sin)(x)


def _affine(x, w, b=0.0, scale=1.0):
    return (x * w + b) * scale


def keyword_partials(x, y):
    g = functools.partial(_affine, b=y)
    h = functools.partial(_affine, x, scale=y)
    k = functools.partial(_affine, w=x)
    return g(x, 2.0) + h(y) + k(y, scale=x)


def test_keyword_partial_errors():
    from myia import MyiaSyntaxError

    def bad(x):
        return functools.partial(_affine, z=x)(x, x)

    with pytest.raises(MyiaSyntaxError, match="unexpected keyword argument 'z'"):
        myia(bad)(1.0)


def activation(cfg, x):
    if cfg["act"] == "tanh":
        return math.tanh(x)
    if cfg["act"] != "relu":
        return x
    return max(x, 0.0)


def string_membership(cfg, x):
    if cfg["act"] in ("tanh", "sigmoid"):
        return x * 2.0
    if "relu" == cfg["act"] and cfg["act"] not in ("elu",) and "el" in cfg["act"]:
        return x * 3.0
    return x


def special_floats(x):
    lo = float("-inf")
    return (
        min(x, float("inf")),
        max(x, lo),
        x < math.inf,
        x > -np.inf,
        np.pi * x,
        math.pi + math.e,
        math.isnan(float("nan")),
        math.isnan(x),
        math.isinf(-math.inf),
        math.isfinite(x),
    )


def nans(x):
    return float("nan") + x, math.nan * x, np.nan


def bitwise_ints(a, b):
    c = a & b
    c |= 4
    return c, a | b, a ^ b, ~a, a << 2, a >> 1, (a & 1) == 1


def bitwise_bools(p, q):
    return p & q, p | q, p ^ q, (p | q) & (not q)


def bitwise_arrays(m, n):
    return m & n, m | n, m ^ n, ~m, (n << 1) >> 1


def casts(x):
    return np.float32(x), np.float64(x), np.int32(x), np.int64(x), np.float32(x) * 2.0


def cast_arrays(a):
    return np.float32(a), np.int32(a * 3.0)


@dataclasses.dataclass
class Config:
    depth: int
    rate: float = 0.5

    @property
    def double(self):
        return self.depth * 2


def attributes(cfg, x):
    out = x * getattr(cfg, "rate") + getattr(cfg, "depth", 0)  # noqa: B009
    if hasattr(cfg, "dropout"):
        out = out + 100.0
    if hasattr(cfg, "double") and not hasattr(cfg, "shape"):
        out = out + getattr(cfg, "double")  # noqa: B009
    return out + getattr(cfg, "missing", 2.5) + getattr(x, "ndim", 7)


def defaults(x, w=np.ones(3), scale=2 * math.pi, shift=(1.0, 2.0)):  # noqa: B008
    return x * w * scale + shift[1]


def nested_defaults(x):
    s = x * 2.0

    def inner(y, k=s, w=np.ones(2), c=2 * math.pi, *, shift=s + 1.0):  # noqa: B008
        return y * k * w * c + shift

    s = 100.0  # the default is the value where inner is defined
    return np.sum(inner(x)) + np.sum(inner(x, 1.0, shift=0.5)) + s


def lambdas_with_defaults(x, n):
    s = x + 1.0
    f = lambda y, k=s * 2.0: y * k  # noqa: E731
    return f(x) + f(x * n) + f(x, 3.0)


def identity(x, y):
    a = FUNCTIONS
    return x is a, _inc is _inc, _inc is _dbl, None is None, x is not a


@dataclasses.dataclass
class Node:
    value: float
    child: Node | None = None


def identity_records(t, u):
    c = t.child
    return t is c, c is t, t is u, c is None, t.value is t


def isinstance_tuples(x):
    return (
        isinstance(x, (int, float)),
        isinstance(x, (tuple, list)),
        isinstance(x, (np.ndarray, Config)),
        isinstance(x, ((int, bool), float)),
    )


@dataclasses.dataclass
class Params(ArithmeticData):
    w: np.ndarray
    b: float


def arithmetic_data(p, q):
    return p // 2.0, p % 1.5, p**2, -p, +p, 2.0**p, 7.0 % p, 9.0 // p, p**q, -(p - q), abs(q - p)


def _options(x, **options):
    return x * options.get("scale", 1.0) + options.get("shift", 0.0) * options["weight"]


def dict_get(d, x):
    # ``dict.get`` with constant keys (``**kwargs`` are a dict): known at compile time.
    return (
        d.get("a", 0.0) * x + d.get("missing", 2.0) * d["a"],
        d.get("nothing") is None,
        _options(x, weight=2.0) + _options(x, scale=x, shift=3.0, weight=x),
    )


EVERYDAY = [
    (call_model, (Linear(np.array([1.0, -2.0]), 0.5), 1.5)),
    (call_models, ((Linear(np.ones(2), 0.5), Linear(np.arange(2.0), 1.0)), np.ones(2))),
    (call_nested, (MLP(Linear(np.ones(2), 0.5), Linear(np.arange(2.0), 1.0)), 0.3)),
    (partials, (1.5, 2.0)),
    (keyword_partials, (1.5, 2.0)),
    (activation, ({"act": "tanh"}, 0.5)),
    (activation, ({"act": "relu"}, -0.5)),
    (activation, ({"act": "none"}, -0.5)),
    (string_membership, ({"act": "sigmoid"}, 0.5)),
    (string_membership, ({"act": "relu"}, 0.5)),
    (string_membership, ({"act": "elu"}, 0.5)),
    (special_floats, (1.5,)),
    (nans, (1.5,)),
    (bitwise_ints, (6, 3)),
    (bitwise_ints, (-5, 12)),
    (bitwise_bools, (True, False)),
    (bitwise_bools, (True, True)),
    (bitwise_arrays, (np.array([True, False]), np.array([True, True]))),
    (bitwise_arrays, (np.array([5, 6]), np.array([3, 1]))),
    (casts, (2.75,)),
    (casts, (-3,)),
    (cast_arrays, (np.array([1.5, -2.25]),)),
    (attributes, (Config(3), 1.5)),
    (attributes, (Config(2, 0.25), np.ones(2))),
    (defaults, (2.0,)),
    (nested_defaults, (1.5,)),
    (lambdas_with_defaults, (1.5, 4)),
    (identity, (1.0, 2.0)),
    (identity_records, (Node(1.0, Node(2.0)), Node(3.0))),
    (isinstance_tuples, (1.0,)),
    (isinstance_tuples, ((1.0,),)),
    (isinstance_tuples, (np.ones(2),)),
    (arithmetic_data, (Params(np.array([3.5, -1.0]), 2.5), Params(np.array([2.0, 3.0]), 0.5))),
    (dict_get, ({"a": 1.5, "b": 2.0}, 0.5)),
]


@pytest.mark.parametrize(("fn", "args"), EVERYDAY, ids=lambda v: getattr(v, "__name__", ""))
def test_everyday_constructs(check, fn, args):
    check(fn, *args)


def test_bitwise_rejects_floats():
    from myia import MyiaTypeError

    with pytest.raises(MyiaTypeError, match="integers or booleans"):
        myia(bitwise_bools)(1.5, 2.0)


def model_loss(model, x):
    return np.sum(call_nested(model, x)) + np.sum(call_model(model.first, x))


def partial_loss(x, y):
    g = functools.partial(_mul3, x)
    h = functools.partial(_add3, y, 3.0)
    return g(y, c=y) * h(x) + functools.partial(math.sin)(x)


def string_loss(x):
    return activation({"act": "tanh"}, x) + string_membership({"act": "relu"}, x)


def special_loss(x):
    return min(x, float("inf")) * np.pi + max(x * x, -math.inf)


def cast_loss(x, a):
    return np.float64(x) * np.float64(x) + np.sum(np.float64(a) * x)


def attributes_loss(cfg, x):
    return attributes(cfg, x)


def defaults_loss(x):
    return np.sum(defaults(x))


def arithmetic_loss(p, q):
    r = -(p**2) + p % 1.5 + 2.0**p + (p**q) * 0.5 + abs(p - q)
    return np.sum(r.w) + r.b


def dict_get_loss(d, x):
    return dict_get(d, x)[0] + dict_get(d, x)[2]


GRADIENTS = [
    (model_loss, (MLP(Linear(np.array([1.0, -2.0]), 0.5), Linear(np.arange(2.0), 1.0)), 0.3)),
    (partial_loss, (1.5, 2.0)),
    (keyword_partials, (1.5, -2.0)),
    (string_loss, (0.7,)),
    (special_loss, (0.7,)),
    (attributes_loss, (Config(3, 0.5), 1.5)),
    (defaults_loss, (1.5,)),
    (nested_defaults, (1.5,)),
    (lambdas_with_defaults, (1.5, 4)),
    (arithmetic_loss, (Params(np.array([1.2, 0.7]), 1.3), Params(np.array([2.0, 3.0]), 0.5))),
    (dict_get_loss, ({"a": 1.5, "b": 2.0}, 0.5)),
]


@pytest.mark.parametrize(("fn", "args"), GRADIENTS, ids=lambda v: getattr(v, "__name__", ""))
def test_everyday_gradients(fn, args):
    check_grad(fn, *args)


def test_gradient_through_float_casts():
    check_grad(cast_loss, 1.3, np.array([0.5, 2.0]), wrt=(0, 1))
    # Through float32 the gradient is float32's: compare at float32's precision.
    check_grad(lambda x: np.float32(x) * 3.0, 1.25, eps=1e-2, rtol=1e-3, atol=1e-3)
    dx = grad(lambda x: float(np.float32(x) ** 2))(1.5)
    assert abs(dx - 3.0) < 1e-5


def dictcomp_over_range(x):
    return {k: x * k for k in range(3)}[2]


def test_a_dict_comprehension_over_a_range_says_what_to_write():
    with pytest.raises(MyiaTypeError) as exc:
        myia(dictcomp_over_range)(1.5)
    msg = str(exc.value)
    assert "the dict comprehension in dictcomp_over_range adds a key at every iteration" in msg
    assert "a list indexed by position" in msg
    lines, first = inspect.getsourcelines(dictcomp_over_range)
    assert f"line {first + 1}, in dictcomp_over_range" in msg

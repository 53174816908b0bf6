"""Drawing random numbers from a NumPy ``Generator`` passed to Myia code.

A ``numpy.random.Generator`` is a value of the opaque type ``Generator``
(`myia.abstract.data.AbstractOpaque`): Myia never reads its state. Each draw is a call of the
effectful primitive `random_draw`, which calls the generator's own method, so the generator
passed in advances exactly as it would in plain Python, and the numbers are those NumPy
draws. Being an effect, a draw is sequenced like ``print``: the optimizer never drops,
merges, duplicates or reorders it, and it runs once per call of the forward pass of a
gradient (the backward pass reads the samples drawn, it never draws). A draw has no
derivative with respect to anything; the methods whose samples are a differentiable function
of their parameters (``normal``, ``uniform``, ``exponential``) are written, in
`myia.operations.random_lib`, as that function of a standard draw (``loc + scale * z``:
the same arithmetic NumPy does, so the same numbers), which gives their gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import NONE, AbstractArray, AbstractOpaque, AbstractScalar, show
from ..errors import MyiaShapeError, MyiaTypeError
from ..grad.registry import nondifferentiable, refuse_gradient
from ..infer.registry import infer_rule
from ..infer.rulelib import broadcast_shapes, const_dtype, const_value, shape_str
from .core import primitive

#: The methods of ``Generator`` Myia code may call: the names of their parameters (other than
#: ``size`` and ``dtype``), whether they take ``size``, and the kind of their samples (``"f"``:
#: floats, ``dtype`` for those that take one; ``"i"``: Python ints as scalars, int64 arrays;
#: ``"integers"``, ``"choice"``, ``"permutation"``: see `_infer_random_draw`).
METHODS: dict[str, tuple[tuple[str, ...], bool, str]] = {
    "random": ((), True, "f"),
    "standard_normal": ((), True, "f"),
    "standard_exponential": ((), True, "f"),
    "standard_gamma": (("shape",), True, "f"),
    "gamma": (("shape", "scale"), True, "f"),
    "beta": (("a", "b"), True, "f"),
    "binomial": (("n", "p"), True, "i"),
    "poisson": (("lam",), True, "i"),
    "integers": (("low", "high", "endpoint"), True, "integers"),
    "choice": (("a", "replace", "p"), True, "choice"),
    "permutation": (("x",), False, "permutation"),
}

#: The methods that take a ``dtype``.
_DTYPE = {"random", "standard_normal", "standard_exponential", "standard_gamma", "integers"}


@primitive(effect=True)
def random_draw(gen, method, params, size, dtype, like):
    """``gen.method(*params, size=size, dtype=dtype)``: samples from the generator ``gen``.

    ``gen`` advances. ``method`` is a name of `METHODS`, ``params`` the tuple of its
    parameters, ``size`` None, an int or a tuple of ints, ``dtype`` None or a dtype. When
    ``size`` is None and the tuple ``like`` holds arrays, the samples have the shape they
    broadcast to (the shape of ``loc + scale * z`` when ``z`` is drawn for ``normal``).
    """
    names, sized, _ = METHODS[method]
    kwargs: dict[str, Any] = dict(zip(names, params))
    if sized:
        if size is None and like:
            shape = np.broadcast_shapes(*(np.shape(x) for x in like))
            size = shape if shape else None
        kwargs["size"] = size
    if dtype is not None:
        from ..infer.rulelib import as_dtype

        kwargs["dtype"] = as_dtype(dtype)
    return getattr(gen, method)(**kwargs)


def _shape(a: Any) -> tuple[int, ...]:
    return a.shape if isinstance(a, AbstractArray) else ()


def _numeric(a: Any, what: str) -> Any:
    if not isinstance(a, (AbstractScalar, AbstractArray)):
        raise MyiaTypeError(f"{what} must be a number or an array, not {show(a)}")
    return a


@infer_rule(random_draw)
def _infer_random_draw(gen, method, params, size, dtype, like):
    if not (isinstance(gen, AbstractOpaque) and gen.cls is np.random.Generator):
        raise MyiaTypeError(
            f"random numbers are drawn from a numpy.random.Generator, not {show(gen)}"
        )
    name = const_value(method, "the method", str)
    names, sized, kind = METHODS[name]
    args = dict(zip(names, params.elements))
    what = f"Generator.{name}"
    out_dtype = const_dtype(dtype, what) if dtype != NONE else None
    if out_dtype is not None and name not in _DTYPE:
        raise MyiaTypeError(f"{what} takes no dtype")
    if size == NONE:
        shape = None
    else:
        s = const_value(size, f"the size of {what}", (int, np.integer, tuple))
        shape = (int(s),) if isinstance(s, (int, np.integer)) else tuple(int(d) for d in s)
    if kind == "permutation":
        x = args["x"]
        if isinstance(x, AbstractArray):
            if not x.shape:
                raise MyiaShapeError(f"{what}: x must have at least one dimension")
            return x
        n = const_value(x, f"the length of {what} (an int)", (int, np.integer))
        return AbstractArray("int64", (int(n),))
    if kind == "choice":
        a = args["a"]
        for key in ("replace",):
            _numeric(args[key], f"{what}: {key}")
        if isinstance(args["p"], AbstractArray) and len(args["p"].shape) != 1:
            raise MyiaShapeError(f"{what}: p must be one-dimensional")
        if isinstance(a, AbstractArray):
            inner = a.shape[1:]
            if shape is None and not inner:
                return AbstractScalar(a.dtype)
            return AbstractArray(a.dtype, (shape or ()) + inner)
        const_value(a, f"the population size of {what} (an int)", (int, np.integer))
        return AbstractScalar("int64", True) if shape is None else AbstractArray("int64", shape)
    for key, a in args.items():
        if key in ("endpoint", "high") and a == NONE:
            continue
        _numeric(a, f"{what}: {key}")
    arrays = [_shape(a) for a in args.values() if isinstance(a, AbstractArray)]
    if arrays:
        bshape = broadcast_shapes(what, *arrays)
        if shape is None:
            shape = bshape
        elif broadcast_shapes(what, shape, bshape) != shape:
            raise MyiaShapeError(
                f"{what}: parameters of shape {shape_str(bshape)} "
                f"do not fit size {shape_str(shape)}"
            )
    if like != NONE:  # a tuple
        likes = [_shape(a) for a in like.elements if isinstance(a, AbstractArray)]
        if likes and shape is None:
            shape = broadcast_shapes(what, *likes)
    if kind == "integers":
        for key in ("low", "high"):
            a = args[key]
            if a != NONE and not a.dtype.startswith(("int", "uint", "bool")):
                raise MyiaTypeError(f"{what}: {key} must be an integer, not {show(a)}")
        dt = out_dtype or "int64"
        return AbstractScalar(dt) if shape is None else AbstractArray(dt, shape)
    if kind == "i":
        return AbstractScalar("int64", True) if shape is None else AbstractArray("int64", shape)
    if shape is None:
        return AbstractScalar("float64", True)  # NumPy returns a Python float
    return AbstractArray(out_dtype or "float64", shape)


nondifferentiable(random_draw)

#: The continuous distributions whose samples Myia cannot differentiate with respect to
#: their parameters (NumPy draws them by rejection: there is no reparameterization).
_NOT_REPARAMETERIZED = frozenset(["gamma", "standard_gamma", "beta"])


def _refused(gen: Any, method: Any, params: Any, *rest: Any) -> str | None:
    name = getattr(method, "value", None)
    if name not in _NOT_REPARAMETERIZED:
        return None  # a discrete sample has no gradient; the others are reparameterized
    return (
        f"the gradient of a sample of Generator.{name} with respect to its parameters is not "
        "supported (it would be zero, which is wrong): draw with parameters that do not depend "
        "on what is differentiated, or write the sample as a function of them"
    )


refuse_gradient(random_draw, _refused)

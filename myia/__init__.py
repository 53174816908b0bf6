"""Myia: a differentiable programming language for Python.

Write a model in a functional subset of Python; Myia parses it into a graph IR, infers types
and shapes, differentiates by transforming the IR, optimizes and compiles it.
"""

from . import debug, nn
from .api import MyiaFunction, grad, myia, value_and_grad
from .arithmetic import ArithmeticData
from .errors import (
    MyiaError,
    MyiaInternalError,
    MyiaNameError,
    MyiaRecursionError,
    MyiaShapeError,
    MyiaSyntaxError,
    MyiaTypeError,
)
from .export import StableHLO, export_stablehlo
from .grad.registry import custom_bprop
from .profiling import profile
from .saving import MyiaLoadError, load, save
from .transforms import (
    checkpoint,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    stop_gradient,
    tree_leaves,
    tree_map,
    vjp,
    vmap,
)

__all__ = [
    "ArithmeticData",
    "MyiaError",
    "MyiaFunction",
    "MyiaInternalError",
    "MyiaLoadError",
    "MyiaNameError",
    "MyiaRecursionError",
    "MyiaShapeError",
    "MyiaSyntaxError",
    "MyiaTypeError",
    "StableHLO",
    "checkpoint",
    "custom_bprop",
    "debug",
    "export_stablehlo",
    "grad",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "load",
    "myia",
    "nn",
    "profile",
    "save",
    "stop_gradient",
    "tree_leaves",
    "tree_map",
    "value_and_grad",
    "vjp",
    "vmap",
]

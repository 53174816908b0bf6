"""Attributes in the frontend: ``x.name``, ``module.name``, ``super().name``.

An attribute of a module or a class is read once, when the function is parsed, and becomes a
constant (the frontend cache records the read); ``super().name`` in a method of a class reads
after that class in the instance's MRO (`ops.super_getattr`); any other attribute is
``getattr`` at inference.
"""

from __future__ import annotations

import ast
import types
from typing import Any

import numpy as np

from ..errors import at
from ..ir.node import Node
from ..operations import ops
from . import cache
from .resolve import is_namespace, lookup_global, to_node
from .scope import attribute_chain


def parse_attribute(fp: Any, block: Any, node: ast.Attribute) -> Node:
    """The node of attribute `node` in `block` of function parser `fp`.

    A narrowed chain (``x.left`` after ``if x.left is not None``) reads its narrowed value;
    ``super().name`` in a method reads after the method's class in the MRO; an attribute of
    a module or a class is a constant, read once; any other is ``getattr``.
    """
    chain = attribute_chain(node) if fp.narrowed else None
    if chain in fp.narrowed:
        return block.read(fp.narrowed[chain])
    owner = super_owner(fp, node.value)
    if owner is not None:  # ``super().name`` in a method: read after `owner` in the MRO
        instance = fp.read_variable(block, owner[1], node.value)
        return block.apply(
            ops.super_getattr, owner[0], instance, node.attr, debug=fp.dbg(node, node.attr)
        )
    method = _ufunc_method(fp, block, node)
    if method is not None:  # ``np.add.outer``: NumPy's method, not an attribute of Myia's add
        full = f"{method.__self__.__name__}.{node.attr}"
        return fp.constant(block, to_node(method, full, fp.loc(node), fp.name).value, full, node)
    value = fp.expr(block, node.value)
    if value.is_constant and is_namespace(value.value):
        try:
            attr = getattr(value.value, node.attr)
        except AttributeError:
            from ..errors import MyiaNameError, did_you_mean

            space = value.value
            if isinstance(space, types.ModuleType):
                what = f"module {space.__name__!r}"
            elif isinstance(space, type):
                what = f"type object {space.__qualname__!r}"
            else:
                what = repr(space)
            hint = did_you_mean(node.attr, dir(space))
            raise MyiaNameError(
                f"{what} has no attribute {node.attr!r}{hint}",
                at(fp.loc(node), fp.name),
            ) from None
        cache.read(value.value, node.attr, attr)
        full = f"{getattr(value.value, '__name__', '')}.{node.attr}"
        return fp.constant(block, to_node(attr, full, fp.loc(node), fp.name).value, full, node)
    return block.apply(ops.getattr_, value, node.attr, debug=fp.dbg(node, node.attr))


def _ufunc_method(fp: Any, block: Any, node: ast.Attribute) -> Any:
    """The method `node` names of a NumPy ufunc read from a module (``np.add.outer``), if any."""
    base = node.value
    if not (isinstance(base, ast.Attribute) and isinstance(base.value, (ast.Name, ast.Attribute))):
        return None
    space = fp.expr(block, base.value)
    if not (space.is_constant and isinstance(space.value, types.ModuleType)):
        return None
    ufunc = getattr(space.value, base.attr, None)
    if not isinstance(ufunc, np.ufunc) or node.attr not in ("outer", "reduce", "accumulate"):
        return None
    cache.read(space.value, base.attr, ufunc)
    return getattr(ufunc, node.attr)


def super_owner(fp: Any, node: ast.expr) -> tuple[type, str] | None:
    """``(cls, self)`` where `node` is ``super()`` in a method of class ``cls``, else None.

    Python's zero-argument ``super()`` reads the class the method is defined in (its
    ``__class__`` cell) and the method's first parameter.
    """
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
        and not node.args
        and not node.keywords
        and fp.parent is None
        and isinstance(fp.node, ast.FunctionDef)
        and not fp.binds("super")
        and lookup_global(fp.source.fn, "super") is super
    ):
        return None
    cls = lookup_global(fp.source.fn, "__class__")
    params = fp.node.args.posonlyargs + fp.node.args.args
    if not isinstance(cls, type) or not params:
        return None
    return cls, params[0].arg

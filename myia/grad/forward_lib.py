"""Forward-mode library code written in Myia's Python subset.

`pulled` is what the tangent rule derived from a backpropagator differentiates
(`myia.grad.forward`); `interleave` makes the arguments of a tangent function.
"""

from __future__ import annotations

import numpy as np

from ..operations.ops import is_record_
from ..primitives import P


def _vdot(a, b):
    """The sum of the products of the leaves of two sensitivities alike (a float)."""
    if a is None:
        return 0.0
    if b is None:  # (narrows `b` too where both are ``Tree | None``)
        return 0.0
    if isinstance(a, (str, slice)):
        return 0.0
    if isinstance(a, tuple) and not is_record_(a):
        return _vdot_tuple(a, b)
    if isinstance(a, list):
        return 0.0 + sum([_vdot(x, y) for x, y in zip(a, b)])
    if isinstance(a, dict):
        return _vdot_tuple(P.dict_values(a), P.dict_values(b))
    if is_record_(a):
        return _vdot_tuple(P.record_fields(a), P.record_fields(b))
    return 0.0 + np.sum(a * b)


def _vdot_tuple(xs, ys):
    if len(xs) == 0:
        return 0.0
    return _vdot(xs[0], ys[0]) + _vdot_tuple(xs[1:], ys[1:])


def pulled(sens, tangents):
    """``<sens, tangents>``: with `sens` a backpropagator's ``J^T u``, linear in ``u``.

    Its gradient with respect to ``u`` is ``J tangents``, the tangent (`myia.grad.forward`).
    """
    return _vdot(P.gmaterialize(sens), tangents)


def interleave(xs, ts):
    """``(x1, t1, ..., xn, tn)``: the arguments of a tangent function."""
    if len(xs) == 0:
        return ()
    return (xs[0], ts[0]) + interleave(xs[1:], ts[1:])

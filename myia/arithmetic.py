"""`ArithmeticData`: dataclasses that add, subtract, multiply and divide field by field.

A model written as dataclasses (layers holding arrays, tuples of layers) inherits this mixin to
get ``+ - * / // % **`` (and unary ``-``, ``abs``) with another instance of its class or with a
scalar, inside and outside Myia code, so that ``model - lr * dmodel`` is one step of gradient
descent. The methods are written in Myia's Python subset: Myia parses them like any method, and
Python runs them as they are.
"""

from __future__ import annotations

from .primitives import P


def _add(a, b):
    return a + b


def _sub(a, b):
    return a - b


def _mul(a, b):
    return a * b


def _truediv(a, b):
    return a / b


def _floordiv(a, b):
    return a // b


def _mod(a, b):
    return a % b


def _pow(a, b):
    return a**b


def _abs(a, b):
    return abs(a)


def _neg(a, b):
    return -a


def _lift(op, a, b):
    """``op(a, b)`` through tuples and `ArithmeticData` fields; ``b`` may be a scalar."""
    if a is None:
        return None
    if isinstance(a, tuple):
        if isinstance(b, tuple):
            return _map2(op, a, b)
        return _map1(op, a, b)
    if isinstance(a, ArithmeticData):
        if isinstance(b, ArithmeticData):
            return P.record_from_fields(a, _map2(op, P.record_fields(a), P.record_fields(b)))
        return P.record_from_fields(a, _map1(op, P.record_fields(a), b))
    return op(a, b)


def _map2(op, xs, ys):
    if len(xs) == 0:
        return ()
    return (_lift(op, xs[0], ys[0]),) + _map2(op, xs[1:], ys[1:])


def _map1(op, xs, y):
    if len(xs) == 0:
        return ()
    return (_lift(op, xs[0], y),) + _map1(op, xs[1:], y)


def _rlift(op, a, b):
    """``op(b, a)`` for a scalar ``b`` on the left of ``a``: ``lr * model``."""
    if a is None:
        return None
    if isinstance(a, tuple):
        return _rmap(op, a, b)
    if isinstance(a, ArithmeticData):
        return P.record_from_fields(a, _rmap(op, P.record_fields(a), b))
    return op(b, a)


def _rmap(op, xs, y):
    if len(xs) == 0:
        return ()
    return (_rlift(op, xs[0], y),) + _rmap(op, xs[1:], y)


class ArithmeticData:
    """Mixin for dataclasses: elementwise ``+ - * / // % **`` with an instance or a scalar.

    Unary ``-`` and ``+``, and ``abs``, apply to each field.
    """

    def __add__(self, other):
        return _lift(_add, self, other)

    def __sub__(self, other):
        return _lift(_sub, self, other)

    def __mul__(self, other):
        return _lift(_mul, self, other)

    def __truediv__(self, other):
        return _lift(_truediv, self, other)

    def __floordiv__(self, other):
        return _lift(_floordiv, self, other)

    def __mod__(self, other):
        return _lift(_mod, self, other)

    def __pow__(self, other):
        return _lift(_pow, self, other)

    def __neg__(self):
        return _lift(_neg, self, 0)

    def __pos__(self):
        return self

    def __abs__(self):
        return _lift(_abs, self, 0)

    def __radd__(self, other):
        return _rlift(_add, self, other)

    def __rsub__(self, other):
        return _rlift(_sub, self, other)

    def __rmul__(self, other):
        return _rlift(_mul, self, other)

    def __rtruediv__(self, other):
        return _rlift(_truediv, self, other)

    def __rfloordiv__(self, other):
        return _rlift(_floordiv, self, other)

    def __rmod__(self, other):
        return _rlift(_mod, self, other)

    def __rpow__(self, other):
        return _rlift(_pow, self, other)

"""Tuples whose length is known at compile time, built by a loop: ``tuple(range(3))``.

``tuple(xs)`` is a tuple in Python whatever `xs` is. Myia's tuples have a length known at
compile time, so ``tuple(xs)`` over a range of constant bounds or the rows of an array of
known shape collects the elements in a list (a loop, not unrolled) and makes it a tuple of
that length (`list_to_tuple`); `known` tells the library code (`myia.operations.lib`) which
lengths are known.
"""

from __future__ import annotations

from ..abstract.data import ANYTHING, AbstractList, AbstractScalar, AbstractTuple, show
from ..errors import MyiaTypeError
from ..grad.registry import bprop, linear, nondifferentiable
from ..infer.kinds import static_value
from ..infer.registry import infer_rule
from ..infer.rulelib import py_bool
from .core import primitive
from .grad import gzeros
from .structure import make_list


@primitive(static=True)
def known(x):
    """Whether the value of scalar ``x`` is known at compile time."""
    return True


@infer_rule(known)
def _infer_known(x):
    return py_bool(isinstance(x, AbstractScalar) and static_value(x) is not ANYTHING)


@primitive
def list_to_tuple(lst, n):
    """The elements of list ``lst`` as a tuple of length ``n``, a constant int."""
    return tuple(lst)


@infer_rule(list_to_tuple)
def _infer_list_to_tuple(lst, n):
    k = static_value(n)
    if not isinstance(lst, AbstractList) or not isinstance(k, int) or k < 0:
        raise MyiaTypeError(f"list_to_tuple on {show(lst)}, {show(n)}")
    return AbstractTuple((lst.element,) * k)


@bprop(list_to_tuple)
def bprop_list_to_tuple(lst, n, out, dout):
    return (make_list(*dout), gzeros(n))


nondifferentiable(known)
linear(list_to_tuple, 0)

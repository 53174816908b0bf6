"""The primitives of lazy sensitivities (`myia.primitives.lazy_sens`), with their rules.

``list_index_sens`` builds the sensitivity of a list accessed at one index in O(1);
``gmaterialize`` makes a sensitivity concrete for the user.
"""

from __future__ import annotations

from ..abstract.data import AbstractList
from ..grad.registry import bprop, linear
from ..infer.registry import infer_rule
from .core import primitive
from .grad import gzeros, sens_type
from .lazy_sens import list_sens, materialize
from .structure import _expect


@primitive
def list_index_sens(lst, i, v):
    """The sensitivity of list ``lst`` whose element ``i`` (or slice) has sensitivity ``v``.

    The other elements' are zero. It is built in O(1), and sums of such sensitivities too.
    """
    return list_sens(lst, i, v)


@primitive
def gmaterialize(d):
    """The sensitivity ``d`` made concrete: plain tuples, lists, dicts and records.

    That is what the user receives as a gradient; built in time linear in its size.
    """
    return materialize(d)


@infer_rule(list_index_sens)
def _infer_list_index_sens(lst, i, v):
    lst = _expect(lst, AbstractList, "list_index_sens")
    return sens_type(lst)


@infer_rule(gmaterialize)
def _infer_gmaterialize(d):
    return d


@bprop(list_index_sens)
def bprop_list_index_sens(lst, i, v, out, dout):
    return (gzeros(lst), gzeros(i), dout[i])


@bprop(gmaterialize)
def bprop_gmaterialize(d, out, dout):
    return (dout,)


linear(list_index_sens, 2)
linear(gmaterialize)

"""In-place accumulation into arrays that have a single owner.

The backpropagator of ``a[index]`` is ``array_index_add(zeros, index, dout)``, and a loop
reading k elements of an n-element array adds k of them up: each ``array_index_add`` copies
the sensitivity it updates, so the backward loop costs O(k n). Where the optimizer proves
that nothing else references the array updated (`myia.opt.inplace`), it writes
`array_index_add_inplace`, which updates the array itself, and starts the loop's
accumulation from a fresh `owned_copy`: O(n) once, then O(1) per element read.

Their type rules and backpropagators are those of ``array_index_add`` and the identity, so a
program holding them is an ordinary program (the optimizer writes them last, in the program
that is compiled, never in one that is differentiated again).

The sum of two sensitivities that an update reads alone is `gadd_owned`, a new array (where
``gadd`` may return one of its arguments, the other being a shared zero): the update writes
it, and the sum and the update together make one array where they made two.
"""

from __future__ import annotations

import numpy as np

from ..grad.registry import bprop
from ..infer.registry import infer_rule
from .core import primitive


@primitive
def array_index_add_inplace(a, index, v):
    """``a`` with ``v`` added at ``a[index]``, written into ``a``, which nothing else reads."""
    if _basic_index(index):
        a[index] += v  # basic indexing selects each element once
    else:
        np.add.at(a, index, v)
    return a


@primitive
def owned_copy(a):
    """A copy of array ``a`` that `array_index_add_inplace` may write.

    The copy of a zero that gradients share (`myia.primitives.grad.zero_of_type`) is a new
    zero array, whose memory the system provides zeroed as it is first written: an
    accumulation that writes a few elements pays for those alone.
    """
    if is_shared_zero(a):
        return np.zeros(a.shape, a.dtype)
    return np.array(a, copy=True)


@primitive
def gadd_owned(a, b):
    """``gadd(a, b)`` of two arrays of one type, as a new array that nothing else reads."""
    return np.add(a, b)


@infer_rule(array_index_add_inplace)
def _infer_array_index_add_inplace(a, index, v):
    return a


@infer_rule(owned_copy)
def _infer_owned_copy(a):
    return a


@infer_rule(gadd_owned)
def _infer_gadd_owned(a, b):
    return _infer_gadd(a, b)


@bprop(array_index_add_inplace)
def bprop_array_index_add_inplace(a, index, v, out, dout):
    return (dout, gzeros(index), array_getitem(dout, index))


@bprop(owned_copy)
def bprop_owned_copy(a, out, dout):
    return (dout,)


@bprop(gadd_owned)
def bprop_gadd_owned(a, b, out, dout):
    return (dout, dout)


from .array import array_getitem  # noqa: E402
from .grad import _basic_index, _infer_gadd, gzeros, is_shared_zero  # noqa: E402

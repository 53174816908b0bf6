"""The tangent rules (forward mode) of the array primitives and of the gradient's primitives.

They stand here, beside the family modules `array.py`, `array_extra.py`, `array_grad.py`,
`tiling.py`, `linalg.py` and `grad.py`, whose backpropagators they mirror (those modules are
near their size limit); the other families (`reductions.py` among them) declare theirs beside
their backpropagators.
Primitives without a rule get one derived from their backpropagator (`myia.grad.forward`).
"""

from __future__ import annotations

from ..grad.registry import jvp, linear
from . import array as A
from . import array_extra as X
from . import array_grad as AG
from . import grad as G
from . import inplace as IP
from . import linalg as L
from . import tiling as T
from . import windows as W

# Arrays: linear in the array(s) they move --------------------------------------------------------

for _p in (A.astype, A.reshape, A.transpose, A.swapaxes, A.expand_dims, A.squeeze):
    linear(_p, 0)
for _p in (A.concatenate, A.stack, A.split, A.array_getitem, A.take):
    linear(_p, 0)
for _p in (AG.unconcatenate, AG.unstack, AG.untake):
    linear(_p, 0)
for _p in (X.cumsum, X.take_along_axis, X.untake_along_axis, X.diagonal, X.undiagonal):
    linear(_p, 0)
for _p in (X.broadcast_to, X.flip, X.roll, X.moveaxis, L.tril, L.triu, L.lower_half):
    linear(_p, 0)
for _p in (T.tile, T.repeat, T.untile, T.unrepeat, T.unpad):
    linear(_p, 0)
linear(T.pad, 0, 3)  # the padding's constant value too
linear(W.dynamic_window, 0)
linear(W.window_add, 0, 2)
linear(W.window_add_inplace, 0, 2)
linear(A.full, 1)
linear(A.full_like, 1)


@jvp(A.matmul)
def jvp_matmul(x, y, out, dx, dy):
    return A.matmul(dx, y) + A.matmul(x, dy)


@jvp(A.dot)
def jvp_dot(x, y, out, dx, dy):
    return A.dot(dx, y) + A.dot(x, dy)


# The gradient's primitives: sums, zeros, environments, functional updates ------------------------

linear(G.gadd)
linear(G.gzeros, 0)
linear(G.gzeros_unread, 0)
linear(G.env_add)
linear(G.env_setitem, 0, 2)
linear(G.env_getitem, 0, 2)
linear(G.env_delitem, 0)
linear(G.env_getsens, 0)
linear(G.env_sens, 0)
for _p in (G.tuple_setitem, G.seq_slice_add, G.list_setitem, G.dict_setitem):
    linear(_p, 0, 2)
linear(G.record_setattr, 0, 2)
linear(G.array_index_add, 0, 2)
linear(IP.owned_copy, 0)
linear(G.list_as_tuple, 0)
linear(G.record_fields, 0)
linear(G.dict_from_values, 1)
linear(G.record_from_fields, 1)
linear(G.unbroadcast, 0)
linear(G.broadcast_like, 0)

"""Which computations the optimizer may drop: effects, and pure primitives that may raise.

The frontend sequences every statement of a block (``seq(stmt, rest)``), so that ``y = 1 / x``
raises even when ``y`` is never read, as in Python. A ``seq`` keeps its first argument only
when dropping it could be observed: an effect (``print``, ``raise``, ``assert``), a call to a
graph (which may contain effects), or a primitive that may raise at run time on values of
its argument types (division by zero, ``math.sqrt(-1)``, an index out of range, ``math.exp``
overflowing on a Python float). NumPy arrays never raise on elementwise arithmetic (they give
``inf``/``nan`` with a warning) and their shapes are checked at compile time, so array
primitives that do not index are safe to drop.
"""

from __future__ import annotations

from collections.abc import Collection, Container

from ..abstract.data import AbstractArray, AbstractScalar
from ..ir.node import Graph, Node
from ..primitives import P, Primitive
from ..primitives.linalg import BLAS_SOLVES

#: Pure primitives that never raise on well-typed arguments (types and shapes are checked at
#: compile time).
TOTAL: frozenset[Primitive] = frozenset(
    [
        P.add, P.sub, P.mul, P.neg, P.abs_, P.sign, P.tanh, P.atan, P.asinh, P.copysign,
        P.maximum, P.minimum,
        P.eq, P.ne, P.lt, P.le, P.gt, P.ge,
        P.logical_not, P.logical_and, P.logical_or, P.to_bool, P.is_none,
        P.bitwise_and, P.bitwise_or, P.bitwise_xor, P.invert,
        P.identity, P.stop_gradient, P.breakpoint_, P.narrow, P.switch, P.seq, P.convert,
        P.make_tuple, P.tuple_getitem, P.tuple_concat, P.tuple_len, P.tuple_setitem,
        P.make_list, P.list_concat, P.list_len, P.make_dict, P.dict_getitem, P.dict_keys,
        P.dict_values, P.dict_setitem, P.dict_from_values,
        P.make_record, P.record_getattr, P.record_fields, P.record_from_fields,
        P.record_setattr, P.make_kwarg, P.partial, P.partial_arg, P.partial_fn, P.make_slice,
        P.env_new, P.env_setitem, P.env_getitem, P.env_add, P.gzeros, P.gzeros_unread, P.gadd,
        P.unbroadcast, P.broadcast_like, P.shape, P.ndim, P.size, P.dtype_of, P.grad_of,
        P.vmap_of, P.jvp_of,
        P.erf, P.erfc, P.digamma, P.polygamma, P.log_ieee,
    ]
)  # fmt: skip

#: Primitives that cannot raise when their result is an array (NumPy semantics: no
#: exceptions on arithmetic, shapes checked at compile time). Indexing is not among them.
ARRAY_TOTAL: frozenset[Primitive] = frozenset(
    [
        P.truediv, P.exp, P.log, P.log1p, P.log2, P.log10, P.expm1, P.sqrt, P.sin, P.cos, P.tan,
        P.asin, P.acos, P.sinh, P.cosh, P.acosh, P.atanh, P.floor, P.ceil, P.atan2,
        P.zeros, P.ones, P.full, P.zeros_like, P.ones_like, P.full_like, P.astype,
        P.where, P.clip, P.reshape, P.transpose, P.swapaxes, P.expand_dims, P.squeeze,
        P.concatenate, P.stack, P.matmul, P.dot, P.reduce_sum, P.reduce_prod,
        P.exclusive_cumprod, P.exclusive_cumprod_grad, P.exclusive_cumprod_jvp, P.pow_ieee,
        P.reduce_mean, P.conv2d, P.conv2d_input_grad, P.conv2d_weight_grad,
        P.tril, P.triu, P.eye, P.einsum, P.cumsum, P.argsort, P.diagonal, P.undiagonal,
        P.broadcast_to, P.det, P.flip, P.roll, P.moveaxis, P.rint, P.tile, P.repeat, P.pad,
        P.searchsorted, P.gammaln, P.triangular_matmul, P.lower_half,
        P.owned_copy,
        *([P.triangular_solve] if BLAS_SOLVES else []),  # BLAS's: infinities, no error
    ]
)  # fmt: skip


def is_effect(node: Node) -> bool:
    """Whether `node` calls an effectful primitive (``print``, ``raise``, ``assert``)."""
    if not node.is_apply:
        return False
    fn = node.inputs[0]
    return fn.is_constant and isinstance(fn.value, Primitive) and fn.value.effect  # type: ignore[attr-defined]


def droppable(node: Node, graph: object) -> bool:
    """Whether not computing `node` in `graph` (``seq(node, ...)``) is unobservable.

    Constants, parameters and nodes of enclosing graphs (computed there) are; so are calls to
    total primitives (`TOTAL`, and `ARRAY_TOTAL` on arrays). Effects, graph calls and
    primitives that may raise are not.
    """
    if not node.is_apply or node.graph is not graph:
        return True
    fn = node.inputs[0]
    if not fn.is_constant:
        return False
    prim = fn.value  # type: ignore[attr-defined]
    if type(prim) is not Primitive or prim.effect:
        return False
    if prim is P.tuple_getitem:  # an index unknown at compile time may be out of range
        return node.inputs[2].is_constant
    if prim in TOTAL:
        return True
    return prim in ARRAY_TOTAL and numpy_valued(node.abstract)


def numpy_valued(a: object) -> bool:
    """Whether values of type `a` are NumPy arrays or scalars (which warn where Python raises)."""
    return isinstance(a, AbstractArray) or (isinstance(a, AbstractScalar) and not a.weak)


def calls_effect(node: Node, effectful: Collection[Graph], known: Container[Graph]) -> bool:
    """Whether evaluating the apply `node` itself (its inputs aside) may run an effect.

    Effect primitives do; so do calls to graphs in `effectful` or not in `known`. A call to a
    computed function (a closure taken from a tuple, a switch, a parameter) may call any
    function of the program: it is effectful only if some graph of the program is.
    """
    fn = node.inputs[0]
    if fn.is_constant:
        v = fn.value  # type: ignore[attr-defined]
        if type(v) is Primitive:
            return v.effect or (v is P.apply_star and bool(effectful))
        if type(v) is Graph:
            return v in effectful or v not in known
        return True
    return bool(effectful)


def droppable_tree(
    node: Node, graph: object, limit: int = 64, computed: Container[Node] = ()
) -> bool:
    """Whether `node` and what it depends on in `graph` are all `droppable` (seen: `limit`).

    Nodes in `computed` (and what they depend on) are computed anyway, and are not looked at.
    """
    seen: set[Node] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n in seen or n in computed or not n.is_apply or n.graph is not graph:
            continue
        if not droppable(n, graph) or len(seen) >= limit:
            return False
        seen.add(n)
        stack.extend(n.inputs[1:])
    return True

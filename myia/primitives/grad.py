"""Primitives the gradient transform uses: environments, zeros, sums, functional updates.

Generic zeros and addition, and functional updates of data structures (the backpropagators
of indexing).

An environment (`EnvInstance`) is the sensitivity of a function value: it maps the free
variables of a closure (by key) to their sensitivities. The backward pass of a loop also
carries, from one iteration to the one before, an environment holding the sensitivities of
the arguments of each iteration's tail call (`myia.grad.loops`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import (
    ANYTHING,
    ENV,
    AbstractArray,
    AbstractDict,
    AbstractFunction,
    AbstractList,
    AbstractRecord,
    AbstractScalar,
    AbstractStack,
    AbstractTuple,
    SelfRef,
    show,
)
from ..abstract.lattice import (
    FUNCTION,
    TypeMismatch,
    broaden,
    join,
    recursive_field,
    recursive_fields,
)
from ..errors import MyiaTypeError
from ..grad.registry import bprop, nondifferentiable
from ..infer.registry import infer_rule
from ..infer.rulelib import const_value
from ..records import field_names, field_values, is_record_value, make_value
from .core import primitive

# Environments ---------------------------------------------------------------------------------


class EnvInstance:
    """An immutable map from keys to sensitivities."""

    __slots__ = ("contents",)

    def __init__(self, contents: dict[Any, Any] | None = None):
        self.contents = contents or {}

    def __repr__(self) -> str:
        return f"Env({len(self.contents)})"


EMPTY_ENV = EnvInstance()


class EnvKey:
    """Base class of the keys of environments made by the gradient transform.

    A key is its own sensitivity: `gzeros` and `gadd` pass keys through, so that the
    backpropagators of environment primitives, which return their key, can be
    differentiated again.
    """

    __slots__ = ()


@primitive
def env_new():
    """An empty environment."""
    return EMPTY_ENV


@primitive
def env_setitem(env, key, value):
    """``env`` with ``key`` set to ``value``."""
    return EnvInstance({**env.contents, key: value})


@primitive
def env_getitem(env, key, default):
    """The value of ``key`` in ``env``, or ``default``."""
    return env.contents.get(key, default)


@primitive
def env_delitem(env, key):
    """Remove ``key`` from ``env`` (a new environment)."""
    if key not in env.contents:
        return env
    out = dict(env.contents)
    del out[key]
    return EnvInstance(out)


@primitive
def env_getsens(env, key, like):
    """Get the sensitivity under ``key`` in ``env``, or a zero sensitivity of ``like``.

    The zero is computed only when ``key`` is missing; its type is that of the result.
    """
    v = env.contents.get(key, _MISSING)
    return zeros_value(like) if v is _MISSING else v


_MISSING = object()


@primitive
def env_sens(env, key, typ):
    """Get the value under ``key`` in ``env``, which has one, of abstract value ``typ``.

    ``typ`` is a constant: the value is not a default, so the backward pass of a loop, which
    reads the sensitivities of the tail call's arguments this way, keeps no forward value
    alive for it.
    """
    return env.contents[key]


@primitive
def env_add(a, b):
    """The environment with the sum of the sensitivities of ``a`` and ``b``."""
    if not a.contents:
        return b
    if not b.contents:
        return a
    out = dict(a.contents)
    for k, v in b.contents.items():
        out[k] = gadd_value(out[k], v) if k in out else v
    return EnvInstance(out)


# Generic zeros and addition -------------------------------------------------------------------


def zeros_value(x: Any) -> Any:
    """A zero of the structure, types and shapes of ``x`` (lazy for data structures)."""
    t = type(x)
    if t is float or t is int or t is bool:
        return t(0)
    if isinstance(x, np.ndarray) and x.ndim:
        return np.zeros_like(x)
    if isinstance(x, (np.generic, np.ndarray)):  # a 0-d array's sensitivity is a scalar
        return x.dtype.type(0)
    if is_stack(x):
        return EMPTY_STACK
    if t is tuple or t is list or t is dict or isinstance(x, LazySens):
        return lazy_zeros(x)  # built lazily: see `myia.primitives.lazy_sens`
    if x is None or x is Ellipsis or isinstance(x, (str, slice, type, np.dtype, _Generator)):
        return x
    if is_record_value(x):
        return lazy_zeros(x)
    if isinstance(x, EnvKey):
        return x
    return EMPTY_ENV


def gadd_value(a: Any, b: Any) -> Any:
    """The sum of two sensitivities of the same structure."""
    if isinstance(a, LazySens) or isinstance(b, LazySens):
        return lazy_add(a, b)
    t = type(a)
    if t is EnvInstance:
        return env_add.impl(a, b)
    if t is tuple:
        if is_stack(a):
            return stack_add_value(a, b, gadd_value)
        return tuple(gadd_value(x, y) for x, y in zip(a, b))
    if t is list:
        return [gadd_value(x, y) for x, y in zip(a, b)]
    if t is dict:
        return {k: gadd_value(a[k], b[k]) for k in a}
    if a is None or a is Ellipsis or isinstance(a, (str, slice, type, np.dtype, _Generator)):
        return a
    if is_record_value(a):
        return _record(t, [gadd_value(x, y) for x, y in zip(field_values(a), field_values(b, t))])
    if t is bool or isinstance(a, EnvKey):
        return a
    return a + b


def _record(cls: type, values: list[Any]) -> Any:
    return make_value(cls, values)


@primitive
def gzeros(x):
    """A zero sensitivity for ``x``: zeros of its structure (an empty env for functions)."""
    return zeros_value(x)


@primitive
def gzeros_unread(x):
    """The zero sensitivity of an inactive parameter ``x``, which nothing reads.

    The J transform gives it to the parameters of a backpropagator that depend on no input
    differentiated (`myia.grad.activity`): every call passes such a parameter an inactive
    value, whose sensitivity the caller drops, so the value is never read. The interpreter
    computes the zero; compiled code passes None instead of building it (a tree's zero at
    every node of a recursion over the tree).
    """
    return zeros_value(x)


@primitive
def gadd(a, b):
    """The sum of two sensitivities (numbers, arrays, and structures of them)."""
    return gadd_value(a, b)


NO_ZERO = object()
_Generator = np.random.Generator  # its own (unused) sensitivity, as a string's
_NUMERIC = {
    **{f"float{n}": float for n in (16, 32, 64)},
    **{f"{s}int{n}": int for s in ("", "u") for n in (8, 16, 32, 64)},
    "bool": bool,
}


#: The zero array of each shape and dtype that `zero_of_type` gives.
_ZEROS: dict[tuple[Any, str], np.ndarray] = {}


def zero_of_type(a: Any) -> Any:
    """A zero sensitivity for every value of type `a`, or `NO_ZERO` if it depends on the value.

    Numbers, arrays (whose shape the type gives), and tuples and records of them have one;
    lists (lengths), arrays of unknown dimensions, functions and recursive records do not.
    """
    if isinstance(a, AbstractScalar):
        kind = _NUMERIC.get(a.dtype)
        if kind is None:
            return NO_ZERO
        return kind(0) if a.weak else np.dtype(a.dtype).type(0)
    if isinstance(a, AbstractArray) and a.shape == ():
        return np.dtype(a.dtype).type(0)  # a 0-d array's sensitivity is a scalar
    if isinstance(a, AbstractArray):
        if None in a.shape:
            return NO_ZERO  # a dimension known only at run time
        # Shared by every call of the gradient: nothing may write it (`materialize` copies
        # it before a user receives it). One per shape and dtype: compiled code recognizes
        # it (`is`) and skips adding it.
        key = (a.shape, str(a.dtype))
        z = _ZEROS.get(key)
        if z is None:
            z = _ZEROS[key] = np.zeros(a.shape, dtype=a.dtype)
            z.flags.writeable = False
        return z
    if isinstance(a, AbstractTuple):
        elems = [zero_of_type(e) for e in a.elements]
        return NO_ZERO if any(e is NO_ZERO for e in elems) else tuple(elems)
    if isinstance(a, AbstractRecord) and a.cls is not None:
        fields = [zero_of_type(f) for f in a.fields]
        if any(f is NO_ZERO for f in fields):
            return NO_ZERO
        return _record(a.cls, fields)
    return NO_ZERO


def is_shared_zero(v: Any) -> bool:
    """Whether `v` is a zero array that `zero_of_type` gives."""
    return (
        type(v) is np.ndarray
        and not v.flags.writeable
        and _ZEROS.get((v.shape, str(v.dtype))) is v
    )


def no_gradient(a: Any) -> bool:
    """Whether every sensitivity of a value of type `a` is zero.

    So are those of integers and booleans, and of tuples, lists, dicts and records of them (a
    ``range``, a list of indices).
    """
    if isinstance(a, AbstractScalar):
        return _NUMERIC.get(a.dtype) in (int, bool)
    if isinstance(a, AbstractTuple):
        return all(no_gradient(e) for e in a.elements)
    if isinstance(a, AbstractList):
        return no_gradient(a.element)
    if isinstance(a, AbstractDict):
        return all(no_gradient(v) for v in a.values)
    if isinstance(a, AbstractRecord) and a.cls is not None:
        return zero_of_type(a) is not NO_ZERO and all(no_gradient(f) for f in a.fields)
    return False


def sens_type(a: Any) -> Any:
    """The type of the sensitivity of a value of type `a`."""
    if isinstance(a, AbstractFunction) or a is ENV or a == FUNCTION:
        return ENV  # a function's sensitivity is the environment of its free variables
    if isinstance(a, AbstractTuple):
        return AbstractTuple(tuple(sens_type(e) for e in a.elements))
    if isinstance(a, AbstractList):
        return AbstractList(sens_type(a.element))
    if isinstance(a, AbstractStack):
        return AbstractStack(sens_type(a.element))
    if isinstance(a, AbstractDict):
        return AbstractDict(a.keys, tuple(sens_type(v) for v in a.values))
    if isinstance(a, AbstractRecord):
        # Each field's sensitivity: a list of closures held (a loop's `SequenceIter` over
        # them) has a list of their environments, as a list alone has.
        return AbstractRecord(
            a.cls, tuple(f if isinstance(f, SelfRef) else sens_type(f) for f in a.fields)
        )
    if isinstance(a, AbstractArray) and a.shape == ():
        # NumPy's arithmetic on 0-d arrays gives NumPy scalars: so are their sensitivities,
        # until the gradient is handed back (as a 0-d array, `myia.grad.api`).
        return AbstractScalar(a.dtype)
    return broaden(a)


# Functional updates (the backpropagators of indexing) ----------------------------------------
# Their results have the types of what they update, not its values: a sensitivity updated with
# a value computed at run time is not a constant, even where the zero it started from was.


@primitive
def tuple_setitem(t, i, v):
    """``t`` with element ``i`` replaced by ``v``."""
    return t[:i] + (v,) + t[i + 1 :] if i != -1 else t[:-1] + (v,)


@primitive
def seq_slice_add(t, index, v):
    """The tuple or list ``t`` with ``v`` added to its elements ``t[index]`` (a slice)."""
    out = list(t)
    for j, x in zip(range(len(t))[index], v):
        out[j] = gadd_value(out[j], x)
    return type(t)(out)


@primitive
def list_as_tuple(lst, like):
    """The elements of list ``lst`` as a tuple, whose length is that of tuple ``like``."""
    return tuple(lst)


@primitive
def record_fields(r):
    """The tuple of the fields of record ``r``."""
    return field_values(concrete(r))


@primitive
def dict_from_values(d, values):
    """A dict with the keys of ``d`` and the tuple ``values``."""
    return dict(zip(d, values))


@primitive
def unbroadcast(d, x):
    """Sensitivity ``d`` brought to the type of ``x``.

    It is summed over broadcast axes, cast to the dtype of ``x``, and zero if ``x`` is an
    integer or a boolean (which have no derivative).
    """
    return unbroadcast_value(d, x)


def unbroadcast_value(d: Any, x: Any) -> Any:
    """`unbroadcast` on values, through data structures."""
    t = type(x)
    if t is tuple and not is_stack(x):
        return tuple(unbroadcast_value(a, b) for a, b in zip(d, x))
    if t is list:
        return [unbroadcast_value(a, b) for a, b in zip(d, x)]
    if t is dict:
        return {k: unbroadcast_value(d[k], x[k]) for k in x}
    if is_record_value(x):
        return _record(
            t, [unbroadcast_value(a, b) for a, b in zip(field_values(d, t), field_values(x))]
        )
    if not isinstance(x, (float, int, np.generic, np.ndarray)):
        return d
    if isinstance(x, (bool, int, np.integer, np.bool_)) or (
        isinstance(x, np.ndarray) and x.dtype.kind in "biu"
    ):
        return zeros_value(x)
    xs = np.shape(x)
    ds = np.shape(d)
    if ds != xs:
        lead = len(ds) - len(xs)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, n in enumerate(xs) if n == 1 and ds[i + lead] != 1
        )
        d = np.sum(d, axis=axes, keepdims=False)
        d = np.reshape(d, xs)
    if type(x) is float:
        return float(d)
    if isinstance(x, np.generic) or not xs:  # a 0-d array's sensitivity is a scalar
        return x.dtype.type(d)
    return np.asarray(d, dtype=x.dtype)


@primitive
def broadcast_like(d, like):
    """``d`` broadcast to the shape of ``like`` and cast to its dtype.

    The adjoint of `unbroadcast`.
    """
    return broadcast_like_value(d, like)


def broadcast_like_value(d: Any, like: Any) -> Any:
    """`broadcast_like` on values, through data structures (as `unbroadcast_value`)."""
    t = type(like)
    if t is tuple and not is_stack(like):
        return tuple(broadcast_like_value(a, b) for a, b in zip(d, like))
    if t is list:
        return [broadcast_like_value(a, b) for a, b in zip(d, like)]
    if t is dict:
        return {k: broadcast_like_value(d[k], like[k]) for k in like}
    if is_record_value(like):
        return _record(
            t, [broadcast_like_value(a, b) for a, b in zip(field_values(d, t), field_values(like))]
        )
    if not isinstance(like, (float, int, np.generic, np.ndarray)):
        return d
    if t is float:
        return float(d)
    if t is int or t is bool:  # an integer's sensitivity is a zero of its type
        return zeros_value(like)
    if isinstance(like, np.generic) or not like.ndim:  # a 0-d array's sensitivity: a scalar
        return like.dtype.type(d)
    return np.broadcast_to(np.asarray(d, dtype=np.result_type(like)), np.shape(like)).copy()


@primitive
def list_setitem(lst, i, v):
    """A copy of ``lst`` with element ``i`` replaced by ``v``."""
    out = list(lst)
    out[i] = v
    return out


@primitive
def dict_setitem(d, key, v):
    """A copy of ``d`` with ``key`` set to ``v``."""
    return {**d, key: v}


@primitive
def record_setattr(r, name, v):
    """A copy of record ``r`` with field ``name`` set to ``v``."""
    return _replace(r, name, v)


def _replace(r: Any, name: str, v: Any) -> Any:
    r = concrete(r)
    cls = type(r)
    return _record(cls, [v if n == name else x for n, x in zip(field_names(cls), field_values(r))])


@primitive
def array_index_add(a, index, v):
    """A copy of ``a`` with ``v`` added at ``a[index]`` (repeated indices add up)."""
    out = np.array(a, copy=True)
    if _basic_index(index):
        out[index] += v  # basic indexing selects each element once
    else:
        np.add.at(out, index, v)
    return out


def _basic_index(index: Any) -> bool:
    if isinstance(index, (int, np.integer, slice)) and not isinstance(index, bool):
        return True
    return type(index) is tuple and all(
        isinstance(i, (int, np.integer, slice)) and not isinstance(i, bool) for i in index
    )


# Type rules -----------------------------------------------------------------------------------


@infer_rule(env_new)
def _infer_env_new():
    return ENV


@infer_rule(env_setitem)
def _infer_env_setitem(env, key, value):
    return ENV


@infer_rule(env_getitem)
def _infer_env_getitem(env, key, default):
    # The environment's contents are not known at compile time: only the default's type.
    return broaden(default)


@infer_rule(env_add)
def _infer_env_add(a, b):
    return ENV


@infer_rule(env_delitem)
def _infer_env_delitem(env, key):
    return ENV


@infer_rule(env_getsens)
def _infer_env_getsens(env, key, like):
    return sens_type(like)


@infer_rule(env_sens)
def _infer_env_sens(env, key, typ):
    return const_value(typ, "the type of an environment's value")


@infer_rule(gzeros)
def _infer_gzeros(x):
    return sens_type(x)


@infer_rule(gzeros_unread)
def _infer_gzeros_unread(x):
    return sens_type(x)


@infer_rule(gadd)
def _infer_gadd(a, b):
    try:
        return sens_type(join(a, b))
    except TypeMismatch as exc:
        raise MyiaTypeError(f"cannot add sensitivities {exc}") from None


@infer_rule(tuple_setitem)
def _infer_tuple_setitem(t, i, v):
    if not isinstance(t, AbstractTuple):
        raise MyiaTypeError(f"tuple_setitem on {show(t)}")
    if isinstance(i, AbstractScalar) and i.value is ANYTHING:
        # An index known at run time only (the gradient of ``x[i]``, ``x`` a tuple whose
        # elements joined to `v`'s type): every element may be the one replaced, so each
        # must hold a value of `v`'s kind (its shape is the element's at run time).
        for e in t.elements:
            if not _same_kind(e, v):
                raise MyiaTypeError(
                    "the gradient of indexing a tuple at an index known at run time needs "
                    f"elements of one type, not {show(t)}"
                )
        return t
    idx = const_value(i, "a tuple index", int)
    elems = list(t.elements)
    elems[idx] = v
    return AbstractTuple(tuple(elems))


def _same_kind(a: Any, b: Any) -> bool:
    """Whether values of types `a` and `b` are alike up to their dimensions."""
    if isinstance(a, AbstractScalar) and isinstance(b, AbstractScalar):
        return a.dtype == b.dtype
    if isinstance(a, AbstractArray) and isinstance(b, AbstractArray):
        return a.dtype == b.dtype and len(a.shape) == len(b.shape)
    return broaden(a) == broaden(b)


@infer_rule(seq_slice_add)
def _infer_seq_slice_add(t, index, v):
    return broaden(t)


@infer_rule(list_as_tuple)
def _infer_list_as_tuple(lst, like):
    if not isinstance(lst, AbstractList) or not isinstance(like, AbstractTuple):
        raise MyiaTypeError(f"list_as_tuple on {show(lst)}, {show(like)}")
    return AbstractTuple((lst.element,) * len(like.elements))


@infer_rule(record_fields)
def _infer_record_fields(r):
    if not isinstance(r, AbstractRecord):
        raise MyiaTypeError(f"record_fields on {show(r)}")
    return AbstractTuple(tuple(r.field(n) for n in r.names))


@infer_rule(dict_from_values)
def _infer_dict_from_values(d, values):
    return AbstractDict(d.keys, values.elements)


@infer_rule(unbroadcast)
def _infer_unbroadcast(d, x):
    return sens_type(x)


@infer_rule(broadcast_like)
def _infer_broadcast_like(d, like):
    return sens_type(like)


@infer_rule(list_setitem)
def _infer_list_setitem(lst, i, v):
    return broaden(lst)


@infer_rule(dict_setitem)
def _infer_dict_setitem(d, key, v):
    return broaden(d)


@infer_rule(record_setattr)
def _infer_record_setattr(r, name, v):
    if not isinstance(r, AbstractRecord):
        raise MyiaTypeError(f"record_setattr on {show(r)}")
    return broaden(r)


@infer_rule(array_index_add)
def _infer_array_index_add(a, index, v):
    return a


# Backpropagators ------------------------------------------------------------------------------


@bprop(gadd)
def bprop_gadd(a, b, out, dout):
    return (dout, dout)


@bprop(env_add)
def bprop_env_add(a, b, out, dout):
    return (dout, dout)


@bprop(env_setitem)
def bprop_env_setitem(env, key, value, out, dout):
    # The old value under `key` had no effect: its sensitivity is absent (zero), whatever its
    # type (the backward pass of a loop replaces values of different types under one key).
    return (env_delitem(dout, key), key, env_getsens(dout, key, value))


@bprop(env_getitem)
def bprop_env_getitem(env, key, default, out, dout):
    return (env_setitem(env_new(), key, dout), key, gzeros(default))


@bprop(env_delitem)
def bprop_env_delitem(env, key, out, dout):
    return (env_delitem(dout, key), key)


@bprop(env_getsens)
def bprop_env_getsens(env, key, like, out, dout):
    return (env_setitem(env_new(), key, dout), key, gzeros(like))


@bprop(env_sens)
def bprop_env_sens(env, key, typ, out, dout):
    return (env_setitem(env_new(), key, dout), key, typ)


@bprop(tuple_setitem)
def bprop_tuple_setitem(t, i, v, out, dout):
    return (tuple_setitem(dout, i, gzeros(v)), 0, dout[i])


@bprop(list_setitem)
def bprop_list_setitem(lst, i, v, out, dout):
    return (list_setitem(dout, i, gzeros(v)), 0, dout[i])


@bprop(dict_setitem)
def bprop_dict_setitem(d, key, v, out, dout):
    return (dict_setitem(dout, key, gzeros(v)), key, dout[key])


@bprop(record_setattr)
def bprop_record_setattr(r, name, v, out, dout):
    return (record_setattr(dout, name, gzeros(v)), name, record_getattr(dout, name))


@bprop(array_index_add)
def bprop_array_index_add(a, index, v, out, dout):
    return (dout, gzeros(index), array_getitem(dout, index))


@bprop(seq_slice_add)
def bprop_seq_slice_add(t, index, v, out, dout):
    return (dout, index, dout[index])


@bprop(list_as_tuple)
def bprop_list_as_tuple(lst, like, out, dout):
    # The list of the elements' sensitivities has the type of the list's sensitivity (its
    # elements' types joined: shapes that differ are unknown), not that of the elements.
    return (sens_as(make_list(*dout), lst), gzeros(like))


@bprop(record_fields)
def bprop_record_fields(r, out, dout):
    return (record_from_fields(r, dout),)


@bprop(dict_from_values)
def bprop_dict_from_values(d, values, out, dout):
    return (gzeros(d), dict_values(dout))


@bprop(unbroadcast)
def bprop_unbroadcast(d, x, out, dout):
    return (broadcast_like(dout, d), gzeros(x))


@bprop(broadcast_like)
def bprop_broadcast_like(d, like, out, dout):
    return (unbroadcast(dout, d), gzeros(like))


@primitive
def record_from_fields(r, fields):
    """A record of the class of ``r`` holding the tuple ``fields``."""
    return _record(type(r), list(fields))


@infer_rule(record_from_fields)
def _infer_record_from_fields(r, fields):
    # `record_fields` unfolds the recursive fields (``Tree | None``, not ``SelfRef | None``):
    # fold them back, as `make_record` does, so that the record has the type of its class's
    # trees whatever made it (a tree's sensitivity joins the tree's own type).
    rec = recursive_fields(r.cls)
    names = r.names
    return AbstractRecord(
        r.cls,
        tuple(
            recursive_field(r.cls, n, broaden(f)) if n in rec else broaden(f)
            for n, f in zip(names, fields.elements)
        ),
    )


@bprop(record_from_fields)
def bprop_record_from_fields(r, fields, out, dout):
    if dout is None:
        # The record is returned where None may be too (``tree_map`` of a tree): the
        # sensitivity has an optional type, narrowed here (as `make_record`'s).
        return (gzeros(r), gzeros(fields))
    return (gzeros(r), record_fields(sens_as(dout, out)))


nondifferentiable(env_new, gzeros, gzeros_unread)


# grad as a value (`grad_value`), imported here: the primitives of this family.
from .array import array_getitem  # noqa: E402
from .control import sens_as  # noqa: E402
from .grad_value import GradSpec, GradValue, grad_of  # noqa: E402, F401
from .lazy_sens import LazySens, concrete, lazy_add, lazy_zeros  # noqa: E402
from .stack import EMPTY_STACK, is_stack, stack_add_value  # noqa: E402
from .structure import dict_values, make_list, record_getattr  # noqa: E402

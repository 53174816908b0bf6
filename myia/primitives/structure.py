"""Primitives on data structures: tuples, lists, dicts, records (dataclasses) and partials.

All data structures are immutable values in Myia: every primitive here builds a new value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import ANYTHING as ANYTHING_
from ..abstract.data import (
    BOTTOM,
    NEVER_CALLED,
    NONE,
    AbstractArray,
    AbstractConstant,
    AbstractDict,
    AbstractFunction,
    AbstractKeyword,
    AbstractList,
    AbstractOpaque,
    AbstractRecord,
    AbstractScalar,
    AbstractSlice,
    AbstractTuple,
    AbstractValue,
    PartialFunction,
    in_order,
    show,
)
from ..abstract.lattice import (
    TypeMismatch,
    broaden,
    join,
    join_elements,
    merge_data,
    recursive_field,
    recursive_fields,
    to_abstract,
    union_options,
)
from ..errors import MyiaTypeError
from ..grad.registry import bprop, linear, nondifferentiable, special
from ..infer.kinds import axes_literal, is_literal, static_value
from ..infer.registry import infer_rule
from ..infer.rulelib import const_value, elementwise, i64, int_scalar, py_bool
from ..records import field_names, make_value
from .core import primitive

# Tuples ---------------------------------------------------------------------------------------


@primitive
def make_tuple(*items):
    """Build the tuple ``(items...)``."""
    return items


@primitive
def tuple_getitem(t, i):
    """``t[i]`` for a constant integer ``i``."""
    return t[i]


@primitive
def tuple_concat(a, b):
    """``a + b`` on tuples."""
    return a + b


@primitive
def tuple_as_list(t):
    """The tuple ``t``, whose elements have one type, as a list (a ``for`` loop over it)."""
    return list(t)


#: The length from which a ``for`` loop over a tuple of values of one type is a loop.
LOOP_LENGTH = 17


@primitive(static=True)
def tuple_loops(t):
    """Whether a ``for`` loop over tuple ``t`` runs as a loop, rather than unrolled.

    It does when ``t`` holds `LOOP_LENGTH` values or more, of one type, that are data
    (numbers and arrays whose values are not known at compile time, or tuples of them): the
    loop then compiles in time linear in the tuple's length. A shorter tuple is unrolled, so
    that the loop's variables may change type at each element (a tuple that grows). Known at
    compile time.
    """
    return len(t) >= LOOP_LENGTH and _loopable_value(t)


def _loopable(t: AbstractValue) -> bool:
    elements = t.elements
    return (
        len(elements) >= LOOP_LENGTH
        and all(e == elements[0] for e in elements)
        and _data(elements[0])
    )


def _loopable_value(t: tuple) -> bool:
    # The interpreter, on untyped graphs: a tuple of values Myia has no type for (functions,
    # strings) is unrolled.
    try:
        return _loopable(to_abstract(t))
    except (TypeError, TypeMismatch, RecursionError):
        return False


def _data(a: AbstractValue) -> bool:
    if isinstance(a, AbstractScalar):
        return a.value is ANYTHING_
    if isinstance(a, AbstractTuple):
        return all(map(_data, a.elements))
    return isinstance(a, AbstractArray)


@primitive
def tuple_len(t):
    """``len(t)`` for a tuple."""
    return len(t)


@primitive
def tuple_len_is(t, n):
    """Whether ``t`` is a tuple of length ``n``: which option of a union of tuples it holds."""
    return type(t) is tuple and len(t) == n


# Lists ----------------------------------------------------------------------------------------


@primitive
def make_list(*items):
    """Build the list ``[items...]``."""
    return list(items)


@primitive
def list_getitem(lst, i):
    """``lst[i]`` for an integer ``i`` (negative indices count from the end)."""
    return lst[i]


@primitive
def list_concat(a, b):
    """``a + b`` on lists: a new list."""
    return a + b


@primitive
def list_sum_start(start, lst):
    """``start``, typed as ``start + x`` for an element ``x`` of ``lst``: where ``sum`` starts.

    ``sum`` of a list of arrays starts from ``0`` and adds arrays: the accumulator is an array
    from the start (zeros of the elements' shape; ``start`` itself when the list is empty).
    """
    if isinstance(lst[0] if lst else None, np.ndarray):
        return start + np.zeros_like(lst[0])
    return start


@primitive
def sections_as_list(t):
    """The tuple of arrays ``t`` as a list (``np.split``'s result); a tuple where shapes differ.

    Myia's lists hold elements of one type: sections of different shapes stay a tuple.
    """
    if len({x.shape for x in t}) <= 1:
        return list(t)
    return t


@primitive
def list_len(lst):
    """``len(lst)``."""
    return len(lst)


# Dicts ----------------------------------------------------------------------------------------


@primitive
def make_dict(keys, *values):
    """Build a dict from a constant tuple of string keys and the values."""
    return dict(zip(keys, values))


@primitive
def dict_from_items(keys, values):
    """Build a dict from a constant tuple of string keys and the tuple of their values."""
    return dict(zip(keys, values))


@primitive
def dict_getitem(d, key):
    """``d[key]`` for a constant string key."""
    return d[key]


@primitive
def dict_keys(d):
    """The tuple of keys of ``d``."""
    return tuple(d.keys())


@primitive
def dict_values(d):
    """The tuple of values of ``d``, in key order."""
    return tuple(d.values())


# Records --------------------------------------------------------------------------------------


@primitive
def make_record(cls, *fields):
    """Build an instance of record class ``cls`` (a dataclass, a named tuple) from its fields."""
    return make_value(cls, fields)


@primitive
def record_getattr(r, name):
    """The field ``name`` (a constant string) of the record ``r``."""
    return getattr(r, name)


# Keyword arguments and partial application ------------------------------------------------------


class KeywordArgument:
    """A keyword argument at a call site: ``f(x, key=value)`` passes ``make_kwarg(key, value)``."""

    __slots__ = ("key", "value")

    def __init__(self, key: str, value: Any):
        self.key = key
        self.value = value

    def __repr__(self) -> str:
        return f"{self.key}={self.value!r}"


@primitive
def make_kwarg(key, value):
    """A keyword argument ``key=value``."""
    return KeywordArgument(key, value)


class Partial:
    """The partial application of a function to its first arguments."""

    __slots__ = ("fn", "args")

    def __init__(self, fn: Any, args: tuple[Any, ...]):
        self.fn = fn
        self.args = args

    def __repr__(self) -> str:
        return f"partial({self.fn!r}, {', '.join(map(repr, self.args))})"


@primitive
def partial(fn, *args):
    """The function ``fn`` with its first arguments bound to ``args``."""
    return Partial(fn, args)


@primitive
def partial_arg(p, i, f=None, k=-1):
    """Argument ``i`` bound by partial application ``p`` (whose function is not a partial).

    A call of a partial application whose function is called with several types (the same
    partial value at two call sites) calls the function's specialization for each call's
    types directly, on the arguments the partial bound. Where ``p`` may be one of several
    partial applications (chosen at run time), it is known to be the one whose function
    (``k`` -1) or ``k``-th bound argument is ``f`` (`myia.infer.fnvalues.dispatch` tested it).
    """
    return p.args[i]


@primitive
def partial_fn(p, k=-1):
    """The function partial application ``p`` applies.

    A call choosing among partial applications at run time tests which function it calls
    (`myia.infer.fnvalues.dispatch`). In the forward pass of the ``k + 1``-th derivative,
    where ``p`` binds the forward function and the tuple of the forward values of the
    arguments (`myia.grad.lib.jpartial`), it is read where that function is (`_slot`).
    """
    if k < 0:
        return p.fn if type(p) is Partial else p.func
    if k == 0:
        return p.args[0]
    v = p.args[1]
    for _ in range(k - 1):
        v = v[1]
    return v[0]


@primitive
def make_slice(start, stop, step, length=None):
    """``slice(start, stop, step)``; `length`: stop - start (``x[i:i + k]``, `windows`)."""
    return slice(start, stop, step)


@primitive
def convert(x, typ):
    """``x`` in the representation of abstract value ``typ`` (an int where a float is due).

    Inserted where values of different types meet and are promoted: the branches of an
    ``if`` returning an int and a float, the elements of a list.
    """
    return convert_value(x, typ)


def convert_value(x: Any, a: Any) -> Any:
    """Convert Python value `x` to the representation of abstract value `a`."""
    if isinstance(a, AbstractScalar):
        if a.weak:
            return {"float64": float, "int64": int, "bool": bool}[a.dtype](x)
        return np.dtype(a.dtype).type(x)
    if isinstance(a, AbstractArray):
        return np.asarray(x, dtype=a.dtype)
    if isinstance(a, AbstractTuple):
        return tuple(convert_value(v, e) for v, e in zip(x, a.elements))
    if isinstance(a, AbstractList):
        return [convert_value(v, a.element) for v in x]
    if isinstance(a, AbstractDict):
        return {k: convert_value(x[k], v) for k, v in zip(a.keys, a.values)}
    return x


# Type rules -----------------------------------------------------------------------------------


def _expect(a, cls, what):
    if not isinstance(a, cls):
        raise MyiaTypeError(f"{what} expects a {cls.__name__[8:].lower()}, not {show(a)}")
    return a


def _join_all(items, what):
    try:
        return join_elements(items)
    except TypeMismatch as exc:
        raise MyiaTypeError(f"{what}: elements of incompatible types {exc}") from None


@infer_rule(make_tuple)
def _infer_make_tuple(*items):
    return AbstractTuple(tuple(items))


@infer_rule(tuple_getitem)
def _infer_tuple_getitem(t, i):
    t = _expect(t, AbstractTuple, "tuple indexing")
    if isinstance(i, AbstractConstant) and isinstance(i.value, slice):
        if i.value.step == 0:
            raise MyiaTypeError("slice step cannot be zero")
        return AbstractTuple(t.elements[i.value])
    int_scalar(i, "a tuple index")
    n = len(t.elements)
    if i.value is not ANYTHING_:
        if not -n <= i.value < n:
            raise MyiaTypeError(f"tuple index {i.value} out of range for {show(t)}")
        return t.elements[i.value]
    return broaden(_join_all(t.elements, "indexing a tuple with an index unknown at compile time"))


@infer_rule(tuple_concat)
def _infer_tuple_concat(a, b):
    a = _expect(a, AbstractTuple, "tuple concatenation")
    b = _expect(b, AbstractTuple, "tuple concatenation")
    return AbstractTuple(a.elements + b.elements)


@infer_rule(tuple_as_list)
def _infer_tuple_as_list(t):
    t = _expect(t, AbstractTuple, "tuple_as_list")
    return AbstractList(broaden(_join_all(t.elements, "a list")))


@infer_rule(tuple_loops)
def _infer_tuple_loops(t):
    return py_bool(_loopable(_expect(t, AbstractTuple, "tuple_loops")))


@infer_rule(tuple_len)
def _infer_tuple_len(t):
    return i64(len(_expect(t, AbstractTuple, "len").elements))


@infer_rule(tuple_len_is)
def _infer_tuple_len_is(t, n):
    n = const_value(n, "tuple_len_is", int)
    yes = [isinstance(o, AbstractTuple) and len(o.elements) == n for o in union_options(t)]
    return py_bool(yes[0]) if len(set(yes)) == 1 else py_bool()


@infer_rule(make_list)
def _infer_make_list(*items):
    element = broaden(_join_all(items, "a list"))
    values = tuple(static_value(i) for i in items)
    if items and all(is_literal(v, (int, float)) for v in values):
        # A literal list of constants: its value is known at compile time (``x[[0, 2]]``,
        # ``vmap(f, [None, 0])``), as a tuple's; its type stays a list's (element joined).
        return AbstractList(element, values)
    return AbstractList(element)


@infer_rule(list_getitem)
def _infer_list_getitem(lst, i):
    lst = _expect(lst, AbstractList, "list indexing")
    if isinstance(i, AbstractSlice) or (
        isinstance(i, AbstractConstant) and isinstance(i.value, slice)
    ):
        return lst
    int_scalar(i, "a list index")
    return lst.element


@infer_rule(list_concat)
def _infer_list_concat(a, b):
    a = _expect(a, AbstractList, "list concatenation")
    b = _expect(b, AbstractList, "list concatenation")
    return AbstractList(_join_all([a.element, b.element], "list concatenation"))


@infer_rule(list_sum_start)
def _infer_list_sum_start(start, lst):
    lst = _expect(lst, AbstractList, "sum")
    if isinstance(lst.element, AbstractArray):
        return elementwise("sum", start, lst.element)
    return start


@infer_rule(sections_as_list)
def _infer_sections_as_list(t):
    t = _expect(t, AbstractTuple, "sections_as_list")
    shapes = {getattr(e, "shape", None) for e in t.elements}
    if len(shapes) > 1:
        return t
    return AbstractList(broaden(_join_all(t.elements, "a list")))


@infer_rule(list_len)
def _infer_list_len(lst):
    _expect(lst, AbstractList, "len")
    return i64()


@infer_rule(make_dict)
def _infer_make_dict(keys, *values):
    return AbstractDict(const_value(keys, "dict keys", tuple), tuple(values))


@infer_rule(dict_from_items)
def _infer_dict_from_items(keys, values):
    keys = const_value(keys, "dict keys", tuple)
    values = _expect(values, AbstractTuple, "a dict's values")
    if len(keys) != len(values.elements) or len(set(keys)) != len(keys):
        raise MyiaTypeError("a dict needs one value for each of its keys, all different")
    return AbstractDict(keys, values.elements)


@infer_rule(dict_getitem)
def _infer_dict_getitem(d, key):
    d = _expect(d, AbstractDict, "dict indexing")
    if isinstance(key, AbstractOpaque) and key.cls is str:
        raise MyiaTypeError(
            "a dict key must be known at compile time, got a str known only at run time (an "
            "element of a list, say): loop over a tuple of keys, over the dict or its .items()"
        )
    k = const_value(key, "a dict key", str)
    if k not in d.keys:
        raise MyiaTypeError(f"key {k!r} is not in {show(d)}")
    return d.get(k)


@infer_rule(dict_keys)
def _infer_dict_keys(d):
    d = _expect(d, AbstractDict, "keys()")
    return AbstractTuple(tuple(AbstractConstant(k) for k in d.keys))


@infer_rule(dict_values)
def _infer_dict_values(d):
    return AbstractTuple(_expect(d, AbstractDict, "values()").values)


def keeps_constants(cls: type, fields: Any) -> bool:
    """Whether a record of `cls` keeps its fields' values known at compile time.

    A class may ask for it (``__myia_constant_fields__``: a range, whose length is then
    known: ``tuple(range(3))``), and only where every field is known: ``range(k)``'s start
    known as 0 would make the first iteration's index constant where the loop may not run
    (``x[t + 3]`` checked at compile time for ``k == 0``).
    """
    if not getattr(cls, "__myia_constant_fields__", False):
        return False
    return all(isinstance(a, AbstractScalar) and a.value is not ANYTHING_ for a in fields)


@infer_rule(make_record)
def _infer_make_record(cls, *fields):
    c = const_value(cls, "a record class", type)
    rec = recursive_fields(c)
    names = field_names(c)
    if keeps_constants(c, fields):
        return AbstractRecord(c, tuple(fields))  # (``range(3)``: its length is known)
    return AbstractRecord(
        c,
        tuple(
            recursive_field(c, n, broaden(a)) if n in rec else broaden(a)
            for n, a in zip(names, fields)
        ),
        axes_literal(fields),
    )


@infer_rule(record_getattr)
def _infer_record_getattr(r, name):
    r = _expect(r, AbstractRecord, "attribute access")
    n = const_value(name, "an attribute name", str)
    if n not in r.names:
        raise MyiaTypeError(f"{r.cls.__name__} has no field {n!r}")
    return r.field(n)


@infer_rule(make_kwarg)
def _infer_make_kwarg(key, value):
    return AbstractKeyword(const_value(key, "a keyword", str), value)


@infer_rule(partial)
def _infer_partial(fn, *args):
    fn = _expect(fn, AbstractFunction, "partial")
    if not fn.options:  # a function never called; the arguments it binds are still read
        return AbstractFunction(frozenset([PartialFunction(NEVER_CALLED, tuple(args))]))
    return AbstractFunction(frozenset(PartialFunction(f, tuple(args)) for f in fn.options))


@infer_rule(partial_arg)
def _infer_partial_arg(p, i, f=None, k=None):
    p = _expect(p, AbstractFunction, "partial_arg")
    n = const_value(i, "the index of a bound argument", int)
    # Where ``p`` may also be a function (a call testing options tests those first), it is
    # one of its partial applications.
    options = [o for o in in_order(p.options) if isinstance(o, PartialFunction)]
    if len(options) > 1 and isinstance(f, AbstractFunction):
        slot = const_value(k, "the index of the argument telling options apart", int)
        options = [o for o in options if _same_function(_slot(o, slot), f)] or options
    out = BOTTOM
    for o in options:
        out = join(out, o.args[n])
    return out


def _same_function(a, b):
    """Whether `a` and `b` are one function, or one graph before and after specialization.

    The types of a specialized graph's nodes name the graphs inference saw.
    """
    if a == b:
        return True
    if not (isinstance(a, AbstractFunction) and isinstance(b, AbstractFunction)):
        return False
    if len(a.options) != 1 or len(b.options) != 1:
        return False
    ga = getattr(next(iter(a.options)), "graph", None)
    gb = getattr(next(iter(b.options)), "graph", None)
    if ga is None or gb is None:
        return False
    return _derives(ga.debug, gb.debug) or _derives(gb.debug, ga.debug)


def _derives(d, origin):
    while d is not None:
        if d is origin:
            return True
        d = d.origin
    return False


def _slot(pf, k):
    """What tells partial application `pf` apart, in the `k`-th derivative's forward pass.

    ``k`` -1: the function it applies. The forward value of a partial application binds the
    forward function and the tuple of the forward values of the arguments (`jpartial`): its
    bound argument 0 (``k`` 0); ``k`` levels deep, the tuple's element 1, ``k - 1`` times,
    then element 0.
    """
    if k < 0:
        return AbstractFunction(frozenset([pf.fn]))
    if k == 0:
        return pf.args[0]
    v = pf.args[1]
    for _ in range(k - 1):
        if not isinstance(v, AbstractTuple) or len(v.elements) < 2:
            return None
        v = v.elements[1]
    if not isinstance(v, AbstractTuple) or not v.elements:
        return None
    return v.elements[0]


@infer_rule(partial_fn)
def _infer_partial_fn(p, k=None):
    p = _expect(p, AbstractFunction, "partial_fn")
    level = -1 if k is None else const_value(k, "the level of a forward pass", int)
    # (A call testing options tests those that are not partial applications first.)
    out = BOTTOM
    for pf in in_order(p.options):
        if isinstance(pf, PartialFunction):
            slot = _slot(pf, level)
            if slot is None:
                raise MyiaTypeError(f"partial_fn: no function at level {level} of {show(pf)}")
            out = join(out, slot)
    return out


@infer_rule(convert)
def _infer_convert(x, typ):
    return merge_data(const_value(typ, "the type of a conversion"), x)


@infer_rule(make_slice)
def _infer_make_slice(start, stop, step, length=NONE):
    bounds = (start, stop, step)
    for b in bounds:
        if not (b == NONE or isinstance(b, AbstractScalar)):
            raise MyiaTypeError(f"a slice bound must be an integer or None, not {show(b)}")
    values = [static_value(b) for b in bounds]
    if any(v is ANYTHING_ for v in values):
        from .windows import window_length

        return AbstractSlice(*bounds, length=window_length(length, step))
    return AbstractConstant(slice(*values))


# Backpropagators ------------------------------------------------------------------------------


@bprop(make_tuple)
def bprop_make_tuple(*args):
    # The sensitivity of the tuple made: of its type, where it is a union of tuples of
    # different lengths after a join (`sens_as`, dropped on any other).
    return sens_as(args[-1], args[-2])


@bprop(tuple_getitem)
def bprop_tuple_getitem(t, i, out, dout):
    if isinstance(i, slice):
        return (seq_slice_add(gzeros(t), i, dout), i)
    return (tuple_setitem(gzeros(t), i, dout), 0)


@bprop(tuple_as_list)
def bprop_tuple_as_list(t, out, dout):
    # The list's elements have the tuple's types joined; each element's sensitivity has the
    # type of its own (`sens_as`): a backpropagator differentiated again sees one type.
    return (sens_as(list_as_tuple(dout, t), t),)


@bprop(tuple_concat)
def bprop_tuple_concat(a, b, out, dout):
    dout = sens_as(dout, out)
    return (dout[: len(a)], dout[len(a) :])


@bprop(make_list)
def bprop_make_list(*args):
    # Each item's sensitivity is typed as the item's (`[x, y[:1]]` is a list of arrays of
    # unknown length; the sensitivity of ``y[:1]`` is of length 1).
    return sens_as(list_as_tuple(args[-1], args[:-2]), args[:-2])


@bprop(list_getitem)
def bprop_list_getitem(lst, i, out, dout):
    if isinstance(i, slice):
        return (list_index_sens(lst, i, dout), i)
    return (list_index_sens(lst, i, dout), 0)


@bprop(list_sum_start)
def bprop_list_sum_start(start, lst, out, dout):
    return (unbroadcast(dout, start), gzeros(lst))


@bprop(sections_as_list)
def bprop_sections_as_list(t, out, dout):
    if isinstance(out, list):
        return (sens_as(list_as_tuple(dout, t), t),)
    return (dout,)


@bprop(list_concat)
def bprop_list_concat(a, b, out, dout):
    # The sensitivity of the joined list, cut in two, typed as those of `a` and `b`.
    return (sens_as(dout[: len(a)], a), sens_as(dout[len(a) :], b))


@bprop(make_dict)
def bprop_make_dict(keys, *args):
    return (keys,) + dict_values(args[-1])


@bprop(dict_from_items)
def bprop_dict_from_items(keys, values, out, dout):
    return (keys, dict_values(dout))


@bprop(dict_getitem)
def bprop_dict_getitem(d, key, out, dout):
    return (dict_setitem(gzeros(d), key, dout), key)


@bprop(dict_values)
def bprop_dict_values(d, out, dout):
    return (dict_from_values(d, dout),)


@bprop(make_record)
def bprop_make_record(cls, *args):
    dout = args[-1]
    if dout is None:
        # The sensitivity of a record returned where `None` may be returned too (a tree
        # built recursively) has an optional type: narrow it.
        return (cls,) + gzeros(args[:-2])
    # A sensitivity typed as that of a union the record is one option of (a tree whose
    # fields are ``Union["Leaf", "Node"]``): retyped as the record's own.
    return (cls,) + record_fields(sens_as(dout, args[-2]))


@bprop(record_getattr)
def bprop_record_getattr(r, name, out, dout):
    return (record_setattr(gzeros(r), name, dout), name)


@bprop(convert)
def bprop_convert(x, typ, out, dout):
    return (unbroadcast(dout, x), typ)


nondifferentiable(
    tuple_len, tuple_len_is, tuple_loops, list_len, dict_keys, make_kwarg, make_slice
)
special(partial, partial_arg, partial_fn)  # forward graphs `myia.grad.lib.jpartial`...

# Tangents (forward mode): each moves its arguments' tangents as it moves the values.
for _p in (make_tuple, tuple_concat, make_list, list_concat, list_sum_start):
    linear(_p)
for _p in (tuple_getitem, tuple_as_list, list_getitem, sections_as_list, dict_getitem):
    linear(_p, 0)
linear(dict_values, 0)
linear(dict_from_items, 1)
linear(make_dict, after=1)
linear(make_record, after=1)
linear(record_getattr, 0)


from .control import sens_as  # noqa: E402
from .grad import (  # noqa: E402
    dict_from_values,
    dict_setitem,
    gzeros,
    list_as_tuple,
    record_fields,
    record_setattr,
    seq_slice_add,
    tuple_setitem,
    unbroadcast,
)
from .sensitivities import list_index_sens  # noqa: E402

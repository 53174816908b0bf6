"""The operations behind Python's operators, attribute access, indexing and iteration.

Each dispatch function receives the kinds of the arguments (see `myia.operations.core`), or the
value itself for arguments declared static (constant at compile time), and returns the callee.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import numpy as np

from ..primitives import P
from .core import Array, Function, NoMatch, Operation, is_record

NoneType = type(None)


def is_number(k: Any) -> bool:
    """Whether a kind is a scalar kind (a Python or NumPy scalar type)."""
    return isinstance(k, type) and (k in (bool, int, float) or issubclass(k, np.generic))


def is_numeric(k: Any) -> bool:
    """Whether a kind is a scalar or an array."""
    return k is Array or is_number(k)


def _lib() -> Any:
    from . import lib

    return lib


def has_source(fn: Any) -> bool:
    """Whether `fn` is a Python function whose source Myia can parse."""
    code = getattr(fn, "__code__", None)
    return code is not None and not code.co_filename.startswith("<")


def _user_method(cls: Any, name: str) -> Any:
    fn = getattr(cls, name, None)
    return fn if has_source(fn) else None


class StaticOperation(Operation):
    """An operation some of whose arguments must be constants, passed to `dispatch` as values."""

    def __init__(self, name: str, dispatch: Any, static: tuple[int, ...]):
        super().__init__(name, dispatch)
        self.static = static


# Arithmetic -----------------------------------------------------------------------------------


def _binary(name: str, prim: Any, extra: dict[tuple[Any, Any], Any] | None = None) -> Operation:
    dunder, rdunder = f"__{name}__", f"__r{name}__"

    def dispatch(a: Any, b: Any) -> Any:
        if is_numeric(a) and is_numeric(b):
            return prim
        if extra and (a, b) in extra:
            return extra[(a, b)]
        if is_record(a) and (m := _user_method(a, dunder)):
            return m
        if is_record(b) and _user_method(b, rdunder):
            return getattr(_lib(), f"r{name}")
        raise NoMatch

    return Operation(name, dispatch, f"Python's ``{name}`` operator.")


add = _binary("add", P.add, {(tuple, tuple): P.tuple_concat, (list, list): P.list_concat})
sub = _binary("sub", P.sub)
mul = _binary("mul", P.mul)
truediv = _binary("truediv", P.truediv)
floordiv = _binary("floordiv", P.floordiv)
mod = _binary("mod", P.mod)
pow_ = _binary("pow", P.pow_)
matmul = _binary("matmul", P.matmul)


def _compare(name: str, prim: Any, tuple_fn: str | None = None) -> Operation:
    dunder = f"__{name}__"

    def dispatch(a: Any, b: Any) -> Any:
        if is_numeric(a) and is_numeric(b):
            return prim
        if tuple_fn and a is tuple and b is tuple:
            return getattr(_lib(), tuple_fn)
        if is_record(a) and (m := _user_method(a, dunder)):
            return m
        raise NoMatch

    return Operation(name, dispatch, f"Python's ``{name}`` comparison.")


eq = _compare("eq", P.eq, "tuple_eq")
ne = _compare("ne", P.ne, "tuple_ne")
lt = _compare("lt", P.lt)
le = _compare("le", P.le)
gt = _compare("gt", P.gt)
ge = _compare("ge", P.ge)


def _unary(name: str, prim: Any) -> Operation:
    dunder = f"__{name}__"

    def dispatch(a: Any) -> Any:
        if is_numeric(a):
            return prim
        if is_record(a) and (m := _user_method(a, dunder)):
            return m
        raise NoMatch

    return Operation(name, dispatch, f"Python's unary ``{name}``.")


neg = _unary("neg", P.neg)
pos = _unary("pos", P.identity)
abs_ = _unary("abs", P.abs_)


def _truth(a: Any) -> Any:
    """Python's truth value of ``a`` (``bool(a)``)."""
    if is_numeric(a):
        return P.to_bool
    if a is NoneType:
        return _lib().false_
    if a in (tuple, list, dict):
        return _lib().len_truth
    if is_record(a):
        if m := _user_method(a, "__bool__"):
            return m
        if _user_method(a, "__len__"):
            return _lib().len_truth
        return _lib().true_
    if a is Function or a is type:
        return _lib().true_
    raise NoMatch


truth = Operation("truth", _truth)


def _not(a: Any) -> Any:
    """Python's ``not a``."""
    if is_numeric(a):
        return P.logical_not
    raise NoMatch


not_ = Operation("not", _not)


def _is_none(a: Any) -> Any:
    return P.is_none


is_none = Operation("is_none", _is_none)


# Containers -----------------------------------------------------------------------------------


def _getitem(a: Any, i: Any) -> Any:
    """``a[i]``."""
    if a is tuple:
        return P.tuple_getitem
    if a is list:
        return P.list_getitem
    if a is dict:
        return P.dict_getitem
    if a is Array:
        return P.array_getitem
    if is_record(a) and (m := _user_method(a, "__getitem__")):
        return m
    raise NoMatch


getitem = Operation("getitem", _getitem)


def _len(a: Any) -> Any:
    """``len(a)``."""
    if a is tuple:
        return P.tuple_len
    if a is list:
        return P.list_len
    if a is Array:
        return P.array_len
    if a is dict:
        return _lib().dict_len
    if is_record(a) and (m := _user_method(a, "__len__")):
        return m
    raise NoMatch


len_ = Operation("len", _len)


def _contains(x: Any, xs: Any) -> Any:
    """``x in xs``."""
    if xs in (tuple, list):
        return _lib().contains
    raise NoMatch


contains = Operation("contains", _contains)


def _unpack(xs: Any, n: Any) -> Any:
    """``a, b = xs``: `xs`, after checking that it has `n` elements (as Python does)."""
    if xs in (tuple, list, Array):
        return _lib().unpack
    return _lib().unpack_unchecked


unpack = Operation("unpack", _unpack)


# Iteration ------------------------------------------------------------------------------------


def _iter(a: Any) -> Any:
    """Return the iterator state of ``for x in a``."""
    lib = _lib()
    if a is tuple:
        return lib.tuple_iter
    if a is list or a is Array:
        return lib.sequence_iter
    if a is dict:
        return lib.dict_iter
    if is_record(a) and (m := _user_method(a, "__myia_iter__")):
        return m
    raise NoMatch


def _hasnext(a: Any) -> Any:
    """Whether the iterator state ``a`` has more elements."""
    if a is tuple:
        return _lib().tuple_hasnext
    if is_record(a) and (m := _user_method(a, "__myia_hasnext__")):
        return m
    raise NoMatch


def _next(a: Any) -> Any:
    """``(element, next_state)`` of the iterator state ``a``."""
    if a is tuple:
        return _lib().tuple_next
    if is_record(a) and (m := _user_method(a, "__myia_next__")):
        return m
    raise NoMatch


myia_iter = Operation("iter", _iter)
myia_hasnext = Operation("hasnext", _hasnext)
myia_next = Operation("next", _next)


# Attributes -----------------------------------------------------------------------------------


def _method_getter(fn: Any) -> Any:
    def get_method(obj, name):
        return P.partial(fn, obj)

    return get_method


def _static_getter(fn: Any) -> Any:
    def get_static(obj, name):
        return fn

    return get_static


def _property_getter(fn: Any) -> Any:
    def get_property(obj, name):
        return fn(obj)

    return get_property


def _array_attribute(name: str) -> Any:
    from .mapping import ARRAY_ATTRIBUTES, ARRAY_METHODS

    if name in ARRAY_ATTRIBUTES:
        return ARRAY_ATTRIBUTES[name]
    if name in ARRAY_METHODS:
        return _method_getter(ARRAY_METHODS[name])
    raise NoMatch


def _getattr(a: Any, name: str) -> Any:
    """``a.name`` for a constant ``name``."""
    if is_record(a):
        if name in {f.name for f in dataclasses.fields(a)}:
            return P.record_getattr
        attr = inspect.getattr_static(a, name, None)
        if isinstance(attr, property) and has_source(attr.fget):
            return _property_getter(attr.fget)
        if isinstance(attr, staticmethod) and has_source(attr.__func__):
            return _static_getter(attr.__func__)
        if has_source(attr):
            return _method_getter(attr)
        raise NoMatch
    if a is Array or is_number(a):
        return _array_attribute(name)
    if a is dict and name in ("keys", "values", "items"):
        return _method_getter(getattr(_lib(), f"dict_{name}"))
    raise NoMatch


getattr_ = StaticOperation("getattr", _getattr, static=(1,))


def _isinstance(a: Any, cls: Any) -> Any:
    """``isinstance(a, cls)`` for a constant class or tuple of classes: known statically."""
    from .mapping import python_class

    classes = tuple(python_class(c) for c in (cls if isinstance(cls, tuple) else (cls,)))
    if not all(isinstance(c, type) for c in classes):
        raise NoMatch
    pyclass = {Array: np.ndarray, Function: object}.get(a, a)
    result = any(isinstance(pyclass, type) and issubclass(pyclass, c) for c in classes)
    lib = _lib()
    return lib.true_2 if result else lib.false_2


isinstance_ = StaticOperation("isinstance", _isinstance, static=(1,))

"""The operations behind Python's operators, attribute access, indexing and iteration.

Each dispatch function receives the kinds of the arguments (see `myia.operations.core`), or the
value itself for arguments declared static (constant at compile time), and returns the callee.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

import numpy as np

from ..errors import did_you_mean
from ..primitives import P
from ..records import field_names, init_names, is_namedtuple_class
from .core import (
    Array,
    Function,
    Mutation,
    NoMatch,
    Operation,
    UnionKind,
    is_record,
    sequence_operation,
)

NoneType = type(None)
NotImplementedType = type(NotImplemented)


def is_number(k: Any) -> bool:
    """Whether a kind is a scalar kind (a Python or NumPy scalar type)."""
    return isinstance(k, type) and (k in (bool, int, float) or issubclass(k, np.generic))


def is_numeric(k: Any) -> bool:
    """Whether a kind is a scalar or an array."""
    return k is Array or is_number(k)


def _lib() -> Any:
    from . import lib

    return lib


def _named() -> Any:
    from . import named_tuples

    return named_tuples


def _sequences() -> Any:
    from . import sequences

    return sequences


def has_source(fn: Any) -> bool:
    """Whether `fn` is a Python function whose source Myia can parse."""
    code = getattr(fn, "__code__", None)
    return code is not None and not code.co_filename.startswith("<")


def _user_method(cls: Any, name: str) -> Any:
    fn = getattr(cls, name, None)
    return fn if has_source(fn) else None


def callable_record(cls: Any) -> Any:
    """The ``__call__`` method of a dataclass `cls` (``model(x)``), or None."""
    return _user_method(cls, "__call__") if is_record(cls) else None


def post_init(cls: Any) -> Any:
    """The ``__post_init__`` method of a dataclass `cls`, run on each instance made, or None."""
    return _user_method(cls, "__post_init__") if is_record(cls) else None


class StaticOperation(Operation):
    """An operation some of whose arguments must be constants, passed to `dispatch` as values."""

    def __init__(self, name: str, dispatch: Any, static: tuple[int, ...]):
        super().__init__(name, dispatch)
        self.static = static


def _refuse(message: Any) -> Any:
    """Refuse, at compile time, the call of library code that reaches ``refuse(message)``.

    `message` (a constant) says what is not supported and what to use instead; the error is
    a `MyiaTypeError` at the user's line. Reached only where inference follows the branch
    that calls it (a condition on constants: ``if period is not None``).
    """
    raise NoMatch(message)


refuse = StaticOperation("refuse", _refuse, static=(0,))


# Arithmetic -----------------------------------------------------------------------------------


def _is_not_implemented(a: Any) -> Any:
    """Whether ``a`` is ``NotImplemented`` (known from its kind at compile time)."""
    return _lib().true_ if a is NotImplementedType else _lib().false_


is_not_implemented = Operation("is_not_implemented", _is_not_implemented)

SYMBOLS = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "truediv": "/",
    "floordiv": "//",
    "mod": "%",
    "pow": "**",
    "matmul": "@",
    "and": "&",
    "or": "|",
    "xor": "^",
    "lshift": "<<",
    "rshift": ">>",
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
}

#: The reflection of each comparison: ``a < b`` tries ``b.__gt__(a)`` next.
REFLECTED_COMPARISON = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _kind_name(k: Any) -> str:
    return {Array: "numpy.ndarray", Function: "function"}.get(k, getattr(k, "__name__", str(k)))


def _methods(first: Any, second: Any, message: str, last: Any = None) -> Any:
    """``a OP b`` by Python's rules, trying one method after the other.

    ``first(a, b)``; if it returns ``NotImplemented``, ``second(a, b)``; if that does too,
    ``last(a, b)`` or else ``TypeError(message)``. `first` and `second` are the left
    operand's method and the right one's reflected method (called ``(b, a)``), in the order
    Python tries them; `second` may be missing (None).
    """
    if second is None:

        def one(a, b):
            r = first(a, b)
            if is_not_implemented(r):
                raise TypeError(message)
            return r

        return one

    if last is None:

        def two(a, b):
            r = first(a, b)
            if is_not_implemented(r):
                r2 = second(a, b)
                if is_not_implemented(r2):
                    raise TypeError(message)
                return r2
            return r

        return two

    def three(a, b):
        r = first(a, b)
        if is_not_implemented(r):
            r2 = second(a, b)
            if is_not_implemented(r2):
                return last(a, b)
            return r2
        return r

    return three


def _negated(method: Any) -> Any:
    def negated(a, b):
        r = method(a, b)
        if is_not_implemented(r):
            return r
        return not r

    return negated


def _left(method: Any) -> Any:
    def left(a, b):
        return method(a, b)

    return left


def _right(method: Any) -> Any:
    def right(a, b):
        return method(b, a)

    return right


def _dunders(name: str, reflected: str, a: Any, b: Any, comparison: bool) -> Any:
    """The callee of ``a OP b`` on records: their methods, with Python's fallbacks.

    The left operand's ``__op__`` is tried first, then the right one's ``__rop__`` (for
    arithmetic, only when the types differ; first if the right type is a subclass of the left
    one that overrides it). A method returning ``NotImplemented`` passes the turn.
    """
    ma = _user_method(a, f"__{name}__") if is_record(a) else None
    mb = None
    if is_record(b) and (comparison or b is not a):
        mb = _user_method(b, f"__{reflected}__")
    if name == "ne":
        # Python's default ``__ne__`` negates ``__eq__``.
        if ma is None and is_record(a) and (eq := _user_method(a, "__eq__")):
            ma = _negated(eq)
        if mb is None and is_record(b) and (eq := _user_method(b, "__eq__")):
            mb = _negated(eq)
    last = None
    if name in ("eq", "ne") and a is not b and (ma or mb):
        # Objects of two classes are never the same object: `==` is False, `!=` True.
        last = _lib().false_2 if name == "eq" else _lib().true_2
    if ma is None and mb is None:
        raise NoMatch
    message = (
        f"'{SYMBOLS[name]}' not supported between instances of "
        if comparison
        else f"unsupported operand type(s) for {SYMBOLS[name]}: "
    ) + f"'{_kind_name(a)}' and '{_kind_name(b)}'"
    if ma is None or mb is None:
        return _methods(_left(ma) if mb is None else _right(mb), last, message)
    left, right = _left(ma), _right(mb)
    if a is not b and issubclass(b, a) and mb is not _user_method(a, f"__{reflected}__"):
        left, right = right, left
    return _methods(left, right, message, last)


def _binary(name: str, prim: Any, extra: dict[tuple[Any, Any], Any] | None = None) -> Operation:
    def dispatch(a: Any, b: Any) -> Any:
        if is_numeric(a) and is_numeric(b):
            return prim
        if extra and (a, b) in extra:
            return extra[(a, b)]
        return _dunders(name, f"r{name}", a, b, comparison=False)

    return Operation(name, dispatch, f"Python's ``{name}`` operator.")


add = sequence_operation(
    _binary(
        "add",
        P.add,
        {(tuple, tuple): P.tuple_concat, (list, list): P.list_concat, (str, str): P.str_concat},
    )
)
sub = _binary("sub", P.sub)
#: ``tuple * n`` and ``list * n``: filled by `myia.operations.everyday` (its library code).
MUL_SEQUENCES: dict[tuple[Any, Any], Any] = {}
mul = sequence_operation(_binary("mul", P.mul, MUL_SEQUENCES))
truediv = _binary("truediv", P.truediv)
floordiv = _binary("floordiv", P.floordiv)
mod = _binary("mod", P.mod)
pow_ = _binary("pow", P.pow_)
matmul = _binary("matmul", P.matmul)
and_ = _binary("and", P.bitwise_and)
or_ = _binary("or", P.bitwise_or)
xor = _binary("xor", P.bitwise_xor)
lshift = _binary("lshift", P.left_shift)
rshift = _binary("rshift", P.right_shift)


def is_dtype(k: Any) -> bool:
    """Whether a kind is that of a dtype (``x.dtype``, known at compile time)."""
    return isinstance(k, type) and issubclass(k, np.dtype)


def _compare(name: str, prim: Any, tuple_fn: str | None = None) -> Operation:
    def dispatch(a: Any, b: Any) -> Any:
        if is_numeric(a) and is_numeric(b):
            return prim
        if name in ("eq", "ne") and (a is str or b is str or is_dtype(a) or is_dtype(b)):
            # Strings and dtypes are known at compile time: the comparison is a constant.
            return P.const_eq if name == "eq" else _lib().const_ne
        if a is str and b is str and name in ("lt", "le", "gt", "ge"):
            # Strings known at compile time: the order is a constant (``sorted(d)``).
            return P.const_lt if name == "lt" else getattr(_lib(), f"const_{name}")
        if is_dtype(a) or is_dtype(b):
            raise NoMatch(
                f"'{SYMBOLS[name]}' is not defined on dtypes: compare them with == or != "
                "(x.dtype == np.float32) or with np.issubdtype(x.dtype, np.floating)"
            )
        if tuple_fn and a is tuple and b is tuple:
            return getattr(_lib() if name in ("eq", "ne") else _sequences(), tuple_fn)
        if tuple_fn and a is list and b is list:  # (element by element, as tuples)
            return getattr(_sequences(), tuple_fn.replace("tuple", "list"))
        return _dunders(name, REFLECTED_COMPARISON[name], a, b, comparison=True)

    return sequence_operation(Operation(name, dispatch, f"Python's ``{name}`` comparison."))


eq = _compare("eq", P.eq, "tuple_eq")
ne = _compare("ne", P.ne, "tuple_ne")
lt = _compare("lt", P.lt, "tuple_lt")
le = _compare("le", P.le, "tuple_le")
gt = _compare("gt", P.gt, "tuple_gt")
ge = _compare("ge", P.ge, "tuple_ge")


def _unary(name: str, prim: Any, of_python_bool: Any = None) -> Operation:
    dunder = f"__{name}__"

    def dispatch(a: Any) -> Any:
        if a is bool and of_python_bool is not None:
            return of_python_bool
        if is_numeric(a):
            return prim
        if is_record(a) and (m := _user_method(a, dunder)):
            return m
        raise NoMatch

    return Operation(name, dispatch, f"Python's unary ``{name}``.")


neg = _unary("neg", P.neg)
# +True is 1, a Python int (NumPy's booleans have no unary plus).
pos = _unary("pos", P.identity, of_python_bool=P.to_int)
abs_ = _unary("abs", P.abs_)
invert = _unary("invert", P.invert)


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


truth = sequence_operation(Operation("truth", _truth))


def _not(a: Any) -> Any:
    """Python's ``not a``."""
    if is_numeric(a):
        return P.logical_not
    raise NoMatch


not_ = sequence_operation(Operation("not", _not))


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
    if is_number(a) and a not in (bool, int, float) and i is tuple:
        return _lib().scalar_getitem  # a NumPy scalar: ``x[()]``
    raise NoMatch


getitem = sequence_operation(Operation("getitem", _getitem))


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


len_ = sequence_operation(Operation("len", _len))


def _contains(x: Any, xs: Any) -> Any:
    """``x in xs``."""
    if xs in (tuple, list):
        return _lib().contains
    if xs is dict:  # its keys, constants: known at compile time
        return _lib().dict_contains
    if xs is str:
        return P.const_contains
    if is_record(xs) and _user_method(xs, "__contains__"):
        return _lib().contains_record
    raise NoMatch


contains = sequence_operation(Operation("contains", _contains))


def _is_view(k: Any) -> bool:
    """Whether kind `k` is a dict view (``d.keys()``: `myia.operations.lib.DictView`)."""
    return is_record(k) and hasattr(k, "__myia_view__")


def _unpack(xs: Any, n: Any) -> Any:
    """``a, b = xs``: `xs`, after checking that it has `n` elements (as Python does)."""
    if xs in (tuple, list, Array):
        return _lib().unpack
    if _is_view(xs):  # ``a, b = d.values()``: its tuple
        return _lib().unpack_view
    return _lib().unpack_unchecked


unpack = sequence_operation(Operation("unpack", _unpack))


def _unpack_star(xs: Any, n: Any) -> Any:
    """``a, *rest = xs``: `xs`, after checking that it has at least `n` elements."""
    if xs in (tuple, list, Array):
        return _lib().unpack_at_least
    if _is_view(xs):
        return _lib().unpack_view_at_least
    raise NoMatch(
        f"a starred assignment unpacks a tuple, list or array in Myia, not a {_kind_name(xs)}"
    )


unpack_star = sequence_operation(Operation("unpack_star", _unpack_star))


def _star_tuple(xs: Any) -> Any:
    """``*xs`` in a tuple display or a call: the tuple of the elements of `xs`.

    A tuple's length is part of its type; a list's and an iterator's are not (a list has one
    type whatever its length), so their elements cannot make a tuple at compile time.
    """
    if xs is tuple:
        return _lib().star_tuple
    if xs is dict:  # its keys, constants
        return P.dict_keys
    if _is_view(xs):  # ``*d.values()``
        return _lib().view_items
    if xs is list:
        raise NoMatch(
            "*xs of a list makes a tuple whose length Myia does not know at compile time (a "
            "list has one type whatever its length): spread a tuple, (a, b, c), or build a "
            "list, [*xs, y]"
        )
    raise NoMatch(
        f"the value after * must be a tuple in Myia (or a dict: its keys), not a {_kind_name(xs)}"
    )


def _star_list(xs: Any) -> Any:
    """``*xs`` in a list display: the list of the elements of `xs`.

    Of a list, a tuple, the rows of an array, the keys of a dict.
    """
    if xs is list:
        return _lib().star_tuple  # (itself: lists are immutable in Myia)
    if xs in (tuple, Array, dict) or _is_view(xs):
        return _lib().list_
    raise NoMatch(
        f"the value after * in a list display must be a list, tuple, array or dict, not a "
        f"{_kind_name(xs)}"
    )


star_tuple = sequence_operation(Operation("star_tuple", _star_tuple))
star_list = sequence_operation(Operation("star_list", _star_list))


def _list_append(lst: Any, value: Any) -> Any:
    """``xs.append(v)`` on a list the function builds: the longer list (`frontend.appends`)."""
    if lst is list:
        from . import everyday

        return everyday.list_append
    raise NoMatch(f"'{_kind_name(lst)}' object has no attribute 'append'")


list_append = Operation("list_append", _list_append)


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


myia_iter = sequence_operation(Operation("iter", _iter))
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
    if not hasattr(np.ndarray, name):
        hint = did_you_mean(name, dir(np.ndarray))
        raise NoMatch(f"'numpy.ndarray' object has no attribute {name!r}{hint}")
    # NumPy's attribute, which Myia lacks (``x.tofile``): not the user's misspelling.
    kind = "method" if callable(getattr(np.ndarray, name)) else "attribute"
    raise NoMatch(f"Myia does not support the array {kind} {name!r}")


def _getattr(a: Any, name: str) -> Any:
    """``a.name`` for a constant ``name``."""
    if is_record(a):
        if name in field_names(a):
            return P.record_getattr
        if is_namedtuple_class(a) and name in _NAMEDTUPLE_ATTRIBUTES:
            return _NAMEDTUPLE_ATTRIBUTES[name](a)
        attr = inspect.getattr_static(a, name, None)
        if isinstance(attr, property) and has_source(attr.fget):
            return _property_getter(attr.fget)
        if isinstance(attr, staticmethod) and has_source(attr.__func__):
            return _static_getter(attr.__func__)
        if has_source(attr):
            return _method_getter(attr)
        if attr is None and not hasattr(a, name):
            hint = did_you_mean(name, [*field_names(a), *dir(a)])
            raise NoMatch(f"{a.__name__!r} object has no attribute {name!r}{hint}")
        raise NoMatch
    if isinstance(a, types.ModuleType):  # a module passed (a default ``np=np``)
        try:
            return _static_getter(getattr(a, name))
        except AttributeError:
            hint = did_you_mean(name, dir(a))
            raise NoMatch(f"module {a.__name__!r} has no attribute {name!r}{hint}") from None
    if a is Array or (is_number(a) and a not in (bool, int, float)):
        return _array_attribute(name)  # NumPy scalars too; Python's have no ``shape``
    if a is dict and name in ("keys", "values", "items", "get"):
        return _method_getter(getattr(_lib(), f"dict_{name}"))
    if a in (tuple, list) and name in ("count", "index"):
        return _method_getter(getattr(_sequences(), f"seq_{name}"))
    if a is np.random.Generator:
        from .random_lib import METHODS

        if name in METHODS:
            return _method_getter(METHODS[name])
    if a in (list, dict):
        from ..frontend.subset import MUTATING_METHODS

        if name in MUTATING_METHODS:
            raise Mutation(a, name)
    if isinstance(a, type) and a.__module__.split(".")[0] not in ("builtins", "numpy", "myia"):
        cls = a.__qualname__  # a constant instance of a class that is not a dataclass
        raise NoMatch(
            f"{cls}.{name}: Myia code reads the fields and methods of dataclass instances, "
            f"not those of other objects; make {cls} a @dataclass"
        )
    raise NoMatch


getattr_ = StaticOperation("getattr", _getattr, static=(1,))


def _replacer(a: Any) -> Any:
    """The function ``dataclasses.replace`` (a named tuple's ``_replace``) is on class `a`."""
    if a not in _REPLACERS:
        _REPLACERS[a] = _lib().dataclass_replacer(a, init_names(a))
    return _REPLACERS[a]


#: The attributes of named tuples that Myia code reads, besides their fields and the methods
#: their class defines: each gives the function `_getattr` returns for a class.
_NAMEDTUPLE_ATTRIBUTES: dict[str, Any] = {
    "_replace": lambda a: _method_getter(_replacer(a)),
    "_asdict": lambda a: _method_getter(_named().namedtuple_asdict(field_names(a))),
    "_fields": lambda a: _static_getter(field_names(a)),
    "count": lambda a: _method_getter(_named().tuple_view(_sequences().seq_count, (True,))),
    "index": lambda a: _method_getter(_named().tuple_view(_sequences().seq_index, (True,))),
}


def _super_method(fn: Any) -> Any:
    def get_method(cls, obj, name):
        return P.partial(fn, obj)

    return get_method


def _super_static(fn: Any) -> Any:
    def get_static(cls, obj, name):
        return fn

    return get_static


def _super_property(fn: Any) -> Any:
    def get_property(cls, obj, name):
        return fn(obj)

    return get_property


def _super_getattr(cls: Any, a: Any, name: str) -> Any:
    """``super().name`` in a method of class `cls` on a dataclass instance of class `a`.

    As Python's, it looks `name` up in the classes after `cls` in ``a``'s MRO: methods are
    bound to the instance, properties read, static methods returned as they are.
    """
    if not (is_record(a) and isinstance(cls, type) and cls in a.__mro__):
        raise NoMatch
    mro = a.__mro__
    for klass in mro[mro.index(cls) + 1 :]:
        if name in vars(klass):
            attr = vars(klass)[name]
            break
    else:
        raise NoMatch(f"'super' object has no attribute {name!r}")
    if isinstance(attr, property) and has_source(attr.fget):
        return _super_property(attr.fget)
    if isinstance(attr, staticmethod) and has_source(attr.__func__):
        return _super_static(attr.__func__)
    if has_source(attr):
        return _super_method(attr)
    raise NoMatch(f"super().{name}: Myia reads methods, properties and static methods only")


super_getattr = StaticOperation("super_getattr", _super_getattr, static=(0, 2))


def _getattr_builtin(a: Any, name: Any, *default: Any) -> Any:
    """Python's ``getattr(a, name)`` and ``getattr(a, name, default)`` for a constant name."""
    if not isinstance(name, str):
        raise NoMatch
    if not default:
        return _getattr(a, name)
    try:
        _getattr(a, name)
    except NoMatch:
        return _lib().default_
    return _lib().getattr_default


def _hasattr(a: Any, name: Any) -> Any:
    """Python's ``hasattr(a, name)`` for a constant name: known at compile time."""
    if not isinstance(name, str):
        raise NoMatch
    try:
        _getattr(a, name)
    except NoMatch:
        return _lib().false_2
    return _lib().true_2


def _is_dataclass(a: Any) -> Any:
    """``dataclasses.is_dataclass(x)``: whether ``x`` is a dataclass instance (statically)."""
    return _lib().true_ if is_record(a) and not is_namedtuple_class(a) else _lib().false_


is_dataclass_ = Operation("is_dataclass", _is_dataclass)


def _is_record(a: Any) -> Any:
    """Whether ``x`` is a record, a dataclass or named tuple instance (library code)."""
    return _lib().true_ if is_record(a) else _lib().false_


#: In Myia's library code (`myia.transforms.trees`...): a record's structure is its class's,
#: a named tuple's included, where ``isinstance(x, tuple)`` holds too.
is_record_ = Operation("is_record", _is_record)

#: The function `lib.dataclass_replacer` makes for each dataclass (parsed once).
_REPLACERS: dict[type, Any] = {}


def _replace(a: Any, *changes: Any) -> Any:
    """``dataclasses.replace(obj, **changes)``: a new instance with the fields named replaced."""
    if not is_record(a) or is_namedtuple_class(a):
        raise NoMatch(f"replace() should be called on dataclass instances, not {_kind_name(a)}")
    return _replacer(a)


dataclass_replace = Operation("replace", _replace)
getattr_builtin = StaticOperation("getattr", _getattr_builtin, static=(1,))
hasattr_ = StaticOperation("hasattr", _hasattr, static=(1,))


def _isinstance(a: Any, cls: Any) -> Any:
    """``isinstance(a, cls)`` for a constant class or tuple of classes: known statically."""
    from .mapping import python_class

    def flat(c: Any) -> tuple[Any, ...]:
        return tuple(x for e in c for x in flat(e)) if isinstance(c, tuple) else (c,)

    classes = tuple(python_class(c) for c in flat(cls))
    if not all(isinstance(c, type) for c in classes):
        raise NoMatch
    lib = _lib()
    if isinstance(a, UnionKind):
        # Known at run time only: which options of the union are instances of `classes`.
        yes = {o for o in a.classes if issubclass(o, classes)}
        if not yes or yes == set(a.classes):  # (tuples of several lengths: one class)
            return lib.true_2 if yes else lib.false_2
        if yes == {type(None)}:
            return lib.is_none_2
        if set(a.classes) - yes == {type(None)}:
            return lib.is_not_none_2
        return lib.is_instance_2  # records of several classes: tested at run time
    pyclass = {Array: np.ndarray, Function: object}.get(a, a)
    result = any(isinstance(pyclass, type) and issubclass(pyclass, c) for c in classes)
    return lib.true_2 if result else lib.false_2


isinstance_ = StaticOperation("isinstance", _isinstance, static=(1,))

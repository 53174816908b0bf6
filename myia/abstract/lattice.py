"""Operations on abstract values: the abstract value of a Python value, join, promotion.

`join` merges the abstract values two branches (or two iterations of a loop, or two elements
of a list) can produce (arrays of different shapes join to unknown dimensions, ``f64 x ?``;
tuples of different lengths to their union, ``(f64,) | (f64, f64)``);
`broaden` forgets values known at compile time; `promote` gives the dtype of an arithmetic
result following NumPy (Python scalars are weak: ``f32 x 3`` times a Python float stays
``f32``).
"""

from __future__ import annotations

import functools
import keyword
import typing
from typing import Any

import numpy as np

from ..records import field_annotation, field_names, is_record_value
from .data import (
    ANYTHING,
    BOTTOM,
    NONE,
    UNASSIGNED,
    AbstractArray,
    AbstractConstant,
    AbstractDict,
    AbstractFunction,
    AbstractList,
    AbstractOpaque,
    AbstractRecord,
    AbstractScalar,
    AbstractSlice,
    AbstractStack,
    AbstractTuple,
    AbstractUnion,
    AbstractValue,
    SelfRef,
    fold,
    show,
)


class TypeMismatch(Exception):
    """Raised by `join` when two abstract values cannot be merged."""

    def __init__(self, a: Any, b: Any, why: str = ""):
        super().__init__(f"{show(a)} and {show(b)}" + (f" ({why})" if why else ""))
        self.a = a
        self.b = b


_WEAK_SAMPLE = {"bool": False, "int64": 0, "float64": 0.0}

PY_SCALARS = {
    bool: AbstractScalar("bool", True),
    int: AbstractScalar("int64", True),
    float: AbstractScalar("float64", True),
}


@functools.cache
def promote(*types: tuple[str, bool]) -> tuple[str, bool]:
    """The ``(dtype, weak)`` of an elementwise result of operands ``(dtype, weak)``."""
    operands = [_WEAK_SAMPLE[d] if w else np.dtype(d) for d, w in types]
    dtype = np.result_type(*operands).name
    return dtype, all(w for _, w in types)


def scalar(dtype: str, weak: bool = False, value: Any = ANYTHING) -> AbstractScalar:
    return AbstractScalar(dtype, weak, value)


#: The names of the dtypes met so far (``dtype.name`` costs ~4 us; a look-up ~70 ns). Equal
#: dtypes have one name; the table stops growing at `_MAX_DTYPES` entries.
_DTYPE_NAMES: dict[np.dtype, str] = {}
_MAX_DTYPES = 1024


def dtype_name(dtype: np.dtype) -> str:
    """``dtype.name``, from a table of the dtypes met so far."""
    try:
        return _DTYPE_NAMES[dtype]
    except (KeyError, TypeError):
        name = dtype.name
        if len(_DTYPE_NAMES) < _MAX_DTYPES:
            try:
                _DTYPE_NAMES[dtype] = name
            except TypeError:
                pass
        return name


_ndarray = np.ndarray
_Module = type(np)  # a module passed (a default ``np=np``): a constant, as a class is


#: The kinds of NumPy dtypes Myia takes (bool, integers, floats, complex numbers).
_NUMERIC = "biufc"


def to_abstract(value: Any) -> AbstractValue:
    """The abstract value of a Python value passed as an argument (values not kept)."""
    t = type(value)
    if t is _ndarray:
        if value.dtype.kind not in _NUMERIC:
            raise TypeError(f"arrays of dtype {value.dtype} are not supported")
        return AbstractArray(dtype_name(value.dtype), value.shape)
    a = PY_SCALARS.get(t)
    if a is not None:
        return a
    if isinstance(value, np.generic) and value.dtype.kind in _NUMERIC:
        return AbstractScalar(dtype_name(value.dtype))
    if t is tuple:
        return AbstractTuple(tuple(to_abstract(v) for v in value))
    if t is list:
        elem = BOTTOM
        for v in value:
            elem = join(elem, to_abstract(v))
        return AbstractList(elem)
    if t is dict:
        if not all(isinstance(k, str) for k in value):
            raise TypeError("dict keys must be strings")
        return AbstractDict(tuple(value), tuple(to_abstract(v) for v in value.values()))
    if t in _LAYOUTS or is_record_value(value):
        return record_abstract(value)
    if value is None:
        return NONE
    if isinstance(value, (str, type, slice, _Module)) or value is Ellipsis:
        return AbstractConstant(value)
    if isinstance(value, np.random.Generator):
        return GENERATOR
    if isinstance(value, np.random.RandomState):
        raise TypeError(
            "Myia takes a numpy.random.Generator, not a RandomState: pass "
            "np.random.default_rng(seed)"
        )
    raise TypeError(f"Myia cannot take a value of type {t.__name__} as an argument")


def constant_abstract(value: Any) -> AbstractValue:
    """The abstract value of a constant of the program (values kept where useful)."""
    t = type(value)
    if t in PY_SCALARS:
        return AbstractScalar(PY_SCALARS[t].dtype, True, value)
    if isinstance(value, np.generic):
        return AbstractScalar(dtype_name(value.dtype), False, value)
    if t is tuple:
        return AbstractTuple(tuple(constant_abstract(v) for v in value))
    if t is dict and all(isinstance(k, str) for k in value):
        return AbstractDict(tuple(value), tuple(constant_abstract(v) for v in value.values()))
    return to_abstract(value)


def recursive_fields(cls: type) -> dict[str, AbstractValue]:
    """The fields of dataclass `cls` whose annotation mentions `cls` itself, with their type.

    The type is `SelfRef` of the class, or ``SelfRef | None`` for an optional field: it comes
    from the annotation, so that every tree has one type whatever its shape.
    """
    return _recursive_fields(cls)


@functools.cache
def _recursive_fields(cls: type) -> dict[str, AbstractValue]:
    try:
        hints = typing.get_type_hints(cls)
    except Exception:
        hints = {}
    out: dict[str, AbstractValue] = {}
    for name in field_names(cls):
        h = hints.get(name, field_annotation(cls, name))
        if _mentions(h, cls):
            ref = SelfRef(cls)
            out[name] = AbstractUnion(frozenset([ref, NONE])) if _optional(h) else ref
    return out


def recursive_field(cls: type, name: str, value: AbstractValue) -> AbstractValue:
    """The type of recursive field `name` of a `cls` made in Myia code with `value`.

    It is the annotation's (`recursive_fields`), joined with the records of the other classes
    the annotation names (``Union["Leaf", "Node"]``) that `value` may be: the type the same
    tree has when it is an argument (`_other_field`).
    """
    field = recursive_fields(cls)[name]
    for o in union_options(value):
        if isinstance(o, AbstractRecord) and o.cls is not cls and allowed_in(cls, name, o.cls):
            field = join(field, fold(o, cls))
    return field


def _mentions(hint: Any, cls: type) -> bool:
    if hint is cls:
        return True
    if isinstance(hint, str):
        return hint == cls.__name__ or cls.__name__ in hint.replace(" ", "").split("|")
    if isinstance(hint, typing.ForwardRef):
        return hint.__forward_arg__ == cls.__name__
    return any(_mentions(a, cls) for a in typing.get_args(hint))


def _optional(hint: Any) -> bool:
    if isinstance(hint, str):
        return "None" in hint or "Optional" in hint
    return type(None) in typing.get_args(hint)


class _Layout:
    """What `record_abstract` reads of a dataclass: its fields, and a walker of its trees."""

    __slots__ = ("names", "rec", "walk")

    def __init__(self, cls: type):
        self.names = field_names(cls)
        self.rec = recursive_fields(cls)
        self.walk = _walker(cls, self.names, self.rec) if self.rec else None


#: The `_Layout` of each dataclass met as an argument.
_LAYOUTS: dict[type, _Layout] = {}


def _layout(cls: type) -> _Layout:
    layout = _LAYOUTS.get(cls)
    if layout is None:
        layout = _LAYOUTS[cls] = _Layout(cls)
    return layout


def _walker(cls: type, names: tuple[str, ...], rec: dict[str, AbstractValue]) -> Any:
    """A function that walks the trees of recursive dataclass `cls`, joining their fields.

    ``walk(value, fields)`` visits the instances reachable from `value` through recursive
    fields depth first (a stack: children pushed in field order), each one's fields in
    order, and joins each other field into ``fields`` (`_join_field`). It is generated for
    the class (an attribute read per field, no loop over fields). Each array field keeps the
    shape and dtype of the array it joined last (``s<i>``, ``d<i>``): an array of the same
    shape and dtype joins to the same array type, so that it costs no abstract value. (NumPy
    shares the dtype object of each builtin type, so the dtypes are compared with ``is``: an
    equal dtype that is another object is joined, which is slower, not wrong.)
    """
    lines = [
        "def walk(value, fields):",
        "    stack = [value]",
        "    pop = stack.pop",
        "    push = stack.append",
    ]
    lines += [f"    s{i} = d{i} = None" for i, n in enumerate(names) if n not in rec]
    # A tree of more than `_CHECK_CYCLES` nodes is checked once for a cycle, which would
    # make the walk endless.
    lines += ["    n = 0", "    while stack:", "        node = pop()", "        n += 1"]
    lines += [
        f"        if n == {_CHECK_CYCLES}:",
        f"            _check_acyclic(value, {tuple(rec)!r})",
    ]
    for i, n in enumerate(names):
        get = (
            f"node.{n}"
            if n.isidentifier() and not keyword.iskeyword(n)
            else f"getattr(node, {n!r})"
        )
        lines.append(f"        v = {get}")
        if n in rec:
            lines += [
                "        if type(v) is cls:",
                "            push(v)",
                "        elif v is not None:",
                f"            _other_field(fields, {i}, v, cls, {n!r})",
            ]
        else:
            # The shape is compared first: `s<i>` is None until an array was joined, and a
            # dtype compared with None would compare with the default dtype.
            lines += [
                f"        if type(v) is not ndarray or v.shape != s{i} or v.dtype is not d{i}:",
                f"            s{i}, d{i} = _join_field(fields, {i}, v, cls)",
            ]
    env = {
        "cls": cls,
        "ndarray": _ndarray,
        "_join_field": _join_field,
        "_other_field": _other_field,
        "_check_acyclic": _check_acyclic,
    }
    exec("\n".join(lines), env)
    return env["walk"]


_CHECK_CYCLES = 100_000


def _check_acyclic(root: Any, rec: tuple[str, ...]) -> None:
    """Raise `TypeError` if a tree of records (through fields `rec`) contains itself."""
    done: set[int] = set()
    path: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            path.discard(id(node))
            done.add(id(node))
            continue
        if id(node) in path:
            raise TypeError(f"a {type(node).__name__} contains itself")
        if id(node) in done:
            continue
        path.add(id(node))
        stack.append((node, True))
        for n in rec:
            v = getattr(node, n)
            if type(v) is type(root):
                stack.append((v, False))


def _join_field(fields: list[AbstractValue], i: int, v: Any, cls: type) -> tuple[Any, Any]:
    """Join field `i`'s value `v` into ``fields[i]``: the ``(shape, dtype)`` of an array."""
    if type(v) is _ndarray:
        fields[i] = f = join(fields[i], to_abstract(v))
        # An array type, joined: `v`'s own shape and dtype if they are the field's.
        same = type(f) is AbstractArray and f.shape == v.shape
        return (f.shape, v.dtype) if same else (None, None)
    fields[i] = join(fields[i], fold(to_abstract(v), cls))
    return None, None


def _other_field(fields: list[AbstractValue], i: int, v: Any, cls: type, name: str) -> None:
    """Join into ``fields[i]`` a value of another class than `cls` in recursive field `name`.

    The field's annotation names that class (``left: Union["Leaf", "Node"]``): the field's
    type is the union of `cls` (`SelfRef`) and the records it holds.
    """
    if not (is_record_value(v) and allowed_in(cls, name, type(v))):
        _bad_field(cls, name, v)
    fields[i] = join(fields[i], fold(to_abstract(v), cls))


@functools.cache
def allowed_in(cls: type, name: str, other: type) -> bool:
    """Whether the annotation of field `name` of `cls` names class `other`."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:
        hints = {}
    return _mentions(hints.get(name, field_annotation(cls, name)), other)


def _bad_field(cls: type, name: str, v: Any) -> None:
    raise TypeError(f"field {name} of a {cls.__name__} holds a {type(v).__name__}")


def record_abstract(value: Any) -> AbstractRecord:
    """The abstract value of a dataclass instance.

    For a recursive class (a field annotated with the class itself), the fields of every
    instance of the class reachable through recursive fields are joined, so that a tree of
    any shape has one abstract value.
    """
    cls = type(value)
    layout = _LAYOUTS.get(cls) or _layout(cls)
    if layout.walk is None:
        return AbstractRecord(cls, tuple([to_abstract(getattr(value, n)) for n in layout.names]))
    fields: list[AbstractValue] = [layout.rec.get(n, BOTTOM) for n in layout.names]
    layout.walk(value, fields)
    return AbstractRecord(cls, tuple(fields))


def broaden(a: AbstractValue) -> AbstractValue:
    """Forget the values known at compile time in `a` (but keep types and shapes)."""
    if isinstance(a, AbstractScalar):
        return a if a.value is ANYTHING else AbstractScalar(a.dtype, a.weak)
    if isinstance(a, AbstractTuple):
        return AbstractTuple(tuple(broaden(e) for e in a.elements))
    if isinstance(a, AbstractRecord):
        return AbstractRecord(a.cls, tuple(broaden(e) for e in a.fields))
    if isinstance(a, AbstractDict):
        return AbstractDict(a.keys, tuple(broaden(e) for e in a.values))
    if isinstance(a, AbstractList):
        return AbstractList(broaden(a.element))  # and its value forgotten
    if isinstance(a, AbstractStack):
        return AbstractStack(broaden(a.element))
    if isinstance(a, AbstractUnion):
        return AbstractUnion(frozenset(broaden(o) for o in a.options))
    return a


def _nullable(a: AbstractValue) -> bool:
    """Whether `a` may be joined with None (``int | None``, ``Optional[np.ndarray]``)."""
    return isinstance(a, (AbstractScalar, AbstractArray))


def _unionable(a: AbstractValue) -> bool:
    """Whether `a` may be an option of a union: a record, None, or a tuple (by its length)."""
    return isinstance(a, (AbstractRecord, SelfRef, AbstractTuple)) or a == NONE


def join(a: AbstractValue, b: AbstractValue) -> AbstractValue:
    """The least abstract value that covers both `a` and `b`; raise `TypeMismatch`."""
    if a == b:
        return a
    if a is BOTTOM or (type(a) is AbstractConstant and a.value is UNASSIGNED):
        return b  # (an unassigned variable's value is never read: `UNASSIGNED`)
    if b is BOTTOM or (type(b) is AbstractConstant and b.value is UNASSIGNED):
        return a
    ta, tb = type(a), type(b)
    if ta is AbstractScalar and tb is AbstractScalar:
        if a.dtype == b.dtype and a.weak == b.weak:
            return AbstractScalar(a.dtype, a.weak)
        dtype, weak = promote((a.dtype, a.weak), (b.dtype, b.weak))
        return AbstractScalar(dtype, weak)
    arr, sc = (a, b) if ta is AbstractArray else (b, a)
    if type(sc) is AbstractScalar and type(arr) is AbstractArray and arr.shape == ():
        # A 0-d array and a scalar (as NumPy's arithmetic gives of 0-d arrays) meet as scalars.
        return AbstractScalar(*promote((arr.dtype, False), (sc.dtype, sc.weak)))
    if ta is AbstractArray and tb is AbstractArray:
        if a.dtype != b.dtype:
            raise TypeMismatch(a, b, "different dtypes")
        if len(a.shape) != len(b.shape):
            raise TypeMismatch(a, b, "different numbers of dimensions")
        # The dimensions the two disagree on are known at run time only.
        return AbstractArray(a.dtype, join_shapes(a.shape, b.shape))
    if ta is AbstractTuple and tb is AbstractTuple:
        if len(a.elements) != len(b.elements):
            # ``(x,) if c else (x, y)``: one of the two, told apart by its length at run time.
            return union(a, b)
        return AbstractTuple(tuple(join(x, y) for x, y in zip(a.elements, b.elements)))
    if ta is AbstractList and tb is AbstractList:
        return AbstractList(join(a.element, b.element))
    if ta is AbstractStack and tb is AbstractStack:
        return AbstractStack(join(a.element, b.element))
    if ta is AbstractDict and tb is AbstractDict:
        if a.keys != b.keys:
            raise TypeMismatch(a, b, "dicts with different keys")
        return AbstractDict(a.keys, tuple(join(x, y) for x, y in zip(a.values, b.values)))
    if ta is AbstractRecord and tb is AbstractRecord and a.cls is b.cls:
        return AbstractRecord(a.cls, tuple(join(x, y) for x, y in zip(a.fields, b.fields)))
    if ta is AbstractFunction and tb is AbstractFunction:
        return AbstractFunction(a.options | b.options)
    if _slice(a) is not None and _slice(b) is not None:
        return _join_slices(_slice(a), _slice(b))  # type: ignore[arg-type]
    if STRING in (a, b) and {ta, tb} <= {AbstractOpaque, AbstractConstant}:
        if all(t is AbstractOpaque or type(x.value) is str for t, x in ((ta, a), (tb, b))):
            return STRING  # a string known at compile time and one made at run time
    if ta is AbstractConstant and tb is AbstractConstant:
        if type(a.value) is str and type(b.value) is str:
            return STRING  # two strings: one known at run time
    if ta is AbstractUnion or tb is AbstractUnion or (_unionable(a) and _unionable(b)):
        return union(a, b)
    if (a == NONE and _nullable(b)) or (b == NONE and _nullable(a)):
        return union(a, b)  # ``int | None``: a value or nothing
    raise TypeMismatch(a, b)


def join_elements(items: Any) -> AbstractValue:
    """The element type of a list of `items`: their join, holding each value exactly.

    NumPy numbers and Python numbers in one list (``[x32, 0.1]``, ``[np.uint8(200), -1]``)
    join by NumPy's promotion, where the Python number is weak and takes the NumPy dtype
    (``float32``, ``uint8``): the list would round it (``0.1``) or wrap it around (``-1``).
    Such an element is the Python number of the dtype that holds them all (``np.result_type``
    of their dtypes, a Python number's its own: ``np.array`` of the list has that dtype, as
    NumPy's), weak still, so that arithmetic of an element with arrays keeps their dtype.
    Raise `TypeMismatch`.
    """
    out: AbstractValue = BOTTOM
    for x in items:
        out = join(out, x)
    if type(out) is AbstractScalar and out.weak is False:
        weak = [x for x in items if type(x) is AbstractScalar and x.weak]
        if weak and all(type(x) is AbstractScalar for x in items):
            dtype = np.result_type(*(x.dtype for x in items)).name
            if dtype != out.dtype:
                return AbstractScalar(dtype, True)
    return out


def _slice(a: AbstractValue) -> AbstractSlice | None:
    """Slice `a` as an `AbstractSlice` (a constant one too); None if `a` is no slice."""
    if type(a) is AbstractSlice:
        return a
    if type(a) is AbstractConstant and type(a.value) is slice:
        v = a.value
        bounds = (v.start, v.stop, v.step)
        if all(b is None or type(b) is int for b in bounds):
            return AbstractSlice(*(constant_abstract(b) for b in bounds))
    return None


def _join_slices(a: AbstractSlice, b: AbstractSlice) -> AbstractSlice:
    """The join of two slices, of bounds known at compile time or at run time.

    A slice known at compile time (``x[:2]``) and one known at run time (``x[:i]``) meet as
    the latter (the first iteration of a loop, pushed on the stack of its gradient with the
    others). Bounds None in one and not the other differ.
    """
    bounds = []
    for x, y in ((a.start, b.start), (a.stop, b.stop), (a.step, b.step)):
        if (x == NONE) != (y == NONE):
            raise TypeMismatch(a, b, "a bound None in one slice only")
        bounds.append(x if x == NONE else join(x, y))
    return AbstractSlice(*bounds, length=a.length if a.length == b.length else None)


def join_shapes(a: tuple[int | None, ...], b: tuple[int | None, ...]) -> tuple[int | None, ...]:
    """The shape of the join of arrays of shapes `a` and `b` (one rank): None where they differ."""
    return tuple(x if x == y else None for x, y in zip(a, b))


def widen_dims(old: AbstractValue, new: AbstractValue) -> AbstractValue:
    """`new`, with the dimensions of its arrays that differ from `old`'s made unknown.

    Only arrays of one dtype and rank (in tuples, lists, dicts and records of the same
    structure) are widened; any other difference leaves `new` as it is.
    """
    if old == new:
        return new
    to, tn = type(old), type(new)
    if to is AbstractArray and tn is AbstractArray:
        if old.dtype == new.dtype and len(old.shape) == len(new.shape):
            return AbstractArray(new.dtype, join_shapes(old.shape, new.shape))
        return new
    if to is AbstractTuple and tn is AbstractTuple and len(old.elements) == len(new.elements):
        return AbstractTuple(tuple(widen_dims(a, b) for a, b in zip(old.elements, new.elements)))
    if to is AbstractList and tn is AbstractList:
        return AbstractList(widen_dims(old.element, new.element), new.value)
    if to is AbstractDict and tn is AbstractDict and old.keys == new.keys:
        return AbstractDict(new.keys, tuple(map(widen_dims, old.values, new.values)))
    if to is AbstractRecord and tn is AbstractRecord and old.cls is new.cls:
        return AbstractRecord(new.cls, tuple(map(widen_dims, old.fields, new.fields)))
    return new


_EMPTY_STACK = AbstractStack(BOTTOM)


def erase_stacks(a: AbstractValue) -> AbstractValue:
    """`a` with the element type of each stack it holds (in tuples) made ⊥.

    Two values equal once erased differ only in what their stacks hold: the state of a
    loop's gradient before and after some of its stacks were first pushed on.
    """
    if type(a) is AbstractStack:
        return _EMPTY_STACK
    if type(a) is AbstractTuple:
        elements = tuple(map(erase_stacks, a.elements))
        return a if elements == a.elements else AbstractTuple(elements)
    return a


def all_empty(a: AbstractValue) -> bool:
    """Whether every stack `a` holds (in tuples) is known empty: nothing pushed on it yet."""
    if type(a) is AbstractStack:
        e = a.element
        return e is BOTTOM or (type(e) is AbstractFunction and not e.options)
    return type(a) is not AbstractTuple or all(map(all_empty, a.elements))


def holds_stack(a: AbstractValue) -> bool:
    """Whether `a` is a stack or a tuple holding one (at any depth of tuples)."""
    if type(a) is AbstractStack:
        return True
    return type(a) is AbstractTuple and any(map(holds_stack, a.elements))


def union(a: AbstractValue, b: AbstractValue) -> AbstractValue:
    """The union of `a` and `b`, merging options of the same kind."""
    opts: list[AbstractValue] = []
    for x in (a, b):
        for o in x.options if isinstance(x, AbstractUnion) else (x,):
            for i, y in enumerate(opts):
                if _same_kind(o, y):
                    opts[i] = join(o, y)
                    break
            else:
                opts.append(o)
    others = [o for o in opts if not _unionable(o)]
    if others and not (len(others) == 1 and _nullable(others[0]) and NONE in opts):
        raise TypeMismatch(a, b)
    return opts[0] if len(opts) == 1 else AbstractUnion(frozenset(opts))


def _same_kind(a: AbstractValue, b: AbstractValue) -> bool:
    if isinstance(a, AbstractRecord) and isinstance(b, AbstractRecord):
        return a.cls is b.cls
    if isinstance(a, AbstractTuple) and isinstance(b, AbstractTuple):
        return len(a.elements) == len(b.elements)
    if isinstance(a, AbstractUnion) or isinstance(b, AbstractUnion):
        return False
    return type(a) is type(b) and not isinstance(a, AbstractConstant) or a == b


def union_options(a: AbstractValue) -> tuple[AbstractValue, ...]:
    """The options of a union (in the order they are printed), or ``(a,)``.

    Not in the order of the set of options, which depends on hashing: inference looks at the
    options in turn (the first error reported) and the kind of a union lists their classes.
    """
    return _ordered_options(a) if isinstance(a, AbstractUnion) else (a,)


@functools.lru_cache(maxsize=4096)
def _ordered_options(a: AbstractUnion) -> tuple[AbstractValue, ...]:
    return tuple(sorted(a.options, key=lambda o: (o == NONE, show(o))))


FUNCTION = AbstractConstant("<function>")

#: A string computed at run time (an f-string), and a NumPy random generator.
STRING = AbstractOpaque(str)
GENERATOR = AbstractOpaque(np.random.Generator)


def erase_functions(a: AbstractValue) -> AbstractValue:
    """`a` with every function type replaced by one marker.

    Function types name the graphs they call (before or after specialization, in one
    inference or another); erasing them compares the data types alone.
    """
    if isinstance(a, AbstractFunction):
        return FUNCTION
    if isinstance(a, AbstractTuple):
        return AbstractTuple(tuple(erase_functions(e) for e in a.elements))
    if isinstance(a, AbstractStack):
        return AbstractStack(erase_functions(a.element))
    if isinstance(a, AbstractDict):
        return AbstractDict(a.keys, tuple(erase_functions(e) for e in a.values))
    if isinstance(a, AbstractList):
        return AbstractList(erase_functions(a.element), a.value)
    return a


def merge_data(data: AbstractValue, like: AbstractValue) -> AbstractValue:
    """The data types of `data`, with the function types of `like` where it has functions.

    An erased function type (`FUNCTION`) where `like` has no value (the elements of ``[]``
    converted to a list of closures) is no value either: the list holds no function.
    """
    if isinstance(like, AbstractFunction):
        return like
    if data == FUNCTION and like is BOTTOM:
        return BOTTOM
    if isinstance(data, AbstractTuple) and isinstance(like, AbstractTuple):
        return AbstractTuple(tuple(merge_data(d, x) for d, x in zip(data.elements, like.elements)))
    if isinstance(data, AbstractList) and isinstance(like, AbstractList):
        return AbstractList(merge_data(data.element, like.element), data.value)
    if isinstance(data, AbstractStack) and isinstance(like, AbstractStack):
        return AbstractStack(merge_data(data.element, like.element))
    if (
        isinstance(data, AbstractDict)
        and isinstance(like, AbstractDict)
        and data.keys == like.keys
    ):
        return AbstractDict(
            data.keys, tuple(merge_data(d, x) for d, x in zip(data.values, like.values))
        )
    return data

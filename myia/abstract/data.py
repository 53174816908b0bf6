"""Abstract values: what type inference knows about a value at compile time.

They are immutable and compare structurally, so that a tuple of them (an argument signature)
is a cache key. Each prints in Myia's notation: ``f64``, ``f32 x 3 x 10``, ``(f64, i64)``,
``[f64]`` for a list, ``stack[f64]`` for a stack, ``{a: f64}`` for a dict,
``Tree(left :: Tree | None, ...)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..records import field_names


class _Anything:
    """The value of an abstract value whose value is unknown at compile time."""

    def __repr__(self) -> str:
        return "ANYTHING"


ANYTHING: Any = _Anything()

DTYPE_SHORT = {
    "bool": "bool",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
}


class AbstractValue:
    """Base class of abstract values."""

    __slots__ = ()

    def __str__(self) -> str:
        return show(self)


@dataclass(frozen=True, repr=False)
class AbstractScalar(AbstractValue):
    """A scalar of a NumPy dtype (by name, e.g. ``"float64"``).

    ``weak`` marks Python scalars (``int``, ``float``, ``bool``): as in NumPy, they take the
    dtype of the arrays and NumPy scalars they are combined with. ``value`` is the value when
    it is known at compile time, else `ANYTHING`.
    """

    dtype: str
    weak: bool = False
    value: Any = ANYTHING

    def __repr__(self) -> str:
        return show(self)


@dataclass(frozen=True, repr=False)
class AbstractArray(AbstractValue):
    """A NumPy array of a dtype and a shape whose rank is known at compile time.

    A dimension is an int, or None where it is known only at run time (printed ``?``): the
    join of arrays of different shapes (two branches, two iterations of a loop) keeps the
    dimensions they agree on and makes the others unknown (``f64 x ? x 64``). The arrays
    given as arguments have known shapes.
    """

    dtype: str
    shape: tuple[int | None, ...]

    def __repr__(self) -> str:
        return show(self)


@dataclass(frozen=True, repr=False)
class AbstractTuple(AbstractValue):
    """A tuple: its length and the abstract value of each element are known."""

    elements: tuple[AbstractValue, ...]

    def __repr__(self) -> str:
        return show(self)

    def __hash__(self) -> int:
        # Cached: the types of a loop over a long tuple hash it many times.
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash(self.elements)
            object.__setattr__(self, "_hash", h)
        return h


@dataclass(frozen=True, repr=False)
class AbstractList(AbstractValue):
    """A list of any length whose elements all have the abstract value ``element``.

    ``value`` is the tuple of the elements when they are known at compile time (a literal
    list of constants: ``x[[0, 2]]``, ``np.transpose(x, [1, 0])``), else `ANYTHING`.
    """

    element: AbstractValue
    value: Any = ANYTHING

    def __repr__(self) -> str:
        return show(self)


@dataclass(frozen=True, repr=False)
class AbstractStack(AbstractValue):
    """A stack of any depth whose elements all have the abstract value ``element``.

    The forward pass of a loop's gradient pushes each iteration's backpropagator on one; the
    backward pass pops them (see `myia.grad.loops`).
    """

    element: AbstractValue

    def __repr__(self) -> str:
        return show(self)


@dataclass(frozen=True, repr=False)
class AbstractDict(AbstractValue):
    """A dict whose (string) keys are known, each with the abstract value of its value."""

    keys: tuple[str, ...]
    values: tuple[AbstractValue, ...]

    def __repr__(self) -> str:
        return show(self)

    def get(self, key: str) -> AbstractValue:
        return self.values[self.keys.index(key)]


@dataclass(frozen=True, repr=False)
class AbstractRecord(AbstractValue):
    """An instance of a dataclass, with the abstract value of each field (in field order).

    A field that refers to the record's own class holds `SelfRef`; `field` unfolds it, so a
    tree of any shape has one finite abstract value. ``value`` is the tuple of the fields'
    values where the record is a literal of ints and None (``Pt(1, None)``: axes of ``vmap``
    known at compile time), else `ANYTHING`; its fields are broadened as any record's.
    """

    cls: type
    fields: tuple[AbstractValue, ...]
    value: Any = ANYTHING

    def __repr__(self) -> str:
        return show(self)

    @property
    def names(self) -> tuple[str, ...]:
        return field_names(self.cls)

    def field(self, name: str) -> AbstractValue:
        """The abstract value of field `name`, with references to the class unfolded."""
        return unfold(self.fields[self.names.index(name)], self)


@dataclass(frozen=True, repr=False)
class SelfRef(AbstractValue):
    """Inside the record of class ``cls``, a reference to that same record (recursion)."""

    cls: type

    def __repr__(self) -> str:
        return show(self)


@dataclass(frozen=True, repr=False)
class AbstractUnion(AbstractValue):
    """One of several abstract values (e.g. ``Tree | None``)."""

    options: frozenset[AbstractValue]

    def __repr__(self) -> str:
        return show(self)


def _key(value: Any) -> Any:
    if isinstance(value, slice):
        return ("slice", value.start, value.stop, value.step)
    if isinstance(value, tuple):
        return tuple(_key(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return value


@dataclass(frozen=True, repr=False, eq=False)
class AbstractConstant(AbstractValue):
    """A value known at compile time that is not data: None, a string, a class, a slice..."""

    value: Any

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is AbstractConstant
            and type(self.value) is type(other.value)
            and _key(self.value) == _key(other.value)
        )

    def __hash__(self) -> int:
        return hash((type(self.value), _key(self.value)))

    def __repr__(self) -> str:
        return show(self)


@dataclass(frozen=True, repr=False)
class AbstractOpaque(AbstractValue):
    """A value known only by its Python class at compile time, whose content Myia never reads.

    A string computed at run time (an f-string: ``cls`` is ``str``) or a NumPy random
    generator passed as an argument (``numpy.random.Generator``), which the primitives that
    draw advance in program order.
    """

    cls: type

    def __repr__(self) -> str:
        return show(self)


@dataclass(frozen=True, repr=False)
class AbstractSlice(AbstractValue):
    """A slice whose bounds are not all known at compile time (fine for lists).

    `length` is ``stop - start`` where it is known at compile time (``x[i:i + k]``): of an
    array, the slice is then a window of that length (`myia.primitives.windows`).
    """

    start: AbstractValue
    stop: AbstractValue
    step: AbstractValue
    length: int | None = None

    def __repr__(self) -> str:
        return show(self)


@dataclass(frozen=True, repr=False)
class GraphFunction:
    """A graph, closed over the inference context of its parent (None when top-level)."""

    graph: Any
    context: Any = None

    def __repr__(self) -> str:
        return f"{self.graph.name}"


class _NeverCalled:
    """The function of a partial application of a function never called (`Dead`)."""

    def __repr__(self) -> str:
        return "never called"


#: Stands for the function of a partial application whose function is never called: its
#: bound arguments are still read (``partial_arg``, in the tangent of a choice at run time).
NEVER_CALLED = _NeverCalled()


def _option_key(o: Any) -> tuple:
    while isinstance(o, PartialFunction):
        o = o.fn
    if isinstance(o, GraphFunction):
        return (0, o.graph.debug.id)
    return (1, type(o).__name__, str(o))


def in_order(options: frozenset) -> list:
    """The callees of a function value in a fixed order (graphs in the order they were made).

    Inference calls each option in turn and reports the first error it meets, so the order
    must not depend on hashing (it would change with ``PYTHONHASHSEED``).
    """
    return sorted(options, key=_option_key)


@dataclass(frozen=True, repr=False)
class PartialFunction:
    """A function (a callee of an `AbstractFunction`) with its first arguments bound."""

    fn: Any
    args: tuple[AbstractValue, ...]

    def __repr__(self) -> str:
        return f"partial({self.fn!r}, {', '.join(map(show, self.args))})"


@dataclass(frozen=True, repr=False)
class AbstractFunction(AbstractValue):
    """A function value: one of several callees.

    Each callee is a `Primitive`, an `Operation`, a class (calling it constructs an instance),
    a `GraphFunction` or a `PartialFunction`.
    """

    options: frozenset[Any]

    def __repr__(self) -> str:
        return show(self)

    def get_unique(self) -> Any:
        """The only callee (raises ValueError if there are several)."""
        if len(self.options) != 1:
            raise ValueError("several possible functions")
        return next(iter(self.options))


@dataclass(frozen=True, repr=False)
class AbstractKeyword(AbstractValue):
    """A keyword argument ``key=value`` at a call site."""

    key: str
    value: AbstractValue

    def __repr__(self) -> str:
        return f"{self.key}={show(self.value)}"


class _Env(AbstractValue):
    """The sensitivity of a function value: sensitivities of its free variables, by key."""

    def __repr__(self) -> str:
        return "Env"


ENV: Any = _Env()


class _Bottom(AbstractValue):
    """The abstract value of a computation that never returns (raises or loops forever)."""

    def __repr__(self) -> str:
        return "⊥"


BOTTOM: Any = _Bottom()

NONE = AbstractConstant(None)


class _Unassigned:
    """The value of a local variable on the paths where it is not assigned yet.

    The frontend gives it to a variable that some read may find unassigned (Python raises
    ``UnboundLocalError`` there), beside a flag that says whether it is assigned; each such
    read tests the flag first (`myia.frontend.blocks`). It joins with any value as that value
    (`myia.abstract.lattice.join`): no read ever uses it.
    """

    def __repr__(self) -> str:
        return "UNASSIGNED"

    def __reduce__(self) -> str:
        return "UNASSIGNED"


UNASSIGNED: Any = _Unassigned()


def known(shape: tuple[int | None, ...]) -> bool:
    """Whether every dimension of `shape` is known at compile time."""
    return None not in shape


def has_unknown_dims(a: Any) -> bool:
    """Whether abstract value `a` holds an array with a dimension known only at run time."""
    if isinstance(a, AbstractArray):
        return None in a.shape
    if isinstance(a, AbstractTuple):
        return any(has_unknown_dims(e) for e in a.elements)
    if isinstance(a, (AbstractList, AbstractStack)):
        return has_unknown_dims(a.element)
    if isinstance(a, AbstractDict):
        return any(has_unknown_dims(e) for e in a.values)
    if isinstance(a, AbstractRecord):
        return any(has_unknown_dims(e) for e in a.fields)
    if isinstance(a, AbstractUnion):
        return any(has_unknown_dims(e) for e in a.options)
    if isinstance(a, AbstractKeyword):
        return has_unknown_dims(a.value)
    return False


def declare_unknown_dims(new: Any, old: Any) -> None:
    """Record on graph `new`, made from specialized graph `old`, its parameters' types.

    Where `old` takes arrays of unknown dimensions (a loop whose state changes shape), type
    inference of `new` (its gradient) widens the arguments it is called with to them at
    once (``flags["param_types"]``), as it did for `old`.
    """
    types = tuple(p.abstract for p in old.parameters)
    if any(t is not None and has_unknown_dims(t) for t in types):
        new.flags["param_types"] = types


def unfold(value: AbstractValue, record: AbstractRecord) -> AbstractValue:
    """Replace references to ``record.cls`` in `value` by `record` itself."""
    if isinstance(value, SelfRef) and value.cls is record.cls:
        return record
    if isinstance(value, AbstractUnion):
        return AbstractUnion(frozenset(unfold(o, record) for o in value.options))
    return value


def fold(value: AbstractValue, cls: type) -> AbstractValue:
    """Replace records of class `cls` in `value` by `SelfRef` (the inverse of `unfold`)."""
    if isinstance(value, AbstractRecord) and value.cls is cls:
        return SelfRef(cls)
    if isinstance(value, AbstractUnion):
        return AbstractUnion(frozenset(fold(o, cls) for o in value.options))
    return value


# Printing -----------------------------------------------------------------------------------


def show(a: Any, top: bool = True) -> str:
    """Print an abstract value in Myia's notation."""
    if isinstance(a, AbstractScalar):
        return DTYPE_SHORT.get(a.dtype, a.dtype)
    if isinstance(a, AbstractArray):
        if a.shape == ():  # a 0-d array, not a scalar
            return f"{DTYPE_SHORT.get(a.dtype, a.dtype)} x ()"
        dims = ["?" if d is None else str(d) for d in a.shape]
        return " x ".join([DTYPE_SHORT.get(a.dtype, a.dtype), *dims])
    if isinstance(a, AbstractTuple):
        if len(a.elements) == 1:
            return f"({show(a.elements[0])},)"
        return "(" + ", ".join(show(e) for e in a.elements) + ")"
    if isinstance(a, AbstractList):
        return f"[{show(a.element)}]"
    if isinstance(a, AbstractStack):
        return f"stack[{show(a.element)}]"
    if isinstance(a, AbstractDict):
        return "{" + ", ".join(f"{k}: {show(v)}" for k, v in zip(a.keys, a.values)) + "}"
    if isinstance(a, AbstractRecord):
        if not top:
            return a.cls.__name__
        inner = ", ".join(f"{n} :: {show(v, False)}" for n, v in zip(a.names, a.fields))
        return f"{a.cls.__name__}({inner})"
    if isinstance(a, SelfRef):
        return a.cls.__name__
    if isinstance(a, AbstractUnion):
        opts = sorted((show(o, False) for o in a.options), key=lambda s: (s == "None", s))
        return " | ".join(opts)
    if isinstance(a, AbstractConstant):
        v = a.value
        if v is None:
            return "None"
        if isinstance(v, type):
            return v.__name__
        return repr(v)
    if isinstance(a, AbstractFunction):
        names = sorted(_fn_name(o) for o in a.options)
        if not names:
            return "<no function>"  # a function never called (a branch never taken)
        return " | ".join(names) if len(names) > 1 else f"<function {names[0]}>"
    if isinstance(a, AbstractKeyword):
        return repr(a)
    if isinstance(a, AbstractOpaque):
        return a.cls.__name__
    if isinstance(a, AbstractSlice):
        return f"slice({show(a.start)}, {show(a.stop)}, {show(a.step)})"
    if a is BOTTOM:
        return "⊥"
    if a is ENV:
        return "Env"
    return repr(a)


def _fn_name(fn: Any) -> str:
    if isinstance(fn, type):
        return fn.__name__
    return getattr(fn, "name", None) or repr(fn)

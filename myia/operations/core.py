"""`Operation`: a user-facing operation (an operator or a builtin) resolved by argument kinds.

Python's operators and builtins are polymorphic: ``a + b`` adds numbers and arrays elementwise,
concatenates tuples and lists, and calls ``__add__`` on a dataclass. The frontend emits one
`Operation` for each; the interpreter (on runtime values) and type inference (on abstract
values) both resolve it with the same `dispatch` function, applied to the *kinds* of the
arguments, into a `Primitive`, a Python function (parsed by Myia on demand), or another
operation.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ..records import is_namedtuple_class, is_record_class


class Array:
    """Kind of a NumPy array."""


class Function:
    """Kind of a function value: a graph, closure, primitive, operation or partial."""


@dataclasses.dataclass(frozen=True)
class UnionKind:
    """Kind of a union: most operations do not accept it.

    `classes` are the Python classes of its options (records' classes and ``NoneType``).
    """

    classes: tuple[type, ...]


class NoMatch(Exception):
    """Raised by a dispatch function when no rule applies to the argument kinds."""


class Mutation(NoMatch):
    """No rule applies because ``obj.method`` names a method that mutates a list, dict or set.

    Type inference reports it as the `MyiaSyntaxError` a mutating statement gets
    (``xs.pop()`` used as a value, ``d.setdefault(k, v)``): Myia's values are immutable.
    """

    def __init__(self, kind: type, method: str):
        super().__init__()
        self.kind = kind
        self.method = method


def kind_of(value: Any) -> type:
    """Return the dispatch kind of a runtime value.

    Scalars are their own type (``float``, ``np.float32``...), arrays `Array`, containers their
    class, dataclass instances their class, classes ``type``, dtypes their class (a subclass of
    ``np.dtype``), and functions `Function`.
    """
    t = type(value)
    if t is float or t is int or t is bool or isinstance(value, np.generic):
        return t
    if t is np.ndarray:
        return Array
    if t in (tuple, list, dict, str, type(None), slice, type(NotImplemented)) or isinstance(
        value, type
    ):
        return t if not isinstance(value, type) else type
    if is_record_class(t):
        return t
    if isinstance(value, np.random.Generator):
        return np.random.Generator
    if isinstance(value, np.dtype):
        return t
    return Function


def is_record(kind: Any) -> bool:
    """Whether a kind is a record: a dataclass or a named tuple class."""
    return is_record_class(kind)


class Operation:
    """A polymorphic operation resolved by the kinds of its arguments.

    ``dispatch(*kinds)`` returns the callee for those kinds, or raises `NoMatch`.
    """

    #: Whether a named tuple argument is taken as the tuple of its fields (``p[0]``,
    #: ``len(p)``, ``a, b = p``, ``for x in p``, ``p + q``, ``p == q``): set by
    #: `sequence_operation` on the operations that read tuples as sequences.
    sequence = False

    def __init__(self, name: str, dispatch: Callable[..., Any], doc: str = ""):
        self.name = name
        self.dispatch = dispatch
        self.__doc__ = doc or dispatch.__doc__
        self._cache: dict[tuple[Any, ...], Any] = {}
        self._signature = inspect.signature(dispatch)

    def check_arity(self, n: int) -> None:
        """Raise `NoMatch` (with a message) if the operation takes no `n` arguments."""
        try:
            self._signature.bind(*range(n))
        except TypeError:
            raise NoMatch(f"wrong number of arguments to {self.name}(): {n} given") from None

    def resolve(self, kinds: tuple[Any, ...]) -> Any:
        """Return the callee for argument kinds `kinds` (cached); raise `NoMatch`."""
        try:
            return self._cache[kinds]
        except KeyError:
            pass
        except TypeError:
            self.check_arity(len(kinds))
            return self.dispatch(*kinds)
        self.check_arity(len(kinds))
        if self.sequence and any(is_namedtuple_class(k) for k in kinds):
            callee = self._as_tuples(kinds)
        else:
            callee = self.dispatch(*kinds)
        self._cache[kinds] = callee
        return callee

    def _as_tuples(self, kinds: tuple[Any, ...]) -> Any:
        """The callee for `kinds` whose named tuples are read as the tuples of their fields."""
        from .named_tuples import tuple_view

        mask = tuple(is_namedtuple_class(k) for k in kinds)
        callee = self.resolve(tuple(tuple if m else k for m, k in zip(mask, kinds)))
        return tuple_view(callee, mask)

    def __repr__(self) -> str:
        return self.name


def sequence_operation(op: Operation) -> Operation:
    """Mark `op` as reading tuples as sequences, named tuples included (`Operation.sequence`)."""
    op.sequence = True
    return op


def operation(fn: Callable[..., Any]) -> Operation:
    """Declare an operation whose dispatch function is the decorated function."""
    return Operation(fn.__name__.rstrip("_"), fn)

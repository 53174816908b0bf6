"""Lazy sensitivities of data structures: zeros and sparse lists, materialized on demand.

The backpropagator of an access (``t[i]``, ``r.name``, ``xs[i]``) returns a sensitivity of the
whole structure that is zero except where it was accessed. Built eagerly, a zero of a list
or a tree costs its size, and so does adding two of them: differentiating a loop over a list
or a recursion over a tree would take time quadratic in its size. Instead:

- the zero of a tuple, dict or record (`lazy_zeros`) is built one level deep: its members
  that are data structures themselves are `ZeroSens` placeholders, O(1) each;
- the zero of a list is a `ZeroSens`, and the sensitivity of a list accessed at one index is
  a `ListSens`: the contributions to its elements, kept as a tree of sums, so that adding
  two of them (`lazy_add`) is O(1);
- `gadd` treats a `ZeroSens` as its identity.

A lazy sensitivity stands for the concrete structure it describes (`LazySens.expand` builds
its first level, members lazy). It reads like one (indexing, slicing, attributes, `len`,
iteration, concatenation to a tuple), so that backpropagators and generated code use it
unchanged; the primitives that look at the type of a sensitivity expand it first. The
gradient a user receives is made concrete by `materialize` (primitive ``gmaterialize``,
applied by `myia.grad.api` to the gradients returned, and to the sensitivity passed to a
`custom_bprop`), in time linear in its size and without recursion (trees may be deep).

A lazy value is only ever the sensitivity of a tuple, list, dict or record: the sensitivity
of a number or an array is always concrete, so arithmetic never sees one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..records import field_names, is_record_class


def is_structure(x: Any) -> bool:
    """Whether `x` is a tuple, list, dict or dataclass instance (its zero may be lazy)."""
    t = type(x)
    return (
        (t is tuple and not is_stack(x))
        or t is list
        or t is dict
        or (not isinstance(x, type) and is_record_class(t))
    )


class LazySens:
    """A sensitivity of the tuple, list, dict or record ``like``, not built yet."""

    __slots__ = ("like", "_expanded")

    def __init__(self, like: Any):
        self.like = like
        self._expanded: Any = None

    def expand(self) -> Any:
        """The concrete first level of this sensitivity (its members may be lazy)."""
        out = self._expanded
        if out is None:
            out = self._expanded = self._build()
        return out

    def _build(self) -> Any:
        raise NotImplementedError

    # It reads like the structure it stands for.

    def __getitem__(self, key: Any) -> Any:
        return self.expand()[key]

    def __getattr__(self, name: str) -> Any:
        if name in ("like", "_expanded", "parts"):  # not set yet
            raise AttributeError(name)
        return getattr(self.expand(), name)

    def __len__(self) -> int:
        return len(self.like)

    def __iter__(self) -> Any:
        return iter(self.expand())

    def __add__(self, other: Any) -> Any:
        return self.expand() + other

    def __radd__(self, other: Any) -> Any:
        return other + self.expand()


class ZeroSens(LazySens):
    """The zero sensitivity of ``like``."""

    __slots__ = ()

    def _build(self) -> Any:
        return shallow_zeros(self.like)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return self.expand()[key]
        return member_zero(self.like[key])

    def __repr__(self) -> str:
        return f"ZeroSens({type(self.like).__name__})"


# The contributions to the elements of a list sensitivity: a tree of these tuples.
_AT = "at"  # (_AT, i, v): v added to element i
_SLICE = "slice"  # (_SLICE, s, vs): the elements of vs added to elements range(n)[s]
_DENSE = "dense"  # (_DENSE, values): values[j] added to element j
_SUM = "sum"  # (_SUM, a, b): the contributions of a and of b


class ListSens(LazySens):
    """A sensitivity of list ``like``: the sum of the contributions in ``parts``."""

    __slots__ = ("parts",)

    def __init__(self, like: list, parts: tuple):
        super().__init__(like)
        self.parts = parts

    def _build(self) -> list:
        like = self.like
        acc: list[Any] = [_NONE] * len(like)
        todo = [self.parts]
        while todo:
            p = todo.pop()
            kind = p[0]
            if kind is _SUM:
                todo.append(p[2])
                todo.append(p[1])
                continue
            if kind is _AT:
                pairs: Any = ((p[1], p[2]),)
            elif kind is _SLICE:
                pairs = zip(range(len(like))[p[1]], p[2])
            else:
                pairs = enumerate(p[1])
            for j, v in pairs:
                old = acc[j]
                acc[j] = v if old is _NONE else gadd_value(old, v)
        for j, v in enumerate(acc):
            if v is _NONE:
                acc[j] = member_zero(like[j])
        return acc

    def __repr__(self) -> str:
        return f"ListSens({len(self.like)})"


_NONE = object()


def list_sens(lst: list, index: Any, v: Any) -> ListSens:
    """The sensitivity of list `lst` whose element (or slice) `index` has sensitivity `v`."""
    if isinstance(index, slice):
        return ListSens(lst, (_SLICE, index, v))
    if index < 0:
        index += len(lst)
    return ListSens(lst, (_AT, index, v))


def _parts(x: Any) -> tuple:
    if isinstance(x, ListSens):
        return x.parts
    if isinstance(x, LazySens):
        x = x.expand()
    return (_DENSE, x)


# Zeros and sums -------------------------------------------------------------------------------


def member_zero(x: Any) -> Any:
    """The zero sensitivity of `x`, lazy (O(1)) if `x` is a data structure."""
    if isinstance(x, LazySens):
        return ZeroSens(_root_like(x))
    if is_structure(x):
        return ZeroSens(x)
    return zeros_value(x)


def _root_like(x: Any) -> Any:
    while isinstance(x, LazySens):
        x = x.like
    return x


def shallow_zeros(x: Any) -> Any:
    """The zero sensitivity of data structure `x`, built one level deep."""
    t = type(x)
    if t is tuple:
        return tuple(member_zero(v) for v in x)
    if t is list:
        return [member_zero(v) for v in x]
    if t is dict:
        return {k: member_zero(v) for k, v in x.items()}
    return _record(t, [member_zero(getattr(x, n)) for n in field_names(t)])


def lazy_zeros(x: Any) -> Any:
    """The zero sensitivity of a data structure or a lazy sensitivity `x`.

    A list or a record gives a `ZeroSens` (O(1): the zero of a tree that a recursion walks
    costs nothing until read); a tuple or dict its first level, whose members that are data
    structures are `ZeroSens`; a lazy sensitivity the zero of what it stands for.
    """
    if isinstance(x, LazySens):
        x = _root_like(x)
    t = type(x)
    if t is list or (t is not tuple and t is not dict):
        return ZeroSens(x)
    return shallow_zeros(x)


def lazy_add(a: Any, b: Any) -> Any:
    """The sum of two sensitivities of the same structure, one of which at least is lazy."""
    if isinstance(a, ZeroSens):
        return b
    if isinstance(b, ZeroSens):
        return a
    if isinstance(a, ListSens) or isinstance(b, ListSens):
        like = a.like if isinstance(a, ListSens) else b.like
        return ListSens(like, (_SUM, _parts(a), _parts(b)))
    raise AssertionError(f"cannot add sensitivities {a!r} and {b!r}")


def concrete(x: Any) -> Any:
    """`x`, with its first level built if it is a lazy sensitivity."""
    return x.expand() if isinstance(x, LazySens) else x


# Materialization ------------------------------------------------------------------------------

_BUILD = object()


def materialize(d: Any) -> Any:
    """The sensitivity `d` with every lazy part built: plain tuples, lists, dicts, records.

    Linear in the size of the result, without recursion. An array that cannot be written (a
    zero the gradient shares between calls, see `myia.primitives.grad.zero_of_type`) is
    copied: the user may update what they receive in place.
    """
    if not (isinstance(d, LazySens) or is_structure(d)):
        return _own(d)
    if _built(d, 0):
        return d
    out: list[Any] = []
    # Items: (value, zero) to visit (`zero`: build the zero of `value`), or
    # (_BUILD, (kind, count)) to build a structure from the last `count` results.
    todo: list[tuple[Any, Any]] = [(d, False)]
    while todo:
        x, zero = todo.pop()
        if x is _BUILD:
            kind, n = zero
            items = out[len(out) - n :] if n else []
            del out[len(out) - n :]
            out.append(_assemble(kind, items))
            continue
        if zero:
            x = _root_like(x)
        elif isinstance(x, ZeroSens):
            x, zero = _root_like(x), True
        elif isinstance(x, LazySens):
            x = x.expand()
        t = type(x)
        if (t is tuple and not is_stack(x)) or t is list:
            members: Any = x
            kind: Any = t
        elif t is dict:
            members, kind = list(x.values()), (dict, tuple(x))
        elif not isinstance(x, type) and is_record_class(t):
            members, kind = [getattr(x, n) for n in field_names(t)], t
        else:
            out.append(zeros_value(x) if zero else _own(x))
            continue
        todo.append((_BUILD, (kind, len(members))))
        for m in reversed(members):
            todo.append((m, zero))
    return out[0]


def _built(d: Any, depth: int) -> bool:
    """Whether `d` is tuples (a few levels) of numbers and writable arrays: nothing to do."""
    t = type(d)
    if t is np.ndarray:
        return d.flags.writeable
    if t is float or t is int:
        return True
    return t is tuple and depth < 4 and not is_stack(d) and all(_built(x, depth + 1) for x in d)


def _own(x: Any) -> Any:
    """`x`, or a copy of it if it is an array that cannot be written."""
    if type(x) is np.ndarray and not x.flags.writeable:
        return x.copy()
    return x


def _assemble(kind: Any, items: list[Any]) -> Any:
    if kind is tuple:
        return tuple(items)
    if kind is list:
        return items
    if type(kind) is tuple:
        return dict(zip(kind[1], items))
    return _record(kind, items)


from .grad import _record, gadd_value, zeros_value  # noqa: E402
from .stack import is_stack  # noqa: E402

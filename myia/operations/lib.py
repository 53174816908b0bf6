"""Library code written in Myia's Python subset, parsed by Myia like user code.

Operations resolve to these functions for the cases that are not a single primitive: the
iteration protocol behind ``for`` loops, builtins over iterables. Being
ordinary Myia code, they are inferred, differentiated and optimized like the user's code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..primitives import P
from .ops import is_record_, myia_hasnext, myia_iter, myia_next

# Iteration protocol: iter(x) gives an iterator state; hasnext(it) and next(it) -> (x, it').


@dataclass(frozen=True)
class Range:
    """``range(start, stop, step)``: its own iterator state.

    Its bounds stay known at compile time where they are (``range(1, x.ndim)``), so that
    ``tuple(range(3))`` is a tuple, as in Python.
    """

    __myia_constant_fields__ = True

    start: int
    stop: int
    step: int

    def __myia_iter__(self):
        return self

    def __myia_hasnext__(self):
        # start < stop for a positive step, start > stop for a negative one (never zero).
        return (self.stop - self.start) * self.step > 0

    def __myia_next__(self):
        return self.start, Range(self.start + self.step, self.stop, self.step)

    def __len__(self):
        if self.step > 0:
            n = (self.stop - self.start + self.step - 1) // self.step
        else:
            n = (self.start - self.stop - self.step - 1) // -self.step
        return P.maximum(n, 0)

    def __contains__(self, x):
        """``x in r``: between the bounds, on a step; a float where it equals an element."""
        if self.step > 0:
            inside = self.start <= x and x < self.stop
        else:
            inside = self.stop < x and x <= self.start
        if not inside:
            return False
        if not isinstance(x, int):  # a float (finite: inside): exactly an int, or in none
            if int(x) != x:
                return False
            x = int(x)
        return (x - self.start) % self.step == 0

    def __getitem__(self, i):
        """``r[i]``: an int (Python's IndexError out of range); ``r[a:b:c]``: a range."""
        n = len(self)
        if isinstance(i, slice):
            start, stop, step = slice_indices(i, n)
            return Range(
                self.start + start * self.step, self.start + stop * self.step, self.step * step
            )
        if isinstance(i, float):
            raise TypeError("range indices must be integers or slices, not float")
        if i < 0:
            i = i + n
        if i < 0 or i >= n:
            raise IndexError("range object index out of range")
        return self.start + i * self.step


def slice_indices(s, n):
    """Python's ``s.indices(n)``: the bounds and step of slice `s` of a length-`n` sequence."""
    start, stop, step = P.slice_bounds(s)
    if step is None:
        step = 1
    elif step == 0:
        raise ValueError("slice step cannot be zero")
    lower = -1 if step < 0 else 0
    upper = n + lower
    return (
        _slice_bound(start, n, lower, upper, upper if step < 0 else lower),
        _slice_bound(stop, n, lower, upper, lower if step < 0 else upper),
        step,
    )


def _slice_bound(b, n, lower, upper, default):
    """A bound of a slice of a length-`n` sequence, clipped to ``[lower, upper]`` (Python's)."""
    if b is None:
        return default
    if b < 0:
        b = b + n
        if b < lower:
            return lower
        return b
    if b > upper:
        return upper
    return b


def reversed_(xs):
    """``reversed(xs)``: a range backwards, or a sequence's elements in reverse order.

    Of a tuple, a list, a dict view or the rows of an array.
    """
    if _is_view(xs):
        return xs.items[::-1]
    if isinstance(xs, Range):
        n = len(xs)
        return Range(xs.start + (n - 1) * xs.step, xs.start - xs.step, -xs.step)
    return xs[::-1]


def _index(x):
    """`x` as an integer bound of a ``range``; Python's TypeError for a float or an array.

    A 0-d array of integers is its integer, as in Python.
    """
    if isinstance(x, float):
        raise TypeError("'float' object cannot be interpreted as an integer")
    if isinstance(x, tuple):  # ``range(x.shape)``
        raise TypeError("'tuple' object cannot be interpreted as an integer")
    if isinstance(x, np.ndarray):
        if x.ndim != 0 or not np.issubdtype(x.dtype, np.integer):
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(x)
    return x


def range1(stop):
    return Range(0, _index(stop), 1)


def range2(start, stop):
    return Range(_index(start), _index(stop), 1)


def range3(start, stop, step):
    start, stop, step = _index(start), _index(stop), _index(step)
    if step == 0:
        raise ValueError("range() arg 3 must not be zero")
    return Range(start, stop, step)


def unpack(xs, n):
    """``a, b = xs``: `xs`, after checking that it has `n` elements (Python's ValueError)."""
    k = len(xs)
    if k > n:
        raise ValueError(f"too many values to unpack (expected {n})")
    if k < n:
        raise ValueError(f"not enough values to unpack (expected {n}, got {k})")
    return xs


def unpack_at_least(xs, n):
    """``a, *rest = xs``: `xs`, after checking that it has at least `n` elements."""
    k = len(xs)
    if k < n:
        raise ValueError(f"not enough values to unpack (expected at least {n}, got {k})")
    return xs


def unpack_view(xs, n):
    """``a, b = d.values()``: the tuple of the view's elements, of `n` elements."""
    return unpack(xs.items, n)


def unpack_view_at_least(xs, n):
    """``a, *rest = d.values()``: the tuple of the view's elements, of `n` or more."""
    return unpack_at_least(xs.items, n)


def unpack_unchecked(xs, n):
    return xs


def dataclass_replacer(cls, names):
    """``dataclasses.replace(obj, **changes)`` of instances of dataclass `cls`.

    As Python's: ``cls(**changes, **kept)``, `kept` the fields of ``__init__`` (`names`, a
    tuple of constants) that `changes` does not name, as `obj` holds them. A name that is no
    such field is ``cls()``'s error (a `MyiaTypeError` at the user's line); a field not set by
    ``__init__`` gets its default again.
    """

    def replace(obj, **changes):
        keys, values = _kept_fields(obj, names, changes)
        return cls(**changes, **P.dict_from_items(keys, values))

    return replace


def _kept_fields(obj, names, changes):
    """The names (constants) among `names` that `changes` does not set, and their values."""
    if P.tuple_len(names) == 0:
        return (), ()
    keys, values = _kept_fields(obj, names[1:], changes)
    if names[0] in P.dict_keys(changes):
        return keys, values
    return (names[0],) + keys, (P.record_getattr(obj, names[0]),) + values


def star_tuple(xs):
    """``*xs`` of a tuple (in a tuple display or a call): its elements, the tuple itself."""
    return xs


def view_items(xs):
    """``*xs`` of a dict view (`DictView`): the tuple of its elements."""
    return xs.items


def _is_view(xs):
    return isinstance(xs, DictKeys) or isinstance(xs, DictValues) or isinstance(xs, DictItems)


@dataclass(frozen=True)
class SequenceIter:
    """Iterator over a list or the rows of an array: the sequence and the next index."""

    seq: object
    index: int

    def __myia_iter__(self):
        return self

    def __myia_hasnext__(self):
        return self.index < len(self.seq)

    def __myia_next__(self):
        return self.seq[self.index], SequenceIter(self.seq, self.index + 1)


def sequence_iter(seq):
    known = P.list_constants(seq)
    if known is None:
        return SequenceIter(seq, 0)
    return known  # strings known at compile time: iterated as a tuple (``sorted(d)``)


def tuple_iter(t):
    return t


def tuple_hasnext(t):
    return P.tuple_len(t) > 0


def tuple_next(t):
    # A tuple of values of one type is a list after its first element: the loop's first
    # iteration is unrolled (a variable starting as ``0`` may become an array there), the
    # others are one loop, whatever the tuple's length. Other tuples are unrolled.
    if P.tuple_len(t) == 0:
        # Never taken in a loop, which tests the length first: the case of the empty tuple
        # of an iterator that may be a tuple of any of several lengths (`myia.infer.cases`).
        raise StopIteration()
    if P.tuple_loops(t):
        return t[0], SequenceIter(P.tuple_as_list(t), 1)
    return t[0], t[1:]


def dict_iter(d):
    return P.dict_keys(d)


@dataclass(frozen=True)
class Zip:
    """``zip(*its)``: a tuple of iterator states."""

    iters: tuple

    def __myia_iter__(self):
        return self

    def __myia_hasnext__(self):
        return _all_hasnext(self.iters)

    def __myia_next__(self):
        values, iters = _all_next(self.iters)
        return values, Zip(iters)


def _all_hasnext(its):
    # The iterators over tuples first: their tests are known at compile time, so that the
    # loop is unrolled over the shortest tuple whatever the order of the arguments.
    return _tuples_hasnext(its) and _others_hasnext(its)


def _tuples_hasnext(its):
    if P.tuple_len(its) == 0:
        return True
    if isinstance(its[0], tuple):
        return myia_hasnext(its[0]) and _tuples_hasnext(its[1:])
    return _tuples_hasnext(its[1:])


def _others_hasnext(its):
    if P.tuple_len(its) == 0:
        return True
    if isinstance(its[0], tuple):
        return _others_hasnext(its[1:])
    return myia_hasnext(its[0]) and _others_hasnext(its[1:])


def _all_next(its):
    if P.tuple_len(its) == 0:
        return (), ()
    x, it = myia_next(its[0])
    xs, rest = _all_next(its[1:])
    return (x,) + xs, (it,) + rest


def print_(*values, sep=" ", end="\n", file=None):
    """Python's ``print``: `P.print_` on the tuple of the values."""
    return P.print_(values, sep, end, file)


def repr_(x):
    """Python's ``repr``: a string made at run time."""
    return P.format_(x, "r", "")


def str_(x=""):
    """Python's ``str`` of a number, an array or a string: a string made at run time."""
    return P.format_(x, "s", "")


def format_(x, spec=""):
    """Python's ``format``."""
    return P.format_(x, "", spec)


def zip_(*seqs):
    return Zip(_all_iter(seqs))


def _all_iter(seqs):
    if P.tuple_len(seqs) == 0:
        return ()
    return (myia_iter(seqs[0]),) + _all_iter(seqs[1:])


@dataclass(frozen=True)
class Enumerate:
    """``enumerate(x)``: a counter and an iterator state."""

    count: int
    it: object

    def __myia_iter__(self):
        return self

    def __myia_hasnext__(self):
        return myia_hasnext(self.it)

    def __myia_next__(self):
        x, it = myia_next(self.it)
        return (self.count, x), Enumerate(self.count + 1, it)


def enumerate_(x, start=0):
    return Enumerate(start, myia_iter(x))


# Builtins over iterables ----------------------------------------------------------------------


def sum_(xs, start=0):
    if isinstance(xs, np.ndarray) and xs.ndim >= 2:
        return _sum_rows(xs, start)
    acc = start
    if isinstance(xs, list):
        acc = P.list_sum_start(start, xs)
    for x in xs:
        acc = acc + x
    return acc


def map_(fn, *seqs):
    """Python's ``map``, evaluated as its generator expression ``(fn(*a) for a in zip(*seqs))``.

    A tuple where the length of the iteration is known at compile time, else a list.
    """
    it = zip_(*seqs)
    acc = comp_start(it)
    for args in it:
        acc = comp_add(acc, fn(*args))
    return comp_end(acc, it)


def tuple_(xs=()):
    # A tuple when the length of the iteration is known at compile time, else a list.
    if isinstance(xs, tuple):
        if is_record_(xs):  # a named tuple: the tuple of its fields
            return P.record_fields(xs)
        return xs
    if _is_view(xs):
        return xs.items
    if isinstance(xs, Range) and _capped(len(xs)) >= 0:
        return P.range_tuple(xs.start, xs.stop, xs.step)
    acc = comp_start(xs)
    for x in xs:
        acc = comp_add(acc, x)
    return comp_end(acc, xs)


def list_(xs=()):
    acc = []
    for x in xs:
        acc = acc + [x]
    return acc


def round_(x, ndigits=None):
    """``round(x)``: the integer nearest to scalar `x` (halves to even), an int.

    `ndigits` is None here: the operation ``round`` refuses the other calls at compile time.
    """
    if isinstance(x, np.ndarray):
        raise TypeError("type numpy.ndarray doesn't define __round__ method")
    if isinstance(x, (int, np.integer)):  # exactly: through a float, 2**63 - 1 was 2**63
        return int(x)
    return int(P.rint(x))


def round_float(x, ndigits):
    """``round(x, ndigits)`` of a Python float: Python's, exactly (`P.round_decimal`)."""
    return P.round_decimal(x, ndigits)


def round_int(x, ndigits):
    """``round(x, ndigits)`` of a Python int or bool: an int, halves to even.

    The multiple of ``10 ** -ndigits`` nearest to `x`: ``round(25, -1)`` is 20, ``round(35,
    -1)`` 40.
    """
    n = int(ndigits)  # (a NumPy integer counts as its Python int)
    if n >= 0:
        return int(x)
    m = 10 ** (-n)
    q, r = divmod(int(x), m)
    if 2 * r > m or (2 * r == m and q % 2 == 1):
        q = q + 1
    return q * m


def any_(xs):
    for x in xs:
        if x:
            return True
    return False


def all_(xs):
    for x in xs:
        if not x:
            return False
    return True


def _sum_rows(a, start):
    # Python's ``start + a[0] + a[1] + ...`` over the rows of an array: ``start`` broadcasts
    # on the first row. An array with no rows sums to ``start`` (its shape is static).
    if len(a) == 0:
        return start
    return start + np.sum(a, axis=0)


def max_iter(xs):
    it = myia_iter(xs)
    if not myia_hasnext(it):
        raise ValueError("max() arg is an empty sequence")
    best, it = myia_next(it)
    while myia_hasnext(it):
        x, it = myia_next(it)
        if x > best:
            best = x
    return best


def min_iter(xs):
    it = myia_iter(xs)
    if not myia_hasnext(it):
        raise ValueError("min() arg is an empty sequence")
    best, it = myia_next(it)
    while myia_hasnext(it):
        x, it = myia_next(it)
        if x < best:
            best = x
    return best


def contains_record(x, xs):
    """``x in xs`` of a dataclass instance: ``xs.__contains__(x)``."""
    return xs.__contains__(x)


def contains(x, xs):
    for y in xs:
        if x == y:
            return True
    return False


def false_(x):
    return False


def true_(x):
    return True


def true_2(x, y):
    return True


def false_2(x, y):
    return False


def is_none_2(x, y):
    return P.is_none(x)


def is_not_none_2(x, y):
    return not P.is_none(x)


def is_instance_2(x, classes):
    return P.is_instance(x, classes)


def len_truth(x):
    return len(x) != 0


def tuple_eq(a, b):
    if P.tuple_len(a) != P.tuple_len(b):
        return False
    if P.tuple_len(a) == 0:
        return True
    return a[0] == b[0] and tuple_eq(a[1:], b[1:])


def tuple_ne(a, b):
    return not tuple_eq(a, b)


def getattr_default(obj, name, default):
    return getattr(obj, name)


def default_(obj, name, default):
    return default


def const_ne(a, b):
    return not P.const_eq(a, b)


def const_le(a, b):
    return not P.const_lt(b, a)


def const_gt(a, b):
    return P.const_lt(b, a)


def const_ge(a, b):
    return not P.const_lt(a, b)


def pos(x):
    return x


# Comprehensions (see `myia.frontend.comprehensions`) ------------------------------------------


def comp_start(xs):
    # A tuple when the length of the iteration is known at compile time, else a list. Over
    # tuples that loop (`tuple_next`), the elements are collected in a list, made a tuple of
    # the iteration's length at the end (`comp_end`): a tuple growing in a loop has no type.
    it = myia_iter(xs)
    if _static_length(it):
        if _loops(it):
            return TupleAcc([], _like(it))
        return ()
    return []


@dataclass(frozen=True)
class TupleAcc:
    """The elements of a tuple being built by a loop, and a tuple of the length it will have."""

    items: list
    like: tuple


def _loops(it):
    # Whether a static iteration is a loop: every tuple it iterates over loops.
    if isinstance(it, tuple):
        return P.tuple_loops(it)
    if isinstance(it, Enumerate):
        return _loops(it.it)
    return _all_loop(it.iters)


def _all_loop(its):
    if P.tuple_len(its) == 0:
        return True
    return _loops(its[0]) and _all_loop(its[1:])


def _like(it):
    # A tuple as long as the static iteration `it`: its shortest tuple.
    if isinstance(it, tuple):
        return it
    if isinstance(it, Enumerate):
        return _like(it.it)
    return _shortest(it.iters)


def _shortest(its):
    first = _like(its[0])
    if P.tuple_len(its) == 1:
        return first
    rest = _shortest(its[1:])
    if P.tuple_len(rest) < P.tuple_len(first):
        return rest
    return first


def _static_length(it):
    if isinstance(it, tuple):
        return True
    if isinstance(it, Enumerate):
        return _static_length(it.it)
    if isinstance(it, Zip):
        return _all_static(it.iters)
    return False


def _all_static(its):
    if P.tuple_len(its) == 0:
        return True
    return _static_length(its[0]) and _all_static(its[1:])


def comp_add(acc, x):
    if isinstance(acc, tuple):
        return acc + (x,)
    if isinstance(acc, TupleAcc):
        return TupleAcc(acc.items + [x], acc.like)
    return acc + [x]


def comp_end(acc, xs):
    # The elements collected from iterating over `xs`: a tuple where the iteration's length
    # is known at compile time (`known_length`).
    if isinstance(acc, TupleAcc):
        return P.list_as_tuple(acc.items, acc.like)
    if isinstance(acc, list):
        n = known_length(myia_iter(xs))
        if n >= 0:
            return P.list_to_tuple(acc, n)
    return acc


#: The longest tuple made of an iteration that is not over tuples (`known_length`); a longer
#: one is a list, as where the length is known only at run time.
MAX_TUPLE = 256


def known_length(it):
    # The length of iteration `it` where it is known at compile time and at most
    # `MAX_TUPLE`: the rows of an array of known shape, or `enumerate` of them, or `zip` of
    # those and tuples; else -1. (A range's bounds are not known: a record's fields are
    # not constants.)
    if isinstance(it, Enumerate):
        return _rows(it.it)
    if isinstance(it, Zip):
        # Of up to three iterables (a loop over them, or a recursion, would forget the
        # lengths known at compile time).
        its = it.iters
        k = P.tuple_len(its)
        if k > 3:
            return -1
        n = _rows(its[0])
        if k >= 2:
            n = _shorter(n, _rows(its[1]))
        if k == 3:
            n = _shorter(n, _rows(its[2]))
        return n
    return _rows(it)


def _rows(it):
    # The number of elements of a fresh iteration `it`, known at compile time: that of a
    # tuple, of an array's rows (a `SequenceIter` over an array starts at 0), of a range of
    # bounds known at compile time; else -1.
    if isinstance(it, tuple):
        return _capped(P.tuple_len(it))
    if isinstance(it, Range):
        return _capped(len(it))
    if isinstance(it, SequenceIter):
        if isinstance(it.seq, np.ndarray):
            return _capped(len(it.seq))
    return -1


def _capped(n):
    if P.known(n) and n <= MAX_TUPLE:
        return n
    return -1


def _shorter(n, k):
    if n < 0 or k < 0:
        return -1
    if k < n:
        return k
    return n


def dict_comp_add(acc, k, v):
    return acc[0] + (k,), acc[1] + (v,)


def dict_comp_make(acc):
    return P.dict_from_items(acc[0], acc[1])


def dict_contains(key, d):
    """``key in d``: whether `key` is one of the keys of `d` (constants)."""
    return key in P.dict_keys(d)


# Dicts (`lib_dicts`), imported here: operations find them in this module.
from .lib_dicts import (  # noqa: E402, F401
    DictItems,
    DictKeys,
    DictValues,
    DictView,
    _dict_merged,
    _drop,
    _pairs,
    _without,
    dict_,
    dict_get,
    dict_items,
    dict_keys,
    dict_len,
    dict_values,
)


def scalar_getitem(x, index):
    """``x[()]`` of a NumPy scalar: `x` itself, as NumPy's (another index raises, as NumPy's)."""
    if len(index) != 0:
        raise IndexError("invalid index to scalar variable.")
    return x

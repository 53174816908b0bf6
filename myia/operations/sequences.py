"""Python's comparisons of sequences, and their methods, written in Myia's Python subset.

``(a, b) < (c, d)`` and the other orders of tuples and lists (the first elements that
differ decide, else the lengths), ``xs == ys`` of lists, and ``xs.count(v)``,
``xs.index(v)`` of tuples and lists. `ops.py` says which operation each one is.
"""

from __future__ import annotations

from ..primitives import P


def _lt(a, b):
    return a < b


def _le(a, b):
    return a <= b


def _gt(a, b):
    return a > b


def _ge(a, b):
    return a >= b


def _tuple_order(a, b, op):
    """Python's order of tuples: the first elements that differ decide, else the lengths."""
    if P.tuple_len(a) == 0 or P.tuple_len(b) == 0:
        return op(P.tuple_len(a), P.tuple_len(b))
    if a[0] == b[0]:
        return _tuple_order(a[1:], b[1:], op)
    return op(a[0], b[0])


def list_eq(a, b):
    """``a == b`` of lists: of one length, equal element by element."""
    if len(a) != len(b):
        return False
    i = 0
    while i < len(a):
        if not a[i] == b[i]:
            return False
        i = i + 1
    return True


def list_ne(a, b):
    return not list_eq(a, b)


def _list_order(a, b, op):
    """Python's order of lists: the first elements that differ decide, else the lengths."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i = i + 1
    if i == n:
        return op(len(a), len(b))
    return op(a[i], b[i])


def list_lt(a, b):
    return _list_order(a, b, _lt)


def list_le(a, b):
    return _list_order(a, b, _le)


def list_gt(a, b):
    return _list_order(a, b, _gt)


def list_ge(a, b):
    return _list_order(a, b, _ge)


def tuple_lt(a, b):
    return _tuple_order(a, b, _lt)


def tuple_le(a, b):
    return _tuple_order(a, b, _le)


def tuple_gt(a, b):
    return _tuple_order(a, b, _gt)


def tuple_ge(a, b):
    return _tuple_order(a, b, _ge)


def seq_count(xs, v):
    """``xs.count(v)``: how many elements equal `v`."""
    n = 0
    for x in xs:
        if x == v:
            n = n + 1
    return n


def seq_index(xs, v, start=0, stop=None):
    """``xs.index(v)``: the first position of an element equal to `v`; Python's ValueError."""
    n = len(xs)
    if stop is None:
        stop = n
    start = _clip(start, n)
    stop = _clip(stop, n)
    i = start
    while i < stop:
        if xs[i] == v:
            return i
        i = i + 1
    raise ValueError("sequence.index(x): x not in sequence")


def _clip(i, n):
    """A bound of ``index`` as Python clips it to ``[0, n]`` (negative: from the end)."""
    if i < 0:
        i = i + n
        if i < 0:
            return 0
        return i
    if i > n:
        return n
    return i

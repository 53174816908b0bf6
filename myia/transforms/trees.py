"""Trees: the structures that transformations map over (tuples, lists, dicts, dataclasses).

``tree_map_`` and ``tree_leaves_`` are Myia code (what `tree_map` and `tree_leaves` mean
inside ``@myia`` code); `tree_map` and `tree_leaves` are their Python counterparts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..operations.core import NoMatch, Operation
from ..operations.ops import is_record_
from ..primitives import P
from ..records import field_names, field_values, is_record_value, replace_fields

# Myia code: structures ------------------------------------------------------------------------


def _is_record(x):
    return is_record_(x)


def _vdot(a, b):
    """The sum of the products of the leaves of two structures alike (a float)."""
    if a is None:
        return 0.0
    if b is None:  # (narrows `b` too where both are ``Tree | None``)
        return 0.0
    if isinstance(a, tuple) and not _is_record(a):
        return _vdot_tuple(a, b)
    if isinstance(a, list):
        return 0.0 + sum([_vdot(x, y) for x, y in zip(a, b)])
    if isinstance(a, dict):
        return _vdot_tuple(P.dict_values(a), P.dict_values(b))
    if _is_record(a):
        return _vdot_tuple(P.record_fields(a), P.record_fields(b))
    return 0.0 + np.sum(a * b)


def _vdot_tuple(xs, ys):
    if len(xs) == 0:
        return 0.0
    return _vdot(xs[0], ys[0]) + _vdot_tuple(xs[1:], ys[1:])


def tree_map_(f, tree, *rest):
    """``f`` applied to the leaves of `tree` (and those of `rest` at the same places)."""
    if tree is None:
        return None
    if isinstance(tree, tuple) and not _is_record(tree):
        return _map_tuple(f, tree, rest)
    if isinstance(tree, list):
        return [tree_map_(f, x, *ys) for x, ys in zip(tree, _transpose_lists(rest, len(tree)))]
    if isinstance(tree, dict):
        values = _map_tuple(f, P.dict_values(tree), _dict_values_of(rest))
        return P.dict_from_values(tree, values)
    if _is_record(tree):
        return P.record_from_fields(tree, _map_tuple(f, P.record_fields(tree), _fields_of(rest)))
    return f(tree, *rest)


def _map_tuple(f, xs, rest):
    if len(xs) == 0:
        return ()
    return (tree_map_(f, xs[0], *_heads(rest)),) + _map_tuple(f, xs[1:], _tails(rest))


def _heads(ts):
    if len(ts) == 0:
        return ()
    return (ts[0][0],) + _heads(ts[1:])


def _tails(ts):
    if len(ts) == 0:
        return ()
    return (ts[0][1:],) + _tails(ts[1:])


def _dict_values_of(ts):
    if len(ts) == 0:
        return ()
    return (P.dict_values(ts[0]),) + _dict_values_of(ts[1:])


def _fields_of(ts):
    if len(ts) == 0:
        return ()
    return (_record_fields(ts[0]),) + _fields_of(ts[1:])


def _record_fields(t):
    """The fields of record `t` (a ``Tree | None`` where the first tree holds a record)."""
    if t is None:
        raise ValueError("tree_map: the trees have different structures (a None for a record)")
    return P.record_fields(t)


def _transpose_lists(ts, n):
    """The tuples of the i-th elements of the lists `ts` (a list of `n` tuples)."""
    return [_nth(ts, i) for i in range(n)]


def _nth(ts, i):
    if len(ts) == 0:
        return ()
    return (ts[0][i],) + _nth(ts[1:], i)


def tree_leaves_(tree):
    """The leaves of `tree`, in order, as a tuple (they may have different types)."""
    if tree is None:
        return ()
    if isinstance(tree, tuple) and not _is_record(tree):
        return _leaves_tuple(tree)
    if isinstance(tree, list):
        return leaves_of_a_list(tree)
    if isinstance(tree, dict):
        return _leaves_tuple(P.dict_values(tree))
    if _is_record(tree):
        return _leaves_tuple(P.record_fields(tree))
    return (tree,)


def _leaves_of_a_list(kind: Any) -> Any:
    raise NoMatch(
        "the leaves of a list inside Myia code (tree_leaves, jacfwd or hessian with respect "
        "to a list): a list's length is known at run time only, and the leaves are a tuple; "
        "pass a tuple instead (or use jacrev)"
    )


#: A list in `tree_leaves_`: a type error at compile time (it was taken for a leaf).
leaves_of_a_list = Operation("tree_leaves", _leaves_of_a_list)


def _leaves_tuple(xs):
    if len(xs) == 0:
        return ()
    return tree_leaves_(xs[0]) + _leaves_tuple(xs[1:])


def _zeros_like(x):
    return P.gzeros(x)


# Python ---------------------------------------------------------------------------------------


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """`f` applied to the leaves of `tree` (and of `rest` at the same places).

    Tuples, lists, dicts, dataclasses and None are structure, anything else is a leaf.
    """
    if tree is None:
        return None
    if is_record_value(tree):
        values = zip(field_values(tree), *(field_values(r, type(tree)) for r in rest))
        names = field_names(type(tree))
        return replace_fields(tree, **{n: tree_map(f, *vs) for n, vs in zip(names, values)})
    if isinstance(tree, (tuple, list)):
        out = [tree_map(f, x, *(r[i] for r in rest)) for i, x in enumerate(tree)]
        return type(tree)(out) if isinstance(tree, list) else tuple(out)
    if isinstance(tree, dict):
        return {k: tree_map(f, v, *(r[k] for r in rest)) for k, v in tree.items()}
    return f(tree, *rest)


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of `tree` in order (inside Myia code: a tuple)."""
    if tree is None:
        return []
    if isinstance(tree, (tuple, list)):
        return [leaf for x in tree for leaf in tree_leaves(x)]
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in tree_leaves(v)]
    if is_record_value(tree):
        return [leaf for v in field_values(tree) for leaf in tree_leaves(v)]
    return [tree]

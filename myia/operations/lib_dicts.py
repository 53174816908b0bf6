"""Library code for dicts, in Myia's Python subset: ``len``, views, ``get``, ``dict(...)``.

Part of `myia.operations.lib` (which imports it): ``d.keys()``, ``d.values()`` and
``d.items()`` are `DictView`s of the tuples of a dict's keys, values and pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..primitives import P
from .lib import contains
from .ops import refuse


def dict_len(d):
    return P.tuple_len(P.dict_keys(d))


@dataclass(frozen=True)
class DictView:
    """``d.keys()``, ``d.values()``, ``d.items()``: the tuple of the elements of a view.

    Iterated, measured and searched as the tuple (``for``, ``len``, ``in``, ``list``,
    ``tuple``, ``zip``...), but not subscriptable, as in Python, wherever it flows (bound to a
    name, passed, returned): ``ks[0]`` is Python's TypeError, at compile time.
    """

    items: tuple

    def __myia_iter__(self):
        return self.items

    def __len__(self):
        return P.tuple_len(self.items)

    def __contains__(self, x):
        return contains(x, self.items)


@dataclass(frozen=True)
class DictKeys(DictView):
    """``d.keys()`` (`DictView`)."""

    __myia_view__ = "dict_keys"

    def __getitem__(self, i):
        refuse("'dict_keys' object is not subscriptable")


@dataclass(frozen=True)
class DictValues(DictView):
    """``d.values()`` (`DictView`)."""

    __myia_view__ = "dict_values"

    def __getitem__(self, i):
        refuse("'dict_values' object is not subscriptable")


@dataclass(frozen=True)
class DictItems(DictView):
    """``d.items()`` (`DictView`)."""

    __myia_view__ = "dict_items"

    def __getitem__(self, i):
        refuse("'dict_items' object is not subscriptable")


def dict_keys(d):
    return DictKeys(P.dict_keys(d))


def dict_values(d):
    return DictValues(P.dict_values(d))


def dict_get(d, key, default=None):
    """``d.get(key, default)``: a key is a constant, so the branch is known at compile time."""
    if key in P.dict_keys(d):
        return d[key]
    return default


def dict_(*mapping, **entries):
    """``dict(**entries)``, ``dict(d)`` and ``dict(d, **entries)``, keys constant strings.

    As Python's: `d`'s keys in their order, with the values `entries` gives them, then the
    keys of `entries` that `d` lacks. Other arguments (pairs, ``zip``) are refused at the
    user's line: their keys would be values, known at run time.
    """
    if len(mapping) == 0:
        return entries
    if len(mapping) > 1:
        refuse("dict expected at most 1 positional argument")
    d = mapping[0]
    if not isinstance(d, dict):
        refuse(
            "dict() of pairs is not supported in Myia (its keys would be known at run time "
            "only): write dict(a=..., b=...) or {'a': ..., 'b': ...}"
        )
    keys, values = _dict_merged(P.dict_keys(d), d, entries)
    return P.dict_from_items(keys, values)


def _dict_merged(keys, d, entries):
    """The keys and values of ``dict(d, **entries)`` from `keys`, the keys of `d` left."""
    if P.tuple_len(keys) == 0:
        return P.dict_keys(entries), P.dict_values(entries)
    if keys[0] in P.dict_keys(entries):
        ks, vs = _dict_merged(keys[1:], d, entries)
        return _without(keys[0], ks, vs, entries[keys[0]])
    ks, vs = _dict_merged(keys[1:], d, entries)
    return (keys[0],) + ks, (d[keys[0]],) + vs


def _without(key, ks, vs, value):
    """`key` (one of `ks`) moved to the front of `ks`, with `value` (`vs` alike)."""
    kept_k, kept_v = _drop(key, ks, vs)
    return (key,) + kept_k, (value,) + kept_v


def _drop(key, ks, vs):
    if P.tuple_len(ks) == 0:
        return (), ()
    if ks[0] == key:
        return ks[1:], vs[1:]
    rest_k, rest_v = _drop(key, ks[1:], vs[1:])
    return (ks[0],) + rest_k, (vs[0],) + rest_v


def dict_items(d):
    return DictItems(_pairs(P.dict_keys(d), P.dict_values(d)))


def _pairs(ks, vs):
    if P.tuple_len(ks) == 0:
        return ()
    return ((ks[0], vs[0]),) + _pairs(ks[1:], vs[1:])

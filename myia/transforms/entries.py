"""The top-level entries of the transformations: compiled once per function and options."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..api import MyiaFunction
from ..boundary import boundary

_COMPILED: dict[Any, MyiaFunction] = {}


def _compiled(key: Any, entry: Callable[..., Any]) -> MyiaFunction:
    """The compiled `entry`, one per `key` (the function transformed and the options)."""
    fn = _COMPILED.get(key)
    if fn is None:
        fn = _COMPILED[key] = MyiaFunction(entry)
    return fn


class _Transformed:
    """A transformation of `f` at the top level (``jacfwd(f)``, ...).

    Python calling it runs `call`; Myia code calling or transforming it (``vmap(jacfwd(f))``,
    ``jacfwd(jacrev(f))``) parses `body`, the transformation written in Myia, instead.
    """

    def __init__(self, f: Callable[..., Any], call: Callable[..., Any], body: Callable[..., Any]):
        # Names and `__wrapped__` only: `f`'s own `__myia_function__` or `__myia_graph__`
        # (`f` compiled by `myia`) would make Myia code call `f` untransformed.
        functools.update_wrapper(self, f, updated=())
        self._call = call
        self.__myia_function__ = body

    @boundary
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(*args, **kwargs)

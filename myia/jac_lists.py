"""Forward-mode Jacobians (`jacfwd`, `hessian`) at the top level with respect to a list.

Compiled code has one type for a list of any length, and a forward-mode Jacobian needs the
argument's leaves one by one (a tangent per leaf). At the top level the list is a value of
known length: it is passed to the compiled Jacobian as a tuple, the function receives it as
a list again (``list(t)``, in Myia code), and the blocks of the Jacobian that the tuple
shaped are lists again, as JAX's (``jacfwd(lambda xs: xs[0] * xs[1])([1., 2.])`` is
``[2., 1.]``).

Supported: an argument differentiated that is a list whose elements hold no list. Other
lists (in a tuple, a dict, nested) are refused by the caller.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .records import field_values, is_record_value, make_value


def convertible(x: Any) -> bool:
    """Whether argument `x` is a list this module handles (its elements hold no list)."""
    return isinstance(x, list) and not any(map(holds_list, x))


def holds_list(x: Any) -> bool:
    """Whether argument `x` is or holds a list (through tuples, dicts and dataclasses)."""
    if isinstance(x, list):
        return True
    if isinstance(x, tuple):
        return any(map(holds_list, x))
    if isinstance(x, dict):
        return any(map(holds_list, x.values()))
    if is_record_value(x):
        return any(holds_list(v) for v in field_values(x))
    return False


def _listed_at(f: Callable[..., Any], i: int) -> Callable[..., Any]:
    """`f`, whose argument `i` is passed as a tuple and received as a list (Myia code)."""

    def listed(*a, **kw):
        return f(*(a[:i] + (list(a[i]),) + a[i + 1 :]), **kw)

    return listed


def with_lists(
    lib: Callable[..., Any], f: Callable[..., Any], argnums: Any, lists: tuple[int, ...]
) -> Callable[..., Any]:
    """The entry computing ``(lib(f, argnums)(*args), f(*args))`` with `lists` as tuples.

    The value of `f` gives the structure of the output, whose leaves' blocks `relisted`
    finds.
    """
    g = f
    for i in lists:
        g = _listed_at(g, i)

    def entry(*args, **kwargs):
        return lib(g, argnums)(*args, **kwargs), g(*args, **kwargs)

    return entry


def relisted(jac: Any, y: Any, argnums: Any, lists: tuple[int, ...], hessian: bool) -> Any:
    """The Jacobian `jac` (of output `y`) with the blocks of the list arguments as lists."""

    def block(b: Any) -> Any:
        if isinstance(argnums, int):
            return [block_inner(e) for e in b] if argnums in lists else block_inner(b)
        return tuple(list(e) if i in lists else e for i, e in zip(argnums, b))

    def block_inner(b: Any) -> Any:
        # A Hessian's block for a list argument is itself shaped by the argument.
        return list(b) if hessian and argnums in lists else b

    def walk(y: Any, r: Any) -> Any:
        if is_record_value(y):
            values = [walk(a, b) for a, b in zip(field_values(y), field_values(r, type(y)))]
            return make_value(type(y), values)
        if isinstance(y, (tuple, list)):
            return type(y)(walk(a, b) for a, b in zip(y, r))
        if isinstance(y, dict):
            return {k: walk(y[k], r[k]) for k in y}
        return block(r)

    return walk(y, jac)

"""`vmap`: a function mapped over an axis of its arguments (`myia.grad.batching`).

``vmap_`` is its Myia code; `vmap` at the top level compiles an entry calling it, once per
function and axes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..boundary import boundary
from ..errors import MyiaTypeError
from ..primitives import P
from ..records import field_values, is_record_value
from .entries import _compiled


def vmap_(f, in_axes=0, out_axes=0):
    return P.vmap_of(f, in_axes, out_axes)


# A literal list of axes is read as a tuple (``in_axes=[0, (0, None)]``), as JAX reads it.
vmap_.sequence_argument = (1, 2)  # type: ignore[attr-defined]


def vmap(f: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0) -> Callable[..., Any]:
    """`f` mapped over an axis of its arguments, as JAX's ``vmap``.

    ``in_axes`` (an int, None, or one per argument, each a tuple of them for a tuple or record
    argument, or a dict of them for a dict) says which axis of each array is the batch (None:
    not batched); arguments passed by keyword are batched on their first axis. ``out_axes``
    (an int, or a tuple of them for a tuple result, a dict of them for a dict) says where the
    batch goes in the results.
    ``f``'s graph is batched before running (`myia.grad.batching`): one program computes
    every example, with no loop over them.
    """
    _check_leaves(in_axes, "in_axes")
    _check_leaves(out_axes, "out_axes")
    return _Batched(f, in_axes, out_axes)


def _check_leaves(ax: Any, what: str) -> None:
    """A `MyiaTypeError` where a leaf of the tree of axes `ax` is not an int or None."""
    if isinstance(ax, dict):
        ax = tuple(ax.values())
    elif is_record_value(ax):
        ax = field_values(ax)
    if isinstance(ax, (tuple, list)):
        for a in ax:
            _check_leaves(a, what)
    elif ax is not None and (not isinstance(ax, int) or isinstance(ax, bool)):
        raise MyiaTypeError(
            f"vmap: {what} are ints, None, or tuples, lists, dicts or dataclass instances of "
            f"them, not {ax!r}"
        )


class _Batched:
    """``vmap(f, in_axes, out_axes)`` at the top level: one compiled entry per axes."""

    def __init__(self, f: Callable[..., Any], in_axes: Any, out_axes: Any):
        self.f, self.in_axes, self.outs = f, in_axes, _axes_key(out_axes)
        for name in ("__module__", "__name__", "__qualname__", "__doc__"):
            if hasattr(f, name):
                setattr(self, name, getattr(f, name))
        self.__wrapped__ = f
        ins, outs = _dicts(_axes_key(in_axes)), _dicts(self.outs)

        def batched(*args):  # what it is in Myia code
            return vmap_(f, ins, outs)(*args)

        self.__myia_function__ = batched

    @boundary
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Keywords are bound in Myia code, as there (`myia.grad.batch_types.keyword_spec`):
        # in_axes are those of the positional arguments, keywords are batched on axis 0,
        # the defaults of the parameters not given are not batched.
        ins, outs = _axes_key(self.in_axes), self.outs
        ins_c, outs_c = _dicts(ins), _dicts(outs)
        f = self.f
        entry = _compiled(
            ("vmap", f, ins, outs), lambda *xs, **kw: vmap_(f, ins_c, outs_c)(*xs, **kw)
        )
        return entry(*args, **kwargs)


def _axes_key(ax: Any) -> Any:
    """`ax` with its lists as tuples and its dicts as ``(key, axes)`` pairs (hashable).

    A dataclass instance (the axes of an argument of its class) is the tuple of its fields.
    """
    if isinstance(ax, dict):
        return _DictAxes((k, _axes_key(v)) for k, v in ax.items())
    if is_record_value(ax):
        return tuple(_axes_key(v) for v in field_values(ax))
    return tuple(map(_axes_key, ax)) if isinstance(ax, (tuple, list)) else ax


class _DictAxes(tuple):
    """The axes of a dict, in a key (`_axes_key`)."""


def _dicts(ax: Any) -> Any:
    """The axes of key `ax`, with their dicts (the constant of the compiled entry)."""
    if isinstance(ax, _DictAxes):
        return {k: _dicts(v) for k, v in ax}
    return tuple(map(_dicts, ax)) if isinstance(ax, tuple) else ax

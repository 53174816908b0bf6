"""The types of ``vmap``: the axes of its arguments, one example's types and the batched ones.

A call of ``vmap(f, in_axes, out_axes)`` is typed at inference (`batching.infer_vmap_call`)
by inferring ``f`` on one example (`example_types`: each batched argument without its batch
axis); its result gets a batch axis at ``out_axes`` (`batched_type`).
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import (
    AbstractArray,
    AbstractConstant,
    AbstractDict,
    AbstractKeyword,
    AbstractList,
    AbstractRecord,
    AbstractScalar,
    AbstractTuple,
    AbstractValue,
    SelfRef,
    show,
)
from ..errors import MyiaTypeError
from ..primitives import P
from ..primitives.batching import DictAxes, VmapSpec


def _axis(ax: Any, rank: int, what: str) -> int:
    if not isinstance(ax, int) or isinstance(ax, bool) or not -rank <= ax < rank:
        raise MyiaTypeError(f"vmap: {what} {ax!r} is not an axis of a value of {rank} dimensions")
    return ax % rank


def keyword_spec(spec: VmapSpec, g: Any, npos: int, keys: Any) -> VmapSpec:
    """`spec` for a call of graph `g` with `npos` positional arguments and keywords `keys`.

    `keys` are in the order of the call (that of the dict of ``**kwargs``, if `g` takes it).

    The call is bound to `g`'s parameters in order (by `bind_graph_args` and
    `bind_graph_nodes`); as in JAX, ``in_axes`` are those of the positional arguments, the
    keyword arguments are batched on axis 0 and the defaults are not batched.
    """
    if g.flags.get("vararg"):
        raise MyiaTypeError(
            "vmap: keyword arguments of a function taking *args cannot be batched: pass its "
            "arguments by position"
        )
    ax = spec.in_axes
    axes = tuple(ax) if isinstance(ax, (tuple, list)) else (ax,) * npos
    if len(axes) != npos:
        raise MyiaTypeError(
            f"vmap: in_axes has {len(axes)} entries for {npos} positional arguments (the "
            "arguments passed by keyword are batched on axis 0)"
        )
    names = g.param_names
    kwarg = bool(g.flags.get("kwarg"))
    rest = tuple(0 if name in keys else None for name in names[npos : len(names) - kwarg])
    if kwarg:  # ``**kwargs``: a dict of the keywords left over, each batched
        rest += (DictAxes(tuple((k, 0) for k in keys if k not in names)),)
    return VmapSpec(spec.fn, axes + rest, spec.out_axes)


def as_called(fn: Any, args: list[Any]) -> list[Any]:
    """`args`, one per parameter of `fn`, as a call passes them: keyword-only ones by keyword.

    (`keyword_spec` bound the call to every parameter of `fn`'s graph, in order.)
    """
    g = getattr(fn, "graph", None)
    if g is None or len(args) != len(g.parameters):
        return args
    extra: list[Any] = []
    if g.flags.get("kwarg"):  # the dict of ``**kwargs``: its keywords
        d = args[-1]
        if not isinstance(d, AbstractDict):
            return args
        args = args[:-1]
        extra = [AbstractKeyword(k, v) for k, v in zip(d.keys, d.values)]
    k = g.kwonly
    if not k:
        return [*args, *extra]
    names = g.param_names[len(args) - k : len(args)]
    return [*args[:-k], *(AbstractKeyword(n, a) for n, a in zip(names, args[-k:])), *extra]


def _check_axes(ax: Any, what: str) -> None:
    if isinstance(ax, tuple):
        for a in ax:
            _check_axes(a, what)
    elif ax is not None and (not isinstance(ax, int) or isinstance(ax, bool)):
        shown = dict(ax.items) if isinstance(ax, DictAxes) else ax
        raise MyiaTypeError(f"vmap: {what} are ints, None, or tuples of them, not {shown!r}")


def _all_none(ax: Any) -> bool:
    return all(map(_all_none, ax)) if isinstance(ax, tuple) else ax is None


def in_axes_of(spec: VmapSpec, args: list[AbstractValue]) -> tuple[Any, ...]:
    """The batch axis of each argument (None: not batched; a tuple: one per element)."""
    ax, nargs = spec.in_axes, len(args)
    axes = tuple(ax) if isinstance(ax, (tuple, list)) else (ax,) * nargs
    if len(axes) != nargs:
        raise MyiaTypeError(f"vmap: in_axes has {len(axes)} entries for {nargs} arguments")
    axes = tuple(_resolved(x, a) for x, a in zip(axes, args))
    _check_axes(axes, "in_axes")
    if _all_none(axes):
        raise MyiaTypeError("vmap: at least one argument must be batched (in_axes not all None)")
    return axes


def _resolved(ax: Any, a: Any, what: str = "in_axes") -> Any:
    """Axes `ax` of a value of type `a`, those of a dict (`DictAxes`) in the order of its keys."""
    if isinstance(ax, DictAxes):
        axes = dict(ax.items)
        if not isinstance(a, AbstractDict) or set(axes) != set(a.keys):
            whose = "the argument" if what == "in_axes" else "the result"
            raise MyiaTypeError(f"vmap: {what} {axes!r} do not match {whose} {show(a)}")
        return tuple(_resolved(axes[k], e, what) for k, e in zip(a.keys, a.values))
    ps = parts(a)
    if isinstance(ax, tuple) and ps is not None and len(ps) == len(ax):
        return tuple(_resolved(x, e, what) for x, (_, _, e) in zip(ax, ps))
    return ax


def out_axes_of(spec: VmapSpec, result: AbstractValue) -> Any:
    """``spec.out_axes`` for a result of per-example type `result`, its dicts' in key order."""
    return _resolved(spec.out_axes, result, "out_axes")


def _retyped(a: Any, elements: list[Any]) -> Any:
    """The tuple, dict or record type `a` with these element types."""
    if isinstance(a, AbstractTuple):
        return AbstractTuple(tuple(elements))
    if isinstance(a, AbstractDict):
        return AbstractDict(a.keys, tuple(elements))
    return AbstractRecord(a.cls, tuple(elements))


def _per_element(a: Any, ax: tuple[Any, ...], what: str) -> list[Any]:
    """The element types of `a`, which has one element per axis of `ax`."""
    ps = parts(a)
    if ps is None or len(ps) != len(ax):
        raise MyiaTypeError(f"vmap: {what} {ax!r} do not match the structure of {show(a)}")
    return [e for _, _, e in ps]


def _no_list(a: AbstractValue, where: str) -> None:
    raise MyiaTypeError(
        f"vmap: {where} {show(a)}, which cannot be batched: the length of a list (and the "
        "shapes of its elements) may differ from one example to the next, and a batch holds "
        "values of one shape; use an array with a batch axis, or a tuple"
    )


def example_type(a: AbstractValue, ax: int, sizes: list[int | None]) -> AbstractValue:
    """The type of one example of a value of type `a` batched on axis `ax`."""
    if ax is None:
        return a
    if isinstance(ax, tuple):
        elements = _per_element(a, ax, "in_axes")
        return _retyped(a, [example_type(e, x, sizes) for e, x in zip(elements, ax)])
    if isinstance(a, AbstractArray):
        k = _axis(ax, len(a.shape), "in_axes")
        sizes.append(a.shape[k])
        rest = a.shape[:k] + a.shape[k + 1 :]
        return AbstractArray(a.dtype, rest) if rest else AbstractScalar(a.dtype)
    if isinstance(a, AbstractTuple):
        return AbstractTuple(tuple(example_type(e, ax, sizes) for e in a.elements))
    if isinstance(a, AbstractRecord) and not _recursive(a):
        return AbstractRecord(a.cls, tuple(example_type(e, ax, sizes) for e in a.fields))
    if isinstance(a, AbstractDict):
        return AbstractDict(a.keys, tuple(example_type(e, ax, sizes) for e in a.values))
    if isinstance(a, AbstractConstant) and a.value is None:
        return a
    if isinstance(a, AbstractList):
        _no_list(a, "an argument is a list")
    if isinstance(a, AbstractKeyword):
        raise MyiaTypeError(
            f"vmap of a gradient or of a transformed function takes its arguments by "
            f"position: pass {a.key} by position (not {a.key}=...), with its axis in in_axes"
        )
    raise MyiaTypeError(f"vmap: an argument of type {show(a)} has no axis {ax} to map over")


def batched_type(a: AbstractValue, n: int | None, ax: int) -> AbstractValue:
    """The type of the results of the examples, of type `a`, stacked on axis `ax`."""
    if isinstance(ax, tuple):
        elements = _per_element(a, ax, "out_axes")
        return _retyped(a, [batched_type(e, n, x) for e, x in zip(elements, ax)])
    if ax is None:
        return a  # not batched (`Batcher.full_out` checks it)
    if isinstance(a, AbstractScalar):
        _axis(ax, 1, "out_axes")
        return AbstractArray(a.dtype, (n,))
    if isinstance(a, AbstractArray):
        k = _axis(ax, len(a.shape) + 1, "out_axes")
        return AbstractArray(a.dtype, a.shape[:k] + (n,) + a.shape[k:])
    if isinstance(a, AbstractTuple):
        return AbstractTuple(tuple(batched_type(e, n, ax) for e in a.elements))
    if isinstance(a, AbstractRecord) and not _recursive(a):
        return AbstractRecord(a.cls, tuple(batched_type(e, n, ax) for e in a.fields))
    if isinstance(a, AbstractDict):
        return AbstractDict(a.keys, tuple(batched_type(e, n, ax) for e in a.values))
    if isinstance(a, AbstractConstant) and a.value is None:
        return a
    if isinstance(a, AbstractList):
        _no_list(a, "the function returns a list")
    raise MyiaTypeError(f"vmap: the function returns {show(a)}, which cannot be batched")


def _recursive(a: AbstractRecord) -> bool:
    return any(isinstance(f, SelfRef) for f in a.fields)


def _batch_size(sizes: list[int | None]) -> int | None:
    known = {s for s in sizes if s is not None}
    if len(known) > 1:
        raise MyiaTypeError(f"vmap: the batch axes have different sizes {sorted(known)}")
    return known.pop() if known else None


def example_types(spec: VmapSpec, args: list[AbstractValue]) -> tuple[list[Any], int | None]:
    """The types of one example of the arguments, and the batch size."""
    axes = in_axes_of(spec, args)
    sizes: list[int | None] = []
    out = [example_type(a, ax, sizes) for a, ax in zip(args, axes)]
    return out, _batch_size(sizes)


def parts(a: Any) -> list[tuple[Any, Any, Any]] | None:
    """The elements of a tuple, dict or record of type `a`: (getter, key, type); None: a leaf."""
    if isinstance(a, AbstractTuple):
        return [(P.tuple_getitem, i, e) for i, e in enumerate(a.elements)]
    if isinstance(a, AbstractDict):
        return [(P.dict_getitem, k, e) for k, e in zip(a.keys, a.values)]
    if isinstance(a, AbstractRecord):
        return [(P.record_getattr, name, a.field(name)) for name in a.names]
    return None

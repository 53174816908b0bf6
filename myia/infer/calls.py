"""Binding the arguments of calls on abstract values: graphs, primitives, dataclasses."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from typing import Any

from ..abstract.data import (
    NONE,
    AbstractDict,
    AbstractKeyword,
    AbstractRecord,
    AbstractTuple,
    AbstractValue,
    GraphFunction,
    SelfRef,
    show,
)
from ..abstract.lattice import (
    allowed_in,
    broaden,
    constant_abstract,
    recursive_field,
    recursive_fields,
    union_options,
)
from ..errors import MyiaTypeError, too_many_arguments
from ..ir.node import Apply, Constant, DebugInfo, Node
from ..primitives import P, Primitive
from ..primitives.structure import keeps_constants
from ..records import field_annotation, field_names, is_namedtuple_class
from .kinds import axes_literal
from .traceback import called_name, error_frames, is_internal


def _split(args: list[AbstractValue]) -> tuple[list[AbstractValue], dict[str, AbstractValue]]:
    pos = [a for a in args if type(a) is not AbstractKeyword]
    kws = {a.key: a.value for a in args if type(a) is AbstractKeyword}
    return pos, kws


def bind_graph_args(inferrer: Any, fn: GraphFunction, args: list[AbstractValue]) -> list[Any]:
    """Match positional and keyword arguments to the parameters of a graph."""
    g = fn.graph
    params = g.parameters
    vararg = g.flags.get("vararg", False)
    kwarg = g.flags.get("kwarg", False)
    if len(args) == len(params) and not vararg and not g.kwonly and not kwarg:
        if not any(type(a) is AbstractKeyword for a in args):
            return args
    names = g.param_names
    fname = _called_name(inferrer, g)
    npos = len(params) - g.kwonly - (1 if vararg else 0) - (1 if kwarg else 0)
    pos, kws = _split(args)
    values: dict[str, Any] = dict(zip(names[:npos], pos))
    extra = pos[npos:]
    if vararg:
        values[names[npos]] = AbstractTuple(tuple(extra))
    elif extra:
        required = sum(n not in g.defaults for n in names[:npos])
        raise MyiaTypeError(
            too_many_arguments(fname, npos, required, len(pos)), error_frames(inferrer.calls)
        )
    posonly = [k for k in kws if k in names[: g.flags.get("posonly", 0)]]
    if posonly and not kwarg:
        raise MyiaTypeError(
            f"{fname}() got some positional-only arguments passed as keyword arguments: "
            f"{', '.join(map(repr, posonly))}",
            error_frames(inferrer.calls),
        )
    rest: dict[str, Any] = {}
    for k, v in kws.items():
        if k in values or (k not in names and not kwarg) or (kwarg and k == names[-1]):
            what = (
                "multiple values for argument" if k in values else "an unexpected keyword argument"
            )
            raise MyiaTypeError(f"{fname}() got {what} {k!r}", error_frames(inferrer.calls))
        (values if k in names else rest)[k] = v
    if kwarg:
        values[names[-1]] = AbstractDict(tuple(rest), tuple(rest.values()))
    out = []
    for name in names:
        if name in values:
            out.append(values[name])
        elif name in g.defaults:
            d = g.defaults[name]
            if d.is_constant:
                out.append(inferrer.constant(d.value, None))
            else:
                c = fn.context
                while c is not None and c.graph is not d.graph:
                    c = c.parent
                out.append(inferrer.node_values[c][d])
        else:
            raise MyiaTypeError(
                f"{fname}() missing required argument {name!r}", error_frames(inferrer.calls)
            )
    return out


def _called_name(inferrer: Any, g: Any) -> str:
    """How a message about a call of `g` names it: as the user's line names it.

    A function of Myia's library (``np_dot``, the ufunc ``np.exp`` is) is named as the user
    called it, as NumPy's messages name it: ``dot()``, ``exp()``.
    """
    loc = g.debug.find_location()
    if loc is not None and is_internal(loc.filename):
        for _, node, _ in reversed(inferrer.calls):
            at = node.debug.find_location() if node is not None else None
            if at is None or is_internal(at.filename):
                continue
            fn = node.inputs[0] if node.is_apply else None
            name = None
            if fn is not None and fn.is_constant:
                name = fn.debug.name  # ``np.dot(x)``: numpy.dot
            elif fn is not None and fn.is_apply and len(fn.inputs) == 3:
                attr = fn.inputs[2]  # ``x.sum(...)``: getattr(x, "sum")
                if attr.is_constant and isinstance(attr.value, str):
                    name = attr.value
            if isinstance(name, str) and name.split(".")[-1].isidentifier():
                return name.split(".")[-1]
            break
    return called_name(g.name)


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_positional_counts: dict[Primitive, int] = {}


def _positional_count(prim: Primitive) -> int:
    """The number of `prim`'s parameters where they are all positional ones, else -1."""
    n = _positional_counts.get(prim)
    if n is None:
        params = prim.signature.parameters.values()
        n = len(params) if all(p.kind in _POSITIONAL for p in params) else -1
        _positional_counts[prim] = n
    return n


def bind_primitive_args(prim: Primitive, args: list[AbstractValue], calls: Any) -> list[Any]:
    """Match arguments to a primitive's parameters, filling in defaults."""
    pos, kws = _split(args)
    if not kws and len(pos) == _positional_count(prim):
        return pos  # every parameter given in order (most calls): nothing to bind
    try:
        bound = prim.signature.bind(*pos, **kws)
    except TypeError as exc:
        raise MyiaTypeError(f"{prim.name}: {exc}", error_frames(calls)) from None
    if len(bound.arguments) < len(prim.signature.parameters):
        for name, p in prim.signature.parameters.items():
            if name not in bound.arguments and p.default is not inspect.Parameter.empty:
                bound.arguments[name] = constant_abstract(p.default)
    return list(bound.args)


def construct_record(inferrer: Any, cls: type, args: list[AbstractValue]) -> AbstractValue:
    """The abstract value of calling class `cls`: a dataclass or named tuple instance."""
    if is_namedtuple_class(cls):
        return _construct_namedtuple(inferrer, cls, args)
    if not dataclasses.is_dataclass(cls):
        raise MyiaTypeError(
            f"calling {cls.__name__} is not supported in Myia", error_frames(inferrer.calls)
        )
    pos, kws = _split(args)
    sig = inspect.signature(cls)
    if not any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        for k in kws:  # Python checks them first
            if k not in sig.parameters:
                init = getattr(cls.__init__, "__qualname__", cls.__name__)
                raise MyiaTypeError(
                    f"{init}() got an unexpected keyword argument {k!r}",
                    error_frames(inferrer.calls),
                )
    try:
        bound = sig.bind(*pos, **kws)
    except TypeError as exc:
        raise MyiaTypeError(f"{cls.__name__}(): {exc}", error_frames(inferrer.calls)) from None
    rec = recursive_fields(cls)
    fields, given = [], []
    for f in dataclasses.fields(cls):
        if f.name in bound.arguments:
            a = bound.arguments[f.name]
        elif f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            a = _default_abstract(inferrer, cls, f)
        else:
            raise MyiaTypeError(
                f"{cls.__name__}(): field {f.name} has no value", error_frames(inferrer.calls)
            )
        given.append(a)
        if not getattr(cls, "__myia_constant_fields__", False):
            a = broaden(a)  # (a range keeps its bounds known at compile time: its length)
        if f.name in rec:
            # The field's type is its annotation's: `cls` (or None), and the records of other
            # classes it names (``Union["Leaf", "Node"]``) that the value may be, as for the
            # trees given as arguments (`myia.abstract.lattice`).
            for o in union_options(a):
                ok = o == NONE or (isinstance(o, (AbstractRecord, SelfRef)) and o.cls is cls)
                ok = ok or (isinstance(o, AbstractRecord) and allowed_in(cls, f.name, o.cls))
                if not ok or (o == NONE and rec[f.name] == SelfRef(cls)):
                    raise MyiaTypeError(
                        f"{cls.__name__}(): field {f.name} must be a {cls.__name__}, not {o}",
                        error_frames(inferrer.calls),
                    )
            fields.append(recursive_field(cls, f.name, a))
        else:
            fields.append(a)
    if getattr(cls, "__myia_constant_fields__", False) and not keeps_constants(cls, fields):
        fields = [broaden(a) for a in fields]
    return AbstractRecord(cls, tuple(fields), axes_literal(given))


def _construct_namedtuple(inferrer: Any, cls: type, args: list[AbstractValue]) -> AbstractValue:
    """The abstract value of ``cls(...)`` for a named tuple class (bound as its ``__new__``)."""
    pos, kws = _split(args)
    try:
        bound = inspect.signature(cls).bind(*pos, **kws)
    except TypeError as exc:
        raise MyiaTypeError(f"{cls.__name__}(): {exc}", error_frames(inferrer.calls)) from None
    rec = recursive_fields(cls)
    fields = []
    for name in field_names(cls):
        if name in bound.arguments:
            a = broaden(bound.arguments[name])
        else:
            a = broaden(constant_abstract(cls._field_defaults[name]))  # type: ignore[attr-defined]
        fields.append(recursive_field(cls, name, a) if name in rec else a)
    return AbstractRecord(cls, tuple(fields))


def _default_abstract(inferrer: Any, cls: type, f: dataclasses.Field) -> AbstractValue:
    """The abstract value of field `f`'s default (a function: as if the call passed it)."""
    from .binding import TupleDefault, field_default

    try:
        value = field_default(inferrer.record_defaults, cls, f)
    except MyiaTypeError as exc:  # a function Myia does not support, at the user's call
        exc.frames = error_frames(inferrer.calls)
        raise

    def abstract(v: Any) -> AbstractValue:
        if isinstance(v, TupleDefault):
            return AbstractTuple(tuple(abstract(i) for i in v.items))
        return inferrer.constant(v.value, None)

    if isinstance(value, (Constant, TupleDefault)):
        return abstract(value)
    return constant_abstract(value)


def _annotation_name(hint: Any) -> str:
    return hint if isinstance(hint, str) else "Any" if hint is typing.Any else "object"


def _declared_at(cls: type, field: str) -> str:
    """`` at file:line``, where class `cls` declares `field` (empty if its source is unknown)."""
    try:
        lines, start = inspect.getsourcelines(cls)
        path = inspect.getsourcefile(cls)
    except (OSError, TypeError):
        return ""
    for k, line in enumerate(lines):
        if line.strip().startswith(f"{field}:"):
            return f", declared at {path}:{start + k}"
    return f", declared at {path}:{start}"


# ``f(*t, **d)`` ---------------------------------------------------------------------------------


StarShape = tuple[int, tuple[tuple[str, ...], ...]]


def star_shape(inferrer: Any, args: list[AbstractValue]) -> StarShape:
    """The length of the tuple and the keys of the dicts of ``apply_star(f, t, d...)``.

    Raises the `MyiaTypeError` Python's ``TypeError`` would be: ``*`` of a value that is not a
    tuple (or list of known length), ``**`` of one that is not a dict, a keyword given twice.
    """
    _, tup, *dicts = args
    if not isinstance(tup, AbstractTuple):
        raise MyiaTypeError(
            f"the value after * must be a tuple in Myia, not {show(tup)}",
            error_frames(inferrer.calls),
        )
    seen: set[str] = set()
    for d in dicts:
        if not isinstance(d, AbstractDict):
            raise MyiaTypeError(
                f"the value after ** must be a dict (with constant string keys), not {show(d)}",
                error_frames(inferrer.calls),
            )
        for k in d.keys:
            if k in seen:
                raise MyiaTypeError(
                    f"got multiple values for keyword argument {k!r}",
                    error_frames(inferrer.calls),
                )
            seen.add(k)
    return len(tup.elements), tuple(d.keys for d in dicts)  # type: ignore[union-attr]


def star_nodes(node: Apply, shape: StarShape) -> list[Apply]:
    """``apply_star(f, t, d...)`` written out: ``f(t[0], ..., k=d["k"], ...)``.

    Returns the nodes made, in order, the call last: they are in `node`'s graph but no other
    node uses them (inference and specialization read them in place of `node`).
    """
    n, keys = shape
    g = node.graph
    fn, tup, *dicts = node.inputs[1:]

    def apply(*inputs: Any) -> Apply:
        nodes = [i if isinstance(i, Node) else Constant(i) for i in inputs]
        return Apply(nodes, g, DebugInfo(origin=node.debug))  # type: ignore[arg-type]

    made: list[Apply] = []
    args: list[Apply] = []
    for i in range(n):
        args.append(apply(P.tuple_getitem, tup, i))
    for d, ks in zip(dicts, keys):
        for k in ks:
            value = apply(P.dict_getitem, d, k)
            made.append(value)
            args.append(apply(P.make_kwarg, k, value))
    made.extend(args)
    made.append(apply(fn, *args))
    return made


def untyped_fields_hint(*values: AbstractValue) -> str:
    """Advice for a join of `values` failing on a record whose fields are annotated `object`.

    Such a field (``object``, ``Any`` or no class at all) takes the type of the value it is
    given: a tree of ``Pair(left, right)`` built from floats and pairs has a type per shape,
    which no join can merge (a field's type is not an open union of what is stored in it).
    The advice names the fields and where the class declares them.
    """
    for v in values:
        for o in union_options(v):
            if not isinstance(o, AbstractRecord):
                continue
            try:
                hints = typing.get_type_hints(o.cls)
            except Exception:
                hints = {}
            declared = {n: hints.get(n, field_annotation(o.cls, n)) for n in field_names(o.cls)}
            loose = [
                (n, _annotation_name(h))
                for n, h in declared.items()
                if h in (object, typing.Any, "object", "Any")
            ]
            if loose:
                name = o.cls.__name__
                where = _declared_at(o.cls, loose[0][0])
                fields = ", ".join(f"{n}: {t}" for n, t in loose)
                return (
                    f". {name}'s fields ({fields}{where}) take the type of what they hold: "
                    f"a field has one type in Myia, so a tree of {name}s and numbers of any "
                    f"shape has no type. Give {name} a field per type it holds (`value: float` "
                    f'for the numbers, `left: Optional["{name}"]` for the subtrees), or '
                    "annotate the fields with the classes they hold "
                    f'(`left: Union["Leaf", "{name}"]`)'
                )
    return ""

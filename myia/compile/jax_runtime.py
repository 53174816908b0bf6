"""What the generated JAX code calls: structured control flow, stacks as buffers, error flags.

The JAX backend's generated code (`myia.compile.jax_codegen`) runs once, under ``jax.jit``'s
tracer, to build one XLA computation. These helpers are what it calls where the NumPy
backend's code uses Python's own control flow and data:

- `jax_while`, `jax_switch`, `jax_cond`: ``lax.while_loop``, ``lax.switch`` and ``lax.cond``,
  with the loop's state converted to arrays of the types Myia inferred (a Python float is a
  float64 array in every iteration), and with the error flags of their bodies carried out;
- `JaxStack`: the stack a loop's forward pass pushes its values on for the backward pass, as
  one buffer per leaf of the element type, of a static capacity, and a counter (XLA has no
  data structure that grows). The capacity is the trace's `Trace.capacity`; a push beyond it
  is dropped and recorded, and the backend recompiles with a capacity large enough;
- `check`: records a condition under which the call must run again on the host (``1.0 / 0``
  raises ZeroDivisionError in Python, XLA computes ``inf``), so that the user gets Python's
  error at their line from the NumPy backend's code.

Everything here is imported lazily by the JAX backend: the core of Myia needs only NumPy.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any

import numpy as np

from ..abstract.data import (
    AbstractArray,
    AbstractFunction,
    AbstractRecord,
    AbstractScalar,
    AbstractStack,
    AbstractTuple,
)
from .lower import record_constructor


class Trace:
    """The state of the trace under way: its stacks' capacity, and the conditions recorded.

    ``flags`` is a list per traced function body (innermost last) of boolean conditions,
    ``needs`` of the sizes the stacks pushed there needed.
    """

    capacity: int = 64
    flags: list[list[Any]] = []
    needs: list[list[Any]] = []


def _jnp() -> Any:
    import jax.numpy as jnp

    return jnp


def check(cond: Any, value: Any) -> Any:
    """Record that the call must run on the host if `cond` holds; return `value`."""
    if Trace.flags:
        Trace.flags[-1].append(cond)
    return value


def _need(size: Any) -> None:
    if Trace.needs:
        Trace.needs[-1].append(size)


def recorded(fn: Any) -> Any:
    """`fn`, returning also its error flag and the stack size it needed, as arrays."""
    jnp = _jnp()

    def run(*args: Any) -> Any:
        Trace.flags.append([])
        Trace.needs.append([])
        try:
            out = fn(*args)
        finally:
            flags, needs = Trace.flags.pop(), Trace.needs.pop()
        flag = jnp.asarray(False)
        for f in flags:
            flag = flag | jnp.asarray(f, dtype=bool)
        need = jnp.asarray(0, dtype=np.int64)
        for n in needs:
            need = jnp.maximum(need, jnp.asarray(n, dtype=np.int64))
        return out, flag, need

    return run


def _report(flag: Any, need: Any) -> None:
    check(flag, None)
    _need(need)


# Values of Myia's types as arrays -----------------------------------------------------------


def _dtype(a: AbstractScalar | AbstractArray) -> Any:
    return np.dtype(a.dtype)


def to_carry(value: Any, a: Any) -> Any:
    """`value`, of abstract type `a`, with its leaves as arrays of `a`'s dtypes.

    The state of a ``lax.while_loop`` and the results of ``lax.switch``'s branches must have
    one type: a Python float is a (strong) float64 array, a Python int an int64 array.
    """
    jnp = _jnp()
    if isinstance(a, (AbstractScalar, AbstractArray)):
        return jnp.asarray(value, dtype=_dtype(a))
    if isinstance(a, tuple):
        return tuple(to_carry(v, e) for v, e in zip(value, a))
    if isinstance(a, AbstractTuple):
        return tuple(to_carry(v, e) for v, e in zip(value, a.elements))
    if isinstance(a, AbstractRecord):
        cons = record_constructor(a.cls)
        return cons(*(to_carry(getattr(value, n), f) for n, f in zip(a.names, a.fields)))
    if isinstance(a, AbstractStack):
        if value is EMPTY:
            return JaxStack.new(a.element)
        return value
    from ..abstract.data import ENV

    if a is ENV:
        return value  # an environment of sensitivities: split by `_split`
    raise TypeError(f"a value of type {a} cannot be in a loop's state under XLA")


def placeholder(a: Any) -> Any:
    """A value of abstract type `a` (zeros) for a loop variable not yet assigned."""
    jnp = _jnp()
    if isinstance(a, (AbstractScalar, AbstractArray)):
        return jnp.zeros(getattr(a, "shape", ()), dtype=_dtype(a))
    if isinstance(a, AbstractTuple):
        return tuple(placeholder(e) for e in a.elements)
    if isinstance(a, AbstractRecord):
        return record_constructor(a.cls)(*(placeholder(f) for f in a.fields))
    if isinstance(a, AbstractStack):
        return JaxStack.new(a.element)
    from ..abstract.data import ENV
    from ..primitives.grad import EMPTY_ENV

    if a is ENV:
        return EMPTY_ENV
    raise TypeError(f"no placeholder of type {a} under XLA")


# Structured control flow --------------------------------------------------------------------


def jax_while(cond: Any, body: Any, state: Any, types: Any) -> Any:
    """``while cond(state): state = body(state)`` as ``lax.while_loop``.

    `types` are the abstract types of the state's parts. The state crosses into XLA as the
    list of its arrays (`_split`: records and stacks too). The loop stops at the first error
    flagged (the host then runs the call again); the stack sizes needed are carried out.
    """
    import jax

    jnp = _jnp()
    leaves: list[Any] = []
    skeleton = _split(to_carry(state, types), leaves)

    def unflat(xs: Any) -> Any:
        return _join(skeleton, iter(xs))

    def flat_body(xs: Any) -> Any:
        out: list[Any] = []
        if _split(to_carry(body(unflat(xs)), types), out) != skeleton:
            raise TypeError("a loop's state changes structure under XLA")
        return out

    test = recorded(lambda xs: cond(unflat(xs)))
    step = recorded(flat_body)

    def cond_(carry: Any) -> Any:
        out, flag, _ = test(carry[0])
        return jnp.asarray(out, dtype=bool) & ~(flag | carry[1])

    def body_(carry: Any) -> Any:
        out, flag, need = step(carry[0])
        return out, flag | carry[1], jnp.maximum(need, carry[2])

    _, flag0, need0 = test(leaves)
    leaves, flag, need = jax.lax.while_loop(cond_, body_, (leaves, flag0, need0))
    _report(flag, need)
    return unflat(leaves)


def _split(value: Any, leaves: list[Any]) -> Any:
    """The skeleton of `value` (what is known while tracing), its arrays put in `leaves`.

    Tuples, records, environments of sensitivities and stacks are walked; arrays and numbers
    are leaves; other objects (None, constants) are part of the skeleton.
    """
    from ..primitives.grad import EnvInstance

    if isinstance(value, tuple):
        return ("tuple", tuple(_split(v, leaves) for v in value))
    if isinstance(value, EnvInstance):
        keys = list(value.contents)
        return ("env", tuple(keys), tuple(_split(value.contents[k], leaves) for k in keys))
    if isinstance(value, JaxStack):
        leaves.extend(value.buffers)
        leaves.append(value.count)
        return ("stack", value.element, len(value.buffers), value.functions)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [f.name for f in dataclasses.fields(value)]
        return ("record", type(value), tuple(_split(getattr(value, n), leaves) for n in names))
    if isinstance(value, (bool, int, float, np.ndarray, np.generic)) or hasattr(value, "shape"):
        leaves.append(value)
        return ("leaf",)
    if isinstance(value, types.FunctionType):
        # A closure: its code is known while tracing, the values it closes over are data.
        cells = value.__closure__ or ()
        if len(cells) > 64 or _depth(value) > 8:
            raise TypeError("a closure too deep to cross a branch under XLA")
        parts = tuple(_split(c.cell_contents, leaves) for c in cells)
        return (
            "fn",
            value.__code__,
            id(value.__globals__),
            value.__defaults__,
            parts,
            _Any(value),
        )
    if callable(value) and not isinstance(value, type):
        raise TypeError("a function value that is not a closure of the generated code")
    return ("static", value)


class _Any:
    """A part of a skeleton that two skeletons need not share (equal to any other)."""

    def __init__(self, value: Any):
        self.value = value

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _Any)

    __hash__ = object.__hash__


def _depth(f: Any, seen: int = 0) -> int:
    """How deeply closures nest in the cells of closure `f`."""
    if seen > 8:
        return seen
    inner = [
        c.cell_contents
        for c in (f.__closure__ or ())
        if isinstance(c.cell_contents, types.FunctionType)
    ]
    return 1 + max((_depth(g, seen + 1) for g in inner), default=0)


def _join(skeleton: Any, leaves: Any) -> Any:
    kind = skeleton[0]
    if kind == "leaf":
        return next(leaves)
    if kind == "tuple":
        return tuple(_join(s, leaves) for s in skeleton[1])
    if kind == "env":
        from ..primitives.grad import EnvInstance

        return EnvInstance({k: _join(s, leaves) for k, s in zip(skeleton[1], skeleton[2])})
    if kind == "stack":
        buffers = [next(leaves) for _ in range(skeleton[2])]
        return JaxStack(skeleton[1], buffers, next(leaves), skeleton[3])
    if kind == "record":
        return record_constructor(skeleton[1])(*(_join(s, leaves) for s in skeleton[2]))
    if kind == "fn":
        f = skeleton[5].value
        cells = tuple(types.CellType(_join(s, leaves)) for s in skeleton[4])
        return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, cells)
    return skeleton[1]


def jax_switch(index: Any, branches: list[Any]) -> Any:
    """``branches[index]()`` as ``lax.switch`` (a Python int index picks the branch now).

    The branches' results may be tuples, records and environments of arrays, of one
    skeleton; Python numbers are converted to arrays of the types JAX gives them.
    """
    import jax

    jnp = _jnp()
    if isinstance(index, (bool, int, np.integer, np.bool_)):
        return branches[int(index)]()
    skeletons: list[Any] = []

    def flat(branch: Any) -> Any:
        def run() -> Any:
            leaves: list[Any] = []
            skeletons.append(_split(branch(), leaves))
            return [jnp.asarray(x) for x in leaves]

        return recorded(run)

    fns = [flat(b) for b in branches]
    leaves, flag, need = jax.lax.switch(jnp.asarray(index, dtype=np.int32), fns)
    if any(s != skeletons[0] for s in skeletons[1:]):
        raise TypeError("the branches of a switch give values of different structures")
    _report(flag, need)
    return _join(skeletons[0], iter(leaves))


def jax_select(index: Any, values: list[Any]) -> Any:
    """The value ``values[index]`` (computed while tracing), which may hold functions.

    A loop that exits at several places returns one of several values (each exit's): their
    data is chosen by ``lax.switch``, and a function among them is a function that calls, by
    ``lax.switch``, the function of the exit taken (the backward pass of a loop's gradient).
    """
    if isinstance(index, (bool, int, np.integer, np.bool_)):
        return values[int(index)]
    v0 = values[0]
    if type(v0) is tuple and all(type(v) is tuple and len(v) == len(v0) for v in values):
        return tuple(jax_select(index, [v[k] for v in values]) for k in range(len(v0)))
    if callable(v0) and not isinstance(v0, type):

        def chosen(*args: Any) -> Any:
            return jax_switch(index, [lambda f=f: f(*args) for f in values])

        return chosen
    return jax_switch(index, [lambda v=v: v for v in values])


def jax_cond(c: Any, then: Any, other: Any) -> Any:
    """``then() if c else other()`` as ``lax.cond`` (a Python bool picks the branch now)."""
    if isinstance(c, (bool, np.bool_)):
        return then() if c else other()
    return jax_switch(_jnp().asarray(c, dtype=bool).astype(np.int32), [other, then])


def jax_not(x: Any) -> Any:
    """``not x`` of a traced boolean."""
    if isinstance(x, (bool, np.bool_)):
        return not x
    return _jnp().logical_not(x)


# Stacks -------------------------------------------------------------------------------------


class _Empty:
    """The empty stack before its element type is known (``stack_new()``)."""

    def __repr__(self) -> str:
        return "EMPTY_JAX_STACK"


EMPTY = _Empty()


def _leaves(value: Any, a: Any, out: list[Any]) -> None:
    if isinstance(a, (AbstractScalar, AbstractArray)):
        out.append(value)
    elif isinstance(a, AbstractTuple):
        for v, e in zip(value, a.elements):
            _leaves(v, e, out)
    elif isinstance(a, AbstractRecord):
        for n, f in zip(a.names, a.fields):
            _leaves(getattr(value, n), f, out)
    elif isinstance(a, AbstractStack):
        if value is EMPTY:
            value = JaxStack.new(a.element)
        out.extend(value.buffers)
        out.append(value.count)
    else:
        raise TypeError(f"a value of type {a} cannot be pushed on a stack under XLA")


def _shapes(a: Any, out: list[tuple[tuple[int, ...], Any]]) -> None:
    if isinstance(a, (AbstractScalar, AbstractArray)):
        out.append((tuple(getattr(a, "shape", ())), _dtype(a)))
    elif isinstance(a, AbstractTuple):
        for e in a.elements:
            _shapes(e, out)
    elif isinstance(a, AbstractRecord):
        for f in a.fields:
            _shapes(f, out)
    elif isinstance(a, AbstractStack):
        sub: list[Any] = []
        _shapes(a.element, sub)
        out.extend(((Trace.capacity, *s), d) for s, d in sub)
        out.append(((), np.dtype(np.int64)))
    else:
        raise TypeError(f"a value of type {a} cannot be pushed on a stack under XLA")


def _rebuild(leaves: Any, a: Any) -> Any:
    if isinstance(a, (AbstractScalar, AbstractArray)):
        return next(leaves)
    if isinstance(a, AbstractTuple):
        return tuple(_rebuild(leaves, e) for e in a.elements)
    if isinstance(a, AbstractRecord):
        return record_constructor(a.cls)(*(_rebuild(leaves, f) for f in a.fields))
    n: list[Any] = []
    _shapes(a.element, n)
    buffers = [next(leaves) for _ in n]
    return JaxStack(a.element, buffers, next(leaves))


def _canon(a: Any) -> Any:
    """`a` without what a buffer does not keep (known values, Python-scalar weakness)."""
    if isinstance(a, AbstractScalar):
        return AbstractScalar(a.dtype)
    if isinstance(a, AbstractTuple):
        return AbstractTuple(tuple(_canon(e) for e in a.elements))
    if isinstance(a, AbstractStack):
        return AbstractStack(_canon(a.element))
    return a


class _Functions:
    """The functions a stack of functions holds, by number (its rows hold the numbers).

    The backward pass of a loop with branches pushes, each iteration, the backpropagator of
    the branch taken: a function of the generated module with no free variables (the
    loop's values are on other stacks). Pushing one gives it a number, while JAX traces the
    program; popping reads the number, and calling what was popped calls the function of
    that number (``lax.switch`` if there are several). Stacks made in two branches of a
    ``lax.cond`` and joined share their numbering when one extends the other (`__eq__`).
    """

    def __init__(self) -> None:
        self.fns: list[Any] = []

    def number(self, f: Any) -> int:
        """The number of function `f`, given now if it has none."""
        if not callable(f) or getattr(f, "__closure__", None):
            raise TypeError("only functions without free variables are pushed under XLA")
        for k, g in enumerate(self.fns):
            if g is f:
                return k
        self.fns.append(f)
        return len(self.fns) - 1

    def function(self, number: Any) -> Any:
        """The function of `number` (a traced integer), as a function value."""

        def call(*args: Any) -> Any:
            if len(self.fns) == 1:
                return self.fns[0](*args)
            return jax_switch(number, [lambda f=f: f(*args) for f in self.fns])

        return call

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, _Functions):
            return False
        a, b = self.fns, other.fns
        if len(a) < len(b):
            a, b = b, a
        if not all(f is g for f, g in zip(a, b)):
            return False
        # One numbering extends the other: both are the longer one from now on.
        self.fns = other.fns = a
        return True

    __hash__ = object.__hash__


class JaxStack:
    """A stack of values of abstract type `element`: a buffer per leaf and a counter.

    Each buffer has `Trace.capacity` rows. Pushing writes row ``count`` and records the
    size needed (past the capacity, the call runs again with more rows); popping reads row
    ``count - 1``. The loops' states carry a stack as its buffers and counter (`_split`).
    A stack of functions holds their numbers (`functions`, a `_Functions`).
    """

    def __init__(self, element: Any, buffers: list[Any], count: Any, functions: Any = None):
        self.element, self.buffers, self.count = _canon(element), list(buffers), count
        self.functions = functions

    @staticmethod
    def new(element: Any) -> JaxStack:
        """An empty stack of `element`s, of the trace's capacity."""
        jnp = _jnp()
        count = jnp.asarray(0, dtype=np.int64)
        if isinstance(element, AbstractFunction):
            buffer = jnp.zeros((Trace.capacity,), dtype=np.int32)
            return JaxStack(element, [buffer], count, _Functions())
        shapes: list[Any] = []
        _shapes(element, shapes)
        buffers = [jnp.zeros((Trace.capacity, *s), dtype=d) for s, d in shapes]
        return JaxStack(element, buffers, count)

    def push(self, x: Any) -> JaxStack:
        """The stack with `x` on top."""
        leaves: list[Any] = []
        if self.functions is not None:
            leaves.append(self.functions.number(x))
        else:
            _leaves(x, self.element, leaves)
        from jax import lax

        # Past the capacity the write is clamped to the last row: the call is then run again
        # with larger buffers (`_need`), so that row is never read.
        buffers = [
            lax.dynamic_update_index_in_dim(b, _jnp().asarray(v, dtype=b.dtype), self.count, 0)
            for b, v in zip(self.buffers, leaves)
        ]
        _need(self.count + 1)
        return JaxStack(self.element, buffers, self.count + 1, self.functions)

    def pop(self) -> tuple[Any, JaxStack]:
        """The top and the rest (the generated code pops only a non-empty stack)."""
        i = self.count - 1
        from jax import lax

        rows = [lax.dynamic_index_in_dim(b, i, 0, keepdims=False) for b in self.buffers]
        if self.functions is not None:
            top = self.functions.function(rows[0])
        else:
            top = _rebuild(iter(rows), self.element)
        return top, JaxStack(self.element, self.buffers, i, self.functions)

    def __getitem__(self, k: int) -> Any:
        return self.pop()[k]

    def empty(self) -> Any:
        """Whether nothing is on the stack."""
        return self.count == 0


def _register() -> None:
    import jax

    jax.tree_util.register_pytree_node(
        JaxStack,
        lambda s: ((s.buffers, s.count), (s.element, s.functions)),
        lambda aux, ch: JaxStack(aux[0], ch[0], ch[1], aux[1]),
    )


_registered = False


def setup() -> None:
    """Register the runtime's pytrees with JAX (once)."""
    global _registered
    if not _registered:
        _register()
        _registered = True


def stack_push(s: Any, x: Any, element: Any) -> JaxStack:
    """``stack_push(s, x)``: `s` may be the untyped empty stack."""
    if s is EMPTY:
        s = JaxStack.new(element)
    return s.push(x)


def stack_pop(s: JaxStack) -> tuple[Any, JaxStack]:
    """``stack_pop(s)``: ``(top, rest)``."""
    return s.pop()


def stack_empty(s: Any) -> Any:
    """``stack_empty(s)``."""
    return True if s is EMPTY else s.empty()


# Python's errors ------------------------------------------------------------------------------


def _finite(x: Any) -> Any:
    return _jnp().isfinite(x)


def check_float(result: Any, *inputs: Any) -> Any:
    """`result` of a Python-float operation, flagged where Python may raise instead.

    Python raises (ZeroDivisionError, ValueError: math domain error, OverflowError) where
    XLA returns ``inf`` or ``nan``. Any result that is not finite is flagged (one test): the
    host runs the call again, and raises Python's error, or returns the same ``inf`` or
    ``nan`` where Python does (``math.exp(math.inf)``).
    """
    return check(~_finite(result), result)


def check_divisor(result: Any, divisor: Any) -> Any:
    """`result` of an integer division or modulo, flagged where the divisor is 0."""
    return check(_jnp().asarray(divisor) == 0, result)


def check_index(a: Any, index: Any) -> Any:
    """``a[index]``, flagged where an integer index is out of bounds (Python raises)."""
    jnp = _jnp()
    parts = index if isinstance(index, tuple) else (index,)
    for k, i in enumerate(parts):
        if isinstance(i, slice) or i is None or i is Ellipsis:
            if i is None or i is Ellipsis:
                raise TypeError("an index with None or ... is not checked under XLA")
            continue
        if isinstance(i, (int, np.integer)):
            continue  # a constant index: inference checked it
        n = a.shape[k]
        i = jnp.asarray(i)
        check(jnp.any((i < -n) | (i >= n)), None)
    return a[index]

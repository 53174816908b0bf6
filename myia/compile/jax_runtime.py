"""What the generated JAX code calls: stacks as buffers, error flags, values as arrays.

The JAX backend's generated code (`myia.compile.jax_codegen`) runs once, under ``jax.jit``'s
tracer, to build one XLA computation. These helpers are what it calls where the NumPy
backend's code uses Python's own data (its control flow is `myia.compile.jax_control`'s):

- `to_carry`, `placeholder`: a loop's state as arrays of the types Myia inferred (a Python
  float is a float64 array in every iteration);
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

from typing import Any

import numpy as np

from ..abstract.data import (
    BOTTOM,
    AbstractArray,
    AbstractFunction,
    AbstractRecord,
    AbstractScalar,
    AbstractStack,
    AbstractTuple,
)
from . import jax_lags as lags
from .lower import record_constructor


class Trace:
    """The state of the trace under way: its stacks' capacity, and the conditions recorded.

    ``flags`` is a list per traced function body (innermost last) of boolean conditions,
    ``needs`` of the sizes the stacks pushed there needed.
    """

    capacity: int = 64
    flags: list[list[Any]] = []
    needs: list[list[Any]] = []
    #: Integers known when tracing, by the id of their (traced) array: ``id -> (array, n)``.
    known: dict[int, tuple[Any, int]] = {}
    #: Stack buffers whose rows are all one value (`uniform`), by the buffer's id:
    #: ``id -> (buffer, the value pushed, the row)``.
    uniform: dict[int, tuple[Any, Any, Any]] = {}
    #: The program's arguments (traced), by id.
    arguments: dict[int, Any] = {}

    @classmethod
    def start(cls, capacity: int, arguments: Any = ()) -> None:
        """Start tracing a program whose stacks have `capacity` rows, of `arguments`."""
        cls.capacity = capacity
        cls.known = {}
        cls.uniform = {}
        cls.arguments = {id(x): x for x in arguments}
        lags.reset()


def remember(x: Any, n: int) -> Any:
    """Record that the traced integer array `x` is `n` (a loop's counter, a stack's size)."""
    Trace.known[id(x)] = (x, n)
    return x


def uniform(buffer: Any) -> tuple[Any, Any] | None:
    """``(value pushed, row)`` where every row of stack buffer `buffer` is that row.

    A stack's buffer starts so at its first push of an argument of the program (a weight:
    the row broadcast, the rows past the stack's size are never read), and stays so while
    every push pushes that same traced value; popping then reads the row, not the buffer,
    and XLA drops the buffer. A loop whose state holds such a buffer (and not the value)
    assumes it stays so (`jax_control`), and traces its body again without the assumption
    where it does not.
    """
    entry = Trace.uniform.get(id(buffer))
    return entry[1:] if entry is not None and entry[0] is buffer else None


def same(buffer: Any, pushed: Any, row: Any) -> Any:
    """Record that every row of `buffer` is `row`, the value `pushed` (see `uniform`)."""
    Trace.uniform[id(buffer)] = (buffer, pushed, row)
    return buffer


def _plus(count: Any, n: int) -> Any:
    """``count + n``, remembered where `count` is known (a stack's size)."""
    k = known(count)
    out = count + n
    return out if k is None else remember(out, k + n)


def known(x: Any) -> int | None:
    """The value of integer `x` where it is known when tracing (else None)."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return int(x)
    entry = Trace.known.get(id(x))
    return entry[1] if entry is not None and entry[0] is x else None


def _jnp() -> Any:
    import jax.numpy as jnp

    return jnp


def check(cond: Any, value: Any) -> Any:
    """Record that the call must run on the host if `cond` holds; return `value`."""
    if Trace.flags and concrete(cond) is not False:
        Trace.flags[-1].append(cond)
    return value


def raise_flagged(exc_class: Any, *args: Any) -> Any:
    """``raise exc_class(*args)``: flagged (XLA cannot raise), the end of its path (`RAISED`)."""
    check(True, None)
    return RAISED


def assert_flagged(cond: Any, msg: Any) -> None:
    """``assert cond, msg``: flagged where `cond` is false (the host raises `AssertionError`)."""
    c = concrete(cond)
    check(not c if c is not None else _jnp().logical_not(cond), None)


def flagged() -> Any:
    """Whether an error is flagged so far in the bodies being traced (False where none is).

    A loop of unknown trip count after an error does not run: the call runs again on the
    host, and the state the error left (a loop stopped at it) may never end the loop.
    """
    flag: Any = False
    for level in Trace.flags:
        for f in level:
            flag = either(flag, f)
    return flag


def _need(size: Any) -> None:
    if Trace.needs:
        k = known(size)
        Trace.needs[-1].append(size if k is None else k)


# Error flags and stack sizes, folded when tracing where they are known -----------------------
#
# A program's status (`JaxExecutable`) is read back from the device after each call, a wait
# for the whole computation: a status known when tracing (a loop of known trip count pushing
# a known number of rows, indices known in bounds) leaves no status to read.


def concrete(x: Any) -> bool | int | None:
    """The value of scalar flag or size `x` where it is known when tracing, else None."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    k = known(x)
    if k is not None or getattr(x, "shape", None) != () or _traced(x):
        return k
    value = np.asarray(x)  # a constant computed when tracing (`eager`)
    return bool(value) if value.dtype == bool else int(value) if value.dtype.kind in "iu" else None


def _traced(x: Any) -> bool:
    from jax.core import Tracer

    return isinstance(x, Tracer)


def tests(*operands: Any) -> Any:
    """The array module of a flag's test of `operands`: NumPy where none is traced.

    ``1.0 / 2`` tests ``2 == 0``: computed when tracing, a constant False, not a status to
    read back (`concrete`), and no work for the device. Tests of traced values are traced.
    """
    return _jnp() if any(map(_traced, operands)) else np


def either(a: Any, b: Any) -> Any:
    """``a | b`` of two error flags, a Python bool where both are known."""
    ka, kb = concrete(a), concrete(b)
    if ka is not None and kb is not None:
        return bool(ka or kb)
    if ka is False or kb is False:
        return b if ka is False else a
    jnp = _jnp()
    return jnp.asarray(a, dtype=bool) | jnp.asarray(b, dtype=bool)


def larger(a: Any, b: Any) -> Any:
    """``max(a, b)`` of two stack sizes, a Python int where both are known."""
    ka, kb = concrete(a), concrete(b)
    if ka is not None and kb is not None:
        return max(ka, kb)
    jnp = _jnp()
    return jnp.maximum(jnp.asarray(a, dtype=np.int64), jnp.asarray(b, dtype=np.int64))


# Values of Myia's types as arrays -----------------------------------------------------------


def _dtype(a: AbstractScalar | AbstractArray) -> Any:
    return np.dtype(a.dtype)


def to_carry(value: Any, a: Any) -> Any:
    """`value`, of abstract type `a`, with its leaves as arrays of `a`'s dtypes.

    The state of a ``lax.while_loop`` and the results of ``lax.switch``'s branches must have
    one type: a Python float is a (strong) float64 array, a Python int an int64 array.
    """
    jnp = _jnp()
    if isinstance(value, Union) or isinstance(a, AbstractFunction):
        return value  # split by `jax_skeletons.split`
    if isinstance(a, (AbstractScalar, AbstractArray)):
        out = jnp.asarray(value, dtype=_dtype(a))
        n = known(value) if isinstance(a, AbstractScalar) else None
        return out if n is None else remember(out, n)
    if isinstance(a, tuple):
        return tuple(to_carry(v, e) for v, e in zip(value, a))
    if isinstance(a, AbstractTuple):
        return tuple(to_carry(v, e) for v, e in zip(value, a.elements))
    if isinstance(a, AbstractRecord):
        cons = record_constructor(a.cls)
        return cons(*(to_carry(getattr(value, n), f) for n, f in zip(a.names, a.fields)))
    if isinstance(a, AbstractStack):
        return empty_stack(a.element) if value is EMPTY else value
    from ..abstract.data import ENV

    if a is ENV:
        return value  # an environment of sensitivities: split by `jax_skeletons.split`
    if a is BOTTOM:
        return UNSET  # the value of a path that raised (`RAISED`): never read
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
        return empty_stack(a.element)
    from ..abstract.data import ENV
    from ..primitives.grad import EMPTY_ENV

    if a is ENV:
        return EMPTY_ENV
    return UNSET  # a function: its code is known once a path assigns it


class _Unset:
    """A loop variable of no array type (a function) that no path has assigned yet.

    `jax_control` joins it with any value (`merge`), and fits it as zeros of the value's
    skeleton. Using it (a call, an index, an attribute) is code on a path never taken: the
    state of a loop that runs only once the variable is assigned, or an alternative of a
    union that is not the one taken (`Unreachable`).
    """

    def __repr__(self) -> str:
        return "UNSET"

    def __call__(self, *args: Any) -> Any:
        raise Unreachable("a call of a variable no path has assigned")

    def __getitem__(self, k: Any) -> Any:
        raise Unreachable("an index of a variable no path has assigned")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise Unreachable("an attribute of a variable no path has assigned")


UNSET = _Unset()


class _Raised(_Unset):
    """What a path that raises gives under XLA (`raise_flagged`): the path ends there.

    `jax_control.jax_switch` fits a branch that gives it as zeros of the other branches'
    join; a use of it is `Unreachable`, as `UNSET`'s (the enclosing branch gives zeros, its
    flag up); a loop carries nothing for it. The flag raised makes the host run the call
    again, and raise the error at the user's line.
    """

    def __repr__(self) -> str:
        return "RAISED"


RAISED = _Raised()


class Unreachable(Exception):
    """Code that pops a stack nothing was pushed on: a branch never taken when it runs.

    ``lax.switch`` traces every branch, also those the call never takes (a state of a loop
    that this path never enters). Such a branch gives zeros (`jax_control.jax_switch`).
    """


class Union:
    """One of several values of different structures: ``alts[index]``, `index` traced.

    Two branches of a ``lax.cond`` may give values of different structures (two different
    functions: the backward passes of two exits of a loop); `jax_control` joins them as a
    union, which holds the data of every alternative (zeros but in the one taken). Calling a
    union calls the alternative taken (a ``lax.switch``); `jax_control.env_sens` reads the
    alternative of the type it expects.
    """

    def __init__(self, index: Any, alts: list[Any]):
        self.index, self.alts = index, list(alts)

    def __call__(self, *args: Any) -> Any:
        from .jax_control import jax_switch

        return jax_switch(self.index, [lambda f=f: f(*args) for f in self.alts])

    def __getitem__(self, k: Any) -> Any:
        """The union of the alternatives' items (UNSET where one has none: not taken)."""
        items = []
        for alt in self.alts:
            try:
                items.append(alt[k])
            except (IndexError, KeyError, TypeError, Unreachable):
                items.append(UNSET)
        return Union(self.index, items)


# Stacks -------------------------------------------------------------------------------------


class _Empty:
    """The empty stack before its element type is known (``stack_new()``).

    `jax_skeletons.merge` joins it with any stack. Popping it is code on a path never taken
    (`Unreachable`), as popping an `AnyStack` nothing was pushed on.
    """

    def __repr__(self) -> str:
        return "EMPTY_JAX_STACK"

    def pop(self) -> Any:
        raise Unreachable("a value popped from a stack nothing was pushed on")

    def __getitem__(self, k: int) -> Any:
        return self.pop()[k]


EMPTY = _Empty()


def empty_stack(element: Any) -> Any:
    """An empty stack of `element`s for a loop's state: `EMPTY` where `element` has no layout.

    A stack of arrays is a `JaxStack` of its type. A stack whose element type has no fixed
    layout (functions, environments, or ``⊥`` where the type of a variable is less precise
    than the values pushed on it) stays `EMPTY`: the pushes give it its layout, and it joins
    with the stack of any other path (`jax_skeletons.merge`). An empty `AnyStack` there would
    become an `AnyStack` of the values pushed, which does not join with the `JaxStack` that
    another path pushed the same values on (a union, that a push of the stack cannot read).
    """
    stack = JaxStack.new(element)
    return EMPTY if isinstance(stack, AnyStack) else stack


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


class JaxStack:
    """A stack of values of abstract type `element`: a buffer per leaf and a counter.

    Each buffer has `Trace.capacity` rows. Pushing writes row ``count`` and records the
    size needed (past the capacity, the call runs again with more rows); popping reads row
    ``count - 1``. The loops' states carry a stack as its buffers and counter
    (`jax_skeletons.split`). The element type is made of arrays and scalars in tuples, records
    and stacks; stacks of other values (functions, environments) are `AnyStack`s.
    """

    def __init__(self, element: Any, buffers: list[Any], count: Any):
        self.element, self.buffers, self.count = _canon(element), list(buffers), count

    @staticmethod
    def new(element: Any) -> JaxStack | AnyStack:
        """An empty stack of `element`s, of the trace's capacity."""
        jnp = _jnp()
        count = remember(jnp.asarray(0, dtype=np.int64), 0)
        shapes: list[Any] = []
        try:
            _shapes(element, shapes)
        except TypeError:
            return AnyStack(None, [], count)
        buffers = [jnp.zeros((Trace.capacity, *s), dtype=d) for s, d in shapes]
        return JaxStack(element, buffers, count)

    def push(self, x: Any) -> JaxStack:
        """The stack with `x` on top."""
        leaves: list[Any] = []
        _leaves(x, self.element, leaves)
        count = _plus(self.count, 1)
        buffers = _write(self.buffers, leaves, self.count, keep=True)
        for b, v in zip(buffers, leaves):
            lags.pushed(b, v, count)
        return JaxStack(self.element, buffers, count)

    def pop(self) -> tuple[Any, JaxStack]:
        """The top and the rest (the generated code pops only a non-empty stack)."""
        i = _plus(self.count, -1)
        rows = [uniform(b) for b in self.buffers]
        lagged = [lags.row(b, self.buffers, i) for b in self.buffers]
        unread = [u is None and r is None for u, r in zip(rows, lagged)]
        read = iter(_read([b for b, x in zip(self.buffers, unread) if x], i))
        top = _rebuild(
            iter(
                next(read) if x else u[1] if u is not None else r
                for u, r, x in zip(rows, lagged, unread)
            ),
            self.element,
        )
        return top, JaxStack(self.element, self.buffers, i)

    def __getitem__(self, k: int) -> Any:
        return self.pop()[k]

    def empty(self) -> Any:
        """Whether nothing is on the stack."""
        return self.count == 0


def _write(buffers: list[Any], leaves: list[Any], count: Any, keep: bool = False) -> list[Any]:
    """`buffers` with row `count` set to `leaves`, the size needed recorded.

    With `keep`, a buffer whose rows are all one value stays so where that value is pushed
    again, and the first push broadcasts its row (`uniform`).
    """
    from jax import lax

    # Past the capacity the write is clamped to the last row: the call is then run again
    # with larger buffers (`_need`), so that row is never read.
    _need(_plus(count, 1))
    jnp = _jnp()
    out = []
    for b, v in zip(buffers, leaves):
        row = jnp.asarray(v, dtype=b.dtype)
        u = uniform(b) if keep else None
        if u is not None and u[0] is v:
            out.append(b)
        elif keep and lags.skip(buffers, leaves, len(out)):
            out.append(b)  # the row is another buffer's last (`jax_lags`)
        elif keep and known(count) == 0 and Trace.arguments.get(id(v)) is v:
            out.append(same(jnp.broadcast_to(row, b.shape), v, row))
        else:
            out.append(lax.dynamic_update_index_in_dim(b, row, count, 0))
    return out


def _read(buffers: list[Any], i: Any) -> list[Any]:
    from jax import lax

    return [lax.dynamic_index_in_dim(b, i, 0, keepdims=False) for b in buffers]


class AnyStack:
    """A stack of any values the generated code pushes: closures, environments, stacks.

    Its rows hold the leaves (arrays) of the values pushed, split by `jax_skeletons.split`;
    their *layout* is the skeleton of those values (functions' code, environments' keys,
    tuples), fixed by the first push. A push of a value of another skeleton joins the two
    layouts (`jax_skeletons.merge`: functions of different code become a union, whose index
    is in the rows too) and refits the rows already pushed to the joined layout, one
    ``vmap`` of `jax_skeletons.fit` over the rows. Popping rebuilds the value from its row: a
    union of functions is called by ``lax.switch`` on the index popped. A loop or a branch
    whose stacks' layouts differ is traced again with them joined, as for any value.
    """

    def __init__(self, layout: Any, buffers: list[Any], count: Any):
        self.layout, self.buffers, self.count = layout, list(buffers), count

    def push(self, x: Any) -> AnyStack:
        """The stack with `x` on top (the layout joined with `x`'s skeleton)."""
        from . import jax_skeletons as sk

        leaves: list[Any] = []
        skeleton = sk.split(x, leaves)
        stack = self
        if self.layout is None or skeleton != self.layout:
            layout = skeleton if self.layout is None else sk.merge(self.layout, skeleton)
            stack = sk.refit(self, layout)
            fitted: list[Any] = []
            sk.fit(skeleton, iter(leaves), layout, fitted)
            leaves = fitted
        buffers = _write(stack.buffers, leaves, stack.count)
        return AnyStack(stack.layout, buffers, _plus(stack.count, 1))

    def pop(self) -> tuple[Any, AnyStack]:
        """The top and the rest (the generated code pops only a non-empty stack)."""
        from . import jax_skeletons as sk

        if self.layout is None:
            raise Unreachable("a value popped from a stack nothing was pushed on")
        i = _plus(self.count, -1)
        top = sk.join(self.layout, iter(_read(self.buffers, i)))
        return top, AnyStack(self.layout, self.buffers, i)

    def __getitem__(self, k: int) -> Any:
        return self.pop()[k]

    def empty(self) -> Any:
        """Whether nothing is on the stack."""
        return self.count == 0


def _register() -> None:
    import jax

    jax.tree_util.register_pytree_node(
        JaxStack,
        lambda s: ((s.buffers, s.count), s.element),
        lambda aux, ch: JaxStack(aux, ch[0], ch[1]),
    )


_registered = False


def setup() -> None:
    """Register the runtime's pytrees with JAX (once)."""
    global _registered
    if not _registered:
        _register()
        _registered = True


def stack_push(s: Any, x: Any, element: Any) -> JaxStack | AnyStack:
    """``stack_push(s, x)``: `s` may be the untyped empty stack."""
    if s is EMPTY:
        s = JaxStack.new(element)
    return s.push(x)


def stack_pop(s: JaxStack | AnyStack) -> tuple[Any, Any]:
    """``stack_pop(s)``: ``(top, rest)``."""
    return s.pop()


def stack_unpush(d: Any, x_type: Any) -> tuple[Any, Any]:
    """``stack_unpush(d, x)``: ``d`` without its top and its top, zeros of `x_type` if empty.

    ``d`` is the sensitivity of a pushed stack (a gradient differentiated again).
    """
    if d is EMPTY or (isinstance(d, AnyStack) and d.layout is None):
        return d, placeholder(x_type)
    jnp = _jnp()
    top, rest = d.pop()
    some = d.count > 0
    count = jnp.maximum(rest.count, 0)
    if isinstance(d, AnyStack):
        from . import jax_skeletons as sk

        tops: list[Any] = []
        sk.split(top, tops)
        zeros: list[Any] = []
        sk.zeros(d.layout, zeros)
        leaves = [jnp.where(some, t, z) for t, z in zip(tops, zeros)]
        return AnyStack(d.layout, rest.buffers, count), sk.join(d.layout, iter(leaves))
    zero = placeholder(x_type)
    tops = []
    zeros = []
    _leaves(top, d.element, tops)
    _leaves(zero, d.element, zeros)
    top = _rebuild(iter([jnp.where(some, t, z) for t, z in zip(tops, zeros)]), d.element)
    return JaxStack(d.element, rest.buffers, count), top


def stack_empty(s: Any) -> Any:
    """``stack_empty(s)``."""
    return True if s is EMPTY else s.empty()

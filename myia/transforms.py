"""Transformations a researcher composes, built on Myia's reverse and forward modes.

They are vjp, jvp, jacobians, hessian, vmap, `stop_gradient`, `checkpoint`, and tree utilities.
Each is written in Myia's Python subset (the ``*_`` functions below) and is what the public
name means inside ``@myia`` code; at the top level, the public function compiles a small
entry that calls it (one compilation per function transformed and argument signature, cached).
Everything is a transformation of the typed IR before running, through every construct
`grad` differentiates (branches, loops with any trip count, recursion, closures):

- ``vjp(f, *primals)`` is ``(f(*primals), vjp_fn)``; ``vjp_fn(ct)`` is the gradient of
  ``<f(*xs), ct>`` at the primals (it runs the forward pass again: nothing is stored between
  the two calls).
- ``jvp(f, primals, tangents)`` is ``(f(*primals), J t)``: forward mode, ``f``'s tangent
  graph (`myia.grad.forward`) called on the primals and tangents (``jvp_of(f)``).
- ``jacrev`` stacks one `vjp` per output element, in a loop that runs in compiled code;
  ``jacfwd`` is the `jvp` along each input element, batched by `vmap` (one program for
  every column where the tangent program can be batched, a compiled loop otherwise);
  ``hessian`` is ``jacfwd(grad(f))`` (forward over reverse). Their ``argnums`` is a position
  or a tuple of them; arguments and outputs may be structures (a block per pair of leaves).
- ``checkpoint(f)`` is ``f``, whose forward pass a gradient runs again in its backward pass
  instead of keeping its intermediate values: calls go through `myia.grad.lib.checkpointed`,
  to which the J transform gives its own forward graph.
- ``vmap(f, in_axes, out_axes)`` is ``f``'s graph batched (`myia.grad.batching`): each
  primitive computes every example at once, a branch on a batched value selects per example,
  a loop on one runs until every example is done.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from . import jac_lists
from .api import MyiaFunction, grad
from .boundary import boundary
from .errors import MyiaTypeError
from .grad.forward_lib import interleave
from .grad.lib import checkpointed
from .operations.core import NoMatch, Operation
from .operations.ops import StaticOperation, refuse
from .primitives import P

# Myia code: structures ------------------------------------------------------------------------


def _is_record(x):
    return dataclasses.is_dataclass(x)


def _vdot(a, b):
    """The sum of the products of the leaves of two structures alike (a float)."""
    if a is None:
        return 0.0
    if isinstance(a, tuple):
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
    if isinstance(tree, tuple):
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
    return (P.record_fields(ts[0]),) + _fields_of(ts[1:])


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
    if isinstance(tree, tuple):
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


# Myia code: transformations -------------------------------------------------------------------


def stop_gradient_(x):
    return P.stop_gradient(x)


def checkpoint_(f):
    def checkpointed_f(*args):
        return checkpointed(f, *args)

    return checkpointed_f


# The functions below that take the function transformed are flagged ``at_call_site``: their
# body is parsed into their caller's (`myia.frontend.calls`), so that the function is a known
# graph there even when it is a closure (``vjp(lambda v: w * v, x)`` inside Myia code): the
# closures they make read it as a constant, and the transformation of a closure reads its
# variables where it is defined.
_AT_CALL_SITE = {"at_call_site": True}


def vjp_(f, *primals):
    return _vjp_tuple(f, primals)


def _vjp_tuple(f, primals):
    out = f(*primals)

    def vjp_fn(ct):
        # The gradient of ``<f(*xs), ct>`` with respect to the primals.
        return grad(lambda xs: _vdot(f(*xs), ct))(primals)

    return out, vjp_fn


def jvp_(f, primals, tangents):
    return P.jvp_of(f)(*_interleaved(primals, tangents))


def _interleaved(primals, tangents):
    # (A branch of its own: one in `jvp_` would make `f` a value passed on to its blocks.)
    if len(primals) != len(tangents):
        refuse("jvp(f, primals, tangents): primals and tangents are tuples of the same length")
    return interleave(primals, tangents)


def _with_arg(args, i, x):
    return args[:i] + (x,) + args[i + 1 :]


def _picked_args(args, argnums):
    """The arguments `argnums` of `args` (an int: that one; a tuple: the tuple of them)."""
    if isinstance(argnums, tuple):
        return _gather(args, argnums, argnums)
    return args[argnums]


def _gather(args, idx, todo):
    # The position in `idx` is the length of what is done: the tuple `idx`, which the
    # recursion passes on as it is, keeps its value at compile time.
    if len(todo) == 0:
        return ()
    return (args[idx[len(idx) - len(todo)]],) + _gather(args, idx, todo[1:])


def _put_args(args, argnums, xs):
    """`args` with the arguments `argnums` replaced by `xs` (`_picked_args`'s inverse)."""
    if isinstance(argnums, tuple):
        return _scatter(args, argnums, xs, argnums)
    return _with_arg(args, argnums, xs)


def _scatter(args, idx, xs, todo):
    if len(todo) == 0:
        return args
    k = len(idx) - len(todo)
    return _scatter(_with_arg(args, idx[k], xs[k]), idx, xs, todo[1:])


def _same(v):
    return v


def _map_picks(h, y, pick):
    """`y`'s structure with ``h(p)`` at each leaf: ``p(out)`` is the leaf of ``out`` there.

    `pick` takes a value of the structure of the whole to the part that `y` is.
    """
    if y is None:
        return None
    if isinstance(y, tuple):
        return _picks_tuple(h, y, pick)
    if isinstance(y, list):
        return [_map_picks(h, e, _pick_at(pick, i)) for i, e in enumerate(y)]
    if isinstance(y, dict):
        values = _picks_tuple(h, P.dict_values(y), lambda o: P.dict_values(pick(o)))
        return P.dict_from_values(y, values)
    if _is_record(y):
        fields = _picks_tuple(h, P.record_fields(y), lambda o: P.record_fields(pick(o)))
        return P.record_from_fields(y, fields)
    return h(pick)


def _picks_tuple(h, ys, pick):
    if len(ys) == 0:
        return ()
    head = _map_picks(h, ys[0], lambda o: pick(o)[0])
    return (head,) + _picks_tuple(h, ys[1:], lambda o: pick(o)[1:])


def _map_puts(h, x, put):
    """`x`'s structure with ``h(leaf, p)`` at each leaf: ``p(v)`` is the whole, `v` there.

    `put` takes a value of the structure of `x` to the whole, with zeros everywhere else.
    """
    if x is None:
        return None
    if isinstance(x, tuple):
        return _puts_tuple(h, x, put)
    if isinstance(x, list):
        return [_map_puts(h, e, _put_at(put, x, i)) for i, e in enumerate(x)]
    if isinstance(x, dict):
        values = _puts_tuple(h, P.dict_values(x), lambda vs: put(P.dict_from_values(x, vs)))
        return P.dict_from_values(x, values)
    if _is_record(x):
        fields = _puts_tuple(h, P.record_fields(x), lambda vs: put(P.record_from_fields(x, vs)))
        return P.record_from_fields(x, fields)
    return h(x, put)


def _puts_tuple(h, xs, put):
    if len(xs) == 0:
        return ()
    head = _map_puts(h, xs[0], lambda v: put((v,) + _zeros(xs[1:])))
    return (head,) + _puts_tuple(h, xs[1:], lambda vs: put((_zeros(xs[0]),) + vs))


def _pick_at(pick, i):
    return lambda o: pick(o)[i]


def _put_at(put, xs, i):
    return lambda v: put(_list_with(xs, i, v))


def _list_with(xs, i, v):
    """List `xs` of zeros but `v` at `i`."""
    return [v if j == i else _zeros(e) for j, e in enumerate(xs)]


def _zeros(x):
    return P.gmaterialize(P.gzeros(x))


def _jacrev_block(picked, a, y, put):
    """The Jacobian of the output leaf `y` w.r.t. ``a[0]`` (any structure), a gradient per element.

    ``grad(picked)(a, put(e))[0]`` is the gradient of ``<out, e>``, `e` at `y`'s place in
    the output. Each leaf of ``a[0]`` gets its block, shaped as `y` followed by the leaf, in
    the dtype of the leaf (as JAX's).
    """
    x = a[0]
    n = np.size(y)
    ks = np.arange(n)
    rows = tree_map_(lambda v: np.zeros((n, np.size(v)), dtype=P.dtype_of(v)), x)
    k = 0
    while k < n:
        e = np.reshape(P.astype(ks == k, P.dtype_of(y)), np.shape(y))
        row = grad(picked)(a, put(e))[0]
        rows = _add_row(rows, row, np.reshape(ks == k, (-1, 1)))
        k = k + 1
    return tree_map_(lambda r, v: np.reshape(r, np.shape(y) + np.shape(v)), rows, x)


def _add_row(rows, row, hit):
    """`rows` (a structure of ``n x size`` arrays) plus `row` at the row where `hit` is."""
    return tree_map_(lambda r, d: r + hit * np.reshape(d, (1, -1)), rows, row)


def _paired(f):
    """The function whose gradients give `f`'s Jacobian: ``<f(*b), e>`` of ``(b, e)``."""

    def picked(b, e):
        return _vdot(f(*b), e)

    return picked


def _jacrev_of(picked, args, y):
    """The Jacobian of output `y` w.r.t. ``args[0]``: a block per leaf of output and input."""
    return _map_puts(lambda v, put: _jacrev_block(picked, args, v, put), y, _same)


def _jacfwd_first(f, args):
    """The Jacobian of ``f`` w.r.t. its first argument: the `jvp` along each element, batched.

    ``vmap`` of the `jvp` over the basis of the argument (of its leaves, one after the other):
    one program computes every column where the tangent program can be batched, else a
    compiled loop runs one `jvp` per element. The columns are then cut into a block per leaf
    of the output and of the argument, as JAX's.
    """
    x = args[0]
    n = np.size(np.concatenate(tree_leaves_(tree_map_(np.ravel, x))))
    basis = tree_map_(lambda b, v: P.astype(b, P.dtype_of(v)), _split(np.eye(n), x)[0], x)
    rest = _zeros(args[1:])
    cols = P.vmap_of(lambda t: jvp_(f, args, (t,) + rest)[1], 0, 0)(basis)
    # ``f(*args)`` read here: when ``f`` is a closure, the tangent program of the columns
    # finds its variables in scope (only the value's structure and shapes are used).
    y = f(*args)

    def block(p):
        c = np.transpose(np.reshape(p(cols), (n, np.size(p(y)))))
        return tree_map_(
            lambda b, v: np.reshape(b, np.shape(p(y)) + np.shape(v)), _split(c, x)[0], x
        )

    return _map_picks(block, y, _same)


def _split(c, x):
    """``(t, rest)``: `t` the leaves of `x` cut from the columns of ``n x m`` array `c`, in order.

    Each leaf ``v`` of `t` is ``n x v.shape``; `rest` the columns left over.
    """
    if x is None:
        return None, c
    if isinstance(x, tuple):
        return _split_tuple(c, x)
    if isinstance(x, dict):
        values, c = _split_tuple(c, P.dict_values(x))
        return P.dict_from_values(x, values), c
    if _is_record(x):
        fields, c = _split_tuple(c, P.record_fields(x))
        return P.record_from_fields(x, fields), c
    m = np.size(x)
    return np.reshape(c[:, :m], np.shape(c)[:1] + np.shape(x)), c[:, m:]


def _split_tuple(c, xs):
    if len(xs) == 0:
        return (), c
    head, c = _split(c, xs[0])
    tail, c = _split_tuple(c, xs[1:])
    return (head,) + tail, c


def _leaf_checked(kind, dtype, v):
    return v


def _float_leaf(kind: str, dtype: Any, v: Any) -> Any:
    """``v``, a leaf of an argument `kind` (a Jacobian) differentiates, if its dtype is a float.

    As JAX's, a Jacobian with respect to integers or booleans is a TypeError (its rows
    would be zeros from `jacrev`, derivatives on the reals from `jacfwd`): at compile time.
    """
    if np.dtype(dtype).kind not in "fc":
        raise NoMatch(
            f"{kind} requires float arguments, as JAX's, but one differentiated holds "
            f"{np.dtype(dtype).name} values: convert it first (x.astype(float), float(n))"
        )
    return _leaf_checked


float_leaf = StaticOperation("float_leaf", _float_leaf, static=(0, 1))


def _float_args(kind, x):
    """`x`, each of its leaves checked by `float_leaf`."""
    return tree_map_(lambda v: float_leaf(kind, P.dtype_of(v), v), x)


def _moved(f, argnums):
    """`f` of the arguments `argnums` (one, or a tuple of them) and of all of its arguments."""

    def moved(xs, a):
        return f(*_put_args(a, argnums, xs))

    return moved


def jacrev_(f, argnums=0):
    moved = _moved(f, argnums)

    picked = _paired(moved)

    def jac(*args):
        x = _float_args("jacrev", _picked_args(args, argnums))
        return _jacrev_of(picked, (x, args), f(*args))

    return jac


def jacfwd_(f, argnums=0):
    moved = _moved(f, argnums)

    def jac(*args):
        return _jacfwd_first(moved, (_float_args("jacfwd", _picked_args(args, argnums)), args))

    return jac


def hessian_(f, argnums=0):
    moved = _moved(f, argnums)

    def gradient(xs, a):  # it reads `f`: when `f` is a closure, so is it
        return grad(moved)(xs, a)

    def hess(*args):
        x = _float_args("hessian", _picked_args(args, argnums))
        return _jacfwd_first(gradient, (x, args))

    return hess


_LIB = (vjp_, _vjp_tuple, jvp_, _jacfwd_first, _moved, _paired, jacrev_, jacfwd_, hessian_)
for _fn in _LIB:
    _fn.__myia_flags__ = _AT_CALL_SITE  # type: ignore[attr-defined]


def vmap_(f, in_axes=0, out_axes=0):
    return P.vmap_of(f, in_axes, out_axes)


# The public functions -------------------------------------------------------------------------

_COMPILED: dict[Any, MyiaFunction] = {}


def _compiled(key: Any, entry: Callable[..., Any]) -> MyiaFunction:
    """The compiled `entry`, one per `key` (the function transformed and the options)."""
    fn = _COMPILED.get(key)
    if fn is None:
        fn = _COMPILED[key] = MyiaFunction(entry)
    return fn


def stop_gradient(x: Any) -> Any:
    """`x`, with a zero gradient: nothing flows back through it, at any order."""
    return x


_CHECKPOINTS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def checkpoint(f: Callable[..., Any] | None = None, *, loops: str | None = None) -> Any:
    """`f`, whose forward pass a gradient recomputes in its backward pass instead of storing it.

    Under `grad`, a call of ``checkpoint(f)`` keeps only its arguments and its value in the
    forward pass; the backward pass runs ``f``'s forward pass again on those arguments, with
    its intermediate values, and back-propagates through it. The values computed are those of
    ``f``. Usable at the top level, inside ``@myia`` code, and as a decorator.

    ``checkpoint(f, loops="sqrt")`` (or ``@checkpoint(loops="sqrt")``, for a Python function)
    is ``f`` whose loops (``while`` and ``for``, and loops nested in them) run in checkpointed
    chunks of 1, 2, 3, ... iterations: the memory of their gradient grows as the square root
    of their trip count, which need not be known before they run, for about one more forward
    pass of time (`myia.grad.loop_checkpoint`). ``f`` itself is not recomputed as a whole.
    """
    if loops is not None:
        return _checkpoint_loops(f, loops)
    if f is None:
        raise TypeError("checkpoint() needs a function to checkpoint")
    fn = getattr(f, "__myia_function__", f)
    if isinstance(fn, types.FunctionType):
        # A copy of the function, which Myia parses into a graph of its own, flagged: one per
        # function, so that the gradients using it are compiled once.
        copy = _CHECKPOINTS.get(fn)
        if copy is None:
            copy = _CHECKPOINTS[fn] = _flagged_copy(fn, {"checkpoint": True})
        return _as_called(f, fn, copy)

    def checkpointed_f(*args: Any) -> Any:  # a callable object: checkpointed as a call
        return checkpointed(f, *args)

    return checkpointed_f


_CHUNKED: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _checkpoint_loops(f: Any, loops: str) -> Any:
    """``checkpoint(f, loops=...)``: a copy of Python function `f` whose loops are chunked."""
    from .grad.loop_checkpoint import STRATEGIES

    if loops not in STRATEGIES:
        raise ValueError(f"checkpoint(loops={loops!r}): loops must be one of {STRATEGIES}")
    if f is None:  # @checkpoint(loops="sqrt")
        return lambda fn: _checkpoint_loops(fn, loops)
    fn = getattr(f, "__myia_function__", f)
    if not isinstance(fn, types.FunctionType):
        raise TypeError(
            f"checkpoint(f, loops={loops!r}) takes a Python function, not {type(f).__name__}"
        )
    copy = _CHUNKED.get(fn)
    if copy is None:
        copy = _CHUNKED[fn] = _flagged_copy(fn, {"checkpoint_loops": loops})
    return _as_called(f, fn, copy)


def _as_called(f: Any, fn: types.FunctionType, copy: types.FunctionType) -> Any:
    """The flagged `copy` of `fn`, the Myia code of `f`, as Python and Myia code call it.

    A plain function `f` is its own Myia code: its copy is called from Python too. Where `f`
    is compiled or transformed (``checkpoint(vmap(g))``, ``checkpoint(jacfwd(g))``, a
    ``@myia`` function), its Myia code is not Python that runs (``vmap_`` is an operation
    of Myia code): Python calling the result calls `f`, and Myia code parses `copy`.
    """
    return copy if fn is f else _Transformed(f, f, copy)


def _flagged_copy(fn: types.FunctionType, flags: dict[str, Any]) -> types.FunctionType:
    """A copy of `fn` (parsed into a graph of its own) whose graph carries `flags`."""
    copy = types.FunctionType(
        fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
    )
    copy.__kwdefaults__ = fn.__kwdefaults__
    functools.update_wrapper(copy, fn)
    del copy.__wrapped__
    copy.__myia_flags__ = flags  # type: ignore[attr-defined]
    return copy


@boundary
def vjp(f: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[[Any], Any]]:
    """``(f(*primals), vjp_fn)``: ``vjp_fn(ct)`` is the tuple of the cotangents of the primals."""
    out = _compiled(("out", f), lambda *xs: f(*xs))(*primals)

    def vjp_fn(ct: Any) -> Any:
        return _compiled(("vjp", f), lambda xs, c: _vjp_tuple(f, xs)[1](c))(primals, ct)

    def pullback(ct: Any) -> Any:  # what it is in Myia code (`vmap(vjp_fn)`): the primals
        return _vjp_tuple(f, primals)[1](ct)  # are constants there, as a closure's values

    return out, _Transformed(f, vjp_fn, pullback)


@boundary
def jvp(f: Callable[..., Any], primals: Any, tangents: Any) -> tuple[Any, Any]:
    """``(f(*primals), J tangents)``: the derivative of `f` at `primals` along `tangents`."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp(f, primals, tangents): primals and tangents are tuples")
    return _compiled(("jvp", f), lambda xs, ts: jvp_(f, xs, ts))(tuple(primals), tuple(tangents))


def _jacobian(kind: str, lib: Callable[..., Any], f: Callable[..., Any], argnums: Any) -> Any:
    argnums = tuple(argnums) if isinstance(argnums, (tuple, list)) else argnums
    positions = argnums if isinstance(argnums, tuple) else (argnums,)
    for i in positions:
        if not isinstance(i, int) or isinstance(i, bool):
            raise TypeError(f"{kind}: argnums is a position or a tuple of them, not {argnums!r}")
        if i < 0:
            raise ValueError(f"{kind}: argnums is a position counted from 0, not {i}")

    def jacobian(*args: Any) -> Any:  # what it is in Myia code
        return lib(f, argnums)(*args)

    compiled = _compiled((kind, f, argnums), jacobian)

    def jac(*args: Any) -> Any:
        lists = []
        for i in positions:
            if i >= len(args):
                raise ValueError(f"{kind}: no argument at position {i}")
            if kind == "jacrev" or not jac_lists.holds_list(args[i]):
                continue
            if jac_lists.convertible(args[i]) and (kind == "jacfwd" or len(positions) == 1):
                lists.append(i)  # passed as a tuple (`myia.jac_lists`)
                continue
            # Refused inside the compiled code too, where the message said "inside Myia
            # code" (`leaves_of_a_list`): this is the user's call.
            raise MyiaTypeError(
                f"{kind} with respect to a list inside a tuple, dict, dataclass or list"
                f"{' (or with several argnums)' if kind == 'hessian' else ''} is not "
                f"supported: compiled code has one type for a list of any length, and {kind} "
                "needs the argument's leaves one by one; pass tuples instead "
                f"({kind}(f)(tuple(xs))), or use jacrev"
            )
        if not lists:
            return compiled(*args)
        key = (kind, f, argnums, tuple(lists))
        entry = jac_lists.with_lists(lib, f, argnums, key[3])
        out, y = _compiled(key, entry)(
            *(tuple(a) if k in lists else a for k, a in enumerate(args))
        )
        return jac_lists.relisted(out, y, argnums, key[3], kind == "hessian")

    return _Transformed(f, jac, jacobian)


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


def jacrev(f: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
    """The Jacobian of `f` w.r.t. argument `argnums`, one reverse pass per output element.

    Its shape is the output's followed by the argument's, as in JAX. As in JAX too, a tuple
    `argnums` gives a tuple (one Jacobian per argument), an argument that is a structure
    (tuple, dict, dataclass) a structure alike, and an output that is a structure a structure
    alike of them: a block per leaf of the output and leaf of the arguments.
    """
    return _jacobian("jacrev", jacrev_, f, argnums)


def jacfwd(f: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
    """The Jacobian of `f` w.r.t. argument `argnums`, one `jvp` per input element.

    Structured as `jacrev`'s (a position or a tuple of them, structured arguments and outputs).
    """
    return _jacobian("jacfwd", jacfwd_, f, argnums)


def hessian(f: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
    """The Hessian of scalar function `f` w.r.t. argument `argnums`: ``jacfwd(grad(f))``.

    Forward over reverse: one forward-mode derivative of the gradient per input element. A
    tuple `argnums` gives a tuple of tuples (the block of each pair of arguments), as in JAX.
    """
    return _jacobian("hessian", hessian_, f, argnums)


def vmap(f: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0) -> Callable[..., Any]:
    """`f` mapped over an axis of its arguments, as JAX's ``vmap``.

    ``in_axes`` (an int, None, or one per argument, each a tuple of them for a tuple or record
    argument, or a dict of them for a dict) says which axis of each array is the batch (None:
    not batched); arguments passed by keyword are batched on their first axis. ``out_axes``
    (an int, or a tuple of them for a tuple result) says where the batch goes in the results.
    ``f``'s graph is batched before running (`myia.grad.batching`): one program computes
    every example, with no loop over them.
    """
    return _Batched(f, in_axes, out_axes)


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
        f, axes = self.f, self.in_axes
        if kwargs:  # keywords bound to their positions, batched on axis 0 (as JAX does)
            sig = inspect.signature(getattr(f, "__myia_function__", f))
            bound = sig.bind(*args, **kwargs)
            given = set(bound.arguments)
            bound.apply_defaults()  # the defaults of the parameters skipped: not batched
            if given & set(bound.kwargs):
                raise MyiaTypeError(
                    "vmap: keyword arguments of a function taking *args, **kwargs or "
                    "keyword-only arguments cannot be batched: pass its arguments by position"
                )
            names = list(sig.parameters)[len(args) : len(bound.args)]
            if not isinstance(axes, (tuple, list)):
                axes = (axes,) * len(args)
            axes = (*axes, *(0 if name in given else None for name in names))
            args = bound.args
        ins, outs = _axes_key(axes), self.outs
        ins_c, outs_c = _dicts(ins), _dicts(outs)
        entry = _compiled(("vmap", f, ins, outs), lambda *xs: vmap_(f, ins_c, outs_c)(*xs))
        return entry(*args)


def _axes_key(ax: Any) -> Any:
    """`ax` with its lists as tuples and its dicts as ``(key, axes)`` pairs (hashable).

    A dataclass instance (the axes of an argument of its class) is the tuple of its fields.
    """
    if isinstance(ax, dict):
        return _DictAxes((k, _axes_key(v)) for k, v in ax.items())
    if dataclasses.is_dataclass(ax) and not isinstance(ax, type):
        return tuple(_axes_key(getattr(ax, f.name)) for f in dataclasses.fields(ax))
    return tuple(map(_axes_key, ax)) if isinstance(ax, (tuple, list)) else ax


class _DictAxes(tuple):
    """The axes of a dict, in a key (`_axes_key`)."""


def _dicts(ax: Any) -> Any:
    """The axes of key `ax`, with their dicts (the constant of the compiled entry)."""
    if isinstance(ax, _DictAxes):
        return {k: _dicts(v) for k, v in ax}
    return tuple(map(_dicts, ax)) if isinstance(ax, tuple) else ax


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """`f` applied to the leaves of `tree` (and of `rest` at the same places).

    Tuples, lists, dicts, dataclasses and None are structure, anything else is a leaf.
    """
    if tree is None:
        return None
    if isinstance(tree, (tuple, list)):
        out = [tree_map(f, x, *(r[i] for r in rest)) for i, x in enumerate(tree)]
        return type(tree)(out) if isinstance(tree, list) else tuple(out)
    if isinstance(tree, dict):
        return {k: tree_map(f, v, *(r[k] for r in rest)) for k, v in tree.items()}
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        fields = {
            fd.name: tree_map(f, getattr(tree, fd.name), *(getattr(r, fd.name) for r in rest))
            for fd in dataclasses.fields(tree)
        }
        return dataclasses.replace(tree, **fields)
    return f(tree, *rest)


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of `tree` in order (inside Myia code: a tuple)."""
    if tree is None:
        return []
    if isinstance(tree, (tuple, list)):
        return [leaf for x in tree for leaf in tree_leaves(x)]
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in tree_leaves(v)]
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        values = [getattr(tree, fd.name) for fd in dataclasses.fields(tree)]
        return [leaf for v in values for leaf in tree_leaves(v)]
    return [tree]


def _register() -> None:
    from .operations.mapping import MAPPING

    MAPPING.update(
        {
            stop_gradient: stop_gradient_,
            checkpoint: checkpoint_,
            vjp: vjp_,
            jvp: jvp_,
            jacrev: jacrev_,
            jacfwd: jacfwd_,
            hessian: hessian_,
            vmap: vmap_,
            tree_map: tree_map_,
            tree_leaves: tree_leaves_,
        }
    )


_register()

__all__ = [
    "checkpoint",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "stop_gradient",
    "tree_leaves",
    "tree_map",
    "vjp",
    "vmap",
]

"""The Myia code of `vjp`, `jvp`, `jacrev`, `jacfwd` and `hessian` (the ``*_`` functions).

Each is what the public name means inside ``@myia`` code, and what the public function
compiles at the top level (`myia.transforms.jacobians`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..api import grad
from ..grad.forward_lib import interleave
from ..operations.core import NoMatch, Operation
from ..operations.ops import StaticOperation, _kind_name, is_numeric, refuse
from ..primitives import P
from .trees import _is_record, _vdot, tree_leaves_, tree_map_

# The functions below that take the function transformed are flagged ``at_call_site``: their
# body is parsed into their caller's (`myia.frontend.calls`), so that the function is a known
# graph there even when it is a closure (``vjp(lambda v: w * v, x)`` inside Myia code): the
# closures they make read it as a constant, and the transformation of a closure reads its
# variables where it is defined.
_AT_CALL_SITE = {"at_call_site": True}


def vjp_(f, *primals, has_aux=False):
    if has_aux:
        return _vjp_aux(f, primals)
    return _vjp_tuple(f, primals)


def _vjp_with_aux(f, *primals, has_aux=True):  # `vjp_` with has_aux=True
    return _vjp_aux(f, primals)


def _vjp_no_aux(f, *primals, has_aux=False):  # `vjp_` with has_aux=False
    return _vjp_tuple(f, primals)


def _vjp_aux(f, primals):
    """``vjp`` of an `f` returning ``(out, aux)``: ``(out, vjp_fn, aux)``, as JAX's."""
    out, vjp_fn = _vjp_tuple(_first(f), primals)
    return out, vjp_fn, _aux_pair(f(*primals))[1]


def _aux_pair(y):
    """`y`, the ``(out, aux)`` pair a function transformed with ``has_aux=True`` returns."""
    if not isinstance(y, tuple) or len(y) != 2:
        refuse(AUX_PAIR)
    return y


AUX_PAIR = "with has_aux=True, the function transformed must return a pair (output, aux)"


def _first(f):
    """`f` without its aux: the first of the pair it returns (``has_aux=True``)."""

    def first(*args, **kwargs):
        return _aux_pair(f(*args, **kwargs))[0]

    return first


def _with_aux(jac, f):
    """``(jac(*args), aux)``, `aux` the second of the pair ``f(*args)`` (``has_aux=True``)."""

    def both(*args, **kwargs):
        return jac(*args, **kwargs), _aux_pair(f(*args, **kwargs))[1]

    return both


def _vjp_tuple(f, primals):
    out = f(*primals)

    def vjp_fn(ct):
        # The gradient of ``<f(*xs), ct>`` with respect to the primals.
        _cotangent_like(out, ct)
        return grad(lambda xs: _vdot(f(*xs), ct))(primals)

    return out, vjp_fn


def _cotangent_like(y, ct):
    """Refuse (at compile time) a cotangent `ct` whose structure or ranks are not `y`'s."""
    if isinstance(y, tuple):
        if not isinstance(ct, tuple) or len(ct) != len(y):
            refuse(VJP_STRUCTURE)
        return _cotangents_like(y, ct)
    if isinstance(ct, tuple):
        refuse(VJP_STRUCTURE)
    if isinstance(y, np.ndarray) or isinstance(ct, np.ndarray):
        if np.ndim(y) != np.ndim(ct):
            refuse("vjp: the cotangent must have the shape of the function's output")
        return P.check_cotangent(y, ct)
    return None


def _cotangents_like(ys, cts):
    if len(ys) == 0:
        return None
    _cotangent_like(ys[0], cts[0])
    return _cotangents_like(ys[1:], cts[1:])


VJP_STRUCTURE = "vjp: the cotangent must have the structure of the function's output (as JAX's)"


def jvp_(f, primals, tangents, has_aux=False):
    if has_aux:
        return _jvp_aux(f, primals, tangents)
    return P.jvp_of(f)(*_interleaved(primals, tangents))


def _jvp_with_aux(f, primals, tangents, has_aux=True):  # `jvp_` with has_aux=True
    return _jvp_aux(f, primals, tangents)


def _jvp_no_aux(f, primals, tangents, has_aux=False):  # `jvp_` with has_aux=False
    return P.jvp_of(f)(*_interleaved(primals, tangents))


def _jvp_aux(f, primals, tangents):
    """``jvp`` of an `f` returning ``(out, aux)``: ``(out, tangent, aux)``, as JAX's."""
    out, tangent = P.jvp_of(_first(f))(*_interleaved(primals, tangents))
    return out, tangent, _aux_pair(f(*primals))[1]


def _interleaved(primals, tangents):
    # (A branch of its own: one in `jvp_` would make `f` a value passed on to its blocks.)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        refuse("jvp(f, primals, tangents): primals and tangents are tuples")
    if len(primals) != len(tangents):
        refuse("jvp(f, primals, tangents): primals and tangents are tuples of the same length")
    return interleave(primals, tangents)


def _from_end(i, n):
    return i + n


def _from_start(i, n):
    return i


def _position(i: Any, n: Any) -> Any:
    """Position `i` among `n` arguments, at compile time: negative, it counts from the end.

    As JAX's and PyTorch's ``argnums=-1`` (the last argument); out of range, refused.
    """
    if not isinstance(i, int) or not -n <= i < n:
        raise NoMatch(f"argnums: there is no argument at position {i} of {n} arguments")
    return _from_end if i < 0 else _from_start


position = StaticOperation("position", _position, static=(0, 1))


def _with_arg(args, i, x):
    k = position(i, len(args))
    return args[:k] + (x,) + args[k + 1 :]


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
    if isinstance(y, tuple) and not _is_record(y):
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
    if isinstance(x, tuple) and not _is_record(x):
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


def _jacfwd_first(f, args, kind="jacfwd"):
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
    # ``f(*args)`` gives the blocks' structure and shapes alone: an argument, not a statement,
    # it is not computed (the columns compute ``f``'s value, and raise its errors). Read
    # first: when ``f`` is a closure, the tangent program of the columns finds its variables
    # in scope.
    return _jacfwd_blocks(
        _outputs(kind, f(*args)),
        P.vmap_of(lambda t: jvp_(f, args, (t,) + rest)[1], 0, 0)(basis),
        x,
        n,
    )


def _jacfwd_blocks(y, cols, x, n):
    """The columns `cols` of the Jacobian of `y` w.r.t. `x` (`n` elements), cut into blocks."""

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
    if isinstance(x, tuple) and not _is_record(x):
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


def _output_checked(kind, v):
    return v


def _output_leaf(kind: str, leaf: Any) -> Any:
    """A leaf of the output of the function `kind` (a Jacobian) differentiates: a number."""
    if is_numeric(leaf):
        return _output_checked
    raise NoMatch(
        f"{kind}: the function must return floats or arrays (or tuples, lists, dicts or "
        f"dataclasses of them), not {_kind_name(leaf)}"
    )


output_leaf = StaticOperation("output_leaf", _output_leaf, static=(0,))


def _outputs(kind, y):
    """`y`, the output of the function `kind` differentiates, each leaf checked."""
    return tree_map_(lambda v: output_leaf(kind, v), y)


def _float_args(kind, x):
    """`x`, each of its leaves checked by `float_leaf`."""
    return tree_map_(lambda v: float_leaf(kind, P.dtype_of(v), v), x)


def _moved(f, argnums):
    """`f` of the arguments `argnums` (one, or a tuple of them) and of all of its arguments.

    All of them are ``(args, kwargs)``: as JAX's, the keyword arguments are passed to `f`
    and not differentiated.
    """

    def moved(xs, a):
        return f(*_put_args(a[0], argnums, xs), **a[1])

    return moved


def jacrev_(f, argnums=0, has_aux=False):
    if has_aux:
        return _with_aux(_jacrev_plain(_first(f), argnums), f)
    return _jacrev_plain(f, argnums)


def _jacrev_aux(f, argnums=0, has_aux=True):  # `jacrev_` with has_aux=True
    return _with_aux(_jacrev_plain(_first(f), argnums), f)


def _jacrev_no_aux(f, argnums=0, has_aux=False):  # `jacrev_` with has_aux=False
    return _jacrev_plain(f, argnums)


def _jacrev_plain(f, argnums):
    moved = _moved(f, argnums)

    picked = _paired(moved)

    def jac(*args, **kwargs):
        x = _float_args("jacrev", _picked_args(args, argnums))
        return _jacrev_of(picked, (x, (args, kwargs)), _outputs("jacrev", f(*args, **kwargs)))

    return jac


def jacfwd_(f, argnums=0, has_aux=False):
    if has_aux:
        return _with_aux(_jacfwd_plain(_first(f), argnums), f)
    return _jacfwd_plain(f, argnums)


def _jacfwd_aux(f, argnums=0, has_aux=True):  # `jacfwd_` with has_aux=True
    return _with_aux(_jacfwd_plain(_first(f), argnums), f)


def _jacfwd_no_aux(f, argnums=0, has_aux=False):  # `jacfwd_` with has_aux=False
    return _jacfwd_plain(f, argnums)


def _jacfwd_plain(f, argnums):
    moved = _moved(f, argnums)

    def jac(*args, **kwargs):
        x = _float_args("jacfwd", _picked_args(args, argnums))
        return _jacfwd_first(moved, (x, (args, kwargs)), "jacfwd")

    return jac


def hessian_(f, argnums=0, has_aux=False):
    if has_aux:
        return _with_aux(_hessian_plain(_first(f), argnums), f)
    return _hessian_plain(f, argnums)


def _hessian_aux(f, argnums=0, has_aux=True):  # `hessian_` with has_aux=True
    return _with_aux(_hessian_plain(_first(f), argnums), f)


def _hessian_no_aux(f, argnums=0, has_aux=False):  # `hessian_` with has_aux=False
    return _hessian_plain(f, argnums)


def _hessian_plain(f, argnums):
    moved = _moved(f, argnums)

    def gradient(xs, a):  # it reads `f`: when `f` is a closure, so is it
        return grad(moved)(xs, a)

    def jacobian(xs, a):
        return _jacrev_plain(moved, 0)(xs, a)

    def hess(*args, **kwargs):
        x = _float_args("hessian", _picked_args(args, argnums))
        if float_scalar(_outputs("hessian", f(*args, **kwargs))):
            return _jacfwd_first(gradient, (x, (args, kwargs)))
        # As JAX's, ``jacfwd(jacrev(f))``: a function of arrays or structures too.
        return _jacfwd_first(jacobian, (x, (args, kwargs)))

    return hess


def _float_scalar(kind: Any) -> Any:
    """Whether a value of dispatch kind `kind` is a float scalar (known at compile time)."""
    from ..operations import lib

    floats = kind is float or (isinstance(kind, type) and issubclass(kind, np.floating))
    return lib.true_ if floats else lib.false_


float_scalar = Operation("float_scalar", _float_scalar)


_LIB = (
    vjp_,
    _vjp_tuple,
    _vjp_aux,
    jvp_,
    _jvp_aux,
    _first,
    _with_aux,
    _jacfwd_first,
    _moved,
    _paired,
    jacrev_,
    _jacrev_plain,
    jacfwd_,
    _jacfwd_plain,
    hessian_,
    _hessian_plain,
)
for _fn in _LIB:
    _fn.__myia_flags__ = _AT_CALL_SITE  # type: ignore[attr-defined]

# ``has_aux`` given as a constant (as it is unless a variable holds it): the variant with no
# branch on it is inlined instead (`myia.frontend.calls`), so that the closures it makes of
# `f` read `f` where it is defined.
_VARIANTS = {
    vjp_: (_vjp_no_aux, _vjp_with_aux),
    jvp_: (_jvp_no_aux, _jvp_with_aux),
    jacrev_: (_jacrev_no_aux, _jacrev_aux),
    jacfwd_: (_jacfwd_no_aux, _jacfwd_aux),
    hessian_: (_hessian_no_aux, _hessian_aux),
}
for _fn, (_no, _aux) in _VARIANTS.items():
    _no.__myia_flags__ = _aux.__myia_flags__ = _AT_CALL_SITE  # type: ignore[attr-defined]
    _fn.__myia_flags__ = {**_AT_CALL_SITE, "variants": ("has_aux", {False: _no, True: _aux})}  # type: ignore[attr-defined]

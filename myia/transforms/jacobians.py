"""`vjp`, `jvp`, `jacrev`, `jacfwd` and `hessian` at the top level.

Each compiles a small entry calling its Myia code (`myia.transforms.derivatives`), once per
function transformed and options; `jacfwd` and `hessian` with respect to a list pass it as a
tuple (`myia.jac_lists`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import jac_lists
from ..boundary import boundary
from ..errors import Frame, MyiaError, MyiaShapeError, MyiaTypeError, usage_error
from ..ir.node import Location
from .derivatives import (
    _aux_pair,
    _hessian_aux,
    _jacfwd_aux,
    _jacrev_aux,
    _vjp_aux,
    _vjp_tuple,
    hessian_,
    jacfwd_,
    jacrev_,
    jvp_,
)
from .entries import _compiled, _Transformed

AUX_VARIANTS = (_jacrev_aux, _jacfwd_aux, _hessian_aux)


@boundary
def vjp(f: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(f(*primals), vjp_fn)``: ``vjp_fn(ct)`` is the tuple of the cotangents of the primals.

    With ``has_aux=True``, `f` returns ``(out, aux)`` and the result is ``(out, vjp_fn,
    aux)``, as JAX's: `vjp_fn` differentiates `out` only.
    """
    lib = _vjp_aux if has_aux else _vjp_tuple
    if has_aux:
        out, aux = _compiled(("out_aux", f), lambda *xs: _aux_pair(f(*xs)))(*primals)
    else:
        out = _compiled(("out", f), lambda *xs: f(*xs))(*primals)

    def vjp_fn(*cts: Any, **kwargs: Any) -> Any:
        if len(cts) != 1 or kwargs:
            n = len(cts) + len(kwargs)
            raise MyiaTypeError(
                "vjp: the function vjp returns takes one cotangent, of the structure of the "
                f"function's output (a tuple for several outputs, as JAX's), not {n} arguments"
            )
        (ct,) = cts
        _same_shapes(out, ct)
        return _compiled(("vjp", f, lib), lambda xs, c: lib(f, xs)[1](c))(primals, ct)

    def pullback(ct: Any) -> Any:  # what it is in Myia code (`vmap(vjp_fn)`): the primals
        return lib(f, primals)[1](ct)  # are constants there, as a closure's values

    if has_aux:
        return out, _Transformed(f, vjp_fn, pullback), aux
    return out, _Transformed(f, vjp_fn, pullback)


def _same_shapes(y: Any, ct: Any) -> None:
    """A `MyiaShapeError` where an array of cotangent `ct` is not of the shape of `y`'s.

    Where their structures differ, the Myia code of the function refuses (`_cotangent_like`).
    """
    if isinstance(y, (tuple, list)) and isinstance(ct, (tuple, list)) and len(y) == len(ct):
        for a, b in zip(y, ct):
            _same_shapes(a, b)
    elif isinstance(y, dict) and isinstance(ct, dict) and y.keys() == ct.keys():
        for k in y:
            _same_shapes(y[k], ct[k])
    elif isinstance(y, np.ndarray) and isinstance(ct, np.ndarray) and y.shape != ct.shape:
        raise MyiaShapeError(
            "vjp: the cotangent must have the shape of the function's output: the "
            f"cotangent's shape {ct.shape} does not match the output's {y.shape}"
        )


@boundary
def jvp(f: Callable[..., Any], primals: Any, tangents: Any, has_aux: bool = False) -> Any:
    """``(f(*primals), J tangents)``: the derivative of `f` at `primals` along `tangents`.

    With ``has_aux=True``, `f` returns ``(out, aux)`` and the result is ``(out, J tangents,
    aux)``, as JAX's.
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise MyiaTypeError(
            "jvp(f, primals, tangents): primals and tangents are tuples, not "
            f"{type(primals).__name__} and {type(tangents).__name__}"
        )
    if has_aux:
        entry = _compiled(("jvp_aux", f), lambda xs, ts: jvp_(f, xs, ts, has_aux=True))
    else:
        entry = _compiled(("jvp", f), lambda xs, ts: jvp_(f, xs, ts))
    return entry(tuple(primals), tuple(tangents))


def _located(exc: MyiaError, kind: str, f: Any) -> MyiaError:
    """`exc`, raised compiling ``kind(f)``, pointing at `f` where it points at no user line.

    (A mistake found in the transformation's own code, after `f` returned: ``hessian`` of a
    function returning a string.)
    """
    code = getattr(f, "__code__", None)
    if exc.location is None and code is not None:
        where = Location(code.co_filename, code.co_firstlineno)
        exc.frames = [*exc.frames, Frame(f"{kind}({getattr(f, '__qualname__', f)})", where)]
    return exc


def _jacobian(kind: str, lib: Callable[..., Any], f: Callable[..., Any], argnums: Any) -> Any:
    """``kind(f, argnums)`` at the top level: `lib` is its Myia code (``has_aux``: a variant)."""
    argnums = tuple(argnums) if isinstance(argnums, (tuple, list)) else argnums
    positions = argnums if isinstance(argnums, tuple) else (argnums,)
    for i in positions:
        if not isinstance(i, int) or isinstance(i, bool):
            raise usage_error(
                TypeError(f"{kind}: argnums is a position or a tuple of them, not {argnums!r}")
            )

    def jacobian(*args: Any, **kwargs: Any) -> Any:  # what it is in Myia code
        return lib(f, argnums)(*args, **kwargs)

    compiled = _compiled((kind, f, argnums, lib), jacobian)

    def jac(*args: Any, **kwargs: Any) -> Any:  # keywords: passed to `f`, not differentiated
        lists = []
        for i in positions:
            if not -len(args) <= i < len(args):
                raise usage_error(ValueError(f"{kind}: no argument at position {i}"))
        # Negative positions count from the end, as JAX's.
        at = tuple(i % len(args) for i in positions)
        for i in at:
            if kind == "jacrev" or not jac_lists.holds_list(args[i]):
                continue
            if jac_lists.convertible(args[i]) and (kind == "jacfwd" or len(at) == 1):
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
        if lists and lib in AUX_VARIANTS:
            raise MyiaTypeError(
                f"{kind} with has_aux=True with respect to a list is not supported: pass "
                f"a tuple instead ({kind}(f, has_aux=True)(tuple(xs)))"
            )
        if not lists:
            try:
                return compiled(*args, **kwargs)
            except MyiaError as exc:
                raise _located(exc, kind, f) from None
        nums = at if isinstance(argnums, tuple) else at[0]
        key = (kind, f, nums, tuple(lists))
        entry = jac_lists.with_lists(lib, f, nums, key[3])
        out, y = _compiled(key, entry)(
            *(tuple(a) if k in lists else a for k, a in enumerate(args)), **kwargs
        )
        return jac_lists.relisted(out, y, nums, key[3], kind == "hessian")

    return _Transformed(f, jac, jacobian)


@boundary
def jacrev(f: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The Jacobian of `f` w.r.t. argument `argnums`, one reverse pass per output element.

    Its shape is the output's followed by the argument's, as in JAX. As in JAX too, a tuple
    `argnums` gives a tuple (one Jacobian per argument), an argument that is a structure
    (tuple, dict, dataclass) a structure alike, and an output that is a structure a structure
    alike of them: a block per leaf of the output and leaf of the arguments. With
    ``has_aux=True``, `f` returns ``(out, aux)`` and the result is ``(jacobian, aux)``.
    """
    return _jacobian("jacrev", _jacrev_aux if has_aux else jacrev_, f, argnums)


@boundary
def jacfwd(f: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The Jacobian of `f` w.r.t. argument `argnums`, one `jvp` per input element.

    Structured as `jacrev`'s (a position or a tuple of them, structured arguments and outputs).
    """
    return _jacobian("jacfwd", _jacfwd_aux if has_aux else jacfwd_, f, argnums)


@boundary
def hessian(f: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The Hessian of `f` w.r.t. argument `argnums`: ``jacfwd(grad(f))`` for a scalar `f`.

    Forward over reverse: one forward-mode derivative of the gradient per input element. For
    an `f` of arrays or structures, JAX's ``jacfwd(jacrev(f))`` (a Hessian per output). A
    tuple `argnums` gives a tuple of tuples (the block of each pair of arguments), as in JAX.
    """
    return _jacobian("hessian", _hessian_aux if has_aux else hessian_, f, argnums)

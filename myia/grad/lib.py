"""Gradient library code written in Myia's Python subset.

`grad_` and `value_and_grad_` are what ``grad(f, ...)`` and ``value_and_grad(f, ...)`` mean
inside Myia code. `jpartial`, `jpartial_arg`, `jpartial_fn` and `japply_star` are the forward
graphs of `partial`, `partial_arg`, `partial_fn` and `apply_star`: a partial application in the
forward pass must, when called, return ``(out, bprop)`` like any forward function, and its
sensitivity (an environment) must give back those of its bound arguments, stored under
integer keys, and that of its function, stored under `PARTIAL_FN` (never merged with the
partial's own keys: the function may itself be a partial application, whose bound arguments
have the same keys).

`checkpointed` is what ``myia.checkpoint(f)(...)`` calls; its graph is flagged, and its
forward graph is `jcheckpoint` of its ordinary one (`myia.grad.jtransform`).
"""

from __future__ import annotations

from ..primitives import P
from ..primitives.grad import EnvKey


class _PartialFnKey(EnvKey):
    """The key of the sensitivity of a partial application's function in its environment."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "key(partial_fn)"


PARTIAL_FN = _PartialFnKey()


def grad_(fn, *wrt, argnums=None, has_aux=False):
    return P.grad_of(fn, wrt if argnums is None else (argnums,), False, has_aux)


def value_and_grad_(fn, *wrt, argnums=None, has_aux=False):
    return P.grad_of(fn, wrt if argnums is None else (argnums,), True, has_aux)


def jpartial(jf, *args):
    def bprop_partial(dout):
        return (P.env_new(), P.env_getitem(dout, PARTIAL_FN, P.env_new())) + _load(dout, args, 0)

    # A partial application, not a closure: inference calls it on unbroadened arguments, as
    # it calls the partial application it stands for (whose bound arguments may be constants).
    return P.partial(_jpartial_call, jf, args), bprop_partial


def _jpartial_call(jf, args, *more):
    res = jf(*(args + more))
    out = res[0]
    bp = res[1]

    def bprop(dout):
        r = bp(dout)
        n = len(args)
        env = P.env_setitem(P.env_new(), PARTIAL_FN, r[0])
        return (_store(env, r[1 : n + 1], 0),) + r[n + 1 :]

    return out, bprop


def jpartial_arg(jp, i, f=None, k=-1):
    # `jp` is the forward value of a partial application: `jpartial`'s, which binds `jf` and
    # the tuple of the arguments (the primal's function `f` is `jf` there: bound argument 0).
    v = P.partial_arg(jp, 1, f, k + 1)[i]

    def bprop_partial_arg(dout):
        return (P.env_new(), P.env_setitem(P.env_new(), i, dout), i, P.env_new(), k)

    return v, bprop_partial_arg


def jpartial_fn(jp, k=-1):
    # The forward function `jpartial` bound: that of the partial application's function.
    f = P.partial_fn(jp, k + 1)

    def bprop_partial_fn(dout):
        return (P.env_new(), P.env_setitem(P.env_new(), PARTIAL_FN, dout), k)

    return f, bprop_partial_fn


def _store(env, sens, i):
    if len(sens) == 0:
        return env
    return _store(P.env_setitem(env, i, sens[0]), sens[1:], i + 1)


def _load(env, args, i):
    if len(args) == 0:
        return ()
    return (P.env_getitem(env, i, P.gzeros(args[0])),) + _load(env, args[1:], i + 1)


def japply_star(jf, t):
    res = jf(*t)
    bp = res[1]

    def bprop(dout):
        r = bp(dout)
        return (P.env_new(), r[0], r[1:])

    return res[0], bprop


def checkpointed(f, *args):
    """``f(*args)``, whose forward pass a gradient recomputes (`myia.checkpoint`)."""
    return f(*args)


checkpointed.__myia_flags__ = {"checkpoint": True}  # type: ignore[attr-defined]


def jcheckpoint(jf, *args):
    """The forward graph of a checkpointed call, from ``jf``, the call's ordinary one.

    The forward pass keeps the primal value alone (the backpropagator ``jf`` builds is dropped,
    and with it every intermediate value); the backpropagator keeps the arguments and runs
    ``jf`` again on them, to back-propagate through the backpropagator that run builds.
    """
    out = _checkpoint_primal(jf, args)

    def bprop_checkpoint(dout):
        return _checkpoint_backprop(jf, args, dout)

    return out, bprop_checkpoint


def _checkpoint_primal(jf, args):
    return jf(*args)[0]


def _checkpoint_backprop(jf, args, dout):
    return jf(*args)[1](dout)


# Never inlined: the intermediate values of one run of ``jf`` are freed when its call returns.
# Checkpointed: the gradient of a gradient recomputes them in turn.
_checkpoint_primal.__myia_flags__ = {"noinline": True, "checkpoint": True}  # type: ignore[attr-defined]
_checkpoint_backprop.__myia_flags__ = {"noinline": True, "checkpoint": True}  # type: ignore[attr-defined]

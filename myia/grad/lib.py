"""Gradient library code written in Myia's Python subset.

`grad_` and `value_and_grad_` are what ``grad(f, ...)`` and ``value_and_grad(f, ...)`` mean
inside Myia code. `jpartial` and `japply_star` are the forward graphs of `partial` and
`apply_star`: a partial application in the forward pass must, when called, return
``(out, bprop)`` like any forward function, and its sensitivity (an environment) must give
back those of its bound arguments, stored under integer keys.
"""

from __future__ import annotations

from ..primitives import P


def grad_(fn, *wrt, argnums=None, has_aux=False):
    return P.grad_of(fn, wrt if argnums is None else (argnums,), False, has_aux)


def value_and_grad_(fn, *wrt, argnums=None, has_aux=False):
    return P.grad_of(fn, wrt if argnums is None else (argnums,), True, has_aux)


def jpartial(jf, *args):
    def bprop_partial(dout):
        return (P.env_new(), dout) + _load(dout, args, 0)

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
        return (_store(r[0], r[1 : n + 1], 0),) + r[n + 1 :]

    return out, bprop


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

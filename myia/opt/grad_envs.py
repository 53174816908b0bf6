"""Rewrites of the environments of sensitivities that the J transform produces.

Backpropagators return the sensitivities of free variables in environments (`env_setitem`
under one key per free variable, `env_getitem` with a zero default to read one back): these
rules resolve every lookup to the value stored.
"""

from __future__ import annotations

from typing import Any

from ..ir.node import Apply, Node
from ..primitives import P
from ..primitives.grad import EnvInstance
from .grad_zeros import is_zero, zero_node
from .matcher import NO_VALUE, Rewrite, args_of, prim_of, rewrite, value_of
from .sweep import same_type

# Environments ---------------------------------------------------------------------------------


def _same_key(a: Node, b: Node) -> bool | None:
    """Whether environment keys `a` and `b` are equal (None: unknown at compile time)."""
    va, vb = value_of(a), value_of(b)
    if va is NO_VALUE or vb is NO_VALUE:
        return None if a is not b else True
    if va is vb:
        return True
    if type(va) is int and type(vb) is int:
        return va == vb
    if type(va) is type(vb) and type(va) in (str,):
        return va == vb
    return False


def _is_empty_env(node: Node) -> bool:
    if prim_of(node) is P.env_new:
        return True
    v = value_of(node)
    return isinstance(v, EnvInstance) and not v.contents


_ENV_GETSENS = getattr(P, "env_getsens", None)
_ENV_DELITEM = getattr(P, "env_delitem", None)


def _lookup(env: Node, key: Node) -> tuple[str, Node]:
    """Follow `env` back to `key`: ``("found", value)``, ``("absent", env)`` or ``("stuck", e)``.

    Settings of other keys (and deletions of other keys) are skipped; `e` is where the search
    stops without an answer (a parameter, a sum of environments...).
    """
    e = env
    while True:
        if _is_empty_env(e):
            return "absent", e
        s = args_of(e, P.env_setitem)
        if s is None and _ENV_DELITEM is not None:
            s = args_of(e, _ENV_DELITEM)
            if s is not None:
                same = _same_key(s[1], key)
                if same is None:
                    return "stuck", e
                if same:
                    return "absent", e
                e = s[0]
                continue
        if s is None:
            return "stuck", e
        same = _same_key(s[1], key)
        if same is None:
            return "stuck", e
        if same:
            return "found", s[2]
        e = s[0]


@rewrite(P.env_getitem)
def getitem_env(node: Apply, opt: Any) -> Node | None:
    """Look a key up in an environment built in place.

    env_getitem(env_setitem(e, k, v), k, d) => v;  env_getitem(env_new(), k, d) => d

    A different key looks further: ``env_getitem(env_setitem(e, j, v), k, d) =>
    env_getitem(e, k, d)``; a sum looks in both: ``env_getitem(env_add(a, b), k, zero) =>
    gadd(env_getitem(a, k, zero), env_getitem(b, k, zero))``; a choice looks in each:
    ``env_getitem(switch(c, a, b), k, d) => switch(c, env_getitem(a, k, d), env_getitem(b, k,
    d))`` (the sensitivity of ``x if c else y``, which ``vmap`` then chooses per example).
    """
    env, key, default = node.inputs[1:]
    how, e = _lookup(env, key)
    if how == "found":
        return e
    if how == "absent":
        return default
    if e is not env:
        return opt.apply(P.env_getitem, e, key, default, like=node)
    ab = args_of(e, P.env_add)
    if ab is not None and is_zero(default):
        a = opt.apply(P.env_getitem, ab[0], key, default, like=node)
        b = opt.apply(P.env_getitem, ab[1], key, default, like=node)
        return opt.apply(P.gadd, a, b, like=node)
    sw = args_of(e, P.switch)
    if sw is not None:
        a = opt.apply(P.env_getitem, sw[1], key, default, like=node)
        b = opt.apply(P.env_getitem, sw[2], key, default, like=node)
        return opt.apply(P.switch, sw[0], a, b, like=node)
    return None


@rewrite(P.env_sens)
def sens_env(node: Apply, opt: Any) -> Node | None:
    """Read a sensitivity back from an environment built in place.

    env_sens(env_setitem(e, k, v), k, t) => v
    """
    how, v = _lookup(node.inputs[1], node.inputs[2])
    return v if how == "found" and same_type(v.abstract, node.abstract) else None


def getsens_env(node: Apply, opt: Any) -> Node | None:
    """Look a sensitivity up in an environment built in place.

    env_getsens(env_setitem(e, k, v), k, x) => v;  env_getsens(env_new(), k, x) => gzeros(x)

    Other keys are skipped as for `getitem_env`, and ``env_getsens(env_add(a, b), k, x) =>
    gadd(env_getsens(a, k, x), env_getsens(b, k, x))``.
    """
    env, key, like = node.inputs[1:]
    how, e = _lookup(env, key)
    if how == "found":
        return e
    if how == "absent":
        return zero_node(lambda: like, like.abstract, node, opt)
    if e is not env:
        return opt.apply(_ENV_GETSENS, e, key, like, like=node)
    ab = args_of(e, P.env_add)
    if ab is not None:
        a = opt.apply(_ENV_GETSENS, ab[0], key, like, like=node)
        b = opt.apply(_ENV_GETSENS, ab[1], key, like, like=node)
        return opt.apply(P.gadd, a, b, like=node)
    return None


def delitem_env(node: Apply, opt: Any) -> Node | None:
    """Delete a key from an environment built in place.

    env_delitem(env_setitem(e, k, v), k) => env_delitem(e, k)

    And ``env_delitem(env_new(), k) => env_new()``.

    A setting of another key moves out: ``env_delitem(env_setitem(e, j, v), k) =>
    env_setitem(env_delitem(e, k), j, v)``.
    """
    env, key = node.inputs[1:]
    if _is_empty_env(env):
        return env
    s = args_of(env, P.env_setitem)
    if s is None:
        return None
    same = _same_key(s[1], key)
    if same is None:
        return None
    if same:
        return opt.apply(_ENV_DELITEM, s[0], key, like=node)
    inner = opt.apply(_ENV_DELITEM, s[0], key, like=node)
    return opt.apply(P.env_setitem, inner, s[1], s[2], like=node)


# The loop gradients' environment primitives, where this version of Myia has them.
_ENV_RULES: list[Rewrite] = [
    rewrite(prim)(fn)
    for prim, fn in ((_ENV_GETSENS, getsens_env), (_ENV_DELITEM, delitem_env))
    if prim is not None
]


@rewrite(P.env_add)
def env_add_empty(node: Apply, opt: Any) -> Node | None:
    """Drop an empty environment from a sum.

    env_add(env_new(), e) => e;  env_add(e, env_new()) => e
    """
    a, b = node.inputs[1:]
    if _is_empty_env(a):
        return b
    if _is_empty_env(b):
        return a
    return None

"""Control and effect primitives: branching, sequencing, printing, assertions and errors."""

from __future__ import annotations

import sys

from ..abstract.data import (
    ANYTHING,
    BOTTOM,
    NONE,
    AbstractConstant,
    AbstractScalar,
    AbstractUnion,
    show,
)
from ..abstract.lattice import TypeMismatch, broaden, join, union_options
from ..errors import MyiaTypeError
from ..grad.registry import bprop, nondifferentiable, special
from ..infer.registry import infer_rule
from ..infer.rulelib import py_bool
from .core import primitive


@primitive
def switch(cond, if_true, if_false):
    """``if_true`` if ``cond`` else ``if_false`` (both evaluated: branches are closures)."""
    return if_true if cond else if_false


@primitive
def apply_star(fn, args):
    """``fn(*args)`` for a tuple ``args``. Interpreters and inference call it themselves."""
    raise NotImplementedError("apply_star is evaluated by the interpreter")


@primitive
def seq(before, after):
    """Return ``after``; ``before`` is evaluated first. Sequences effectful statements."""
    return after


@primitive(effect=True)
def print_(*args):
    """Python's ``print`` to ``sys.stdout``; returns None."""
    print(*args, file=sys.stdout)


@primitive(effect=True)
def assert_(cond, msg):
    """Raise ``AssertionError(msg)`` unless ``cond``; returns None."""
    if not cond:
        raise AssertionError(msg) if msg is not None else AssertionError()


@primitive(effect=True)
def raise_(exc_class, *args):
    """Raise ``exc_class(*args)``."""
    raise exc_class(*args)


@primitive
def narrow(x, typ):
    """``x``, known to be of type ``typ`` (one of the options of its union type)."""
    return x


@primitive
def sens_as(d, like):
    """Sensitivity ``d``, typed as the sensitivity of ``like``'s type: the same value.

    A value of a union type (``Tree | None``) and the same value after a test of its type
    (``narrow``: a ``Tree``) have sensitivities of different types (those of their own types)
    but one runtime value. The backpropagator of `narrow` retypes the sensitivity back to the
    union, in O(1): the sensitivity of a value always has the type of the value's
    sensitivity, so that the branches of an ``if`` give sensitivities of one type, and a
    backpropagator differentiated again is called with one type everywhere.
    """
    return d


@primitive
def is_none(x):
    """``x is None``."""
    return x is None


@primitive
def is_(x, y):
    """``x is y``: known at compile time for constants and for values of different types.

    The interpreter makes a closure each time a function is read: two closures of one graph
    over the same free variables are the same function.
    """
    if type(x) is type(y) and hasattr(x, "graph") and hasattr(x, "env"):
        return x.graph is y.graph and x.env is y.env
    return x is y


@primitive
def is_instance(x, classes):
    """``isinstance(x, classes)`` at run time: which option of a union of records `x` holds."""
    return isinstance(x, classes)


@primitive
def const_eq(x, y):
    """``x == y`` for strings (and other values known at compile time)."""
    return x == y


@primitive
def const_contains(x, xs):
    """``x in xs`` for a string ``xs`` (known at compile time)."""
    return x in xs


@primitive
def identity(x):
    """Return ``x``."""
    return x


@primitive
def stop_gradient(x):
    """Return ``x``, through which no gradient flows (``myia.stop_gradient``).

    It has no rewrite rule: it stays in a gradient that is differentiated again, so that every
    order sees a zero derivative; code generation writes it as ``x``.
    """
    return x


# Type rules -----------------------------------------------------------------------------------


@infer_rule(switch)
def _infer_switch(cond, if_true, if_false):
    if not isinstance(cond, AbstractScalar):
        raise MyiaTypeError(f"a condition must be a scalar, not {show(cond)}")
    if cond.value is not ANYTHING:
        return if_true if cond.value else if_false
    try:
        return join(if_true, if_false)
    except TypeMismatch as exc:
        raise MyiaTypeError(f"branches have incompatible types: {exc}") from None


@infer_rule(apply_star)
def _infer_apply_star(fn, args):
    raise MyiaTypeError("apply_star is inferred by the engine")


@infer_rule(seq)
def _infer_seq(before, after):
    return after


@infer_rule(print_)
def _infer_print(*args):
    return NONE


@infer_rule(assert_)
def _infer_assert(cond, msg):
    return NONE


@infer_rule(raise_)
def _infer_raise(exc_class, *args):
    value = exc_class.value if isinstance(exc_class, AbstractConstant) else None
    if not (
        isinstance(value, BaseException)
        or (isinstance(value, type) and issubclass(value, BaseException))
    ):
        raise MyiaTypeError(f"exceptions must derive from BaseException, not {show(exc_class)}")
    return BOTTOM


@infer_rule(narrow)
def _infer_narrow(x, typ):
    return typ.value


@infer_rule(sens_as)
def _infer_sens_as(d, like):
    want = sens_type(like)
    # Only the options of unions may differ: `d` and the result are one runtime value.
    try:
        wide = broaden(join(d, want))
    except TypeMismatch:
        wide = None
    if wide != broaden(want) and wide != broaden(d):
        raise MyiaTypeError(f"sens_as: {show(d)} is not a sensitivity of {show(like)}")
    return want


@infer_rule(is_instance)
def _infer_is_instance(x, classes):
    return py_bool()


@infer_rule(is_none)
def _infer_is_none(x):
    opts = union_options(x)
    if all(o == NONE for o in opts):
        return py_bool(True)
    if all(o != NONE for o in opts):
        return py_bool(False)
    return py_bool()


def _static(a):
    from ..abstract.data import AbstractFunction
    from ..infer.kinds import static_value

    if isinstance(a, AbstractFunction) and len(a.options) == 1:
        fn = a.get_unique()
        return getattr(fn, "graph", fn)
    return static_value(a)


@infer_rule(is_)
def _infer_is(x, y):
    a, b = _static(x), _static(y)
    if a is not ANYTHING and b is not ANYTHING:
        return py_bool(a is b)
    if isinstance(x, AbstractUnion) or isinstance(y, AbstractUnion):
        return py_bool()  # `Tree | None` may be the same object as a `Tree`
    if (
        type(x) is not type(y)
        or getattr(x, "dtype", None) != getattr(y, "dtype", None)
        or getattr(x, "cls", None) is not getattr(y, "cls", None)
    ):
        return py_bool(False)  # values of different types are different objects
    return py_bool()


@infer_rule(const_eq)
def _infer_const_eq(x, y):
    a, b = _static(x), _static(y)
    if a is not ANYTHING and b is not ANYTHING:
        return py_bool(bool(a == b))
    if type(x) is not type(y):
        return py_bool(False)
    raise MyiaTypeError(
        f"cannot compare {show(x)} and {show(y)}: one is not known at compile time"
    )


@infer_rule(const_contains)
def _infer_const_contains(x, xs):
    a, b = _static(x), _static(xs)
    if isinstance(a, str) and isinstance(b, str):
        return py_bool(a in b)
    raise MyiaTypeError(f"'in <string>' needs a string known at compile time, not {show(x)}")


@infer_rule(identity, stop_gradient)
def _infer_identity(x):
    return x


# Backpropagators ------------------------------------------------------------------------------


@bprop(switch)
def bprop_switch(cond, if_true, if_false, out, dout):
    return (
        gzeros(cond),
        switch(cond, dout, gzeros(if_true)),
        switch(cond, gzeros(if_false), dout),
    )


@bprop(seq)
def bprop_seq(before, after, out, dout):
    return (gzeros(before), dout)


@bprop(narrow)
def bprop_narrow(x, typ, out, dout):
    # The sensitivity of `x` has the type of `x`'s (a union), whichever option it holds.
    return (sens_as(dout, x), typ)


@bprop(sens_as)
def bprop_sens_as(d, like, out, dout):
    return (sens_as(dout, d), gzeros(like))


@bprop(identity)
def bprop_identity(x, out, dout):
    return (dout,)


nondifferentiable(print_, assert_, raise_, is_none, is_, is_instance, const_eq, const_contains)
nondifferentiable(stop_gradient)
special(apply_star)  # its forward graph is `myia.grad.lib.japply_star`

from .grad import gzeros, sens_type  # noqa: E402

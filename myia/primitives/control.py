"""Control and effect primitives: branching, sequencing, printing, assertions and errors."""

from __future__ import annotations

import copy
import sys
from typing import Any

import numpy as np

from ..abstract.data import (
    ANYTHING,
    BOTTOM,
    ENV,
    NONE,
    AbstractConstant,
    AbstractFunction,
    AbstractList,
    AbstractScalar,
    AbstractStack,
    AbstractTuple,
    AbstractUnion,
    show,
)
from ..abstract.lattice import STRING, TypeMismatch, broaden, join, union_options
from ..errors import MyiaShapeError, MyiaTypeError
from ..grad.registry import bprop, linear, nondifferentiable, special
from ..infer.registry import infer_rule
from ..infer.rulelib import as_dtype, py_bool
from .core import primitive


@primitive
def switch(cond, if_true, if_false):
    """``if_true`` if ``cond`` else ``if_false`` (both evaluated: branches are closures)."""
    return if_true if cond else if_false


@primitive
def apply_star(fn, args, *kwargs):
    """``fn(*args, **kw1, **kw2...)`` for a tuple ``args`` and dicts ``kwargs``.

    Interpreters and inference call it themselves; specialization replaces it by the call
    written out (`myia.infer.engine.Inferrer.star_call`).
    """
    raise NotImplementedError("apply_star is evaluated by the interpreter")


@primitive
def seq(before, after):
    """Return ``after``; ``before`` is evaluated first. Sequences effectful statements."""
    return after


class Stream:
    """``sys.stdout`` or ``sys.stderr`` as Myia code names it, looked up when it prints.

    The stream is read at run time, not when the program is compiled, so that a program
    prints where ``sys.stdout`` points when it runs (pytest's capture replaces it).
    """

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"sys.{self.name}"

    def get(self) -> Any:
        return getattr(sys, self.name)


STDOUT, STDERR = Stream("stdout"), Stream("stderr")


@primitive(effect=True)
def print_(values, sep, end, file):
    """Python's ``print(*values, sep=sep, end=end, file=file)`` for a tuple ``values``.

    ``file`` is None or a `Stream` (``sys.stdout``, ``sys.stderr``); returns None. Python's
    ``print`` is `myia.operations.lib.print_`, which calls it.
    """
    print(*values, sep=sep, end=end, file=(file or STDOUT).get())


@primitive
def format_(value, conversion, spec):
    """One replacement field of an f-string: ``f"{value!conversion:spec}"``.

    ``conversion`` is ``""``, ``"r"``, ``"s"`` or ``"a"``; ``spec`` a string (computed at run
    time when the f-string nests fields in it: ``f"{x:.{n}f}"``).
    """
    if conversion:
        value = {"r": repr, "s": str, "a": ascii}[conversion](value)
    return format(value, spec)


@primitive
def str_concat(*parts):
    """The concatenation of strings: the parts of an f-string."""
    return "".join(parts)


@primitive(effect=True)
def assert_(cond, msg):
    """Raise ``AssertionError(msg)`` unless ``cond``; returns None."""
    if not cond:
        raise AssertionError(msg) if msg is not None else AssertionError()


@primitive(effect=True)
def raise_(exc_class, *args):
    """Raise ``exc_class(*args)``, or a copy of `exc_class` where it is an exception.

    An exception as a constant (``raise ERROR`` of a module's ``ERROR = ValueError(...)``, a
    shape error deferred to run time, `myia.infer.deferred`) is raised as a fresh copy, so
    that the notes a run adds to it are not kept for the next run.
    """
    if isinstance(exc_class, BaseException):
        raise copy.copy(exc_class).with_traceback(None)
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


def _same_constant(x, y):
    """``x == y`` of values known at compile time, a dtype as NumPy compares it.

    A dtype equals what ``np.dtype`` makes of the other value (``np.float32``, ``float``,
    ``"float32"``, another dtype), and differs from what is no dtype.
    """
    if isinstance(x, np.dtype) or isinstance(y, np.dtype):
        if x is None or y is None:
            return False
        try:
            return as_dtype(x) == as_dtype(y)
        except MyiaTypeError:
            return False
    return x == y


@primitive
def const_eq(x, y):
    """``x == y`` for strings, dtypes (and other values known at compile time)."""
    return _same_constant(x, y)


@primitive
def const_lt(x, y):
    """``x < y`` for strings known at compile time (``sorted(d)`` of a dict's keys)."""
    return x < y


@primitive
def list_constants(xs):
    """The strings of list ``xs`` as a tuple, where they are known at compile time (else None).

    ``for k in sorted(d)`` iterates over the keys, constants, as over the tuple of them: each
    ``d[k]`` is a constant key.
    """
    return tuple(xs) if isinstance(xs, list) and all(isinstance(x, str) for x in xs) else None


@primitive
def sorted_constants(xs, reverse):
    """``sorted(xs, reverse=reverse)`` of strings known at compile time (else None).

    `xs` is a tuple (a dict's keys) or a list of them; the list made keeps its values in its
    type, so that a loop over it reads each as a constant (`list_constants`).
    """
    return sorted(xs, reverse=reverse)


@primitive
def check_cotangent(y, ct):
    """Nothing: inference checks that cotangent `ct` has the shape of output `y` (`vjp`)."""
    return None


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


@primitive
def breakpoint_():
    """Python's ``breakpoint()``: where `myia.debug.run` stops; nothing anywhere else.

    It computes nothing and cannot raise, so the optimizer drops it: only the debugger, which
    runs the program as inference left it, sees it.
    """
    return None


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
def _infer_apply_star(fn, args, *kwargs):
    raise MyiaTypeError("apply_star is inferred by the engine")


@infer_rule(seq)
def _infer_seq(before, after):
    return after


@infer_rule(breakpoint_)
def _infer_breakpoint():
    return NONE


@infer_rule(print_)
def _infer_print(values, sep, end, file):
    for name, a in (("sep", sep), ("end", end)):
        if a is not None and a != NONE and not _is_string(a):
            raise MyiaTypeError(f"print: {name} must be None or a string, not {show(a)}")
    if file is not None and file != NONE:
        if not (isinstance(file, AbstractConstant) and isinstance(file.value, Stream)):
            raise MyiaTypeError(
                f"print: file must be sys.stdout or sys.stderr in Myia code, not {show(file)}"
            )
    return NONE


def _is_string(a: Any) -> bool:
    return a == STRING or (isinstance(a, AbstractConstant) and isinstance(a.value, str))


@infer_rule(format_)
def _infer_format(value, conversion, spec):
    if not (isinstance(conversion, AbstractConstant) and conversion.value in ("", "r", "s", "a")):
        raise MyiaTypeError(f"format: bad conversion {show(conversion)}")
    if not _is_string(spec):
        raise MyiaTypeError(f"format: the format spec must be a string, not {show(spec)}")
    if isinstance(value, (AbstractFunction, AbstractStack)) or value is ENV:
        raise MyiaTypeError(f"cannot format a value of type {show(value)} in Myia code")
    return STRING


@infer_rule(str_concat)
def _infer_str_concat(*parts):
    for p in parts:
        if not _is_string(p):
            raise MyiaTypeError(f"cannot concatenate {show(p)} to a string")
    return STRING


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
        return py_bool(bool(_same_constant(a, b)))
    if type(x) is not type(y):
        return py_bool(False)
    raise MyiaTypeError(
        f"cannot compare {show(x)} and {show(y)}: one is not known at compile time"
    )


@infer_rule(const_lt)
def _infer_const_lt(x, y):
    a, b = _static(x), _static(y)
    if isinstance(a, str) and isinstance(b, str):
        return py_bool(a < b)
    raise MyiaTypeError(
        f"cannot order {show(x)} and {show(y)}: strings are ordered where both are known at "
        "compile time"
    )


@infer_rule(list_constants)
def _infer_list_constants(xs):
    v = getattr(xs, "value", ANYTHING) if isinstance(xs, AbstractList) else ANYTHING
    if v is ANYTHING or not all(isinstance(x, str) for x in v):
        return AbstractConstant(None)
    return AbstractTuple(tuple(AbstractConstant(x) for x in v))


@infer_rule(sorted_constants)
def _infer_sorted_constants(xs, reverse):
    if isinstance(xs, AbstractTuple):
        v = tuple(_static(e) for e in xs.elements)
    else:
        v = getattr(xs, "value", ANYTHING) if isinstance(xs, AbstractList) else ANYTHING
    r = _static(reverse)
    if v is ANYTHING or not all(isinstance(x, str) for x in v) or not isinstance(r, bool):
        return AbstractConstant(None)
    return AbstractList(STRING, tuple(sorted(v, reverse=r)))


@infer_rule(check_cotangent)
def _infer_check_cotangent(y, ct):
    shapes = [getattr(a, "shape", None) for a in (y, ct)]
    if all(sh is not None and None not in sh for sh in shapes) and shapes[0] != shapes[1]:
        raise MyiaShapeError(
            "vjp: the cotangent must have the shape of the function's output: the cotangent's "
            f"shape {shapes[1]} does not match the output's {shapes[0]}"
        )
    return NONE


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


nondifferentiable(
    print_,
    format_,
    str_concat,
    assert_,
    raise_,
    is_none,
    is_,
    is_instance,
    const_eq,
    const_lt,
    list_constants,
    sorted_constants,
    check_cotangent,
    const_contains,
)
nondifferentiable(stop_gradient, breakpoint_)
special(apply_star)  # its forward graph is `myia.grad.lib.japply_star`
for _p in (narrow, sens_as, identity):  # their tangents: `switch` and `seq` are the transform's
    linear(_p, 0)

from .grad import gzeros, sens_type  # noqa: E402

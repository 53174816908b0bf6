"""Control and effect primitives: branching, sequencing, printing, assertions and errors."""

from __future__ import annotations

import sys

from .core import primitive


@primitive
def switch(cond, if_true, if_false):
    """``if_true`` if ``cond`` else ``if_false`` (both already evaluated: branches are closures)."""
    return if_true if cond else if_false


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
def is_none(x):
    """``x is None``."""
    return x is None


@primitive
def identity(x):
    """Return ``x``."""
    return x

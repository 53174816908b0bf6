"""`stop_gradient` and `checkpoint`: what a gradient keeps of a computation.

``stop_gradient_`` and ``checkpoint_`` are their Myia code (what they mean inside ``@myia``
code).
"""

from __future__ import annotations

import functools
import types
import weakref
from collections.abc import Callable
from typing import Any

from ..boundary import boundary
from ..errors import usage_error
from ..grad.lib import checkpointed
from ..primitives import P
from .entries import _Transformed


def stop_gradient_(x):
    return P.stop_gradient(x)


def checkpoint_(f):
    def checkpointed_f(*args):
        return checkpointed(f, *args)

    return checkpointed_f


# Parsed into its caller (`myia.frontend.calls`), as the transformations of
# `myia.transforms.derivatives`: ``checkpointed_f`` is then made where ``checkpoint(f)`` is
# called, reading `f` there, so that a transformation of it in the same function
# (``jvp(checkpoint(f), ...)``, ``vmap(checkpoint(f))``) has every value it reads in scope.
checkpoint_.__myia_flags__ = {"at_call_site": True}  # type: ignore[attr-defined]


def stop_gradient(x: Any) -> Any:
    """`x`, with a zero gradient: nothing flows back through it, at any order."""
    return x


_CHECKPOINTS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


@boundary
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
        raise usage_error(TypeError("checkpoint() needs a function to checkpoint"))
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
    from ..grad.loop_checkpoint import STRATEGIES

    if loops not in STRATEGIES:
        raise usage_error(
            ValueError(f"checkpoint(loops={loops!r}): loops must be one of {STRATEGIES}")
        )
    if f is None:  # @checkpoint(loops="sqrt")
        return boundary(lambda fn: _checkpoint_loops(fn, loops))
    fn = getattr(f, "__myia_function__", f)
    if not isinstance(fn, types.FunctionType):
        raise usage_error(
            TypeError(
                f"checkpoint(f, loops={loops!r}) takes a Python function, not {type(f).__name__}"
            )
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

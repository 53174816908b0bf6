"""Stacks: what the forward pass of a loop's gradient keeps for its backward pass.

A stack is persistent and immutable: pushing makes one new cell that points at the stack
below (O(1), nothing copied), so each iteration of a loop pushes its backpropagator in
constant time and space, and the backward pass pops them in reverse order
(`myia.grad.loops`). A cell is the tuple ``(head, tail, STACK)``: a tuple is the fastest
object Python makes (a class instance costs five times more, which a loop's gradient pays
per iteration), the tag tells stacks from user tuples (`is_stack`), and since the first two
elements of a cell are ``stack_pop``'s result, compiled code pops by reading the cell. Its
abstract value is `AbstractStack` (one element type: for a loop, the union of the
backpropagators of the loop's blocks).

The sensitivity of a stack is a stack of the sensitivities of its elements, aligned from the
top; a sensitivity stack shorter than its stack is zero below its bottom, so that the zero of
any stack is the empty stack (O(1), which keeps higher-order gradients of loops linear).
"""

from __future__ import annotations

from typing import Any

from ..abstract.data import (
    BOTTOM,
    AbstractFunction,
    AbstractScalar,
    AbstractStack,
    AbstractTuple,
    show,
)
from ..abstract.lattice import TypeMismatch, join
from ..errors import MyiaTypeError
from ..grad.registry import bprop, jvp, linear, nondifferentiable
from ..infer.registry import infer_rule
from .core import primitive


class _StackTag:
    """The tag that marks a tuple as a cell of a stack."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "STACK"


#: The last element of every cell of a stack.
STACK = _StackTag()

#: The empty stack (compared by identity).
EMPTY_STACK = (None, None, STACK)


def is_stack(x: Any) -> bool:
    """Whether the value `x` is a stack (a tuple ``(head, tail, STACK)``)."""
    return type(x) is tuple and len(x) == 3 and x[2] is STACK


def stack_add_value(a: tuple, b: tuple, add: Any) -> tuple:
    """Add two sensitivity stacks, element by element from the top, without recursion.

    A missing element is zero.
    """
    if a is EMPTY_STACK:
        return b
    if b is EMPTY_STACK:
        return a
    heads = []
    while a is not EMPTY_STACK and b is not EMPTY_STACK:
        heads.append(add(a[0], b[0]))
        a, b = a[1], b[1]
    rest = b if a is EMPTY_STACK else a
    for h in reversed(heads):
        rest = (h, rest, STACK)
    return rest


@primitive
def stack_new():
    """Return an empty stack."""
    return EMPTY_STACK


@primitive
def stack_of_functions():
    """Return an empty stack that will hold functions (a loop's backpropagators).

    Its element type is the empty set of functions, not ⊥: the sensitivity of a stack of
    functions is a stack of environments whether or not anything was pushed yet, so that a
    loop's gradient, differentiated again, sees one type on every path.
    """
    return EMPTY_STACK


@primitive
def stack_push(s, x):
    """Return the stack ``s`` with ``x`` on top (``s`` is unchanged)."""
    return (x, s, STACK)


@primitive
def stack_pop(s):
    """Return ``(top, rest)`` of the non-empty stack ``s``."""
    if s is EMPTY_STACK:
        raise IndexError("pop from an empty stack")
    return (s[0], s[1])


@primitive
def stack_empty(s):
    """Return whether the stack ``s`` is empty."""
    return s is EMPTY_STACK


@primitive
def stack_unpush(d, x):
    """Split the sensitivity ``d`` of a pushed stack into those of the push's arguments.

    That is ``(d_stack, d_x)``: ``d`` without its top, and its top; zeros of ``x`` when ``d``
    is empty (i.e. zero).
    """
    if d is EMPTY_STACK:
        from .grad import zeros_value

        return (EMPTY_STACK, zeros_value(x))
    return (d[1], d[0])


# Type rules -----------------------------------------------------------------------------------


def _expect_stack(s: Any, what: str) -> AbstractStack:
    if not isinstance(s, AbstractStack):
        raise MyiaTypeError(f"{what} expects a stack, not {show(s)}")
    return s


@infer_rule(stack_new)
def _infer_stack_new():
    from ..abstract.data import BOTTOM

    return AbstractStack(BOTTOM)


@infer_rule(stack_of_functions)
def _infer_stack_of_functions():
    return AbstractStack(AbstractFunction(frozenset()))


@infer_rule(stack_push)
def _infer_stack_push(s, x):
    s = _expect_stack(s, "stack_push")
    try:
        return AbstractStack(join(s.element, x))
    except TypeMismatch as exc:
        raise MyiaTypeError(f"stack_push: elements of incompatible types {exc}") from None


@infer_rule(stack_pop)
def _infer_stack_pop(s):
    s = _expect_stack(s, "stack_pop")
    return AbstractTuple((s.element, s))


@infer_rule(stack_empty)
def _infer_stack_empty(s):
    s = _expect_stack(s, "stack_empty")
    if s.element is BOTTOM or s.element == AbstractFunction(frozenset()):
        # Never pushed: empty. A loop's backward pass then never pops it on that path.
        return AbstractScalar("bool", True, True)
    return AbstractScalar("bool", True)


@infer_rule(stack_unpush)
def _infer_stack_unpush(d, x):
    from .grad import sens_type

    d = _expect_stack(d, "stack_unpush")
    return AbstractTuple((d, sens_type(x)))


# Backpropagators ------------------------------------------------------------------------------


@bprop(stack_push)
def bprop_stack_push(s, x, out, dout):
    return stack_unpush(dout, x)


@bprop(stack_pop)
def bprop_stack_pop(s, out, dout):
    return (stack_push(dout[1], dout[0]),)


@bprop(stack_unpush)
def bprop_stack_unpush(d, x, out, dout):
    return (stack_push(dout[0], dout[1]), gzeros(x))


nondifferentiable(stack_new, stack_of_functions, stack_empty)

# Tangents (forward mode): a stack's is the stack of its elements' tangents.
linear(stack_push)
linear(stack_unpush, 0)


@jvp(stack_pop)
def jvp_stack_pop(s, out, ds):
    # A zero tangent (an empty stack) pops zeros.
    d = stack_unpush(ds, out[0])
    return (d[1], d[0])


from .grad import gzeros  # noqa: E402

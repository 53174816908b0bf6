"""Debugging Myia programs (``myia.debug``): a step debugger, and watching gradients.

`run` runs a program under the step debugger (`myia.debugger`): pdb's commands over your
lines, through the forward and the backward pass. `print_grad` is the seeds' "watching
variables and gradients" in its simplest form: it marks a value, and the reverse phase prints
the gradient that flows back into it.
"""

from __future__ import annotations

from typing import Any

from .debugger import Debugger, run
from .grad.registry import custom_bprop

__all__ = ["Debugger", "print_grad", "run"]


def print_grad(x: Any, label: str = "grad") -> Any:
    """Return `x`; under ``grad``, print ``label: <the gradient flowing back into x>``.

    The line is printed during the reverse phase, when the gradient of `x` is complete (the
    sum over every use of `x`), so inside a loop it prints once per iteration, last iteration
    first. Outside a gradient nothing is printed. At higher order it prints once per reverse
    phase that computes the gradient of `x`::

        def loss(w, x):
            h = print_grad(np.tanh(x @ w), "h")
            return np.sum(h ** 2)

        grad(loss)(w, x)     # prints "h: [[...]]"
    """
    return x


@custom_bprop(print_grad)
def _print_grad_bprop(x, label, out, dout):
    print(f"{label}:", dout)
    return (dout, 0.0)

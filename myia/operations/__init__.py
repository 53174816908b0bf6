"""User-facing operations: Python's operators and builtins, NumPy and `math` inside Myia."""

from .core import Array, Function, NoMatch, Operation, kind_of

__all__ = ["Array", "Function", "NoMatch", "Operation", "kind_of"]

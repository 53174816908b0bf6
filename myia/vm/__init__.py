"""Runtimes for the IR: the reference interpreter."""

from .debug_vm import Closure, DebugVM

__all__ = ["Closure", "DebugVM"]

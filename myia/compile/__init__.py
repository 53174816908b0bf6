"""Backends: compile typed graphs to something callable (generated Python code by default)."""

from .backend import BACKENDS, Backend, Executable, get_backend
from .codegen import generate

__all__ = ["BACKENDS", "Backend", "Executable", "generate", "get_backend"]

"""Backends: compile typed graphs to something callable (generated Python code by default)."""

from .backend import BACKENDS, Backend, Executable, get_backend
from .codegen import generate
from .jax_backend import JaxBackend

BACKENDS["jax"] = JaxBackend

__all__ = ["BACKENDS", "Backend", "Executable", "JaxBackend", "generate", "get_backend"]

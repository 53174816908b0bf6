"""Backends: compile typed graphs to something callable (generated Python code by default)."""

from .backend import BACKENDS, Backend, Executable, get_backend
from .codegen import generate
from .jax_backend import JaxBackend
from .native_backend import NativeBackend

BACKENDS["jax"] = JaxBackend
BACKENDS["native"] = NativeBackend

__all__ = [
    "BACKENDS",
    "Backend",
    "Executable",
    "JaxBackend",
    "NativeBackend",
    "generate",
    "get_backend",
]

"""The frontend: Python source to Myia's graph IR."""

from .parser import parse

__all__ = ["parse"]

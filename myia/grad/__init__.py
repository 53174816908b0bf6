"""Reverse-mode automatic differentiation as a transformation of the IR."""

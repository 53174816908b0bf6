"""Importing the peers the same way in every workload (they are an optional extra).

JAX runs in 64-bit mode (the workloads are float64 except `mlp_step`, whose float32 inputs
stay float32), and every JAX function is wrapped so that its time includes the computation
(JAX dispatches asynchronously).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.threads import configured_threads


def jax_module() -> Any:
    """``jax``, in 64-bit mode."""
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax


def jax_ready(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, returning only once its results are computed (``block_until_ready``)."""
    import jax

    def call(*args: Any) -> Any:
        out = fn(*args)
        if type(out) is float:
            # A Python float is computed already (Myia's scalar results): nothing to wait
            # for, and `block_until_ready` of one costs about 1 to 3 µs (an AttributeError).
            return out
        return jax.block_until_ready(out)

    call.jitted = fn  # type: ignore[attr-defined]
    return call


def jax_cache_size(fn: Callable[..., Any]) -> Callable[[], int] | None:
    """How many times the jitted `fn` compiled (``None`` where JAX does not tell)."""
    size = getattr(fn, "_cache_size", None)
    return size if callable(size) else None


def torch_module() -> Any:
    """``torch``, with the thread pool the suite was given (``--threads``)."""
    import torch

    n = configured_threads()
    if n is not None and torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return torch


def to_numpy(x: Any) -> np.ndarray:
    """Convert a NumPy, PyTorch or JAX value (or a Python scalar) to a NumPy array."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def flat_numpy(values: Any) -> list[np.ndarray]:
    """Return the leaves of nested tuples and lists, as NumPy arrays, in order."""
    if isinstance(values, (tuple, list)):
        out: list[np.ndarray] = []
        for v in values:
            out.extend(flat_numpy(v))
        return out
    return [to_numpy(values)]

"""The optimizer: a list of named passes run on specialized typed graphs (see `optimize`)."""

from __future__ import annotations

from ..ir.node import Graph


def optimize(graph: Graph) -> Graph:
    """Optimize the specialized graph `graph` (and every graph it reaches); return the result."""
    return graph

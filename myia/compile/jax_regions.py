"""Host code with jitted regions: the JAX backend's programs that are not one XLA computation.

A program that recurses (a tree recursion: a function of the program that calls itself), or
takes or returns values that are not arrays and scalars (a tree, a list), runs on the host as
the NumPy backend's generated code. Its array work is still compiled by XLA: `outline`
rewrites that code so that each maximal run of statements of a function computing arrays
from arrays (straight-line NumPy code: no call of a function of the program, nothing that
Python may raise) is one function compiled by ``jax.jit``, called from the host code. In a
tree recursion, a node's body ``tanh(W @ concat(hl, hr) + b)`` is one region, and its
backward pass two (before and after the calls of the children's backward passes).

A region's inputs are the variables it reads (arrays, NumPy scalars), its outputs those it
assigns that the function reads elsewhere, all arrays (``jax.Array``s, which the next region
takes without a copy). Its shapes are those of its arrays, not of the recursion: a region is
compiled once for every shape of the data it computes on, whatever the tree. A region that
JAX fails to trace runs as the NumPy code it was (`Region`).

Regions are outlined only on large arrays (`MIN_ELEMENTS`). Where none is and Numba is
installed, the JAX backend outlines the host code's small-array runs as machine code
instead (`myia.compile.native_regions`, as the native backend does): a tree's node bodies.
"""

from __future__ import annotations

import ast
from typing import Any

from .. import pyast
from .regions import Outliner, Pure

#: The fewest elements of the largest array a region computes for it to be outlined: a
#: region's call costs a ``jax.jit`` dispatch (several µs, far more on a loaded machine), which
#: NumPy's few operations on small arrays do not (``tree_rnn``'s vectors of 16: 28 times
#: slower with regions on this machine).
MIN_ELEMENTS = 1 << 14


class Region:
    """A region of array work: its ``jax.jit`` compilation, or its NumPy code if JAX fails."""

    def __init__(self, jitted: Any, host: Any):
        self.jitted, self.host = jitted, host
        self.fn = jitted

    def __call__(self, *args: Any) -> Any:
        try:
            return self.fn(*args)
        except Exception:
            if self.fn is self.host:
                raise
            self.fn = self.host
            return self.host(*args)


def outline(
    source: str,
    types: dict[str, Any],
    globals_: dict[str, Any],
    jax: Any,
    math_: Any,
    filename: str,
) -> tuple[Any, int]:
    """`source` with its regions of array work called as jitted functions (see the module).

    The regions are put in `globals_` (`Region`s named ``region0``...). Return the code of
    the rewritten module, compiled with the lines of `source` (tracebacks read `source`), and
    the number of regions.
    """
    jnp = jax.numpy
    tree = pyast.parse(source)
    pure = Pure(dict(types), globals_, lambda name: hasattr(jnp, name))
    outliner = Outliner(pure.types, pure, min_elements=MIN_ELEMENTS)
    for s in tree.body:
        if isinstance(s, ast.FunctionDef):
            outliner.function(s)
    traced = dict(globals_, np=jnp, math=math_)
    host = dict(globals_)
    for name, fn in outliner.regions:
        mod = ast.Module([fn], [])
        ast.fix_missing_locations(mod)
        code = compile(mod, filename, "exec")
        exec(code, traced)
        exec(code, host)
        globals_[name] = Region(jax.jit(traced[name]), host[name])
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec"), len(outliner.regions)

"""The optimizer: a list of named passes run on specialized typed graphs (see `optimize`).

`myia.opt.passes` holds the pass list and the driver; the rewrites are in `rewrites`,
`algebra`, `grad_rules` and `inline`, applied by the engine of `sweep` through the matcher of
`matcher`; `cse`, `dce` and `lift` are the other passes.
"""

from __future__ import annotations

from .passes import PASS_LIBRARY, PASSES, Pass, optimize, run_passes

__all__ = ["PASSES", "PASS_LIBRARY", "Pass", "optimize", "run_passes"]

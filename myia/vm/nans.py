"""Checking for NaNs (``debug_nans=True``): primitives that make a NaN or an infinity."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..primitives import Primitive


def _nonfinite(v: Any) -> bool:
    """Whether `v` (a number, an array, or a tuple of them) holds a NaN or an infinity."""
    if isinstance(v, (float, np.floating, np.complexfloating)):
        return not np.isfinite(v)
    if isinstance(v, np.ndarray) and v.dtype.kind in "fc":
        return not np.isfinite(v).all()
    if type(v) is tuple:
        return any(_nonfinite(x) for x in v)
    return False


def _nan(v: Any) -> bool:
    if type(v) is tuple:
        return any(_nan(x) for x in v)
    return bool(np.isnan(v).any()) if isinstance(v, (float, np.ndarray, np.generic)) else False


def _checked(prim: Primitive) -> Any:
    """`prim`'s implementation, raising where it makes a NaN or an infinity from finite values."""
    impl = prim.impl

    def run(*args: Any) -> Any:
        with np.errstate(all="ignore"):
            out = impl(*args)
        if _nonfinite(out) and not any(_nonfinite(a) for a in args):
            what = "nan" if _nan(out) else "inf"
            raise FloatingPointError(f"{prim.name} produced {what} from finite arguments")
        return out

    return run

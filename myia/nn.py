"""Neural-network functions on NCHW arrays: 2-D convolution and 2-D max pooling.

NumPy has no convolution for Myia to map, so Myia provides these. Inside Myia code (a
function compiled by `myia.myia`, or differentiated by `myia.grad`) each is Myia's primitive
of the same name, with its shape rule (a wrong shape is a `MyiaShapeError` at compile time)
and its gradient; called from plain Python, it computes the same result with NumPy::

    import numpy as np
    from myia import grad, myia, nn

    @myia
    def features(x, w):
        h = nn.conv2d(x, w, padding=1)  # (N, C, H, W) * (O, C, 3, 3) -> (N, O, H, W)
        return nn.max_pool2d(np.maximum(h, 0.0), 2)  # (N, O, H // 2, W // 2)

    dw = grad(lambda x, w: np.sum(features(x, w)), "w")(x, w)

Arrays are (batch, channels, height, width). Strides, paddings, dilations, groups and kernel
sizes must be known at compile time (constants, or values computed from constants); each is
an int or a pair ``(height, width)``.
"""

from __future__ import annotations

from typing import Any

from .operations.mapping import MAPPING
from .primitives import P

__all__ = ["conv2d", "max_pool2d"]


def conv2d(x: Any, w: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1):
    """2-D convolution (cross-correlation, as in deep learning frameworks) of `x` by `w`.

    `x` is (N, C, H, W) and `w` is (O, C // groups, KH, KW); the result is (N, O, OH, OW),
    with ``OH = (H + 2 * padding - dilation * (KH - 1) - 1) // stride + 1`` (likewise OW).
    `groups` splits the input channels and the kernels into that many independent groups.
    """
    return P.conv2d.impl(x, w, stride, padding, dilation, groups)


def max_pool2d(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0):
    """2-D max pooling of `x` (N, C, H, W) over windows of `kernel_size`.

    `stride` defaults to `kernel_size` (windows that do not overlap); `padding` adds the
    lowest value of the dtype (-inf for floats) around the spatial axes. The result is
    (N, C, OH, OW) with ``OH = (H + 2 * padding - kernel_size) // stride + 1`` (likewise OW).
    Where a window has several maxima, its gradient goes to the first (in row-major order).
    """
    return P.max_pool2d.impl(x, kernel_size, stride, padding)


# Inside Myia code, the functions are the primitives.
MAPPING[conv2d] = P.conv2d
MAPPING[max_pool2d] = P.max_pool2d

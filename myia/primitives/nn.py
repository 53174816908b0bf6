"""Neural-network primitives on NCHW arrays: 2-D convolution and 2-D max pooling.

Both are computed on windows made by `sliding_window_view` (views, no copy), subsampled by the
stride and dilation, then contracted with `einsum` (convolution) or reduced with `maximum`
over the kernel's offsets (pooling): no Python loop over pixels. Strides, paddings, dilations
and kernel sizes are compile-time constants, each an int or a pair ``(height, width)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..abstract.data import AbstractArray
from ..abstract.lattice import promote
from ..errors import MyiaShapeError, MyiaTypeError
from ..grad.registry import bprop
from ..infer.registry import infer_rule
from ..infer.rulelib import as_array, const_value, is_none, shape_str
from .core import primitive


def _pair(v: Any, what: str = "an argument") -> tuple[int, int]:
    """Return `v` (an int or a pair of ints) as a pair."""
    pair = (v, v) if isinstance(v, (int, np.integer)) else tuple(v)
    if len(pair) != 2 or not all(isinstance(i, (int, np.integer)) for i in pair):
        raise MyiaTypeError(f"{what} must be an int or a pair of ints, not {v!r}")
    return int(pair[0]), int(pair[1])


def _out_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """Return the output size of a window sliding over one spatial axis."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _windows(x, kernel, stride, padding, dilation, fill=0):
    """Return the windows of `x` (N, C, H, W): a view of shape (N, C, OH, OW, KH, KW)."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    if ph or pw:
        x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=fill)
    span = ((kh - 1) * dh + 1, (kw - 1) * dw + 1)
    win = sliding_window_view(x, span, axis=(2, 3))
    return win[:, :, ::sh, ::sw, ::dh, ::dw]


@primitive
def conv2d(x, w, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation, as in deep learning frameworks).

    `x` is (N, C, H, W), `w` is (O, C // groups, KH, KW); the result is (N, O, OH, OW) with
    ``OH = (H + 2 * padding - dilation * (KH - 1) - 1) // stride + 1`` (likewise OW).
    """
    n, c = x.shape[:2]
    o, cg, kh, kw = w.shape
    win = _windows(x, (kh, kw), _pair(stride), _pair(padding), _pair(dilation))
    oh, ow = win.shape[2:4]
    win = win.reshape(n, groups, cg, oh, ow, kh, kw)
    wg = w.reshape(groups, o // groups, cg, kh, kw)
    out = np.einsum("ngcijkl,gockl->ngoij", win, wg, optimize=True)
    return out.reshape(n, o, oh, ow)


@primitive
def max_pool2d(x, kernel_size, stride=None, padding=0):
    """2-D max pooling of `x` (N, C, H, W); `stride` defaults to `kernel_size`.

    Padding adds the lowest value of the dtype (-inf for floats) around the spatial axes.
    """
    kernel = _pair(kernel_size)
    stride = kernel if stride is None else _pair(stride)
    dt = x.dtype
    low = -np.inf if dt.kind == "f" else np.iinfo(dt).min if dt.kind in "iu" else False
    win = _windows(x, kernel, stride, _pair(padding), (1, 1), fill=low)
    out = win[..., 0, 0].copy()
    for i, j in np.ndindex(*kernel):  # over the kernel's offsets (fast), not over the pixels
        np.maximum(out, win[..., i, j], out=out)
    return out


def _spatial(x, what):
    x = as_array(x, what)
    if len(x.shape) != 4:
        raise MyiaShapeError(f"{what} expects an NCHW array (4-D), not {shape_str(x.shape)}")
    return x


def _const_pair(a, what):
    return _pair(const_value(a, what), what)


@infer_rule(conv2d)
def _infer_conv2d(x, w, stride, padding, dilation, groups):
    x, w = _spatial(x, "conv2d"), _spatial(w, "conv2d's weight")
    (n, c, h, wd), (o, cg, kh, kw) = x.shape, w.shape
    s, p = _const_pair(stride, "conv2d's stride"), _const_pair(padding, "conv2d's padding")
    d = _const_pair(dilation, "conv2d's dilation")
    g = const_value(groups, "conv2d's groups", int)
    if min(*s, *d, g) < 1 or min(p) < 0:
        raise MyiaTypeError("conv2d: strides, dilations and groups must be positive")
    both = f"input {shape_str(x.shape)} and weight {shape_str(w.shape)}"
    if c != cg * g or o % g:
        raise MyiaShapeError(f"Incompatible shapes in conv2d with groups={g}: {both}")
    oh, ow = (_out_size(*args) for args in zip((h, wd), (kh, kw), s, p, d))
    if oh < 1 or ow < 1:
        raise MyiaShapeError(f"conv2d: the kernel is larger than the padded input: {both}")
    dtype = promote((x.dtype, False), (w.dtype, False))[0]
    return AbstractArray(dtype, (n, o, oh, ow))


@infer_rule(max_pool2d)
def _infer_max_pool2d(x, kernel_size, stride, padding):
    x = _spatial(x, "max_pool2d")
    n, c, h, w = x.shape
    k = _const_pair(kernel_size, "max_pool2d's kernel_size")
    s = k if is_none(stride) else _const_pair(stride, "max_pool2d's stride")
    p = _const_pair(padding, "max_pool2d's padding")
    if min(*k, *s) < 1 or min(p) < 0:
        raise MyiaTypeError("max_pool2d: kernel sizes and strides must be positive")
    oh, ow = (_out_size(*args, 1) for args in zip((h, w), k, s, p))
    if oh < 1 or ow < 1:
        raise MyiaShapeError(
            f"max_pool2d: the kernel {k} is larger than the padded input {shape_str(x.shape)}"
        )
    return AbstractArray(x.dtype, (n, c, oh, ow))


# Backpropagators ------------------------------------------------------------------------------


@bprop(conv2d)
def bprop_conv2d(x, w, stride, padding, dilation, groups, out, dout):
    dx = conv2d_input_grad(x, w, dout, stride, padding, dilation, groups)
    dw = conv2d_weight_grad(x, w, dout, stride, padding, dilation, groups)
    return (
        unbroadcast(dx, x),
        unbroadcast(dw, w),
        gzeros(stride),
        gzeros(padding),
        gzeros(dilation),
        gzeros(groups),
    )


@bprop(max_pool2d)
def bprop_max_pool2d(x, kernel_size, stride, padding, out, dout):
    dx = unbroadcast(max_pool2d_grad(x, dout, kernel_size, stride, padding), x)
    return (dx, gzeros(kernel_size), gzeros(stride), gzeros(padding))


from .array_grad import conv2d_input_grad, conv2d_weight_grad, max_pool2d_grad  # noqa: E402
from .grad import gzeros, unbroadcast  # noqa: E402

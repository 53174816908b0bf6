"""Backward computations of array primitives, for the backpropagators of `array.py`, `nn.py`.

Each helper computes the sensitivity of one argument of an array primitive (splitting the
sensitivity of a concatenation, scattering that of a gather, the transposed convolutions, the
routing of max pooling). Like any primitive, each has its NumPy implementation, its type rule
and its own backpropagator: the helpers come in adjoint pairs (``concatenate`` and
`unconcatenate`, ``take`` and `untake`, `max_pool2d_grad` and `max_pool2d_gather`, ``conv2d``
and its two transposes), so that gradients of any order are gradients of primitives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import AbstractArray, AbstractTuple
from ..abstract.lattice import constant_abstract, promote
from ..grad.registry import bprop, jvp, nondifferentiable
from ..infer.registry import infer_rule
from ..infer.rulelib import as_array, axes_arg, const_value, is_none
from .core import primitive

# Shapes and joins -----------------------------------------------------------------------------


@primitive
def invert_permutation(axes, ndim):
    """Return the axes that undo ``transpose(a, axes)`` on an array of `ndim` axes.

    None if `axes` is None or ``()``: reversing the axes is its own inverse.
    """
    axes = _shape_arg(axes)
    if not axes:
        return None
    return tuple(int(i) for i in np.argsort([i % ndim for i in axes]))


@primitive
def unconcatenate(d, arrays, axis):
    """Split `d`, the sensitivity of ``concatenate(arrays, axis)``, into those of `arrays`.

    Each has the shape and dtype of its array (zero for integer arrays).
    """
    flat = axis is None
    sizes = [np.size(a) if flat else np.shape(a)[axis] for a in arrays]
    parts = np.split(np.ravel(d) if flat else d, np.cumsum(sizes)[:-1], axis=0 if flat else axis)
    return tuple(unbroadcast_value(np.reshape(p, np.shape(a)), a) for p, a in zip(parts, arrays))


@primitive
def unstack(d, arrays, axis):
    """Split `d`, the sensitivity of ``stack(arrays, axis)``, into those of `arrays`."""
    return tuple(unbroadcast_value(np.take(d, i, axis=axis), a) for i, a in enumerate(arrays))


@primitive
def untake(d, a, indices, axis):
    """Return the sensitivity of `a` in ``take(a, indices, axis)`` whose output's is `d`.

    That is zeros with `d` added at the positions read (repeated indices add up).
    """
    out = np.zeros(np.shape(a), np.result_type(d))
    if axis is None:
        np.add.at(out.reshape(-1), np.asarray(indices), d)
    else:
        index = (slice(None),) * (axis % out.ndim) + (np.asarray(indices),)
        np.add.at(out, index, d)
    return unbroadcast_value(out, a)


@infer_rule(invert_permutation)
def _infer_invert_permutation(axes, ndim):
    if is_none(axes):
        return constant_abstract(None)
    n = const_value(ndim, "the number of axes", int)
    return constant_abstract(invert_permutation.impl(const_value(axes, "the axes"), n))


@infer_rule(unconcatenate, unstack)
def _infer_unjoin(d, arrays, axis):
    return AbstractTuple(tuple(sens_type(a) for a in arrays.elements))


@infer_rule(untake)
def _infer_untake(d, a, indices, axis):
    return sens_type(a)


@bprop(unconcatenate)
def bprop_unconcatenate(d, arrays, axis, out, dout):
    return (unbroadcast(concatenate(dout, axis), d), gzeros(arrays), gzeros(axis))


@bprop(unstack)
def bprop_unstack(d, arrays, axis, out, dout):
    return (unbroadcast(stack(dout, axis), d), gzeros(arrays), gzeros(axis))


@bprop(untake)
def bprop_untake(d, a, indices, axis, out, dout):
    return (unbroadcast(take(dout, indices, axis), d), gzeros(a), gzeros(indices), gzeros(axis))


nondifferentiable(invert_permutation)


# Products -------------------------------------------------------------------------------------
#
# The sensitivity of ``np.prod(a, axis)`` is the product of the *other* elements of each one's
# reduction, written without division (``out / a`` is ``nan`` where ``a`` has a zero): the
# product of those before it times the product of those after it, exclusive cumulative
# products from both sides (as JAX does).


def _front(
    a: np.ndarray, axis: object, xp: Any = np
) -> tuple[np.ndarray, tuple[int, ...], tuple[int, ...]]:
    """`a` with the axes `axis` reduces flattened into the first of a 2-d array.

    Also the permutation of `a`'s axes and the shape of the permuted array, to undo it.
    `xp` is the array module (``jax.numpy`` for the JAX backend's twin).
    """
    a = xp.asarray(a)
    nd = a.ndim
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = tuple(sorted(i % nd for i in (axis if isinstance(axis, tuple) else (axis,))))
    perm = axes + tuple(i for i in range(nd) if i not in axes)
    t = xp.transpose(a, perm)
    n = int(np.prod([a.shape[i] for i in axes], dtype=np.int64))
    return t.reshape(n, -1), perm, t.shape


def _back(
    x: np.ndarray, perm: tuple[int, ...], tshape: tuple[int, ...], xp: Any = np
) -> np.ndarray:
    """Undo `_front`."""
    out = xp.transpose(x.reshape(tshape), tuple(np.argsort(perm)))
    return np.ascontiguousarray(out) if xp is np else out


@primitive
def exclusive_cumprod(a, axis, reverse):
    """The product of the elements before each element of `a` in its reduction.

    The reduction is ``np.prod(a, axis)``, its elements in C order of the reduced axes (those
    after it if `reverse`); 1 for none.
    """
    x, perm, tshape = _front(a, axis)
    if reverse:
        x = x[::-1]
    out = np.ones_like(x)
    if len(x) > 1:
        out[1:] = np.cumprod(x[:-1], axis=0)
    if reverse:
        out = out[::-1]
    return _back(out, perm, tshape)


@primitive
def exclusive_cumprod_grad(a, axis, reverse, dout):
    """The sensitivity of `a` in ``exclusive_cumprod(a, axis, reverse)`` whose output's is `dout`.

    With ``p[i]`` the product of ``a[j]`` for ``j < i``, ``d p[i] / d a[k]`` is ``p[k]`` times
    the product of ``a[j]`` for ``k < j < i``: a recurrence from the end, without division.
    """
    x, perm, tshape = _front(a, axis)
    g, _, _ = _front(np.broadcast_to(dout, np.shape(a)), axis)
    if reverse:
        x, g = x[::-1], g[::-1]
    n = len(x)
    before = np.ones_like(x)
    if n > 1:
        before[1:] = np.cumprod(x[:-1], axis=0)
    out = np.zeros(x.shape, np.result_type(x, g))
    acc = out[0].copy()  # the sum over i > k of g[i] * prod(a[j], k < j < i)
    for k in range(n - 2, -1, -1):
        acc = g[k + 1] + x[k + 1] * acc
        out[k] = before[k] * acc
    if reverse:
        out = out[::-1]
    return _back(out, perm, tshape).astype(np.result_type(a, dout), copy=False)


@primitive
def exclusive_cumprod_jvp(a, axis, reverse, da):
    """The tangent of ``exclusive_cumprod(a, axis, reverse)`` along the tangent `da` of `a`.

    With ``p[i]`` the product of ``a[j]`` for ``j < i``, ``dp[i + 1] = dp[i] a[i] + p[i] da[i]``:
    a recurrence without division (zeros are fine).
    """
    x, perm, tshape = _front(a, axis)
    t, _, _ = _front(np.broadcast_to(da, np.shape(a)), axis)
    if reverse:
        x, t = x[::-1], t[::-1]
    p = np.ones(x.shape, np.result_type(x, t))
    dp = np.zeros_like(p)
    for i in range(1, len(x)):
        p[i] = p[i - 1] * x[i - 1]
        dp[i] = dp[i - 1] * x[i - 1] + p[i - 1] * t[i - 1]
    if reverse:
        dp = dp[::-1]
    return _back(dp, perm, tshape).astype(np.result_type(a, da), copy=False)


@infer_rule(exclusive_cumprod_jvp)
def _infer_exclusive_cumprod_jvp(a, axis, reverse, da):
    x, d = as_array(a, "exclusive_cumprod_jvp"), as_array(da, "exclusive_cumprod_jvp")
    return AbstractArray(np.result_type(x.dtype, d.dtype).name, x.shape)


@infer_rule(exclusive_cumprod)
def _infer_exclusive_cumprod(a, axis, reverse):
    x = as_array(a, "exclusive_cumprod")
    axes_arg(axis, len(x.shape), "cumprod", x.shape)  # (an axis out of bounds raises)
    return x


@infer_rule(exclusive_cumprod_grad)
def _infer_exclusive_cumprod_grad(a, axis, reverse, dout):
    x, d = as_array(a, "exclusive_cumprod_grad"), as_array(dout, "exclusive_cumprod_grad")
    return AbstractArray(np.result_type(x.dtype, d.dtype).name, x.shape)


@bprop(exclusive_cumprod)
def bprop_exclusive_cumprod(a, axis, reverse, out, dout):
    return (exclusive_cumprod_grad(a, axis, reverse, dout), gzeros(axis), gzeros(reverse))


@jvp(exclusive_cumprod)
def jvp_exclusive_cumprod(a, axis, reverse, out, da, daxis, dreverse):
    return exclusive_cumprod_jvp(a, axis, reverse, da)


# Convolution ----------------------------------------------------------------------------------


def _conv_params(w, stride, padding, dilation, groups):
    o, cg, kh, kw = w.shape
    return (o // groups, cg, kh, kw), _pair(stride), _pair(padding), _pair(dilation)


@primitive
def conv2d_input_grad(x, w, dout, stride, padding, dilation, groups):
    """Return the sensitivity of input `x` of ``conv2d(x, w, ...)`` (only its shape is used).

    It is the transposed convolution of `dout` by `w`.
    """
    n, c, h, wd = x.shape
    (og, cg, kh, kw), (sh, sw), (ph, pw), (dh, dw) = _conv_params(
        w, stride, padding, dilation, groups
    )
    oh, ow = dout.shape[2:]
    dg = dout.reshape(n, groups, og, oh, ow)
    wg = w.reshape(groups, og, cg, kh, kw)
    out = np.zeros((n, groups, cg, h + 2 * ph, wd + 2 * pw), np.result_type(w, dout))
    for i, j in np.ndindex(kh, kw):  # over the kernel's offsets, not over the pixels
        rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
        cols = slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)
        out[..., rows, cols] += np.einsum("ngoyx,goc->ngcyx", dg, wg[..., i, j])
    out = out.reshape(n, c, h + 2 * ph, wd + 2 * pw)
    return np.ascontiguousarray(out[:, :, ph : ph + h, pw : pw + wd])


@primitive
def conv2d_weight_grad(x, w, dout, stride, padding, dilation, groups):
    """Return the sensitivity of weight `w` of ``conv2d(x, w, ...)`` (only its shape is used).

    It is the correlation of the windows of `x` with `dout`.
    """
    n = x.shape[0]
    (og, cg, kh, kw), s, p, d = _conv_params(w, stride, padding, dilation, groups)
    oh, ow = dout.shape[2:]
    win = _windows(x, (kh, kw), s, p, d).reshape(n, groups, cg, oh, ow, kh, kw)
    dg = dout.reshape(n, groups, og, oh, ow)
    out = np.einsum("ngoij,ngcijkl->gockl", dg, win, optimize=True)
    return out.reshape(w.shape).astype(np.result_type(x, dout), copy=False)


@infer_rule(conv2d_input_grad)
def _infer_conv2d_input_grad(x, w, dout, stride, padding, dilation, groups):
    w, dout = as_array(w, "conv2d"), as_array(dout, "conv2d")
    return AbstractArray(promote((w.dtype, False), (dout.dtype, False))[0], x.shape)


@infer_rule(conv2d_weight_grad)
def _infer_conv2d_weight_grad(x, w, dout, stride, padding, dilation, groups):
    x, dout = as_array(x, "conv2d"), as_array(dout, "conv2d")
    return AbstractArray(promote((x.dtype, False), (dout.dtype, False))[0], w.shape)


# <input_grad(w, dout), e> = <dout, conv2d(e, w)> and <weight_grad(x, dout), e> =
# <dout, conv2d(x, e)>: both are bilinear, and their derivatives are convolutions again.


@bprop(conv2d_input_grad)
def bprop_conv2d_input_grad(x, w, dout, stride, padding, dilation, groups, out, e):
    return (
        gzeros(x),
        unbroadcast(conv2d_weight_grad(e, w, dout, stride, padding, dilation, groups), w),
        unbroadcast(conv2d(e, w, stride, padding, dilation, groups), dout),
        gzeros(stride),
        gzeros(padding),
        gzeros(dilation),
        gzeros(groups),
    )


@bprop(conv2d_weight_grad)
def bprop_conv2d_weight_grad(x, w, dout, stride, padding, dilation, groups, out, e):
    return (
        unbroadcast(conv2d_input_grad(x, e, dout, stride, padding, dilation, groups), x),
        gzeros(w),
        unbroadcast(conv2d(x, e, stride, padding, dilation, groups), dout),
        gzeros(stride),
        gzeros(padding),
        gzeros(dilation),
        gzeros(groups),
    )


# Max pooling ----------------------------------------------------------------------------------


def _argmax_positions(x, kernel_size, stride, padding):
    """Return the positions of the maximum of each window in the padded `x`.

    The positions are four index arrays of the shape of the output; the padded shape and the
    padding come with them.
    """
    kernel = _pair(kernel_size)
    stride = kernel if stride is None else _pair(stride)
    (ph, pw), (sh, sw) = _pair(padding), stride
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    win = _windows(x, kernel, stride, (ph, pw), (1, 1), fill=low)
    n, c, oh, ow = win.shape[:4]
    flat = np.argmax(win.reshape(n, c, oh, ow, -1), axis=-1)
    ki, kj = np.divmod(flat, kernel[1])
    nn_, cc, ii, jj = np.indices((n, c, oh, ow), sparse=True)
    padded = (n, c, x.shape[2] + 2 * ph, x.shape[3] + 2 * pw)
    return (nn_, cc, ii * sh + ki, jj * sw + kj), padded, (ph, pw)


@primitive
def max_pool2d_grad(x, dout, kernel_size, stride, padding):
    """Return the sensitivity of `x` in ``max_pool2d(x, ...)`` whose output's is `dout`.

    Each element of `dout` goes to the position of the maximum of its window.
    """
    index, padded, (ph, pw) = _argmax_positions(x, kernel_size, stride, padding)
    out = np.zeros(padded, np.result_type(dout))
    np.add.at(out, index, dout)
    return np.ascontiguousarray(out[:, :, ph : padded[2] - ph, pw : padded[3] - pw])


@primitive
def max_pool2d_gather(x, e, kernel_size, stride, padding):
    """Return the element of `e` (shaped like `x`) where each window of `x` has its maximum.

    This is the adjoint of `max_pool2d_grad` in its sensitivity.
    """
    index, _, (ph, pw) = _argmax_positions(x, kernel_size, stride, padding)
    return np.pad(e, ((0, 0), (0, 0), (ph, ph), (pw, pw)))[index]


@infer_rule(max_pool2d_grad)
def _infer_max_pool2d_grad(x, dout, kernel_size, stride, padding):
    return AbstractArray(as_array(dout, "max_pool2d").dtype, as_array(x, "max_pool2d").shape)


@infer_rule(max_pool2d_gather)
def _infer_max_pool2d_gather(x, e, kernel_size, stride, padding):
    x = as_array(x, "max_pool2d")
    out = _infer_max_pool2d(x, kernel_size, stride, padding)
    return AbstractArray(as_array(e, "max_pool2d").dtype, out.shape)


@bprop(max_pool2d_grad)
def bprop_max_pool2d_grad(x, dout, kernel_size, stride, padding, out, e):
    return (
        gzeros(x),
        unbroadcast(max_pool2d_gather(x, e, kernel_size, stride, padding), dout),
        gzeros(kernel_size),
        gzeros(stride),
        gzeros(padding),
    )


@bprop(max_pool2d_gather)
def bprop_max_pool2d_gather(x, e, kernel_size, stride, padding, out, dout):
    return (
        gzeros(x),
        unbroadcast(max_pool2d_grad(x, dout, kernel_size, stride, padding), e),
        gzeros(kernel_size),
        gzeros(stride),
        gzeros(padding),
    )


# Sibling modules are imported last: they import this module at their end.
from .array import _shape_arg, concatenate, stack, take  # noqa: E402
from .grad import gzeros, sens_type, unbroadcast, unbroadcast_value  # noqa: E402
from .nn import _infer_max_pool2d, _pair, _windows, conv2d  # noqa: E402

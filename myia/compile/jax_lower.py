"""JAX's twins of the primitives whose NumPy code does not run under ``jax.jit``.

The JAX backend's generated code calls NumPy's names with ``np`` bound to ``jax.numpy``; a
primitive with no NumPy function of its own (SciPy's special functions, BLAS's triangular
solves and products, the helpers of the Cholesky gradient) would call its NumPy
implementation on traced values, which JAX refuses, and the whole program would run on the
host; ``jax.numpy.linalg.cholesky`` symmetrizes its argument where NumPy's reads the lower
triangle. `JAX_LOWER` maps each such primitive to the call of a function of traced values
written with ``jax.numpy``, ``jax.lax`` and ``jax.scipy``, with the primitive's signature and
results. A product of a transposed matrix is one too: XLA's CPU runs it faster with the
transpose copied first (`matmul_transposed`). `LINALG_ERRORS` says how the results of those
NumPy may refuse are checked. JAX is imported when these functions are first traced.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..abstract.data import AbstractArray, AbstractScalar
from ..primitives import P
from ..primitives.array_grad import _back, _front
from ..primitives.linalg import BLAS_SOLVES
from ..primitives.tiling import _repeat_map, unpad_of, unrepeat_of
from .jax_runtime import assert_flagged, raise_flagged


def _jax() -> Any:
    import jax
    import jax.scipy.linalg
    import jax.scipy.special

    return jax


def _float(*xs: Any) -> Any:
    jnp = _jax().numpy
    return jnp.result_type(*xs, jnp.float32)


def _special(name: str) -> Any:
    def fn(*args: Any) -> Any:
        return getattr(_jax().scipy.special, name)(*args)

    fn.__name__ = name
    return fn


def cholesky(a: Any) -> Any:
    """``np.linalg.cholesky(a)``: NumPy's reads only the lower triangle of `a`.

    (``jax.numpy``'s symmetrizes `a` first, which gives other values where `a` is not
    symmetric.) Where `a` is not positive definite, the factor is NaNs.
    """
    jax = _jax()
    a = jax.numpy.asarray(a, _float(a))
    return jax.lax.linalg.cholesky(a, symmetrize_input=False)


def solve(a: Any, b: Any) -> Any:
    """``np.linalg.solve(a, b)``: `b` a vector (n,) or matrices (..., n, k)."""
    jnp = _jax().numpy
    dt = _float(a, b)
    return jnp.linalg.solve(jnp.asarray(a, dt), jnp.asarray(b, dt))


def triangular_solve(a: Any, b: Any, lower: bool = True, trans: bool = False) -> Any:
    """``op(tri(a))^-1 @ b``, the batch axes of `a` and `b` broadcast against each other."""
    jax = _jax()
    jnp = jax.numpy
    dt = _float(a, b)
    a, b = jnp.asarray(a, dt), jnp.asarray(b, dt)
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    return jax.lax.linalg.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=trans)


def solve_transposed(a: Any, y: Any, lower: bool = True, trans: bool = False) -> Any:
    """``triangular_solve(a, swapaxes(y, -1, -2), lower, trans)`` as a right-side solve.

    ``op(a)^-1 y^T = (y op(a)^-T)^T``: LAPACK solves ``x op(a)^T = y`` on `y` as XLA laid it
    out, where the left-side solve would copy ``y^T`` into a new layout first.
    """
    jax = _jax()
    jnp = jax.numpy
    dt = _float(a, y)
    a, y = jnp.asarray(a, dt), jnp.asarray(y, dt)
    batch = jnp.broadcast_shapes(a.shape[:-2], y.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    y = jnp.broadcast_to(y, batch + y.shape[-2:])
    x = jax.lax.linalg.triangular_solve(a, y, left_side=False, lower=lower, transpose_a=not trans)
    return jnp.swapaxes(x, -1, -2)


def _last_two_swapped(node: Any) -> Any:
    """The array `node` transposes (its last two axes swapped), or None."""
    if not node.is_apply or not node.inputs[0].is_constant:
        return None
    fn, a = node.inputs[0].value, node.inputs[1].abstract
    if not isinstance(a, AbstractArray) or len(a.shape) < 2:
        return None
    n = len(a.shape)
    if fn is P.swapaxes and all(i.is_constant for i in node.inputs[2:]):
        axes = {node.inputs[2].value % n, node.inputs[3].value % n}
        return node.inputs[1] if axes == {n - 2, n - 1} else None
    if fn is P.transpose and node.inputs[2].is_constant:
        perm = node.inputs[2].value or tuple(reversed(range(n)))
        swapped = (*range(n - 2), n - 1, n - 2)
        return node.inputs[1] if tuple(perm) == swapped else None
    return None


def _triangular_solve(args: list[str], node: Any, ctx: Any) -> str:
    """A solve of a transposed right-hand side (written in its call) is a right-side solve."""
    b = node.inputs[2]
    y = _last_two_swapped(b)
    if y is not None and ctx.inlined(b):
        fn = ctx.global_value(solve_transposed, "jax_solve_transposed")
        return f"{fn}({args[0]}, {ctx.expr(y)}, {args[2]}, {args[3]})"
    return f"{ctx.global_value(triangular_solve, 'jax_triangular_solve')}({', '.join(args)})"


def _on_cpu() -> bool:
    """Whether the program being traced runs on XLA's CPU (the backend's device, or JAX's)."""
    jax = _jax()
    device = jax.config.jax_default_device
    if device is None:
        return jax.default_backend() == "cpu"
    return (device if isinstance(device, str) else device.platform) == "cpu"


def _laid_out(at: Any, b: Any) -> Any:
    """`at`, a transposed matrix, as an array of its own where the product ``at @ b`` gains.

    XLA folds a transpose into the product that reads it. Its CPU runs a product whose left
    operand is read transposed (its first axis contracted) outside its fast kernels, up to
    three times slower, and slowest where a row of `at`'s memory is a multiple of 1 KiB
    (`mlp_step` large's last weight gradient, 1024 x 256 x 10 in float32: 540 to 670 µs,
    against 220 to 290 µs with the copy; one thread). A copy of `at` (``m k`` elements,
    against the product's ``m k n`` multiply-adds) lets it run on the fast one. Over a grid of
    252 shapes (m 64 to 1280, k 32 to 256, n 10 to 256, float32 and float64) the copy
    always made the sum of the products' times 76 ms to 51 ms, no rule of sizes did better,
    and the worst single loss was 1.5x on a product of tens of µs. Below 2**15 multiply-adds,
    or for a matrix-vector product (`b` one column), there is nothing to gain. The barrier
    keeps XLA from folding the transpose back.
    """
    jax = _jax()
    if np.ndim(at) != 2 or np.ndim(b) != 2:
        return at
    (m, k), n = np.shape(at), np.shape(b)[1]
    if n < 2 or m * k * n < 1 << 15 or not _on_cpu():
        return at
    return jax.lax.optimization_barrier(jax.numpy.asarray(at))


def matmul_transposed(at: Any, b: Any) -> Any:
    """``at @ b``, where `at` is a transposed matrix (see `_laid_out`)."""
    return _laid_out(at, b) @ b


def _matmul(args: list[str], node: Any, ctx: Any) -> str | None:
    """A product of a transposed matrix, by `matmul_transposed`."""
    lhs, rhs = node.inputs[1].abstract, node.inputs[2].abstract
    if not (isinstance(lhs, AbstractArray) and isinstance(rhs, AbstractArray)):
        return None
    if _last_two_swapped(node.inputs[1]) is None:
        return None
    return f"{ctx.global_value(matmul_transposed, 'jax_matmul_transposed')}({args[0]}, {args[1]})"


def triangular_matmul(a: Any, b: Any, lower: bool = True, trans: bool = False) -> Any:
    """``op(tri(a)) @ b``."""
    jnp = _jax().numpy
    dt = _float(a, b)
    t = jnp.tril(a) if lower else jnp.triu(a)
    b = jnp.asarray(b, dt)
    if trans:
        return jnp.matmul(_laid_out(jnp.swapaxes(t, -1, -2).astype(dt), b), b)
    return jnp.matmul(t.astype(dt), b)


def lower_half(x: Any) -> Any:
    """The lower triangle of the last two axes of `x`, its diagonal halved.

    Selected by the positions' indices, which XLA computes in the loop (a mask of constants
    is one more array read, as large as `x`).
    """
    jax = _jax()
    x = jax.numpy.asarray(x, _float(x))
    shape = jax.numpy.shape(x)
    rows = jax.lax.broadcasted_iota(np.int32, shape, len(shape) - 2)
    cols = jax.lax.broadcasted_iota(np.int32, shape, len(shape) - 1)
    where = jax.numpy.where
    return where(rows > cols, x, where(rows == cols, 0.5 * x, jax.numpy.zeros_like(x)))


def undiagonal(d: Any, a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """Zeros of `a`'s shape with `d` on the diagonal ``diagonal(a, offset, axis1, axis2)``.

    Selected by the positions' indices (an elementwise operation XLA fuses with its users,
    where a scatter into zeros is an operation of its own): row ``r`` of the diagonal holds
    element ``r - max(-offset, 0)`` of `d`.
    """
    jax = _jax()
    jnp = jax.numpy
    shape = jnp.shape(a)
    i, j = axis1 % len(shape), axis2 % len(shape)
    moved = [s for k, s in enumerate(shape) if k not in (i, j)] + [shape[i], shape[j]]
    d = jnp.asarray(d)
    first = min(max(-offset, 0), moved[-2])  # (an empty diagonal may start below the last row)
    pad = [(0, 0)] * (d.ndim - 1) + [(first, moved[-2] - jnp.shape(d)[-1] - first)]
    column = jnp.pad(d, pad)[..., :, None]
    rows = jax.lax.broadcasted_iota(np.int32, moved, len(moved) - 2)
    cols = jax.lax.broadcasted_iota(np.int32, moved, len(moved) - 1)
    out = jnp.where(cols - rows == offset, column, jnp.zeros((), d.dtype))
    return jnp.moveaxis(out, (-2, -1), (i, j))


def index_add(a: Any, index: Any, v: Any) -> Any:
    """``a`` with `v` added at ``a[index]`` (summed over repeated indices, as ``np.add.at``).

    The backpropagator of ``a[index]``; an index out of bounds is flagged (XLA drops the
    update where NumPy raises).
    """
    from .jax_checks import check_bounds, jax_index

    index = jax_index(index)
    check_bounds(a, index)
    a = _jax().numpy.asarray(a)  # a constant may be a NumPy array
    return a.at[index].add(_jax().numpy.asarray(v, a.dtype))


def _window_offset(n: int, start: Any, size: int) -> Any:
    """The offset of a window in an axis of `n` (`windows.window_start`), its misfit flagged.

    XLA's ``dynamic_slice`` clamps a start that does not fit where NumPy's slice is
    shorter and Myia raises: the host runs the call again and raises at the user's line.
    """
    from .jax_runtime import check

    jnp = _jax().numpy
    s = jnp.asarray(start)
    if size == 0:
        return jnp.zeros((), s.dtype)
    fits = ((s >= 0) & (s + size <= n)) | ((s < 0) & (s >= -n) & (s + size < 0))
    check(~fits, None)
    return jnp.where(s < 0, s + n, s)


def dynamic_window(a: Any, start: Any, size: int, axis: int) -> Any:
    """`myia.primitives.windows.dynamic_window` of traced values: ``lax.dynamic_slice``."""
    a = _jax().numpy.asarray(a)
    off = _window_offset(a.shape[axis], start, size)
    return _jax().lax.dynamic_slice_in_dim(a, off, size, axis)


def window_add(a: Any, start: Any, v: Any, axis: int) -> Any:
    """`myia.primitives.windows.window_add` of traced values: a dynamic update of a slice."""
    jnp, lax = _jax().numpy, _jax().lax
    a = jnp.asarray(a)
    size = jnp.shape(v)[axis]
    off = _window_offset(a.shape[axis], start, size)
    part = lax.dynamic_slice_in_dim(a, off, size, axis) + jnp.asarray(v, a.dtype)
    return lax.dynamic_update_slice_in_dim(a, part, off, axis)


def _call(fn: Any) -> Any:
    def lower(args: list[str], node: Any, ctx: Any) -> str:
        name = ctx.global_value(fn, f"jax_{fn.__name__}")
        return f"{name}({', '.join(args)})"

    return lower


def python_mod(a: Any, b: Any) -> Any:
    """``a % b`` of floats as NumPy and Python compute it: a zero result has `b`'s sign.

    (``jax.numpy.remainder`` gives it `a`'s: ``-4.0 % 2.0`` would be ``-0.0``.)
    """
    jnp = _jax().numpy
    r = jnp.remainder(a, b)
    return jnp.where(r == 0, jnp.copysign(jnp.zeros_like(r), b).astype(r.dtype), r)


def python_floordiv(a: Any, b: Any) -> Any:
    """``a // b`` of floats as NumPy and Python compute it: a zero result has ``a / b``'s sign.

    (``jax.numpy.floor_divide`` gives ``-0.0 // 2.0`` as ``0.0``.)
    """
    jnp = _jax().numpy
    q = jnp.floor_divide(a, b)
    zero = jnp.copysign(jnp.zeros_like(q), a) * jnp.copysign(jnp.ones_like(q), b)
    return jnp.where(q == 0, zero.astype(q.dtype), q)


def _of_floats(fn: Any) -> Any:
    """Lower to `fn` where the result holds floats (ints: JAX's lowering is NumPy's)."""
    call = _call(fn)

    def lower(args: list[str], node: Any, ctx: Any) -> str | None:
        a = node.abstract
        if not isinstance(a, (AbstractArray, AbstractScalar)):
            return None
        return call(args, node, ctx) if np.dtype(a.dtype).kind == "f" else None

    return lower


def unbroadcast_array(d: Any, x: Any) -> Any:
    """`myia.primitives.grad.unbroadcast` of traced float arrays: `d` summed to `x`'s shape.

    (Shapes are known while JAX traces, unknown dimensions included.)
    """
    jnp = _jax().numpy
    xs, ds = jnp.shape(x), jnp.shape(d)
    if ds != xs:
        lead = len(ds) - len(xs)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, n in enumerate(xs) if n == 1 and ds[i + lead] != 1
        )
        d = jnp.reshape(jnp.sum(d, axis=axes), xs)
    return jnp.asarray(d, x.dtype)


def _unbroadcast(args: list[str], node: Any, ctx: Any) -> str | None:
    """The sensitivity of a float scalar (Python's or NumPy's), in the scalar's dtype.

    From an array's, its sum; from a scalar's, that value. A float array's whose shapes the
    NumPy lowering does not sum at compile time (a 0-d array's, or unknown dimensions) is
    `unbroadcast_array`'s. (The implementation would return a traced array as it is.)
    """
    d, x = node.inputs[1].abstract, node.inputs[2].abstract
    if isinstance(d, AbstractArray) and isinstance(x, AbstractArray) and x.dtype[0] == "f":
        if not x.shape or None in d.shape + x.shape:
            name = ctx.global_value(unbroadcast_array, "jax_unbroadcast_array")
            return f"{name}({args[0]}, {args[1]})"
        return None
    if not (isinstance(d, (AbstractArray, AbstractScalar)) and isinstance(x, AbstractScalar)):
        return None
    if x.dtype[0] != "f" or d.dtype[0] != "f":
        return None
    expr = f"np.sum({args[0]})" if isinstance(d, AbstractArray) else args[0]
    return expr if d.dtype == x.dtype else f"np.asarray({expr}, {x.dtype!r})"


def number_as(x: Any, dtype: str) -> Any:
    """A Python number (traced) as NumPy's scalar of `dtype` (`numpy_scalar`'s ``astype``)."""
    return _jax().numpy.asarray(x, dtype)


def _truncated(x: Any, bits: int) -> Any:
    """`x` (floats) truncated to a signed integer of `bits` bits as the host's NumPy does.

    x86's conversion: the integer towards zero in range; the most negative one for a value
    out of range, an infinity or NaN (XLA saturates them, and converts NaN to 0).
    """
    jnp = _jax().numpy
    lim = 2.0 ** (bits - 1)
    ok = (x >= -lim) & (x < lim)
    return jnp.where(ok, jnp.where(ok, x, 0).astype(f"int{bits}"), np.iinfo(f"int{bits}").min)


def _host_wraps() -> bool:
    """Whether this host's NumPy casts NaN to int32's most negative value (x86's)."""
    with np.errstate(invalid="ignore"):
        return int(np.array([np.nan, -3.5]).astype(np.int32)[0]) == -(2**31)


def float_to_int(x: Any, dtype: str) -> Any:
    """Floats `x` cast to the integer `dtype` as NumPy casts them (``x.astype(np.uint8)``).

    Out of range (values NumPy calls undefined, with a warning), its values are the host's:
    narrow integers wrap around the int32 conversion (``-3.5`` is 253 as uint8, ``300.5``
    44), int64 and uint32 the int64 one; uint64 past 2**63 is converted from ``x - 2**63``.
    """
    jnp = _jax().numpy
    x = jnp.asarray(x)
    dt = np.dtype(dtype)
    if not _host_wraps():
        return x.astype(dt)  # (a host whose NumPy saturates, as XLA does)
    if dt.itemsize < 4 or dt == np.int32:
        return _truncated(x, 32).astype(dt)
    if dt != np.uint64:
        return _truncated(x, 64).astype(dt)
    high = (_truncated(x - 2.0**63, 64) ^ np.int64(-(2**63))).astype(dt)
    return jnp.where(x >= 2.0**63, high, _truncated(x, 64).astype(dt))


def _astype(args: list[str], node: Any, ctx: Any) -> str | None:
    """``astype`` of a number or 0-d array: NumPy's functions make them NumPy scalars.

    Floats cast to integers: `float_to_int` (NumPy's values where XLA's differ). (Arrays of
    some dimensions have the NumPy lowering, the method.)
    """
    a, out = node.inputs[1].abstract, node.abstract
    if not isinstance(out, (AbstractScalar, AbstractArray)):
        return None
    if (
        isinstance(a, (AbstractScalar, AbstractArray))
        and a.dtype[0] == "f"
        and np.dtype(out.dtype).kind in "iu"
    ):
        return f"{ctx.global_value(float_to_int, 'jax_float_to_int')}({args[0]}, {out.dtype!r})"
    if isinstance(a, AbstractScalar) and a.weak and isinstance(out, AbstractScalar):
        return f"{ctx.global_value(number_as, 'jax_number_as')}({args[0]}, {out.dtype!r})"
    if isinstance(a, AbstractArray) and a.shape:
        return None
    return f"np.asarray({args[0]}).astype({np.dtype(out.dtype).name!r})"


def _convert(args: list[str], node: Any, ctx: Any) -> str | None:
    """``convert(x, typ)`` of a number or an array (0-d for a number): `typ`'s dtype.

    Where branches return a Python float and a NumPy float64, the Python float is converted
    (NumPy's lowering calls the implementation, which dispatches on Python types).
    """
    a, out = node.inputs[1].abstract, node.abstract
    if a == out:
        return args[0]
    kinds = (AbstractScalar, AbstractArray)
    if not (isinstance(a, kinds) and isinstance(out, kinds)):
        return None
    if type(a) is not type(out) and (a if isinstance(a, AbstractArray) else out).shape != ():
        return None  # (only a 0-d array and a scalar are one value under JAX)
    return f"np.asarray({args[0]}, {np.dtype(out.dtype).name!r})"


def _numpy(template: str) -> Any:
    """The lowering of a primitive that is a NumPy function (``np`` is ``jax.numpy``).

    The primitive's own code makes its 0-d results NumPy or Python scalars, which a tracer
    cannot be; under JAX a scalar is a 0-d array, and its kind is the result's type.
    `template` is formatted with the argument expressions, and ``dtype`` with the name of
    the result's dtype.
    """

    def lower(args: list[str], node: Any, ctx: Any) -> str | None:
        out = node.abstract
        if not isinstance(out, (AbstractScalar, AbstractArray)):
            return None
        return template.format(*args, dtype=np.dtype(out.dtype).name)

    return lower


def _split(args: list[str], node: Any, ctx: Any) -> str | None:
    """``np.split`` (``np.array_split`` where not `even`) of constant sections, as a tuple."""
    if not (node.inputs[2].is_constant and node.inputs[4].is_constant):
        return None
    fn = "split" if node.inputs[4].value else "array_split"
    return f"tuple(np.{fn}({args[0]}, {args[1]}, axis={args[2]}))"


def _einsum(args: list[str], node: Any, ctx: Any) -> str | None:
    """``np.einsum`` of constant subscripts, with a 0-d result too (NumPy's lowering: not)."""
    if not node.inputs[1].is_constant:
        return None
    return f"np.einsum({args[0]}, *{args[1]})"


def unstack(d: Any, arrays: Any, axis: int) -> Any:
    """`myia.primitives.array_grad.unstack` of traced values (the arrays' shapes are one)."""
    jnp = _jax().numpy
    out = []
    for i, a in enumerate(arrays):
        a = jnp.asarray(a)
        if jnp.issubdtype(a.dtype, jnp.inexact):
            out.append(jnp.take(d, i, axis=axis).astype(a.dtype))
        else:
            out.append(jnp.zeros_like(a))  # integers have no sensitivity
    return tuple(out)


def _add_along(d: Any, index: np.ndarray, n: int, axis: int) -> Any:
    """`myia.primitives.tiling._add_along` of traced `d` (a static `index`)."""
    jnp = _jax().numpy
    moved = jnp.moveaxis(d, axis, 0)
    out = jnp.zeros((n, *moved.shape[1:]), d.dtype).at[index].add(moved)
    return jnp.moveaxis(out, 0, axis)


def unrepeat(d: Any, a: Any, repeats: Any, axis: Any = None) -> Any:
    """`myia.primitives.tiling.unrepeat` of traced values."""
    return unrepeat_of(_jax().numpy.asarray(d), a, repeats, axis, _add_along)


def unpad(d: Any, a: Any, pad_width: Any, mode: str = "constant") -> Any:
    """`myia.primitives.tiling.unpad` of traced values."""
    return unpad_of(_jax().numpy.asarray(d), a, pad_width, mode, _add_along)


def _reshape(args: list[str], node: Any, ctx: Any) -> str | None:
    """``reshape`` and ``expand_dims`` to the result's known shape (0-d arrays included)."""
    out = node.abstract
    if not isinstance(out, AbstractArray) or None in out.shape:
        return None
    return f"np.reshape({args[0]}, {out.shape!r})"


def untake_along_axis(d: Any, a: Any, indices: Any, axis: int) -> Any:
    """`myia.primitives.array_extra.untake_along_axis` of traced values."""
    jnp = _jax().numpy
    idx = jnp.asarray(indices)
    full = [jnp.broadcast_to(g, idx.shape) for g in jnp.ix_(*(jnp.arange(n) for n in idx.shape))]
    full[axis % len(np.shape(a))] = idx
    return jnp.zeros(np.shape(a), jnp.result_type(d)).at[tuple(full)].add(d)


def exclusive_cumprod_grad(a: Any, axis: Any, reverse: bool, dout: Any) -> Any:
    """`myia.primitives.array_grad.exclusive_cumprod_grad` of traced values.

    Its recurrence from the end is a reverse ``lax.scan``.
    """
    jax = _jax()
    jnp = jax.numpy
    x, perm, tshape = _front(a, axis, jnp)
    g, _, _ = _front(jnp.broadcast_to(dout, np.shape(a)), axis, jnp)
    if reverse:
        x, g = x[::-1], g[::-1]
    dtype = jnp.result_type(x, g)
    out = jnp.zeros(x.shape, dtype)
    if x.shape[0] > 1:
        before = jnp.concatenate([jnp.ones_like(x[:1]), jnp.cumprod(x[:-2], axis=0)])

        def step(acc: Any, gx: Any) -> Any:
            acc = gx[0] + gx[1] * acc
            return acc, acc

        zero = jnp.zeros(x.shape[1:], dtype)
        _, accs = jax.lax.scan(step, zero, (g[1:], x[1:]), reverse=True)
        out = out.at[:-1].set(before * accs)
    if reverse:
        out = out[::-1]
    return _back(out, perm, tshape, jnp).astype(jnp.result_type(a, dout))


def repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    """``np.repeat`` of traced `a` (``jax.numpy.repeat`` takes no tuple of repeats)."""
    jnp = _jax().numpy
    a = jnp.asarray(a)
    if axis is None:
        return jnp.take(a.reshape(-1), _repeat_map(a.size, repeats))
    return jnp.take(a, _repeat_map(a.shape[axis], repeats), axis=axis)


def _searchsorted(args: list[str], node: Any, ctx: Any) -> str | None:
    """``np.searchsorted`` with NumPy's int64 positions (``jax.numpy``'s are int32)."""
    if not node.inputs[3].is_constant:
        return None
    side = "right" if node.inputs[3].value else "left"
    return f"np.searchsorted({args[0]}, {args[1]}, {side!r}).astype('int64')"


def _python_extremum(pick: str) -> Any:
    """``max``/``min`` of two Python numbers: the first unless the second is `pick` than it.

    (Python's own rule, NaNs included: ``max(nan, 1.0)`` is nan, ``max(1.0, nan)`` 1.0;
    ``np.maximum`` would give nan for both. NumPy values have NumPy's lowering.)
    """

    def lower(args: list[str], node: Any, ctx: Any) -> str | None:
        a, b = (x.abstract for x in node.inputs[1:3])
        if not all(isinstance(x, AbstractScalar) and x.weak for x in (a, b)):
            return None
        if a.dtype != b.dtype:
            return None  # max(1, 2.5) is an int or a float, by value
        return f"np.where({args[1]} {pick} {args[0]}, {args[1]}, {args[0]})"

    return lower


def log2(x: Any) -> Any:
    """``log2(x)``, exact at the powers of 2 as NumPy's and ``math``'s (XLA's is not).

    ``math.log2(8.0)`` is 3.0, where XLA computes 2.9999999999999996 (and ``int()`` of it 2).
    """
    jnp = _jax().numpy
    r = jnp.log2(x)
    m, e = jnp.frexp(jnp.asarray(x, r.dtype))
    return jnp.where(m == 0.5, (e - 1).astype(r.dtype), r)


def _to_float(args: list[str], node: Any, ctx: Any) -> str | None:
    """``float(x)`` of a number or 0-d array: the same number as a (traced) float64."""
    a = node.inputs[1].abstract
    if isinstance(a, AbstractScalar) or (isinstance(a, AbstractArray) and not a.shape):
        return f"np.asarray({args[0]}, 'float64')"
    return None


def number_kind(a: Any) -> str | None:
    """The dtype kind (``"f"``, ``"i"``...) of a number or 0-d array of type `a`, else None."""
    number = isinstance(a, AbstractScalar) or (isinstance(a, AbstractArray) and not a.shape)
    return np.dtype(a.dtype).kind if number and a.dtype != "str" else None


def _to_int(args: list[str], node: Any, ctx: Any) -> str | None:
    """``int(x)`` of a number or 0-d array: truncated towards zero, as a (traced) int64.

    Of a float, flagged where Python's int differs (`jax_checks.check_to_int`); of an int
    or a bool, exact (`jax_backend` leaves uint64, which may exceed int64, on the host).
    """
    kind = number_kind(node.inputs[1].abstract)
    if kind is None or kind not in "biuf":
        return None
    if kind == "f":
        return f"np.trunc({args[0]}).astype('int64')"
    return f"np.asarray({args[0]}, 'int64')"


def _mean(args: list[str], node: Any, ctx: Any) -> str | None:
    """``np.mean`` of integers or booleans, computed in NumPy's float64 (JAX's is float32)."""
    a, out = node.inputs[1].abstract, node.abstract
    if not (isinstance(a, AbstractArray) and isinstance(out, (AbstractArray, AbstractScalar))):
        return None
    if np.dtype(a.dtype).kind == "f" or not all(i.is_constant for i in node.inputs[2:4]):
        return None
    axis, keepdims = node.inputs[2].value, node.inputs[3].value
    return f"np.mean({args[0]}, axis={axis!r}, keepdims={keepdims!r}, dtype={out.dtype!r})"


def python_errors(result: Any, op: Any, x: Any, y: Any) -> Any:
    """`P.python_errors`: `result`, flagged where an example's value is not finite.

    Flagged where an example's result or operand is not finite, or its integer divisor is 0:
    the host computes them again, and raises Python's error where Python does.
    """
    from .jax_runtime import check

    jnp = _jax().numpy
    bad = jnp.zeros(jnp.shape(result), bool)
    for v in (result, x) if y is None else (result, x, y):
        v = jnp.asarray(v)
        if jnp.issubdtype(v.dtype, jnp.floating):
            bad = bad | ~jnp.isfinite(v)
    if y is not None and not jnp.issubdtype(jnp.asarray(y).dtype, jnp.floating):
        bad = bad | (jnp.asarray(y) == 0)
    return check(jnp.any(bad), result)


def exclusive_cumprod(a: Any, axis: Any, reverse: bool) -> Any:
    """`myia.primitives.array_grad.exclusive_cumprod` of traced values."""
    jnp = _jax().numpy
    x, perm, tshape = _front(a, axis, jnp)
    if reverse:
        x = x[::-1]
    out = jnp.concatenate([jnp.ones_like(x[:1]), jnp.cumprod(x[:-1], axis=0)])
    if reverse:
        out = out[::-1]
    return _back(out, perm, tshape, jnp)


#: How the generated code computes each primitive under JAX (instead of its NumPy lowering):
#: ``(argument expressions, node, generator) -> expression``, or None for the usual code.
JAX_LOWER: dict[Any, Any] = {
    P.cholesky: _call(cholesky),
    P.solve: _call(solve),
    P.matmul: _matmul,
    P.erf: _call(_special("erf")),
    P.log2: _call(log2),
    P.erfc: _call(_special("erfc")),
    P.gammaln: _call(_special("gammaln")),
    P.digamma: _call(_special("digamma")),
    P.polygamma: _call(_special("polygamma")),
    P.triangular_solve: _triangular_solve,
    P.triangular_matmul: _call(triangular_matmul),
    P.lower_half: _call(lower_half),
    P.undiagonal: _call(undiagonal),
    P.unbroadcast: _unbroadcast,
    P.array_index_add: _call(index_add),
    P.array_index_add_inplace: _call(index_add),
    P.dynamic_window: _call(dynamic_window),
    P.window_add: _call(window_add),
    P.window_add_inplace: _call(window_add),
    P.owned_copy: lambda args, node, ctx: args[0],  # XLA's arrays are never written
    P.astype: _astype,
    P.convert: _convert,
    P.to_float: _to_float,
    P.to_int: _to_int,
    P.reshape: _reshape,
    P.expand_dims: _reshape,
    # NumPy's functions, whose primitives make 0-d results NumPy scalars.
    P.where: _numpy("np.where({0}, {1}, {2})"),
    P.clip: _numpy("np.clip({0}, {1}, {2})"),
    P.dot: _numpy("np.dot({0}, {1})"),
    P.stack: _numpy("np.stack({0}, axis={1})"),
    P.stack_list: _numpy("np.stack({0}, axis={1})"),
    P.concatenate_list: _numpy("np.concatenate({0}, axis={1})"),
    P.zeros_like: _numpy("np.zeros_like({0}, dtype={dtype!r})"),
    P.ones_like: _numpy("np.ones_like({0}, dtype={dtype!r})"),
    P.full_like: _numpy("np.full_like({0}, {1}, dtype={dtype!r})"),
    P.floor: _numpy("np.floor({0})"),
    P.log_ieee: _numpy("np.log({0})"),
    P.ceil: _numpy("np.ceil({0})"),
    # NumPy's sign of -0.0 is 0.0 (XLA's -0.0).
    P.sign: _numpy("np.where({0} == 0, np.zeros_like(np.sign({0})), np.sign({0}))"),
    P.atan2: _numpy("np.arctan2({0}, {1})"),
    P.take: _numpy("np.take({0}, {1}, axis={2})"),
    P.take_along_axis: _numpy("np.take_along_axis({0}, {1}, axis={2})"),
    P.einsum: _einsum,
    P.split: _split,
    P.searchsorted: _searchsorted,
    P.reduce_mean: _mean,
    P.maximum: _python_extremum(">"),
    P.minimum: _python_extremum("<"),
    # Twins written with jax.numpy.
    P.repeat: _call(repeat),
    P.exclusive_cumprod: _call(exclusive_cumprod),
    P.exclusive_cumprod_grad: _call(exclusive_cumprod_grad),
    P.unstack: _call(unstack),
    P.unrepeat: _call(unrepeat),
    P.unpad: _call(unpad),
    P.untake_along_axis: _call(untake_along_axis),
    P.mod: _of_floats(python_mod),
    P.floordiv: _of_floats(python_floordiv),
    # Python's errors, which XLA cannot raise: flagged (the host raises them).
    P.python_errors: _call(python_errors),
    P.raise_: _call(raise_flagged),
    P.assert_: _call(assert_flagged),
    # The messages of errors (`jax_jittable._messages`): the host makes them when it raises.
    P.format_: lambda args, node, ctx: "''",
    P.str_concat: lambda args, node, ctx: "''",
}


def check_finite(result: Any) -> Any:
    """`result` of a factorization or a solve, flagged where it is not all finite.

    NumPy raises ``LinAlgError`` where XLA returns NaNs or infinities: the host runs the call
    again, and raises NumPy's error at the user's line, or returns the same values where
    NumPy does (an input that was not finite).
    """
    from .jax_runtime import check

    jnp = _jax().numpy
    return check(~jnp.all(jnp.isfinite(result)), result)


def check_factor(factor: Any) -> Any:
    """`check_finite` of a Cholesky factor, which reads its diagonal only.

    A non-finite element of the factor makes the diagonal element of its row non-finite
    (``L_ii = sqrt(a_ii - sum_k L_ik^2)``), and XLA's factor of a matrix that is not
    positive definite is NaNs: checking n elements is checking the n^2.
    """
    from .jax_runtime import check

    jnp = _jax().numpy
    diagonal = jnp.diagonal(factor, axis1=-2, axis2=-1)
    return check(~jnp.all(jnp.isfinite(diagonal)), factor)


#: The primitives that raise on the host where XLA returns infinities or NaNs (NumPy's
#: ``LinAlgError`` of a matrix that is not positive definite, or singular), and how the
#: generated code checks their results. BLAS's triangular solve (SciPy's) raises nothing,
#: as XLA's: without SciPy, the host's is ``np.linalg.solve``, which does.
LINALG_ERRORS: dict[str, Any] = {
    "cholesky": check_factor,
    "inv": check_finite,
    "solve": check_finite,
    **({} if BLAS_SOLVES else {"triangular_solve": check_finite}),
}

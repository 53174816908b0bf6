"""``gp_nll``: a Gaussian process's negative log-likelihood and its gradient, float64.

The function of ``examples/gp_nll.py``: an RBF kernel on n = 200 points in 5 dimensions (one
lengthscale per dimension) plus noise, ``np.linalg.cholesky``, ``solve_triangular`` and the
log-determinant from the factor's diagonal. "primal" is the negative log-likelihood, "grad"
its gradient with respect to the log-lengthscales and the log-noise. The hand-written
gradient uses the classic formula ``dNLL/dK = (K^-1 - alpha alpha^T) / 2``.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.harness import Impl, Options, Problem, directional_check, myia_impl
from benchmarks.peers import flat_numpy, jax_cache_size, jax_module, jax_ready, torch_module

NAME = "gp_nll"
LOG_2PI = math.log(2.0 * math.pi)

try:
    from scipy.linalg import cho_solve, solve_triangular
except ImportError:  # SciPy is optional: general solves give the same results

    def solve_triangular(a, b, lower=False):
        """``scipy.linalg.solve_triangular`` for the lower triangular `a` (without SciPy)."""
        return np.linalg.solve(a, b)

    def cho_solve(c_and_lower, b):
        c, _ = c_and_lower
        return np.linalg.solve(c @ c.T, b)


def problem(quick: bool) -> Problem:
    n, d = (50, 5) if quick else (200, 5)
    rng = np.random.default_rng(0)
    inputs = []
    for _ in range(2):
        x = rng.uniform(-2.0, 2.0, (n, d))
        y = np.sin(2.0 * x[:, 0]) + 0.5 * x[:, 1] ** 2 - x[:, 2] + 0.1 * rng.standard_normal(n)
        log_ls = rng.uniform(-0.5, 0.5, d)
        inputs.append((log_ls, float(math.log(0.3)), x, y - y.mean()))
    return Problem(
        NAME,
        f"n = {n} points, {d} dimensions, RBF kernel (a lengthscale per dimension) and noise; "
        "float64; two data sets",
        inputs,
        rtol=1e-7,
        check_count=2,
    )


# The function Myia compiles (and plain NumPy runs) ----------------------------------------------


def rbf_kernel(x, log_ls):
    z = x / np.exp(log_ls)
    sq = np.sum(z * z, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (z @ z.T)
    return np.exp(-0.5 * np.maximum(d2, 0.0))


def gp_nll(log_ls, log_noise, x, y):
    n = x.shape[0]
    k = rbf_kernel(x, log_ls) + (np.exp(2.0 * log_noise) + 1e-6) * np.eye(n)
    lower = np.linalg.cholesky(k)
    alpha = solve_triangular(lower, y, lower=True)
    nll = 0.5 * np.sum(alpha * alpha) + np.sum(np.log(np.diag(lower))) + 0.5 * n * LOG_2PI
    return nll / n


# By hand --------------------------------------------------------------------------------------


def hand_nll(log_ls, log_noise, x, y):
    return float(gp_nll(log_ls, log_noise, x, y))


def hand_grad(log_ls, log_noise, x, y):
    """(d/dlog_ls, d/dlog_noise) from ``dNLL/dK = (K^-1 - a a^T) / 2`` with ``a = K^-1 y``."""
    n = x.shape[0]
    kr = rbf_kernel(x, log_ls)
    noise = math.exp(2.0 * log_noise)
    lower = np.linalg.cholesky(kr + (noise + 1e-6) * np.eye(n))
    kinv = cho_solve((lower, True), np.eye(n))
    a = kinv @ y
    dk = 0.5 * (kinv - np.outer(a, a)) / n
    z = x / np.exp(log_ls)
    # dK_ij/dlog_ls_d = K_ij (z_id - z_jd)^2
    w = dk * kr
    rows = np.sum(w, axis=1)
    d_ls = 2.0 * (rows @ (z * z)) - 2.0 * np.sum(z * (w @ z), axis=0)
    d_noise = 2.0 * noise * np.trace(dk)
    return d_ls, d_noise


# Builders -------------------------------------------------------------------------------------


def build_myia(p: Problem, opts: Options) -> list[Impl]:
    return myia_impl(p, opts, gp_nll, flat_numpy, wrt=("log_ls", "log_noise"))


def build_hand(p: Problem, opts: Options) -> list[Impl]:
    note = "NumPy and SciPy; the gradient by the classic formula (an explicit inverse)"
    return [Impl("hand", "hand", hand_nll, hand_grad, p.inputs, float, flat_numpy, note=note)]


def build_jax(p: Problem, opts: Options) -> list[Impl]:
    jax = jax_module()
    jnp = jax.numpy
    jsl = jax.scipy.linalg

    def loss(log_ls, log_noise, x, y):
        n = x.shape[0]
        z = x / jnp.exp(log_ls)
        sq = jnp.sum(z * z, axis=1)
        d2 = sq[:, None] + sq[None, :] - 2.0 * (z @ z.T)
        k = jnp.exp(-0.5 * jnp.maximum(d2, 0.0)) + (jnp.exp(2.0 * log_noise) + 1e-6) * jnp.eye(n)
        lower = jnp.linalg.cholesky(k)
        alpha = jsl.solve_triangular(lower, y, lower=True)
        nll = 0.5 * jnp.sum(alpha * alpha) + jnp.sum(jnp.log(jnp.diag(lower)))
        return (nll + 0.5 * n * LOG_2PI) / n

    grad_jit = jax.jit(jax.grad(loss, (0, 1)))
    inputs = [
        (jnp.asarray(ls), jnp.asarray(ln), jnp.asarray(x), jnp.asarray(y))
        for ls, ln, x, y in p.inputs
    ]
    return [
        Impl(
            "jax (jit)",
            "jax",
            jax_ready(jax.jit(loss)),
            jax_ready(grad_jit),
            inputs,
            float,
            flat_numpy,
            compilations=jax_cache_size(grad_jit),
            note="`jnp.linalg.cholesky`, `jax.scipy.linalg.solve_triangular`, under `jit`",
        )
    ]


def build_torch(p: Problem, opts: Options) -> list[Impl]:
    torch = torch_module()

    def loss(log_ls, log_noise, x, y):
        n = x.shape[0]
        z = x / torch.exp(log_ls)
        sq = (z * z).sum(dim=1)
        d2 = sq[:, None] + sq[None, :] - 2.0 * (z @ z.T)
        eye = torch.eye(n, dtype=x.dtype)
        k = torch.exp(-0.5 * torch.clamp(d2, min=0.0)) + (torch.exp(2.0 * log_noise) + 1e-6) * eye
        lower = torch.linalg.cholesky(k)
        alpha = torch.linalg.solve_triangular(lower, y[:, None], upper=False)[:, 0]
        nll = 0.5 * (alpha * alpha).sum() + torch.log(torch.diagonal(lower)).sum()
        return (nll + 0.5 * n * LOG_2PI) / n

    def primal(log_ls, log_noise, x, y):
        with torch.no_grad():
            return loss(log_ls, log_noise, x, y)

    def grad(log_ls, log_noise, x, y):
        return torch.autograd.grad(loss(log_ls, log_noise, x, y), (log_ls, log_noise))

    inputs = [
        (
            torch.tensor(ls, requires_grad=True),
            torch.tensor(float(ln), dtype=torch.float64, requires_grad=True),
            torch.from_numpy(x),
            torch.from_numpy(y),
        )
        for ls, ln, x, y in p.inputs
    ]
    note = "`torch.linalg.cholesky`, `torch.linalg.solve_triangular`; primal under `no_grad`"
    return [Impl("torch", "torch", primal, grad, inputs, float, flat_numpy, note=note)]


def build_autograd(p: Problem, opts: Options) -> list[Impl]:
    import autograd
    import autograd.numpy as anp
    from autograd.scipy.linalg import solve_triangular as a_solve_triangular

    def loss(log_ls, log_noise, x, y):
        n = x.shape[0]
        z = x / anp.exp(log_ls)
        sq = anp.sum(z * z, axis=1)
        d2 = sq[:, None] + sq[None, :] - 2.0 * anp.dot(z, z.T)
        k = anp.exp(-0.5 * anp.maximum(d2, 0.0)) + (anp.exp(2.0 * log_noise) + 1e-6) * anp.eye(n)
        lower = anp.linalg.cholesky(k)
        alpha = a_solve_triangular(lower, y, lower=True)
        nll = 0.5 * anp.sum(alpha * alpha) + anp.sum(anp.log(anp.diag(lower)))
        return (nll + 0.5 * n * LOG_2PI) / n

    grad = autograd.grad(loss, (0, 1))
    note = "`autograd.numpy.linalg.cholesky`, `autograd.scipy.linalg.solve_triangular`"
    return [Impl("autograd", "autograd", loss, grad, p.inputs, float, flat_numpy, note=note)]


BUILDERS = {
    "myia": build_myia,
    "torch": build_torch,
    "jax": build_jax,
    "autograd": build_autograd,
    "hand": build_hand,
}


def reference_check(p: Problem) -> float:
    """Check the hand-written gradient against central differences (the first input)."""
    log_ls, log_noise, x, y = p.inputs[0]

    def f(point):
        return hand_nll(point[0], float(point[1]), x, y)

    d_ls, d_noise = hand_grad(log_ls, log_noise, x, y)
    return directional_check(f, [d_ls, np.asarray(d_noise)], [log_ls, np.asarray(log_noise)])

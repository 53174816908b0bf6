"""A Gaussian process: its negative log marginal likelihood and gradient, written with NumPy.

The model: ``y ~ N(0, K + s^2 I)`` with the RBF kernel ``K_ij = exp(-|x_i - x_j|^2_l / 2)``,
one lengthscale per input dimension (``l = exp(log_ls)``) and a noise level
``s = exp(log_noise)``. The negative log-likelihood is computed as researchers write it: a
Cholesky factor with ``np.linalg.cholesky``, a triangular solve with
``scipy.linalg.solve_triangular`` (``np.linalg.solve`` where SciPy is not installed), and the
log-determinant from the diagonal of the factor. Myia differentiates it with the analytic
rules of the Cholesky factorization and of the triangular solve (never through the
factorization's loops), and the hyperparameters are fitted by gradient descent.

Run: ``python examples/gp_nll.py``
"""

from __future__ import annotations

import math
import time

import numpy as np

from myia import myia, value_and_grad

try:
    from scipy.linalg import solve_triangular
except ImportError:  # SciPy is optional: a general solve gives the same result

    def solve_triangular(a, b, lower=False):
        """``scipy.linalg.solve_triangular`` for the lower triangular `a` (without SciPy)."""
        return np.linalg.solve(a, b)


LOG_2PI = math.log(2.0 * math.pi)


def rbf_kernel(x, log_ls):
    """The RBF kernel matrix of the rows of `x`, with lengthscales ``exp(log_ls)``."""
    z = x / np.exp(log_ls)
    sq = np.sum(z * z, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (z @ z.T)
    return np.exp(-0.5 * np.maximum(d2, 0.0))


def gp_nll(log_ls, log_noise, x, y):
    """The negative log marginal likelihood of targets `y` at inputs `x`, per point."""
    n = x.shape[0]
    k = rbf_kernel(x, log_ls) + (np.exp(2.0 * log_noise) + 1e-6) * np.eye(n)
    lower = np.linalg.cholesky(k)
    alpha = solve_triangular(lower, y, lower=True)
    nll = 0.5 * np.sum(alpha * alpha) + np.sum(np.log(np.diag(lower))) + 0.5 * n * LOG_2PI
    return nll / n


@myia
def fit_step(log_ls, log_noise, x, y, lr):
    """One step of gradient descent on the hyperparameters: (loss, new hyperparameters)."""
    loss, (d_ls, d_noise) = value_and_grad(gp_nll, "log_ls", "log_noise")(log_ls, log_noise, x, y)
    return loss, log_ls - lr * d_ls, log_noise - lr * d_noise


def make_data(n=200, d=5, seed=0):
    """Targets drawn from a smooth function of `d` inputs (two of them irrelevant), plus noise."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, (n, d))
    y = np.sin(2.0 * x[:, 0]) + 0.5 * x[:, 1] ** 2 - x[:, 2] + 0.1 * rng.standard_normal(n)
    return x, y - y.mean()


def main(n=200, d=5, steps=60, lr=0.5):
    x, y = make_data(n, d)
    log_ls, log_noise = np.zeros(d), math.log(0.5)
    losses = []
    start = time.perf_counter()
    for i in range(steps):
        loss, log_ls, log_noise = fit_step(log_ls, log_noise, x, y, lr)
        losses.append(float(loss))
        if i % 20 == 0:
            print(f"step {i:3d}: nll per point {loss:.4f}, noise {math.exp(log_noise):.3f}")
    seconds = (time.perf_counter() - start) / steps
    print(f"final nll per point {losses[-1]:.4f}; lengthscales {np.round(np.exp(log_ls), 2)}")
    print(f"noise {math.exp(log_noise):.3f}; time per step {seconds * 1e3:.2f} ms (n = {n})")
    return {"losses": losses, "log_ls": log_ls, "log_noise": log_noise}


if __name__ == "__main__":
    main()

"""Second-order derivatives: Newton's method with ``grad`` of ``grad``, Hessian-vector products.

1. On a scalar function, Newton's method for a minimum, ``x -= f'(x) / f''(x)``, with both
   derivatives computed by Myia inside one compiled loop.
2. On the Rosenbrock function of n variables, the Hessian-vector product
   ``H(x) v = grad(x -> <grad f(x), v>)(x)`` (reverse over reverse), checked against finite
   differences of the gradient, then Newton's method where each Newton step ``H p = -g`` is
   solved by conjugate gradients using only Hessian-vector products: the Hessian is never
   built. The whole solver, loops and second derivatives, is one compiled Myia function.

Run: ``python examples/second_order.py``
"""

from __future__ import annotations

import time

import numpy as np

from myia import grad, myia

# 1. Newton's method on a scalar function -------------------------------------------------------


def f(x):
    return x**4 - 3.0 * x**2 + x


# Inside Myia code, grad composes with itself: grad(grad(f)) is the second derivative.
@myia
def newton_minimize(x, iterations):
    for _ in range(iterations):
        x = x - grad(f)(x) / grad(grad(f))(x)
    return x


# 2. Newton-CG with Hessian-vector products ---------------------------------------------------


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def hvp(x, v):
    """The product of the Hessian of `rosenbrock` at `x` with `v`."""
    return grad(lambda y: np.sum(grad(rosenbrock)(y) * v))(x)


@myia
def newton_cg_step(x, cg_iterations):
    """One Newton step: solve ``H p = -g`` by conjugate gradients, return ``x + p`` and |g|."""
    g = grad(rosenbrock)(x)
    p = np.zeros_like(x)
    r = -g
    d = r
    rr = np.sum(r * r)
    k = 0
    while k < cg_iterations and rr > 1e-30:
        hd = hvp(x, d)
        alpha = rr / np.sum(d * hd)
        p = p + alpha * d
        r = r - alpha * hd
        rr_next = np.sum(r * r)
        d = r + (rr_next / rr) * d
        rr = rr_next
        k += 1
    return x + p, np.sqrt(np.sum(g * g))


def main(n: int = 2, newton_iterations: int = 12, seed: int = 0):
    """Run both parts; print and return the results."""
    start = time.perf_counter()
    x1 = newton_minimize(2.0, 8)
    print("1. Newton's method with grad(grad(f)): f(x) = x^4 - 3 x^2 + x")
    d1, d2 = grad(f)(x1), grad(grad(f))(x1)
    print(f"   from x = 2.0: x = {x1:.12f}, f'(x) = {d1:.2e}, f''(x) = {d2:.4f}")

    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 1.5, size=n)
    v = rng.normal(size=n)
    hv = myia(hvp)(x, v)
    eps = 1e-6
    g = grad(rosenbrock)
    fd = (g(x + eps * v) - g(x - eps * v)) / (2 * eps)
    error = float(np.max(np.abs(hv - fd)) / np.max(np.abs(fd)))
    print(f"2. Rosenbrock function of {n} variables")
    print(f"   Hessian-vector product:  {np.array2string(hv, precision=6)}")
    print(f"   finite differences:      {np.array2string(fd, precision=6)}")
    print(f"   relative error {error:.1e}")

    x = np.full(n, -1.2)
    x[1::2] = 1.0
    print(f"   Newton-CG from {np.array2string(x, precision=2)}:")
    norms = []
    for i in range(newton_iterations):
        x, gnorm = newton_cg_step(x, n)
        norms.append(float(gnorm))
        print(f"   iteration {i}: |gradient| = {gnorm:.3e}")
        if gnorm < 1e-10:
            break
    print(f"   minimum at {np.array2string(x, precision=8)}")
    print(f"({time.perf_counter() - start:.1f} s, compilation included)")
    return {"x1": x1, "hvp_error": error, "x": x, "gradient_norms": norms}


if __name__ == "__main__":
    main()

"""Gradients through a ``while`` loop whose trip count depends on the values: aiming a cannon.

A projectile with quadratic air drag is integrated by an adaptive-step solver (Heun's method
with an embedded Euler error estimate): each step is accepted or rejected by comparing the
error estimate with a tolerance, and the step size grows or shrinks accordingly. The loop runs
until the projectile hits the ground, so how many steps it takes depends on the launch angle,
the speed and the drag, and so does which steps are rejected.

Myia differentiates the distance travelled with respect to the launch angle and the drag
through that loop, branches and all (the gradient is that of the program as written, step-size
control included), checks it against finite differences, and uses it in Newton's method to
find the angle that lands the projectile on a target.

JAX's reverse mode cannot do this as one compiled program: ``jax.lax.while_loop`` supports only
forward-mode differentiation, and a Python ``while`` loop is only differentiable by unrolling
it while tracing, outside ``jit``.

Run: ``python examples/adaptive_ode.py``
"""

from __future__ import annotations

import math
import time

from myia import myia, value_and_grad
from myia.testing import check_grad

GRAVITY = 9.81


def acceleration(vx, vy, drag):
    v = math.sqrt(vx * vx + vy * vy)
    return -drag * v * vx, -GRAVITY - drag * v * vy


def heun_step(x, y, vx, vy, drag, h):
    """One step of Heun's method, and its difference from Euler's (the error estimate)."""
    ax1, ay1 = acceleration(vx, vy, drag)
    ex, ey, evx, evy = x + h * vx, y + h * vy, vx + h * ax1, vy + h * ay1  # Euler
    ax2, ay2 = acceleration(evx, evy, drag)
    nx = x + 0.5 * h * (vx + evx)
    ny = y + 0.5 * h * (vy + evy)
    nvx = vx + 0.5 * h * (ax1 + ax2)
    nvy = vy + 0.5 * h * (ay1 + ay2)
    error = abs(nx - ex) + abs(ny - ey) + abs(nvx - evx) + abs(nvy - evy)
    return nx, ny, nvx, nvy, error


def flight(angle, speed, drag, tol):
    """Where the projectile lands, and the number of accepted and rejected steps."""
    x, y = 0.0, 0.0
    vx, vy = speed * math.cos(angle), speed * math.sin(angle)
    px, py = x, y
    h = 0.01
    accepted, rejected = 0, 0
    while y >= 0.0:
        nx, ny, nvx, nvy, error = heun_step(x, y, vx, vy, drag, h)
        if error <= tol:
            px, py = x, y
            x, y, vx, vy = nx, ny, nvx, nvy
            accepted += 1
        else:
            rejected += 1
        h = h * min(2.0, max(0.2, 0.9 * math.sqrt(tol / (error + 1e-12))))
    # The ground was crossed during the last step: interpolate where.
    return px + (x - px) * py / (py - y), accepted, rejected


def distance(angle, speed, drag, tol):
    d, _, _ = flight(angle, speed, drag, tol)
    return d


simulate = myia(flight)
distance_and_grad = value_and_grad(distance, "angle", "drag")


def aim(target, angle, speed, drag, tol, iterations):
    """Newton's method on the launch angle: ``angle -= (d(angle) - target) / d'(angle)``."""
    for i in range(iterations):
        d, (d_angle, _) = distance_and_grad(angle, speed, drag, tol)
        print(f"  iteration {i}: angle {math.degrees(angle):7.3f} deg lands at {d:8.4f} m")
        if abs(d - target) < 1e-9:
            break
        angle = angle - (d - target) / d_angle
    return angle, d


def main(speed: float = 20.0, drag: float = 0.02, tol: float = 1e-3, target: float = 22.0):
    """Simulate, check the gradient, aim; print and return the results."""
    print(f"launch speed {speed} m/s, drag coefficient {drag} /m, tolerance {tol}")
    for degrees in (15, 35, 55, 75):
        d, accepted, rejected = simulate(math.radians(degrees), speed, drag, tol)
        print(
            f"  angle {degrees:2d} deg: lands at {d:7.3f} m after {accepted} steps "
            f"({rejected} rejected)"
        )

    angle = math.radians(30.0)
    start = time.perf_counter()
    d, (d_angle, d_drag) = distance_and_grad(angle, speed, drag, tol)
    elapsed = time.perf_counter() - start
    eps = 1e-6
    fd_angle = distance(angle + eps, speed, drag, tol) - distance(angle - eps, speed, drag, tol)
    fd_drag = distance(angle, speed, drag + eps, tol) - distance(angle, speed, drag - eps, tol)
    fd_angle, fd_drag = fd_angle / (2 * eps), fd_drag / (2 * eps)
    print(f"at 30 deg: d distance / d angle = {d_angle:.6f} m/rad (finite diff. {fd_angle:.6f})")
    print(f"           d distance / d drag  = {d_drag:.4f} m^2 (finite diff. {fd_drag:.4f})")
    print(f"           (value and gradient in {elapsed:.2f} s, compilation included)")
    check_grad(distance, angle, speed, drag, tol, wrt=("angle", "drag"))
    print("check_grad: the gradient matches central finite differences")

    print(f"aiming at {target} m with Newton's method, from 30 deg:")
    angle, landed = aim(target, math.radians(30.0), speed, drag, tol, 8)
    print(f"angle {math.degrees(angle):.4f} deg lands at {landed:.6f} m")
    return {
        "grad": (d_angle, d_drag),
        "finite_differences": (fd_angle, fd_drag),
        "angle": angle,
        "landed": landed,
        "target": target,
    }


if __name__ == "__main__":
    main()

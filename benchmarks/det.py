"""``det``: the determinant of an ell x ell matrix by recursive cofactor expansion.

The expansion along the first row of the rows left, over the columns left (a list of column
indices), recursively down to 1 x 1 minors: ell! leaves, about e * ell! reads of one element
of `A` each. The gradient is w.r.t. `A`. It measures the cost of indexing an array in a
recursion: every read's sensitivity goes to one element of `A`.

JAX's `jit` traces the recursion and unrolls it: compiling takes minutes at ell = 7. Without
`jit`, `jax.grad` runs op by op, about 1 s per gradient at ell = 4 and 200 times that at
ell = 7: JAX is measured that way in the quick run (ell = 4) and skipped in the full run.
"""

from __future__ import annotations

import numpy as np

from benchmarks.harness import Impl, Options, Problem, directional_check, myia_impl
from benchmarks.peers import jax_module, to_numpy, torch_module

NAME = "det"

#: The largest ell at which JAX runs (without `jit`: about 1 s per gradient at ell = 4, and
#: e * ell! reads).
JAX_MAX_ELL = 5


def problem(quick: bool) -> Problem:
    ell = 4 if quick else 7
    rng = np.random.default_rng(0)
    mats = [rng.normal(size=(ell, ell)) for _ in range(2)]
    return Problem(
        NAME,
        f"ell = {ell} ({ell}x{ell} float64 matrices, two of them cycled)",
        [(A,) for A in mats],
        params={"ell": ell},
        rtol=1e-9,
        check_count=2,
    )


# The function Myia compiles (and plain Python runs) -------------------------------------------


def minor_det(A, r, cols):
    """The determinant of the minor of `A` made of rows r, r+1, ... and the columns `cols`."""
    if len(cols) == 1:
        return A[r, cols[0]]
    total = 0.0
    sign = 1.0
    for j in range(len(cols)):
        rest = cols[:j] + cols[j + 1 :]
        total = total + sign * A[r, cols[j]] * minor_det(A, r + 1, rest)
        sign = -sign
    return total


def det(A):
    return minor_det(A, 0, list(range(A.shape[0])))


# By hand --------------------------------------------------------------------------------------


def hand_det(A):
    return float(det(A))


def hand_grad(A):
    """Return d det / dA by hand: one recursion computing each minor and its gradient.

    The determinant is linear in each row, so the sensitivity of a minor (the product of the
    signs and elements above it) is known before the recursion enters it.
    """
    G = np.zeros_like(A)

    def visit(r, cols, g):
        if len(cols) == 1:
            G[r, cols[0]] += g
            return A[r, cols[0]]
        total = 0.0
        sign = 1.0
        for j in range(len(cols)):
            rest = cols[:j] + cols[j + 1 :]
            a = A[r, cols[j]]
            sub = visit(r + 1, rest, g * sign * a)
            G[r, cols[j]] += g * sign * sub
            total = total + sign * a * sub
            sign = -sign
        return total

    visit(0, list(range(A.shape[0])), 1.0)
    return G


# Builders -------------------------------------------------------------------------------------


def _grads(out) -> list[np.ndarray]:
    return [to_numpy(out)]


def build_myia(p: Problem, opts: Options) -> list[Impl]:
    return myia_impl(p, opts, det, _grads, wrt=("A",))


def build_hand(p: Problem, opts: Options) -> list[Impl]:
    return [
        Impl(
            "hand",
            "hand",
            hand_det,
            hand_grad,
            p.inputs,
            float,
            _grads,
            note="NumPy array, Python floats; the gradient accumulated in one recursion",
        )
    ]


def build_torch(p: Problem, opts: Options) -> list[Impl]:
    torch = torch_module()

    def primal(A):
        with torch.no_grad():
            return det(A)

    def grad(A):
        return torch.autograd.grad(det(A), A)[0]

    inputs = [(torch.tensor(A, requires_grad=True),) for (A,) in p.inputs]
    return [
        Impl(
            "torch",
            "torch",
            primal,
            grad,
            inputs,
            lambda y: float(y),
            _grads,
            note="eager: each element read is a tensor operation",
        )
    ]


def build_jax(p: Problem, opts: Options) -> list[Impl]:
    jax = jax_module()
    jnp = jax.numpy
    if p.params["ell"] > JAX_MAX_ELL:
        reason = (
            f"skipped at ell = {p.params['ell']}: `jit` unrolls the recursion (minutes to "
            f"compile), and `jax.grad` without `jit` takes minutes per call (op by op)"
        )
        return [
            Impl(
                "jax",
                "jax",
                None,
                None,
                [],
                float,
                _grads,
                primal_failure=reason,
                grad_failure=reason,
            )
        ]
    grad = jax.grad(det)
    inputs = [(jnp.asarray(A),) for (A,) in p.inputs]
    return [
        Impl(
            "jax (no jit)",
            "jax",
            lambda A: det(A).block_until_ready(),
            lambda A: grad(A).block_until_ready(),
            inputs,
            float,
            _grads,
            note="`jax.grad` op by op: `jit` unrolls the recursion",
        )
    ]


def build_autograd(p: Problem, opts: Options) -> list[Impl]:
    import autograd

    return [Impl("autograd", "autograd", det, autograd.grad(det), p.inputs, float, _grads)]


BUILDERS = {
    "myia": build_myia,
    "torch": build_torch,
    "jax": build_jax,
    "autograd": build_autograd,
    "hand": build_hand,
}


def reference_check(p: Problem) -> float:
    """Check the hand-written gradient against central differences, at the first input."""
    (A,) = p.inputs[0]
    return directional_check(lambda pt: hand_det(*pt), [hand_grad(A)], [A])

"""One table over the NumPy functions ML code uses: values, dtypes, shapes and gradients.

Each entry of `TABLE` (in tests/numpy_more_table.py) is a function written with NumPy (or
SciPy), the NumPy names it covers, its group (for docs/numpy.md) and argument specs. For each,
the test checks that the shape and dtype inference gives and Myia's value on every backend
(``numpy``, ``debug``, ``jax`` when JAX is installed) are NumPy's, and, for differentiable
entries, the gradient of ``<fn(*args), ct>`` (a random cotangent ``ct``) against finite
differences at the first and second order with `myia.testing.check_grad`, on every backend too
(the backends but ``numpy`` marked slow). `UNSUPPORTED` (in tests/numpy_coverage.py) lists
the functions still refused and why; docs/numpy.md is generated from both (`python
tests/test_numpy_more.py` writes it, and `test_the_doc_is_the_table` checks it is up to date).
The checks of particular calls (errors at the user's line, XLA and machine code, gradients
against JAX's) are in tests/test_numpy_more_calls.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from array_checks import RecordingInferrer, as_myia_result, check_abstract, check_value
from numpy_coverage import DOC, render_doc
from numpy_more_table import BACKENDS, CASES, TABLE, Case, make_args

from myia import myia
from myia.abstract import to_abstract
from myia.frontend import parse
from myia.primitives import array_extra, decompositions, linalg, tiling
from myia.primitives import special as special_prims
from myia.testing import check_grad, vdot

# NumPy's warnings on the table's inputs: np.cross of 2-vectors (deprecated by NumPy 2.0,
# still computed), slices of NaNs only (np.nanmean, np.nanmax: NaN).
pytestmark = [
    pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors"),
    pytest.mark.filterwarnings("ignore:Mean of empty slice"),
    pytest.mark.filterwarnings("ignore:All-NaN slice encountered"),
]


# The checks -----------------------------------------------------------------------------------


def _compiled(case: Case, backend: str, cache: dict[Any, Any] = {}) -> Any:  # noqa: B006
    key = (case.fn, backend)
    if key not in cache:
        cache[key] = myia(case.fn, backend=backend)
    return cache[key]


def _float_output(out: Any) -> bool:
    leaves = out if isinstance(out, tuple) else (out,)
    return all(np.result_type(x).kind == "f" for x in leaves)


def random_like(x: Any, rng: np.random.Generator) -> Any:
    if isinstance(x, tuple):
        return tuple(random_like(v, rng) for v in x)
    return np.asarray(rng.standard_normal(np.shape(x)), np.result_type(x))[()]


_LOSSES: dict[Any, Any] = {}


def contracted(fn: Any, backend: str = "numpy") -> Any:
    """``(args, ct) -> <fn(*args), ct>``, compiled once per function and backend."""
    if (fn, backend) not in _LOSSES:

        def loss(args, ct):
            return vdot(fn(*args), ct)

        _LOSSES[fn, backend] = myia(loss, backend=backend)
    return _LOSSES[fn, backend]


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"{c.name}-{i}") for i, c in enumerate(CASES)]
)
def test_values(case: Case) -> None:
    for seed, spec in enumerate(case.args):
        args = make_args(spec, seed)
        with np.errstate(all="ignore"):
            expected = as_myia_result(case.fn(*args))
        inferrer = RecordingInferrer()
        _, abstract = inferrer.infer(parse(case.fn), tuple(to_abstract(a) for a in args))
        check_abstract(abstract, expected)
        assert set(case.prims) <= inferrer.seen, set(case.prims) - inferrer.seen
        for backend in BACKENDS:
            with np.errstate(all="ignore"):
                got = _compiled(case, backend)(*args)
            check_value(got, expected, f"{case.name} on {backend}")


GRADS = [c for c in CASES if c.order > 0]


#: The gradients on the other backends take minutes: marked slow.
GRAD_BACKENDS = ["numpy"] + [pytest.param(b, marks=pytest.mark.slow) for b in BACKENDS[1:]]


@pytest.mark.parametrize("backend", GRAD_BACKENDS)
@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"{c.name}-{i}") for i, c in enumerate(GRADS)]
)
def test_gradients(case: Case, backend: str) -> None:
    for seed, spec in enumerate(case.args):
        args = make_args(spec, seed)
        out = case.fn(*args)
        if not _float_output(out):
            continue
        ct = random_like(as_myia_result(out), np.random.default_rng(seed))
        float_args = tuple(a for a in args)
        order = case.order if seed == 0 else 1
        f32 = any(np.result_type(a) == np.float32 for a in float_args)
        opts = dict(eps=1e-3, rtol=2e-2, atol=2e-2) if f32 else {}
        loss = contracted(case.fn, backend)
        check_grad(loss, args, ct, wrt=0, order=order, seed=seed, backend=backend, **opts)


# Coverage -------------------------------------------------------------------------------------


def _declared(*modules: Any) -> set[str]:
    from myia.primitives import Primitive

    return {
        p.name
        for m in modules
        for p in vars(m).values()
        if isinstance(p, Primitive) and p.impl.__module__ == m.__name__
    }


def test_every_new_primitive_is_in_the_table() -> None:
    covered = {p for c in TABLE for p in c.prims}
    # The gradients' own helpers are in tests/test_grad_primitives.py.
    missing = (
        _declared(linalg, array_extra, decompositions, tiling, special_prims)
        - covered
        - {"einsum_grad_spec", "untake_along_axis", "svd_full_gradient"}
        - {"untile", "unrepeat", "unpad", "triangular_matmul", "lower_half"}
    )
    assert not missing, f"primitives missing from the table: {sorted(missing)}"


# docs/numpy.md: generated from the table --------------------------------------------------------


def test_the_doc_is_the_table() -> None:
    assert DOC.read_text() == render_doc(TABLE), "regenerate it: python tests/test_numpy_more.py"


if __name__ == "__main__":
    DOC.write_text(render_doc(TABLE))
    print(f"wrote {DOC}")

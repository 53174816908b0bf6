"""The text of docs/numpy.md around the table of tests/numpy_more_table.py: what is refused.

`render_doc` writes the document from that table (the functions supported, each checked)
and from `UNSUPPORTED` (what is still refused, and why) and `EARLIER`.
"""

from __future__ import annotations

import pathlib
from typing import Any

#: What is still refused, and why (or what to use instead).
UNSUPPORTED = {
    "linalg": {
        "np.linalg.eigh, np.linalg.svd with exactly repeated (or zero singular) values": "the "
        "gradients of the values stay exact; the vectors are not unique there, and the "
        "gradients through them leave out rotations within the repeated space",
        "np.linalg.svd(full_matrices=True) of a non-square matrix": "values only: its gradient "
        "is refused at compile time (pass full_matrices=False)",
        "np.linalg.qr(mode='complete') of a tall matrix": "refused (NotImplementedError): "
        "mode='reduced'",
        "np.linalg.lstsq of a rank-deficient tall matrix": "the least-norm solution, but the "
        "residuals are those of that solution, where NumPy empties them (a shape known only "
        "at run time); its gradient assumes a constant rank",
        "np.linalg.eig, np.linalg.eigvals": "refused at compile time (MyiaTypeError): the "
        "dtype of NumPy's result depends on the values (complex where eigenvalues are); "
        "np.linalg.eigh, np.linalg.eigvalsh for symmetric matrices",
        "scipy.linalg.solve_triangular of an exactly singular matrix": "infinities (BLAS), "
        "not SciPy's LinAlgError",
    },
    "products": {
        "np.einsum with more than 3 repeated occurrences of indices in one operand "
        '("iiiii")': "values only: its gradient is refused at compile time (take "
        "np.diagonal first)",
        "np.cross of 2-vectors": "computed as NumPy 2 does, without its DeprecationWarning",
    },
    "math": {
        "math.lgamma without SciPy": "values only: its derivative, digamma, is SciPy's "
        "(the gradient is refused at compile time)",
        "np.interp(period=...)": "refused at compile time (MyiaTypeError): np.mod and sort x "
        "and xp first",
        "np.trapz": "np.trapezoid where the installed NumPy has it (NumPy 2.4 removed it)",
    },
    "reductions": {
        "np.quantile, np.percentile, np.median with several axes, or with weights": "not yet",
        "np.cov(fweights=..., aweights=...)": "refused at compile time (MyiaTypeError)",
        "np.nansum, np.nanmean, np.nanmax, np.nanmin (out=...)": "refused at compile time "
        "(MyiaTypeError): values are immutable; their where= and initial= are not taken",
        "np.nanmax, np.nanmin, np.nanmean of a slice of NaNs only": "NaN, as NumPy, without "
        "NumPy's RuntimeWarning",
        "np.trapezoid(y, x) with x neither a vector nor of y's dimensions": "refused at "
        "compile time (MyiaTypeError): np.broadcast_to it",
    },
    "sorting": {
        "np.searchsorted(sorter=...)": "not yet (sort first)",
        "np.unique, np.nonzero, np.argwhere, np.flatnonzero": "refused at compile time, with "
        "what to use instead: the shape of the result depends on the values (NumPy's unique "
        "has no static size argument)",
    },
    "creation": {
        "np.logspace with an array base": "refused at compile time (MyiaTypeError)",
        "np.array of a list of variables": "refused at compile time (a list's length is not "
        "known there): np.array of a tuple, or np.stack",
        "np.meshgrid of more than three vectors, or with sparse=True": "not yet",
    },
    "shape": {
        "np.repeat with repeats computed at run time": "refused at compile time: the "
        "result's shape would depend on values",
        "np.pad(mode='linear_ramp', 'maximum', 'minimum', 'mean', 'median', 'empty'), "
        "np.pad(constant_values=an array)": "refused at compile time (MyiaTypeError)",
    },
    "scipy.special": {
        "scipy.special.logsumexp(b=...), logsumexp(return_sign=True)": "not yet",
    },
    "scipy.stats": {
        "the other distributions and methods of scipy.stats (logcdf, sf, ppf, rvs...), "
        "frozen distributions (norm(loc, scale))": "not yet",
        "multivariate_normal.logpdf(allow_singular=True), a covariance that is not positive "
        "definite": "refused at compile time (MyiaTypeError): the covariance must be "
        "positive definite (its Cholesky factor is taken)",
    },
}

#: Functions supported before this table, tested by tests/test_arrays.py and
#: tests/test_grad_primitives.py.
EARLIER = (
    "np.exp, np.log, np.log1p, np.expm1, np.sqrt, np.sin, np.cos, np.tan, np.arcsin, "
    "np.arccos, np.arctan, np.arctan2, np.sinh, np.cosh, np.tanh, np.floor, np.ceil, np.sign, "
    "np.abs, np.maximum, np.minimum, np.add, np.subtract, np.multiply, np.divide, np.power, "
    "np.negative, np.logical_and, np.logical_or, np.logical_not, np.clip, np.where, np.matmul, "
    "np.dot, np.sum, np.prod, np.mean, np.max, np.min, np.argmax, np.argmin, np.transpose, "
    "np.swapaxes, np.reshape, np.expand_dims, np.squeeze, np.concatenate, np.stack, np.split, "
    "np.take, np.zeros, np.ones, np.full, np.zeros_like, np.ones_like, np.full_like, "
    "np.arange, np.shape, np.ndim, np.size, np.float32 and the other scalar types, a.astype"
)

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "numpy.md"


def render_doc(table: list[Any]) -> str:
    """docs/numpy.md, from the table of tests/numpy_more_table.py, `UNSUPPORTED` and `EARLIER`."""
    out = [
        "# NumPy in Myia code",
        "",
        "<!-- Generated by `python tests/test_numpy_more.py` from the table of "
        "tests/numpy_more_table.py; `test_the_doc_is_the_table` checks it. Do not edit. -->",
        "",
        "What NumPy (and, where installed, SciPy) functions mean in functions Myia compiles.",
        "Every row below is an entry of the table of `tests/numpy_more_table.py`: its values,",
        "dtypes and shapes are checked against NumPy on every backend, and its gradient,",
        "on every backend too, against finite differences (to the order given) with",
        "`myia.testing.check_grad`.",
        "Linear algebra is differentiated by its analytic rules, never through a",
        "factorization's loops. SciPy is optional: its rows are checked where it is installed.",
        "",
    ]
    groups = list(dict.fromkeys(c.group for c in table))
    for group in groups:
        out += [f"## {group}", "", "| function | status | gradient |", "| --- | --- | --- |"]
        for c in table:
            if c.group != group:
                continue
            status = "supported (with SciPy)" if c.scipy else "supported"
            order = {0: "no derivative (values checked)", 1: "1st order"}
            gradient = order.get(c.order, f"checked to order {c.order}")
            out.append(f"| `{c.names}` | {status} | {gradient} |")
        for names, why in UNSUPPORTED.get(group, {}).items():
            out.append(f"| `{names}` | {why} | — |")
        out.append("")
    for group, rows in UNSUPPORTED.items():
        if group in groups:
            continue
        out += [f"## {group}", "", "| function | status | gradient |", "| --- | --- | --- |"]
        out += [f"| `{names}` | {why} | — |" for names, why in rows.items()]
        out.append("")
    out += [
        "## Supported earlier",
        "",
        "Checked by `tests/test_arrays.py` (values) and `tests/test_grad_primitives.py`",
        "(gradients): " + EARLIER + ".",
        "",
    ]
    return "\n".join(out)

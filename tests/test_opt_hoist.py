"""A backpropagator's arithmetic on forward values, computed in the forward pass (`opt.hoist`)."""

from __future__ import annotations

import math
import os
import re
import traceback

import pytest
from helpers import line_of, scalar_loop

from myia import custom_bprop, disk_cache, grad
from myia.opt import passes
from myia.testing import check_grad

BACKENDS = ["numpy", "debug", "native"]


def cos_loop(x, n):
    """cos's backpropagator reads sin(y), which the forward's cos(y) guards."""
    y = x
    for _ in range(n):
        y = math.cos(y) * 0.7 + 0.2 * x
    return y


def tanh_loop(x, n):
    """tanh's backpropagator reads 1 - out * out: arithmetic, which cannot raise."""
    y = x
    for _ in range(n):
        y = math.tanh(y * 1.3) + 0.1 * x
    return y


def square_loop(x, n):
    """y * y's backpropagator reads y with the sensitivity: cos(y) would be pushed too."""
    y = x
    for _ in range(n):
        y = math.sin(y) + y * y * 0.25
    return y


def sin_inf(x, n):
    y = x
    for _ in range(n):
        y = math.sin(y * x) * 0.5  # SIN-LINE
    return y


def log_loop(x, n):
    y = x
    for _ in range(n):
        y = math.log(y) + 0.5  # LOG-LINE
    return y


def twice(x):
    return x * 2.0


@custom_bprop(twice)
def bprop_twice(x, out, dout):
    return (dout * (2.0 + 0.0 * math.cos(x)),)  # BPROP-COS (raises at inf)


def custom_loop(x, n):
    """A backpropagator's cos(x) where the forward computes no sin(x): it stays backward."""
    y = x
    for _ in range(n):
        y = twice(y) * 0.5 + 0.1 * x
    return y


@pytest.fixture
def native_now(monkeypatch):
    """Native code compiled at the first call, so that the calls run it."""
    pytest.importorskip("numba")
    monkeypatch.setenv("MYIA_NATIVE_BACKGROUND", "0")


def _source(fn, args, backend="numpy"):
    """The generated code of `fn`'s gradient (the whole machine-code module, natively)."""
    g = grad(fn, "x", backend=backend)
    g(*args)
    ex = g.specialization(*args).executable
    return ex.whole.source if backend == "native" else ex.source


def _loops(source):
    """The bodies of the forward and backward loops of a gradient's generated code."""
    fwd = re.search(r"def fwd_\w+\(.*?(?=\n\S|\Z)", source, re.S)
    bwd = re.search(r"def bwd_\w+\(.*?(?=\n\S|\Z)", source, re.S)
    assert fwd and bwd, source
    return fwd.group(0), bwd.group(0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "fn, x",
    [
        (scalar_loop, 0.3),
        (cos_loop, 0.4),
        (tanh_loop, 0.2),
        (square_loop, 0.3),
        (custom_loop, 0.3),
    ],
)
def test_gradients_to_second_order(fn, x, backend, request):
    if backend == "native":
        request.getfixturevalue("native_now")
    check_grad(fn, x, 6, wrt=0, order=2, backend=backend)


def test_cos_moves_to_the_forward_loop():
    """The forward loop pushes cos(y), the backward loop multiplies and adds."""
    fwd, bwd = _loops(_source(scalar_loop, (0.3, 5)))
    assert "math.cos(y)" in fwd and "math.sin(y)" in fwd
    assert "math." not in bwd


def test_cos_moves_to_the_forward_loop_of_machine_code(native_now):
    fwd, bwd = _loops(_source(scalar_loop, (0.3, 5), backend="native"))
    assert "_m_cos(y)" in fwd
    assert "_m_" not in bwd  # no call of math, no check
    fwd, bwd = _loops(_source(cos_loop, (0.4, 5), backend="native"))
    assert "_m_sin(y)" in fwd and "_m_" not in bwd


def test_arithmetic_of_forward_values_moves():
    fwd, bwd = _loops(_source(tanh_loop, (0.2, 5)))
    assert "math.tanh" in fwd and "math." not in bwd
    assert bwd.count("*") == 3  # d * 1.3, d * 0.1 and d * (1 - out * out) popped


def test_what_would_push_more_stays_backward():
    """y is pushed for y * y's backpropagator: pushing cos(y) too would double the stack."""
    fwd, bwd = _loops(_source(square_loop, (0.3, 5)))
    assert "math.cos" in bwd and "math.cos" not in fwd


def test_what_could_raise_earlier_stays_backward():
    """The forward computes no sin(x): cos(x) could raise there where it did not (inf)."""
    fwd, bwd = _loops(_source(custom_loop, (0.3, 5)))
    assert "math.cos" in bwd and "math.cos" not in fwd


def _user_lines(exc):
    text = "".join(traceback.format_exception(exc))
    here = os.path.abspath(__file__)
    return [int(n) for n in re.findall(rf'File "{re.escape(here)}", line (\d+)', text)]


def _error(fn, args, backend):
    with pytest.raises(ValueError) as info:
        grad(fn, "x", backend=backend)(*args)
    return str(info.value), _user_lines(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "fn, args",
    [(sin_inf, (math.inf, 3)), (log_loop, (1.5, 4)), (custom_loop, (math.inf, 3))],
)
def test_errors_are_those_of_the_gradient_not_hoisted(fn, args, backend, request, monkeypatch):
    """Math domain errors: the same error at the same user's lines, with and without the pass."""
    if backend == "native":
        request.getfixturevalue("native_now")
    got = _error(fn, args, backend)
    assert got[0] == "math domain error"
    monkeypatch.setattr(disk_cache, "ENABLED", False)  # (programs optimized otherwise)
    monkeypatch.setattr(passes, "PASSES", [p for p in passes.PASSES if p.name != "hoist"])
    assert got == _error(fn, args, backend)
    if fn is custom_loop:  # raised by the backward pass, at the backpropagator's line
        assert line_of(bprop_twice, "BPROP-COS") in got[1]
    if fn is log_loop:  # log's backpropagator divides the sensitivity: nothing moves
        fwd, bwd = _loops(_source(log_loop, (1.5, 2)))
        assert "math.log" in fwd and "math." not in bwd and "/" in bwd

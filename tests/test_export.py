"""`myia.export_stablehlo`: a program of the XLA backend exported with ``jax.export``, run by
JAX alone (another process, without Myia) with Myia's results."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from myia import export_stablehlo, grad, myia, value_and_grad

pytest.importorskip("jax")


def loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


def newton(a):
    y = a
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def inverse(x):
    return 1.0 / x


def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)


RNG = np.random.default_rng(0)
W, X = RNG.normal(size=(3, 2)), RNG.normal(size=(4, 3))


def test_a_gradient_exported_and_run_in_a_process_without_myia(tmp_path):
    exported = export_stablehlo(value_and_grad(loss), W, X)
    assert "stablehlo" in exported.text and "func.func public @main" in exported.text
    assert [(s.shape, str(s.dtype)) for s in exported.inputs] == [
        ((3, 2), "float64"),
        ((4, 3), "float64"),
    ]
    assert not exported.has_status
    value, g = value_and_grad(loss)(W, X)  # the NumPy backend
    out = exported.call(W, X)
    np.testing.assert_allclose(out[0], value, rtol=1e-12)
    np.testing.assert_allclose(out[1], g, rtol=1e-12)
    pytest.importorskip("flatbuffers")  # JAX's serialization needs it
    exported.save(tmp_path / "loss.stablehlo")
    np.save(tmp_path / "w.npy", W)
    np.save(tmp_path / "x.npy", X)
    script = textwrap.dedent(
        """
        import sys
        import jax, numpy as np
        from jax import export
        assert not any(m == "myia" or m.startswith("myia.") for m in sys.modules)
        jax.config.update("jax_enable_x64", True)
        with open("loss.stablehlo", "rb") as f:
            program = export.deserialize(bytearray(f.read()))
        value, g = program.call(np.load("w.npy"), np.load("x.npy"))
        np.save("value.npy", np.asarray(value))
        np.save("g.npy", np.asarray(g))
        """
    )
    # Without Myia on the path (but with where flatbuffers was found).
    import flatbuffers

    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(flatbuffers.__file__)))
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_allclose(np.load(tmp_path / "value.npy"), value, rtol=1e-12)
    np.testing.assert_allclose(np.load(tmp_path / "g.npy"), g, rtol=1e-12)


def test_the_gradient_of_a_while_loop_exports_with_its_status():
    exported = export_stablehlo(grad(newton), 2.0)
    assert exported.has_status
    for a in (2.0, 9.0, 0.5):
        result, status = exported.call(a)
        assert int(status) & 1 == 0  # no error
        np.testing.assert_allclose(result, grad(newton)(a), rtol=1e-12)


def test_the_status_flags_where_python_raises():
    exported = export_stablehlo(myia(inverse), 4.0)
    assert exported.has_status
    result, status = exported.call(4.0)
    assert result == 0.25 and int(status) & 1 == 0
    _, status = exported.call(0.0)
    assert int(status) & 1 == 1  # ZeroDivisionError in Python


def test_a_program_on_the_host_is_refused():
    with pytest.raises(ValueError, match="runs on the host"):
        export_stablehlo(fact, 5)

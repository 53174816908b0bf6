"""The examples of ``examples/``, each run on a reduced size, with a check of what it shows."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(name: str):
    """Import ``examples/<name>.py`` as a module."""
    spec = importlib.util.spec_from_file_location(f"myia_examples_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being created
    spec.loader.exec_module(module)
    return module


def decreasing(losses, k: int) -> bool:
    """The mean of the last `k` losses is below that of the first `k`."""
    return np.mean(losses[-k:]) < np.mean(losses[:k])


def test_demo(tmp_path, capsys):
    pytest.importorskip("sklearn")
    pytest.importorskip("matplotlib")
    pytest.importorskip("tqdm")
    demo = load("demo")
    result = demo.main(epochs=3, plot_path=tmp_path / "curve.png", progress=False)
    assert result["test_accuracy"] > 0.9
    assert decreasing(result["losses"], 20)
    assert (tmp_path / "curve.png").stat().st_size > 10_000
    assert len(demo.step.compiled_signatures()) == 1  # every batch has the same shape
    out = capsys.readouterr().out
    assert "test accuracy" in out and "time per step" in out and str(tmp_path) in out


def test_tree_network(capsys):
    tree_network = load("tree_network")
    result = tree_network.main(n_train=150, n_test=100, epochs=2)
    assert result["losses"][-1] < result["losses"][0]
    assert result["test_accuracy"] > 0.7
    # One compilation for trees of every shape.
    assert len(result["signatures"]) == 1
    assert "Tree | None" in capsys.readouterr().out


def test_rnn():
    rnn = load("rnn")
    result = rnn.main(steps=40, length=8, batch=16, hidden=8)
    assert decreasing(result["losses"], 10)
    assert result["final"] < 0.5 * result["initial"]


def test_convnet():
    pytest.importorskip("sklearn")
    convnet = load("convnet")
    result = convnet.main(epochs=2, channels=4)
    assert result["test_accuracy"] > 0.7
    assert decreasing(result["losses"], 10)


def test_adaptive_ode():
    ode = load("adaptive_ode")
    result = ode.main(tol=1e-2, target=20.0)
    np.testing.assert_allclose(result["grad"], result["finite_differences"], rtol=1e-5)
    assert abs(result["landed"] - result["target"]) < 1e-6
    # The number of steps depends on the launch angle.
    steps = {ode.simulate(math.radians(a), 20.0, 0.02, 1e-2)[1] for a in (15, 45, 75)}
    assert len(steps) == 3


def test_second_order():
    second_order = load("second_order")
    result = second_order.main(n=2, newton_iterations=12)
    assert abs(result["x1"] - 1.1309011226) < 1e-8
    assert result["hvp_error"] < 1e-6
    np.testing.assert_allclose(result["x"], [1.0, 1.0], atol=1e-8)
    assert result["gradient_norms"][-1] < 1e-8


def test_basics():
    basics = load("basics")
    signatures = basics.main(n_trees=3, depth=3)
    assert len(signatures["fact"]) == 2  # an int and a float
    assert len(signatures["tree_sum"]) == 1  # every tree shape


def test_dropout_mlp(capsys):
    pytest.importorskip("sklearn")
    dropout_mlp = load("dropout_mlp")
    result = dropout_mlp.main(epochs=3)
    assert result["test_accuracy"] > 0.85
    assert decreasing(result["losses"], 20)
    # The masks drawn inside the step are those drawn outside from a generator seeded alike.
    assert result["same_as_outside"]
    assert len(dropout_mlp.step.compiled_signatures()) == 1
    assert "time per step" in capsys.readouterr().out


def test_vae(capsys):
    # The -ELBO's gradient through the reparameterization, for fixed noise, then a short run
    # with the noise drawn inside the compiled step: the test -ELBO and reconstruction drop,
    # and a run seeded alike draws alike.
    pytest.importorskip("sklearn")
    from myia.testing import check_grad

    vae = load("vae")
    rng = np.random.default_rng(3)
    params = vae.init_params(rng, n_in=6, hidden=5, latent=2)
    x = rng.random((4, 6))
    eps = rng.normal(size=(4, 2))
    check_grad(vae.negative_elbo, params, x, eps, wrt=(0,))
    result = vae.main(epochs=4)
    assert result["elbo_after"] < result["elbo_before"] - 10.0
    assert result["mse_after"] < 0.7 * result["mse_before"]
    assert decreasing(result["losses"], 20)
    assert vae.main(epochs=1)["losses"] == vae.main(epochs=1)["losses"]
    assert len(vae.step.compiled_signatures()) == 1
    assert "time per step" in capsys.readouterr().out


def test_gp_nll(capsys):
    # The gradient through np.linalg.cholesky and solve_triangular, checked at a small size,
    # then a few steps of fitting the hyperparameters.
    from myia.testing import check_grad

    gp = load("gp_nll")
    x, y = gp.make_data(n=30, d=3)
    check_grad(gp.gp_nll, np.array([0.1, -0.2, 0.3]), -1.0, x, y, wrt=(0, 1))
    result = gp.main(n=40, d=3, steps=15)
    assert result["losses"][-1] < result["losses"][0]
    assert "time per step" in capsys.readouterr().out


def test_data_parallel():
    # In a subprocess: JAX gets its 4 CPU devices when it starts.
    pytest.importorskip("jax")
    pytest.importorskip("sklearn")
    import os
    import re
    import subprocess

    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    env["PYTHONPATH"] = os.pathsep.join([str(EXAMPLES.parent), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "data_parallel.py"), "--epochs", "3"],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert out.startswith("4 devices (cpu)") and "32 per device" in out
    losses = [float(v) for v in re.findall(r"epoch +\d+: loss ([0-9.]+)", out)]
    assert len(losses) == 3 and losses[-1] < 0.6 * losses[0]
    assert float(re.search(r"test accuracy: +([0-9.]+)%", out).group(1)) > 85
    assert float(re.search(r"largest loss difference: +(\S+)", out).group(1)) < 1e-12
    assert "gradients all-reduced:    True" in out

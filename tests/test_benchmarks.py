"""The benchmark suite's quick run (``python -m benchmarks --quick``), so that it cannot rot.

It runs in a child process, with whichever peers are installed (none are required): every
workload has a table, every framework that ran agrees with the hand-written gradients, and
Myia's rows ran (no failure) and compiled the tree workload once for every tree shape.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = [
    "scalar_loop",
    "newton_sqrt",
    "tree_rnn",
    "rnn",
    "mlp_step_small",
    "mlp_step_large",
    "gp_nll",
    "per_example_grads",
    "hvp",
    "hessian_while",
    "det",
]
PEERS = {"torch": "torch", "jax": "jax", "autograd": "autograd"}

# Its tests share one quick run (a child process): one xdist worker runs them all.
pytestmark = pytest.mark.xdist_group(__name__)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "quick.json"
    done = subprocess.run(
        # A timing budget of 0.01 s per function (the quick run's 0.05 s times each function
        # in a few turns of 0.02 s; one turn is enough to check that it is timed).
        [sys.executable, "-m", "benchmarks", "--quick", "--budget", "0.01", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
    with open(out) as f:
        return json.load(f), done.stdout


def test_every_workload_has_a_table(quick_run):
    data, stdout = quick_run
    assert [w["workload"] for w in data["workloads"]] == WORKLOADS
    for title in ("## scalar_loop", "## newton_sqrt", "## tree_rnn", "## rnn", "## mlp_step"):
        assert title in stdout
    assert "## Summary" in stdout
    assert "| framework | primal median | grad median | grad / primal |" in stdout


def test_installed_peers_have_rows_and_missing_ones_are_skipped(quick_run):
    data, _ = quick_run
    for name, module in PEERS.items():
        installed = importlib.util.find_spec(module) is not None
        for w in data["workloads"]:
            frameworks = {r["framework"] for r in w["rows"]}
            assert (name in frameworks) == installed, (w["workload"], name)
            assert {"myia", "hand"} <= frameworks


def test_every_result_was_checked_and_agrees(quick_run):
    data, stdout = quick_run
    assert "WRONG RESULT" not in stdout
    for w in data["workloads"]:
        for r in w["rows"]:
            assert r["check"] in ("ok", "reference"), (w["workload"], r["label"], r["check"])
            assert r["error"] is not None and r["error"] < 1e-4


def test_myia_runs_every_workload(quick_run):
    data, _ = quick_run
    for w in data["workloads"]:
        rows = [r for r in w["rows"] if r["framework"] == "myia"]
        assert [r["main"] for r in rows].count(True) == 1, w["workload"]
        for myia in rows:
            assert myia["primal_failure"] is None and myia["grad_failure"] is None, w["workload"]
            assert myia["primal"] > 0 and myia["grad"] > 0
            assert myia["primal_first"] > 0 and myia["grad_first"] > 0
            assert myia["compilations"] == 1, w["workload"]


def test_scalar_loop_gradient_memory_is_measured(quick_run):
    data, _ = quick_run
    (w,) = [w for w in data["workloads"] if w["workload"] == "scalar_loop"]
    for r in w["rows"]:
        if r["framework"] in ("myia", "hand") and r["main"]:
            assert r["memory"] is not None and r["memory"]["peak"] >= 0, r["label"]


def test_interleaved_timing_gives_every_framework_a_median():
    from benchmarks.interleaved import interleaved

    medians = interleaved("newton_sqrt", ["myia", "hand"], rounds=1)
    assert list(medians) == ["myia", "hand"]
    assert all(0 < t < 1e-3 for t in medians.values())


def test_rng_cost_times_both_dropout_steps():
    from benchmarks.rng_cost import measure

    times = measure(rounds=1, batch=8, hidden=16)
    assert set(times) == {"inside", "outside"}
    assert all(0 < t < 1.0 for t in times.values())

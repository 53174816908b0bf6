"""Data-parallel and model-parallel programs on the JAX backend, over several XLA host devices.

Each check runs in a subprocess (tests/distributed_child.py), where ``XLA_FLAGS`` gives JAX
several CPU devices before it starts; it compares the step over the mesh with the same step on
one device, and looks at where XLA put the arrays and whether its program all-reduces.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

ROOT = Path(__file__).resolve().parent.parent
CHILD = Path(__file__).resolve().parent / "distributed_child.py"
TIMEOUT = 240  # seconds per subprocess: a few compilations on a loaded 2-core machine


def _env(devices: int) -> dict[str, str]:
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _result(stdout: str, stderr: str) -> dict:
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    raise AssertionError(f"the subprocess gave no result:\n{stdout}\n{stderr[-4000:]}")


def run_child(name: str, devices: int = 4) -> dict:
    proc = subprocess.run(
        [sys.executable, str(CHILD), name],
        env=_env(devices),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return _result(proc.stdout, proc.stderr)


ROUNDING = 1e-12  # float64: the order of the additions of an all-reduce differs


def test_data_parallel_mlp_step_equals_the_single_device_step():
    r = run_child("mlp")
    assert r["devices"] == 4
    assert r["jitted"], r["reason"]
    assert r["single_vs_numpy"] < ROUNDING
    assert r["distance"] < ROUNDING
    assert r["distance_kept"] < ROUNDING
    assert r["distance_second_step"] < ROUNDING
    # Results as without a mesh: NumPy arrays and scalars.
    assert r["result_types"] == ["float64", "ndarray"]
    # The batch (x and y) split in 4 along its first axis; the parameters replicated.
    assert r["argument_specs"] == ["P()"] * 4 + ["P('data',)"] * 2
    assert r["x_shards"] == [[4, 64]] * 4
    # The gradients are summed across the devices by XLA, and the new parameters replicated.
    assert r["all_reduce"] and not r["all_reduce_single"]
    assert r["kept_specs"] == ["P()"] * 4
    # A per-example result stays split like the batch.
    assert r["scores_spec"] == "P('data',)" and r["scores_distance"] < ROUNDING
    # A model kept on the devices goes back in as it is, step after step.
    assert r["kept_types"] == ["ArrayImpl"] and r["kept_not_copied"]
    assert r["kept_training_distance"] < ROUNDING and r["kept_single_distance"] < ROUNDING
    # A program run on the host takes the record of jax.Arrays too (as NumPy arrays).
    assert "print" in r["host_reason"] and r["host_with_device_arrays"] < ROUNDING
    # value_and_grad(..., mesh=...) alone: the gradient, all-reduced.
    assert r["value_and_grad_distance"] < ROUNDING and r["value_and_grad_all_reduce"]


def test_data_parallel_rnn_step_equals_the_single_device_step():
    r = run_child("rnn")
    assert r["jitted"], r["reason"]
    assert r["single_vs_numpy"] < ROUNDING
    assert r["distance"] < ROUNDING
    assert r["kept_specs"] == ["P()"] * 5
    # One XLA program: the loops over time (forward and backward) and the all-reduce.
    assert r["all_reduce"] and r["while"]


def test_a_parameter_sharded_over_a_model_axis():
    r = run_child("model_parallel")
    assert r["jitted"]
    assert r["distance"] < ROUNDING
    # W1 (64 x 32) split by columns over "model", b1 and W2 along their first axis.
    assert r["argument_specs"] == [
        "P(None, 'model')",
        "P('model',)",
        "P('model',)",
        "P()",
        "P('data',)",
        "P('data',)",
    ]
    assert r["W1_shards"] == [[64, 16]] * 4


def test_mistakes_with_a_mesh_are_myia_errors():
    r = run_child("errors")
    assert "6 rows along its dimension 0" in r["uneven"] and "'data'" in r["uneven"]
    assert "batch_axis='batch' is not an axis of the mesh" in r["axis"]
    assert "need a mesh=" in r["no_mesh"]
    assert "does not have the argument's structure" in r["structure"]
    assert "jax.sharding.Mesh" in r["mesh_type"]
    assert "name argument -3, but the function takes 4" in r["position"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_on_localhost():
    """``jax.distributed`` with 2 processes of 2 host devices each, gloo for the collectives."""
    port = _free_port()
    procs = [
        subprocess.Popen(
            [sys.executable, str(CHILD), "multiprocess", str(k), str(port)],
            env=_env(2),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(2)
    ]
    outputs = []
    try:
        for p in procs:
            outputs.append(p.communicate(timeout=TIMEOUT))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    errors = "\n".join(err[-3000:] for _, err in outputs)
    assert all(p.returncode == 0 for p in procs), errors
    results = [_result(out, err) for out, err in outputs]
    assert sorted(r["process"] for r in results) == [0, 1]
    for r in results:
        assert r["processes"] == 2 and r["devices"] == 4 and r["local_devices"] == 2
        assert r["jitted"] and r["all_reduce"]
        # The whole batch in each process, and each process's half as a global array.
        assert r["distance"] < ROUNDING
        assert r["distance_local"] < ROUNDING
        # Each process gets the whole of a result split over both processes' devices.
        assert r["scores_shape"] == [16, 10] and r["scores_distance"] < ROUNDING

"""Programs that tests/test_distributed.py runs in a subprocess with several XLA host devices.

``python tests/distributed_child.py NAME [ARGS...]`` runs check ``NAME`` and prints its
measurements as one line of JSON: how far the results over the mesh are from the results on
one device, the shardings of the results kept on the devices, whether XLA's compiled
program holds an all-reduce. The parent process sets ``XLA_FLAGS`` (the number of host
devices) and ``JAX_PLATFORMS=cpu`` before JAX starts here.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))

import demo  # noqa: E402  (examples/demo.py)
import jax  # noqa: E402
from jax.sharding import Mesh  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from myia import ArithmeticData, myia, value_and_grad  # noqa: E402


def mlp_step(model, x, y, lr):
    """The demo's training step (examples/demo.py)."""
    loss, dmodel = value_and_grad(demo.cost, "model")(model, x, y)
    return loss, model - lr * dmodel


def scores(model, x):
    """Per-example results: a result split like the batch."""
    return model.apply(x)


def checked_scores(model, x):
    """A program with an effect (``print``): it runs on the host, not as XLA code."""
    if np.sum(x) > 1e9:
        print("inputs too large", file=sys.stderr)
    return model.apply(x)


def _leaves(x):
    if isinstance(x, tuple):
        return [y for e in x for y in _leaves(e)]
    if hasattr(x, "__dataclass_fields__"):
        return [y for f in x.__dataclass_fields__ for y in _leaves(getattr(x, f))]
    return [x]


def _distance(a, b) -> float:
    """The largest relative difference between the leaves of `a` and `b`."""
    return max(
        float(np.max(np.abs(np.asarray(u) - np.asarray(v)) / (1.0 + np.abs(np.asarray(v)))))
        for u, v in zip(_leaves(a), _leaves(b), strict=True)
    )


def _specs(tree) -> list[str]:
    return [str(x.sharding.spec) for x in _leaves(tree) if isinstance(x, jax.Array)]


def _mlp_data(batch: int, sizes=(64, 32, 10)):
    rng = np.random.default_rng(0)
    model = demo.init_model(rng, sizes)
    x = rng.normal(size=(batch, sizes[0]))
    y = np.eye(sizes[-1])[rng.integers(0, sizes[-1], size=batch)]
    return model, x, y


def mlp() -> dict:
    """The demo MLP: one step on 4 devices (batch split) against the step on one device."""
    mesh = Mesh(np.array(jax.devices()), ("data",))
    model, x, y = _mlp_data(16)
    single = myia(mlp_step, backend="jax")
    dp = myia(mlp_step, backend="jax", mesh=mesh, batch_axis="data", batch_argnums=(1, 2))
    kept = myia(mlp_step, backend="jax", mesh=mesh, batch_argnums=(1, 2), keep_on_device=True)
    expected = single(model, x, y, 0.1)
    reference = myia(mlp_step, backend="numpy")(model, x, y, 0.1)
    got = dp(model, x, y, 0.1)
    on_device = kept(model, x, y, 0.1)
    # A second step from the new parameters (NumPy arrays again).
    expected2 = single(expected[1], x, y, 0.1)
    got2 = dp(got[1], x, y, 0.1)
    executable = dp.specialization(model, x, y, 0.1).executable
    placed = executable._leaves((model, x, y, 0.1))
    # grad and value_and_grad take the same options.
    vg = value_and_grad(demo.cost, "model", backend="jax", mesh=mesh, batch_argnums=(1, 2))
    vg_expected = value_and_grad(demo.cost, "model", backend="numpy")(model, x, y)
    per_example = myia(scores, backend="jax", mesh=mesh, batch_argnums=1, keep_on_device=True)
    out = per_example(model, x)
    # Training with the model kept on the devices: the record of jax.Arrays goes back in as
    # it is (no copy), on the mesh and on one device.
    kept_single = myia(mlp_step, backend="jax", keep_on_device=True)
    m_mesh, m_single, m_ref = model, model, model
    for _ in range(3):
        _, m_mesh = kept(m_mesh, x, y, 0.1)
        _, m_single = kept_single(m_single, x, y, 0.1)
        _, m_ref = single(m_ref, x, y, 0.1)
    again = kept.specialization(m_mesh, x, y, 0.1).executable._leaves((m_mesh, x, y, 0.1))
    host = myia(checked_scores, backend="jax")
    return {
        "kept_training_distance": _distance(m_mesh, m_ref),
        "kept_single_distance": _distance(m_single, m_ref),
        "kept_types": sorted({type(v).__name__ for v in _leaves(m_mesh)}),
        "kept_not_copied": all(a is b for a, b in zip(again, _leaves(m_mesh))),
        "host_with_device_arrays": _distance(host(m_single, x), myia(scores)(m_ref, x)),
        "host_reason": host.specialization(m_single, x).executable.reason,
        "devices": len(jax.devices()),
        "scores_spec": str(out.sharding.spec),
        "value_and_grad_distance": _distance(vg(model, x, y), vg_expected),
        "value_and_grad_all_reduce": "all-reduce"
        in vg.specialization(model, x, y).executable.compiled_text((model, x, y)),
        "scores_distance": _distance(out, myia(scores)(model, x)),
        "jitted": executable.jitted,
        "reason": executable.reason,
        "single_vs_numpy": _distance(expected, reference),
        "distance": _distance(got, expected),
        "distance_kept": _distance(on_device, expected),
        "distance_second_step": _distance(got2, expected2),
        "result_types": sorted({type(v).__name__ for v in _leaves(got)}),
        "kept_specs": _specs(on_device[1]),
        "argument_specs": [str(a.sharding.spec) for a in placed if isinstance(a, jax.Array)],
        "x_shards": [list(s.data.shape) for s in placed[-3].addressable_shards],
        "all_reduce": "all-reduce" in executable.compiled_text((model, x, y, 0.1)),
        "all_reduce_single": "all-reduce"
        in single.specialization(model, x, y, 0.1).executable.compiled_text((model, x, y, 0.1)),
    }


@dataclass
class RNN(ArithmeticData):
    """An Elman RNN reading a batch of sequences; the final state predicts the next value."""

    Wx: np.ndarray
    Wh: np.ndarray
    b: np.ndarray
    Wo: np.ndarray
    bo: np.ndarray


def rnn_cost(rnn, xs, y):
    """The mean squared error of the prediction of `y` after reading `xs` (batch, time, 1)."""
    h = np.zeros((xs.shape[0], rnn.Wh.shape[0]))
    for t in range(xs.shape[1]):
        h = np.tanh(xs[:, t] @ rnn.Wx + h @ rnn.Wh + rnn.b)
    error = h @ rnn.Wo + rnn.bo - y
    return np.mean(error * error)


def rnn_step(rnn, xs, y, lr):
    loss, drnn = value_and_grad(rnn_cost, "rnn")(rnn, xs, y)
    return loss, rnn - lr * drnn


def rnn() -> dict:
    """The RNN (a loop over time, differentiated through): 4 devices against one."""
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rng = np.random.default_rng(1)
    hidden, batch, length = 8, 16, 7
    model = RNN(
        rng.normal(size=(1, hidden)),
        rng.normal(size=(hidden, hidden)) / np.sqrt(hidden),
        np.zeros(hidden),
        rng.normal(size=(hidden, 1)),
        np.zeros(1),
    )
    s = np.sin(
        rng.uniform(0.1, 0.5, (batch, 1)) * np.arange(length + 1) + rng.uniform(0, 6, (batch, 1))
    )
    xs, y = s[:, :-1, None], s[:, -1:]
    single = myia(rnn_step, backend="jax")
    dp = myia(rnn_step, backend="jax", mesh=mesh, batch_argnums=(1, 2), keep_on_device=True)
    expected = single(model, xs, y, 0.1)
    got = dp(model, xs, y, 0.1)
    executable = dp.specialization(model, xs, y, 0.1).executable
    return {
        "jitted": executable.jitted,
        "reason": executable.reason,
        "single_vs_numpy": _distance(expected, myia(rnn_step)(model, xs, y, 0.1)),
        "distance": _distance(got, expected),
        "kept_specs": _specs(got[1]),
        "all_reduce": "all-reduce" in executable.compiled_text((model, xs, y, 0.1)),
        "while": "while" in executable.compiled_text((model, xs, y, 0.1)),
    }


def model_parallel() -> dict:
    """A 2 x 2 mesh: the batch split over "data", the hidden layer's weights over "model"."""
    mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ("data", "model"))
    model, x, y = _mlp_data(8)
    spec = demo.Sequential(
        (demo.Linear(P(None, "model"), P("model")), demo.Tanh(), demo.Linear(P("model"), None))
    )
    mp = myia(
        mlp_step,
        backend="jax",
        mesh=mesh,
        batch_axis="data",
        batch_argnums=(1, 2),
        arg_specs={0: spec},
        keep_on_device=True,
    )
    expected = myia(mlp_step, backend="jax")(model, x, y, 0.1)
    got = mp(model, x, y, 0.1)
    executable = mp.specialization(model, x, y, 0.1).executable
    placed = executable._leaves((model, x, y, 0.1))
    return {
        "jitted": executable.jitted,
        "distance": _distance(got, expected),
        "argument_specs": [str(a.sharding.spec) for a in placed if isinstance(a, jax.Array)],
        "W1_shards": [list(s.data.shape) for s in placed[0].addressable_shards],
    }


def errors() -> dict:
    """The mistakes a user can make with a mesh, and the messages they get."""
    from myia import MyiaError

    mesh = Mesh(np.array(jax.devices()), ("data",))
    model, x, y = _mlp_data(6)  # 6 rows: 4 devices cannot share them
    messages = {}
    attempts = {
        "uneven": lambda: myia(mlp_step, backend="jax", mesh=mesh, batch_argnums=(1, 2))(
            model, x, y, 0.1
        ),
        "axis": lambda: myia(mlp_step, backend="jax", mesh=mesh, batch_axis="batch"),
        "no_mesh": lambda: myia(mlp_step, backend="jax", batch_argnums=(1,)),
        "structure": lambda: myia(mlp_step, backend="jax", mesh=mesh, arg_specs={0: (P("data"),)})(
            model, x, y, 0.1
        ),
        "mesh_type": lambda: myia(mlp_step, backend="jax", mesh="data"),
        "position": lambda: myia(mlp_step, backend="jax", mesh=mesh, batch_argnums=(-3,))(
            model, x, y, 0.1
        ),
    }
    for name, attempt in attempts.items():
        try:
            attempt()
            messages[name] = None
        except MyiaError as exc:
            messages[name] = str(exc)
    return messages


def multiprocess(process_id: int, port: int) -> dict:
    """One of 2 processes, 2 host devices each: the demo step over the 4 devices of both.

    Each process passes its half of the batch as a global array
    (``jax.make_array_from_process_local_data``) and the whole batch as NumPy arrays; both
    steps must give, in every process, the step on one device of the whole batch.
    """
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
        coordinator_address=f"127.0.0.1:{port}",
        num_processes=2,
        process_id=process_id,
        initialization_timeout=60,
    )
    from jax.sharding import NamedSharding

    mesh = Mesh(np.array(jax.devices()), ("data",))
    model, x, y = _mlp_data(16)
    expected = myia(mlp_step, backend="numpy")(model, x, y, 0.1)
    dp = myia(mlp_step, backend="jax", mesh=mesh, batch_argnums=(1, 2))
    got = dp(model, x, y, 0.1)
    half = slice(8 * process_id, 8 * (process_id + 1))
    batch = NamedSharding(mesh, P("data"))
    with jax.enable_x64(True):
        gx = jax.make_array_from_process_local_data(batch, x[half])
        gy = jax.make_array_from_process_local_data(batch, y[half])
    got_local = dp(model, gx, gy, 0.1)
    # A result split like the batch comes back whole in each process.
    out = myia(scores, backend="jax", mesh=mesh, batch_argnums=1)(model, gx)
    executable = dp.specialization(model, x, y, 0.1).executable
    result = {
        "process": jax.process_index(),
        "processes": jax.process_count(),
        "devices": len(jax.devices()),
        "local_devices": len(jax.local_devices()),
        "jitted": executable.jitted,
        "distance": _distance(got, expected),
        "distance_local": _distance(got_local, expected),
        "scores_shape": list(out.shape),
        "scores_distance": _distance(out, myia(scores)(model, x)),
        "all_reduce": "all-reduce" in executable.compiled_text((model, x, y, 0.1)),
    }
    jax.distributed.shutdown()
    return result


if __name__ == "__main__":
    name, *args = sys.argv[1:]
    print("RESULT " + json.dumps(globals()[name](*map(int, args))), flush=True)

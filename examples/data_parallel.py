"""The demo's perceptron trained data-parallel over several devices, on the JAX backend.

The training step is the demo's (examples/demo.py), unchanged. Compiled with
``myia(step, backend="jax", mesh=mesh, batch_argnums=(1, 2))``, each batch of images and
labels is split along its first axis over the devices of the mesh, the parameters are
replicated on each (and stay there from step to step: ``keep_on_device=True``), and XLA
averages the gradients with an all-reduce. The same training is
run on one device: the two runs agree to rounding at every step.

Without accelerators, JAX is given ``--devices`` CPU "host devices" (4 by default): they show
that the program is partitioned and runs, not a speed-up (they share the machine's cores).
With GPUs, the mesh is made of all of them. docs/distributed.md says how to run on several
machines.

Run: ``python examples/data_parallel.py`` (``--help`` for the options)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from demo import init_model, load_data, predict  # noqa: E402
from demo import step as demo_step  # noqa: E402

from myia import myia  # noqa: E402


def make_mesh(devices: int):
    """A one-axis mesh ``("data",)`` of every device (`devices` CPU devices without GPUs)."""
    import jax
    from jax.sharding import Mesh

    # Only the CPU backend reads this, and only before JAX starts.
    jax.config.update("jax_num_cpu_devices", devices)
    return Mesh(np.array(jax.devices()), ("data",))


def main(
    devices: int = 4,
    epochs: int = 10,
    hidden: int = 64,
    batch_size: int = 128,
    lr: float = 0.5,
    seed: int = 0,
) -> dict:
    """Train on the mesh and on one device; print and return the losses and the accuracy."""
    mesh = make_mesh(devices)
    n = mesh.devices.size
    if batch_size % n:
        raise SystemExit(f"--batch-size {batch_size} must be a multiple of the {n} devices")
    # The model stays on the devices between steps (keep_on_device): only batches travel.
    parallel = myia(
        demo_step,
        backend="jax",
        mesh=mesh,
        batch_axis="data",
        batch_argnums=(1, 2),
        keep_on_device=True,
    )
    single = myia(demo_step, backend="jax")
    x_train, x_test, y_train, y_test = load_data(seed)
    onehot = np.eye(10)[y_train]
    rng = np.random.default_rng(seed)
    model = reference = init_model(rng, (64, hidden, 10))
    kinds = {str(d.platform) for d in mesh.devices.flat}
    print(
        f"{n} devices ({', '.join(sorted(kinds))}); perceptron 64-{hidden}-10; batches of "
        f"{batch_size} ({batch_size // n} per device); {epochs} epochs"
    )
    losses, gaps, times = [], [], []
    for epoch in range(epochs):
        order = rng.permutation(len(x_train))
        for i in range(len(x_train) // batch_size):
            batch = order[i * batch_size : (i + 1) * batch_size]
            x, y = x_train[batch], onehot[batch]
            start = time.perf_counter()
            loss, model = parallel(model, x, y, lr)
            loss = float(loss)  # a 0-d jax.Array: read back, the step done
            times.append(time.perf_counter() - start)
            loss1, reference = single(reference, x, y, lr)
            losses.append(loss)
            gaps.append(abs(loss - loss1))
        print(f"epoch {epoch + 1:2d}: loss {np.mean(losses[-10:]):.4f}")
    # The demo's `predict` on the JAX backend, which takes the model's jax.Arrays.
    accuracy = float(np.mean(myia(predict, backend="jax")(model, x_test) == y_test))
    executable = parallel.specialization(model, x, y, lr).executable
    all_reduce = "all-reduce" in executable.compiled_text((model, x, y, lr))
    record = {
        "devices": n,
        "losses": losses,
        "test_accuracy": accuracy,
        "largest_loss_gap": max(gaps),
        "all_reduce": all_reduce,
        "time_per_step": float(np.median(times[1:])),
    }
    print(f"test accuracy:            {accuracy:.2%}")
    print(f"largest loss difference:  {max(gaps):.1e} (the same steps on one device)")
    print(f"gradients all-reduced:    {all_reduce} (XLA's compiled program)")
    print(f"time per step:            {1e3 * record['time_per_step']:.2f} ms (median)")
    return record


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=4, help="CPU devices without GPUs")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(args.devices, args.epochs, args.hidden, args.batch_size, args.lr, args.seed)

"""What drawing random numbers inside a compiled step costs: the dropout MLP step, both ways.

``python benchmarks/rng_cost.py [ROUNDS]`` times the training step of
``examples/dropout_mlp.py`` (digits-sized: a batch of 32, 64 inputs, 64 hidden units, 10
classes) with its dropout masks drawn inside the compiled step from a
``numpy.random.Generator`` argument, and the same step given masks drawn in Python (the
drawing timed too), in turns, one thread. It prints the median time per step of each and
their ratio (the target is at most 1.1).
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from pathlib import Path

from benchmarks.threads import limit_threads


def _example():
    path = Path(__file__).resolve().parent.parent / "examples" / "dropout_mlp.py"
    spec = importlib.util.spec_from_file_location("myia_example_dropout_mlp", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def measure(rounds: int = 15, batch: int = 32, hidden: int = 64) -> dict[str, float]:
    """Median seconds per step with the masks drawn inside and outside the step."""
    import numpy as np

    ex = _example()
    data = np.random.default_rng(0)
    params = ex.init_params(data, (64, hidden, 10))
    x = data.random((batch, 64))
    y = np.eye(10)[data.integers(0, 10, batch)]
    inside_rng, outside_rng = np.random.default_rng(1), np.random.default_rng(1)

    def inside():
        return ex.step(params, x, y, inside_rng, 0.1, 0.2)

    def outside():
        keep = outside_rng.random((batch, hidden)) >= 0.2
        return ex.step_given_mask(params, x, y, keep, 0.1, 0.2)

    for f in (inside, outside):
        f()
    t0 = time.perf_counter()
    inside()
    per_batch = max(1, int(0.1 / max(time.perf_counter() - t0, 1e-7)))
    times: dict[str, list[float]] = {"inside": [], "outside": []}
    for _ in range(rounds):
        for name, f in (("inside", inside), ("outside", outside)):
            t0 = time.perf_counter()
            for _ in range(per_batch):
                f()
            times[name].append((time.perf_counter() - t0) / per_batch)
    return {name: statistics.median(ts) for name, ts in times.items()}


def main(argv: list[str]) -> None:
    limit_threads(["--threads", "1"])  # before NumPy is imported
    t = measure(int(argv[0]) if argv else 15)
    print(f"masks drawn inside the step    {t['inside'] * 1e6:9.1f} us")
    print(f"masks drawn outside, passed in {t['outside'] * 1e6:9.1f} us")
    print(f"ratio {t['inside'] / t['outside']:.2f} (target <= 1.1)")


if __name__ == "__main__":
    main(sys.argv[1:])

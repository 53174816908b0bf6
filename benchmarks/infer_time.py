"""How long Myia takes to parse, infer and specialize a 200-line program.

Run: ``python benchmarks/infer_time.py``. The program is generated: a chain of functions with
arithmetic, branches, loops, tuples and calls, about 200 lines in all.
"""

from __future__ import annotations

import importlib.util
import pathlib
import statistics
import sys
import tempfile
import time

TEMPLATE = """
def f{i}(x, y):
    a = x * {i}.5 + y
    b = (a, x - y)
    if a > y:
        c = b[0] * 2.0
    else:
        c = b[1] - 1.0
    k = 0
    while k < 3:
        c = c * 0.5 + a
        k = k + 1
    return {call}
"""


def make_program(n: int) -> str:
    parts = []
    for i in range(n):
        call = f"f{i + 1}(c, a) + y" if i + 1 < n else "c + a"
        parts.append(TEMPLATE.format(i=i, call=call))
    return "".join(parts)


def main() -> None:
    from myia.abstract import to_abstract
    from myia.frontend import parse
    from myia.infer.engine import Inferrer
    from myia.infer.specialize import specialize

    source = make_program(16)
    lines = len([line for line in source.splitlines() if line.strip()])
    path = pathlib.Path(tempfile.mkdtemp()) / "generated_program.py"
    path.write_text(source)
    times = {"parse": [], "infer": [], "specialize": []}
    for _ in range(5):
        spec = importlib.util.spec_from_file_location(f"gen{time.perf_counter_ns()}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        t0 = time.perf_counter()
        graph = parse(module.f0)
        t1 = time.perf_counter()
        inferrer = Inferrer()
        ctx, _ = inferrer.infer(graph, (to_abstract(1.0), to_abstract(2.0)))
        t2 = time.perf_counter()
        specialize(inferrer, ctx)
        t3 = time.perf_counter()
        times["parse"].append(t1 - t0)
        times["infer"].append(t2 - t1)
        times["specialize"].append(t3 - t2)
    print(f"program: {lines} lines, {len(inferrer.results)} contexts ({sys.version.split()[0]})")
    for k, v in times.items():
        print(f"  {k:<11} median {statistics.median(v) * 1000:7.1f} ms")
    total = sum(statistics.median(v) for v in times.values())
    print(f"  {'total':<11} median {total * 1000:7.1f} ms")


if __name__ == "__main__":
    main()

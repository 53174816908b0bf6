"""Compile time of higher-order derivatives, by order: a Markdown table of order × function.

Run: ``python benchmarks/compile_orders.py`` (options: ``--min-order``, ``--max-order``,
``--timeout`` per cell, ``--functions``).
Each cell is the first call of ``grad(grad(...grad(f)))`` (order k) at one point, in a fresh
child process: its seconds (compile and run; the import of Myia is not counted) and the
child's peak memory (resident set, MB, the interpreter and NumPy included); with ``--nodes``,
the number of nodes of the specialized program, before it is optimized. A run past the
timeout is shown as ``> S s``; a run that fails is shown as its error's class. The value of
each derivative is checked against its closed form.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def poly(x):
    return x**5 + 2.0 * x


def inverse(x):
    return 1.0 / x


def sin_sum(x):
    return math.sin(math.sin(x) + math.sin(x))


FUNCTIONS = {"x**5 + 2*x": poly, "1/x": inverse, "sin(sin(x) + sin(x))": sin_sum}
POINT = 0.7


def _poly_closed(k: int, x: float) -> float:
    coef = math.perm(5, k) if k <= 5 else 0
    out = coef * x ** (5 - k) if k <= 5 else 0.0
    return out + (2.0 if k == 1 else 0.0)


def _inverse_closed(k: int, x: float) -> float:
    return (-1) ** k * math.factorial(k) / x ** (k + 1)


CLOSED = {"x**5 + 2*x": _poly_closed, "1/x": _inverse_closed}


def _child(name: str, order: int) -> None:
    """Compile and run the derivative of `order` of function `name`; print a JSON line."""
    import resource

    import myia.api
    from myia import grad
    from myia.ir.analysis import reachable_graphs, toposort

    nodes = []
    optimize = myia.api.optimize

    def counting(graph):
        nodes.append(sum(len(toposort(h)) for h in reachable_graphs(graph)))
        return optimize(graph)

    myia.api.optimize = counting
    g = FUNCTIONS[name]
    for _ in range(order):
        g = grad(g)
    t0 = time.perf_counter()
    value = g(POINT)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    closed = CLOSED.get(name)
    ok = closed is None or math.isclose(value, closed(order, POINT), rel_tol=1e-9)
    out = {"seconds": seconds, "mb": peak, "nodes": nodes[0], "value": value, "exact": ok}
    print(json.dumps(out))


def measure(name: str, order: int, timeout: float) -> dict:
    """One cell of the table, run in a child process."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, str(order)]
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["failed"])[-1]
        return {"error": last.split(":")[0]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def cell(r: dict, show_nodes: bool) -> str:
    if "timeout" in r:
        return f"> {r['timeout']:.0f} s"
    if "error" in r:
        return r["error"]
    mark = "" if r["exact"] else " (wrong value)"
    nodes = f", {r['nodes']} nodes" if show_nodes else ""
    return f"{r['seconds']:.2f} s, {r['mb']:.0f} MB{nodes}{mark}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-order", type=int, default=1)
    ap.add_argument("--max-order", type=int, default=6)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per cell")
    ap.add_argument("--functions", default=",".join(FUNCTIONS))
    ap.add_argument(
        "--nodes", action="store_true", help="also the size of the program before optimization"
    )
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child[0], int(args.child[1]))
        return 0
    names = [n.strip() for n in args.functions.split(",") if n.strip()]
    print("| order | " + " | ".join(f"`{n}`" for n in names) + " |")
    print("| --- |" + " --- |" * len(names))
    given_up: set[str] = set()
    failed = False
    for k in range(args.min_order, args.max_order + 1):
        row = []
        for n in names:
            if n in given_up:
                row.append("—")
                continue
            r = measure(n, k, args.timeout)
            if "timeout" in r or "error" in r:
                given_up.add(n)  # the next order would be longer still
            failed = failed or "error" in r or not r.get("exact", True)
            row.append(cell(r, args.nodes))
        print(f"| {k} | " + " | ".join(row) + " |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

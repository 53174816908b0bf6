"""The tables: one per workload, a summary of ratios, the header; Markdown throughout."""

from __future__ import annotations

from typing import Any

from benchmarks.harness import Row, format_bytes, format_time

TITLES = {
    "scalar_loop": "scalar_loop",
    "newton_sqrt": "newton_sqrt",
    "tree_rnn": "tree_rnn",
    "rnn": "rnn",
    "mlp_step_small": "mlp_step (small)",
    "mlp_step_large": "mlp_step (large)",
    "gp_nll": "gp_nll",
}


def format_header(info: dict[str, Any]) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in info["versions"].items())
    lines = [
        f"# Myia benchmarks ({info['mode']} run)",
        "",
        f"- date: {info['date']}",
        f"- machine: {info['machine']}",
        f"- versions: {versions}",
        f"- Myia commit: {info['commit'] or 'unknown'}, backend: {info['backend']}",
        f"- command: `{info['command']}`",
        f"- threads per framework: {info.get('threads') or 'each framework default'}",
    ]
    if info["not_installed"]:
        lines.append(f"- not installed (skipped): {', '.join(info['not_installed'])}")
    return "\n".join(lines) + "\n"


def _ratio(x: float | None, y: float | None) -> str:
    if x is None or y is None or y == 0:
        return "—"
    r = x / y
    return f"{r:.3g}×" if r < 1000 else f"{r:.0f}×"


class _Footnotes:
    """Failures too long for a cell: the cell says ``fails: Type [n]``, the note says why."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def cell(self, row: Row, kind: str, failure: str) -> str:
        name = failure.split(":", 1)[0]
        self.lines.append(f"[{len(self.lines) + 1}] {row.label}, {kind}: fails: {failure}")
        name = name if name.isidentifier() else ""
        return f"fails: {name} [{len(self.lines)}]".replace("  ", " ")


def _time_cell(row: Row, kind: str, notes: _Footnotes) -> str:
    failure = getattr(row, f"{kind}_failure")
    if failure:
        return notes.cell(row, kind, failure)
    return format_time(getattr(row, kind))


def _first_cell(first: float | None, ready: float | None) -> str:
    """A first call's time, and when the code compiled in the background was ready."""
    if ready is None:
        return format_time(first)
    return f"{format_time(first)} (compiled: {format_time(ready)})"


def _check_cell(row: Row) -> str:
    if row.check == "reference":
        return f"reference (FD {row.error:.0e})" if row.error is not None else "reference"
    if row.check == "ok":
        return f"ok ({row.error:.0e})"
    return row.check


def format_section(section: dict[str, Any]) -> str:
    """Format the table of one workload, its failures and notes."""
    problem, rows = section["problem"], section["rows"]
    myia = next((r for r in rows if r.framework == "myia"), None)
    myia_grad = myia.grad if myia is not None else None
    extra = []
    if any(r.compilations is not None for r in rows):
        extra.append("compilations (grad)")
    if problem.params.get("new_input_column"):
        extra.append("grad, first call on a new shape")
    if any(r.memory for r in rows):
        extra.append(f"grad peak memory (n = {problem.params.get('memory_n', '?')})")
        extra.append("per iteration")
    head = [
        "framework",
        "primal median",
        "grad median",
        "grad / primal",
        "first call (primal)",
        "first call (grad)",
        "grad time vs Myia",
        "check",
        *extra,
    ]
    notes = _Footnotes()
    lines = [
        f"## {TITLES.get(section['workload'], section['workload'])}",
        "",
        problem.sizes,
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join(" --- " for _ in head) + "|",
    ]
    for r in rows:
        cells = [
            r.label,
            _time_cell(r, "primal", notes),
            _time_cell(r, "grad", notes),
            _ratio(r.grad, r.primal),
            _first_cell(r.primal_first, r.primal_ready),
            _first_cell(r.grad_first, r.grad_ready),
            _ratio(r.grad, myia_grad),
            _check_cell(r),
        ]
        if "compilations (grad)" in extra:
            cells.append("—" if r.compilations is None else str(r.compilations))
        if problem.params.get("new_input_column"):
            cells.append(format_time(r.new_input_grad))
        if any(x.memory for x in rows):
            cells.append(format_bytes(r.memory["peak"]) if r.memory else "—")
            cells.append(format_bytes(r.memory["per_iteration"]) if r.memory else "—")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.extend(notes.lines)
    for r in rows:
        if r.note:
            lines.append(f"- {r.label}: {r.note}")
    for note in problem.notes:
        lines.append(f"- {note}")
    return "\n".join(lines) + "\n"


def format_summary(sections: list[dict[str, Any]], frameworks: list[str]) -> str:
    """Two small tables: grad time against Myia's, and grad / primal, per framework."""
    peers = [f for f in frameworks if f != "myia"]
    out = ["## Summary", ""]
    out.append("Gradient time, peer / Myia (above 1: Myia is faster):")
    out.append("")
    out.append("| workload | Myia grad | " + " | ".join(peers) + " |")
    out.append("|" + "|".join(" --- " for _ in range(len(peers) + 2)) + "|")
    for s in sections:
        rows = {r.framework: r for r in reversed(s["rows"]) if r.main}
        myia = rows.get("myia")
        myia_grad = myia.grad if myia else None
        cells = [
            TITLES.get(s["workload"], s["workload"]),
            format_time(myia_grad) if myia_grad else "fails",
        ]
        for f in peers:
            r = rows.get(f)
            cells.append(_ratio(r.grad, myia_grad) if r else "—")
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append("grad / primal, per framework (the cost of reverse mode):")
    out.append("")
    out.append("| workload | " + " | ".join(frameworks) + " |")
    out.append("|" + "|".join(" --- " for _ in range(len(frameworks) + 1)) + "|")
    for s in sections:
        rows = {r.framework: r for r in reversed(s["rows"]) if r.main}
        cells = [TITLES.get(s["workload"], s["workload"])]
        for f in frameworks:
            r = rows.get(f)
            cells.append(_ratio(r.grad, r.primal) if r else "—")
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    for s in sections:
        for f in frameworks:
            rows = [r for r in s["rows"] if r.framework == f]
            main = next((r for r in rows if r.main), None)
            if len(rows) > 1 and main is not None:
                title = TITLES.get(s["workload"], s["workload"])
                out.append(f'- {title}, {f}: the row "{main.label}" (see its table)')
    return "\n".join(out) + "\n"


def format_markdown(
    info: dict[str, Any], sections: list[dict[str, Any]], frameworks: list[str]
) -> str:
    """Format the whole report, as written by ``--markdown``."""
    parts = [format_header(info)]
    parts.append(
        "Medians of steady-state calls (after warm-up); first calls include parsing, "
        "inference, differentiation, optimization and compilation (Myia), tracing and "
        "compilation (JAX `jit`); where Myia's backend compiles in a thread while the first "
        "calls run the host code (`jax`, `native`), the time from the first call until that "
        'code was ready is in parentheses. "grad time vs Myia" is the peer\'s gradient time '
        "divided by Myia's. Every framework's results were checked against the hand-written NumPy "
        "gradient (itself checked against central differences) before timing.\n"
    )
    parts.extend(format_section(s) for s in sections)
    parts.append(format_summary(sections, frameworks))
    parts.append(f"Total run time: {info.get('duration_s', '?')} s.\n")
    return "\n".join(parts)

"""The comparison report of a sweep: ``sweep.md`` and a self-contained ``sweep.html`` (PNG charts embedded).

The lead says which variants changed the game; then one row per variant (kind, exit code, the job's key
metrics, its findings or its error line) and one bar chart per key metric across the variants, each with
its reading. Templates: ``results/templates/sweep.*.j2``. Reads only the records the sweep wrote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from results.records import atomic_write_text
from results.report import render

MAX_CHARTS = 8


def _pyplot() -> Any:
    # lazy: matplotlib is imported only to draw a report
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def metric_names(records: list[dict[str, Any]]) -> list[str]:
    """Every key metric some record has, in first-seen order."""
    names: list[str] = []
    for r in records:
        for k in r.get("summary") or {}:
            if k not in names:
                names.append(k)
    return names


def plot_metric(records: list[dict[str, Any]], metric: str, path: Path) -> Path | None:
    rows = [(r["name"], float(r["summary"][metric])) for r in records if metric in (r.get("summary") or {})]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(rows) + 1.4))
    names = [n for n, _ in rows]
    vals = [v for _, v in rows]
    ax.barh(names, vals, color="#4c78a8")
    ax.invert_yaxis()
    ax.set_title(metric)
    for i, v in enumerate(vals):
        ax.text(v, i, f" {v:.3g}", va="center", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _cell(x: Any) -> str:
    if x is None or x == "":
        return "—"
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def chart_reading(records: list[dict[str, Any]], metric: str) -> str:
    """One line: which variants sit highest and lowest on ``metric``."""
    rows = [(r["name"], float(r["summary"][metric])) for r in records if metric in (r.get("summary") or {})]
    if not rows:
        return "No variant measured it."
    hi = max(rows, key=lambda kv: kv[1])
    lo = min(rows, key=lambda kv: kv[1])
    if len(rows) == 1:
        return f"Only {hi[0]} measured it ({hi[1]:.4g})."
    if hi[1] == lo[1]:
        return f"Every variant has {metric} = {hi[1]:.4g}."
    return f"Highest: {hi[0]} ({hi[1]:.4g}); lowest: {lo[0]} ({lo[1]:.4g}); {len(rows)} variant(s) measured."


def build_sweep_report(out_dir: Path, sweep: dict[str, Any], records: list[dict[str, Any]]) -> tuple[Path, Path]:
    """Write ``sweep.md`` and ``sweep.html`` in ``out_dir``; return their paths."""
    charts_dir = out_dir / "charts"
    charts_dir.mkdir(parents=True, exist_ok=True)
    metrics = metric_names(records)
    title = f"Sweep: {sweep['ruleset']} · {sweep['job']} · {len(records)} variant(s) · backend {sweep['backend']}"
    rows = []
    for r in records:
        notes = [f"error: {r['error']}"] if r.get("error") else list(r.get("findings") or [])
        rows.append(
            {
                "name": r["name"],
                "variant": str(r.get("variant", r["name"])),
                "kind": str((r.get("variant_meta") or {}).get("kind") or "—"),
                "exit": r["exit_code"],
                "cls": "bad" if r["exit_code"] == 2 else "changed" if r["exit_code"] == 1 else "",
                "cells": [_cell((r.get("summary") or {}).get(m)) for m in metrics],
                "notes": notes or ["nothing to report"],
            }
        )
    charts = []
    for m in metrics[:MAX_CHARTS]:
        c = plot_metric(records, m, charts_dir / f"m{metrics.index(m)}.png")
        if c:
            charts.append(
                {"title": m, "path": c, "rel": str(c.relative_to(out_dir)), "reading": chart_reading(records, m)}
            )
    changed = [r for r in rows if r["exit"] == 1]
    failed = [r for r in rows if r["exit"] == 2]
    ctx = {
        "title": title,
        "sweep": sweep,
        "metrics": metrics,
        "rows": rows,
        "charts": charts,
        "lead": (
            f"{len(changed)} of {len(rows)} variant(s) changed the game"
            + (f" ({', '.join(r['name'] for r in changed)})" if changed else "")
            + (f"; {len(failed)} failed to run ({', '.join(r['name'] for r in failed)})" if failed else "")
            + "."
        ),
    }
    md_path = out_dir / "sweep.md"
    atomic_write_text(md_path, render("sweep.md.j2", **ctx))
    html_path = out_dir / "sweep.html"
    atomic_write_text(html_path, render("sweep.html.j2", **ctx))
    return md_path, html_path

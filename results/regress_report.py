"""The comparison page of ``rulebreaker regress``: ``regress.md`` and a self-contained ``regress.html``.

It reads the regress verdict as ``rulebreaker regress --json`` prints it (``{"exit_code", "scenarios": [...]}``,
one :meth:`training.regress.RegressResult.to_json` per scenario) and shows, per scenario, what changed in
plain words first, then every metric with its paired interval and verdict, and one chart of the primary
metrics' changes with its reading. Reads records only; plays nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from results.records import atomic_write_text
from results.report import _pyplot, _save, render


def _rate(m: dict[str, Any]) -> bool:
    return m.get("kind") == "rate"


def metric_sentence(m: dict[str, Any]) -> str:
    """One metric's change in words, as the terminal prints it."""
    lo, hi = m["ci"]
    if _rate(m):
        fmt = lambda x: f"{100 * x:.1f}%"  # noqa: E731
        ch = f"{100 * m['change']:+.1f} points [{100 * lo:+.1f}, {100 * hi:+.1f}]"
    else:
        fmt = lambda x: f"{x:.3g}"  # noqa: E731
        ch = f"{m['change']:+.3g} [{lo:+.3g}, {hi:+.3g}]"
    words = m.get("description") or m["metric"]
    if m["change"] == 0:
        return f"{words} stayed at {fmt(m['baseline'])}"
    move = "rose" if m["change"] > 0 else "fell"
    return f"{words} {move} from {fmt(m['baseline'])} to {fmt(m['variant'])} ({ch})"


def plot_changes(metrics: list[dict[str, Any]], title: str, path: Path) -> Path | None:
    rows = [m for m in metrics if m.get("primary")] or metrics[:12]
    if not rows:
        return None
    fig, ax = _pyplot().subplots(figsize=(7, 0.36 * len(rows) + 1.6))
    scale = [100.0 if _rate(m) else 1.0 for m in rows]
    vals = [s * m["change"] for s, m in zip(scale, rows, strict=True)]
    errs = [
        [s * (m["change"] - m["ci"][0]) for s, m in zip(scale, rows, strict=True)],
        [s * (m["ci"][1] - m["change"]) for s, m in zip(scale, rows, strict=True)],
    ]
    colors = {"changed": "#e45756", "undecided": "#f2cf5b", "unchanged": "#9d9d9d"}
    ax.barh([m["metric"] for m in rows], vals, xerr=errs, color=[colors.get(m["verdict"], "#9d9d9d") for m in rows])
    ax.axvline(0, color="black", lw=0.8)
    ax.invert_yaxis()
    ax.set_title(title)
    ax.set_xlabel("change, variant − baseline (win rates in points; 95% CI)")
    return _save(fig, path)


def _cell(m: dict[str, Any], x: float, signed: bool = False) -> str:
    if _rate(m):
        return f"{100 * x:+.1f}" if signed else f"{100 * x:.1f}%"
    return f"{x:+.3g}" if signed else f"{x:.3g}"


def build_regress_report(out_dir: Path, data: dict[str, Any]) -> tuple[Path, Path]:
    """Write ``regress.md`` and ``regress.html`` in ``out_dir`` from a regress verdict; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    scenarios = []
    for i, sc in enumerate(data.get("scenarios", [])):
        metrics = sc.get("metrics", [])
        changed = [m for m in metrics if m["verdict"] == "changed"]
        chart = plot_changes(metrics, f"{sc['ruleset']} {sc['scenario']}: primary metrics", out_dir / f"regress{i}.png")
        if changed:
            big = max(changed, key=lambda m: abs(m["change"]) * (100 if _rate(m) else 1))
            reading = f"{len(changed)} metric(s) changed; the largest: {metric_sentence(big)}."
        else:
            reading = "No metric moved beyond the minimum effect: every bar's interval is inside it or undecided."
        rows = [
            {
                "metric": m["metric"] + (" *" if m.get("primary") else ""),
                "words": m.get("description") or m["metric"],
                "baseline": _cell(m, m["baseline"]),
                "variant": _cell(m, m["variant"]),
                "change": _cell(m, m["change"], True),
                "ci": f"[{_cell(m, m['ci'][0], True)}, {_cell(m, m['ci'][1], True)}]",
                "verdict": m["verdict"],
                "games": str(m.get("games", "")) or "—",
            }
            for m in metrics
        ]
        scenarios.append(
            {
                "sc": sc,
                "changed": [metric_sentence(m) for m in changed],
                "rows": rows,
                "chart": chart,
                "reading": reading,
            }
        )
    ctx = {"data": data, "scenarios": scenarios, "exit_code": data.get("exit_code", 0)}
    html_path = out_dir / "regress.html"
    atomic_write_text(html_path, render("regress.html.j2", **ctx))
    md_path = out_dir / "regress.md"
    atomic_write_text(md_path, render("regress.md.j2", **ctx))
    return md_path, html_path

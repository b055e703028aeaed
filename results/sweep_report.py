"""The comparison report of a sweep: ``sweep.md`` and a self-contained ``sweep.html`` (PNG charts embedded).

One row per variant (kind, exit code, the job's key metrics, its findings or its error line) and one bar
chart per key metric across the variants. Reads only the records the sweep wrote.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

from results.records import atomic_write_text

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
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def build_sweep_report(out_dir: Path, sweep: dict[str, Any], records: list[dict[str, Any]]) -> tuple[Path, Path]:
    """Write ``sweep.md`` and ``sweep.html`` in ``out_dir``; return their paths."""
    charts_dir = out_dir / "charts"
    charts_dir.mkdir(parents=True, exist_ok=True)
    metrics = metric_names(records)
    title = f"Sweep: {sweep['ruleset']} · {sweep['job']} · {len(records)} variant(s) · backend {sweep['backend']}"
    md = [f"# {title}", "", f"Seed {sweep['seed']}; every variant played on the same seeds.", ""]
    head = ["variant", "kind", "exit", *metrics]
    md.append("| " + " | ".join(head) + " |")
    md.append("|" + "---|" * len(head))
    for r in records:
        kind = (r.get("variant_meta") or {}).get("kind", "")
        vals = [_cell((r.get("summary") or {}).get(m, "")) for m in metrics]
        md.append("| " + " | ".join([r["name"], str(kind), str(r["exit_code"]), *vals]) + " |")
    md.append("")
    md.append("## Findings and errors per variant")
    for r in records:
        md.append(f"### {r['name']} (exit {r['exit_code']})")
        if r.get("error"):
            md.append(f"- error: {r['error']}")
        for f in r.get("findings") or []:
            md.append(f"- {f}")
        if not r.get("error") and not r.get("findings"):
            md.append("- nothing to report")
        md.append("")
    charts = [
        c for m in metrics[:MAX_CHARTS] if (c := plot_metric(records, m, charts_dir / f"m{metrics.index(m)}.png"))
    ]
    md.append("## Charts")
    md.extend(f"![]({c.relative_to(out_dir)})" for c in charts)
    md_path = out_dir / "sweep.md"
    atomic_write_text(md_path, "\n".join(md) + "\n")

    esc = html.escape
    rows_html = []
    for r in records:
        kind = (r.get("variant_meta") or {}).get("kind", "")
        cls = "bad" if r["exit_code"] == 2 else "changed" if r["exit_code"] == 1 else ""
        cells = "".join(f"<td>{esc(_cell((r.get('summary') or {}).get(m, '')))}</td>" for m in metrics)
        notes = [f"error: {r['error']}"] if r.get("error") else list(r.get("findings") or [])
        note_html = "<br>".join(esc(n) for n in notes) or "—"
        rows_html.append(
            f"<tr class='{cls}'><td title='{esc(r['variant'])}'>{esc(r['name'])}</td><td>{esc(str(kind))}</td>"
            f"<td>{r['exit_code']}</td>{cells}<td class='notes'>{note_html}</td></tr>"
        )
    imgs = "".join(
        f"<img alt='{esc(c.stem)}' src='data:image/png;base64,{base64.b64encode(c.read_bytes()).decode()}'>"
        for c in charts
    )
    page = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{esc(title)}</title><style>body{{font-family:sans-serif;margin:2em}}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}"
        "tr.bad{background:#fdd}tr.changed{background:#ffd}td.notes{font-size:90%}img{display:block;margin:1em 0}"
        "</style></head><body>"
        f"<h1>{esc(title)}</h1><p>Seed {sweep['seed']}; every variant played on the same seeds.</p>"
        "<table><tr>"
        + "".join(f"<th>{esc(h)}</th>" for h in [*head, "findings / error"])
        + "</tr>"
        + "".join(rows_html)
        + f"</table><h2>Charts</h2>{imgs}</body></html>"
    )
    html_path = out_dir / "sweep.html"
    atomic_write_text(html_path, page)
    return md_path, html_path

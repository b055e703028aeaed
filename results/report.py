"""Discovery reports: ``report.md`` and a self-contained ``report.html`` (images embedded), matplotlib PNGs.

The report leads with the findings in plain words, then the matchup matrix, usage, restricted play,
rule sensitivity, learning curves, resource trajectories and narrated example games.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

import markdown
import numpy as np

from results.records import atomic_write_text


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend."""
    # lazy: matplotlib takes a good part of a second to import; the CLI loads it only to draw a report
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> Path:
    plt = _pyplot()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_matchups(rr: dict[str, Any], path: Path) -> Path | None:
    m = rr["metrics"]
    agents = rr["agents"]
    if "matrix" in m:
        grid = np.full((len(agents), len(agents)), np.nan)
        for i, a in enumerate(agents):
            for j, b in enumerate(agents):
                cell = m["matrix"].get(a, {}).get(b)
                if cell:
                    grid[i, j] = 100 * cell["win_rate"]
        fig, ax = _pyplot().subplots(figsize=(1.2 * len(agents) + 2.5, 1.0 * len(agents) + 1.5))
        im = ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=100)
        ax.set_xticks(range(len(agents)), agents, rotation=30, ha="right")
        ax.set_yticks(range(len(agents)), agents)
        for i in range(len(agents)):
            for j in range(len(agents)):
                if not np.isnan(grid[i, j]):
                    ax.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=9)
        ax.set_title("win rate of row against column (%)")
        fig.colorbar(im, ax=ax)
        return _save(fig, path)
    vals = rr["values"]
    fig, ax = _pyplot().subplots(figsize=(6, 0.5 * len(vals) + 1.5))
    names = list(vals)
    means = [vals[a]["value"] for a in names]
    errs = [[vals[a]["value"] - vals[a]["low"] for a in names], [vals[a]["high"] - vals[a]["value"] for a in names]]
    ax.barh(names, means, xerr=errs, color="#4c78a8")
    ax.set_xlabel("mean return (95% CI)")
    ax.set_title("agents on the same deals")
    return _save(fig, path)


def plot_bars(
    rows: list[tuple[str, float, float, float]], title: str, xlabel: str, path: Path, band: float | None = None
) -> Path | None:
    if not rows:
        return None
    fig, ax = _pyplot().subplots(figsize=(7, 0.38 * len(rows) + 1.6))
    names = [r[0] for r in rows]
    vals = [r[1] for r in rows]
    errs = [[r[1] - r[2] for r in rows], [r[3] - r[1] for r in rows]]
    colors = ["#e45756" if r[3] < 0 else "#54a24b" if r[2] > 0 else "#9d9d9d" for r in rows]
    ax.barh(names, vals, xerr=errs, color=colors)
    ax.axvline(0, color="black", lw=0.8)
    if band:
        ax.axvspan(-band, band, color="#dddddd", alpha=0.5, zorder=0)
    ax.invert_yaxis()
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    return _save(fig, path)


def plot_usage(usage: dict[str, dict[str, float]], path: Path) -> Path | None:
    rows = [(f"{ctx}: {opt}", share) for ctx, opts in usage.items() for opt, share in list(opts.items())[:8]]
    if not rows:
        return None
    fig, ax = _pyplot().subplots(figsize=(7, 0.3 * len(rows) + 1.5))
    ax.barh([r[0] for r in rows], [100 * r[1] for r in rows], color="#72b7b2")
    ax.invert_yaxis()
    ax.set_xlabel("share of decisions in its context (%)")
    ax.set_title("what the strongest agent chooses, per decision context")
    return _save(fig, path)


def plot_resources(resources: dict[str, Any], path: Path) -> Path | None:
    curves = {k: v["curve"] for k, v in resources.items() if any(x is not None for x in v["curve"])}
    if not curves:
        return None
    fig, axes = _pyplot().subplots(1, len(curves), figsize=(3.2 * len(curves) + 0.5, 2.8), squeeze=False)
    for ax, (k, c) in zip(axes[0], curves.items(), strict=True):
        xs = [10 * i for i, v in enumerate(c) if v is not None]
        ax.plot(xs, [v for v in c if v is not None], marker="o")
        ax.set_title(k)
        ax.set_xlabel("% of game")
    fig.suptitle("resource levels under the strongest agent's play")
    return _save(fig, path)


def _pct(x: float) -> str:
    return f"{100 * x:+.1f}"


def build_report(
    out_dir: Path,
    result: dict[str, Any],
    sections: dict[str, Any],
    examples: list[dict[str, Any]],
    timings: dict[str, float],
) -> tuple[Path, Path]:
    """Write report.md and report.html (plus PNGs) into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    images: list[tuple[str, Path]] = []
    rr = sections["round_robin"]
    p = plot_matchups(rr, out_dir / "matchups.png")
    if p:
        images.append(("Matchups", p))
    usage = sections.get("usage", {})
    p = plot_usage(usage, out_dir / "usage.png")
    if p:
        images.append(("Option usage", p))
    restricted = sections.get("restricted")
    if restricted:
        strong = restricted["strong"]
        rows = [
            (g, r["value_change"]["value"], r["value_change"]["low"], r["value_change"]["high"])
            for g, r in restricted["agents"][strong]["options"].items()
        ]
        p = plot_bars(
            rows,
            f"restricted play: value change of {strong} when the option is forbidden",
            "value change per game (95% CI)",
            out_dir / "restricted.png",
            result["thresholds"]["dead_option_band"],
        )
        if p:
            images.append(("Restricted play", p))
    sens = sections.get("sensitivity", {}).get("knobs", [])
    if sens:
        rows = []
        for k in sens:
            prim = {m: r for m, r in k["metrics"].items() if m.startswith(("win[", "return["))}
            if not prim:
                continue
            m, r = max(prim.items(), key=lambda kv: abs(kv[1]["change"]))
            rows.append((f"{k['key']}={k['value']}", r["change"], r["low"], r["high"]))
        p = plot_bars(
            rows,
            "rule sensitivity: largest change of a win rate / return",
            "change (95% CI)",
            out_dir / "sensitivity.png",
            result["thresholds"]["dead_rule_band"],
        )
        if p:
            images.append(("Rule sensitivity", p))
    rl = sections.get("rl") or {}
    curve = rl.get("learning_curve_png")
    if curve and Path(curve).exists():
        images.append(("Learning curve", Path(curve)))
    structure = sections.get("structure", {})
    p = plot_resources(structure.get("resources", {}), out_dir / "resources.png")
    if p:
        images.append(("Resource trajectories", p))

    md = _markdown(result, sections, examples, timings, images, out_dir)
    md_path = out_dir / "report.md"
    atomic_write_text(md_path, md)
    html_path = out_dir / "report.html"
    atomic_write_text(html_path, _html(md, result, images, out_dir))
    return md_path, html_path


def _finding_lines(result: dict[str, Any]) -> list[str]:
    out = []
    for f in result["findings"]:
        ex = f" (example game `{f['evidence']}`)" if f["evidence"] else ""
        out.append(f"- **{f['severity'].upper()} · {f['kind']} · {f['subject']}** — {f['summary']}{ex}")
    return out or ["- No finding cleared its threshold with its whole 95% interval."]


def _strength_lead(result: dict[str, Any]) -> list[str]:
    """The strength certificate in one paragraph before the findings (provisional when not converged)."""
    st = result.get("strength")
    if not st or not st.get("agent"):
        return []
    gap = "not solvable here" if st["exact_gap"] is None else f"{st['exact_gap']:+.4f}"
    lo, hi = st.get("budget_doubling_ci", [st["budget_doubling_delta"], st["budget_doubling_delta"]])
    head = (
        f"Strength certificate of `{st['agent']}`, the subject of every verdict: doubling its simulations "
        f"changes its value by {st['budget_doubling_delta']:+.4f} [{lo:+.4f}, {hi:+.4f}] on the same "
        f"{st['deals']} deals; exact gap {gap}; best-response edge "
        f"{'n/a (' + st['best_response_note'] + ')' if st['best_response_edge'] is None else st['best_response_edge']}."
    )
    if st["converged"]:
        return [head + " Converged at this budget.", ""]
    return [
        head + f" **Not converged: the findings below are provisional, by up to {st['provisional_by']:.3f} of value "
        "per game** (a larger budget may move them).",
        "",
    ]


def _verdict_lines(sections: dict[str, Any]) -> list[str]:
    """Restricted play with the re-optimizing subject: forbid and force per option group, with verdicts."""
    v = sections.get("verdicts")
    if not v:
        return []
    L = [
        f"## Verdicts (subject `{v['subject']}`, re-optimizing under each restriction)",
        f"Each row: {v['deals']} paired games per restriction at {v['simulations']} simulations per decision "
        f"({v['games']} games in all, {v['seconds']} s). Subject value {v['value']['value']:.3f} "
        f"[{v['value']['low']:.3f}, {v['value']['high']:.3f}]; its edge over its base `{v['base']}` "
        f"{v['over_base']['value']:+.3f} [{v['over_base']['low']:+.3f}, {v['over_base']['high']:+.3f}]. "
        "Core mechanics (declared by the scenario) are marked *core*.",
        "",
        "| option | verdict | chosen (share in context) | forbidden: value change | forced: value change |",
        "|---|---|---|---|---|",
    ]
    core = set(v.get("core_options", []))

    def cell(x: dict[str, float] | None, what: str) -> str:
        return what if x is None else f"{x['value']:+.3f} [{x['low']:+.3f}, {x['high']:+.3f}]"

    order = sorted(v["options"].items(), key=lambda kv: (kv[0] in core, kv[1]["verdict"] == "never_legal", kv[0]))
    for g, r in order:
        name = f"{g} *core*" if g in core else g
        L.append(
            f"| {name} | {r['verdict'].replace('_', ' ')} | {r['chosen']} ({100 * r['usage_in_context']:.0f}%) | "
            f"{cell(r['forbid'], 'not played (' + (r.get('forbid_skip') or 'never legal') + ')')} | "
            f"{cell(r['force'], 'not played (' + (r.get('force_skip') or 'never legal') + ')')} |"
        )
    L.append("")
    for g, r in order:
        if r.get("instead"):
            parts = []
            for ctx, u in r["instead"].items():
                top = ", ".join(f"{o} {100 * x:.0f}%" for o, x in list(u.items())[:4])
                parts.append(f"in `{ctx}`: {top or 'no decision'}")
            L.append(f"- With `{g}` forbidden the subject plays " + "; ".join(parts) + ".")
    L.append("")
    return L


def _build_lines(sections: dict[str, Any]) -> list[str]:
    b = sections.get("builds")
    if not b:
        return []
    L = [
        "## Builds",
        f"{b['tried']} whole builds tried, {b['games_per_build']} games each on common deals ({b['player']}). "
        f"What the best share: {b['shared']}.",
        "",
        "| rank | build | value | 95% CI |",
        "|---|---|---|---|",
    ]
    for tag, rows in (("best", b["best"]), ("worst", b["worst"])):
        for i, r in enumerate(rows, 1):
            build = ", ".join(f"{f} {die}" for f, die in r["build"].items())
            L.append(f"| {tag} {i} | {build} | {r['value']:.3f} | [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}] |")
    L.append("")
    return L


def _markdown(
    result: dict[str, Any],
    sections: dict[str, Any],
    examples: list[dict[str, Any]],
    timings: dict[str, float],
    images: list[tuple[str, Path]],
    out_dir: Path,
) -> str:
    L: list[str] = []
    L.append(f"# rulebreaker discovery: {result['ruleset']} / {result['scenario']}")
    L.append("")
    L.append(
        f"Rules hash `{result['rules_hash']}`"
        + (f" (variant `{result['variant']}`)" if result.get("variant") else " (rules as written)")
        + f", seed {result['seed']}, budget {result['budget']}, {timings.get('total', 0):.0f} s."
    )
    L.append("")
    L.append("## Findings")
    L.extend(_strength_lead(result))
    L.extend(_finding_lines(result))
    L.append("")
    L.extend(_verdict_lines(sections))
    L.extend(_build_lines(sections))
    rr = sections["round_robin"]
    L.append("## Matchups")
    L.append(f"{rr['games_per_matchup']} games per matchup, seats rotated, paired deals. Values (95% CI):")
    L.append("")
    L.append("| agent | value | 95% CI |")
    L.append("|---|---|---|")
    for a, v in rr["values"].items():
        L.append(f"| {a} | {v['value']:.3f} | [{v['low']:.3f}, {v['high']:.3f}] |")
    L.append("")
    if sections.get("rl"):
        rl = sections["rl"]
        L.append("## Trained agent")
        L.append(f"{rl.get('summary', '')}")
        L.append("")
    ex = sections.get("exact")
    if ex:
        L.append("## Exact optimum")
        if ex.get("tractable"):
            L.append(
                f"Solved exactly ({ex['states']:,} positions, {ex['seconds']} s): optimal value "
                f"{ex['optimal_value']:.4f}. Each agent's exact value and its gap to the optimum:"
            )
            L.append("")
            L.append("| agent | exact value | gap to optimum |")
            L.append("|---|---|---|")
            for a, g in ex["agents"].items():
                L.append(f"| {a} | {g['value']:.4f} | {g['gap']:.4f} |")
        else:
            L.append(f"Not solved: {ex.get('reason', '')}")
        L.append("")
    restricted = sections.get("restricted")
    if restricted:
        strong = restricted["strong"]
        L.append(f"## Restricted play (strongest agent: {strong})")
        L.append("| option | value change | 95% CI | usage in context | example |")
        L.append("|---|---|---|---|---|")
        for g, r in restricted["agents"][strong]["options"].items():
            v = r["value_change"]
            usage = f"{100 * r['usage_in_context']:.1f}%" if r.get("available", True) else "never legal"
            L.append(f"| {g} | {v['value']:+.4f} | [{v['low']:+.4f}, {v['high']:+.4f}] | {usage} | `{r['example']}` |")
        L.append("")
        base_value = sections["round_robin"]["values"].get(strong, {}).get("value")
        for g, r in restricted["agents"][strong]["options"].items():
            v = r["value_change"]
            if not r.get("replayed", True) or (v["low"] == 0 and v["high"] == 0):
                continue
            rel = f", {100 * -v['value'] / abs(base_value):.1f}% of its value" if base_value else ""
            L.append(
                f"- Forbidding `{g}` costs {strong} {-v['value']:.4f} [{-v['high']:.4f}, {-v['low']:.4f}] "
                f"per game{rel}."
            )
        L.append("")
    sens = sections.get("sensitivity", {}).get("knobs", [])
    if sens:
        L.append("## Rule sensitivity")
        L.append("| knob | value (as written) | largest win-rate/return change | 95% CI | game length change |")
        L.append("|---|---|---|---|---|")
        for k in sens:
            prim = {m: r for m, r in k["metrics"].items() if m.startswith(("win[", "return["))}
            if prim:
                m, r = max(prim.items(), key=lambda kv: abs(kv[1]["change"]))
                ln = k["metrics"].get("length", {})
                L.append(
                    f"| {k['key']} | {k['value']} ({k['was']}) | {_pct(r['change'])} pts on {m} | "
                    f"[{_pct(r['low'])}, {_pct(r['high'])}] | {ln.get('change', 0):+.2f} |"
                )
        L.append("")
    vw = sections.get("variant_vs_written")
    if vw:
        L.append("## The variant against the rules as written")
        L.append(f"Changed keys: {', '.join(vw['changed_keys']) or 'none'}.")
        L.append("")
        L.append("| metric | as written | change | 95% CI |")
        L.append("|---|---|---|---|")
        for m, r in vw["metrics"].items():
            L.append(f"| {m} | {r['baseline']:.3f} | {r['change']:+.4f} | [{r['low']:+.4f}, {r['high']:+.4f}] |")
        L.append("")
    st = sections.get("structure", {})
    if st:
        L.append("## Seats, lengths, resources")
        if "seats" in st:
            L.append(
                "Share of decisive games won per seat: "
                + ", ".join(
                    f"seat {k} {100 * v['value']:.1f}% [{100 * v['low']:.1f}, {100 * v['high']:.1f}]"
                    for k, v in st["seats"].items()
                )
                + "."
            )
        ln = st["length"]
        L.append(
            f"Game length: mean {ln['mean']:.1f}, median {ln['median']}, max {ln['max']} decisions; "
            f"ended by: {', '.join(f'{k} {v}' for k, v in ln['reasons'].items())}."
        )
        for k, v in st.get("resources", {}).items():
            rr_ = v["relative_rise"]
            L.append(
                f"- {k}: relative change first→last decision {100 * rr_['value']:+.1f}% "
                f"[{100 * rr_['low']:+.1f}, {100 * rr_['high']:+.1f}]"
            )
        L.append("")
    for title, img in images:
        L.append(f"### {title}")
        L.append(f"![{title}]({img.name if img.parent == out_dir else img})")
        L.append("")
    if examples:
        L.append("## Example games")
        for ex in examples:
            L.append(f"### `{ex['id']}` — {ex['title']}")
            L.append(f"Replay: `{ex['replay']}`")
            L.append("```")
            L.extend(ex["log"][:80])
            if len(ex["log"]) > 80:
                L.append(f"… ({len(ex['log']) - 80} more lines)")
            L.append("```")
            L.append("")
    L.append("## Timings")
    L.append(", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
    return "\n".join(L) + "\n"


def _html(md: str, result: dict[str, Any], images: list[tuple[str, Path]], out_dir: Path) -> str:
    """The markdown report as one self-contained HTML page (images embedded as data URIs)."""

    body = markdown.markdown(md, extensions=["tables", "fenced_code"])
    for _, img in images:
        ref = img.name if img.parent == out_dir else str(img)
        data = base64.b64encode(img.read_bytes()).decode()
        body = body.replace(f'src="{html.escape(ref)}"', f'src="data:image/png;base64,{data}"')
    for sev in ("HIGH", "MEDIUM", "LOW", "INFO"):
        body = body.replace(f"<strong>{sev} ·", f"<strong class='{sev.lower()}'>{sev} ·")
    title = html.escape(f"rulebreaker: {result['ruleset']} / {result['scenario']}")
    style = (
        "body{font-family:system-ui,sans-serif;max-width:62rem;margin:2rem auto;padding:0 1rem;color:#222}"
        "li{margin:.4rem 0}.high{color:#b00}.medium{color:#b60}.low{color:#555}.info{color:#777}"
        "table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.2rem .5rem;"
        "font-size:.9rem}pre{background:#f6f6f6;padding:.6rem;overflow-x:auto;font-size:.8rem}"
        "img{max-width:100%}"
    )
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
        f"<style>{style}</style></head><body>\n{body}\n</body></html>\n"
    )

"""``rulebreaker report RUN_DIR``: re-render a run's page from its records, without playing.

A discovery run (``findings.json``, ``sections.json``, ``games.json``) gets its ``report.html`` and
``report.md`` again; example games without a step-through trace are traced first (the one thing played:
:mod:`training.replays`). The folder of ``discover RULESET`` (one sub-folder per scenario) renders each. A sweep folder
(``sweep.json`` and ``records/``) gets ``sweep.html``; a folder with
a ``regress.json`` (the output of ``rulebreaker regress --json``) gets ``regress.html``.
``--screenshot`` keeps the first screen as ``<page>_screenshot.png`` beside the page when Chromium is there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from envs.core.errors import UserError
from results.records import CorruptRecordError, read_record
from results.regress_report import build_regress_report
from results.report import TOP_FINDINGS, build_report, screenshot
from results.sweep_report import build_sweep_report
from training.cli.common import out as console
from training.cli.common import say
from training.discover import BUDGETS
from training.replays import write_replays
from training.sweep import load_records


def register(app: typer.Typer) -> None:
    app.command("report")(report_cmd)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path} is missing") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"{path} is corrupt: {e}") from None


def render_discovery(run_dir: Path, replays: bool = True) -> tuple[Path, Path]:
    """The discovery page of ``run_dir`` from its records (tracing missing example games when ``replays``)."""
    result = _read_json(run_dir / "findings.json")
    sections = _read_json(run_dir / "sections.json") if (run_dir / "sections.json").exists() else {}
    games = _read_json(run_dir / "games.json") if (run_dir / "games.json").exists() else {}
    try:
        record = read_record(run_dir)
    except CorruptRecordError:
        record = {}
    timings = record.get("timings") or {}
    budget = BUDGETS.get(str(result.get("budget")))
    limit = max(budget.example_games if budget else 0, TOP_FINDINGS)  # every card of "What to look at" gets its game
    traces = write_replays(run_dir, result.get("findings", []), games, limit) if replays and games else None
    return build_report(run_dir, result, sections, [], timings, replays=traces)


def render_sweep(run_dir: Path) -> tuple[Path, Path]:
    summary = _read_json(run_dir / "sweep.json")
    order = {str(v): i for i, v in enumerate(summary.get("variants") or [])}
    records = sorted(load_records(run_dir).values(), key=lambda r: order.get(str(r["variant"]), len(order)))
    return build_sweep_report(run_dir, summary, records)


def render_regress(run_dir: Path) -> tuple[Path, Path]:
    return build_regress_report(run_dir, _read_json(run_dir / "regress.json"))


def render_run(run_dir: Path, replays: bool = True) -> tuple[Path, Path]:
    """Whichever page ``run_dir`` holds the records of."""
    if (run_dir / "findings.json").exists():
        return render_discovery(run_dir, replays)
    if (run_dir / "sweep.json").exists():
        return render_sweep(run_dir)
    if (run_dir / "regress.json").exists():
        return render_regress(run_dir)
    raise UserError(
        f"{run_dir} holds no findings.json (discover), sweep.json (sweep) or regress.json (regress --json) to render"
    )


def report_cmd(
    run_dir: Annotated[Path, typer.Argument(help="A discover, sweep or regress run folder.")],
    shot: Annotated[
        bool, typer.Option("--screenshot", help="Also save the first screen as a PNG beside the page (needs Chromium).")
    ] = False,
    no_replays: Annotated[
        bool, typer.Option("--no-replays", help="Do not trace missing example games (nothing is played).")
    ] = False,
) -> None:
    """Re-render a run's report page from its records (discover, sweep or regress), without playing."""
    if not run_dir.is_dir():
        raise UserError(f"{run_dir} is not a folder")
    folders = [run_dir]
    if not any((run_dir / f).exists() for f in ("findings.json", "sweep.json", "regress.json")):
        # `discover RULESET` without a scenario writes one sub-folder per scenario
        folders = sorted(p.parent for p in run_dir.glob("*/findings.json")) or folders
    for folder in folders:
        md, html = render_run(folder, replays=not no_replays)
        say(console, f"report: {md}  ·  {html}")
        if shot:
            png = screenshot(html, html.with_name(f"{html.stem}_screenshot.png"))
            say(console, f"screenshot: {png}" if png else "screenshot: skipped (no Chromium on this machine)")

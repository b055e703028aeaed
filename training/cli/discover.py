"""``rulebreaker discover``: the main job — findings, report, example games."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from envs.core.config import config_dict, load_config
from envs.core.errors import UserError
from envs.core.registry import get_ruleset
from results.records import atomic_write_json, write_record
from results.report import TOP_FINDINGS, build_report, screenshot
from training.cli.common import (
    SEED_MAX,
    TRAIN_SEED_MAX,
    check_out_dir,
    clamp_workers,
    fresh_run_dir,
    out,
    say,
)
from training.cli.progress import stage_progress
from training.discover import BUDGETS, make_discovery, rl_stage, run_discovery
from training.replays import write_replays

SEVERITIES = ("info", "low", "medium", "high")


def register(app: typer.Typer) -> None:
    app.command("discover")(discover_cmd)


def replay_command(run_dir: Path, gid: str) -> str:
    return f"rulebreaker play --replay {run_dir / gid}"


def discover_cmd(
    ruleset: str,
    scenario: Annotated[str | None, typer.Argument(help="One scenario; default every scenario.")] = None,
    rules: Annotated[Path | None, typer.Option("--rules", help="A variant TOML to examine.")] = None,
    budget: Annotated[
        str, typer.Option("--budget", help="quick (≤3 min per scenario), standard (≤15), deep.")
    ] = "quick",
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Output folder; default runs/<stamp>-<ruleset>-discover.")
    ] = None,
    fail_on: Annotated[
        str | None, typer.Option("--fail-on", help="Exit 1 if a finding has this severity or higher.")
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", min=0, max=SEED_MAX, help="Base seed (at most 2**31-1 with RL training).")
    ] = 0,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Worker processes (at most the cores).")] = 2,
    no_rl: Annotated[bool, typer.Option("--no-rl", help="Skip RL training (personas only).")] = False,
) -> None:
    """Find dominant strategies and degenerate rules; write findings.json, report.md and report.html."""
    if budget not in BUDGETS:
        raise UserError(f"unknown budget '{budget}'; valid: {', '.join(BUDGETS)}")
    if fail_on is not None and fail_on not in SEVERITIES:
        raise UserError(f"unknown severity '{fail_on}' for --fail-on; valid: {', '.join(SEVERITIES)}")
    if not no_rl and seed > TRAIN_SEED_MAX:
        raise UserError(f"--seed {seed} is too large for RL training (at most {TRAIN_SEED_MAX}); or add --no-rl")
    rs = get_ruleset(ruleset)
    scenarios = [rs.scenario(scenario).name] if scenario else list(rs.scenarios)
    load_config(rs, rules)  # a bad rules file is refused before any folder is made
    workers = clamp_workers(workers)
    if out_dir is not None:
        root = check_out_dir(out_dir, "discover")
        for sc in scenarios if len(scenarios) > 1 else []:
            check_out_dir(root / sc, "discover")
    else:
        root = fresh_run_dir(rs.name, "all" if len(scenarios) > 1 else scenarios[0], "discover")
    worst = -1
    for sc in scenarios:
        run_dir = Path(root) / sc if len(scenarios) > 1 else Path(root)
        run_dir.mkdir(parents=True, exist_ok=True)
        with stage_progress(f"discover {rs.name} {sc}") as prog:
            d = make_discovery(rs, sc, rules, BUDGETS[budget], seed, workers, run_dir, progress=prog, rl=not no_rl)
            result = run_discovery(d, None if no_rl else rl_stage)
        failed: OSError | None = None
        try:
            atomic_write_json(run_dir / "findings.json", result)
            atomic_write_json(run_dir / "games.json", d.games)
            atomic_write_json(run_dir / "sections.json", d.sections)
            n_replays = max(BUDGETS[budget].example_games, TOP_FINDINGS)
            replays = write_replays(run_dir, result["findings"], d.games, n_replays)
            md, html = build_report(run_dir, result, d.sections, [], d.timings, replays=replays)
            screenshot(html, run_dir / "report_screenshot.png")  # None without Chromium
            write_record(
                run_dir,
                command="discover",
                ruleset=rs.name,
                scenario=sc,
                config=config_dict(d.config),
                rules_hash=result["rules_hash"],
                seed=seed,
                metrics={"findings": len(result["findings"])},
                extra={"budget": budget, "variant": str(rules) if rules else None, "timings": d.timings},
            )
        except OSError as e:  # the findings are printed all the same, then exit 2 naming the path
            failed = e
        out.rule(escape(f"{rs.name} {sc}: {len(result['findings'])} finding(s), {d.timings['total']:.0f} s"))
        for f in result["findings"]:
            out.print(escape(f"[{f['severity']}] {f['kind']} · {f['subject']}: {f['summary']}"), highlight=False)
        if not result["findings"]:
            out.print("No finding cleared its threshold.")
        if failed is not None:
            where = failed.filename or run_dir
            raise UserError(f"the findings above could not be written to {where}: {failed.strerror or failed}")
        say(out, f"report: {md}  ·  {html}")
        for f in result["findings"]:
            worst = max(worst, SEVERITIES.index(f["severity"]))
    if fail_on is not None and worst >= SEVERITIES.index(fail_on):
        sys.exit(1)

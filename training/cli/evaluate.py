"""``rulebreaker evaluate``: the matchup matrix of a scenario (the job: training.evaluate)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from agents.registry import agent_names, make_agent
from envs.core.config import config_dict, config_hash
from results.records import new_run_dir, write_record
from results.tables import print_evaluation
from training.cli.common import RulesOpt, SeedOpt, err, out, ruleset_and_config
from training.cli.progress import progress_bar
from training.evaluate import evaluate as run_eval
from training.evaluate import matchup_jobs


def register(app: typer.Typer) -> None:
    app.command()(evaluate)


def evaluate(
    ruleset: str,
    scenario: str,
    agents: Annotated[str | None, typer.Option("--agents", help="Comma-separated agents; default all.")] = None,
    games: Annotated[int, typer.Option("--games", min=1, help="Games per matchup.")] = 200,
    seed: SeedOpt = 0,
    rules: RulesOpt = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Worker processes.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print metrics as JSON.")] = False,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Run directory for the record.")] = None,
) -> None:
    """Matchup matrix with Wilson 95% intervals, seat advantage, game lengths, reasons games ended."""
    rs, cfg = ruleset_and_config(ruleset, rules)
    rs.scenario(scenario)
    names = [a.strip() for a in agents.split(",")] if agents else agent_names(rs.name)
    for n in names:
        make_agent(rs.name, n, scenario)  # validates names before any game is played
    total = len(matchup_jobs(rs, scenario, cfg, names, games, seed)[0])
    with progress_bar(total, f"{rs.name} {scenario}") as advance:
        ev = run_eval(rs, scenario, cfg, names, games, seed, workers=workers, progress=advance)
    metrics = ev.metrics()
    run_dir = out_dir or new_run_dir(rs.name, scenario, kind="evaluate")
    path = write_record(
        Path(run_dir),
        command="evaluate",
        ruleset=rs.name,
        scenario=scenario,
        config=config_dict(cfg),
        rules_hash=config_hash(cfg),
        seed=seed,
        metrics=metrics,
        extra={"agents": names, "games": games, "games_detail": [r.to_dict() for r in ev.records]},
    )
    if as_json:
        print(
            json.dumps(
                {
                    "ruleset": rs.name,
                    "scenario": scenario,
                    "rules_hash": config_hash(cfg),
                    "seed": seed,
                    "agents": names,
                    "games": games,
                    "metrics": metrics,
                },
                indent=2,
                sort_keys=True,
            )
        )
        err.print(f"record: {path}")
        return
    print_evaluation(out, metrics, names, title=f"{rs.name} {scenario} (rules {config_hash(cfg)}, seed {seed})")
    out.print(f"record: {path}")

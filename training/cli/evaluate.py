"""``rulebreaker evaluate``: the matchup matrix of a scenario (the job: training.evaluate)."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer

from agents.registry import agent_names, make_agent
from envs.core.config import config_dict, config_hash
from envs.core.errors import UserError
from results.records import write_record
from results.tables import print_evaluation
from training.cli.common import (
    RulesOpt,
    SeedOpt,
    check_out_dir,
    clamp_workers,
    err,
    fresh_run_dir,
    out,
    ruleset_and_config,
    say,
    sigterm_as_ctrl_c,
    split_agents,
)
from training.cli.progress import progress_bar
from training.evaluate import MAX_GAMES, check_games, total_games
from training.evaluate import evaluate as run_eval


def register(app: typer.Typer) -> None:
    app.command()(evaluate)


def evaluate(
    ruleset: str,
    scenario: str,
    agents: Annotated[str | None, typer.Option("--agents", help="Comma-separated agents; default all.")] = None,
    games: Annotated[
        int, typer.Option("--games", min=1, help=f"Games per matchup (at most {MAX_GAMES:,} games in all).")
    ] = 200,
    seed: SeedOpt = 0,
    rules: RulesOpt = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Worker processes (at most the cores).")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print metrics as JSON.")] = False,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Run directory for the record.")] = None,
) -> None:
    """Matchup matrix with Wilson 95% intervals, seat advantage, game lengths, reasons games ended.

    Ctrl-C or SIGTERM stops the games: the finished ones are summarised and written (exit 130 / 143).
    """
    rs, cfg = ruleset_and_config(ruleset, rules)
    sc = rs.scenario(scenario)
    names = split_agents(agents) if agents is not None else agent_names(rs.name)
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:  # a matchup of an agent with itself would be counted under one name twice
        raise UserError(f"--agents names {', '.join(twice)} more than once; give each agent once")
    for n in names:
        make_agent(rs.name, n, scenario)  # validates names before any game is played
    check_games(sc.players(cfg), len(names), games)
    workers = clamp_workers(workers)
    run_dir = (
        check_out_dir(out_dir, "evaluate") if out_dir is not None else fresh_run_dir(rs.name, scenario, "evaluate")
    )
    total = total_games(sc.players(cfg), len(names), games)
    with sigterm_as_ctrl_c() as term, progress_bar(total, f"{rs.name} {scenario}") as advance:
        ev = run_eval(rs, scenario, cfg, names, games, seed, workers=workers, progress=advance)
    stop_code = 128 + (term[0] if term else signal.SIGINT)  # 130 after Ctrl-C, 143 after SIGTERM
    if not ev.records:
        say(err, "interrupted before any game finished: nothing to summarise or write")
        sys.exit(stop_code)
    metrics = ev.metrics()
    if ev.interrupted:
        metrics["interrupted"] = True
    title = f"{rs.name} {scenario} (rules {config_hash(cfg)}, seed {seed})"
    if ev.interrupted:
        title += f" — interrupted after {len(ev.records)}/{total} games"
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
    else:
        print_evaluation(out, metrics, names, title=title)  # names and title shown as plain text
    try:
        path = write_record(
            run_dir,
            command="evaluate",
            ruleset=rs.name,
            scenario=scenario,
            config=config_dict(cfg),
            rules_hash=config_hash(cfg),
            seed=seed,
            metrics=metrics,
            extra={"agents": names, "games": games, "games_detail": [r.to_dict() for r in ev.records]},
        )
    except OSError as e:
        where = e.filename or run_dir
        raise UserError(f"the results above could not be written to {where}: {e.strerror or e}") from None
    say(err if as_json else out, f"record: {path}")
    if ev.interrupted:
        say(err, f"interrupted: {len(ev.records)} of {total} games finished; they are summarised and written above")
        sys.exit(stop_code)

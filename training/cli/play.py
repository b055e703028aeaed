"""``rulebreaker play``: one narrated game, turn by turn, or the replay of a game a run recorded."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from agents.registry import parse_agents
from envs.core.config import config_dict
from envs.core.errors import UserError
from envs.core.registry import get_ruleset
from training.cli.common import RulesOpt, SeedOpt, out, ruleset_and_config
from training.runner import GameJob, play_game


def register(app: typer.Typer) -> None:
    app.command()(play)


def play(
    ruleset: Annotated[str | None, typer.Argument(help="Ruleset name.")] = None,
    scenario: Annotated[str | None, typer.Argument(help="Scenario name.")] = None,
    agents: Annotated[str, typer.Option("--agents", help="Comma-separated agent per seat.")] = "random",
    seed: SeedOpt = 0,
    rules: RulesOpt = None,
    replay: Annotated[str | None, typer.Option("--replay", help="RUN_DIR/GAME_ID of a game a run recorded.")] = None,
) -> None:
    """Play one narrated game, turn by turn (or replay a recorded game with --replay)."""
    if replay is not None:
        job = replay_job(replay)
        rec = play_game(job)
        names = list(job.agents)
        out.rule(f"replay {replay}: {job.ruleset} {job.scenario} — seed {job.seed} — " + " vs ".join(names))
    else:
        if ruleset is None or scenario is None:
            raise UserError("play needs RULESET SCENARIO (or --replay RUN_DIR/GAME_ID)")
        rs, cfg = ruleset_and_config(ruleset, rules)
        sc = rs.scenario(scenario)
        n = sc.players(cfg)
        names = [a.strip() for a in agents.split(",") if a.strip()]
        if len(names) == 1:
            names = names * n
        if len(names) != n:
            raise UserError(f"{scenario} has {n} seats; --agents names {len(names)} ({agents})")
        policies = parse_agents(rs.name, ",".join(names), scenario)
        job = GameJob(rs.name, scenario, config_dict(cfg), tuple(names), seed, narrate=True)
        rec = play_game(job, policies)
        out.rule(f"{rs.name} {scenario} — seed {seed} — " + " vs ".join(names))
    for line in rec.log:
        out.print(line, highlight=False, markup=False)
    winner = "nobody" if rec.winner is None else f"seat {rec.winner} ({names[rec.winner]})"
    out.rule(f"winner: {winner}; ended by {rec.reason} after {rec.length} decisions; returns {list(rec.returns)}")


def replay_job(replay: str) -> GameJob:
    """The narrated job of ``RUN_DIR/GAME_ID``, read from the run's ``games.json``."""
    path = Path(replay)
    games_file, gid = path.parent / "games.json", path.name
    if not games_file.exists():
        raise UserError(f"no recorded games at {games_file} (expected RUN_DIR/GAME_ID)")
    try:
        games = json.loads(games_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"{games_file} is corrupt: {e}") from None
    if gid not in games:
        raise UserError(f"no game '{gid}' in {games_file}; recorded: {', '.join(list(games)[:10])}…")
    g = games[gid]
    get_ruleset(g["ruleset"])
    job = GameJob(
        g["ruleset"],
        g["scenario"],
        g["config"],
        tuple(g["agents"]),
        int(g["seed"]),
        forbid=tuple((int(s), str(o)) for s, o in g.get("forbid", [])),
    )
    return replace(job, narrate=True)

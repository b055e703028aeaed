"""``rulebreaker play``: one narrated game, turn by turn, or the replay of a game a run recorded."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from agents.registry import parse_agents
from envs.core.config import config_dict, validate_config
from envs.core.errors import UserError
from envs.core.registry import get_ruleset
from training.cli.common import SEED_MAX, RulesOpt, SeedOpt, out, ruleset_and_config, shown, split_agents
from training.runner import GameJob, play_game

MAX_GAMES_FILE = 512 * 2**20
"""A games.json larger than this is refused before it is read."""


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
        out.rule(shown(f"replay {replay}: {job.ruleset} {job.scenario} — seed {job.seed} — " + " vs ".join(names)))
    else:
        if ruleset is None or scenario is None:
            raise UserError("play needs RULESET SCENARIO (or --replay RUN_DIR/GAME_ID)")
        rs, cfg = ruleset_and_config(ruleset, rules)
        sc = rs.scenario(scenario)
        n = sc.players(cfg)
        names = split_agents(agents)
        if len(names) == 1:
            names = names * n
        if len(names) != n:
            raise UserError(f"{scenario} has {n} seats; --agents names {len(names)} ({agents})")
        policies = parse_agents(rs.name, ",".join(names), scenario)
        job = GameJob(rs.name, scenario, config_dict(cfg), tuple(names), seed, narrate=True)
        rec = play_game(job, policies)
        out.rule(shown(f"{rs.name} {scenario} — seed {seed} — " + " vs ".join(names)))
    for line in rec.log:
        out.print(line, highlight=False, markup=False)
    winner = "nobody" if rec.winner is None else f"seat {rec.winner} ({names[rec.winner]})"
    out.rule(
        shown(f"winner: {winner}; ended by {rec.reason} after {rec.length} decisions; returns {list(rec.returns)}")
    )


REPLAY_KEYS = {"ruleset": str, "scenario": str, "config": dict, "agents": list, "seed": int}
"""What a recorded game must hold (``forbid`` is optional), and the JSON type of each."""


def replay_job(replay: str) -> GameJob:
    """The narrated job of ``RUN_DIR/GAME_ID``, read from the run's ``games.json``; a malformed entry is refused."""
    path = Path(replay)
    if path.suffix == ".json" and path.is_file() and path.parent.name == "replays":  # a report's trace file
        if path.stat().st_size > MAX_GAMES_FILE:
            raise UserError(f"{path} is larger than {MAX_GAMES_FILE // 2**20} MiB; not a replay trace")
        try:
            trace = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
            raise UserError(f"{path} is corrupt: {e}") from None
        return replace(_job_of(trace, f"replay trace {path}"), narrate=True)
    games_file, gid = path.parent / "games.json", path.name
    if not games_file.is_file():
        raise UserError(f"no recorded games at {games_file} (expected RUN_DIR/GAME_ID)")
    if games_file.stat().st_size > MAX_GAMES_FILE:
        raise UserError(f"{games_file} is larger than {MAX_GAMES_FILE // 2**20} MiB; not a games file of a run")
    try:
        games = json.loads(games_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise UserError(f"{games_file} is corrupt: {e}") from None
    if not isinstance(games, dict):
        raise UserError(
            f"{games_file} is not a games file (expected an object of game id -> game, got a {_kind(games)})"
        )
    if gid not in games:
        raise UserError(f"no game '{gid}' in {games_file}; recorded: {', '.join(list(games)[:10])}…")
    return replace(_job_of(games[gid], f"{games_file} game '{gid}'"), narrate=True)


def _kind(value: object) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", int: "number", float: "number"}.get(
        type(value), type(value).__name__
    )


def _job_of(g: object, where: str) -> GameJob:
    if not isinstance(g, dict):
        raise UserError(f"{where} is a {_kind(g)}, not a recorded game (an object with {', '.join(REPLAY_KEYS)})")
    config = g.get("config")
    if isinstance(config, list) and all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in config):
        g = {**g, "config": dict(config)}  # a config recorded as its (key, value) items
    missing = [k for k in REPLAY_KEYS if k not in g]
    if missing:
        raise UserError(f"{where} lacks {', '.join(missing)}; a recorded game has {', '.join(REPLAY_KEYS)}")
    for key, kind in REPLAY_KEYS.items():
        if not isinstance(g[key], kind) or isinstance(g[key], bool):
            raise UserError(f"{where}: '{key}' is a {_kind(g[key])} ({g[key]!r:.40}), expected a {_kind(kind())}")
    if not 0 <= g["seed"] <= SEED_MAX:
        raise UserError(f"{where}: seed {g['seed']} is outside 0..2**64-1")
    if not g["agents"] or not all(isinstance(a, str) and a.strip() for a in g["agents"]):
        raise UserError(f"{where}: 'agents' must be a list of agent names")
    rs = get_ruleset(g["ruleset"])
    sc = rs.scenario(g["scenario"])
    cfg = validate_config(rs.config_model, g["config"], f"{where} config")
    seats = sc.players(cfg)
    if len(g["agents"]) != seats:
        raise UserError(f"{where}: {len(g['agents'])} agents for the {seats} seats of {rs.name} {sc.name}")
    forbid = g.get("forbid", [])
    if not isinstance(forbid, list):
        raise UserError(f"{where}: 'forbid' is a {_kind(forbid)}, expected a list of [seat, option group]")
    pairs: list[tuple[int, str]] = []
    for item in forbid:
        ok = isinstance(item, list) and len(item) == 2 and type(item[0]) is int and isinstance(item[1], str)
        if not ok:
            raise UserError(f"{where}: forbid entry {item!r:.40} is not [seat, option group]")
        seat, group = item
        if not 0 <= seat < seats:
            raise UserError(f"{where}: forbid names seat {seat}; {rs.name} {sc.name} has seats 0..{seats - 1}")
        if group not in sc.option_groups:
            valid = ", ".join(sc.option_groups) or "none (this scenario has no option groups)"
            raise UserError(f"{where}: unknown option group '{group}' in forbid; valid: {valid}")
        pairs.append((seat, group))
    return GameJob(
        rs.name, sc.name, config_dict(cfg), tuple(a.strip() for a in g["agents"]), g["seed"], forbid=tuple(pairs)
    )

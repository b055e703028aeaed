"""Example games as step-through traces: the job behind the report's "Games to watch".

A run records its games by value in ``games.json`` (ruleset, scenario, config, agents, seed, restrictions);
``rulebreaker play --replay RUN_DIR/GAME_ID`` replays one. This job plays the same game once with
:func:`training.runner.play_game`, then steps through its recorded actions again on a fresh state with the
same chance stream, and writes what a reader needs at each step: who acted and what, the narration that
followed (rolls marked as dice), every seat's resources after the step and who is ahead.
Traces go to ``RUN_DIR/replays/<game id>.json`` with an ``index.json`` listing them in the report's order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from envs.core.config import validate_config
from envs.core.dice import Rng, seed_for
from envs.core.game import CHANCE, TERMINAL, Event, State
from envs.core.registry import get_ruleset
from results.records import atomic_write_json
from results.report import TOP_FINDINGS, order_findings
from training.runner import CHANCE_STREAM, GameJob, play_game

REPLAYS_DIR = "replays"
DICE_KEYS = frozenset({"dice", "faces", "successes", "attack", "defense", "total", "outcome", "net", "roll"})
"""Event data keys that mark a narrated roll (shown as dice in the replay)."""
LEAD_RESOURCES = ("hp", "health", "heart", "score", "points", "progress", "influence", "goal_boxes", "willpower")
"""Resources that say who is ahead, in order of preference (the first one every seat has decides)."""


def job_of(game: Mapping[str, Any]) -> GameJob:
    """The narrated job of one ``games.json`` entry (what ``play --replay`` plays)."""
    return GameJob(
        game["ruleset"],
        game["scenario"],
        game["config"],
        tuple(game["agents"]),
        int(game["seed"]),
        narrate=True,
        forbid=tuple((int(s), str(o)) for s, o in game.get("forbid", [])),
    )


def _is_dice(e: Event) -> bool:
    return bool(DICE_KEYS & set(e.data)) or e.kind in ("roll", "check")


def _resources(state: State) -> list[dict[str, float]]:
    return [{k: round(float(v), 3) for k, v in state.resources(s).items()} for s in range(state.num_players)]


def ahead(resources: Sequence[Mapping[str, float]], names: Sequence[str]) -> str:
    """Who is ahead on the first lead resource every seat has ("" for one seat or no such resource)."""
    if len(resources) < 2:
        return ""
    for key in LEAD_RESOURCES:
        if all(key in r for r in resources):
            vals = [r[key] for r in resources]
            best = max(vals)
            leaders = [names[i] for i, v in enumerate(vals) if v == best]
            shown = ", ".join(f"{names[i]} {v:g}" for i, v in enumerate(vals))
            if len(leaders) == len(vals):
                return f"Level on {key} ({shown})."
            return f"{' and '.join(leaders)} ahead on {key} ({shown})."
    return ""


def trace_game(job: GameJob, title: str = "", replay: str = "") -> dict[str, Any]:
    """Play ``job`` and return its step-by-step trace (see the module docstring)."""
    rec = play_game(job)
    ruleset = get_ruleset(job.ruleset)
    scenario = ruleset.scenario(job.scenario)
    config = job.config if isinstance(job.config, dict) else dict(job.config)
    state = scenario.new_game(validate_config(ruleset.config_model, config, "replay config"))
    n = state.num_players
    names = [scenario.player_names[s] if s < len(scenario.player_names) else f"seat {s}" for s in range(n)]
    movers = [f"{names[s]} ({job.agents[s]})" for s in range(n)]
    chance = Rng(seed_for(job.seed, CHANCE_STREAM))
    steps: list[dict[str, Any]] = []
    seen = 0

    def close(who: str, action: str) -> None:
        nonlocal seen
        events = [{"text": e.text, "dice": _is_dice(e)} for e in state.log[seen:]]
        seen = len(state.log)
        res = _resources(state)
        steps.append({"n": len(steps), "who": who, "action": action, "events": events, "resources": res})
        steps[-1]["ahead"] = ahead(res, names)

    pending: tuple[str, str] = ("", "the game begins")
    actions = list(rec.actions)
    for _ in range(10_000_000):
        player = state.current_player()
        if player == TERMINAL:
            break
        if player == CHANCE:
            state.apply_chance(state.sample_chance(chance))
            continue
        close(*pending)
        if not actions:
            raise RuntimeError(f"the replay of {job.scenario} seed {job.seed} ran out of recorded actions")
        seat, action = actions.pop(0)
        if seat != player:
            raise RuntimeError(f"the replay diverged: seat {player} to move, the record says seat {seat}")
        pending = (movers[seat], state.action_label(action))
        state.apply_action(action)
    close(*pending)
    out = state.outcome()
    assert out is not None
    if out.winner != rec.winner or out.returns != rec.returns:
        raise RuntimeError("the replay diverged from the played game")
    winner = "a draw" if out.winner is None else f"{movers[out.winner]} wins"
    steps[-1]["ahead"] = f"Game over: {winner} ({out.reason.value}), returns {list(out.returns)}."
    return {
        "id": "",
        "title": title,
        "replay": replay,
        "ruleset": job.ruleset,
        "scenario": job.scenario,
        "agents": list(job.agents),
        "seed": job.seed,
        "forbid": [list(f) for f in job.forbid],
        "config": job.config if isinstance(job.config, dict) else dict(job.config),
        "players": names,
        "outcome": {
            "winner": out.winner,
            "reason": out.reason.value,
            "returns": list(out.returns),
            "length": rec.length,
            "text": f"{winner} ({out.reason.value}) after {rec.length} decisions",
        },
        "log": list(rec.log),
        "steps": steps,
    }


def plain_agent(spec: str) -> str:
    """An agent spec in words: ``search:greedy@16#force=aim`` is "search:greedy@16, forced to aim wherever legal"."""
    base, *parts = spec.split("#")
    phrases = []
    for part in parts:
        mode, _, group = part.partition("=")
        if mode == "force":
            phrases.append(f"forced to {group.replace('_', ' ')} wherever legal")
        elif mode == "forbid":
            phrases.append(f"never allowed to {group.replace('_', ' ')}")
        else:
            base += f"#{part}"
    return ", ".join([base, *phrases])


def _same_game(trace: Mapping[str, Any], game: Mapping[str, Any]) -> bool:
    """Whether a stored trace is of this ``games.json`` entry (a re-run may reuse a game id for another game)."""
    keys = ("ruleset", "scenario", "agents", "seed", "config")
    return all(trace.get(k) == game.get(k) for k in keys) and trace.get("forbid", []) == game.get("forbid", [])


def wanted_games(findings: Sequence[Mapping[str, Any]], games: Mapping[str, Any], limit: int) -> list[tuple[str, str]]:
    """(game id, title) of the example games to trace: each finding's evidence once, else the first game."""
    wanted: list[tuple[str, str]] = []
    for f in order_findings(findings):  # the report's order: its first cards get their games
        ev = f.get("evidence")
        if ev and ev in games and ev not in [w[0] for w in wanted]:
            wanted.append((ev, f"{f['kind'].replace('_', ' ')}: {f['subject']}"))
    if not wanted and games:
        wanted.append((next(iter(games)), "a round-robin game"))
    return wanted[:limit]


def write_replays(
    run_dir: Path,
    findings: Sequence[Mapping[str, Any]],
    games: Mapping[str, Any],
    limit: int = TOP_FINDINGS,
    only_missing: bool = True,
) -> list[dict[str, Any]]:
    """Trace the run's example games into ``run_dir/replays`` and return the traces (in the report's order)."""
    folder = run_dir / REPLAYS_DIR
    traces = []
    for gid, title in wanted_games(findings, games, limit):
        path = folder / f"{gid}.json"
        g = games[gid]
        who = " vs ".join(plain_agent(a) for a in g["agents"]) + (
            f", forbidding {', '.join(str(o) for _, o in g['forbid'])}" if g.get("forbid") else ""
        )
        heading = f"{title} — {who}"  # the finding it shows may differ from the run that traced it
        old = None
        if only_missing and path.exists():
            try:
                old = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                old = None  # a damaged trace is traced again
        if isinstance(old, dict) and _same_game(old, g):
            tr = old
        else:
            tr = trace_game(job_of(g), heading, f"rulebreaker play --replay {run_dir / gid}")
            tr["id"] = gid
        if tr is old and tr.get("title") == heading:
            traces.append(tr)
            continue
        tr["title"] = heading
        atomic_write_json(path, tr)
        traces.append(tr)
    atomic_write_json(folder / "index.json", [t["id"] for t in traces])
    return traces

"""Automated playtests: every agent against every other, paired seeds, seat rotation.

With ``n`` seats, a matchup "A vs B" puts A in one seat and B in all the others; game ``g`` gives A
seat ``g mod n`` and the deal seed ``seed_for(seed, g // n)``, so every deal is played from every
seat (paired seeds). A one-seat scenario (a session, a heist) scores each agent alone on the same deals.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from envs.core.config import config_dict, config_hash
from envs.core.errors import UserError
from envs.core.game import Ruleset
from results.records import GameRecord
from results.stats import mean_interval, quantile, wilson
from training.runner import GameJob, GamesInterrupted, run_games, seeds

MAX_GAMES = 100_000
"""The most games one evaluation plays (every record is kept in memory and in record.json)."""


@dataclass
class Evaluation:
    ruleset: str
    scenario: str
    agents: list[str]
    num_players: int
    games: int
    seed: int
    rules_hash: str
    records: list[GameRecord]
    matchups: list[tuple[str, str, int]]  # per record: (focus agent, opponent agent, focus seat)
    interrupted: bool = False  # Ctrl-C: ``records`` holds the games that finished

    def metrics(self) -> dict[str, Any]:
        return evaluation_metrics(self)


def matchup_jobs(
    ruleset: Ruleset, scenario: str, config: Any, agents: Sequence[str], games: int, seed: int, trace: bool = False
) -> tuple[list[GameJob], list[tuple[str, str, int]]]:
    """Jobs and, per job, (focus agent, opponent agent, focus seat).

    Two seats: each unordered pair plays ``games`` games (both perspectives read the same games).
    More seats: each ordered pair, A alone against a field of B. One seat: each agent alone.
    """
    n = ruleset.scenario(scenario).players(config)
    check_games(n, len(agents), games)
    cfg = config_dict(config)
    deal_seeds = seeds(seed, max(1, (games + n - 1) // n) if n > 1 else games)
    jobs: list[GameJob] = []
    meta: list[tuple[str, str, int]] = []

    def add(lineup: tuple[str, ...], deal: int, m: tuple[str, str, int]) -> None:
        jobs.append(GameJob(ruleset.name, scenario, cfg, lineup, deal_seeds[deal], len(jobs), trace))
        meta.append(m)

    if n == 1:
        for a in agents:
            for g in range(games):
                add((a,), g, (a, a, 0))
        return jobs, meta
    pairs = [(a, b) for i, a in enumerate(agents) for j, b in enumerate(agents) if (i < j if n == 2 else i != j)]
    if len(agents) == 1:
        pairs = [(agents[0], agents[0])]
    for a, b in pairs:
        for g in range(games):
            seat = g % n
            add(tuple(a if s == seat else b for s in range(n)), g // n, (a, b, seat))
    return jobs, meta


def total_games(num_players: int, num_agents: int, games: int) -> int:
    """How many games :func:`matchup_jobs` makes for ``num_agents`` agents and ``games`` per matchup."""
    if num_players == 1 or num_agents == 1:
        return num_agents * games if num_players == 1 else games
    pairs = num_agents * (num_agents - 1) // (2 if num_players == 2 else 1)
    return pairs * games


def check_games(num_players: int, num_agents: int, games: int) -> None:
    """Refuse an evaluation of more than :data:`MAX_GAMES` games before any job is made."""
    if games < 1:
        raise UserError(f"--games must be at least 1, got {games}")
    total = total_games(num_players, num_agents, games)
    if total > MAX_GAMES:
        raise UserError(
            f"--games {games} with {num_agents} agent(s) asks for {total:,} games; evaluate plays at most "
            f"{MAX_GAMES:,} at once: lower --games or --agents (or run several seeds)"
        )


def evaluate(
    ruleset: Ruleset,
    scenario: str,
    config: Any,
    agents: Sequence[str],
    games: int,
    seed: int,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    trace: bool = False,
) -> Evaluation:
    """Play every matchup; after a Ctrl-C, the evaluation of the games that finished (``interrupted`` set)."""
    jobs, meta = matchup_jobs(ruleset, scenario, config, agents, games, seed, trace)
    if not trace:  # nothing here reads the actions: up to MAX_GAMES records stay small
        jobs = [replace(j, keep_actions=False) for j in jobs]
    interrupted = False
    try:
        records = run_games(jobs, workers=workers, progress=progress)
    except GamesInterrupted as stop:
        records, interrupted = stop.records, True
        meta = [meta[r.index] for r in records]
    n = ruleset.scenario(scenario).players(config)
    return Evaluation(
        ruleset.name, scenario, list(agents), n, games, seed, config_hash(config), records, meta, interrupted
    )


def evaluation_metrics(ev: Evaluation) -> dict[str, Any]:
    recs = ev.records
    out: dict[str, Any] = {"games_played": len(recs)}
    if ev.num_players == 1:
        per: dict[str, Any] = {}
        for a in ev.agents:
            rs = [r for r in recs if r.agents[0] == a]
            if not rs:  # interrupted before this agent played: no figure rather than NaN
                continue
            mi = mean_interval([r.returns[0] for r in rs])
            wins = sum(1 for r in rs if r.winner == 0)
            wi = wilson(wins, len(rs))
            per[a] = {
                "games": len(rs),
                "mean_return": round(mi.value, 6),
                "return_ci": mi.as_list(),
                "success_rate": round(wi.value, 6),
                "success_ci": wi.as_list(),
            }
        out["agents"] = per
    else:
        matrix: dict[str, dict[str, Any]] = {a: {} for a in ev.agents}
        views: dict[tuple[str, str], list[tuple[GameRecord, int]]] = {}
        for rec, (fa, fb, seat) in zip(recs, ev.matchups, strict=True):
            views.setdefault((fa, fb), []).append((rec, seat))
            if ev.num_players == 2 and fa != fb:  # the same games seen from the other side
                views.setdefault((fb, fa), []).append((rec, 1 - seat))
        for (fa, fb), games in views.items():
            wins = sum(1 for r, s in games if r.winner == s)
            draws = sum(1 for r, _ in games if r.winner is None)
            wi = wilson(wins, len(games))
            mret = mean_interval([r.returns[s] for r, s in games])
            matrix[fa][fb] = {
                "games": len(games),
                "win_rate": round(wi.value, 6),
                "win_ci": wi.as_list(),
                "draw_rate": round(draws / len(games), 6),
                "mean_return": round(mret.value, 6),
            }
        out["matrix"] = matrix
        seat_stats = {}
        for s in range(ev.num_players):
            wins = sum(1 for r in recs if r.winner == s)
            wi = wilson(wins, len(recs))
            seat_stats[str(s)] = {"win_rate": round(wi.value, 6), "win_ci": wi.as_list()}
        out["seat_advantage"] = {
            "fair_share": round(1 / ev.num_players, 6),
            "seats": seat_stats,
            "draw_rate": round(sum(1 for r in recs if r.winner is None) / len(recs), 6),
        }
    lengths = [r.length for r in recs]
    ml = mean_interval(lengths)
    out["game_length"] = {
        "mean": round(ml.value, 4),
        "ci": [round(x, 4) for x in ml.as_list()],
        "median": quantile(lengths, 0.5),
        "p90": quantile(lengths, 0.9),
        "min": min(lengths),
        "max": max(lengths),
    }
    reasons = Counter(r.reason for r in recs)
    out["end_reasons"] = {k: round(v / len(recs), 6) for k, v in sorted(reasons.items())}
    return out

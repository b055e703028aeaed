"""Per-game features of a playtest, the raw material of baselines and paired comparisons.

Every game of a persona-suite run becomes a flat ``{metric: value}`` row: who won each matchup, which
seat won, how long it took, why it ended, where each resource ended and peaked, and how often each
option was chosen. A metric compared between two rule versions is compared on the same games (same
seeds, same agents), so identical rules give identical rows.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from results.records import GameRecord

ZERO_DEFAULT_PREFIXES = ("ended[", "usage[")
"""Families whose absence in a game means 0 (a reason that did not happen, an option never chosen)."""


def game_features(rec: GameRecord, matchup: tuple[str, str, int], num_players: int) -> dict[str, float]:
    focus, opp, seat = matchup
    f: dict[str, float] = {}
    if num_players == 1:
        f[f"return[{focus}]"] = rec.returns[0]
        f[f"success[{focus}]"] = float(rec.winner == 0)
    else:
        f[f"win[{focus} vs {opp}]"] = float(rec.winner == seat)
        for seat_k in range(num_players):
            f[f"seat_win[{seat_k}]"] = float(rec.winner == seat_k)
        f["draw"] = float(rec.winner is None)
    f["length"] = float(rec.length)
    f[f"ended[{rec.reason}]"] = 1.0
    last: dict[int, dict[str, float]] = {}
    peak: dict[str, float] = {}
    for r in rec.resources:
        s = int(r["seat"])
        vals = {k: float(v) for k, v in r.items() if k != "seat" and isinstance(v, int | float)}
        last[s] = vals
        for k, v in vals.items():
            peak[k] = max(peak.get(k, v), v)
    finals: dict[str, list[float]] = defaultdict(list)
    for vals in last.values():
        for k, v in vals.items():
            finals[k].append(v)
    for k, vs in finals.items():
        f[f"final[{k}]"] = sum(vs) / len(vs)
    for k, v in peak.items():
        f[f"peak[{k}]"] = v
    if rec.decisions:
        counts = Counter(opt for _, _, opt in rec.decisions)
        total = len(rec.decisions)
        for opt, c in counts.items():
            f[f"usage[{opt}]"] = c / total
    return f


def feature_table(
    records: Sequence[GameRecord], matchups: Sequence[tuple[str, str, int]], num_players: int
) -> dict[str, dict[int, float]]:
    """``{metric: {game index: value}}`` over a batch of games."""
    table: dict[str, dict[int, float]] = defaultdict(dict)
    for rec, m in zip(records, matchups, strict=True):
        for k, v in game_features(rec, m, num_players).items():
            table[k][rec.index] = round(v, 6)  # the precision baselines store, so reruns compare exactly
    return dict(table)


def paired_values(
    base: dict[str, dict[int, float]], var: dict[str, dict[int, float]], metric: str, indices: Sequence[int]
) -> tuple[list[float], list[float]]:
    """Values of ``metric`` on the games both runs played (zero-default families fill in 0)."""
    zero = metric.startswith(ZERO_DEFAULT_PREFIXES)
    b, v = base.get(metric, {}), var.get(metric, {})
    xs, ys = [], []
    for i in indices:
        if zero:
            xs.append(b.get(i, 0.0))
            ys.append(v.get(i, 0.0))
        elif i in b and i in v:
            xs.append(b[i])
            ys.append(v[i])
    return xs, ys


PRIMARY_PREFIXES = ("win[", "return[")
"""The primary metrics: each matchup's win rate, a one-seat agent's mean return."""


def is_primary(metric: str) -> bool:
    """A primary metric (a matchup's win rate or an agent's mean return), as regressions and findings use it."""
    return metric.startswith(PRIMARY_PREFIXES)


def metric_kind(metric: str) -> str:
    """``rate`` for 0/1 per game (win, success, seat, ending), ``value`` for the rest."""
    if metric.startswith(("win[", "success[", "seat_win[", "ended[")) or metric == "draw":
        return "rate"
    return "value"


def describe(metric: str) -> str:
    """Plain words for a metric name."""
    if metric.startswith("win["):
        a, b = metric[4:-1].split(" vs ")
        return f"{a}'s win rate against {b}"
    if metric.startswith("return["):
        return f"{metric[7:-1]}'s mean return"
    if metric.startswith("success["):
        return f"{metric[8:-1]}'s success rate"
    if metric.startswith("seat_win["):
        return f"seat {metric[9:-1]}'s win rate"
    if metric == "draw":
        return "the draw rate"
    if metric == "length":
        return "game length (decisions)"
    if metric.startswith("ended["):
        return f"share of games ending by {metric[6:-1]}"
    if metric.startswith("final["):
        return f"final {metric[6:-1]} (mean over seats)"
    if metric.startswith("peak["):
        return f"peak {metric[5:-1]}"
    if metric.startswith("usage["):
        return f"share of decisions choosing {metric[6:-1]}"
    return metric


def rows_to_jsonable(table: dict[str, dict[int, float]]) -> dict[str, Any]:
    return {k: {str(i): round(v, 6) for i, v in sorted(d.items())} for k, d in sorted(table.items())}


def rows_from_json(data: dict[str, Any]) -> dict[str, dict[int, float]]:
    return {k: {int(i): float(v) for i, v in d.items()} for k, d in data.items()}

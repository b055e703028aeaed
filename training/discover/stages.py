"""The persona stages of discovery; each plays its games on common random numbers and returns numbers.

1. persona round-robin;
5. rule sensitivity: each declared knob perturbed, the same games replayed;
   with a variant: the variant against the rules as written (windfalls show here);
7. seat advantage, game length and end reasons, resource trajectories, snowballing.

(2 and 6, RL training and the transplant test, are :mod:`training.discover.rl`; usage and restricted
play, 3-4, are :mod:`training.discover.verdicts`, where the re-optimizing search agent is the subject: a
persona is never the subject of a dominance or dead-option verdict; the exact stage is
:mod:`training.discover.exact`.) Each stage stores its numbers in ``d.sections`` and adds the findings
that :mod:`results.findings` reads from them.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter, defaultdict
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from envs.core.config import config_dict, config_hash, flat_items, with_override
from envs.core.errors import ConfigError
from envs.core.game import EndReason
from results.findings import (
    non_termination_findings,
    runaway_findings,
    seat_advantage_findings,
    sensitivity_findings,
    snowball_findings,
    variant_findings,
)
from results.fingerprint import feature_table, is_primary, paired_values
from results.records import GameRecord
from results.stats import Interval, mean_interval, wilson
from training.discover.discovery import Discovery, agent_values, interval_dict
from training.discover.verdicts import adapting_rows
from training.evaluate import Evaluation, evaluation_metrics, matchup_jobs
from training.runner import GameJob

# -- stage 1: round robin -------------------------------------------------------------------------


def stage_round_robin(d: Discovery, agents: list[str]) -> Evaluation:
    t0 = time.perf_counter()
    jobs, meta = matchup_jobs(d.ruleset, d.scenario, d.config, agents, d.budget.round_robin_games, d.seed, trace=True)
    recs = d.play("round_robin", jobs)
    ev = Evaluation(
        d.ruleset.name,
        d.scenario,
        agents,
        d.num_players,
        d.budget.round_robin_games,
        d.seed,
        config_hash(d.config),
        recs,
        meta,
    )
    d.sections["round_robin"] = {
        "agents": agents,
        "games_per_matchup": d.budget.round_robin_games,
        "metrics": evaluation_metrics(ev),
        "values": {a: interval_dict(v) for a, v in agent_values(ev).items()},
        "mean_length": round(statistics.fmean(r.length for r in recs), 3) if recs else 0.0,
    }
    d.timings["round_robin"] = time.perf_counter() - t0
    return ev


# -- stage 5: rule sensitivity ---------------------------------------------------------------------------


def compare_tables(
    base: dict[str, dict[int, float]], var: dict[str, dict[int, float]], indices: list[int]
) -> dict[str, dict[str, float]]:
    rows = {}
    for m in sorted(set(base) | set(var)):
        if not (is_primary(m) or m == "length" or m.startswith(("final[", "ended["))):
            continue
        xs, ys = paired_values(base, var, m, indices)
        if not xs:
            continue
        diffs = [y - x for x, y in zip(xs, ys, strict=True)]
        iv = Interval(0.0, 0.0, 0.0) if all(x == 0 for x in diffs) else mean_interval(diffs)
        b = sum(xs) / len(xs)
        rows[m] = {
            "baseline": round(b, 6),
            "change": round(iv.value, 6),
            "low": round(iv.low, 6),
            "high": round(iv.high, 6),
            "relative": round(iv.value / abs(b), 6) if b else 0.0,
        }
    return rows


def stage_sensitivity(d: Discovery, agents: list[str], rr: Evaluation) -> dict[str, Any]:
    t0 = time.perf_counter()
    games = min(d.budget.sensitivity_games, d.budget.round_robin_games)
    jobs, meta = matchup_jobs(d.ruleset, d.scenario, d.config, agents, games, d.seed, trace=True)
    by_key = {(r.agents, r.seed): r for r in rr.records}
    rr_meta = {(r.agents, r.seed): m for r, m in zip(rr.records, rr.matchups, strict=True)}
    base_recs = [replace(by_key[(j.agents, j.seed)], index=i) for i, j in enumerate(jobs)]
    base_meta = [rr_meta[(j.agents, j.seed)] for j in jobs]
    base_tab = feature_table(base_recs, base_meta, d.num_players)
    idx = list(range(len(jobs)))
    knob_rows: list[dict[str, Any]] = []
    plan: list[tuple[str, Any, str, BaseModel]] = []
    current = dict(flat_items(config_dict(d.config)))
    skipped: list[dict[str, Any]] = []
    for knob in d.ruleset.knobs:
        if knob.scenarios and d.scenario not in knob.scenarios:
            continue
        for v in knob.values:
            if current.get(knob.key) == v:
                continue
            try:
                plan.append((knob.key, v, knob.description, with_override(d.config, knob.key, v)))
            except ConfigError as e:  # a perturbation the rules under study make invalid: say so, go on
                skipped.append({"key": knob.key, "value": v, "reason": str(e)})
    all_jobs = [replace(j, config=config_dict(cfg)) for (_, _, _, cfg) in plan for j in jobs]
    recs = d.play("sensitivity", all_jobs)
    adapting = adapting_rows(d, [cfg for (_, _, _, cfg) in plan])  # the search subject re-plans under each rule
    for p, (key, v, desc, _cfg) in enumerate(plan):
        chunk = [replace(r, index=i) for i, r in enumerate(recs[p * len(jobs) : (p + 1) * len(jobs)])]
        tab = feature_table(chunk, meta, d.num_players)
        rows = compare_tables(base_tab, tab, idx)
        rows.update(adapting[p])
        knob_rows.append(
            {
                "key": key,
                "value": v,
                "was": current.get(key),
                "description": desc,
                "metrics": rows,
                "example": d.game_id("sensitivity", all_jobs[p * len(jobs)], p * len(jobs)),
            }
        )
    d.sections["sensitivity"] = {"games_per_matchup": games, "knobs": knob_rows, "skipped": skipped}
    d.timings["sensitivity"] = time.perf_counter() - t0
    d.add_all(sensitivity_findings(knob_rows, d.thresholds))
    return d.sections["sensitivity"]


def stage_variant_vs_written(d: Discovery, agents: list[str], rr: Evaluation) -> dict[str, Any] | None:
    """With a variant: every agent replays the round-robin under the rules as written, paired."""
    if d.variant is None:
        return None
    t0 = time.perf_counter()
    jobs = [
        GameJob(d.ruleset.name, d.scenario, config_dict(d.base_config), r.agents, r.seed, r.index, True)
        for r in rr.records
    ]
    base_recs = d.play("as_written", jobs)
    base_tab = feature_table(base_recs, rr.matchups, d.num_players)
    var_tab = feature_table(rr.records, rr.matchups, d.num_players)
    rows = compare_tables(base_tab, var_tab, list(range(len(jobs))))
    changed = sorted(
        k for k, v in flat_items(config_dict(d.config)) if dict(flat_items(config_dict(d.base_config))).get(k) != v
    )
    sec = {"changed_keys": changed, "metrics": rows}
    d.written_records = base_recs
    d.sections["variant_vs_written"] = sec
    d.timings["variant_vs_written"] = time.perf_counter() - t0
    subject = ", ".join(changed) or "(no key changed)"
    example = d.game_id(
        "round_robin",
        GameJob(d.ruleset.name, d.scenario, config_dict(d.config), rr.records[0].agents, rr.records[0].seed, 0),
    )
    d.add_all(variant_findings(rows, subject, d.num_players, example, d.thresholds))
    return sec


# -- stage 7: seats, lengths, resources -----------------------------------------------------------------


def stage_structure(
    d: Discovery, rr: Evaluation, strong_records: list[GameRecord], written_records: list[GameRecord] | None = None
) -> dict[str, Any]:
    t = d.thresholds
    recs = rr.records
    sec: dict[str, Any] = {}
    example = d.game_id(
        "round_robin", GameJob(d.ruleset.name, d.scenario, config_dict(d.config), recs[0].agents, recs[0].seed, 0)
    )
    n = d.num_players
    if n >= 2:
        decisive = [r for r in recs if r.winner is not None]
        seats = {}
        for k in range(n):
            iv = wilson(sum(1 for r in decisive if r.winner == k), len(decisive))
            seats[str(k)] = interval_dict(iv)
            d.add_all(seat_advantage_findings(k, iv, n, len(decisive), example, t))
        sec["seats"] = seats
    sc = d.ruleset.scenario(d.scenario)
    stops = (EndReason.STALL.value,) if sc.time_limit_is_rule else (EndReason.TIME_LIMIT.value, EndReason.STALL.value)
    limit = [r for r in recs if r.reason in stops]
    iv = wilson(len(limit), len(recs))
    sec["time_limit_share"] = interval_dict(iv)
    found = non_termination_findings(iv, t)
    if found:  # the example game is recorded only when there is a finding to show
        ex = d.game_id(
            "round_robin",
            GameJob(d.ruleset.name, d.scenario, config_dict(d.config), limit[0].agents, limit[0].seed, limit[0].index),
        )
        d.add_all([replace(f, evidence=ex) for f in found])
    lengths = [r.length for r in recs]
    sec["length"] = {
        "mean": statistics.fmean(lengths),
        "median": statistics.median(lengths),
        "max": max(lengths),
        "reasons": dict(Counter(r.reason for r in recs)),
    }
    if written_records is not None:
        sec["resources"] = _resources(d, rr.records, written_records)
    else:
        sec["resources"] = _resources(d, strong_records)
    sec["snowball"] = _snowball(d, recs)
    d.sections["structure"] = sec
    return sec


def _rises(records: list[GameRecord]) -> tuple[dict[str, dict[int, float]], dict[str, list[list[float]]]]:
    """Per game and resource: the mean over seats of (last − first) / max(|first|, 1); and the level curves."""
    rises: dict[str, dict[int, float]] = defaultdict(dict)
    curves: dict[str, list[list[float]]] = defaultdict(lambda: [[] for _ in range(11)])
    for r in records:
        first: dict[tuple[int, str], float] = {}
        last: dict[tuple[int, str], float] = {}
        n_dec = max(1, len(r.resources))
        for i, snap in enumerate(r.resources):
            s = int(snap["seat"])
            for k, v in snap.items():
                if k == "seat" or not isinstance(v, int | float):
                    continue
                if v != 0 or (s, k) in first:  # a resource counts from its first non-zero level (after setup)
                    first.setdefault((s, k), float(v))
                last[(s, k)] = float(v)
                curves[k][min(10, int(10 * i / n_dec))].append(float(v))
        per: dict[str, list[float]] = defaultdict(list)
        for (s, k), f0 in first.items():
            per[k].append((last[(s, k)] - f0) / max(abs(f0), 1.0))
        for k, vs in per.items():
            rises[k][r.index] = sum(vs) / len(vs)
    return rises, curves


def _resources(d: Discovery, records: list[GameRecord], base_records: list[GameRecord] | None = None) -> dict[str, Any]:
    """Resource runaway. With a variant, the rise is measured against the same games under the rules as
    written (a resource that already grows as written is the game's design, not the variant's doing).
    Resources the scenario declares as progress counters or clocks are never runaways."""
    rises, curves = _rises(records)
    base_rises = _rises(base_records)[0] if base_records is not None else None
    out: dict[str, Any] = {}
    by_design = set(d.ruleset.scenario(d.scenario).progress_resources)
    for k, by_game in rises.items():
        if any(k.startswith(p) for p in by_design):
            continue  # progress counters and clocks move by design (a faster job shows in returns)
        if base_rises is not None:
            common = sorted(set(by_game) & set(base_rises.get(k, {})))
            iv = mean_interval([by_game[i] - base_rises[k][i] for i in common])
            what = "rise beyond the rules as written"
        else:
            iv = mean_interval(list(by_game.values()))
            what = "relative rise from the first to the last decision"
        out[k] = {
            "relative_rise": interval_dict(iv),
            "compared_to_written": base_rises is not None,
            "curve": [round(statistics.fmean(c), 4) if c else None for c in curves[k]],
        }
        d.add_all(runaway_findings(k, iv, base_rises is not None, what, d.thresholds))
    return out


def _snowball(d: Discovery, recs: list[GameRecord]) -> dict[str, Any] | None:
    if d.num_players != 2:
        return None
    hits = total = 0
    key = None
    for r in recs:
        if r.winner is None or len(r.resources) < 4:
            continue
        mid = r.resources[: len(r.resources) // 2]
        latest: dict[int, dict[str, float]] = {}
        for snap in mid:
            latest[int(snap["seat"])] = {k: v for k, v in snap.items() if k != "seat"}
        if len(latest) < 2:
            continue
        if key is None:
            key = next(iter(latest[0]), None)
        if key is None or key not in latest[0] or key not in latest[1] or latest[0][key] == latest[1][key]:
            continue
        leader = 0 if latest[0][key] > latest[1][key] else 1
        total += 1
        hits += leader == r.winner
    if not total or key is None:
        return None
    iv = wilson(hits, total)
    d.add_all(snowball_findings(key, iv, d.thresholds))
    return {"resource": key, "leader_wins": interval_dict(iv), "games": total}

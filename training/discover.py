"""Discovery: find dominant strategies and degenerate rules, with numbers, intervals and example games.

Stages (each a function below, all on common random numbers so that comparisons are paired):
1. persona round-robin;
2. RL training and evaluation of the RL agent against every persona (when the budget allows);
3. option usage per decision context by the strongest agent;
4. restricted play (Jaffe et al., AIIDE 2012): each option group forbidden, value change paired by deal;
5. rule sensitivity: each declared knob perturbed, the same games replayed;
   with a variant: the variant against the rules as written (windfalls show here);
6. transplant (variant + RL): the policy trained on the rules as written against the variant's own;
7. seat advantage, game length and end reasons, resource trajectories, snowballing.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agents.registry import agent_names
from envs.core.config import config_dict, config_hash, flat_items, load_config, variant_meta, with_override
from envs.core.errors import ConfigError
from envs.core.game import EndReason, Ruleset
from results.findings import Finding, Kind, Severity, Thresholds, severity_of
from results.fingerprint import feature_table, paired_values
from results.stats import Interval, mean_interval, wilson
from training.budgets import Budget
from training.evaluate import Evaluation, evaluation_metrics, matchup_jobs
from training.runner import GameJob, GameRecord, run_games, seeds

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass
class Discovery:
    ruleset: Ruleset
    scenario: str
    config: BaseModel
    base_config: BaseModel  # the rules as written
    variant: Path | None
    budget: Budget
    seed: int
    workers: int
    thresholds: Thresholds
    out_dir: Path
    progress: Progress | None = None
    rl: bool = True
    num_players: int = 0
    games: dict[str, dict[str, Any]] = field(default_factory=dict)  # game id -> job (replayable)
    findings: list[Finding] = field(default_factory=list)
    sections: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    rl_agents: dict[str, str] = field(default_factory=dict)  # label -> agent spec "rl:<path>"
    written_records: list[GameRecord] | None = None  # the round-robin replayed under the rules as written

    def __post_init__(self) -> None:
        self.num_players = self.ruleset.scenario(self.scenario).players(self.config)

    # -- playing -------------------------------------------------------------------------------------
    def play(self, stage: str, jobs: list[GameJob]) -> list[GameRecord]:
        jobs = [replace(j, index=i) for i, j in enumerate(jobs)]
        done = [0]

        def tick(n: int) -> None:
            done[0] += n
            if self.progress:
                self.progress(stage, done[0], len(jobs))

        return run_games(jobs, workers=self.workers, progress=tick)

    def game_id(self, stage: str, job: GameJob, index: int | None = None) -> str:
        """Record a game for replay; ``index`` is its position in the stage's batch."""
        gid = f"{stage}-{job.index if index is None else index}"
        self.games[gid] = {"ruleset": job.ruleset, "scenario": job.scenario, "agents": list(job.agents),
                           "seed": job.seed, "forbid": [list(f) for f in job.forbid],
                           "rules_hash": config_hash(self.config if job.config == config_dict(self.config)
                                                     else _model(self.ruleset, job.config)),
                           "config": job.config}
        return gid

    def add(self, f: Finding) -> None:
        self.findings.append(f)


def _model(ruleset: Ruleset, cfg: dict[str, Any]) -> BaseModel:
    from envs.core.config import validate_config

    return validate_config(ruleset.config_model, cfg, "config")


# -- values ------------------------------------------------------------------------------------------

def agent_values(ev: Evaluation) -> dict[str, Interval]:
    """An agent's value: mean return alone (one seat), or its mean win rate against the field."""
    m = evaluation_metrics(ev)
    out: dict[str, Interval] = {}
    if ev.num_players == 1:
        for a, r in m["agents"].items():
            out[a] = Interval(r["mean_return"], r["return_ci"][0], r["return_ci"][1])
        return out
    for a in ev.agents:
        wins = games = 0
        for (fa, fb, seat), rec in zip(ev.matchups, ev.records, strict=True):
            if fa == a:
                games += 1
                wins += rec.winner == seat
            elif ev.num_players == 2 and fb == a and fa != fb:
                games += 1
                wins += rec.winner == 1 - seat
        out[a] = wilson(wins, games)
    return out


# -- stage 1: round robin -------------------------------------------------------------------------

def stage_round_robin(d: Discovery, agents: list[str]) -> Evaluation:
    t0 = time.perf_counter()
    jobs, meta = matchup_jobs(d.ruleset, d.scenario, d.config, agents, d.budget.round_robin_games, d.seed,
                              trace=True)
    recs = d.play("round_robin", jobs)
    ev = Evaluation(d.ruleset.name, d.scenario, agents, d.num_players, d.budget.round_robin_games, d.seed,
                    config_hash(d.config), recs, meta)
    d.sections["round_robin"] = {"agents": agents, "games_per_matchup": d.budget.round_robin_games,
                                 "metrics": evaluation_metrics(ev),
                                 "values": {a: _iv(v) for a, v in agent_values(ev).items()}}
    d.timings["round_robin"] = time.perf_counter() - t0
    return ev


def _iv(iv: Interval) -> dict[str, float]:
    return {"value": round(iv.value, 6), "low": round(iv.low, 6), "high": round(iv.high, 6)}


# -- stage 3: usage -----------------------------------------------------------------------------------

def usage_by_context(records: list[GameRecord],
                     seats_of: Callable[[GameRecord], set[int]]) -> dict[str, dict[str, float]]:
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for r in records:
        mine = seats_of(r)
        for seat, ctx, opt in r.decisions:
            if seat in mine:
                counts[ctx][opt] += 1
    return {ctx: {o: round(c / sum(cnt.values()), 6) for o, c in cnt.most_common()}
            for ctx, cnt in sorted(counts.items())}


# -- stage 4: restricted play ------------------------------------------------------------------------

def stage_restricted(d: Discovery, agents: list[str], strong: str) -> dict[str, Any]:
    """Each option group forbidden for one seat; the value change is paired by deal.

    The strongest agent is replayed for every group. Another agent is replayed only for the groups it
    chose at least once in its own games: a group it never chooses is reported as unused, not replayed.
    """
    t0 = time.perf_counter()
    sc = d.ruleset.scenario(d.scenario)
    groups = list(sc.option_groups)
    n = d.num_players
    cfg = config_dict(d.config)
    deal_seeds = seeds(d.seed + 7919, d.budget.restricted_deals)
    out: dict[str, Any] = {"groups": groups, "agents": {}, "strong": strong}
    base_jobs = [GameJob(d.ruleset.name, d.scenario, cfg, (a,) * n, s, trace=True)
                 for a in agents for s in deal_seeds]
    base_recs = d.play("restricted_base", base_jobs)
    base: dict[tuple[str, int], GameRecord] = {}
    for j, (a, g) in enumerate((a, g) for a in agents for g in range(len(deal_seeds))):
        base[(a, g)] = base_recs[j]
    used: dict[str, Counter[str]] = {a: Counter(opt for g in range(len(deal_seeds))
                                                for _, _, opt in base[(a, g)].decisions) for a in agents}
    available = {a: set().union(*(base[(a, g)].available for g in range(len(deal_seeds)))) for a in agents}
    all_jobs: list[GameJob] = []
    keys: list[tuple[str, str, int]] = []
    for a in agents:
        for grp in groups:
            if a != strong and used[a][grp] == 0:
                continue
            for g, s in enumerate(deal_seeds):
                all_jobs.append(GameJob(d.ruleset.name, d.scenario, cfg, (a,) * n, s, forbid=((g % n, grp),)))
                keys.append((a, grp, g))
    recs = d.play("restricted", all_jobs)
    restricted: dict[tuple[str, str], list[tuple[int, GameRecord]]] = defaultdict(list)
    for (a, grp, g), rec in zip(keys, recs, strict=True):
        restricted[(a, grp)].append((g, rec))
    for a in agents:
        own = [base[(a, g)] for g in range(len(deal_seeds))]
        usage = usage_by_context(own, lambda r: set(range(n)))
        total = sum(used[a].values()) or 1
        rows = {}
        for grp in groups:
            ctx_usage = max((u.get(grp, 0.0) for u in usage.values()), default=0.0)
            replayed = (a, grp) in restricted
            diffs, worst = [], (0.0, None)
            for g, rec in restricted.get((a, grp), []):
                k = g % n
                dlt = rec.returns[k] - base[(a, g)].returns[k]
                diffs.append(dlt)
                if dlt < worst[0]:
                    worst = (dlt, rec)
            iv = Interval(0.0, 0.0, 0.0) if all(x == 0 for x in diffs) else mean_interval(diffs)
            ex = worst[1]
            gid = d.game_id("restricted", all_jobs[ex.index], ex.index) if ex is not None else ""
            rows[grp] = {"value_change": _iv(iv), "usage_overall": round(used[a][grp] / total, 6),
                         "usage_in_context": round(ctx_usage, 6), "example": gid, "replayed": replayed,
                         "available": grp in available[a]}
        out["agents"][a] = {"usage": usage, "options": rows}
    d.sections["restricted"] = out
    d.timings["restricted"] = time.perf_counter() - t0
    _restricted_findings(d, out)
    return out


def _label(agent: str) -> str:
    """How findings name an agent: personas by name, a trained agent as such (its run is in the report)."""
    return "the trained agent" if agent.startswith("rl:") else agent


def _restricted_findings(d: Discovery, out: dict[str, Any]) -> None:
    t = d.thresholds
    strong = out["strong"]
    who = _label(strong)
    rows = out["agents"][strong]["options"]
    for grp, r in rows.items():
        v = r["value_change"]
        if -v["low"] <= t.dominant_loss or v["high"] > -t.dominant_loss:
            pass
        else:
            loss = -v["value"]
            usage = r["usage_in_context"]
            if usage >= t.dominant_usage:
                d.add(Finding(
                    Kind.DOMINANT_STRATEGY, grp, severity_of(loss, t), f"value lost by {who} without it", -loss,
                    t.dominant_loss, (v["low"], v["high"]), r["example"],
                    f"'{grp}' dominates: {who} chooses it in {100 * usage:.0f}% of its decisions of that kind, "
                    f"and forbidding it costs {loss:.3f} [{-v['high']:.3f}, {-v['low']:.3f}] of value per game.",
                    {"usage_in_context": usage}))
        every_agent = [out["agents"][a]["options"][grp]["value_change"] for a in out["agents"]]
        if not r.get("available", True):
            continue  # never legal in these games (a phase or rule this configuration leaves out): not an option
        if all(abs(vc["low"]) < t.dead_option_band and abs(vc["high"]) < t.dead_option_band for vc in every_agent):
            d.add(Finding(
                Kind.DEAD_OPTION, grp, Severity.LOW, "largest value change when forbidden, any agent",
                max(abs(vc["value"]) for vc in every_agent),
                t.dead_option_band, (v["low"], v["high"]), r["example"],
                f"'{grp}' is a dead option: forbidding it moves {who}'s value by {v['value']:+.4f} "
                f"[{v['low']:+.4f}, {v['high']:+.4f}], inside ±{t.dead_option_band:.3f}, and no persona loses "
                f"more either (or never chooses it); {who} uses it in {100 * r['usage_overall']:.1f}% "
                "of its decisions."))


# -- stage 5: rule sensitivity ---------------------------------------------------------------------------

def _primary(metric: str) -> bool:
    return metric.startswith(("win[", "return["))


def compare_tables(base: dict[str, dict[int, float]], var: dict[str, dict[int, float]],
                   indices: list[int]) -> dict[str, dict[str, float]]:
    rows = {}
    for m in sorted(set(base) | set(var)):
        if not (_primary(m) or m == "length" or m.startswith(("final[", "ended["))):
            continue
        xs, ys = paired_values(base, var, m, indices)
        if not xs:
            continue
        diffs = [y - x for x, y in zip(xs, ys, strict=True)]
        iv = Interval(0.0, 0.0, 0.0) if all(x == 0 for x in diffs) else mean_interval(diffs)
        b = sum(xs) / len(xs)
        rows[m] = {"baseline": round(b, 6), "change": round(iv.value, 6), "low": round(iv.low, 6),
                   "high": round(iv.high, 6), "relative": round(iv.value / abs(b), 6) if b else 0.0}
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
    for p, (key, v, desc, _cfg) in enumerate(plan):
        chunk = [replace(r, index=i) for i, r in enumerate(recs[p * len(jobs):(p + 1) * len(jobs)])]
        tab = feature_table(chunk, meta, d.num_players)
        rows = compare_tables(base_tab, tab, idx)
        knob_rows.append({"key": key, "value": v, "was": current.get(key), "description": desc, "metrics": rows,
                          "example": d.game_id("sensitivity", all_jobs[p * len(jobs)], p * len(jobs))})
    d.sections["sensitivity"] = {"games_per_matchup": games, "knobs": knob_rows, "skipped": skipped}
    d.timings["sensitivity"] = time.perf_counter() - t0
    _sensitivity_findings(d, knob_rows)
    return d.sections["sensitivity"]


def _sensitivity_findings(d: Discovery, knob_rows: list[dict[str, Any]]) -> None:
    t = d.thresholds
    by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in knob_rows:
        by_key[row["key"]].append(row)
    for key, rows in by_key.items():
        moved = []
        for row in rows:
            prim = {m: r for m, r in row["metrics"].items() if _primary(m)}
            if not prim:
                continue
            worst_m, worst = max(prim.items(), key=lambda kv: max(abs(kv[1]["low"]), abs(kv[1]["high"])))
            moved.append((row, worst_m, worst))
        if not moved:
            continue
        # dead: no perturbation of this key moves any primary metric beyond the band
        if all(max(abs(w["low"]), abs(w["high"])) < t.dead_rule_band for _, _, w in moved):
            row, m, w = max(moved, key=lambda x: abs(x[2]["change"]))
            d.add(Finding(
                Kind.DEAD_RULE, key, Severity.MEDIUM, f"largest change of {m}", w["change"], t.dead_rule_band,
                (w["low"], w["high"]), row["example"],
                f"'{key}' changes nothing: setting it to {', '.join(json.dumps(r['value']) for r in rows)} "
                f"(as written: {json.dumps(rows[0]['was'])}) moves no win rate or return by more than "
                f"{100 * t.dead_rule_band:.1f} points (largest: {100 * w['change']:+.2f} "
                f"[{100 * w['low']:+.2f}, {100 * w['high']:+.2f}] on {m})."))
            continue
        for row, m, w in moved:
            if w["low"] > t.fragile_move or w["high"] < -t.fragile_move:
                d.add(Finding(
                    Kind.FRAGILE_RULE, key, severity_of(w["change"], t), m, w["change"], t.fragile_move,
                    (w["low"], w["high"]), row["example"],
                    f"'{key}' is fragile: changing it from {json.dumps(row['was'])} to {json.dumps(row['value'])} "
                    f"({row['description']}) moves {m} by {100 * w['change']:+.1f} points "
                    f"[{100 * w['low']:+.1f}, {100 * w['high']:+.1f}]."))
                break


def stage_variant_vs_written(d: Discovery, agents: list[str], rr: Evaluation) -> dict[str, Any] | None:
    """With a variant: every agent replays the round-robin under the rules as written, paired."""
    if d.variant is None:
        return None
    t0 = time.perf_counter()
    jobs = [GameJob(d.ruleset.name, d.scenario, config_dict(d.base_config), r.agents, r.seed, r.index, True)
            for r in rr.records]
    base_recs = d.play("as_written", jobs)
    base_tab = feature_table(base_recs, rr.matchups, d.num_players)
    var_tab = feature_table(rr.records, rr.matchups, d.num_players)
    rows = compare_tables(base_tab, var_tab, list(range(len(jobs))))
    changed = sorted(k for k, v in flat_items(config_dict(d.config))
                     if dict(flat_items(config_dict(d.base_config))).get(k) != v)
    sec = {"changed_keys": changed, "metrics": rows}
    d.written_records = base_recs
    d.sections["variant_vs_written"] = sec
    d.timings["variant_vs_written"] = time.perf_counter() - t0
    t = d.thresholds
    subject = ", ".join(changed) or "(no key changed)"
    example = d.game_id("round_robin", GameJob(d.ruleset.name, d.scenario, config_dict(d.config),
                                                 rr.records[0].agents, rr.records[0].seed, 0))
    prim = {m: r for m, r in rows.items() if _primary(m)}
    beyond = {m: r for m, r in prim.items() if r["low"] > t.fragile_move or r["high"] < -t.fragile_move}
    if beyond:
        m, w = max(beyond.items(), key=lambda kv: abs(kv[1]["change"]))
        ups = [k for k, r in prim.items() if r["low"] > 0]
        everyone = d.num_players == 1 and len(ups) == len(prim)
        d.add(Finding(
            Kind.FRAGILE_RULE, subject, severity_of(w["change"], t), m, w["change"], t.fragile_move,
            (w["low"], w["high"]), example,
            f"The variant's change to {subject} moves {m} by {100 * w['change']:+.1f} points "
            f"[{100 * w['low']:+.1f}, {100 * w['high']:+.1f}] against the rules as written"
            + (" — a windfall: every agent's return rises." if everyone else "."),
            {"windfall": everyone, "moved": sorted(beyond)}))
    # a variant that rewards one style: one agent's gain far above the others'
    if len(prim) >= 3:
        gains = {m: r["change"] for m, r in prim.items()}
        for m, r in prim.items():
            others = [g for k, g in gains.items() if k != m]
            med = statistics.median(others)
            if r["low"] - max(med, 0.0) > t.exploit_gap:
                d.add(Finding(
                    Kind.EXPLOIT, f"{subject} rewards {m}", severity_of(r["change"] - med, t), m,
                    r["change"] - med, t.exploit_gap, (r["low"] - med, r["high"] - med), example,
                    f"The variant rewards one style: {m} gains {100 * r['change']:+.1f} points "
                    f"[{100 * r['low']:+.1f}, {100 * r['high']:+.1f}] while the median of the others gains "
                    f"{100 * med:+.1f}."))
    return sec


# -- stage 7: seats, lengths, resources -----------------------------------------------------------------

def stage_structure(d: Discovery, rr: Evaluation, strong_records: list[GameRecord],
                    written_records: list[GameRecord] | None = None) -> dict[str, Any]:
    t = d.thresholds
    recs = rr.records
    sec: dict[str, Any] = {}
    example = d.game_id("round_robin", GameJob(d.ruleset.name, d.scenario, config_dict(d.config),
                                                 recs[0].agents, recs[0].seed, 0))
    n = d.num_players
    if n >= 2:
        decisive = [r for r in recs if r.winner is not None]
        seats = {}
        for k in range(n):
            iv = wilson(sum(1 for r in decisive if r.winner == k), len(decisive))
            seats[str(k)] = _iv(iv)
            fair = 1 / n
            if decisive and iv.low > fair + t.seat_advantage:
                d.add(Finding(
                    Kind.SEAT_ADVANTAGE, f"seat {k}", severity_of(iv.value - fair, t), "share of decisive games won",
                    iv.value - fair, t.seat_advantage, (iv.low - fair, iv.high - fair), example,
                    f"Seat {k} wins {100 * iv.value:.1f}% [{100 * iv.low:.1f}, {100 * iv.high:.1f}] of decisive games "
                    f"against a fair share of {100 * fair:.1f}%."))
        sec["seats"] = seats
    sc = d.ruleset.scenario(d.scenario)
    stops = (EndReason.STALL.value,) if sc.time_limit_is_rule else (EndReason.TIME_LIMIT.value, EndReason.STALL.value)
    limit = [r for r in recs if r.reason in stops]
    iv = wilson(len(limit), len(recs))
    sec["time_limit_share"] = _iv(iv)
    if iv.low > t.time_limit_share:
        ex = d.game_id("round_robin", GameJob(d.ruleset.name, d.scenario, config_dict(d.config),
                                                limit[0].agents, limit[0].seed, limit[0].index))
        d.add(Finding(
            Kind.NON_TERMINATION, "time limit", severity_of(iv.value, t), "share of games ending at a limit",
            iv.value, t.time_limit_share, (iv.low, iv.high), ex,
            f"{100 * iv.value:.1f}% [{100 * iv.low:.1f}, {100 * iv.high:.1f}] of round-robin games end at the "
            "time or step limit instead of by the rules."))
    lengths = [r.length for r in recs]
    sec["length"] = {"mean": statistics.fmean(lengths), "median": statistics.median(lengths),
                     "max": max(lengths), "reasons": dict(Counter(r.reason for r in recs))}
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


def _resources(d: Discovery, records: list[GameRecord],
               base_records: list[GameRecord] | None = None) -> dict[str, Any]:
    """Resource runaway. With a variant, the rise is measured against the same games under the rules as
    written (a resource that already grows as written is the game's design, not the variant's doing).
    Resources the scenario declares as progress counters or clocks are never runaways."""
    t = d.thresholds
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
        out[k] = {"relative_rise": _iv(iv), "compared_to_written": base_rises is not None,
                  "curve": [round(statistics.fmean(c), 4) if c else None for c in curves[k]]}
        if iv.low > t.runaway_rise:
            summary = (f"'{k}' runs away under the variant: it rises {100 * iv.value:.0f}% [{100 * iv.low:.0f}, "
                       f"{100 * iv.high:.0f}] more over a game than under the rules as written."
                       if base_rises is not None else
                       f"'{k}' runs away under strong play: it ends {100 * iv.value:.0f}% [{100 * iv.low:.0f}, "
                       f"{100 * iv.high:.0f}] above where it started.")
            d.add(Finding(Kind.RESOURCE_RUNAWAY, k, severity_of(iv.value, t), what, iv.value, t.runaway_rise,
                          (iv.low, iv.high), "", summary))
    return out


def _snowball(d: Discovery, recs: list[GameRecord]) -> dict[str, Any] | None:
    if d.num_players != 2:
        return None
    t = d.thresholds
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
    if iv.low > t.snowball_rate:
        d.add(Finding(
            Kind.SNOWBALL, key, severity_of(iv.value - 0.5, t), f"games won by the halfway leader in {key}", iv.value,
            t.snowball_rate, (iv.low, iv.high), "",
            f"The game snowballs: whoever leads in {key} at the halfway point wins {100 * iv.value:.0f}% "
            f"[{100 * iv.low:.0f}, {100 * iv.high:.0f}] of the time."))
    return {"resource": key, "leader_wins": _iv(iv), "games": total}


# -- the pipeline ----------------------------------------------------------------------------------------

def run_discovery(d: Discovery, rl_stage: Callable[[Discovery, list[str]], dict[str, Any] | None] | None = None
                  ) -> dict[str, Any]:
    t_start = time.perf_counter()
    personas = agent_names(d.ruleset.name)
    rr = stage_round_robin(d, personas)
    values = agent_values(rr)
    best_persona = max((a for a in personas if a != "random"), key=lambda a: values[a].value, default="random")
    strong = best_persona
    agents = list(personas)
    if rl_stage is not None and d.rl and d.budget.rl_steps > 0:
        t0 = time.perf_counter()
        rl = rl_stage(d, personas)
        d.timings["rl"] = time.perf_counter() - t0
        if rl and rl.get("agent"):
            d.sections["rl"] = rl
            if rl["value"]["value"] >= values[best_persona].value:
                strong = rl["agent"]
            gap = rl.get("gap_vs_best_persona")
            if gap and gap["low"] > d.thresholds.exploit_gap:
                d.add(Finding(
                    Kind.EXPLOIT, "trained agent", severity_of(gap["value"], d.thresholds),
                    f"value over {best_persona}", gap["value"], d.thresholds.exploit_gap, (gap["low"], gap["high"]),
                    rl.get("example", ""),
                    f"A trained agent finds play the personas miss: it scores {gap['value']:+.3f} "
                    f"[{gap['low']:+.3f}, {gap['high']:+.3f}] over the best persona ({best_persona})."))
            agents = [*personas, rl["agent"]]
    d.sections["strong_agent"] = strong
    d.sections["best_persona"] = best_persona
    restricted = stage_restricted(d, [a for a in agents if a != "random"] or ["random"], strong)
    stage_sensitivity(d, personas, rr)
    stage_variant_vs_written(d, personas, rr)
    strong_recs = [r for r in rr.records if strong in r.agents] or rr.records
    stage_structure(d, rr, strong_recs, d.written_records)
    d.sections["usage"] = restricted["agents"].get(strong, {}).get("usage", {})
    t0 = time.perf_counter()
    from training.discover_exact import exact_stage

    exact_stage(d, agents)
    d.timings["exact"] = time.perf_counter() - t0
    d.timings["total"] = time.perf_counter() - t_start
    d.findings.sort(key=lambda f: (-f.severity.rank, f.kind.value, f.subject))
    return result_json(d)


def result_json(d: Discovery) -> dict[str, Any]:
    meta = variant_meta(d.variant) if d.variant else {}
    return {
        "ruleset": d.ruleset.name, "scenario": d.scenario, "rules_hash": config_hash(d.config), "seed": d.seed,
        "budget": d.budget.name, "variant": str(d.variant) if d.variant else None, "variant_meta": meta,
        "thresholds": d.thresholds.model_dump(),
        "findings": [f.to_json() for f in d.findings],
    }


def make_discovery(ruleset: Ruleset, scenario: str, variant: Path | None, budget: Budget, seed: int, workers: int,
                   out_dir: Path, thresholds: Thresholds | None = None, progress: Progress | None = None,
                   rl: bool = True) -> Discovery:
    config = load_config(ruleset, variant)
    base = load_config(ruleset)
    return Discovery(ruleset, scenario, config, base, variant, budget, seed, workers, thresholds or Thresholds(),
                     out_dir, progress, rl)

"""Regression checks on rule changes: did this edit move the balance?

The baseline (``results/baselines/<ruleset>-<scenario>.json``) is the persona suite's fingerprint
under the accepted rules: every game's features (see :mod:`results.fingerprint`) with its seed. The
variant is played on the same seeds, the same agents and the same seats (common random numbers: with
identical rules every game is identical), in rounds that advance every matchup together. Primary
metrics (each matchup's win rate; a one-seat scenario's mean return per agent) run a two-sided paired
SPRT (:mod:`results.sprt`) and play stops as soon as every one of them has a verdict. Every other
metric gets a paired 95% interval, Bonferroni-corrected over the secondary metrics.

A change counts only beyond ``min_effect``: for rates (win, success, ending, seat) it is absolute
(0.03 = 3 percentage points); for values (returns, lengths, resources, usage shares) it is relative to
the baseline mean (0.03 = 3%), and absolute for returns, which are already on a [-1, 1] scale.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any

from pydantic import BaseModel

from envs.core.config import config_dict, config_hash, validate_config
from envs.core.errors import UserError
from envs.core.game import Ruleset
from results.fingerprint import (
    describe,
    feature_table,
    is_primary,
    metric_kind,
    paired_values,
    rows_from_json,
    rows_to_jsonable,
)
from results.records import atomic_write_json, package_versions
from results.regress_report import build_regress_report
from results.sprt import Verdict, paired_sprt
from results.stats import mean_interval
from training.evaluate import matchup_jobs
from training.runner import GameJob, run_games

BASELINE_FORMAT = 1
BASELINE_KIND = "rulebreaker-baseline"
BASELINE_DIR = Path(__file__).resolve().parent.parent / "results" / "baselines"
DEFAULT_GAMES = 200  # games per matchup in a baseline
DEFAULT_MIN_EFFECT = 0.03
DEFAULT_ALPHA = 0.05
DEFAULT_BETA = 0.05
REPRO_CHECK_GAMES = 8
BATCH_ROUNDS = 25  # games per matchup between two looks of the SPRT


def baseline_path(ruleset: str, scenario: str) -> Path:
    return BASELINE_DIR / f"{ruleset}-{scenario}.json"


@dataclass
class Baseline:
    ruleset: str
    scenario: str
    config: dict[str, Any]
    rules_hash: str
    agents: list[str]
    num_players: int
    seed: int
    games: int
    jobs: list[dict[str, Any]]  # lineup, seed, matchup (focus, opponent, seat), round
    features: dict[str, dict[int, float]]
    versions: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": BASELINE_KIND,
            "format": BASELINE_FORMAT,
            "ruleset": self.ruleset,
            "scenario": self.scenario,
            "rules_hash": self.rules_hash,
            "config": self.config,
            "agents": self.agents,
            "num_players": self.num_players,
            "seed": self.seed,
            "games_per_matchup": self.games,
            "versions": self.versions,
            "summary": summarize(self.features),
            "jobs": self.jobs,
            "features": rows_to_jsonable(self.features),
        }


def summarize(features: dict[str, dict[int, float]]) -> dict[str, Any]:
    out = {}
    for k, d in sorted(features.items()):
        mi = mean_interval(list(d.values()))
        out[k] = {"mean": round(mi.value, 6), "ci": [round(x, 6) for x in mi.as_list()], "games": len(d)}
    return out


def load_baseline(path: Path, ruleset: Ruleset, scenario: str) -> Baseline:
    if not path.exists():
        raise UserError(
            f"no baseline at {path}; create one with `rulebreaker regress {ruleset.name} "
            f"--scenario {scenario} --update-baseline`"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"baseline {path} is corrupt (not valid JSON: {e})") from None
    if not isinstance(data, dict) or data.get("kind") != BASELINE_KIND:
        raise UserError(f"{path} is not a rulebreaker baseline")
    if data.get("format") != BASELINE_FORMAT:
        raise UserError(
            f"baseline {path} has format {data.get('format')}, this rulebreaker reads format "
            f"{BASELINE_FORMAT}; regenerate it with --update-baseline"
        )
    if data.get("ruleset") != ruleset.name or data.get("scenario") != scenario:
        raise UserError(
            f"baseline {path} was made for {data.get('ruleset')}/{data.get('scenario')}, not {ruleset.name}/{scenario}"
        )
    try:
        return Baseline(
            data["ruleset"],
            data["scenario"],
            data["config"],
            data["rules_hash"],
            data["agents"],
            data["num_players"],
            data["seed"],
            data["games_per_matchup"],
            data["jobs"],
            rows_from_json(data["features"]),
            data.get("versions", {}),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise UserError(f"baseline {path} is incomplete or corrupt ({e})") from None


def _jobs(ruleset: Ruleset, scenario: str, config: BaseModel, specs: list[dict[str, Any]]) -> list[GameJob]:
    cfg = config_dict(config)
    return [
        GameJob(ruleset.name, scenario, cfg, tuple(s["lineup"]), int(s["seed"]), i, trace=True)
        for i, s in enumerate(specs)
    ]


def make_baseline(
    ruleset: Ruleset,
    scenario: str,
    config: BaseModel,
    agents: list[str],
    games: int,
    seed: int,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> Baseline:
    jobs, meta = matchup_jobs(ruleset, scenario, config, agents, games, seed, trace=True)
    rounds = _rounds(meta)
    specs = [
        {"lineup": list(j.agents), "seed": j.seed, "matchup": list(m), "round": r}
        for j, m, r in zip(jobs, meta, rounds, strict=True)
    ]
    records = run_games(_jobs(ruleset, scenario, config, specs), workers=workers, progress=progress)
    n = ruleset.scenario(scenario).players(config)
    feats = feature_table(records, meta, n)
    return Baseline(
        ruleset.name,
        scenario,
        config_dict(config),
        config_hash(config),
        list(agents),
        n,
        seed,
        games,
        specs,
        feats,
        package_versions(),
    )


def _matchup(spec: dict[str, Any]) -> tuple[str, str, int]:
    """A baseline job's (focus agent, opponent agent, focus seat)."""
    focus, opponent, seat = spec["matchup"]
    return str(focus), str(opponent), int(seat)


def _rounds(meta: list[tuple[str, str, int]]) -> list[int]:
    seen: dict[tuple[str, str], int] = {}
    out = []
    for focus, opp, _ in meta:
        k = (focus, opp)
        out.append(seen.get(k, 0))
        seen[k] = seen.get(k, 0) + 1
    return out


def save_baseline(baseline: Baseline, path: Path) -> None:
    atomic_write_json(path, baseline.to_json())


@dataclass
class MetricResult:
    metric: str
    words: str
    kind: str
    primary: bool
    games: int
    baseline: float
    variant: float
    change: float
    ci: tuple[float, float]
    threshold: float
    verdict: Verdict
    discordance: float = 0.0  # share of paired games whose value differs (0 under identical rules)

    def to_json(self) -> dict[str, Any]:
        r = lambda x: round(x, 6)  # noqa: E731
        return {
            "metric": self.metric,
            "description": self.words,
            "kind": self.kind,
            "primary": self.primary,
            "games": self.games,
            "baseline": r(self.baseline),
            "variant": r(self.variant),
            "change": r(self.change),
            "ci": [r(self.ci[0]), r(self.ci[1])],
            "threshold": r(self.threshold),
            "verdict": self.verdict.value,
            "discordance": r(self.discordance),
        }

    def sentence(self) -> str:
        if self.kind == "rate":
            fmt = lambda x: f"{100 * x:.1f}%"  # noqa: E731
            ch = f"{100 * self.change:+.1f} points [{100 * self.ci[0]:+.1f}, {100 * self.ci[1]:+.1f}]"
        else:
            fmt = lambda x: f"{x:.3g}"  # noqa: E731
            ch = f"{self.change:+.3g} [{self.ci[0]:+.3g}, {self.ci[1]:+.3g}]"
        move = "rose" if self.change > 0 else "fell" if self.change < 0 else "stayed"
        if self.change == 0:
            return f"{self.words} stayed at {fmt(self.baseline)}"
        return f"{self.words} {move} from {fmt(self.baseline)} to {fmt(self.variant)} ({ch})"


@dataclass
class RegressResult:
    ruleset: str
    scenario: str
    baseline_hash: str
    variant_hash: str
    games_played: int
    games_available: int
    stopped_early: bool
    metrics: list[MetricResult]

    @property
    def changed(self) -> list[MetricResult]:
        return [m for m in self.metrics if m.verdict is Verdict.CHANGED]

    @property
    def exit_code(self) -> int:
        return 1 if self.changed else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "ruleset": self.ruleset,
            "scenario": self.scenario,
            "baseline_rules_hash": self.baseline_hash,
            "variant_rules_hash": self.variant_hash,
            "games_played": self.games_played,
            "games_available": self.games_available,
            "stopped_early": self.stopped_early,
            "verdict": "changed" if self.changed else "unchanged",
            "exit_code": self.exit_code,
            "changed": [m.metric for m in self.changed],
            "metrics": [m.to_json() for m in self.metrics],
        }


def _threshold(metric: str, kind: str, base_mean: float, min_effect: float) -> float:
    if kind == "rate" or metric.startswith(("return[", "usage[")):
        return min_effect
    return min_effect * max(abs(base_mean), 1e-9)


def check_reproducible(ruleset: Ruleset, baseline: Baseline, workers: int = 1) -> None:
    """Replay the first baseline games under the baseline's own rules; refuse a stale baseline."""
    model = ruleset.config_model
    try:
        base_cfg = validate_config(model, baseline.config, "baseline config")
    except UserError as e:
        raise UserError(
            f"baseline was made by an incompatible version of the {ruleset.name} rules ({e}); "
            "regenerate it with --update-baseline"
        ) from None
    k = min(REPRO_CHECK_GAMES, len(baseline.jobs))
    specs = baseline.jobs[:k]
    recs = run_games(_jobs(ruleset, baseline.scenario, base_cfg, specs), workers=1)
    feats = feature_table(recs, [_matchup(s) for s in specs], baseline.num_players)
    for metric, d in feats.items():
        for i, v in d.items():
            old = baseline.features.get(metric, {}).get(i)
            if old is None or abs(old - v) > 1e-6:
                raise UserError(
                    f"baseline {baseline.ruleset}-{baseline.scenario} no longer reproduces (game {i}, {metric}: "
                    f"baseline {old}, now {v}): it was made by an incompatible engine or persona version; "
                    "regenerate it with --update-baseline"
                )


def regress(
    ruleset: Ruleset,
    scenario: str,
    variant: BaseModel,
    baseline: Baseline,
    alpha: float = DEFAULT_ALPHA,
    beta: float = DEFAULT_BETA,
    min_effect: float = DEFAULT_MIN_EFFECT,
    max_games: int | None = None,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> RegressResult:
    check_reproducible(ruleset, baseline, workers)
    order = sorted(range(len(baseline.jobs)), key=lambda i: (baseline.jobs[i]["round"], i))
    if max_games is not None:
        order = order[:max_games]
    matchups = {(s["matchup"][0], s["matchup"][1]) for s in baseline.jobs}
    batch = max(1, BATCH_ROUNDS * len(matchups))
    specs_all = baseline.jobs
    played: list[int] = []
    var_feats: dict[str, dict[int, float]] = {}
    stopped_early = False
    primaries = sorted(m for m in baseline.features if is_primary(m))
    pos = 0
    while pos < len(order):
        idx = order[pos : pos + batch]
        pos += len(idx)
        specs = [specs_all[i] for i in idx]
        jobs = [
            GameJob(ruleset.name, scenario, config_dict(variant), tuple(s["lineup"]), int(s["seed"]), i, True)
            for s, i in zip(specs, idx, strict=True)
        ]
        recs = run_games(jobs, workers=workers, progress=progress)
        for k, d in feature_table(recs, [_matchup(s) for s in specs], baseline.num_players).items():
            var_feats.setdefault(k, {}).update(d)
        played.extend(idx)
        verdicts = []
        for m in primaries:
            xs, ys = paired_values(baseline.features, var_feats, m, played)
            verdicts.append(paired_sprt([y - x for x, y in zip(xs, ys, strict=True)], min_effect, alpha, beta).verdict)
        if verdicts and all(v is not Verdict.UNDECIDED for v in verdicts) and pos < len(order):
            stopped_early = True
            break
    played.sort()
    metrics = sorted(set(baseline.features) | set(var_feats))
    secondary = [m for m in metrics if not is_primary(m)]
    z = NormalDist().inv_cdf(1 - alpha / (2 * max(1, len(secondary))))
    results: list[MetricResult] = []
    for m in metrics:
        xs, ys = paired_values(baseline.features, var_feats, m, played)
        if not xs:
            continue
        kind = metric_kind(m)
        diffs = [y - x for x, y in zip(xs, ys, strict=True)]
        bmean = sum(xs) / len(xs)
        vmean = sum(ys) / len(ys)
        thr = _threshold(m, kind, bmean, min_effect)
        if is_primary(m):
            ci = mean_interval(diffs)
            verdict = paired_sprt(diffs, thr, alpha, beta).verdict
            if verdict is Verdict.CHANGED and abs(vmean - bmean) < thr / 2:
                verdict = Verdict.UNDECIDED
        else:
            ci = mean_interval(diffs, z)
            if (ci.low > 0 or ci.high < 0) and abs(vmean - bmean) >= thr:
                verdict = Verdict.CHANGED
            elif -thr <= ci.low and ci.high <= thr:
                verdict = Verdict.UNCHANGED
            else:
                verdict = Verdict.UNDECIDED
        lo, hi = (0.0, 0.0) if all(d == 0 for d in diffs) else (ci.low, ci.high)
        results.append(
            MetricResult(
                m,
                describe(m),
                kind,
                is_primary(m),
                len(xs),
                bmean,
                vmean,
                vmean - bmean,
                (lo, hi),
                thr,
                verdict,
                sum(1 for x in diffs if x != 0) / len(diffs),
            )
        )
    rank = {Verdict.CHANGED: 0, Verdict.UNDECIDED: 1, Verdict.UNCHANGED: 2}
    results.sort(key=lambda r: (rank[r.verdict], not r.primary, -abs(r.change) / (r.threshold or 1), r.metric))
    return RegressResult(
        ruleset.name,
        scenario,
        baseline.rules_hash,
        config_hash(variant),
        len(played),
        len(baseline.jobs),
        stopped_early,
        results,
    )


def is_finite(x: float) -> bool:
    return not (math.isnan(x) or math.isinf(x))


def regress_json(results: list[RegressResult]) -> dict[str, Any]:
    """The verdict of one regress call over its scenarios, as ``rulebreaker regress --json`` prints it."""
    return {"exit_code": max((r.exit_code for r in results), default=0), "scenarios": [r.to_json() for r in results]}


def write_regress_run(out_dir: Path, results: list[RegressResult]) -> tuple[Path, Path]:
    """Write ``regress.json`` and the comparison page (``regress.md``, ``regress.html``) into ``out_dir``.

    ``rulebreaker report OUT_DIR`` renders the page again from ``regress.json``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    data = regress_json(results)
    atomic_write_json(out_dir / "regress.json", data)
    return build_regress_report(out_dir, data)

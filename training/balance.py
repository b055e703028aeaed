"""Balancing: the smallest rule change that removes a finding and moves everything else the least.

A candidate is a set of knob values (dotted config keys) applied on top of the rules under study. Each is
judged by a cheap evaluation on common random numbers: the persona suite's round-robin through the runner
(the same seeds for every candidate), the same games under the rules as written, and the structure stage
(seats, lengths, resources), i.e. discovery's persona stages, whose findings come from :mod:`results.findings`.
The objective: the finding must be gone; then the other agents' values and the game's length should move
as little as possible from the rules under study, with a small premium on fewer knobs and nearer values.

The search is Optuna's (a seeded TPE sampler, ask/tell), after every one-knob change has been tried in order
of distance from the current value (cheap changes first). Candidates run in batches as local processes or
Ray tasks (:func:`training.sweep.map_tasks`).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agents.registry import agent_names
from envs.core.config import (
    VARIANT_META_KEY,
    config_dict,
    flat_items,
    load_config,
    read_toml,
    with_overrides,
)
from envs.core.errors import ConfigError, UserError
from envs.core.registry import get_ruleset
from results.findings import Kind, Thresholds
from results.records import atomic_write_json, atomic_write_text
from training.discover.budgets import Budget
from training.discover.discovery import Discovery, agent_values, interval_dict
from training.discover.stages import stage_round_robin, stage_structure, stage_variant_vs_written
from training.sweep import map_tasks, ray_session

NOT_REMOVED = 10.0  # cost of a candidate that leaves the finding in place (any fix beats any non-fix)
KNOB_PREMIUM = 0.02  # cost per changed knob
DISTANCE_PREMIUM = 0.01  # cost per unit of normalized distance from the current value
INT_REACH = 4  # integer knobs: values within this distance of the current one (and inside the bounds)

Override = tuple[str, Any]


@dataclass(frozen=True)
class CandidateTask:
    ruleset: str
    scenario: str
    variant: str | None
    overrides: tuple[Override, ...]
    games: int
    seed: int


def _budget(games: int) -> Budget:
    return Budget(
        name="balance",
        round_robin_games=games,
        restricted_deals=0,
        sensitivity_games=0,
        rl_steps=0,
        rl_eval_games=0,
        example_games=0,
    )


def evaluate_candidate(task: CandidateTask) -> dict[str, Any]:
    """The persona stages of discovery under the candidate rules: findings, agent values, game length."""
    rs = get_ruleset(task.ruleset)
    try:
        config = load_config(rs, task.variant)
        if task.overrides:
            config = with_overrides(config, list(task.overrides))
    except ConfigError as e:
        return {"valid": False, "error": str(e)}
    base = load_config(rs)
    variant = Path(task.variant) if task.variant else Path("overrides") if task.overrides else None
    with tempfile.TemporaryDirectory(prefix="rb-balance-") as tmp:
        d = Discovery(
            rs, task.scenario, config, base, variant, _budget(task.games), task.seed, 1, Thresholds(), Path(tmp)
        )
        personas = agent_names(rs.name)
        rr = stage_round_robin(d, personas)
        stage_variant_vs_written(d, personas, rr)
        stage_structure(d, rr, rr.records, d.written_records)
    return {
        "valid": True,
        "findings": [f.to_json() for f in d.findings],
        "values": {a: interval_dict(v) for a, v in agent_values(rr).items()},
        "length": float(d.sections["structure"]["length"]["mean"]),
        "variant_vs_written": (d.sections.get("variant_vs_written") or {}).get("metrics", {}),
        "resources": d.sections["structure"].get("resources", {}),
    }


# -- the target ---------------------------------------------------------------------------------------------


def parse_target(fix: str) -> tuple[str, str | None]:
    kind, _, subject = fix.partition(":")
    kinds = [k.value for k in Kind]
    if kind not in kinds:
        raise UserError(f"--fix {fix}: unknown finding kind '{kind}'; valid: {', '.join(kinds)}")
    return kind, subject or None


def matching(
    findings: list[dict[str, Any]], kind: str, subject: str | None, metric: str | None
) -> dict[str, Any] | None:
    for f in findings:
        if f["kind"] != kind:
            continue
        if subject is None or f["subject"] == subject or (metric is not None and f["metric"] == metric):
            return f
    return None


def target_metric(ev: dict[str, Any], target: dict[str, Any]) -> dict[str, float] | None:
    """The target finding's metric under an evaluation, found or not: ``{value, low, high}``."""
    if target["kind"] == Kind.RESOURCE_RUNAWAY.value:
        r = ev.get("resources", {}).get(target["subject"])
        return dict(r["relative_rise"]) if r else None
    row = ev.get("variant_vs_written", {}).get(target["metric"])
    if row is not None:
        return {"value": row["change"], "low": row["low"], "high": row["high"]}
    return None


# -- the search space ---------------------------------------------------------------------------------------


def _field_bounds(model: type[BaseModel], dotted: str) -> tuple[Any, float | None, float | None]:
    current: Any = model
    info = None
    for part in dotted.split("."):
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            raise UserError(f"--knobs: unknown key '{dotted}'")
        info = fields[part]
        current = info.annotation
    assert info is not None
    lo = hi = None
    for m in info.metadata:
        lo = getattr(m, "ge", None) if getattr(m, "ge", None) is not None else lo
        hi = getattr(m, "le", None) if getattr(m, "le", None) is not None else hi
    return info.annotation, lo, hi


def knob_values(ruleset: str, scenario: str, config: BaseModel, keys: Sequence[str] | None) -> dict[str, list[Any]]:
    """Per knob, the values worth trying other than the current one, nearest first."""
    rs = get_ruleset(ruleset)
    declared = {k.key: list(k.values) for k in rs.knobs if not k.scenarios or scenario in k.scenarios}
    written = dict(flat_items(config_dict(load_config(rs))))
    current = dict(flat_items(config_dict(config)))
    out: dict[str, list[Any]] = {}
    for key in keys if keys is not None else list(declared):
        if key not in current:
            raise UserError(f"--knobs: unknown key '{key}'")
        cur = current[key]
        ann, lo, hi = _field_bounds(type(config), key)
        vals = [*declared.get(key, []), written.get(key)]
        if ann is bool:
            vals.append(not cur)
        elif ann is int and isinstance(cur, int):
            low = int(lo) if lo is not None else cur - INT_REACH
            high = int(hi) if hi is not None else cur + INT_REACH
            vals.extend(range(max(low, cur - INT_REACH), min(high, cur + INT_REACH) + 1))
        uniq: list[Any] = []
        for v in vals:
            if v is not None and v != cur and v not in uniq and type(v) is type(cur):
                uniq.append(v)
        uniq.sort(key=lambda v: (_distance(cur, v), str(v)))
        if uniq:
            out[key] = uniq
    if not out:
        raise UserError(f"no knob to search for {ruleset} {scenario}; give --knobs k1,k2")
    return out


def _distance(cur: Any, v: Any) -> float:
    if isinstance(cur, bool) or not isinstance(cur, int | float):
        return 1.0
    return abs(float(v) - float(cur)) / max(abs(float(cur)), 1.0)


# -- the search ---------------------------------------------------------------------------------------------


@dataclass
class Trial:
    number: int
    overrides: tuple[Override, ...]
    cost: float
    removed: bool
    metric: dict[str, float] | None
    moves: dict[str, float]  # other agents' value changes and the relative length change
    error: str | None = None


@dataclass
class BalanceResult:
    ruleset: str
    scenario: str
    variant: str | None
    target: dict[str, Any]
    target_label: str
    before: dict[str, float] | None
    trials: list[Trial]
    proposals: list[Trial]
    base_overrides: dict[str, Any]
    seconds: float
    paths: dict[int, Path] = field(default_factory=dict)

    @property
    def before_line(self) -> str:
        b = self.before
        iv = f"{b['value']:.3g} [{b['low']:.3g}, {b['high']:.3g}]" if b else "n/a"
        t = self.target
        return f"before: {t['metric']} = {iv} (threshold {t['threshold']:.3g}): {t['summary']}"


def _cost(ev: dict[str, Any], before: dict[str, Any], target: dict[str, Any], overrides: tuple[Override, ...],
          current: dict[str, Any]) -> tuple[float, bool, dict[str, float]]:  # fmt: skip
    if not ev.get("valid"):
        return 2 * NOT_REMOVED, False, {}
    removed = matching(ev["findings"], target["kind"], target["subject"], target["metric"]) is None
    moves = {
        f"value[{a}]": ev["values"][a]["value"] - v["value"] for a, v in before["values"].items() if a in ev["values"]
    }
    moves["length (relative)"] = (ev["length"] - before["length"]) / max(before["length"], 1e-9)
    cost = sum(abs(x) for x in moves.values())
    cost += KNOB_PREMIUM * len(overrides) + DISTANCE_PREMIUM * sum(_distance(current[k], v) for k, v in overrides)
    if not removed:
        cost += NOT_REMOVED
    return cost, removed, moves


def balance(
    ruleset: str,
    scenario: str,
    rules: Path | None,
    fix: str,
    knobs: Sequence[str] | None = None,
    trials: int = 12,
    games: int = 40,
    seed: int = 0,
    backend: str = "local",
    workers: int = 2,
    address: str | None = None,
    out_dir: Path | None = None,
    top: int = 3,
    progress: Callable[[int], None] | None = None,
) -> BalanceResult:
    """Search the knobs for changes that remove the finding ``fix``; write the best ``top`` as variant files."""
    import optuna

    t0 = time.perf_counter()
    rs = get_ruleset(ruleset)
    rs.scenario(scenario)
    kind, subject = parse_target(fix)
    variant = str(rules) if rules else None
    config = load_config(rs, rules)
    space = knob_values(ruleset, scenario, config, knobs)
    current = dict(flat_items(config_dict(config)))
    before = evaluate_candidate(CandidateTask(ruleset, scenario, variant, (), games, seed))
    if progress:
        progress(1)
    target = matching(before["findings"], kind, subject, None)
    if target is None:
        have = ", ".join(f"{f['kind']}:{f['subject']}" for f in before["findings"]) or "none"
        raise UserError(f"--fix {fix}: no such finding in {ruleset} {scenario} under these rules (found: {have})")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    keep = "keep"
    depth = max(len(vs) for vs in space.values())
    singles = [(k, vs[rank]) for rank in range(depth) for k, vs in space.items() if rank < len(vs)]
    for k, v in singles[:trials]:
        study.enqueue_trial({key: (json.dumps(v) if key == k else keep) for key in space})
    done: list[Trial] = []
    seen: set[tuple[Override, ...]] = set()
    with ray_session(address, workers) if backend == "ray" else nullcontext():  # one cluster for every batch
        _search(study, space, ruleset, scenario, variant, games, seed, trials, backend, workers, address,
                before, target, current, done, seen, progress)  # fmt: skip
    fixes = sorted((t for t in done if t.removed), key=lambda t: (t.cost, t.number))[:top]
    base_overrides = read_toml(Path(rules)) if rules else {}
    base_overrides.pop(VARIANT_META_KEY, None)
    res = BalanceResult(
        ruleset, scenario, variant, target, f"{kind}:{target['subject']}", target_metric(before, target) or
        {"value": target["value"], "low": target["ci"][0], "high": target["ci"][1]}, done, fixes, base_overrides,
        time.perf_counter() - t0,
    )  # fmt: skip
    if out_dir is not None:
        for i, p in enumerate(fixes, 1):
            path = out_dir / f"fix_{i}.toml"
            atomic_write_text(path, proposal_toml(res, p))
            res.paths[p.number] = path
        atomic_write_json(out_dir / "balance.json", balance_json(res))
    return res


def _search(study: Any, space: dict[str, list[Any]], ruleset: str, scenario: str, variant: str | None, games: int,
            seed: int, trials: int, backend: str, workers: int, address: str | None, before: dict[str, Any],
            target: dict[str, Any], current: dict[str, Any], done: list[Trial], seen: set[tuple[Override, ...]],
            progress: Callable[[int], None] | None) -> None:  # fmt: skip
    """Ask for batches of ``workers`` trials, evaluate the new ones, tell their costs, until ``trials`` are done."""
    keep = "keep"
    while len(done) < trials:
        batch = []
        for _ in range(min(workers, trials - len(done))):
            t = study.ask()
            choice = {k: t.suggest_categorical(k, [keep, *[json.dumps(v) for v in vs]]) for k, vs in space.items()}
            ov = tuple(sorted((k, json.loads(c)) for k, c in choice.items() if c != keep))
            batch.append((t, ov))
        tasks = [CandidateTask(ruleset, scenario, variant, ov, games, seed) for _, ov in batch]
        fresh = [i for i, (_, ov) in enumerate(batch) if ov and ov not in seen]
        evs = map_tasks(evaluate_candidate, [tasks[i] for i in fresh], backend, workers, address)
        by_i = dict(zip(fresh, evs, strict=True))
        for i, (t, ov) in enumerate(batch):
            ev = by_i.get(i, {"valid": False, "error": "no change, or a repeated change"})
            cost, removed, moves = _cost(ev, before, target, ov, current)
            study.tell(t, cost)
            if i in by_i:
                seen.add(ov)
            metric = target_metric(ev, target) if ev.get("valid") else None
            done.append(Trial(t.number, ov, cost, removed, metric, moves, ev.get("error")))
            if progress:
                progress(1)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    return json.dumps(str(v))


def _toml_tables(d: dict[str, Any], prefix: str = "") -> list[str]:
    lines: list[str] = []
    plain = {k: v for k, v in d.items() if not isinstance(v, dict)}
    if plain and prefix:
        lines.append(f"[{prefix}]")
    lines.extend(f"{k} = {_toml_value(v)}" for k, v in plain.items())
    if plain:
        lines.append("")
    for k, v in d.items():
        if isinstance(v, dict):
            lines.extend(_toml_tables(v, f"{prefix}.{k}" if prefix else k))
    return lines


def _iv(m: dict[str, float] | None) -> str:
    return f"{m['value']:.3g} [{m['low']:.3g}, {m['high']:.3g}]" if m else "below detection"


def proposal_toml(res: BalanceResult, trial: Trial) -> str:
    """A proposed change as a variant file: the rules under study plus the change, with its evidence."""
    data: dict[str, Any] = json.loads(json.dumps(res.base_overrides))
    for key, v in trial.overrides:
        node = data
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = v
    change = ", ".join(f"{k} = {_toml_value(v)}" for k, v in trial.overrides)
    moves = "; ".join(f"{k} {v:+.3f}" for k, v in trial.moves.items())
    head = [
        f"# Balance proposal for {res.ruleset} {res.scenario}: removes {res.target_label}",
        f"# change: {change}" + (f" (on top of {res.variant})" if res.variant else ""),
        f"# evidence ({res.target['metric']}): before {_iv(res.before)}; after {_iv(trial.metric)}"
        f" (finding threshold {res.target['threshold']:.3g})",
        f"# moves against the rules under study: {moves}",
        f"[{VARIANT_META_KEY}]",
        f"description = {json.dumps('Proposed fix: ' + change)}",
        'kind = "fix"',
        f"fixes = {json.dumps(res.target_label)}",
        "",
    ]
    return "\n".join(head + _toml_tables(data)).rstrip() + "\n"


def balance_json(res: BalanceResult) -> dict[str, Any]:
    def trial_json(t: Trial) -> dict[str, Any]:
        return {
            "number": t.number,
            "overrides": [[k, v] for k, v in t.overrides],
            "cost": round(t.cost, 6),
            "removed": t.removed,
            "metric": t.metric,
            "moves": {k: round(v, 6) for k, v in t.moves.items()},
            "error": t.error,
            "file": str(res.paths[t.number]) if t.number in res.paths else None,
        }

    return {
        "ruleset": res.ruleset,
        "scenario": res.scenario,
        "variant": res.variant,
        "target": res.target,
        "before": res.before,
        "proposals": [trial_json(t) for t in res.proposals],
        "trials": [trial_json(t) for t in res.trials],
        "seconds": round(res.seconds, 3),
    }

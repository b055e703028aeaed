"""Balancing: the smallest rule change that removes a finding and moves everything else the least.

A candidate is a set of knob values (dotted config keys) applied on top of the rules under study. Each is
judged by a cheap evaluation on common random numbers: the persona suite's round-robin through the runner
(the same seeds for every candidate), the same games under the rules as written, and the structure stage
(seats, lengths, resources), i.e. discovery's persona stages, whose findings come from :mod:`results.findings`.
The objective: the finding must be gone; then the other agents' values and the game's length should move
as little as possible from the rules under study, with a small premium on fewer knobs and nearer values.

The search is Optuna's (a seeded TPE sampler), after every one-knob change has been tried in order of distance
from the current value (cheap changes first). On the local backend Optuna is driven directly (ask/tell) and
candidates run in batches as local processes (:func:`training.backends.map_tasks`); on the Ray backend the
same search space, first points and sampler go to Ray Tune's ``OptunaSearch`` (``ray.tune.Tuner`` with a
``ConcurrencyLimiter`` of ``workers`` trials at a time), each candidate a Tune trial on the cluster. Either way
the search resumes: locally Optuna's journal ``<out>/study.journal``, on Ray Tune's experiment
``<out>/tune/balance``; rerunning the same balance command with the same ``--out`` restores it, and finished
trials are not rerun.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import tempfile
import time
from collections.abc import Callable, Sequence
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
from training.backends import TASK_RETRIES, check_backend, map_tasks, ray_module, ray_session
from training.discover.budgets import Budget
from training.discover.discovery import Discovery, agent_values, interval_dict
from training.discover.stages import stage_round_robin, stage_structure, stage_variant_vs_written

NOT_REMOVED = 10.0  # cost of a candidate that leaves the finding in place (any fix beats any non-fix)
KNOB_PREMIUM = 0.02  # cost per changed knob
DISTANCE_PREMIUM = 0.01  # cost per unit of normalized distance from the current value
RAY_TUNE_INSTALL = 'pip install "rulebreaker[ray]"  (or: pip install "ray[default,tune]>=2.9,<3")'
INT_REACH = 4  # integer knobs: values within this distance of the current one (and inside the bounds)
KEEP = "keep"  # the search space's choice "leave this knob as it is"
TUNE_EXPERIMENT = "balance"  # the Ray Tune experiment's folder name under <out>/tune

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


FINDING_ID = re.compile(r"^F-[0-9a-f]{6}(-\d+)?$")
"""A finding's stable id as findings.json gives it (:func:`results.findings.finding_id`)."""


def discover_runs(ruleset: str, scenario: str, runs_root: Path = Path("runs")) -> list[Path]:
    """The findings.json files of the discover runs for ``ruleset`` ``scenario`` under ``runs_root``, newest first."""
    found = []
    for p in [*runs_root.glob("*-discover*/findings.json"), *runs_root.glob("*-discover*/*/findings.json")]:
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if isinstance(doc, dict) and doc.get("ruleset") == ruleset and doc.get("scenario") == scenario:
            found.append(p)
    return sorted(found, key=lambda p: (p.stat().st_mtime, str(p)), reverse=True)


def resolve_fix(fix: str, ruleset: str, scenario: str, from_dir: Path | None = None,
                runs_root: Path = Path("runs")) -> str:  # fmt: skip
    """``--fix`` as KIND[:SUBJECT]: a finding id (``F-3fa9c1``) is looked up in a discover run's findings.json —
    ``from_dir`` (a run folder or its findings.json), else the newest discover run for ``ruleset`` ``scenario``
    under ``runs_root``. An id that is not there is a :class:`UserError` naming it and the ids available."""
    if not FINDING_ID.match(fix):
        if fix.startswith("F-"):
            raise UserError(f"--fix {fix}: not a finding id (F- and 6 hex digits, as findings.json gives them)")
        return fix
    if from_dir is not None:
        path = from_dir if from_dir.name == "findings.json" else from_dir / "findings.json"
        if not path.is_file() and (from_dir / scenario / "findings.json").is_file():
            path = from_dir / scenario / "findings.json"  # a discover run over every scenario
        if not path.is_file():
            raise UserError(f"--from {from_dir}: no findings.json there (give a discover run folder)")
    else:
        runs = discover_runs(ruleset, scenario, runs_root)
        if not runs:
            raise UserError(
                f"--fix {fix}: no discover run for {ruleset} {scenario} under {runs_root}/ to look the id up in; "
                f"run `rulebreaker discover {ruleset} --scenario {scenario}` first, give --from RUN_DIR, "
                f"or name the finding as KIND:SUBJECT"
            )
        path = runs[0]
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UserError(f"--fix {fix}: cannot read {path}: {e}") from None
    findings = doc.get("findings", []) if isinstance(doc, dict) else []
    hit = next((f for f in findings if isinstance(f, dict) and f.get("id") == fix), None)
    if hit is None:
        have = ", ".join(f"{f.get('id')} ({f.get('kind')}:{f.get('subject')})" for f in findings if isinstance(f, dict))
        raise UserError(f"--fix {fix}: no finding with this id in {path}; ids available: {have or 'none'}")
    return f"{hit['kind']}:{hit['subject']}"


def parse_target(fix: str) -> tuple[str, str | None]:
    """``KIND`` or ``KIND:SUBJECT`` -> (kind, subject or None); an unknown kind is a :class:`UserError`."""
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
    retries: int = TASK_RETRIES,
) -> BalanceResult:
    """Search the knobs for changes that remove the finding ``fix``; write the best ``top`` as variant files."""
    check_backend(backend)
    if backend == "ray":
        ray_module(local=not address)
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
    firsts = first_points(space, trials)
    done: list[Trial] = []
    ctx = TrialContext(ruleset, scenario, variant, games, seed, before, target, current)
    if backend == "ray":
        _search_tune(space, firsts, ctx, trials, workers, address, out_dir, done, progress)
    else:
        settings = {"ruleset": ruleset, "scenario": scenario, "variant": variant, "fix": f"{kind}:{target['subject']}",
                    "knobs": sorted(space), "games": games, "seed": seed}  # fmt: skip
        study = _local_study(out_dir, seed, firsts, settings, done)
        if progress and done:
            progress(len(done))
        _search(study, space, ctx, trials, workers, retries, done, progress)
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


def first_points(space: dict[str, list[Any]], trials: int) -> list[dict[str, str]]:
    """The first points of the search: every one-knob change, nearest values first (the cheapest changes)."""
    depth = max(len(vs) for vs in space.values())
    singles = [(k, vs[rank]) for rank in range(depth) for k, vs in space.items() if rank < len(vs)]
    return [{key: (json.dumps(v) if key == k else KEEP) for key in space} for k, v in singles[:trials]]


def _choices(space: dict[str, list[Any]]) -> dict[str, list[str]]:
    return {k: [KEEP, *[json.dumps(v) for v in vs]] for k, vs in space.items()}


def _overrides(choice: dict[str, str]) -> tuple[Override, ...]:
    return tuple(sorted((k, json.loads(c)) for k, c in choice.items() if c != KEEP))


@dataclass(frozen=True)
class TrialContext:
    """What judging a candidate needs besides its overrides (plain values: it travels to Tune trials)."""

    ruleset: str
    scenario: str
    variant: str | None
    games: int
    seed: int
    before: dict[str, Any]
    target: dict[str, Any]
    current: dict[str, Any]

    def task(self, overrides: tuple[Override, ...]) -> CandidateTask:
        return CandidateTask(self.ruleset, self.scenario, self.variant, overrides, self.games, self.seed)

    def trial(self, number: int, overrides: tuple[Override, ...], ev: dict[str, Any]) -> Trial:
        cost, removed, moves = _cost(ev, self.before, self.target, overrides, self.current)
        metric = target_metric(ev, self.target) if ev.get("valid") else None
        return Trial(number, overrides, cost, removed, metric, moves, ev.get("error"))


NO_CHANGE = {"valid": False, "error": "no change, or a repeated change"}


STUDY_FILE = "study.journal"
"""The local search's Optuna journal in ``--out``: a rerun with the same ``--out`` resumes from it."""


def _local_study(out_dir: Path | None, seed: int, firsts: list[dict[str, str]], settings: dict[str, Any],
                 done: list[Trial]) -> Any:  # fmt: skip
    """Optuna's study, journaled in ``out_dir/study.journal`` when there is an ``out_dir``: a rerun resumes it —
    finished trials go back into ``done`` and are not rerun; a trial cut short is queued again."""
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend
    from optuna.trial import TrialState

    sampler = optuna.samplers.TPESampler(seed=seed)
    if out_dir is None:
        study = optuna.create_study(sampler=sampler)
        for point in firsts:
            study.enqueue_trial(point)
        return study
    out_dir.mkdir(parents=True, exist_ok=True)
    storage = JournalStorage(JournalFileBackend(str(out_dir / STUDY_FILE)))
    study = optuna.create_study(study_name="balance", storage=storage, sampler=sampler, load_if_exists=True)
    if not study.trials:
        study.set_user_attr("settings", settings)
        for point in firsts:
            study.enqueue_trial(point)
        return study
    if study.user_attrs.get("settings") != settings:
        raise UserError(
            f"--out {out_dir} holds a balance run with other settings ({study.user_attrs.get('settings')}); "
            f"give another --out to start afresh"
        )
    for t in study.trials:
        if t.state == TrialState.COMPLETE and "trial" in t.user_attrs:
            f = json.loads(t.user_attrs["trial"])
            ov = tuple((k, v) for k, v in f["overrides"])
            cost = float(t.value) if t.value is not None else 2 * NOT_REMOVED
            done.append(Trial(t.number, ov, cost, f["removed"], f["metric"], f["moves"], f["error"]))
        elif t.state == TrialState.RUNNING:  # asked before the interruption, never told: run it again
            study.enqueue_trial(t.params)
            study.tell(t.number, state=TrialState.FAIL)
    return study


def _search(study: Any, space: dict[str, list[Any]], ctx: TrialContext, trials: int, workers: int, retries: int,
            done: list[Trial], progress: Callable[[int], None] | None) -> None:  # fmt: skip
    """Optuna directly: ask for batches of ``workers`` trials, evaluate the new ones in processes, tell their costs
    (each trial's record kept as a user attribute, so a journaled study resumes with it)."""
    choices = _choices(space)
    seen: set[tuple[Override, ...]] = {t.overrides for t in done if t.error != NO_CHANGE["error"]}
    while len(done) < trials:
        batch = []
        for _ in range(min(workers, trials - len(done))):
            t = study.ask()
            ov = _overrides({k: t.suggest_categorical(k, cs) for k, cs in choices.items()})
            batch.append((t, ov))
        fresh = [i for i, (_, ov) in enumerate(batch) if ov and ov not in seen]
        evs = map_tasks(evaluate_candidate, [ctx.task(batch[i][1]) for i in fresh], "local", workers, retries=retries)
        by_i = dict(zip(fresh, evs, strict=True))
        for i, (t, ov) in enumerate(batch):
            trial = ctx.trial(t.number, ov, by_i.get(i, NO_CHANGE))
            t.set_user_attr("trial", json.dumps(_trial_fields(trial)))
            study.tell(t, trial.cost)
            if i in by_i:
                seen.add(ov)
            done.append(trial)
            if progress:
                progress(1)


def _tune_trial(config: dict[str, str], ctx: TrialContext, names: dict[str, str]) -> None:
    """One Ray Tune trial: the candidate ``config`` (knob -> choice, by short name) judged like a local one."""
    from ray import tune

    ov = _overrides({names[k]: c for k, c in config.items()})
    ev = evaluate_candidate(ctx.task(ov)) if ov else NO_CHANGE
    t = ctx.trial(0, ov, ev)
    tune.report({"cost": t.cost, "trial": json.dumps(_trial_fields(t))})


def _trial_fields(t: Trial) -> dict[str, Any]:
    return {
        "overrides": [[k, v] for k, v in t.overrides],
        "removed": t.removed,
        "metric": t.metric,
        "moves": t.moves,
        "error": t.error,
    }


def _tune_order(path: str | None, fallback: int) -> tuple[int, int]:
    """The order Tune created a trial in: the counter of its folder name (``_tune_trial_<id>_<n>_<params>…``)."""
    m = re.search(r"_[0-9a-f]{8}_(\d+)_", Path(path or "").name)
    return (int(m.group(1)), fallback) if m else (1 << 30, fallback)


def _search_tune(space: dict[str, list[Any]], firsts: list[dict[str, str]], ctx: TrialContext, trials: int,
                 workers: int, address: str | None, out_dir: Path | None, done: list[Trial],
                 progress: Callable[[int], None] | None) -> None:  # fmt: skip
    """Ray Tune's Optuna search: the same space, first points and seeded TPE sampler, trials on the cluster."""
    import optuna

    try:
        from ray import tune
        from ray.tune.search import ConcurrencyLimiter
        from ray.tune.search.optuna import OptunaSearch
    except ImportError:
        raise UserError(f"balance --backend ray needs Ray Tune: {RAY_TUNE_INSTALL}") from None
    names = {f"k{i}": key for i, key in enumerate(space)}  # Tune reads "/" and "." in names as nesting
    by_key = {key: short for short, key in names.items()}
    choices = _choices(space)
    dists: dict[str, optuna.distributions.BaseDistribution] = {
        by_key[k]: optuna.distributions.CategoricalDistribution(cs) for k, cs in choices.items()
    }
    points = [{by_key[k]: c for k, c in p.items()} for p in firsts]
    storage = (out_dir / "tune") if out_dir is not None else Path(tempfile.mkdtemp(prefix="rb-balance-tune-"))
    storage = storage.resolve()
    trainable = tune.with_resources(tune.with_parameters(_tune_trial, ctx=ctx, names=names), {"cpu": 1})
    with ray_session(address, workers):
        if tune.Tuner.can_restore(str(storage / TUNE_EXPERIMENT)):  # resume: finished trials are not rerun
            tuner = tune.Tuner.restore(str(storage / TUNE_EXPERIMENT), trainable, resume_errored=True)
        else:
            searcher = OptunaSearch(
                space=dists,
                metric="cost",
                mode="min",
                points_to_evaluate=points,
                sampler=optuna.samplers.TPESampler(seed=ctx.seed),
            )
            tuner = tune.Tuner(
                trainable,
                tune_config=tune.TuneConfig(
                    search_alg=ConcurrencyLimiter(searcher, max_concurrent=max(1, workers)), num_samples=trials
                ),
                run_config=tune.RunConfig(storage_path=str(storage), name=TUNE_EXPERIMENT, verbose=0),
            )
        with contextlib.redirect_stdout(io.StringIO()):  # Tune's experiment tables would mix with the proposals
            grid = tuner.fit()
    rows = []
    failed = [grid[i].error for i in range(len(grid)) if grid[i].error is not None]
    if failed:
        first = str(failed[0]).strip().splitlines()
        raise UserError(
            f"{len(failed)} of {len(grid)} Ray Tune trial(s) failed (kept in {storage / TUNE_EXPERIMENT}; rerun to "
            f"resume): {first[-1] if first else type(failed[0]).__name__}"
        )
    for i in range(len(grid)):
        r = grid[i]
        if r.metrics and "trial" in r.metrics:
            rows.append((_tune_order(r.path, i), float(r.metrics["cost"]), json.loads(r.metrics["trial"])))
    rows.sort(key=lambda row: row[0])
    for number, (_, cost, f) in enumerate(rows):
        ov = tuple((k, v) for k, v in f["overrides"])
        done.append(Trial(number, ov, cost, f["removed"], f["metric"], f["moves"], f["error"]))
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

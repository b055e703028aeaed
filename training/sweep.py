"""Sweeps: one job (discover, regress or evaluate) run for every rule variant, on processes or on Ray.

Each variant is one task, named by plain values (:class:`VariantTask`), so the same function runs in a local
worker process or as a Ray task on a cluster. A task never raises: a bad variant (unreadable TOML, a key the
rules do not have, a missing baseline) gives a record with ``exit_code`` 2 and the error line, and the sweep
goes on. Every finished record is written at once (``records/<variant>.json``), so an interrupted sweep resumes
where it stopped: a variant whose record exists is not rerun.

The results do not depend on the backend: a task owns its seeds (the job's seed, the same for every variant,
so variants are compared on common random numbers), and its games come back in job order wherever they ran —
in the task's process, or, for a discover variant on Ray, as Ray tasks of their own (``batch_workers``; see
:mod:`training.backends`, which also retries a task whose worker died).
"""

from __future__ import annotations

import glob
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.registry import agent_names
from envs.core.config import config_hash, load_config, variant_meta
from envs.core.errors import UserError
from envs.core.registry import get_ruleset
from results.records import atomic_write_json, package_versions
from training.backends import BACKENDS, RAY_INSTALL, TASK_RETRIES, check_backend, map_tasks, ray_module, ray_session

__all__ = ["BACKENDS", "JOBS", "RAY_INSTALL", "SweepResult", "VariantTask", "map_tasks", "ray_session", "sweep"]

JOBS = ("regress", "evaluate", "discover")
RECORDS_DIR = "records"
SWEEP_KIND = "rulebreaker-sweep"


@dataclass(frozen=True)
class VariantTask:
    """One variant's job, by value: what a worker process or a Ray task needs to run it."""

    ruleset: str
    variant: str  # the variant file's path
    job: str  # "regress" | "evaluate" | "discover"
    scenario: str | None = None  # None: every scenario (regress, discover) / the first one (evaluate)
    seed: int = 0
    games: int = 40  # evaluate: games per matchup
    max_games: int | None = 200  # regress: cap on paired games per scenario
    budget: str = "quick"  # discover: the budget (RL is never trained in a sweep)
    batch_workers: int = 1  # discover: parallel game batches (on Ray: Ray tasks); results do not depend on it


def variant_paths(ruleset: str, spec: str | Path | None) -> list[Path]:
    """The variant files a ``--variants`` argument names: a folder's ``*.toml``, a glob, or one file.

    ``None`` means the ruleset's shipped variants (``envs/<ruleset>/variants/``).
    """
    if spec is None:
        rs = get_ruleset(ruleset)
        if rs.variants_dir is None:
            raise UserError(f"ruleset '{ruleset}' ships no variants folder; give --variants DIR|GLOB")
        spec = rs.variants_dir
    p = Path(spec)
    if p.is_dir():
        found = sorted(p.glob("*.toml"))
    elif p.is_file():
        found = [p]
    else:
        found = sorted(Path(x) for x in glob.glob(str(spec)) if Path(x).is_file())
    if not found:
        raise UserError(f"--variants {spec}: no variant file found (a folder of .toml files, a glob or a file)")
    names = [f.stem for f in found]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UserError(f"--variants {spec}: several variants share the name {', '.join(dupes)}")
    return found


def record_name(variant: str | Path) -> str:
    return Path(variant).stem


def _scenarios(ruleset: str, scenario: str | None, job: str) -> list[str]:
    rs = get_ruleset(ruleset)
    if scenario is not None:
        return [rs.scenario(scenario).name]
    names = list(rs.scenarios)
    return names[:1] if job == "evaluate" else names


def _run_regress(task: VariantTask) -> tuple[int, dict[str, Any], dict[str, float], list[str]]:
    from training.regress import baseline_path, load_baseline, regress

    rs = get_ruleset(task.ruleset)
    config = load_config(rs, task.variant)
    results = []
    summary: dict[str, float] = {}
    findings: list[str] = []
    for sc in _scenarios(task.ruleset, task.scenario, "regress"):
        b = load_baseline(baseline_path(rs.name, sc), rs, sc)
        r = regress(rs, sc, config, b, max_games=task.max_games, workers=1)
        results.append(r.to_json())
        summary[f"{sc}: changed metrics"] = float(len(r.changed))
        summary[f"{sc}: paired games"] = float(r.games_played)
        findings.extend(f"{sc}: {m.sentence()}" for m in r.changed)
    code = max(r["exit_code"] for r in results)
    return code, {"rules_hash": config_hash(config), "scenarios": results}, summary, findings


def _run_evaluate(task: VariantTask) -> tuple[int, dict[str, Any], dict[str, float], list[str]]:
    from training.discover import agent_values
    from training.evaluate import evaluate

    rs = get_ruleset(task.ruleset)
    config = load_config(rs, task.variant)
    out: dict[str, Any] = {"rules_hash": config_hash(config), "scenarios": {}}
    summary: dict[str, float] = {}
    for sc in _scenarios(task.ruleset, task.scenario, "evaluate"):
        names = agent_names(rs.name)
        ev = evaluate(rs, sc, config, names, task.games, task.seed, workers=1)
        metrics = ev.metrics()
        values = agent_values(ev)
        out["scenarios"][sc] = {"metrics": metrics, "values": {a: asdict(v) for a, v in values.items()}}
        summary[f"{sc}: mean length"] = float(metrics["game_length"]["mean"])
        for a, v in values.items():
            summary[f"{sc}: value[{a}]"] = round(v.value, 6)
    return 0, out, summary, []


def _run_discover(task: VariantTask) -> tuple[int, dict[str, Any], dict[str, float], list[str]]:
    import tempfile

    from training.discover import BUDGETS, make_discovery, run_discovery

    rs = get_ruleset(task.ruleset)
    if task.budget not in BUDGETS:
        raise UserError(f"unknown budget '{task.budget}'; valid: {', '.join(BUDGETS)}")
    out: dict[str, Any] = {"scenarios": {}}
    summary: dict[str, float] = {}
    findings: list[str] = []
    for sc in _scenarios(task.ruleset, task.scenario, "discover"):
        with tempfile.TemporaryDirectory(prefix="rb-sweep-") as tmp:
            d = make_discovery(
                rs, sc, Path(task.variant), BUDGETS[task.budget], task.seed, task.batch_workers, Path(tmp), rl=False
            )
            result = run_discovery(d, None)
        out["scenarios"][sc] = result
        out["rules_hash"] = result["rules_hash"]
        summary[f"{sc}: findings"] = float(len(result["findings"]))
        for sev in ("high", "medium"):
            summary[f"{sc}: {sev} findings"] = float(sum(1 for f in result["findings"] if f["severity"] == sev))
        findings.extend(f"{sc}: [{f['severity']}] {f['kind']} · {f['subject']}" for f in result["findings"])
    return 0, out, summary, findings


_JOB_FUNCTIONS = {"regress": _run_regress, "evaluate": _run_evaluate, "discover": _run_discover}


def run_variant(task: VariantTask) -> dict[str, Any]:
    """Run one variant's job and return its record; never raises for a bad variant (exit code 2, the error)."""
    t0 = time.perf_counter()
    record: dict[str, Any] = {
        "variant": str(task.variant),
        "name": record_name(task.variant),
        "ruleset": task.ruleset,
        "job": task.job,
        "task": asdict(task),
    }
    try:
        if task.job not in _JOB_FUNCTIONS:
            raise UserError(f"unknown job '{task.job}'; valid: {', '.join(JOBS)}")
        try:
            record["variant_meta"] = variant_meta(task.variant)
        except UserError:
            record["variant_meta"] = {}
        code, result, summary, findings = _JOB_FUNCTIONS[task.job](task)
        record.update(exit_code=code, error=None, summary=summary, findings=findings, result=result)
    except UserError as e:  # ConfigError is a UserError: a bad variant is one line, and the sweep goes on
        record.update(exit_code=2, error=str(e), summary={}, findings=[], result=None)
    record["seconds"] = round(time.perf_counter() - t0, 3)
    return record


# -- the sweep -----------------------------------------------------------------------------------------------


@dataclass
class SweepResult:
    out_dir: Path
    records: list[dict[str, Any]]
    reused: list[str]  # variants whose record was already there (resumed)
    seconds: float

    @property
    def exit_code(self) -> int:
        return max((int(r["exit_code"]) for r in self.records), default=0)


def load_records(out_dir: Path) -> dict[str, dict[str, Any]]:
    """The finished records of a sweep folder by variant name (a corrupt or partial file is ignored)."""
    out: dict[str, dict[str, Any]] = {}
    for p in sorted((out_dir / RECORDS_DIR).glob("*.json")):
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError, OSError):
            continue
        if isinstance(rec, dict) and "exit_code" in rec and "variant" in rec:
            out[p.stem] = rec
    return out


def sweep(
    ruleset: str,
    variants: Sequence[Path],
    job: str,
    out_dir: Path,
    backend: str = "local",
    workers: int = 2,
    address: str | None = None,
    scenario: str | None = None,
    seed: int = 0,
    games: int = 40,
    max_games: int | None = 200,
    budget: str = "quick",
    progress: Callable[[int], None] | None = None,
    retries: int = TASK_RETRIES,
) -> SweepResult:
    """Run ``job`` for every variant; write ``records/<variant>.json`` as each finishes and ``sweep.json``.

    A variant whose record is already in ``out_dir`` (for the same task) is not rerun: a killed or interrupted
    sweep resumes where it stopped. A variant whose worker dies is retried ``retries`` times. On the Ray
    backend, a discover job's game batches are Ray tasks too (``workers`` of them at a time per variant).
    """
    get_ruleset(ruleset)
    if job not in JOBS:
        raise UserError(f"unknown job '{job}'; valid: {', '.join(JOBS)}")
    check_backend(backend)
    if backend == "ray":
        ray_module(local=not address)
    t0 = time.perf_counter()
    rec_dir = out_dir / RECORDS_DIR
    rec_dir.mkdir(parents=True, exist_ok=True)
    have = load_records(out_dir)
    batch_workers = workers if backend == "ray" and job == "discover" else 1
    tasks = [
        VariantTask(ruleset, str(v), job, scenario, seed, games, max_games, budget, batch_workers) for v in variants
    ]

    def same_task(t: VariantTask) -> bool:
        rec = have.get(record_name(t.variant))
        return rec is not None and _task_key(rec.get("task")) == _task_key(asdict(t))

    todo = [t for t in tasks if not same_task(t)]
    reused = [record_name(t.variant) for t in tasks if t not in todo]
    if progress and reused:
        progress(len(reused))

    def finished(_i: int, rec: dict[str, Any]) -> None:
        atomic_write_json(rec_dir / f"{rec['name']}.json", rec)
        have[rec["name"]] = rec
        if progress:
            progress(1)

    map_tasks(run_variant, todo, backend, workers, address, finished, retries=retries)
    records = [have[record_name(t.variant)] for t in tasks]
    seconds = time.perf_counter() - t0
    atomic_write_json(
        out_dir / "sweep.json",
        {
            "kind": SWEEP_KIND,
            "ruleset": ruleset,
            "job": job,
            "backend": backend,
            "address": address,
            "workers": workers,
            "seed": seed,
            "variants": [str(v) for v in variants],
            "exit_codes": {r["name"]: r["exit_code"] for r in records},
            "reused": reused,
            "seconds": round(seconds, 3),
            "versions": package_versions(),
        },
    )
    return SweepResult(out_dir, records, reused, seconds)


EXECUTION_ONLY = ("batch_workers",)
"""Task fields that say how a variant ran, not what: results do not depend on them."""


def _task_key(task: Any) -> Any:
    return {k: v for k, v in task.items() if k not in EXECUTION_ONLY} if isinstance(task, dict) else task


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what may differ between two runs of the same sweep (wall times, how it ran)."""
    drop = {"seconds", "timings", *EXECUTION_ONLY}

    def clean(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if k not in drop}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    return dict(clean(record))

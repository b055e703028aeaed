"""Sweeps: one job (discover, regress or evaluate) run for every rule variant, on processes or on Ray.

Each variant is one task, named by plain values (:class:`VariantTask`), so the same function runs in a local
worker process or as a Ray task on a cluster. A task never raises: a bad variant (unreadable TOML, a key the
rules do not have, a missing baseline) gives a record with ``exit_code`` 2 and the error line, and the sweep
goes on. Every finished record is written at once (``records/<variant>.json``), so an interrupted sweep resumes
where it stopped: a variant whose record exists is not rerun.

The results do not depend on the backend: a task owns its seeds (the job's seed, the same for every variant,
so variants are compared on common random numbers) and plays its games in one process.
"""

from __future__ import annotations

import glob
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from agents.registry import agent_names
from envs.core.config import config_hash, load_config, variant_meta
from envs.core.errors import UserError
from envs.core.registry import get_ruleset
from results.records import atomic_write_json, package_versions

JOBS = ("regress", "evaluate", "discover")
BACKENDS = ("local", "ray")
RECORDS_DIR = "records"
RAY_INSTALL = 'pip install "rulebreaker[ray]"  (or: pip install "ray[default]>=2.9,<3" "optuna>=3.5")'
RAY_CLUSTER_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # off: a local node keeps the loopback address
TASK_RETRIES = 2  # a Ray task whose worker dies is run again this many times
SWEEP_KIND = "rulebreaker-sweep"

T = TypeVar("T")
R = TypeVar("R")


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
            d = make_discovery(rs, sc, Path(task.variant), BUDGETS[task.budget], task.seed, 1, Path(tmp), rl=False)
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


# -- backends ------------------------------------------------------------------------------------------------


def ray_module() -> Any:
    """The ``ray`` module, or a :class:`UserError` with the install command."""
    try:
        import ray
    except ImportError:
        raise UserError(f"--backend ray needs Ray: {RAY_INSTALL}") from None
    return ray


@contextmanager
def ray_session(address: str | None, workers: int) -> Iterator[Any]:
    """Ray, connected to the cluster at ``address`` or to a local one bound to 127.0.0.1 that it stops after.

    Inside a session already open (``ray.is_initialized()``) it only yields Ray, and stops nothing.
    """
    ray = ray_module()
    if ray.is_initialized():
        yield ray
        return
    if address:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
        try:
            yield ray
        finally:
            ray.shutdown()
        return
    from ray._private import ray_constants

    # Ray replaces a loopback node address by the machine's own unless this switch is off (the processes it
    # starts read the environment variable; this process reads the constant): then every server binds 127.0.0.1.
    old_env, old_flag = os.environ.get(RAY_CLUSTER_SWITCH), ray_constants.ENABLE_RAY_CLUSTER
    os.environ[RAY_CLUSTER_SWITCH] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        ray.init(
            num_cpus=workers,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            log_to_driver=False,
            configure_logging=False,
        )
        try:
            nodes = {n["NodeManagerAddress"] for n in ray.nodes()}
            if nodes != {"127.0.0.1"}:
                raise UserError(f"the local Ray node would listen on {sorted(nodes)}, not 127.0.0.1 only; refused")
            yield ray
        finally:
            ray.shutdown()
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = old_flag
        if old_env is None:
            os.environ.pop(RAY_CLUSTER_SWITCH, None)
        else:
            os.environ[RAY_CLUSTER_SWITCH] = old_env


def map_tasks(
    fn: Callable[[T], R],
    items: Sequence[T],
    backend: str = "local",
    workers: int = 1,
    address: str | None = None,
    on_result: Callable[[int, R], None] | None = None,
) -> list[R]:
    """``fn`` over ``items`` as local processes or Ray tasks; ``on_result(i, r)`` as each finishes; in order.

    ``fn`` must be a module-level function of picklable values. Ray tasks are retried when their worker dies.
    """
    if backend not in BACKENDS:
        raise UserError(f"unknown backend '{backend}'; valid: {', '.join(BACKENDS)}")
    results: dict[int, R] = {}

    def done(i: int, r: R) -> None:
        results[i] = r
        if on_result:
            on_result(i, r)

    if not items:
        return []
    if backend == "ray":
        with ray_session(address, workers) as ray:
            remote = ray.remote(max_retries=TASK_RETRIES, num_cpus=1)(fn)
            refs = {remote.remote(it): i for i, it in enumerate(items)}
            pending = list(refs)
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                for ref in ready:
                    done(refs[ref], ray.get(ref))
    else:
        with ProcessPoolExecutor(max_workers=max(1, min(workers, len(items)))) as pool:
            futs: dict[Future[R], int] = {pool.submit(fn, it): i for i, it in enumerate(items)}
            waiting = set(futs)
            while waiting:
                finished, waiting = wait(waiting, return_when=FIRST_COMPLETED)
                for f in finished:
                    done(futs[f], f.result())
    return [results[i] for i in range(len(items))]


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
) -> SweepResult:
    """Run ``job`` for every variant; write ``records/<variant>.json`` as each finishes and ``sweep.json``.

    A variant whose record is already in ``out_dir`` is not rerun (resume after an interruption).
    """
    get_ruleset(ruleset)
    if job not in JOBS:
        raise UserError(f"unknown job '{job}'; valid: {', '.join(JOBS)}")
    if backend not in BACKENDS:
        raise UserError(f"unknown backend '{backend}'; valid: {', '.join(BACKENDS)}")
    if backend == "ray":
        ray_module()
    t0 = time.perf_counter()
    rec_dir = out_dir / RECORDS_DIR
    rec_dir.mkdir(parents=True, exist_ok=True)
    have = load_records(out_dir)
    tasks = [VariantTask(ruleset, str(v), job, scenario, seed, games, max_games, budget) for v in variants]
    todo = [t for t in tasks if record_name(t.variant) not in have or have[record_name(t.variant)]["task"] != asdict(t)]
    reused = [record_name(t.variant) for t in tasks if t not in todo]
    if progress and reused:
        progress(len(reused))

    def finished(_i: int, rec: dict[str, Any]) -> None:
        atomic_write_json(rec_dir / f"{rec['name']}.json", rec)
        have[rec["name"]] = rec
        if progress:
            progress(1)

    map_tasks(run_variant, todo, backend, workers, address, finished)
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


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what may differ between two runs of the same sweep (wall times, folder paths)."""
    drop = {"seconds", "timings"}

    def clean(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if k not in drop}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    return dict(clean(record))

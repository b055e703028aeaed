"""Sweeps: one record per variant on the local backend, the same records on a loopback Ray cluster, resume."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from envs.core.config import config_dict
from envs.core.errors import UserError
from envs.core.registry import get_ruleset
from results.sweep_report import build_sweep_report
from training import backends
from training.backends import map_tasks
from training.runner import GameJob, run_games, seeds
from training.sweep import comparable, load_records, sweep, variant_paths

REPO = Path(__file__).resolve().parents[2]

RULESET = "blackbird"
SCENARIO = "duel"
MAX_GAMES = 60


def _shipped() -> list[Path]:
    return variant_paths(RULESET, None)


def _listeners() -> set[tuple[str, int]]:
    """Every listening TCP socket on the machine, as (hex local address, port), from /proc/net/tcp{,6}."""
    out = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if parts[3] == "0A":  # LISTEN
                addr, port = parts[1].split(":")
                out.add((addr, int(port, 16)))
    return out


LOOPBACK = {
    "0100007F",
    "00000000000000000000000001000000",
    "0000000000000000FFFF00000100007F",
}  # 127.0.0.1, ::1, ::ffff:127.0.0.1


@pytest.fixture(scope="module")
def local_sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    out = tmp_path_factory.mktemp("sweep-local")
    res = sweep(RULESET, _shipped(), "regress", out, "local", 2, scenario=SCENARIO, max_games=MAX_GAMES)
    return out, res.records


def test_local_sweep_writes_one_record_per_variant_and_a_report(local_sweep: tuple[Path, list[dict]]) -> None:
    out, records = local_sweep
    shipped = _shipped()
    files = sorted((out / "records").glob("*.json"))
    assert [f.stem for f in files] == [p.stem for p in shipped]
    for f, p in zip(files, shipped, strict=True):
        rec = json.loads(f.read_text())
        assert rec["variant"] == str(p)
        assert rec["exit_code"] in (0, 1)
    by_name = {r["name"]: r for r in records}
    # the control changes nothing; the windfall (failures give +3 pool dice) must move the duel's balance
    assert by_name["control_trapped_condition"]["exit_code"] == 0
    assert by_name["windfall_failure_bonus"]["exit_code"] == 1
    summary = json.loads((out / "sweep.json").read_text())
    md, html = build_sweep_report(out, summary, records)
    page = html.read_text()
    assert "data:image/png;base64," in page and "windfall_failure_bonus" in page
    assert "| windfall_failure_bonus |" in md.read_text()


def test_bad_variant_gets_exit_code_2_and_the_sweep_goes_on(tmp_path: Path) -> None:
    bad = tmp_path / "v" / "bad_key.toml"
    bad.parent.mkdir()
    bad.write_text("[pool]\nno_such_rule = 3\n")
    good = get_ruleset(RULESET).variants_dir / "control_trapped_condition.toml"  # type: ignore[operator]
    shutil.copy(good, bad.parent / good.name)
    res = sweep(RULESET, variant_paths(RULESET, bad.parent), "regress", tmp_path / "out", "local", 1, scenario=SCENARIO,
                max_games=20)  # fmt: skip
    recs = {r["name"]: r for r in res.records}
    assert recs["bad_key"]["exit_code"] == 2
    assert "no_such_rule" in recs["bad_key"]["error"]
    assert recs["control_trapped_condition"]["exit_code"] == 0
    assert res.exit_code == 2


def test_resume_reruns_only_unfinished_variants(local_sweep: tuple[Path, list[dict]], tmp_path: Path) -> None:
    src, _ = local_sweep
    out = tmp_path / "resumed"
    shutil.copytree(src, out)
    gone = _shipped()[1].stem
    (out / "records" / f"{gone}.json").unlink()  # as if the sweep had been killed before this variant finished
    res = sweep(RULESET, _shipped(), "regress", out, "local", 2, scenario=SCENARIO, max_games=MAX_GAMES)
    assert sorted(res.reused) == sorted(p.stem for p in _shipped() if p.stem != gone)
    assert gone in load_records(out)


def _needs_ray() -> None:
    """Skip without Ray, without importing it (the sweep imports it, after setting its loopback switch)."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed (pip install 'rulebreaker[ray]')")


def _batch_jobs() -> list[GameJob]:
    cfg = config_dict(get_ruleset(RULESET).default_config())
    return [GameJob(RULESET, SCENARIO, cfg, ("greedy", "random"), s, i) for i, s in enumerate(seeds(5, 24))]


def _replay(recs: list) -> list:  # type: ignore[type-arg]
    return [(r.index, r.seed, r.actions, r.returns, r.winner) for r in recs]


def test_ray_loopback_cluster_gives_identical_records(local_sweep: tuple[Path, list[dict]], tmp_path: Path) -> None:
    """One local Ray cluster: the 3-variant regress sweep gives the local records, nothing listens beyond
    127.0.0.1, a game batch played inside a Ray job is Ray tasks with the serial results, and all is stopped."""
    _needs_ray()
    before = _listeners()
    seen: dict[str, Any] = {}
    real_session = backends.ray_session

    def spying_session(address: str | None, workers: int):  # type: ignore[no-untyped-def]
        cm = real_session(address, workers)

        class Spy:
            def __enter__(self):  # type: ignore[no-untyped-def]
                r = cm.__enter__()
                seen["during"] = _listeners()
                seen["nodes"] = {n["NodeManagerAddress"] for n in r.nodes()}
                with backends.games_on_ray():  # as inside a discover job's Ray task
                    seen["executor"] = type(backends.ray_game_executor()).__name__
                    seen["batch"] = run_games(_batch_jobs(), workers=2)
                return r

            def __exit__(self, *exc):  # type: ignore[no-untyped-def]
                return cm.__exit__(*exc)

        return Spy()

    backends.ray_session = spying_session  # type: ignore[assignment]
    try:
        res = sweep(RULESET, _shipped(), "regress", tmp_path, "ray", 2, scenario=SCENARIO, max_games=MAX_GAMES)
    finally:
        backends.ray_session = real_session
    import ray

    assert not ray.is_initialized()  # the sweep stopped the cluster it started
    _, local_records = local_sweep
    assert [comparable(r) for r in res.records] == [comparable(r) for r in local_records]
    assert seen["nodes"] == {"127.0.0.1"}  # the node advertises loopback only
    assert seen["executor"] == "RayExecutor"
    assert _replay(seen["batch"]) == _replay(run_games(_batch_jobs(), workers=1))  # same seeds, same games
    opened = seen["during"] - before
    assert opened, "Ray opened no listening socket?"
    assert all(addr in LOOPBACK for addr, _ in opened), sorted(opened)  # nothing listens on another address
    for _ in range(50):  # and the servers it started are gone once the sweep returns
        if not (_listeners() & opened):
            break
        time.sleep(0.2)
    assert not (_listeners() & opened)


@pytest.mark.slow
def test_ray_discover_sweep_plays_its_batches_on_ray_with_the_local_results(tmp_path: Path) -> None:
    """A discover sweep on Ray (its game batches Ray tasks inside each variant's task) = the local sweep."""
    _needs_ray()
    variants = _shipped()[:2]
    kw = {"scenario": SCENARIO, "budget": "quick"}
    local = sweep(RULESET, variants, "discover", tmp_path / "local", "local", 2, **kw)  # type: ignore[arg-type]
    ray = sweep(RULESET, variants, "discover", tmp_path / "ray", "ray", 2, **kw)  # type: ignore[arg-type]
    assert [r["task"]["batch_workers"] for r in ray.records] == [2, 2]
    assert [comparable(r) for r in ray.records] == [comparable(r) for r in local.records]


def test_killed_sweep_resumes_with_only_the_unfinished_variants(tmp_path: Path) -> None:
    """A sweep process killed (SIGKILL) after its first record; rerun on the same folder: the finished
    variants are reused, only the others run, and the records equal an uninterrupted sweep's."""
    out = tmp_path / "killed"
    cli = [sys.executable, "-c", "from training.cli import main; main()"]
    cmd = [*cli, "sweep", RULESET, "--job", "regress", "--scenario", SCENARIO, "--max-games", "40", "--workers", "1"]
    cmd += ["--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not list((out / "records").glob("*.json")):
            assert proc.poll() is None, "the sweep ended before it could be killed"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its worker process
    finally:
        proc.wait(timeout=30)
    done_at_kill = sorted(load_records(out))
    assert done_at_kill and len(done_at_kill) < len(_shipped()), done_at_kill
    assert not (out / "sweep.json").exists()  # it never finished
    res = sweep(RULESET, _shipped(), "regress", out, "local", 1, scenario=SCENARIO, max_games=40)
    assert sorted(res.reused) == done_at_kill
    ran = sorted(p.stem for p in _shipped() if p.stem not in done_at_kill)
    assert sorted(r["name"] for r in res.records if r["name"] not in res.reused) == ran
    fresh = sweep(RULESET, _shipped(), "regress", tmp_path / "fresh", "local", 2, scenario=SCENARIO, max_games=40)
    assert [comparable(r) for r in res.records] == [comparable(r) for r in fresh.records]


def test_a_dead_worker_is_retried_and_the_task_finishes(tmp_path: Path) -> None:
    """Locally, a worker process that dies is replaced and its task rerun (``retries``); with none left, the
    error says what finished is kept."""
    flag = tmp_path / "died-once"
    assert map_tasks(_die_once, [str(flag), str(flag)], "local", 2, retries=1) == [1, 1]
    with pytest.raises(UserError, match="rerun to resume"):
        map_tasks(_die_always, ["x"], "local", 1, retries=1)


def _die_once(flag: str) -> int:
    if not Path(flag).exists():
        Path(flag).write_text("1")
        os._exit(9)  # as if killed
    return 1


def _die_always(_: str) -> int:
    os._exit(9)


def test_ray_backend_without_ray_names_the_install_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed: `import ray` raises ImportError
    with pytest.raises(UserError, match=r"rulebreaker\[ray\]"):
        sweep(RULESET, _shipped(), "regress", tmp_path, "ray", 1, scenario=SCENARIO, max_games=MAX_GAMES)
    assert not list((tmp_path / "records").glob("*.json")) if (tmp_path / "records").exists() else True


def test_local_workers_are_clamped_to_the_cores() -> None:
    cores = os.cpu_count() or 1
    assert backends.local_cpus(999) == cores and backends.local_cpus(0) == 1 and backends.local_cpus(1) == 1

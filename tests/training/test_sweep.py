"""Sweeps: one record per variant on the local backend, the same records on a loopback Ray cluster, resume."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest

from envs.core.errors import UserError
from envs.core.registry import get_ruleset
from results.sweep_report import build_sweep_report
from training.sweep import comparable, load_records, sweep, variant_paths

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


def test_ray_loopback_cluster_gives_identical_records(local_sweep: tuple[Path, list[dict]], tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    from training import sweep as sweep_mod

    before = _listeners()
    seen: dict[str, set[tuple[str, int]]] = {}
    real_session = sweep_mod.ray_session

    def spying_session(address: str | None, workers: int):  # type: ignore[no-untyped-def]
        cm = real_session(address, workers)

        class Spy:
            def __enter__(self):  # type: ignore[no-untyped-def]
                r = cm.__enter__()
                seen["during"] = _listeners()
                seen["nodes"] = {n["NodeManagerAddress"] for n in r.nodes()}
                return r

            def __exit__(self, *exc):  # type: ignore[no-untyped-def]
                return cm.__exit__(*exc)

        return Spy()

    sweep_mod.ray_session = spying_session  # type: ignore[assignment]
    try:
        res = sweep(RULESET, _shipped(), "regress", tmp_path, "ray", 2, scenario=SCENARIO, max_games=MAX_GAMES)
    finally:
        sweep_mod.ray_session = real_session
    assert not ray.is_initialized()  # the sweep stopped the cluster it started
    _, local_records = local_sweep
    assert [comparable(r) for r in res.records] == [comparable(r) for r in local_records]
    assert seen["nodes"] == {"127.0.0.1"}  # the node advertises loopback only
    opened = seen["during"] - before
    assert opened, "Ray opened no listening socket?"
    assert all(addr in LOOPBACK for addr, _ in opened), sorted(opened)  # nothing listens on another address
    for _ in range(50):  # and the servers it started are gone once the sweep returns
        if not (_listeners() & opened):
            break
        time.sleep(0.2)
    assert not (_listeners() & opened)


def test_ray_backend_without_ray_names_the_install_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed: `import ray` raises ImportError
    with pytest.raises(UserError, match=r"rulebreaker\[ray\]"):
        sweep(RULESET, _shipped(), "regress", tmp_path, "ray", 1, scenario=SCENARIO, max_games=MAX_GAMES)
    assert not list((tmp_path / "records").glob("*.json")) if (tmp_path / "records").exists() else True

"""Balancing: on the planted blackbird windfall (failures give +3 pool dice), find a change that removes it."""

from __future__ import annotations

import importlib.util
import json
import os
import tomllib
from pathlib import Path

import pytest

from envs.core.config import load_config
from envs.core.errors import UserError
from envs.core.registry import get_ruleset
from results.findings import finding_id
from tests.cli_helpers import run_cli
from training.balance import CandidateTask, balance, evaluate_candidate, knob_values, matching, resolve_fix

RULESET = "blackbird"
SCENARIO = "session"
GAMES = 20


def _windfall() -> Path:
    return get_ruleset(RULESET).variants_dir / "windfall_failure_bonus.toml"  # type: ignore[operator]


def test_knob_values_are_bounded_and_nearest_first() -> None:
    rs = get_ruleset(RULESET)
    space = knob_values(RULESET, SCENARIO, load_config(rs, _windfall()), ["pool.failure_bonus"])
    vals = space["pool.failure_bonus"]
    assert 3 not in vals  # the current value is not a change
    assert all(0 <= v <= 10 for v in vals)  # inside the config model's bounds (ge=0, le=10)
    assert sorted(vals[:2]) == [2, 4]  # nearest first
    assert 1 in vals  # the rules as written are always a candidate


def test_balance_removes_the_windfall_runaway(tmp_path: Path) -> None:
    res = balance(
        RULESET, SCENARIO, _windfall(), "resource_runaway:pool", ["pool.failure_bonus"], trials=2, games=GAMES,
        seed=0, backend="local", workers=2, out_dir=tmp_path,
    )  # fmt: skip
    assert res.before is not None and res.before["low"] > res.target["threshold"]  # the finding is there
    assert res.proposals, [(t.overrides, t.metric) for t in res.trials]
    best = res.proposals[0]
    assert len(best.overrides) == 1 and best.overrides[0][0] == "pool.failure_bonus"
    assert best.overrides[0][1] < 3  # fewer dice per failure, not more
    path = res.paths[best.number]
    text = path.read_text()
    data = tomllib.loads(text)
    assert data["pool"]["failure_bonus"] == best.overrides[0][1]
    assert "before" in text and "after" in text
    # a fresh evaluation of the written file, on another seed: the runaway is gone
    ev = evaluate_candidate(CandidateTask(RULESET, SCENARIO, str(path), (), GAMES, 7))
    assert matching(ev["findings"], "resource_runaway", "pool", None) is None
    assert (tmp_path / "balance.json").exists()


@pytest.mark.slow
def test_balance_same_trials_on_ray_tune_and_resume(tmp_path: Path) -> None:
    """Ray Tune's OptunaSearch tries the same first points as Optuna directly, with the same costs; rerun on
    the same --out, Tune restores the experiment and no trial runs again."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed")
    args = (RULESET, SCENARIO, _windfall(), "resource_runaway:pool", ["pool.failure_bonus"], 2, GAMES, 0)
    local = balance(*args, backend="local", workers=2)
    ray = balance(*args, backend="ray", workers=2, out_dir=tmp_path)
    assert sorted((t.overrides, t.cost, json.dumps(t.metric)) for t in local.trials) == sorted(
        (t.overrides, t.cost, json.dumps(t.metric)) for t in ray.trials
    )
    trial_dirs = sorted(p.name for p in (tmp_path / "tune" / "balance").iterdir() if p.is_dir())
    again = balance(*args, backend="ray", workers=2, out_dir=tmp_path)
    assert sorted(p.name for p in (tmp_path / "tune" / "balance").iterdir() if p.is_dir()) == trial_dirs
    assert [(t.overrides, t.cost) for t in again.trials] == [(t.overrides, t.cost) for t in ray.trials]


# -- --fix by finding id ------------------------------------------------------------------------------------


def _run(root: Path, name: str, findings: list[dict], scenario: str = SCENARIO) -> Path:
    d = root / name
    d.mkdir(parents=True)
    doc = {"ruleset": RULESET, "scenario": scenario, "findings": findings}
    (d / "findings.json").write_text(json.dumps(doc))
    return d


RUNAWAY = {"id": finding_id(RULESET, SCENARIO, "resource_runaway", "pool"), "kind": "resource_runaway",
           "subject": "pool"}  # fmt: skip
OTHER = {"id": "F-abcdef", "kind": "dominated_option", "subject": "help"}


def test_fix_by_id_from_a_run_folder_and_from_the_newest_run(tmp_path: Path) -> None:
    old = _run(tmp_path, "20261201-090000-blackbird-session-discover", [OTHER])
    new = _run(tmp_path, "20261201-100000-blackbird-session-discover", [RUNAWAY])
    _run(tmp_path, "20261201-110000-blackbird-duel-discover", [OTHER], scenario="duel")  # another scenario
    os.utime(old / "findings.json", (1, 1))
    assert resolve_fix(RUNAWAY["id"], RULESET, SCENARIO, None, tmp_path) == "resource_runaway:pool"
    assert resolve_fix("F-abcdef", RULESET, SCENARIO, old, tmp_path) == "dominated_option:help"
    assert resolve_fix("F-abcdef", RULESET, SCENARIO, old / "findings.json") == "dominated_option:help"
    assert resolve_fix("resource_runaway:pool", RULESET, SCENARIO, None, tmp_path) == "resource_runaway:pool"
    with pytest.raises(UserError) as e:
        resolve_fix("F-000000", RULESET, SCENARIO, None, tmp_path)  # the newest run does not have it
    assert "F-000000" in str(e.value) and RUNAWAY["id"] in str(e.value) and str(new) in str(e.value)


def test_fix_by_unknown_id_exits_2_naming_it_and_the_ids_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(tmp_path, "r", [RUNAWAY, OTHER])
    r = run_cli(
        capsys, "balance", RULESET, SCENARIO, "--fix", "F-123456", "--from", str(run), "--out", str(tmp_path / "o")
    )
    assert r.code == 2
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "F-123456" in lines[0] and RUNAWAY["id"] in lines[0] and "F-abcdef" in lines[0]
    r = run_cli(capsys, "balance", RULESET, SCENARIO, "--fix", "F-12", "--from", str(run))
    assert r.code == 2 and "not a finding id" in r.err
    r = run_cli(capsys, "balance", RULESET, SCENARIO, "--fix", "F-123456", "--from", str(tmp_path / "nothing"))
    assert r.code == 2 and "no findings.json" in r.err


def test_balance_resumes_from_its_journal_without_rerunning_finished_trials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A balance run with --out journals its trials; rerun with more trials, the finished ones come back as they
    were and only the new ones are evaluated; other settings on the same --out are refused."""
    import training.balance as B

    args = (RULESET, SCENARIO, _windfall(), "resource_runaway:pool", ["pool.failure_bonus"])
    first = balance(*args, trials=2, games=8, seed=0, workers=1, out_dir=tmp_path)
    evaluated: list[tuple] = []  # type: ignore[type-arg]
    real = B.map_tasks

    def counting(fn, items, *a, **kw):  # type: ignore[no-untyped-def]
        evaluated.extend(it.overrides for it in items)
        return real(fn, items, *a, **kw)

    monkeypatch.setattr(B, "map_tasks", counting)
    again = balance(*args, trials=3, games=8, seed=0, workers=1, out_dir=tmp_path)
    assert [(t.number, t.overrides, t.cost) for t in again.trials[:2]] == [
        (t.number, t.overrides, t.cost) for t in first.trials
    ]
    assert len(again.trials) == 3 and len(evaluated) <= 1  # only the third trial (none if it repeats a change)
    assert all(ov not in {t.overrides for t in first.trials} for ov in evaluated)
    with pytest.raises(UserError, match="other settings"):
        balance(*args, trials=3, games=12, seed=0, workers=1, out_dir=tmp_path)


@pytest.mark.slow  # a quick discovery of the blackbird session (search subject included) takes minutes
def test_the_proposed_fix_passes_a_fresh_discover_run(tmp_path: Path) -> None:
    """Issue 19's must-show: the balance proposal for the windfall, run through discover (quick, no RL) from
    scratch, no longer shows the pool runaway that the windfall variant shows."""
    from training.discover import BUDGETS, make_discovery, run_discovery

    res = balance(RULESET, SCENARIO, _windfall(), "resource_runaway:pool", ["pool.failure_bonus"], trials=2,
                  games=GAMES, seed=0, workers=2, out_dir=tmp_path / "balance")  # fmt: skip
    fix = res.paths[res.proposals[0].number]
    rs = get_ruleset(RULESET)
    found = {}
    for name, rules in (("windfall", _windfall()), ("fix", fix)):
        d = make_discovery(rs, SCENARIO, rules, BUDGETS["quick"], 0, 2, tmp_path / name, rl=False)
        found[name] = {(f["kind"], f["subject"]) for f in run_discovery(d, None)["findings"]}
    assert ("resource_runaway", "pool") in found["windfall"]
    assert ("resource_runaway", "pool") not in found["fix"], found["fix"]

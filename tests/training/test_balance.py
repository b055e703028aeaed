"""Balancing: on the planted blackbird windfall (failures give +3 pool dice), find a change that removes it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from envs.core.config import load_config
from envs.core.registry import get_ruleset
from training.balance import CandidateTask, balance, evaluate_candidate, knob_values, matching

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
def test_balance_same_trials_on_ray(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    args = (RULESET, SCENARIO, _windfall(), "resource_runaway:pool", ["pool.failure_bonus"], 2, GAMES, 0)
    local = balance(*args, backend="local", workers=2)
    ray = balance(*args, backend="ray", workers=2)
    assert [(t.overrides, t.cost, t.metric) for t in local.trials] == [
        (t.overrides, t.cost, t.metric) for t in ray.trials
    ]

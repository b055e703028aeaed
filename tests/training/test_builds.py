"""Whole builds (issue 17 item 5): where a scenario has a build phase, discover tries complete builds on common
deals and reports the best and the worst as full assignments with values and intervals."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from envs.core.registry import get_ruleset
from training.discover.budgets import Budget
from training.discover.pipeline import make_discovery, result_json
from training.discover.verdicts import stage_builds


def _budget() -> Budget:
    return Budget(
        name="test",
        round_robin_games=2,
        sensitivity_games=2,
        rl_steps=0,
        rl_eval_games=0,
        build_candidates=4,
        build_games=3,
    )


def test_wicked_age_builds_are_complete_sheets(tmp_path: Path) -> None:
    rs = get_ruleset("wicked_age")
    d = make_discovery(rs, "duel", None, _budget(), 0, 1, tmp_path, rl=False)
    out = stage_builds(d, "highest")
    assert out is not None and out["tried"] == 4 and out["games_per_build"] == 3
    dice = Counter(f"d{s}" for s in d.config.forms.pc_dice)  # type: ignore[attr-defined]
    rows = out["best"] + out["worst"]
    for row in rows:
        assert len(row["build"]) == 6 and Counter(row["build"].values()) == dice  # every form gets one die
        lo, hi = row["ci"]
        assert lo <= row["value"] <= hi
    assert out["best"][0]["value"] >= out["worst"][0]["value"]
    js = result_json(d)
    assert js["builds"]["best"] == out["best"] and js["builds"]["worst"] == out["worst"]


def test_builds_name_the_actions_not_the_option_group(tmp_path: Path) -> None:
    rs = get_ruleset("crossroads")
    d = make_discovery(rs, "episode", None, _budget(), 0, 1, tmp_path, rl=False)
    out = stage_builds(d, "builder")
    assert out is not None
    labels = {v for row in out["best"] + out["worst"] for v in row["build"].values()}
    assert labels and "build" not in labels, labels

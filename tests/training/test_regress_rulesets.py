"""regress on the shipped rulesets against the committed baselines (results/baselines/)."""

import json
import shutil

import pytest

from envs import get_ruleset
from tests.cli_helpers import run_cli
from training.regress import baseline_path

VARIANTS = get_ruleset("blackbird").variants_dir


def regress(capsys, *args):
    r = run_cli(capsys, "regress", "blackbird", "--scenario", "session", "--json", *args)
    data = json.loads(r.out) if r.out.strip().startswith("{") else None
    return r, data


def test_a_copy_of_the_defaults_exits_0_with_every_change_exactly_zero(capsys, tmp_path):
    copy = tmp_path / "copy.toml"
    shutil.copy(get_ruleset("blackbird").rules_path, copy)
    r, data = regress(capsys, "--rules", str(copy))
    assert r.code == 0, r.err
    sc = data["scenarios"][0]
    assert sc["verdict"] == "unchanged"
    assert all(m["change"] == 0 and m["ci"] == [0, 0] and m["discordance"] == 0 for m in sc["metrics"])


def test_planted_windfall_exits_1_naming_what_moved(capsys):
    r, data = regress(capsys, "--rules", str(VARIANTS / "windfall_failure_bonus.toml"))
    assert r.code == 1
    changed = data["scenarios"][0]["changed"]
    assert any(m.startswith("return[") for m in changed), changed


def test_harmless_control_exits_0(capsys):
    r, data = regress(capsys, "--rules", str(VARIANTS / "control_trapped_condition.toml"))
    assert r.code == 0, data["scenarios"][0]["changed"]


def test_baseline_of_another_ruleset_exits_2(capsys):
    r = run_cli(
        capsys,
        "regress",
        "blackbird",
        "--scenario",
        "session",
        "--rules",
        str(VARIANTS / "control_trapped_condition.toml"),
        "--baseline",
        str(baseline_path("hallownest", "duel")),
    )
    assert r.code == 2 and "made for hallownest/duel" in r.err


@pytest.mark.parametrize(
    ("ruleset", "scenario"),
    [
        (rs, sc)
        for rs in ("blackbird", "storyteller", "crossroads", "hallownest", "wicked_age")
        for sc in get_ruleset(rs).scenarios
    ],
)
def test_every_scenario_has_a_baseline_that_still_reproduces(ruleset, scenario):
    """A committed baseline must still replay exactly (a changed engine or persona needs a new baseline)."""
    from training.regress import check_reproducible, load_baseline

    rs = get_ruleset(ruleset)
    b = load_baseline(baseline_path(ruleset, scenario), rs, scenario)
    assert b.jobs and b.features
    check_reproducible(rs, b)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("ruleset", "scenario"),
    [
        (rs, sc)
        for rs in ("blackbird", "storyteller", "crossroads", "hallownest", "wicked_age")
        for sc in get_ruleset(rs).scenarios
    ],
)
def test_defaults_reproduce_every_baseline_exactly(ruleset, scenario, capsys):
    r = run_cli(
        capsys, "regress", ruleset, "--scenario", scenario, "--rules", str(get_ruleset(ruleset).rules_path), "--json"
    )
    assert r.code == 0, r.err

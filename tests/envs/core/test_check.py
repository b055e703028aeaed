"""The contract kit (envs/core/check.py): its chi-square against closed forms, each check catching a planted
fault in the toy game, and every shipped ruleset passing it (reduced step count)."""

from __future__ import annotations

import copy
import dataclasses
import math
import random

import pytest

from envs.core.check import (
    DEFAULT_STEPS,
    assert_checks,
    chi_square_sf,
    chi_square_test,
    failures,
    run_checks,
)
from envs.core.game import Ruleset
from envs.core.registry import RULESET_NAMES
from tests.cli_helpers import run_cli
from tests.toy import RULESET as TOY
from tests.toy import PigState

SHIPPED_STEPS = 2000


# -- chi-square: closed forms and table values ---------------------------------------------------------
@pytest.mark.parametrize("x", [0.1, 1.0, 2.0, 7.5, 30.0])
def test_chi_square_sf_two_dof_is_exp(x: float) -> None:
    assert chi_square_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)


@pytest.mark.parametrize("x", [0.5, 3.0, 9.0, 40.0])
def test_chi_square_sf_four_dof_closed_form(x: float) -> None:
    assert chi_square_sf(x, 4) == pytest.approx(math.exp(-x / 2) * (1 + x / 2), rel=1e-12)


@pytest.mark.parametrize(
    ("x", "dof", "p"),
    [(3.841458820694124, 1, 0.05), (6.634896601021214, 1, 0.01), (18.307038053275146, 10, 0.05), (124.342, 100, 0.05)],
)
def test_chi_square_sf_matches_table_critical_values(x: float, dof: int, p: float) -> None:
    assert chi_square_sf(x, dof) == pytest.approx(p, rel=1e-4)


def test_chi_square_test_pools_small_bins_and_accepts_a_perfect_fit() -> None:
    probs = {"a": 0.5, "b": 0.496, "c": 0.002, "d": 0.002}
    counts = {"a": 500, "b": 496, "c": 1, "d": 3}  # c and d expect 2 each (< 5): pooled into one bin of 4
    statistic, dof, p = chi_square_test(counts, probs)
    assert statistic == pytest.approx(0.0) and dof == 2 and p == pytest.approx(1.0)
    _, _, p_bad = chi_square_test({"a": 700, "b": 296, "c": 2, "d": 2}, probs)
    assert p_bad < 1e-20


# -- the toy passes; planted faults are caught by the right check ----------------------------------------
def _toy_with(state_cls: type[PigState], name: str) -> Ruleset:
    race = dataclasses.replace(TOY.scenarios["race"], new_game=state_cls)
    return dataclasses.replace(TOY, name=name, scenarios={"race": race})


def _failed(ruleset: Ruleset, steps: int = 3000) -> dict[str, str]:
    return {r.check: r.detail for r in failures(run_checks(ruleset, steps=steps, env_checkers=False))}


def test_toy_passes_every_check() -> None:
    results = assert_checks(TOY, steps=3000)
    assert [r.check for r in results] == [
        "config",
        "env_checkers",
        "determinism",
        "random_play",
        "clone",
        "masks",
        "chance",
    ]


class LoadedDie(PigState):
    """sample_chance rolls the better of two dice while chance_outcomes says one fair die."""

    def sample_chance(self, rng):
        return max(rng.d(self.cfg.die_sides), rng.d(self.cfg.die_sides))


class LeakyOdds(PigState):
    """chance_outcomes does not sum to 1."""

    def chance_outcomes(self):
        n = self.cfg.die_sides
        return [(f, 1 / (n + 1)) for f in range(1, n + 1)]


class ShallowClone(PigState):
    """clone shares the scores list and the log with the original."""

    def clone(self):
        twin = PigState.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        return twin


class Endless(PigState):
    """Never ends: finish() is swallowed."""

    def finish(self, winner, reason, returns, detail=""):
        self.scores = [0, 0]


class GlobalRandom(PigState):
    """Draws from Python's global random module instead of the Rng it is given."""

    def sample_chance(self, rng):
        return random.randint(1, self.cfg.die_sides)


class FlickeringMask(PigState):
    """legal_actions changes from one call to the next."""

    calls = 0

    def legal_actions(self):
        FlickeringMask.calls += 1
        legal = super().legal_actions()
        return legal if FlickeringMask.calls % 3 else legal[:1]

    def apply_action(self, action):
        self.rolling = action == 0
        if action == 1:
            self._end_turn()


class OutOfRange(PigState):
    """Lists an action id beyond the scenario's action count."""

    def legal_actions(self):
        legal = super().legal_actions()
        return [*legal, 7] if legal else legal


class ReversedLegalTuple(PigState):
    """legal_tuple() lists the legal ids in another order than legal_actions()."""

    def legal_tuple(self):
        return tuple(reversed(self.legal_actions()))


class UnsortedButPromised(PigState):
    """Sets legal_sorted but lists its legal ids in decreasing order."""

    legal_sorted = True

    def legal_actions(self):
        return super().legal_actions()[::-1]


class StaleKeptPlayer(PigState):
    """Sets player_kept but never updates ``_player`` after the first seat."""

    player_kept = True
    _player = 0


class StaleKeptLegal(PigState):
    """Sets legal_kept but keeps a decision's legal ids in ``_legal`` at the chance nodes too."""

    legal_kept = True
    _legal = (0, 1)


@pytest.mark.parametrize(
    ("state_cls", "check", "fragment"),
    [
        (LoadedDie, "chance", "chi-square"),
        (LeakyOdds, "chance", "sum to"),
        (ShallowClone, "clone", "changed the original"),
        (Endless, "random_play", "did not end within max_episode_steps"),
        (GlobalRandom, "determinism", "differ"),
        (FlickeringMask, "masks", "action_masks()"),
        (OutOfRange, "random_play", "outside range(2)"),
        (ReversedLegalTuple, "random_play", "is not legal_actions()"),
        (UnsortedButPromised, "random_play", "not in increasing order"),
        (StaleKeptPlayer, "random_play", "(the state sets player_kept)"),
        (StaleKeptLegal, "random_play", "(the state sets legal_kept)"),
    ],
)
def test_a_planted_fault_fails_its_check(state_cls: type[PigState], check: str, fragment: str) -> None:
    failed = _failed(_toy_with(state_cls, f"toy_{state_cls.__name__.lower()}"))
    assert check in failed, failed
    assert fragment in failed[check]


def test_assert_checks_reports_one_line_per_failed_check() -> None:
    with pytest.raises(AssertionError) as info:
        assert_checks(_toy_with(LeakyOdds, "toy_leaky"), steps=500, env_checkers=False)
    lines = str(info.value).splitlines()
    assert lines[0].startswith("toy_leaky: 1 check(s) failed")
    assert lines[1].startswith("FAIL race chance: ")


def test_config_check_catches_a_model_that_accepts_unknown_keys() -> None:
    from pydantic import ConfigDict

    from tests.toy import PigConfig

    class Loose(PigConfig):
        model_config = ConfigDict(extra="allow", frozen=True)

    failed = _failed(dataclasses.replace(TOY, name="toy_loose", config_model=Loose), steps=200)
    assert "no_such_key_xyz" in failed.get("config", "")


def test_default_steps_are_the_issue_s_100k() -> None:
    assert DEFAULT_STEPS == 100_000


# -- every shipped ruleset passes (a reduced step count; `rulebreaker check R` runs 100k) ---------------
@pytest.mark.parametrize("name", RULESET_NAMES)
def test_shipped_ruleset_passes_rulebreaker_check(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    r = run_cli(capsys, "check", name, "--steps", str(SHIPPED_STEPS))
    assert r.code == 0, r.out + r.err  # the FAIL lines, one per failed check
    assert f"{name}: all " in r.out and "checks passed" in r.out


def test_check_cli_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    from envs.core import registry

    r = run_cli(capsys, "check", "no_such_ruleset")
    assert r.code == 2 and "unknown ruleset 'no_such_ruleset'" in r.err and len(r.err.strip().splitlines()) == 1
    leaky = _toy_with(LeakyOdds, "toy_leaky_cli")
    registry.register_ruleset(leaky)
    try:
        r = run_cli(capsys, "check", "toy_leaky_cli", "--steps", "300")
        assert r.code == 1
        fails = [line for line in r.out.splitlines() if line.startswith("FAIL")]
        assert len(fails) == 1 and fails[0].startswith("FAIL race chance: chance_outcomes() probabilities sum to")
        assert "toy_leaky_cli: 1 of 7 checks failed" in r.out
    finally:
        registry._RULESETS.pop("toy_leaky_cli", None)


class SharedScoresClone(PigState):
    """A clone that shares the banked scores with its original (the ``clone`` check's states are mid-game)."""

    def clone(self):
        twin = copy.copy(self)
        twin.log = list(self.log)
        return twin


def test_a_start_spoiled_by_its_clones_fails_determinism() -> None:
    """With ``clone_start`` the env's start is cloned per reset: a clone sharing mutable data spoils it."""
    toy = _toy_with(SharedScoresClone, "toy_shared_start")
    toy.scenarios["race"] = dataclasses.replace(toy.scenarios["race"], clone_start=True)
    failed = _failed(toy)
    assert "determinism" in failed and "clone_start" in failed["determinism"], failed
    toy.scenarios["race"] = dataclasses.replace(toy.scenarios["race"], clone_start=False)
    assert "determinism" not in _failed(toy)  # the same engine passes it with new games per reset

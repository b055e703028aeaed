"""One unit test (or a few) per numbered rule of docs/rules/storyteller.md; expected values by hand."""

from __future__ import annotations

import pytest

from envs.core.errors import ConfigError
from envs.storyteller import rules
from envs.storyteller.dice import (
    BOTCH,
    Result,
    clamp_difficulty,
    count_successes_and_ones,
    degree_of,
    is_success,
    net_successes,
    outcome_of_faces,
    read_roll,
    result_of,
    specialty_extra,
)

from .helpers import make_cfg


def test_rule1_pool_is_attribute_plus_ability():
    assert rules.dice_pool(3, 4) == 7


def test_rule2_difficulty_default_and_clamp():
    cfg = make_cfg()
    assert rules.difficulty_of(None, cfg) == 6
    assert rules.difficulty_of(3 + 9, cfg) == 10  # an opponent's Attribute + Ability of 12 is clamped
    assert rules.difficulty_of(1, cfg) == 2
    assert clamp_difficulty(7) == 7
    assert rules.difficulty_of(2, make_cfg(dice__min_difficulty=3)) == 3


def test_rule3_success_at_or_above_difficulty_ten_always():
    assert is_success(6, 6) and not is_success(5, 6)
    assert is_success(10, 10) and not is_success(9, 10)


def test_rule4_each_one_cancels_a_success():
    assert count_successes_and_ones((10, 7, 6, 1, 3), 6) == (3, 1)
    assert net_successes(3, 1) == 2
    assert net_successes(1, 3) == 0


def test_rule5_botch_only_without_any_success():
    assert read_roll(0, 1) == BOTCH
    assert read_roll(1, 3) == 0  # more ones than successes, S >= 1: a failure, not a botch
    assert read_roll(0, 0) == 0
    assert result_of(BOTCH) is Result.BOTCH
    assert result_of(0) is Result.FAILURE
    assert result_of(1) is Result.SUCCESS
    assert result_of(1, required=2) is Result.FAILURE
    assert outcome_of_faces((1, 2, 3, 4, 5), 6) == BOTCH
    assert outcome_of_faces((1, 1, 6, 2, 3), 6) == 0


def test_rule6_degrees():
    assert [degree_of(n) for n in range(0, 7)] == [
        "failure",
        "marginal",
        "moderate",
        "complete",
        "exceptional",
        "phenomenal",
        "phenomenal",
    ]


def test_rule7_automatic_success_needs_pool_at_least_difficulty_and_calm():
    cfg = make_cfg()
    assert rules.automatic_success_allowed(6, 6, True, cfg)
    assert not rules.automatic_success_allowed(5, 6, True, cfg)
    assert not rules.automatic_success_allowed(9, 6, False, cfg)  # combat / stress
    assert not rules.automatic_success_allowed(9, 6, True, make_cfg(auto_success__enabled=False))


def test_rule8_willpower_adds_an_uncancellable_success_and_prevents_botch():
    assert read_roll(0, 2, willpower_successes=1) == 1  # would have botched
    assert read_roll(2, 2, willpower_successes=1) == 1  # ones cancel the dice, not the Willpower
    assert read_roll(3, 1, willpower_successes=1) == 3
    assert read_roll(0, 2, willpower_successes=1, prevents_botch=False) == BOTCH
    cfg = make_cfg()
    assert rules.may_spend_willpower(3, 0, cfg)
    assert not rules.may_spend_willpower(3, 1, cfg)  # once per turn
    assert not rules.may_spend_willpower(0, 0, cfg)


def test_rule9_multiple_action_penalties():
    assert [rules.multiple_action_pool(10, 3, k) for k in (1, 2, 3)] == [7, 6, 5]  # -3, -4, -5
    assert [rules.multiple_action_pool(10, 2, k) for k in (1, 2)] == [8, 7]  # -2, -3
    assert rules.multiple_action_pool(10, 1, 1) == 10  # a single action takes no penalty
    assert rules.multiple_action_pool(4, 3, 2) == 0  # cannot be attempted
    assert rules.max_actions(make_cfg(multiple_actions__enabled=False)) == 1


def test_rule10_retry_n_is_at_d_plus_n_minus_1_until_impossible():
    cfg = make_cfg()
    assert [rules.retry_difficulty(7, n, cfg) for n in (1, 2, 3, 4, 5)] == [7, 8, 9, 10, None]
    assert rules.can_retry(True, 2, 7, cfg)
    assert not rules.can_retry(False, 2, 6, cfg)  # one-chance task
    assert not rules.can_retry(True, 5, 7, cfg)  # difficulty 11
    assert rules.retry_difficulty(7, 3, make_cfg(retry__difficulty_step=2)) is None  # 7 + 2 x 2 = 11
    assert rules.retry_difficulty(6, 3, make_cfg(retry__difficulty_step=2)) == 10


def test_rule11_extended_progress_and_reset_per_config():
    cfg = make_cfg()
    assert rules.extended_progress(5, 3, cfg) == (8, False)
    assert rules.extended_progress(5, 0, cfg) == (5, False)
    assert rules.extended_progress(5, BOTCH, cfg) == (0, True)
    failure = make_cfg(extended__reset_on="failure")
    assert rules.extended_progress(5, 0, failure) == (0, True)
    assert rules.extended_progress(5, BOTCH, failure) == (0, True)
    never = make_cfg(extended__reset_on="never")
    assert rules.extended_progress(5, BOTCH, never) == (5, False)


def test_rule12_resisted_four_against_three_is_one():
    cfg = make_cfg()
    assert rules.resisted_result(4, 3, cfg) == 1
    assert rules.resisted_result(3, 3, cfg) == 0  # tie: status quo
    assert rules.resisted_result(2, 5, cfg) == 0
    assert rules.resisted_result(3, BOTCH, cfg) == 3
    assert rules.resisted_result(3, 3, make_cfg(resisted__actor_wins_ties=True)) == 1


def test_rule13_first_to_the_total_and_simultaneous_arrival():
    cfg = make_cfg()
    assert rules.contest_winner([3, 5], 6, cfg) is None
    assert rules.contest_winner([6, 5], 6, cfg) == 0
    assert rules.contest_winner([7, 8], 6, cfg) == 1  # both reach: higher total
    assert rules.contest_winner([7, 7], 6, cfg) == -1  # still equal: roll again
    assert rules.contest_winner([8, 7], 6, make_cfg(contest__simultaneous="draw")) == -1


def test_rule14_teamwork_adds_independent_successes():
    assert rules.teamwork_successes([3, BOTCH, 2]) == 5


def test_rule15_specialty_rerolls_tens_once():
    assert specialty_extra(2, (7, 3), 6) == 1
    assert outcome_of_faces((10, 10, 1), 6, specialty=True, reroll_faces=(6, 10)) == 3  # 2 + 2 - 1
    assert outcome_of_faces((10, 10, 1), 6) == 1


def test_config_errors_name_the_key_and_what_is_allowed():
    with pytest.raises(ConfigError, match="extended.reset_on"):
        make_cfg(extended__reset_on="sometimes")
    with pytest.raises(ConfigError, match="dice.default_difficulty"):
        make_cfg(dice__default_difficulty=11)
    with pytest.raises(ConfigError, match="unknown task"):
        make_cfg(heist__tasks=["documents", "bank"])

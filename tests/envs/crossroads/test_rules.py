"""One test (or a few) per numbered rule of docs/rules/crossroads.md, with forced dice."""

from __future__ import annotations

import pytest

from envs.core.errors import ConfigError
from envs.core.game import CHANCE, EndReason, IllegalActionError
from envs.crossroads.actions import Act, Phase
from envs.crossroads.episode import CrossroadsState

from .helpers import (
    assign_action,
    brute_best,
    build,
    config,
    faction_id,
    quick_setup,
    roll,
    start_confrontation,
)


def new(**kw) -> CrossroadsState:
    return CrossroadsState(config(**kw))


def values(st: CrossroadsState) -> list[int]:
    return [a - Act.VALUE_1 + 1 for a in st.legal_actions()]


# -- Rule 1: characters ----------------------------------------------------------------------------
def test_rule1_build_spreads_12_points_within_1_to_9():
    st = new()
    assert st.phase == Phase.BUILD and st.actor == 0
    assert values(st) == list(range(1, 10))  # G: the other two can absorb 3..11 more
    st.apply_action(Act.VALUE_1 + 8)  # G = 9
    assert values(st) == [1, 2]  # KH: 3 points left, M needs at least 1
    st.apply_action(Act.VALUE_1 + 1)  # KH = 2
    assert st.chars[0].stats == [9, 2, 1]
    assert st.chars[0].personal and st.chars[0].owner == 0
    assert st.chars[0].goals == [False, False, False]


def test_rule1_stat_range_is_a_config_decision():
    st = new(character__stat_min=3, character__stat_max=6)
    assert values(st) == [3, 4, 5, 6]
    st.apply_action(Act.VALUE_1 + 5)  # G = 6 leaves 6 for KH+M, each 3..6
    assert values(st) == [3]
    with pytest.raises(ConfigError, match="creation_points"):
        config(character__stat_max=3)  # 12 points cannot fit in three stats <= 3


def test_rule1_illegal_build_value_is_refused():
    st = new()
    st.apply_action(Act.VALUE_1 + 8)
    with pytest.raises(IllegalActionError):
        st.apply_action(Act.VALUE_1 + 4)  # KH 5 would leave M = -2


# -- Rule 2: factions ------------------------------------------------------------------------------
def test_rule2_each_player_presents_one_faction_at_influence_4():
    st = quick_setup(new())
    assert [(f.owner, f.influence) for f in st.factions] == [(0, 4), (1, 4), (2, 4)]


def test_rule2_factions_per_player_is_a_config_decision():
    st = quick_setup(new(faction__per_player=2))
    assert [f.owner for f in st.factions] == [0, 0, 1, 1, 2, 2]  # each player presents its own in turn


# -- Rule 3: stat check with dice assignment ---------------------------------------------------------
@pytest.mark.parametrize("dice,stats", [((2, 5, 9), (5, 4, 3)), ((3, 3, 8), (9, 2, 1)), ((1, 6, 7), (6, 3, 3))])
def test_rule3_assignment_successes_match_brute_force_for_all_six(dice, stats):
    best, best_perms = brute_best(dice, stats)
    for perm in [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]:
        st = new()
        build(st, stats[0], stats[1])
        roll(st, dice)
        assert st.phase == Phase.ASSIGN
        a = assign_action(perm)
        label = st.option_of(a)
        st.apply_action(a)
        expected = sum(1 for i in range(3) if dice[perm[i]] <= stats[i])
        assert st.succ == expected
        assert st.flags == tuple(dice[perm[i]] <= stats[i] for i in range(3))
        assert label == ("optimal_assignment" if perm in best_perms else "suboptimal_assignment")
        assert (expected == best) == (perm in best_perms)


def test_rule3_in_order_assignment_takes_dice_as_rolled():
    st = new(check__assignment="in_order")
    build(st, 5, 4)  # M = 3
    roll(st, (9, 2, 3))  # G gets 9 (fail), KH 2, M 3
    assert st.phase == Phase.SPEND
    assert st.flags == (False, True, True) and st.succ == 2


# -- Rule 4: faction check -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kw,dice,expected",
    [
        ({}, (4, 5, 1), 2),
        ({"faction__check_bonus": 1}, (4, 5, 6), 2),
        ({"faction__check": "none"}, (1, 1, 2), 0),
    ],
)
def test_rule4_faction_check_counts_dice_at_or_below_influence(kw, dice, expected):
    st = new(**kw)
    for _s in range(3):
        build(st, 4, 4)
        roll(st, (8, 9, 10))
        st.apply_action(Act.ASSIGN_0)
    assert st.phase == Phase.ROLL and st.chk_eid == faction_id(0)
    roll(st, dice)
    assert st.succ == expected


# -- Rule 5: crossroads ----------------------------------------------------------------------------
def test_rule5_crossroads_is_narrated_and_has_no_effect_by_default():
    st = new()
    build(st, 4, 4)
    roll(st, (3, 3, 9))
    st.apply_action(assign_action((0, 1, 2)))
    assert st.succ == 2
    assert any(e.kind == "crossroads" and e.data["crossroads"] == "double" for e in st.log)


@pytest.mark.parametrize(
    "effect,triple_twice,dice,succ,plus,minus",
    [
        ("extra_success", False, (3, 3, 9), 3, 0, 0),
        ("extra_success", True, (7, 7, 7), 2, 0, 0),
        ("lose_success", False, (3, 3, 9), 1, 0, 0),
        ("gain_plus_c", False, (3, 3, 9), 2, 1, 0),
        ("gain_minus_c", True, (2, 2, 2), 3, 0, 2),
    ],
)
def test_rule5_crossroads_effects(effect, triple_twice, dice, succ, plus, minus):
    st = new(crossroads__effect=effect, crossroads__triple_twice=triple_twice)
    build(st, 4, 4)
    roll(st, dice)
    st.apply_action(assign_action((0, 1, 2)))
    c = st.chars[0]
    assert (st.succ, c.plus, c.minus) == (succ, plus, minus)


def test_rule5_goal_box_on_miss_marks_the_stat_whose_matching_die_failed():
    st = new(crossroads__effect="goal_box_on_miss")
    build(st, 2, 6)  # M = 4
    roll(st, (1, 5, 5))
    st.apply_action(assign_action((1, 0, 2)))  # G gets 5 (fail), KH gets 1, M gets 5 (fail)
    assert st.chars[0].goals == [True, False, True]
    st2 = new(crossroads__effect="goal_box_on_miss")
    build(st2, 2, 6)
    roll(st2, (1, 5, 5))
    st2.apply_action(assign_action((0, 1, 2)))  # G 1, KH 5 (success), M 5 (fail)
    assert st2.chars[0].goals == [False, False, True]


# -- Rule 6: spending successes ---------------------------------------------------------------------
def test_rule6_spends_raise_stats_gain_plus_and_remove_minus():
    st = new()
    build(st, 4, 4)
    st.chars[0].minus = 1
    roll(st, (1, 2, 3))
    st.apply_action(assign_action((0, 1, 2)))
    assert st.left == 3
    legal = st.legal_actions()
    assert {Act.STAT_UP_G, Act.STAT_UP_G + 1, Act.STAT_UP_G + 2, Act.GAIN_PLUS_C, Act.REMOVE_MINUS_C, Act.PASS} == set(
        legal
    )  # no +2: no +C to pay with yet
    st.apply_action(Act.GAIN_PLUS_C)
    assert Act.STAT_UP2_G in st.legal_actions()
    st.apply_action(Act.STAT_UP2_G + 2)  # +2 M paid with the +C (same_sign)
    st.apply_action(Act.REMOVE_MINUS_C)
    c = st.chars[0]
    assert c.stats == [4, 4, 6] and c.plus == 0 and c.minus == 0
    assert st.phase == Phase.BUILD and st.actor == 1  # next player's turn


def test_rule6_opposite_sign_double_step_is_paid_with_a_minus_c():
    st = new(spend__double_step="opposite_sign")
    build(st, 4, 4)
    st.chars[0].minus = 1
    roll(st, (1, 9, 9))
    st.apply_action(assign_action((0, 1, 2)))
    st.apply_action(Act.STAT_UP2_G + 1)
    assert st.chars[0].stats == [4, 6, 4] and st.chars[0].minus == 0


def test_rule6_double_step_off_and_spends_per_success():
    st = new(spend__double_step="off", spend__outcomes_per_success=2)
    build(st, 4, 4)
    st.chars[0].plus = 2
    roll(st, (1, 9, 9))
    st.apply_action(assign_action((0, 1, 2)))
    assert st.left == 2
    assert not any(Act.STAT_UP2_G <= a <= Act.STAT_UP2_G + 2 for a in st.legal_actions())


def test_rule6_stat_cap():
    st = new(character__stat_cap=9)
    build(st, 9, 2)
    roll(st, (1, 9, 9))
    st.apply_action(assign_action((0, 1, 2)))
    assert Act.STAT_UP_G not in st.legal_actions()


def test_rule6_factions_spend_only_on_conditions():
    st = new()
    for _ in range(3):
        build(st, 4, 4)
        roll(st, (8, 9, 10))
        st.apply_action(Act.ASSIGN_0)
    roll(st, (1, 2, 9))
    assert st.phase == Phase.SPEND and st.left == 2
    assert st.legal_actions() == [Act.GAIN_PLUS_C, Act.PASS]


# -- Rule 7: setup ----------------------------------------------------------------------------------
def test_rule7_setup_passes_left_from_a_rolled_first_player():
    st = new(setup__first_player="roll")
    assert st.current_player() == CHANCE
    st.apply_chance(1)
    order = []
    for _ in range(3):
        order.append(st.actor)
        build(st, 4, 4)
        roll(st, (8, 9, 10))
        st.apply_action(Act.ASSIGN_0)
    assert order == [1, 2, 0]
    owners = []
    while st.phase == Phase.ROLL:
        owners.append(st.factions[-1].owner)
        roll(st, (8, 9, 10))
    assert owners == [1, 2, 0]
    assert st.phase == Phase.ADMIN_SCENE and st.admin == 1


# -- Rule 8: the Admin ------------------------------------------------------------------------------
def test_rule8_admin_rotates_left_after_each_scene():
    st = quick_setup(new())
    admins = []
    for _ in range(4):
        admins.append(st.admin)
        st.apply_action(Act.SCENE_INTRO_FACTION)
        roll(st, (8, 9, 10))
    assert admins == [0, 1, 2, 0]
    assert st.scene_no == 5


def test_rule8_scene_types_offered():
    st = quick_setup(new())
    assert st.legal_actions() == [
        Act.SCENE_INTRO_CHARACTER,
        Act.SCENE_INTRO_FACTION,
        Act.SCENE_DEAL,
        Act.SCENE_CONFRONT,
    ]


# -- Rule 9: introduction -----------------------------------------------------------------------------
def test_rule9_introduction_creates_a_common_character_when_the_admin_has_one():
    st = quick_setup(new())
    st.apply_action(Act.SCENE_INTRO_CHARACTER)
    build(st, 3, 3)
    c = st.chars[3]
    assert not c.personal and c.stats == [3, 3, 6]
    roll(st, (1, 9, 10))
    st.apply_action(assign_action((0, 1, 2)))
    st.apply_action(Act.STAT_UP_G)
    assert c.stats == [4, 3, 6] and st.admin == 1


def test_rule9_introduction_creates_a_personal_character_for_an_admin_without_one():
    st = quick_setup(new())
    st.write_off(st.chars[0], "test")  # out of play (the rules keep who is in play as entities leave it)
    st.apply_action(Act.SCENE_INTRO_CHARACTER)
    build(st, 4, 4)
    assert st.chars[3].personal and st.chars[3].owner == 0


# -- Rule 10: deal ----------------------------------------------------------------------------------
def test_rule10_deal_raises_influence_and_the_character_checks():
    st = quick_setup(new())
    st.apply_action(Act.SCENE_DEAL)
    assert st.decision_context() == "deal_faction"
    st.apply_action(Act.TARGET_0 + faction_id(1))
    assert st.decision_context() == "deal_against"
    assert Act.TARGET_0 + 0 not in st.legal_actions()  # not against yourself
    st.apply_action(Act.TARGET_0 + 2)
    assert st.factions[1].influence == 5
    roll(st, (1, 9, 10))
    st.apply_action(assign_action((0, 1, 2)))
    assert st.decision_context() == "spend" and st.left == 1


def test_rule10_and_12_deal_to_influence_8_writes_the_faction_off():
    st = quick_setup(new())
    st.factions[1].influence = 7
    st.apply_action(Act.SCENE_DEAL)
    st.apply_action(Act.TARGET_0 + faction_id(1))
    st.apply_action(Act.TARGET_0 + 2)
    assert not st.factions[1].alive and st.exits == 1


# -- Rule 11: confrontation --------------------------------------------------------------------------
def test_rule11_target_must_be_another_players_personal_character():
    st = quick_setup(new())
    st.apply_action(Act.SCENE_CONFRONT)
    assert st.legal_actions() == [Act.TARGET_0 + 1, Act.TARGET_0 + 2]
    st.apply_action(Act.TARGET_0 + 1)
    assert set(st.legal_actions()) == {
        Act.TARGET_0 + 0,
        *(Act.TARGET_0 + faction_id(k) for k in range(3)),
    }  # "nobody" is not in the seed's list (confrontation.nobody_opposes = false)


def test_rule11_2_nobody_opposing_gives_the_target_one_outcome_and_no_scene_goal():
    st = quick_setup(new(confrontation__nobody_opposes=True))
    start_confrontation(st, 1, None)
    roll(st, (1, 2, 9))
    st.apply_action(assign_action((0, 1, 2)))  # G, KH succeed
    assert st.decision_context() == "buy_outcome" and st.left == 1
    legal = st.legal_actions()
    assert Act.MARK_G in legal and Act.MARK_G + 2 not in legal  # gated on the success flags
    assert not any(Act.HARM_G <= a <= Act.KILL for a in legal)  # nobody to act against
    st.apply_action(Act.MARK_G)
    assert st.chars[1].goals == [True, False, False]
    assert st.phase == Phase.ADMIN_SCENE and st.admin == 1


def test_rule11_1_nobody_is_an_opposition_only_by_config():
    """Rule 11.1: the seed's list is own character, common character or faction; "nobody" is a key, off."""
    st = quick_setup(new())
    st.apply_action(Act.SCENE_CONFRONT)
    st.apply_action(Act.TARGET_0 + 1)
    assert Act.NO_OPPOSITION not in st.legal_actions()
    st = quick_setup(new(confrontation__nobody_opposes=True))
    st.apply_action(Act.SCENE_CONFRONT)
    st.apply_action(Act.TARGET_0 + 1)
    assert Act.NO_OPPOSITION in st.legal_actions()


def test_rule11_2_no_counteraction_gives_each_side_one_outcome():
    """Rule 11.2: "пусть каждый выберет по 1 исходу" - both sides, not only the target; no scene goal free."""
    st = quick_setup(new())
    st.apply_action(Act.SCENE_CONFRONT)
    st.apply_action(Act.TARGET_0 + 1)  # Bran is the target
    st.apply_action(Act.TARGET_0 + 0)  # the Admin's own Ash stands against it ...
    st.apply_action(Act.NO_OPPOSITION)  # ... but does not counteract: a scene for beauty
    assert st.current_player() == CHANCE  # no target aim, no burns: the sides roll for gating
    roll(st, (1, 2, 9))
    st.apply_action(assign_action((0, 1, 2)))  # Ash (4/4/4): G 1, KH 2 succeed, M 9 fails
    roll(st, (3, 9, 9))
    st.apply_action(assign_action((1, 2, 0)))  # Bran (4/4/4): G 9, KH 9 fail, M 3 succeeds
    assert st.decision_context() == "buy_outcome" and st.actor == 0 and st.left == 1
    legal = st.legal_actions()
    assert Act.MARK_G in legal and Act.MARK_G + 2 not in legal  # gated on Ash's own dice
    assert Act.HARM_G in legal  # an outcome may go against the other side (Rule 11.7's list)
    st.apply_action(Act.MARK_G)
    assert st.decision_context() == "buy_outcome" and st.actor == 1 and st.left == 1
    legal = st.legal_actions()
    assert Act.MARK_G + 2 in legal and Act.MARK_G not in legal
    st.apply_action(Act.MARK_G + 2)
    assert st.chars[0].goals == [True, False, False] and st.chars[1].goals == [False, False, True]
    assert st.chars[0].minus == 0 and st.chars[1].plus == 0  # nobody got a scene goal
    assert st.phase == Phase.ADMIN_SCENE and st.admin == 1


def test_rule11_2_beauty_outcomes_only_on_oneself_by_config():
    st = quick_setup(new(confrontation__beauty_against_other=False))
    st.apply_action(Act.SCENE_CONFRONT)
    st.apply_action(Act.TARGET_0 + 1)
    st.apply_action(Act.TARGET_0 + faction_id(0))  # the Admin's faction (Influence 4)
    st.apply_action(Act.NO_OPPOSITION)
    roll(st, (1, 9, 9))  # the faction: one success, no assignment
    roll(st, (9, 9, 10))
    st.apply_action(assign_action((0, 1, 2)))
    assert st.actor == 0 and st.legal_actions() == [Act.GAIN_PLUS_C, Act.INFLUENCE_UP, Act.PASS]
    st.apply_action(Act.INFLUENCE_UP)
    assert st.factions[0].influence == 5 and st.actor == 1


def _to_rolls(st, burns0=0, burns1=0):
    for _ in range(burns0):
        st.apply_action(Act.BURN)
    st.apply_action(Act.PASS)
    for _ in range(burns1):
        st.apply_action(Act.BURN)
    st.apply_action(Act.PASS)


def test_rule11_3_burning_before_the_roll_adds_successes():
    st = quick_setup(new())
    st.chars[0].plus = 2
    start_confrontation(st, 1, 0)
    assert st.decision_context() == "burn_before" and st.actor == 0
    _to_rolls(st, burns0=2)
    roll(st, (9, 9, 10))  # Admin's character: no success
    roll(st, (1, 9, 10))  # target: one success
    st.apply_action(Act.PASS)
    st.apply_action(Act.PASS)
    st.apply_action(assign_action((0, 1, 2)))
    st.apply_action(assign_action((0, 1, 2)))
    assert [s.succ for s in st.sides] == [2, 1] and st.chars[0].plus == 0
    assert st.sides[0].won and st.sides[1].lost and st.degree == 1


def test_rule11_3_rerolls_are_repeatable_only_if_configured():
    for repeatable, expected in ((True, [Act.BURN, Act.PASS]), (False, [Act.PASS])):
        st = quick_setup(new(confrontation__reroll_repeatable=repeatable))
        st.chars[0].plus = 3
        start_confrontation(st, 1, 0)
        _to_rolls(st)
        roll(st, (9, 9, 10))
        roll(st, (9, 9, 10))
        assert st.decision_context() == "burn_after" and st.actor == 0
        st.apply_action(Act.BURN)
        assert st.current_player() == CHANCE
        roll(st, (1, 2, 3))
        assert st.sides[0].dice == (1, 2, 3) and st.chars[0].plus == 2
        assert st.legal_actions() == expected


def _fight(st, d0, d1, perm0=(0, 1, 2), perm1=(0, 1, 2)):
    _to_rolls(st)
    roll(st, d0)
    roll(st, d1)
    st.apply_action(Act.PASS)
    st.apply_action(Act.PASS)
    if st.phase == Phase.ASSIGN:
        st.apply_action(assign_action(perm0))
    if st.phase == Phase.ASSIGN:
        st.apply_action(assign_action(perm1))


def test_rule11_4_5_tie_is_a_shared_win_with_degree_0_and_both_scene_goals():
    st = quick_setup(new())
    st.chars[1].goals = [True, False, False]
    start_confrontation(st, 1, 0, admin_aim=Act.UNMARK_G, target_aim=Act.MARK_G + 1)
    _fight(st, (1, 9, 10), (1, 9, 10))  # each one success, both on G
    assert any(e.kind == "result" and "shared win (degree 0)" in e.text for e in st.log)
    # Admin's goal (unmark G) is gated on its G success: yes; target's (mark KH) on its KH die: 9 > 4 fails
    assert st.chars[1].goals == [False, False, False]
    assert st.phase == Phase.ADMIN_SCENE


def test_rule11_4_faction_winner_earns_advantage_used_on_its_next_roll():
    st = quick_setup(new())
    start_confrontation(st, 1, faction_id(2), admin_aim=Act.ADD_WOUNDED)
    _fight(st, (1, 2, 9), (9, 9, 10))  # faction (Influence 4): 2 successes; target 0
    assert st.factions[2].advantage
    assert st.decision_context() == "loser_trade"
    st.apply_action(Act.PASS)
    assert st.decision_context() == "buy_outcome" and st.left == 2
    st.apply_action(Act.PASS)
    assert st.chars[1].minus == 1 and st.chars[1].wounded  # the Admin's free scene goal: the -C "wounded"
    # next scene (Admin 1): the faction opposes character 2; its Advantage adds 1 success, then it is spent
    start_confrontation(st, 2, faction_id(2))
    _to_rolls(st)
    roll(st, (9, 9, 10))
    roll(st, (9, 9, 10))
    st.apply_action(Act.PASS)
    st.apply_action(Act.PASS)
    st.apply_action(assign_action((0, 1, 2)))  # the target assigns; the faction needs no assignment
    assert any(e.kind == "result" and "the Syndicate wins with degree 1" in e.text for e in st.log)
    assert st.factions[2].advantage  # spent, then earned again by winning


def test_rule11_6_loser_trades_winner_minus_c_for_degree():
    st = quick_setup(new())
    st.chars[0].minus = 2
    start_confrontation(st, 1, 0)
    _fight(st, (1, 2, 3), (9, 9, 10))  # Admin 3 successes, target 0 -> degree 3
    assert st.degree == 3 and st.actor == 1
    st.apply_action(Act.TRADE)
    st.apply_action(Act.TRADE)
    assert st.legal_actions() == [Act.PASS]  # no -C left on the winner
    st.apply_action(Act.PASS)
    assert st.degree == 1 and st.chars[0].minus == 0 and st.left == 1


def test_rule11_7_outcomes_are_gated_on_the_buyers_dice():
    st = quick_setup(new())
    st.chars[1].goals = [True, True, False]
    start_confrontation(st, 1, 0)
    _fight(st, (1, 2, 9), (9, 9, 10))  # Admin: G, KH succeed (4,4,4), M fails
    st.apply_action(Act.PASS)  # no trade possible
    legal = st.legal_actions()
    assert Act.UNMARK_G in legal and Act.UNMARK_G + 1 in legal and Act.UNMARK_G + 2 not in legal
    assert Act.MARK_G in legal and Act.MARK_G + 2 not in legal
    st.apply_action(Act.UNMARK_G + 1)
    st.apply_action(Act.HARM_G + 2)
    assert st.chars[1].goals == [True, False, False] and st.chars[1].stats == [4, 4, 3]


def test_rule11_8_loser_burns_plus_c_to_mark_a_box_it_succeeded_on():
    st = quick_setup(new())
    st.chars[1].plus = 1
    start_confrontation(st, 1, 0)
    _fight(st, (1, 2, 3), (1, 9, 10))  # Admin 3, target 1 (G)
    st.apply_action(Act.PASS)  # no trade
    st.apply_action(Act.PASS)  # Admin forgoes its outcomes
    assert st.decision_context() == "loser_mark"
    assert st.legal_actions() == [Act.MARK_G, Act.PASS]
    st.apply_action(Act.MARK_G)
    assert st.chars[1].goals == [True, False, False] and st.chars[1].plus == 0
    assert st.phase == Phase.ADMIN_SCENE


# -- Rule 12: write-offs -----------------------------------------------------------------------------
def test_rule12_stat_at_zero_writes_off():
    st = quick_setup(new())
    st.chars[1].stats = [1, 4, 7]
    start_confrontation(st, 1, 0)
    _fight(st, (1, 2, 9), (9, 9, 10))
    st.apply_action(Act.PASS)
    st.apply_action(Act.HARM_G)
    assert not st.chars[1].alive and st.chars[1].exit == "G fell to 0" and st.exits == 1


def test_rule12_wounded_and_dying_can_be_killed():
    st = quick_setup(new())
    start_confrontation(st, 1, 0)
    _fight(st, (1, 2, 3), (9, 9, 10))
    st.apply_action(Act.PASS)
    assert Act.KILL not in st.legal_actions()
    st.apply_action(Act.ADD_WOUNDED)  # the buyer names the -C "wounded"
    st.apply_action(Act.ADD_DYING)  # ... and "dying"
    assert st.chars[1].wounded and st.chars[1].dying
    st.apply_action(Act.KILL)
    assert not st.chars[1].alive and st.chars[1].exit == "killed"


def test_rule12_the_buyer_names_each_minus_c_and_only_both_names_make_killable():
    """Rule 12: "у них есть -С «ранен» и «умирает»": two -C of any kind do not make a character killable."""
    st = quick_setup(new())
    start_confrontation(st, 1, 0)  # the Admin's aim: a -C, another (plain) one
    _fight(st, (1, 2, 3), (9, 9, 10))  # Admin 3 successes, target 0: degree 3
    st.apply_action(Act.PASS)  # no trade
    c = st.chars[1]
    assert c.minus == 1 and not c.wounded and not c.dying  # the free scene goal: a plain -C
    assert {Act.ADD_MINUS_C, Act.ADD_WOUNDED, Act.ADD_DYING} <= set(st.legal_actions())
    st.apply_action(Act.ADD_MINUS_C)
    assert c.minus == 2 and not c.wounded and not c.dying
    assert Act.KILL not in st.legal_actions()  # two -C, neither of them "wounded" or "dying"
    st.apply_action(Act.ADD_DYING)
    legal = st.legal_actions()
    assert c.dying and not c.wounded and Act.ADD_DYING not in legal and Act.KILL not in legal
    st.apply_action(Act.ADD_WOUNDED)
    assert c.wounded and c.dying and c.minus == 4 and c.alive
    assert any(e.text == 'Bran takes a -C "wounded".' for e in st.log)


def test_rule12_aims_name_the_minus_c_and_factions_take_plain_ones():
    st = quick_setup(new())
    st.apply_action(Act.SCENE_CONFRONT)
    st.apply_action(Act.TARGET_0 + 1)
    st.apply_action(Act.TARGET_0 + faction_id(0))
    assert {Act.ADD_MINUS_C, Act.ADD_WOUNDED, Act.ADD_DYING} <= set(st.legal_actions())  # against a character
    st.apply_action(Act.ADD_DYING)
    legal = st.legal_actions()  # the target's aim against a faction: only a plain -C
    assert Act.ADD_MINUS_C in legal and Act.ADD_WOUNDED not in legal and Act.ADD_DYING not in legal
    st.apply_action(Act.ADD_MINUS_C)
    _to_rolls(st)
    roll(st, (1, 2, 9))  # the faction: 2 successes
    roll(st, (9, 9, 10))
    st.apply_action(Act.PASS)
    st.apply_action(Act.PASS)
    st.apply_action(assign_action((0, 1, 2)))  # target: 0 successes
    st.apply_action(Act.PASS)  # the target does not trade
    assert st.chars[1].dying and not st.chars[1].wounded and st.chars[1].minus == 1


def test_rule12_automatic_naming_is_a_config_decision():
    st = quick_setup(new(writeoffs__minus_c_names="automatic"))
    start_confrontation(st, 1, 0)
    _fight(st, (1, 2, 3), (9, 9, 10))
    st.apply_action(Act.PASS)
    assert st.chars[1].wounded  # the free goal's -C is the first: "wounded"
    assert Act.ADD_WOUNDED not in st.legal_actions() and Act.ADD_DYING not in st.legal_actions()
    st.apply_action(Act.ADD_MINUS_C)
    assert st.chars[1].dying and Act.KILL in st.legal_actions()


def test_rule12_goal_achieved_exits_and_its_check_lowers_influence():
    st = quick_setup(new())
    st.chars[0].goals = [True, True, False]
    st.chars[0].stats = [4, 4, 5]
    st.chars[1].plus = 0
    start_confrontation(st, 1, 0)
    _fight(st, (1, 2, 3), (9, 9, 10))  # Admin's character 3 successes
    st.apply_action(Act.PASS)
    st.apply_action(Act.MARK_G + 2)
    c = st.chars[0]
    assert c.achieved and not c.alive and st.exits == 1
    assert st.phase == Phase.ROLL  # the goal check, before the Admin passes on
    roll(st, (1, 2, 9))
    st.apply_action(assign_action((0, 1, 2)))
    assert st.decision_context() == "lower_influence" and st.left == 2
    st.apply_action(Act.TARGET_0 + faction_id(1))
    st.apply_action(Act.TARGET_0 + faction_id(1))
    assert st.factions[1].influence == 2
    assert st.phase == Phase.ADMIN_SCENE and st.admin == 1
    assert st.seat_return(0) == 1.0


def test_rule12_influence_zero_writes_off():
    st = quick_setup(new())
    st.factions[2].influence = 1
    start_confrontation(st, 1, faction_id(2))
    _fight(st, (9, 9, 10), (1, 2, 3))  # target wins 3-0
    st.apply_action(Act.PASS)  # the faction does not trade
    st.apply_action(Act.INFLUENCE_DOWN)
    assert not st.factions[2].alive and st.factions[2].exit == "Influence fell to 0"
    assert st.seat_return(2) == pytest.approx(-0.25)  # (0 - 4) / 4 x 0.25


# -- Rule 13: end of the episode ---------------------------------------------------------------------
def test_rule13_three_exits_end_the_episode_after_the_scene():
    st = quick_setup(new())
    st.exits = 2
    st.factions[1].influence = 7
    st.apply_action(Act.SCENE_DEAL)
    st.apply_action(Act.TARGET_0 + faction_id(1))
    st.apply_action(Act.TARGET_0 + 2)
    assert st.exits == 3 and not st.is_terminal()  # the deal's check still happens
    roll(st, (8, 9, 10))
    st.apply_action(Act.ASSIGN_0)
    assert st.is_terminal() and st.outcome().reason == EndReason.COMPLETED


def test_rule13_scene_limit_ends_with_time_limit():
    st = quick_setup(new(episode__max_scenes=2))
    for _ in range(2):
        st.apply_action(Act.SCENE_INTRO_FACTION)
        roll(st, (8, 9, 10))
    assert st.is_terminal() and st.outcome().reason == EndReason.TIME_LIMIT
    assert st.returns() == [0.0, 0.0, 0.0] and st.outcome().winner is None


def test_returns_add_the_faction_term():
    st = quick_setup(new())
    st.factions[0].influence = 6
    st.chars[1].alive = False
    assert st.seat_return(0) == pytest.approx(0.25 * 0.5)
    assert st.seat_return(1) == -1.0

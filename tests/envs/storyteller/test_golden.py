"""Golden games with forced dice, following the seed's examples (the documents heist, the 4-vs-3
resisted roll) and the rules reference's worked numbers."""

from __future__ import annotations

import pytest

from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError
from envs.storyteller.actions import Act, DAct, DPhase, Phase, Status
from envs.storyteller.dice import BOTCH
from envs.storyteller.duel import DuelState
from envs.storyteller.heist import HeistState

from .helpers import make_cfg


def heist(tasks, **kw):
    kw.setdefault("heist__ally_pool", 0)
    return HeistState(make_cfg(heist__tasks=tasks, heist__draw=0, **kw))


def play(state, *actions):
    for a in actions:
        state.apply_action(a)


def test_documents_example_twelve_successes_within_five_turns():
    """'Wits + Computer each round, difficulty 8: five rounds until the guards come, 12 successes.'"""
    s = heist(["documents"], heist__turns=5)
    assert s.tasks[0].pools == (7, 8)  # Wits 3 + Computer 4; Intelligence 4 + Computer 4
    # turn 1: 10, 9, 8, 8 are four successes, the 1 cancels one: 3
    play(s, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
    assert s.current_player() == CHANCE and s.queue[0].pool == 7 and s.queue[0].difficulty == 8
    s.apply_chance((10, 9, 8, 8, 1, 3, 5))
    assert s.tasks[0].progress == 3
    # turn 2: Willpower; the dice show no success and two ones, yet the roll cannot botch: 1 success
    play(s, Act.ONE_ACTION, Act.ROLL + 0, Act.WILLPOWER)
    s.apply_chance((1, 1, 2, 3, 4, 5, 6))
    assert s.tasks[0].progress == 4 and s.willpower == 2
    # turn 3: a botch wipes the 4 successes and brings the guards a turn sooner
    play(s, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
    s.apply_chance((1, 2, 3, 4, 5, 6, 7))
    assert s.tasks[0].progress == 0 and s.tasks[0].status == Status.PENDING
    assert s.turn_limit == 4 and s.botches == 1
    # turn 4: retry (attempt 2: difficulty 8 + 1 = 9), or abandon
    assert s.phase == Phase.RETRY and s.legal_actions() == [Act.RETRY, Act.ABANDON]
    play(s, Act.RETRY, Act.ONE_ACTION, Act.ROLL + 1, Act.NO_WILLPOWER)
    assert s.queue[0].difficulty == 10 and s.queue[0].pool == 8  # the alternative approach: 9 + 1
    s.apply_chance(5)
    assert s.tasks[0].progress == 5
    assert s.current_player() == TERMINAL  # turn 4 was the last one
    out = s.outcome()
    assert out.reason == EndReason.TIME_LIMIT and out.returns == (0.0,)


def test_documents_completed_in_time_scores_one():
    s = heist(["documents"], heist__turns=5)
    for _ in range(3):
        play(s, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
        s.apply_chance(4)
    assert s.tasks[0].progress == 12 and s.is_terminal()
    assert s.outcome().reason == EndReason.COMPLETED and s.returns() == [1.0]


def test_three_actions_roll_minus_three_four_five():
    s = heist(["documents", "house", "virus"])
    play(s, Act.THREE_ACTIONS, Act.ROLL + 0, Act.ROLL + 4, Act.ROLL + 2, Act.NO_WILLPOWER)
    # documents 7 - 3 = 4, virus 7 - 4 = 3, house 6 - 5 = 1
    assert [(r.slot, r.pool) for r in s.queue] == [(0, 4), (2, 3), (1, 1)]


def test_two_actions_roll_minus_two_three_and_zero_pool_cannot_be_attempted():
    s = heist(["documents", "house"])
    play(s, Act.TWO_ACTIONS, Act.ROLL + 2)  # house first: 6 - 2 = 4
    assert Act.ROLL + 2 not in s.legal_actions()  # one roll per task per interval
    play(s, Act.ROLL + 0, Act.NO_WILLPOWER)  # documents second: 7 - 3 = 4
    assert [r.pool for r in s.queue] == [4, 4]
    s2 = heist(["tree"])  # Strength 3 + Athletics 2 = 5: two actions need two tasks
    assert Act.TWO_ACTIONS not in s2.legal_actions()


def test_the_hole_splitting_one_task_when_one_roll_per_task_is_off():
    s = heist(["documents"], extended__one_roll_per_task=False)
    play(s, Act.THREE_ACTIONS, Act.ROLL + 0, Act.ROLL + 0, Act.ROLL + 0, Act.NO_WILLPOWER)
    assert [r.pool for r in s.queue] == [4, 3, 2]  # 9 dice on one task from a 7-dice pool


def test_automatic_success_only_on_calm_tasks_with_pool_at_least_difficulty():
    s = heist(["autopsy", "documents"])
    assert s.tasks[0].pools[0] == 6 and s.tasks[0].difficulties[0] == 6  # default difficulty
    play(s, Act.ONE_ACTION)
    legal = s.legal_actions()
    assert Act.AUTO + 0 in legal  # 6 dice at 6, no stress
    assert Act.AUTO + 1 not in legal  # the documents: under stress (and 7 < 8)
    play(s, Act.AUTO + 0)
    assert s.phase == Phase.COUNT and s.tasks[0].progress == 1 and s.turn == 1  # no roll, no willpower step
    play(s, Act.TWO_ACTIONS)
    assert Act.AUTO + 0 not in s.legal_actions()  # 6 - 2 = 4 < 6
    off = heist(["autopsy"], auto_success__enabled=False)
    play(off, Act.ONE_ACTION)
    assert Act.AUTO + 0 not in off.legal_actions()


def test_simple_retryable_task_retries_at_higher_difficulty_until_impossible():
    s = heist(["tree"])  # difficulty 8
    for d in (8, 9, 10):
        play(s, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
        assert s.queue[0].difficulty == d
        s.apply_chance(0)
        if d < 10:
            play(s, Act.RETRY)
    assert s.tasks[0].status == Status.LOST and s.is_terminal()  # difficulty 11 is impossible


def test_one_chance_task_has_no_retry():
    s = heist(["shoot", "tree"])
    play(s, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
    s.apply_chance(0)
    assert s.tasks[0].status == Status.LOST and s.phase == Phase.COUNT


def test_abandon_and_storyteller_ends_attempt():
    s = heist(["documents", "house"])
    play(s, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
    s.apply_chance(BOTCH)
    play(s, Act.ABANDON)
    assert s.tasks[0].status == Status.LOST and s.phase == Phase.COUNT
    s2 = heist(["documents", "house"], extended__abandon_on_reset=True)
    play(s2, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
    s2.apply_chance(BOTCH)
    assert s2.tasks[0].status == Status.LOST and s2.phase == Phase.COUNT


def test_reset_on_failure_config():
    s = heist(["documents"], extended__reset_on="failure")
    play(s, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
    s.apply_chance(3)
    play(s, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
    s.apply_chance(0)  # a plain failure now wipes the progress
    assert s.tasks[0].progress == 0 and s.phase == Phase.RETRY
    b = heist(["documents"])
    play(b, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
    b.apply_chance(3)
    play(b, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
    b.apply_chance(0)  # by the book only a botch does
    assert b.tasks[0].progress == 3 and b.phase == Phase.COUNT


def test_teamwork_ally_rolls_separately_and_adds():
    s = heist(["virus"], heist__ally_pool=3, willpower__declared="before_the_turn")
    play(s, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
    assert s.phase == Phase.ALLY
    play(s, Act.ALLY + 0)
    assert [(r.pool, r.ally) for r in s.queue] == [(7, False), (3, True)]
    s.apply_chance(2)
    s.apply_chance(1)
    assert s.tasks[0].progress == 3
    off = heist(["virus"], heist__ally_pool=3, willpower__declared="before_the_turn", teamwork__enabled=False)
    play(off, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
    assert off.phase == Phase.RESOLVE


def test_willpower_once_per_turn_and_budget():
    s = heist(["documents", "virus"], willpower__points=1, willpower__declared="before_the_turn")
    play(s, Act.TWO_ACTIONS, Act.ROLL + 0, Act.ROLL + 2)
    assert s.legal_actions() == [Act.NO_WILLPOWER, Act.WILLPOWER, Act.WILLPOWER + 1]  # one of the two rolls
    play(s, Act.WILLPOWER + 1)
    assert [r.willpower for r in s.queue] == [0, 1]
    s.apply_chance(1)
    s.apply_chance(2)
    play(s, Act.ONE_ACTION, Act.ROLL + 0)
    assert s.phase == Phase.RESOLVE  # no Willpower left: no Willpower step


def test_random_draw_of_tasks_is_a_chance_node():
    s = HeistState(make_cfg())
    assert s.current_player() == CHANCE
    outs = s.chance_outcomes()
    assert len(outs) == 10 and sum(p for _, p in outs) == pytest.approx(1.0)  # C(5, 3)
    s.apply_chance((0, 2, 4))
    assert [t.spec.key for t in s.tasks] == ["documents", "drive", "virus"]


# -- duel --------------------------------------------------------------------------------------------
def test_duel_resisted_four_against_three_gains_one():
    s = DuelState(make_cfg(willpower__declared="before_the_turn"))
    play(s, DAct.ONE_ACTION, DAct.ATTACK, DAct.NO_WILLPOWER)  # Asha attacks with 6 dice
    assert s.current_player() == 1
    play(s, DAct.TWO_ACTIONS, DAct.DEFEND, DAct.ATTACK, DAct.WILLPOWER + 1)  # Bram: defend -2, attack -3
    assert [(r.seat, r.kind, r.pool, r.willpower) for r in s.queue] == [(0, 0, 6, 0), (1, 2, 4, 0), (1, 0, 3, 1)]
    s.apply_chance(4)  # Asha 4
    s.apply_chance(3)  # Bram resists with 3: 4 vs 3 -> 1
    assert BOTCH not in dict(s.chance_outcomes())  # the Willpower roll cannot botch
    s.apply_chance(2)  # Bram's attack is unopposed
    assert s.progress == [1, 2] and s.willpower == [3, 2] and s.turn == 1


def test_duel_botched_attack_loses_everything_and_tie_is_status_quo():
    s = DuelState(make_cfg(willpower__declared="before_the_turn"))
    s.progress = [5, 2]
    play(s, DAct.ONE_ACTION, DAct.ATTACK, DAct.NO_WILLPOWER, DAct.ONE_ACTION, DAct.DEFEND, DAct.NO_WILLPOWER)
    s.apply_chance(BOTCH)
    s.apply_chance(1)
    assert s.progress == [0, 2]
    play(s, DAct.ONE_ACTION, DAct.ATTACK, DAct.NO_WILLPOWER, DAct.ONE_ACTION, DAct.DEFEND, DAct.NO_WILLPOWER)
    s.apply_chance(2)
    s.apply_chance(2)
    assert s.progress == [0, 2]


def test_duel_both_reach_target_higher_total_wins_else_roll_again():
    s = DuelState(make_cfg(willpower__declared="before_the_turn"))
    s.progress = [5, 5]
    play(s, DAct.ONE_ACTION, DAct.ATTACK, DAct.NO_WILLPOWER, DAct.ONE_ACTION, DAct.ATTACK, DAct.NO_WILLPOWER)
    s.apply_chance(3)
    s.apply_chance(2)
    assert s.is_terminal() and s.outcome().winner == 0 and s.returns() == [1.0, -1.0]
    t = DuelState(make_cfg(willpower__declared="before_the_turn"))
    t.progress = [5, 5]
    play(t, DAct.ONE_ACTION, DAct.ATTACK, DAct.NO_WILLPOWER, DAct.ONE_ACTION, DAct.ATTACK, DAct.NO_WILLPOWER)
    t.apply_chance(2)
    t.apply_chance(2)
    assert t.phase == DPhase.TIEBREAK
    outs = dict(t.chance_outcomes())
    assert outs[0] == pytest.approx(0.5) and outs[1] == pytest.approx(0.5)  # identical fighters
    t.apply_chance(1)
    assert t.outcome().winner == 1


def test_duel_time_limit_is_a_draw():
    s = DuelState(make_cfg(willpower__declared="before_the_turn", duel__turns=1))
    play(s, DAct.ONE_ACTION, DAct.DEFEND, DAct.NO_WILLPOWER, DAct.ONE_ACTION, DAct.DEFEND, DAct.NO_WILLPOWER)
    s.apply_chance(1)
    s.apply_chance(1)
    assert s.outcome().reason == EndReason.TIME_LIMIT and s.returns() == [0.0, 0.0]


def test_duel_illegal_second_attack_and_exploit_variant():
    s = DuelState(make_cfg())
    play(s, DAct.TWO_ACTIONS, DAct.ATTACK)
    assert DAct.ATTACK not in s.legal_actions() and DAct.ATTACK_ALT not in s.legal_actions()
    with pytest.raises(IllegalActionError):
        s.apply_action(DAct.ATTACK)
    x = DuelState(make_cfg(extended__one_roll_per_task=False))
    play(x, DAct.TWO_ACTIONS, DAct.ATTACK_ALT)
    assert DAct.ATTACK_ALT in x.legal_actions()


def test_specialty_rerolls_tens_on_computer_rolls_when_enabled():
    s = heist(["virus"], specialties__enabled=True)  # the character's specialty is Computer
    play(s, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
    assert s.queue[0].specialty
    # 10, 10, 6 are three successes, the rerolled tens show 7 (one more) and 2; the 1 cancels one: 3
    s.apply_chance((10, 10, 6, 1, 2, 3, 4, 7, 2))
    assert s.tasks[0].progress == 3
    off = heist(["virus"])
    play(off, Act.ONE_ACTION, Act.ROLL + 0, Act.NO_WILLPOWER)
    assert not off.queue[0].specialty
    off.apply_chance((10, 10, 6, 1, 2, 3, 4))
    assert off.tasks[0].progress == 2


def test_duel_storyteller_ends_a_botched_attempt_when_configured():
    s = DuelState(make_cfg(extended__abandon_on_reset=True, willpower__declared="before_the_turn"))
    play(s, DAct.ONE_ACTION, DAct.ATTACK, DAct.NO_WILLPOWER, DAct.ONE_ACTION, DAct.ATTACK, DAct.NO_WILLPOWER)
    s.apply_chance(BOTCH)
    s.apply_chance(1)
    assert s.outcome().winner == 1 and s.returns() == [-1.0, 1.0]


# -- issue 15, item 17: Willpower is decided per roll (Rule 8) ---------------------------------------
def test_willpower_is_decided_before_each_roll_after_seeing_the_earlier_rolls():
    """Rule 8: once per turn, declared before the roll; in a split turn roll 1 is seen before deciding on roll 2."""
    s = heist(["documents", "virus"])
    play(s, Act.TWO_ACTIONS, Act.ROLL + 0, Act.ROLL + 2)  # documents 7 - 2 = 5 dice, virus 7 - 3 = 4 dice
    assert s.phase == Phase.WILLPOWER and s.legal_actions() == [Act.NO_WILLPOWER, Act.WILLPOWER]  # before roll 1
    play(s, Act.NO_WILLPOWER)
    assert s.current_player() == CHANCE and s.queue[0].pool == 5 and s.queue[0].willpower == 0
    s.apply_chance(BOTCH)  # roll 1 botches the documents ...
    assert s.tasks[0].status == Status.PENDING and s.willpower == 3
    assert s.phase == Phase.WILLPOWER and s.legal_actions() == [Act.NO_WILLPOWER, Act.WILLPOWER + 1]  # ... then roll 2
    play(s, Act.WILLPOWER + 1)
    assert s.willpower == 2 and s.queue[0].pool == 4 and s.queue[0].willpower == 1
    assert BOTCH not in dict(s.chance_outcomes())  # the Willpower roll cannot botch
    s.apply_chance((1, 1, 2, 3))  # no success, two ones: the Willpower success alone
    assert s.tasks[1].progress == 1 and s.phase == Phase.RETRY


def test_willpower_spent_on_the_first_roll_is_not_offered_again_that_turn():
    s = heist(["documents", "virus"])
    play(s, Act.TWO_ACTIONS, Act.ROLL + 0, Act.ROLL + 2, Act.WILLPOWER)
    s.apply_chance(2)
    assert s.current_player() == CHANCE and s.queue[0].willpower == 0  # once per turn (Rule 8)
    s.apply_chance(1)
    assert s.willpower == 2 and s.phase == Phase.COUNT


def test_willpower_before_the_turn_keeps_the_declared_choice():
    """Rule 8 [decision] ``willpower.declared = "before_the_turn"``: one of the turn's rolls, chosen before any."""
    s = heist(["documents", "virus"], willpower__declared="before_the_turn")
    play(s, Act.TWO_ACTIONS, Act.ROLL + 0, Act.ROLL + 2)
    assert s.legal_actions() == [Act.NO_WILLPOWER, Act.WILLPOWER, Act.WILLPOWER + 1]
    play(s, Act.WILLPOWER + 1)
    assert [r.willpower for r in s.queue] == [0, 1]


def test_duel_willpower_before_each_roll_sees_the_earlier_rolls():
    """Rule 8 in the duel: each side decides before each of its rolls, having seen the rolls made so far."""
    s = DuelState(make_cfg())
    play(s, DAct.ONE_ACTION, DAct.ATTACK)  # Asha: no Willpower step at the declaration
    assert s.current_player() == 1 and s.phase == DPhase.COUNT
    play(s, DAct.TWO_ACTIONS, DAct.DEFEND, DAct.ATTACK)  # Bram: defend -2, attack -3
    assert s.phase == DPhase.WILLPOWER and s.current_player() == 0  # Asha, before her attack
    assert s.legal_actions() == [DAct.NO_WILLPOWER, DAct.WILLPOWER]
    play(s, DAct.NO_WILLPOWER)
    s.apply_chance(4)  # Asha 4
    assert s.current_player() == 1 and s.legal_actions() == [DAct.NO_WILLPOWER, DAct.WILLPOWER]
    assert s.observation(1)[34] == pytest.approx(0.4)  # Bram sees Asha's 4 before deciding on his defence
    play(s, DAct.NO_WILLPOWER)
    s.apply_chance(BOTCH)  # Bram's defence botches (counts as 0)
    assert s.current_player() == 1 and s.legal_actions() == [DAct.NO_WILLPOWER, DAct.WILLPOWER_2]
    play(s, DAct.WILLPOWER_2)
    assert s.queue[0].pool == 3 and s.queue[0].willpower == 1
    s.apply_chance(2)
    assert s.progress == [4, 2] and s.willpower == [3, 2] and s.turn == 1


# -- issue 15, item 18: teamwork on a simple task adds the successes (Rule 14) -----------------------
def test_teamwork_on_a_simple_task_adds_the_allys_successes():
    """Rule 14: the ally rolls independently and the successes add: a failed roll of the player is not the end."""
    s = heist(["tree"], heist__ally_pool=3, willpower__points=0)  # Strength 3 + Athletics 2 at 8
    play(s, Act.ONE_ACTION, Act.ROLL + 0, Act.ALLY + 0)
    assert [(r.pool, r.ally) for r in s.queue] == [(5, False), (3, True)]
    s.apply_chance((7, 5, 4, 3, 2))  # no success
    assert s.current_player() == CHANCE and s.queue[0].ally  # the ally still rolls
    s.apply_chance((9, 2, 3))  # one success: 0 + 1 reaches the one success required
    assert s.tasks[0].status == Status.DONE and s.returns() == [1.0]


def test_teamwork_successes_add_up_to_the_required_number():
    s = heist(["tree"], heist__ally_pool=3, willpower__points=0, dice__required_successes=2)
    play(s, Act.ONE_ACTION, Act.ROLL + 0, Act.ALLY + 0)
    s.apply_chance((8, 5, 4, 3, 2))  # 1 success: not enough alone
    assert s.tasks[0].status == Status.ACTIVE
    s.apply_chance((10, 2, 3))  # 1 + 1 = 2
    assert s.tasks[0].status == Status.DONE
    fail = heist(["tree"], heist__ally_pool=3, willpower__points=0, dice__required_successes=2)
    play(fail, Act.ONE_ACTION, Act.ROLL + 0, Act.ALLY + 0)
    fail.apply_chance((8, 5, 4, 3, 2))
    fail.apply_chance((1, 2, 3))  # the ally botches: 1 + 0 is a failed attempt, and the guards come sooner
    assert fail.tasks[0].status == Status.PENDING and fail.turn_limit == 9


def test_teamwork_separate_judges_each_roll_alone():
    """Rule 14 [decision] ``teamwork.simple_tasks = "separate"``: the player's failure ends the attempt."""
    s = heist(["tree"], heist__ally_pool=3, willpower__points=0, teamwork__simple_tasks="separate")
    play(s, Act.ONE_ACTION, Act.ROLL + 0, Act.ALLY + 0)
    s.apply_chance((7, 5, 4, 3, 2))
    assert s.tasks[0].status == Status.PENDING and s.phase == Phase.RETRY  # the ally's roll lapses

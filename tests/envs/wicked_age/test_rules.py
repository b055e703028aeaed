"""Unit tests per rule of docs/rules/wicked_age.md (expected values from the seed or by hand)."""

from __future__ import annotations

import pytest

from envs.core.game import CHANCE, EndReason
from envs.wicked_age.actions import Act, Ctx
from envs.wicked_age.conflict import WickedAgeState, npc, pc, start_conflict
from envs.wicked_age.dice import Result, compare_answer, read_roll, rolled_lesser_dice, step_down
from envs.wicked_age.rules import Strength
from tests.envs.wicked_age.helpers import (
    AMEK,
    MEKHA,
    amek,
    challenge,
    config,
    default_consequence,
    mekha,
    roll,
    seed_four,
)

LADDER = (12, 10, 8, 6, 4)


def test_rule3_die_ladder():
    assert [step_down(d, LADDER) for d in (12, 10, 8, 6, 4, 0)] == [10, 8, 6, 4, 0, 0]


def test_rule6_reading_adds_all_advantage_to_the_high_die_and_pads():
    assert read_roll((1, 9), 1) == (10, 1, 0, 0)  # "9+1=10 and 1"
    assert read_roll((2, 1), 5) == (7, 1, 0, 0)
    assert read_roll((4,), 0) == (4, 0, 0, 0)
    assert read_roll((9, 6)) > read_roll((9, 2))  # "the lesser die breaks the tie"


@pytest.mark.parametrize(
    "answer,standing,expected",
    [
        ((5, 4), (10, 3), Result.ABSOLUTE_LOSS),  # exactly half loses
        ((9, 2), (9, 6), Result.LOSES_ADVANTAGE),
        ((12, 10), (8, 1), Result.WINS_ADVANTAGE),
        ((9, 7), (8, 6), Result.WINS_ADVANTAGE),
        ((6, 2), (6, 2), Result.WINS_ADVANTAGE),  # a full tie wins the advantage
        ((12, 1), (6, 5), Result.ABSOLUTE_WIN),  # exactly double wins
    ],
)
def test_rule11_four_way_comparison(answer, standing, expected):
    pad = (0, 0)
    assert compare_answer(answer + pad, standing + pad, 1, 3) is expected


def test_rule12_round_three_makes_advantage_absolute():
    assert compare_answer((7, 1, 0, 0), (10, 3, 0, 0), 3, 3) is Result.ABSOLUTE_LOSS
    assert compare_answer((10, 3, 0, 0), (10, 1, 0, 0), 3, 3) is Result.ABSOLUTE_WIN
    assert compare_answer((7, 1, 0, 0), (10, 3, 0, 0), 2, 3) is Result.LOSES_ADVANTAGE


@pytest.mark.parametrize("lesser", [(8, 6), (10, 4), (6, 6)])
def test_rule18_lesser_dice_examples(lesser):
    """'I roll d10 and d6, and you d8 and d6, or d10 and d4, or two d6': yours are lesser."""
    assert rolled_lesser_dice(lesser, (10, 6))
    assert not rolled_lesser_dice((10, 6), lesser)


def test_rule18_largest_die_first_not_total_faces():
    """'if I roll d12 and d4 and you d10 and d8, you roll lesser dice, though with more faces in total'."""
    assert rolled_lesser_dice((10, 8), (12, 4))
    assert not rolled_lesser_dice((12, 4), (10, 8))
    assert not rolled_lesser_dice((10, 8), (8, 10))  # the same dice are not lesser


def test_rule2_and_15_npc_forms_and_consequences():
    esan = npc("Esan", action=(12, 8), maneuvering=(10, 6), self_protection=(6, 4))
    state = start_conflict([amek(), esan], [("with_violence", "directly"), ("self_protection",)])
    assert state.roll_dice[1] == (6, 4)  # an NPC rolls one form = both of its dice
    roll(state, AMEK, (12, 1))
    roll(state, 1, (2, 1))
    roll(state, 1, (3, 2))  # 12 >= 2 * 3: Esan loses absolutely
    default_consequence(state, exhausted=True)
    assert state.chars[1].dice == [10, 6, 10, 6, 6, 4]  # both Action dice lose a size


def test_rule16_two_forms_at_zero_put_a_pc_out_of_the_chapter():
    weak = pc("Mekha", for_myself=10, directly=4, with_violence=4, covertly=6, for_others=6, with_love=6)
    state = start_conflict([amek(), weak], [("with_violence", "directly"), ("for_myself", "directly")], max_conflicts=5)
    roll(state, AMEK, (10, 3))
    roll(state, MEKHA, (7, 2))
    roll(state, MEKHA, (5, 4))
    default_consequence(state, exhausted=True)
    out = state.outcome()
    assert out.reason is EndReason.KNOCKOUT and out.winner == AMEK and out.returns == (1.0, -1.0)


def test_rule16_any_two_npc_dice_at_zero():
    esan = npc("Esan", action=(12, 4), maneuvering=(10, 4), self_protection=(6, 4))
    state = start_conflict([amek(), esan], [("with_violence", "directly"), ("action",)], max_conflicts=5)
    roll(state, AMEK, (12, 1))
    roll(state, 1, (2, 1))
    roll(state, 1, (3, 2))
    default_consequence(state, exhausted=False)  # Maneuvering d10+d4 -> d8+0: one zero only
    assert state.outcome() is None
    assert state.chars[1].dice == [12, 4, 8, 0, 6, 4]


def test_rule5_strengths_potent_general_consequential():
    potent = Strength.parse("with_violence:potent", config())
    assert potent.die == 10 and not potent.general
    twice = Strength.parse("for_others:twice_potent:general", config())
    assert twice.die == 12 and twice.general
    cons = Strength.parse("directly:consequential=for_others", config())
    a = pc(
        "Amek", strengths=(cons,), with_violence=12, directly=10, covertly=8, for_myself=6, for_others=6, with_love=4
    )
    state = start_conflict(
        [a, mekha()], [("with_violence", "directly"), ("for_myself", "directly")], strengths_used=[0, -1]
    )
    assert state.roll_dice[AMEK] == (12, 10, 8)  # the strength's base d8 joins the roll
    roll(state, AMEK, (10, 3, 1))
    roll(state, MEKHA, (7, 2))
    roll(state, MEKHA, (5, 4))
    default_consequence(state, exhausted=True)
    # exhausted (Directly 8->6, With Violence 12->10) and For Others 4->0 for the consequential strength
    assert state.chars[MEKHA].dice == [6, 6, 10, 0, 6, 10]


def test_rule4_strength_only_with_its_required_form():
    cfg = config(duel={"strengths": [["with_love"], []], "build_phase": False, "forms_available": 6})
    from envs.wicked_age.scenarios import new_duel

    state = new_duel(cfg)
    state.apply_action(Act.FORM_5)
    state.apply_action(Act.FORM_1)  # With Violence + Directly: the With Love strength does not fit
    assert state.actor == MEKHA and state.node == Ctx.PICK_FORM
    state2 = new_duel(cfg)
    state2.apply_action(Act.FORM_4)
    state2.apply_action(Act.FORM_1)
    assert state2.node == Ctx.PICK_STRENGTH and set(state2.legal_actions()) == {Act.STRENGTH_0, Act.NO_STRENGTH}


def test_rule8_lowest_die_reroll_and_no_avoid_with_three_parties():
    chars = seed_four()[:2] + [seed_four()[3]]
    state = start_conflict(
        chars,
        [("with_love", "covertly"), ("for_myself", "covertly"), ("maneuvering",)],
        config(negotiation={"enabled": False}),
    )
    roll(state, 0, (6, 2))
    roll(state, 1, (6, 2))
    roll(state, 2, (10, 1))
    assert state.current_player() == CHANCE and state.node == Ctx.TIE_REROLL  # no avoiding with three parties
    assert [o for o, _ in state.chance_outcomes()] == list(range(1, 7))  # Mekha's low die is the d6
    state.apply_chance(5)
    assert [o for o, _ in state.chance_outcomes()] == list(range(1, 9))  # Taye's low die is the d8
    state.apply_chance(1)
    assert state.order == [2, 0, 1]


def test_rule19_cashing_stacks_and_lasts_the_conflict():
    state = start_conflict(
        [amek(), mekha()], [("with_violence", "directly"), ("for_myself", "directly")], owe_list=[MEKHA, AMEK, MEKHA]
    )
    state.apply_action(Act.ROLL)  # no offers before the roll
    state.apply_action(Act.ROLL)
    assert state.node == Ctx.PRE_ROLL and state.actor == AMEK
    state.apply_action(Act.ROLL)  # Amek keeps his entry
    assert state.node == Ctx.PRE_ROLL and state.actor == MEKHA
    state.apply_action(Act.CASH_OWE)
    state.apply_action(Act.CASH_OWE)
    assert state.owe == [AMEK] and state.node == Ctx.OPENING_ROLL and state.advantage_dice(MEKHA) == 2
    state.apply_chance(((3, 3), 0))  # Amek's opening roll
    state.apply_chance(((1, 1), 12))
    assert state.rolls[MEKHA].key[:2] == (13, 1)
    roll(state, AMEK, (9, 7))  # 9 and 7 against 13 and 1: lower, not half
    assert state.advantage_dice(MEKHA) == 3  # two cashed dice plus the advantage


def test_rule17_offer_before_rolls_accepted_ends_the_conflict():
    state = start_conflict(
        [amek(), mekha()], [("with_violence", "directly"), ("for_myself", "directly")], max_conflicts=2
    )
    assert state.node == Ctx.WINDOW and state.actor == AMEK
    state.apply_action(Act.ROLL)
    state.apply_action(Act.OFFER_WINNER_CHOICE)  # Mekha offers: Amek chooses a form of his to lose
    assert state.node == Ctx.OFFER_RESPONSE and state.actor == AMEK
    state.apply_action(Act.ACCEPT)
    assert state.node == Ctx.OFFER_FORM and state.actor == AMEK
    state.apply_action(Act.FORM_2)
    assert state.chars[MEKHA].dice[2] == 8
    assert state.conflict_no == 2 and state.node == Ctx.PICK_FORM  # the next conflict begins


def test_rule17_insisting_on_the_whip():
    state = start_conflict([amek(), mekha()], [("with_violence", "directly"), ("for_myself", "directly")])
    roll(state, AMEK, (10, 3))
    roll(state, MEKHA, (7, 2))
    roll(state, MEKHA, (5, 4))
    state.apply_action(Act.OFFER_CONCEDE_STAKE)
    state.apply_action(Act.INSIST)
    assert state.node == Ctx.CONSEQ_DEFAULT and state.actor == AMEK


def test_rule9_melee_second_mover_rerolls_and_answerer_loses_move():
    chars = seed_four()[:2] + [seed_four()[3]]
    state = start_conflict(
        chars,
        [("with_love", "covertly"), ("for_myself", "covertly"), ("maneuvering",)],
        config(negotiation={"enabled": False}),
    )
    roll(state, 0, (8, 1))
    roll(state, 1, (6, 2))
    roll(state, 2, (10, 4))
    assert state.order == [2, 0, 1]
    challenge(state, 1)  # Esan names only Taye
    roll(state, 1, (9, 1))
    assert state.challenged[1] and not state.moved[1]
    assert state.node == Ctx.MOVER_ROLL and state.actor == 0  # Mekha moves: rerolls
    state.apply_chance(((3, 6), 0))
    assert set(state.legal_actions()) == {Act.CHALLENGE_1 - 1 + 2, Act.CHALLENGE_1 - 1 + 4, Act.CHALLENGE_1 - 1 + 6}


def test_forms_available_drawn_at_a_chance_node():
    from envs.wicked_age.scenarios import new_duel

    state = new_duel(config(duel={"forms_available": 3, "build_phase": False}))
    assert state.node == Ctx.FORMS_DRAW
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 20 and abs(sum(p for _, p in outcomes) - 1) < 1e-12
    state.apply_chance((0, 2, 4))
    state.apply_chance((1, 3, 5))
    assert state.legal_actions() == [Act.FORM_0, Act.FORM_2, Act.FORM_4]


def test_build_phase_assigns_every_die_once():
    from envs.wicked_age.scenarios import new_duel

    state = new_duel(config(duel={"build_phase": True, "opponent": "npc", "forms_available": 6}))
    for f in (Act.FORM_2, Act.FORM_4, Act.FORM_0, Act.FORM_1, Act.FORM_3):
        state.apply_action(f)
    assert state.legal_actions() == [Act.FORM_5]
    state.apply_action(Act.FORM_5)
    assert state.drafts[0] == [8, 6, 12, 6, 10, 4] and state.chars[0].dice == [0] * 6  # hidden until all are built
    assert state.actor == 1 and state.legal_actions() == [Act.NPC_FORM_0, Act.NPC_FORM_1, Act.NPC_FORM_2]
    state.apply_action(Act.NPC_FORM_1)
    state.apply_action(Act.NPC_FORM_2)
    state.apply_action(Act.NPC_FORM_0)
    assert state.chars[1].dice == [6, 4, 12, 8, 10, 6]
    assert state.chars[0].dice == [8, 6, 12, 6, 10, 4]
    assert isinstance(state, WickedAgeState) and state.node == Ctx.PICK_FORM


def test_scenario_sheets_follow_forms_pc_dice():
    from envs.wicked_age.scenarios import new_duel

    state = new_duel(config(duel={"build_phase": False}))
    assert state.chars[0].dice == [8, 10, 6, 6, 4, 12]  # d12 With Violence, d10 Directly, d8 Covertly, ...
    state = new_duel(config(forms={"pc_dice": [10, 10, 8, 8, 6, 4]}, duel={"opponent": "npc", "build_phase": False}))
    assert state.chars[0].dice == [8, 10, 8, 6, 4, 10]
    assert state.chars[1].dice == [12, 8, 6, 4, 10, 6]  # Action d12+d8, Maneuvering d6+d4, Self-protection d10+d6


def test_rule18_entries_left_at_the_end_can_be_worth_a_return():
    state = start_conflict(
        [amek(), mekha()],
        [("with_violence", "directly"), ("for_myself", "directly")],
        config(owe_list={"end_value": 0.25}),
        owe_list=[MEKHA, MEKHA],
    )
    roll(state, AMEK, (10, 3))
    roll(state, MEKHA, (7, 2))
    roll(state, MEKHA, (5, 4))
    default_consequence(state, exhausted=True)
    assert state.outcome().returns == (0.0, 0.5)

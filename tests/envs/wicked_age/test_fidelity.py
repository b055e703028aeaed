"""Issue 15 (rules fidelity, round 2), wicked_age items 1-8: one forced-dice test (or more) per item.

Each test fails on the engine before its fix; rule numbers cite docs/rules/wicked_age.md.
"""

from __future__ import annotations

from envs.wicked_age.actions import Act, Ctx
from envs.wicked_age.conflict import pc, start_conflict
from envs.wicked_age.rules import Strength
from tests.envs.wicked_age.helpers import AMEK, MEKHA, amek, config, mekha, roll

DUEL_PICKS = [("with_violence", "directly"), ("for_myself", "directly")]


def consequential_amek():
    """Amek with a consequential strength on Directly (For Others bites the loser)."""
    cons = Strength.parse("directly:consequential=for_others", config())
    return pc(
        "Amek", strengths=(cons,), with_violence=12, directly=10, covertly=8, for_myself=6, for_others=6, with_love=4
    )


# -- item 3: conceding the stake loses no dice (Rules 5 and 17) ------------------------------------------------
def test_item3_concede_stake_after_an_absolute_loss_costs_no_die_despite_a_consequential_strength():
    state = start_conflict([consequential_amek(), mekha()], DUEL_PICKS, strengths_used=[0, None])
    roll(state, AMEK, (10, 3, 1))
    roll(state, MEKHA, (7, 2))
    roll(state, MEKHA, (5, 4))  # 2 x 5 <= 10: Mekha loses absolutely
    assert state.node == Ctx.CONSEQ_OFFER and state.actor == MEKHA
    state.apply_action(Act.OFFER_CONCEDE_STAKE)
    state.apply_action(Act.ACCEPT)
    assert state.chars[MEKHA].dice == mekha().dice  # "concedes the stake and loses no dice"
    assert not any(e.kind == "consequence" for e in state.log)


def test_item3_concede_stake_before_the_roll_costs_no_die_despite_a_consequential_strength():
    state = start_conflict([consequential_amek(), mekha()], DUEL_PICKS, strengths_used=[0, None])
    assert state.node == Ctx.WINDOW and state.actor == AMEK
    state.apply_action(Act.ROLL)
    state.apply_action(Act.OFFER_CONCEDE_STAKE)  # Mekha offers to concede before any roll
    state.apply_action(Act.ACCEPT)
    assert state.chars[MEKHA].dice == mekha().dice
    assert state.outcome() is not None


def test_item3_the_consequential_strength_still_bites_a_negotiated_form_loss():
    state = start_conflict([consequential_amek(), mekha()], DUEL_PICKS, strengths_used=[0, None])
    roll(state, AMEK, (10, 3, 1))
    roll(state, MEKHA, (7, 2))
    roll(state, MEKHA, (5, 4))
    state.apply_action(Act.OFFER_LOSER_CHOICE)
    state.apply_action(Act.ACCEPT)
    state.apply_action(Act.FORM_2)  # Mekha's For Myself d10 -> d8
    assert state.chars[MEKHA].dice == [6, 8, 8, 0, 6, 12]  # and For Others d4 -> 0 for the strength


def test_item3_amek_helper_is_the_seed_sheet():
    assert consequential_amek().dice == amek().dice

"""Issue 15 (rules fidelity, round 2), wicked_age items 1-8: one forced-dice test (or more) per item.

Each test fails on the engine before its fix; rule numbers cite docs/rules/wicked_age.md.
"""

from __future__ import annotations

import pytest

from envs.wicked_age.actions import Act, Ctx
from envs.wicked_age.conflict import pc, start_conflict
from envs.wicked_age.rules import Strength
from tests.envs.wicked_age.helpers import AMEK, MEKHA, amek, config, default_consequence, mekha, roll

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


# -- item 4: consequential strengths across kinds (Rule 5) -----------------------------------------------------
def test_item4_a_consequential_strength_that_could_never_bite_is_refused_at_load():
    with pytest.raises(ValueError, match=r"duel\.strengths\[0\].*consequential on 'for_others'.*never bite"):
        config(duel={"opponent": "npc", "strengths": [["directly:consequential=for_others"], []]})
    with pytest.raises(ValueError, match=r"duel\.npc_strengths.*needs the form 'directly'"):
        config(duel={"opponent": "npc", "npc_strengths": ["directly"]})
    config(duel={"opponent": "npc", "strengths": [["directly:consequential=maneuvering"], []]})  # bites the NPC


def test_item4_the_default_npc_duel_npc_rolls_its_strength_and_it_bites():
    from envs.wicked_age.duel import new_duel

    state = new_duel(config(duel={"opponent": "npc", "build_phase": False, "forms_available": 6}))
    esan = state.chars[1]
    assert [st.form for st in esan.strengths] == ["maneuvering"]
    assert state.chars[AMEK].dice == [8, 10, 6, 6, 4, 12]
    state.apply_action(Act.FORM_5)  # Amek: With Violence d12 ...
    state.apply_action(Act.FORM_1)  # ... and Directly d10
    state.apply_action(Act.STRENGTH_0)  # his potent With Violence strength, a d10
    state.apply_action(Act.NPC_FORM_1)  # Esan: Maneuvering (d6, d4 in the default NPC duel)
    assert state.node == Ctx.PICK_STRENGTH and state.legal_actions() == [Act.STRENGTH_0, Act.NO_STRENGTH]
    state.apply_action(Act.STRENGTH_0)
    assert state.roll_dice == [(12, 10, 10), (6, 4, 8)]
    roll(state, AMEK, (3, 2, 1))
    roll(state, 1, (6, 4, 8))  # Esan's 8 stands
    roll(state, AMEK, (2, 1, 1))  # 2 x 2 <= 8: Amek loses absolutely
    default_consequence(state, exhausted=True)
    # exhausted (Directly 10 -> 8, With Violence 12 -> 10) and For Others 6 -> 4 for Esan's strength
    assert state.chars[AMEK].dice == [8, 8, 6, 4, 4, 10]


# -- item 7: the winner may propose too (Rule 17, example D: Tom proposes) ---------------------------------------
def absolute_win_for_amek():
    state = start_conflict([amek(), mekha()], DUEL_PICKS)
    roll(state, AMEK, (10, 3))
    roll(state, MEKHA, (7, 2))
    roll(state, MEKHA, (5, 4))  # 2 x 5 <= 10: Mekha loses absolutely
    state.apply_action(Act.TAKE_DEFAULT)  # Mekha makes no offer
    assert state.node == Ctx.CONSEQ_DEFAULT and state.actor == AMEK
    return state


def test_item7_the_winner_proposes_one_die_of_its_choice_and_the_loser_accepts():
    state = absolute_win_for_amek()
    assert Act.OFFER_WINNER_CHOICE in state.legal_actions()
    state.apply_action(Act.OFFER_WINNER_CHOICE)  # "no exhaustion or injury, but one die down one size"
    assert state.node == Ctx.CONSEQ_RESPONSE and state.actor == MEKHA
    state.apply_action(Act.ACCEPT)
    assert state.node == Ctx.OFFER_FORM and state.actor == AMEK  # the winner picks the form
    state.apply_action(Act.FORM_2)
    assert state.chars[MEKHA].dice == [6, 8, 8, 4, 6, 12]  # only For Myself lost a size
    assert state.outcome() is not None


def test_item7_a_loser_who_insists_gets_the_default_and_the_winner_offers_only_once():
    state = absolute_win_for_amek()
    state.apply_action(Act.OFFER_CONCEDE_STAKE)
    state.apply_action(Act.INSIST)
    assert state.node == Ctx.CONSEQ_DEFAULT and state.actor == AMEK
    assert state.legal_actions() == [Act.EXHAUST, Act.INJURE]
    state.apply_action(Act.EXHAUST)
    assert state.chars[MEKHA].dice == [6, 6, 10, 4, 6, 10]


def test_item7_key_turns_winner_offers_off():
    state = start_conflict([amek(), mekha()], DUEL_PICKS, config(negotiation={"winner_offers": False}))
    roll(state, AMEK, (10, 3))
    roll(state, MEKHA, (7, 2))
    roll(state, MEKHA, (5, 4))
    state.apply_action(Act.TAKE_DEFAULT)
    assert state.legal_actions() == [Act.EXHAUST, Act.INJURE]


# -- item 1: the build is a decision, and builds are simultaneous (Rules 1-2) ----------------------------------
@pytest.mark.parametrize("env_id", ["rulebreaker/WickedAgeDuel-v0", "rulebreaker/WickedAgeMelee-v0"])
def test_item1_the_registered_envs_open_with_the_build(env_id):
    import gymnasium as gym

    import envs  # noqa: F401 - registers the ids

    env = gym.make(env_id)
    obs, info = env.reset(seed=0)
    state = env.unwrapped.state
    assert state.decision_context() == "build" and state.actor == 0
    assert state.legal_actions() == list(range(Act.FORM_0, Act.FORM_5 + 1))  # where the d12 goes
    assert obs.shape == env.observation_space.shape
    env.close()


def _seat1_first_build_view(seat0_forms):
    from envs.wicked_age import RULESET

    state = RULESET.new_game(config(), "duel")
    for a in seat0_forms:
        state.apply_action(a)
    assert state.node == Ctx.BUILD and state.actor == MEKHA
    return state


def test_item1_no_seat_sees_another_build_before_its_own_is_complete():
    a = _seat1_first_build_view([Act.FORM_0, Act.FORM_1, Act.FORM_2, Act.FORM_3, Act.FORM_4, Act.FORM_5])
    b = _seat1_first_build_view([Act.FORM_5, Act.FORM_4, Act.FORM_3, Act.FORM_2, Act.FORM_1, Act.FORM_0])
    assert (a.observation(MEKHA) == b.observation(MEKHA)).all()
    assert a.legal_actions() == b.legal_actions()
    assert [a.option_of(x) for x in a.legal_actions()] == [b.option_of(x) for x in b.legal_actions()]
    assert [e.text for e in a.log] == [e.text for e in b.log]  # nothing narrated reveals the sheet
    assert a.chars[AMEK].dice == [0] * 6
    for x in (Act.FORM_0, Act.FORM_1, Act.FORM_2, Act.FORM_3, Act.FORM_4, Act.FORM_5):
        a.apply_action(x)
    assert a.chars[AMEK].dice == [12, 10, 8, 6, 6, 4] and a.chars[MEKHA].dice == [12, 10, 8, 6, 6, 4]
    assert a.node in (Ctx.PICK_FORM, Ctx.FORMS_DRAW) and a.conflict_no == 1


def test_item1_fixed_sheets_stay_a_key():
    from envs.wicked_age import RULESET

    for scenario in ("duel", "melee"):
        cfg = config(duel={"build_phase": False}, melee={"build_phase": False})
        state = RULESET.new_game(cfg, scenario)
        assert state.decision_context() != "build" and all(sum(c.dice) > 0 for c in state.chars)


# -- item 2: forms that fit (Rule 4) -------------------------------------------------------------------------
def test_item2_by_default_a_conflict_draws_the_forms_that_fit_and_the_pick_is_among_them():
    from envs.wicked_age.duel import new_duel

    cfg = config()
    assert cfg.duel.forms_available == 3 and cfg.melee.forms_available == 3
    state = new_duel(config(duel={"build_phase": False}))
    assert state.node == Ctx.FORMS_DRAW and state.actor == AMEK
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 20  # C(6, 3) draws, equally likely
    state.apply_chance((0, 2, 4))  # Covertly, For Myself, With Love fit Amek's action
    state.apply_chance((1, 3, 5))  # Directly, For Others, With Violence fit Mekha's
    assert state.node == Ctx.PICK_FORM and state.legal_actions() == [Act.FORM_0, Act.FORM_2, Act.FORM_4]
    state.apply_action(Act.FORM_2)
    assert state.legal_actions() == [Act.FORM_0, Act.FORM_4]  # the second form fits too


# -- item 6: opening rolls are simultaneous (Rules 7 and 19) ---------------------------------------------------
def test_item6_every_party_decides_on_cashing_before_any_opening_roll():
    state = start_conflict([amek(), mekha()], DUEL_PICKS, owe_list=[MEKHA])
    state.apply_action(Act.ROLL)  # no offers before the roll
    state.apply_action(Act.ROLL)
    assert state.node == Ctx.PRE_ROLL and state.actor == MEKHA
    assert state.rolls == [None, None]  # Mekha decides before seeing Amek's opening roll
    state.apply_action(Act.CASH_OWE)
    assert state.node == Ctx.OPENING_ROLL and state.actor == AMEK and state.advantage_dice(MEKHA) == 1
    state.apply_chance(((10, 3), 0))
    state.apply_chance(((5, 4), 3))  # Mekha's roll carries the cashed die
    assert state.rolls[MEKHA].key[:2] == (8, 4)


def test_item6_a_seat_does_not_see_another_seat_cash_before_deciding():
    views = []
    for amek_cashes in (False, True):
        state = start_conflict([amek(), mekha()], DUEL_PICKS, owe_list=[AMEK, MEKHA])
        state.apply_action(Act.ROLL)
        state.apply_action(Act.ROLL)
        assert state.node == Ctx.PRE_ROLL and state.actor == AMEK
        state.apply_action(Act.CASH_OWE if amek_cashes else Act.ROLL)
        assert state.node == Ctx.PRE_ROLL and state.actor == MEKHA
        views.append((state.observation(MEKHA).tobytes(), [e.text for e in state.log], state.legal_actions()))
    assert views[0] == views[1]
    state.apply_action(Act.ROLL)  # now Amek's cashing is applied and told
    assert state.owe == [MEKHA] and state.advantage_dice(AMEK) == 1 and state.log[-1].kind == "cash"


# -- item 5: cashing before a tie reroll (Rule 19: "any time before rolling") -----------------------------------
def test_item5_cashing_is_offered_before_a_tie_reroll_and_the_new_die_is_rolled():
    state = start_conflict([amek(), mekha()], DUEL_PICKS, owe_list=[MEKHA])
    roll(state, AMEK, (6, 2))  # (the helper declines Mekha's cashing before the opening roll)
    roll(state, MEKHA, (6, 2))  # an exact tie
    state.apply_action(Act.FIGHT)
    assert state.node == Ctx.PRE_ROLL and state.actor == MEKHA  # before rerolling his low die
    state.apply_action(Act.CASH_OWE)
    assert state.owe == []
    state.apply_chance(8)  # Amek rerolls the 2 on his d10
    assert state.node == Ctx.CASH_ROLL and state.actor == MEKHA
    assert [o for o, _ in state.chance_outcomes()] == [1, 2, 3, 4, 5, 6]
    state.apply_chance(3)  # the cashed advantage die
    assert state.rolls[MEKHA].key[:2] == (9, 2)
    state.apply_chance(5)  # then the 2 on his d8
    assert state.rolls[MEKHA].key[:2] == (9, 5) and state.rolls[AMEK].key[:2] == (8, 6)
    assert state.order == [MEKHA, AMEK] and state.advantage_dice(MEKHA) == 1


# -- item 8: keys for the [decision]s that had none ------------------------------------------------------------
def strength_duel(cfg):
    """Amek rolls d12 + d10 + his d8 strength; Mekha d10 + d8 (rolls of different lengths)."""
    cons = Strength.parse("directly", cfg)
    a = pc(
        "Amek", strengths=(cons,), with_violence=12, directly=10, covertly=8, for_myself=6, for_others=6, with_love=4
    )
    return start_conflict([a, mekha()], DUEL_PICKS, cfg, strengths_used=[0, None])


def test_item8_rule6_padding_of_short_rolls_is_a_key():
    state = strength_duel(config())
    roll(state, AMEK, (9, 6, 1))
    roll(state, MEKHA, (9, 6))  # (9, 6, 1) against (9, 6, 0): Amek's third die breaks it
    assert state.order == [AMEK, MEKHA]
    state = strength_duel(config(roll={"pad_short_rolls": False}))
    roll(state, AMEK, (9, 6, 1))
    roll(state, MEKHA, (9, 6))  # compared over the two dice both rolled: an exact tie
    assert state.node == Ctx.TIE_AVOID


def three_party_tie(cfg):
    from tests.envs.wicked_age.helpers import seed_four

    chars = seed_four()[:2] + [seed_four()[3]]
    state = start_conflict(chars, [("with_love", "covertly"), ("for_myself", "covertly"), ("maneuvering",)], cfg)
    roll(state, 0, (6, 2))
    roll(state, 1, (6, 2))  # Mekha and Taye tie below Esan's 10
    roll(state, 2, (10, 4))
    return state


def test_item8_rule8_ties_below_the_top_with_three_parties_are_a_key():
    state = three_party_tie(config(negotiation={"enabled": False}))
    assert state.node == Ctx.TIE_REROLL  # every tie is rerolled
    state = three_party_tie(config(negotiation={"enabled": False}, roll={"multi_party_ties": "top"}))
    assert state.order == [2, 0, 1] and state.node == Ctx.CHALLENGE  # no reroll: seat order puts Mekha first


def melee_two_advantages(cfg):
    """Esan takes the advantage over Taye, then Taye over Mekha (as in example D's round 1)."""
    from tests.envs.wicked_age.helpers import challenge, seed_four

    chars = seed_four()[:2] + [seed_four()[3]]
    state = start_conflict(chars, [("with_love", "covertly"), ("for_myself", "covertly"), ("maneuvering",)], cfg)
    roll(state, 0, (8, 1))
    roll(state, 1, (6, 2))
    roll(state, 2, (10, 4))
    challenge(state, 1)
    roll(state, 1, (9, 1))  # lower, not half: Esan takes the advantage over Taye
    roll(state, 0, (3, 6))  # Mekha moves
    challenge(state, 1)
    roll(state, 1, (10, 4))  # Taye beats 6 and 3, not double: Taye takes the advantage over Mekha
    return state


def test_item8_rule13_per_pair_advantage_is_a_key():
    cfg = {"negotiation": {"enabled": False}}
    state = melee_two_advantages(config(**cfg))
    assert state.advantage_dice(2) == 1 and state.advantage_dice(1) == 1  # per pair: Esan keeps his die
    state = melee_two_advantages(config(**cfg, advantage={"tracking": "single"}))
    assert state.advantage_dice(2) == 0 and state.advantage_dice(1) == 1  # one advantage: Taye took it


def cashed_round_one(cfg):
    """Equal dice (d12 + d10 each); Mekha rolls round 1 with a cashed advantage d6."""
    state = start_conflict(
        [amek(), mekha()], [("with_violence", "directly"), ("with_violence", "for_myself")], cfg, owe_list=[MEKHA]
    )
    state.apply_action(Act.ROLL)
    state.apply_action(Act.ROLL)
    state.apply_action(Act.CASH_OWE)  # Mekha cashes before the opening roll
    state.apply_chance(((9, 5), 0))
    state.apply_chance(((6, 2), 3))  # 6+3=9 and 2 against 9 and 5: Amek stands
    roll(state, MEKHA, (7, 1), adv=2)  # 7+2=9 and 1: lower, not half
    assert state.round_no == 2
    return state


def test_item8_rule18_advantage_dice_in_the_lesser_dice_test_are_a_key():
    assert cashed_round_one(config()).owe == []  # d12, d10 against d12, d10: nobody rolled lesser dice
    # counted, Mekha's d12, d10 and advantage d6 make Amek's d12, d10 the lesser dice
    assert cashed_round_one(config(owe_list={"count_advantage_dice": True})).owe == [AMEK]


def four_party_last_round(cfg):
    """Example D's parties, two rounds: Esan holds the advantage over Taye and they never meet in round 2."""
    from tests.envs.wicked_age.helpers import challenge, seed_four

    MARTA, TOM, AMI, ERIN = 0, 1, 2, 3
    state = start_conflict(
        seed_four(),
        [("with_love", "covertly"), ("for_myself", "covertly"), ("directly", "for_others"), ("maneuvering",)],
        cfg,
    )
    roll(state, MARTA, (6, 1))
    roll(state, TOM, (7, 7))
    roll(state, AMI, (10, 1))
    roll(state, ERIN, (10, 4))
    challenge(state, TOM)
    roll(state, TOM, (9, 6))  # Esan takes the advantage over Taye
    roll(state, AMI, (8, 3))  # Amek moves
    challenge(state, MARTA)
    roll(state, MARTA, (7, 2))  # Amek takes the advantage over Mekha
    assert state.round_no == 2  # the last round
    roll(state, MARTA, (5, 2))
    roll(state, TOM, (6, 1))
    roll(state, AMI, (4, 1), adv=1)
    roll(state, ERIN, (9, 4), adv=2)
    assert state.order == [ERIN, TOM, MARTA, AMI]
    challenge(state, AMI)
    roll(state, AMI, (2, 1), adv=1)  # 2 x 3 <= 11: Amek loses absolutely
    state.apply_action(Act.EXHAUST)
    roll(state, TOM, (8, 2))  # Taye moves and names only Mekha
    challenge(state, MARTA)
    roll(state, MARTA, (3, 1))  # 2 x 3 <= 8: Mekha loses absolutely
    state.apply_action(Act.EXHAUST)
    return state


def test_item8_rule12_what_an_advantage_left_after_the_last_round_does_is_a_key():
    cfg = {"negotiation": {"enabled": False}, "contest": {"max_rounds": 2}}
    taye = [8, 6, 12, 4, 10, 6]
    state = four_party_last_round(config(**cfg))
    assert state.outcome() is not None and state.chars[1].dice == taye  # no consequences
    state = four_party_last_round(config(**{**cfg, "contest": {"max_rounds": 2, "after_last_round": "advantage_wins"}}))
    assert state.node == Ctx.CONSEQ_DEFAULT and state.actor == 3  # Esan's advantage over Taye wins
    state.apply_action(Act.EXHAUST)
    assert state.chars[1].dice == [8, 4, 12, 4, 10, 4] and state.outcome() is not None

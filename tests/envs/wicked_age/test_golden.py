"""The seed's worked examples A-D replayed with forced dice (docs/rules/wicked_age.md, rules 6-19).

Faces are given per die in the order the forms were named (e.g. Amek's (d12, d10)), then the sum of
the advantage dice. Each assertion is a statement of the seed's text.
"""

from __future__ import annotations

from envs.core.game import EndReason
from envs.wicked_age.actions import Act, Ctx
from envs.wicked_age.conflict import start_conflict
from envs.wicked_age.dice import Result
from tests.envs.wicked_age.helpers import AMEK, MEKHA, amek, challenge, default_consequence, mekha, roll, seed_four


def duel():
    """Amek (d12 With Violence + d10 Directly) against Mekha (d10 For Myself + d8 Directly)."""
    return start_conflict([amek(), mekha()], [("with_violence", "directly"), ("for_myself", "directly")])


def test_example_a_three_rounds_and_the_owe_list():
    state = duel()
    assert state.roll_dice == [(12, 10), (10, 8)]
    # Round 1: "You have 5 on the d12 and 6 on the d10, so you have 6. I roll 9 on my d10 and 6 on the d8."
    roll(state, AMEK, (5, 6))
    roll(state, MEKHA, (9, 6))
    assert state.rolls[AMEK].key[:2] == (6, 5)
    assert state.order == [MEKHA, AMEK]  # Mekha's 9-and-6 stand, he goes first
    # Amek answers 9 on his d10 and 2 on the d12: 9-and-6 beats 9-and-2, not by double
    roll(state, AMEK, (2, 9))
    assert state.last_result is Result.LOSES_ADVANTAGE
    assert state.adv[MEKHA][AMEK] and state.advantage_dice(MEKHA) == 1
    assert not state.moved[AMEK]  # Amek had to answer before his turn: he loses his move
    # end of round 1: Mekha rolled d10+d8 against d12+d10, still in -> on the owe list
    assert state.round_no == 2 and state.owe == [MEKHA]
    # Round 2: "You rolled 3 and 3. I rolled 9 on my d10, 1 on the d8 and one pip on the advantage die": 9+1=10
    roll(state, AMEK, (3, 3))
    roll(state, MEKHA, (9, 1), adv=1)
    assert state.rolls[MEKHA].key[:2] == (10, 1)
    assert state.order == [MEKHA, AMEK]
    roll(state, AMEK, (7, 9))  # 9 and 7: lower, but 10 is not double -> Mekha keeps the advantage
    assert state.last_result is Result.LOSES_ADVANTAGE
    assert state.adv[MEKHA][AMEK]
    assert state.owe == [MEKHA]  # "Does Mekha go on the owe list again? No, only after round 1."
    # Round 3: "You roll 10 and 3. I roll 7+3=10 and 1. Your turn!"  (tie on the high die, 3 > 1)
    roll(state, AMEK, (10, 3))
    roll(state, MEKHA, (7, 1), adv=3)
    assert state.order == [AMEK, MEKHA]
    # Mekha answers 2+5=7 and 1: lower, not half, but round 3 -> absolute loss
    roll(state, MEKHA, (2, 1), adv=5)
    assert state.rolls[MEKHA].key[:2] == (7, 1)
    assert state.last_result is Result.ABSOLUTE_LOSS
    assert not state.in_conflict[MEKHA]
    # consequences: Mekha is exhausted, With Violence and Directly lose a size
    default_consequence(state, exhausted=True)
    assert state.chars[MEKHA].dice == [6, 6, 10, 4, 6, 10]
    assert state.owe == [MEKHA]  # he never cashed his entry
    assert state.outcome().reason is EndReason.TIME_LIMIT  # the one-conflict chapter is over


def test_example_b_absolute_loss_in_round_one_keeps_mekha_off_the_owe_list():
    state = duel()
    roll(state, AMEK, (10, 3))  # "You have 10 and 3. I roll 7 and 2. Your turn."
    roll(state, MEKHA, (7, 2))
    assert state.order == [AMEK, MEKHA]
    roll(state, MEKHA, (5, 4))  # "Your 10 is double my 5": Amek wins absolutely
    assert state.last_result is Result.ABSOLUTE_LOSS
    assert not state.in_conflict[MEKHA]
    assert state.owe == []  # "Mekha does not go on the owe list"
    default_consequence(state, exhausted=False)  # injured: Covertly and For Others
    assert state.chars[MEKHA].dice == [4, 8, 10, 0, 6, 12]
    assert state.outcome() is not None


def test_example_c_tie_fight_reroll_low_dice_and_advantage_passing():
    state = duel()
    roll(state, AMEK, (6, 2))  # "You roll 6 and 2. I have 6 and 2 - wow."
    roll(state, MEKHA, (6, 2))
    assert state.node == Ctx.TIE_AVOID and state.actor == AMEK
    state.apply_action(Act.AVOID)
    state.apply_action(Act.FIGHT)  # Mekha decides to fight: no avoiding
    # each rerolls the die with the lower value: "now your roll is 8 and 6 and mine 7 and 6"
    state.apply_chance(8)
    state.apply_chance(7)
    assert state.rolls[AMEK].key[:2] == (8, 6) and state.rolls[MEKHA].key[:2] == (7, 6)
    assert state.order == [AMEK, MEKHA]
    roll(state, MEKHA, (9, 7))  # Mekha's 9 and 7 beat 8 and 6, not by double: he takes the advantage
    assert state.last_result is Result.WINS_ADVANTAGE
    assert state.adv[MEKHA][AMEK]
    assert state.owe == [MEKHA]  # "By the way, Mekha's name goes on the owe list."
    # Round 2: "You have 7 and 7; I have 5+3=8 and 1. My turn."
    roll(state, AMEK, (7, 7))
    roll(state, MEKHA, (5, 1), adv=3)
    assert state.order == [MEKHA, AMEK]
    roll(state, AMEK, (12, 10))  # "12 and 10 (bam!)": equal or better, not double -> Amek takes the advantage
    assert state.last_result is Result.WINS_ADVANTAGE
    assert state.adv[AMEK][MEKHA] and not state.adv[MEKHA][AMEK]
    assert state.advantage_dice(AMEK) == 1 and state.advantage_dice(MEKHA) == 0  # the die passes to Amek
    # Round 3: "You have 8+6=14 and 7. I rolled 4 and 4 - your turn."
    roll(state, AMEK, (8, 7), adv=6)
    roll(state, MEKHA, (4, 4))
    assert state.order == [AMEK, MEKHA]
    # "the most I can roll is 10": without cashing, no answer of Mekha reaches 14
    state.apply_action(Act.ROLL)  # Mekha could cash his entry (the seed's gap), but does not
    assert max(outcome[0] for outcome, _ in state.chance_outcomes()) == (10, 8)
    state.apply_chance(((10, 8), 0))
    assert state.last_result is Result.ABSOLUTE_LOSS
    default_consequence(state, exhausted=True)
    assert state.outcome() is not None


def test_example_c_variant_both_avoid_ends_the_conflict_without_consequences():
    state = duel()
    roll(state, AMEK, (6, 2))
    roll(state, MEKHA, (6, 2))
    state.apply_action(Act.AVOID)
    state.apply_action(Act.AVOID)
    assert state.outcome().reason is EndReason.TIME_LIMIT
    assert state.chars[AMEK].dice == amek().dice and state.chars[MEKHA].dice == mekha().dice
    assert state.owe == []


def test_example_d_four_parties_with_an_npc():
    MARTA, TOM, AMI, ERIN = 0, 1, 2, 3  # the players of Mekha, Taye, Amek and Esan
    state = start_conflict(
        seed_four(),
        [("with_love", "covertly"), ("for_myself", "covertly"), ("directly", "for_others"), ("maneuvering",)],
    )
    assert state.roll_dice == [(12, 6), (12, 8), (10, 6), (10, 6)]
    # Round 1: Marta 6 and 1, Tom 7 and 7, Ami 10 and 1, Erin 10 and 4
    roll(state, MARTA, (6, 1))
    roll(state, TOM, (7, 7))
    roll(state, AMI, (10, 1))
    roll(state, ERIN, (10, 4))
    assert state.order == [ERIN, AMI, TOM, MARTA]
    challenge(state, AMI, TOM)  # "Ami, Tom, you both answer."
    assert state.answerers == [AMI, TOM]  # Ami answers first
    roll(state, AMI, (2, 4))  # "2 and 4, a terrible roll": Erin's standing 10 wins absolutely
    assert state.last_result is Result.ABSOLUTE_LOSS
    assert not state.in_conflict[AMI]
    default_consequence(state, exhausted=False)  # "You were injured": Covertly and For Others lose a size
    assert state.chars[AMI].dice == [6, 10, 6, 4, 4, 12]
    roll(state, TOM, (9, 6))  # 9 and 6, just under 10 and 4
    assert state.last_result is Result.LOSES_ADVANTAGE
    assert state.adv[ERIN][TOM]  # Erin takes her advantage die
    # Tom does not move (he answered before his turn); Marta moves: rerolls 3 and 6
    roll(state, MARTA, (3, 6))
    assert state.node == Ctx.CHALLENGE and state.actor == MARTA
    assert Act.CHALLENGE_1 - 1 + (1 << AMI) not in state.legal_actions()  # Amek has left
    challenge(state, TOM)
    roll(state, TOM, (10, 4))  # beats 3 and 6, not by double: Tom takes the advantage over Marta
    assert state.last_result is Result.WINS_ADVANTAGE
    assert state.adv[TOM][MARTA]
    # end of round 1: only Mekha goes on the owe list (d12,d6 against Taye's d12,d8)
    assert state.owe == [MARTA]
    assert state.round_no == 2
    # Round 2: Marta 11 and 5, Tom 9+1=10 and 8, Erin 5+4=9 and 1
    roll(state, MARTA, (11, 5))
    roll(state, TOM, (9, 8), adv=1)
    roll(state, ERIN, (5, 1), adv=4)
    assert state.order == [MARTA, TOM, ERIN]
    challenge(state, TOM)
    roll(state, TOM, (11, 7), adv=4)  # 11+4=15 and 7 beat 11 and 5: Tom keeps the advantage
    assert state.last_result is Result.WINS_ADVANTAGE and state.adv[TOM][MARTA]
    roll(state, ERIN, (9, 6), adv=5)  # Erin rerolls 9+5=14 and 6
    challenge(state, TOM)
    roll(state, TOM, (7, 1), adv=6)  # 7+6=13 and 1: lower, not half -> Esan holds the advantage over Tom
    assert state.last_result is Result.LOSES_ADVANTAGE and state.adv[ERIN][TOM]
    assert state.owe == [MARTA]  # the owe list is not considered after round 2
    # Round 3: Marta 12 and 3, Tom 7+5=12 and 4, Erin 9+2 and 5
    roll(state, MARTA, (12, 3))
    roll(state, TOM, (7, 4), adv=5)
    roll(state, ERIN, (9, 5), adv=2)
    assert state.order == [TOM, MARTA, ERIN]
    challenge(state, MARTA, ERIN)  # "You both answer."
    # Marta cashes Mekha's entry for an advantage die and rolls 4+2=6 and 2: Tom's 12 is double
    roll(state, MARTA, (4, 2), adv=2, cash=1)
    assert state.owe == []
    assert state.last_result is Result.ABSOLUTE_LOSS
    default_consequence(state, exhausted=True)  # exhausted: Directly and With Violence lose a size
    assert state.chars[MARTA].dice == [6, 6, 10, 4, 12, 4]
    # Erin answers 9+1=10 and 3: not half, but round 3 -> a full loss
    roll(state, ERIN, (9, 3), adv=1)
    assert state.last_result is Result.ABSOLUTE_LOSS
    # negotiated: no exhaustion or injury, but one Maneuvering die loses a size
    assert state.node == Ctx.CONSEQ_OFFER and state.actor == ERIN
    state.apply_action(Act.OFFER_LOSER_CHOICE)
    assert state.node == Ctx.CONSEQ_RESPONSE and state.actor == TOM
    state.apply_action(Act.ACCEPT)
    assert state.node == Ctx.OFFER_FORM and state.actor == ERIN
    state.apply_action(Act.FORM_2)  # the first Maneuvering die
    assert state.chars[ERIN].dice == [12, 8, 8, 6, 6, 4]
    assert state.outcome() is not None

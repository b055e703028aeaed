"""Unit tests per rule (docs/rules/hallownest.md), with forced dice via apply_chance.

Expected numbers are worked out by hand from the rule text in each docstring, never read back from
the engine.
"""

from __future__ import annotations

import pytest

from envs.core.config import load_config
from envs.core.errors import ConfigError
from envs.core.game import CHANCE, TERMINAL, EndReason
from envs.hallownest import RULESET
from envs.hallownest import rules as R
from envs.hallownest.actions import Kind, Phase, action_id
from envs.hallownest.duel import DuelState
from tests.envs.hallownest.helpers import act, duel, force


# -- Rules 2, 5, 7: characteristics ------------------------------------------------------------------
def test_half_point_characteristic_gives_a_reroll() -> None:
    assert (R.dice_of(3.5), R.rerolls_of(3.5)) == (3, 1)
    assert (R.dice_of(3.0), R.rerolls_of(3.0)) == (3, 0)


def test_cap_and_maneuverability() -> None:
    assert R.cap_characteristic(9, 7) == 7
    assert [R.maneuverability(g) for g in (2, 3, 4, 5)] == [1, 2, 2, 3]


def test_no_trivial_difficulty_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 15 item 16: Rule 3's difficulties (trivial: 1 success on 4+) have no check in the duel, so
    ``dice.trivial_success_on`` is gone: a variant setting it is refused, naming the key."""
    variant = tmp_path / "trivial.toml"
    variant.write_text("[dice]\ntrivial_success_on = 4\n")
    with pytest.raises(ConfigError, match="unknown key 'dice.trivial_success_on'"):
        load_config(RULESET, variant)


def test_templates_need_no_bug_weight(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 15 item 16: Rule 7's bug weight is used by no simulated rule (only by throwing a grappled bug
    and by small actions), so a size template without ``weight`` builds a duel."""
    templates = tmp_path / "templates.toml"
    templates.write_text(
        "[medium]\nmight = 3\ngrace = 3\nshell = 3\ninsight = 3\nheart = 7\nstamina = 3\nsoul = 3\nspeed = 6\n"
    )
    variant = tmp_path / "variant.toml"
    variant.write_text('[data]\ntemplates = "templates.toml"\n')
    st = DuelState(load_config(RULESET, variant))
    assert [b.p.heart for b in st.bugs] == [7, 7]
    assert "weight" not in R.Profile.__dataclass_fields__


def test_modifier_as_dice_or_successes() -> None:
    assert R.apply_modifier(5, -1, True) == (4, 0)
    assert R.apply_modifier(5, -1, False) == (5, -1)


# -- Rule 9: initiative ---------------------------------------------------------------------------
def test_initiative_tie_goes_to_the_player_side() -> None:
    """Both roll 9: the player's bug (seat 0, side player) acts before the enemy."""
    assert R.initiative_order([9, 9], [2, 0]) == [1, 0]
    assert R.initiative_order([8, 9], [0, 2]) == [1, 0]


def test_needle_adds_two_initiative_dice() -> None:
    st = duel(seat0={"weapon": "needle"})
    assert R.initiative_dice(st.bugs[0].p.grace, st.bugs[0].p.weapon) == (5, 0)


# -- Rule 10: turn start --------------------------------------------------------------------------
def test_turn_start_refill_with_imbalance() -> None:
    """Great nail attack investing 2: Stamina 3 -> 1 and Imbalance 1 (heavy weapon).
    Next turn start: refill to max 3 - Imbalance 1 = 2, then Imbalance 1 - 1 = 0."""
    st = duel(first=1)
    act(st, Kind.ATTACK, 2)
    assert (st.bugs[1].stamina, st.bugs[1].imbalance) == (1, 1)
    force(st, 0)  # the attack misses
    act(st, Kind.END_TURN)
    act(st, Kind.END_TURN)  # Nailbug passes
    assert st.active == 1 and st.phase == Phase.TURN
    assert (st.bugs[1].stamina, st.bugs[1].imbalance) == (2, 0)


def test_refill_never_lowers_stamina_decision() -> None:
    assert R.turn_start_refill(3, 3, 1, never_lowers=True) == (3, 0)
    assert R.turn_start_refill(3, 3, 1, never_lowers=False) == (2, 0)
    assert R.turn_start_refill(0, 3, 3, never_lowers=True) == (0, 2)


def test_clearing_imbalance_costs_stamina_one_for_one() -> None:
    st = duel(first=1)
    act(st, Kind.ATTACK, 1)
    force(st, 0)
    act(st, Kind.CLEAR_IMBALANCE)
    assert (st.bugs[1].stamina, st.bugs[1].imbalance) == (1, 0)


# -- Rule 11: attack and tax ----------------------------------------------------------------------
def test_tax_makes_the_third_attack_cost_invested_plus_two() -> None:
    """Stamina 7: invest 1 (cost 1) -> 6; invest 1 + tax 1 -> 4; the third costs 1 + 2 = 3 -> 1."""
    st = duel(seat0={"stamina": 7})
    act(st, Kind.ATTACK, 1)
    force(st, 0)
    assert st.bugs[0].stamina == 6
    act(st, Kind.ATTACK, 1)
    force(st, 0)
    assert st.bugs[0].stamina == 4
    legal = st.legal_actions()
    assert action_id(Kind.ATTACK, 2) in legal  # 2 + 2 = 4
    assert action_id(Kind.ATTACK, 3) not in legal  # 3 + 2 = 5 > 4
    act(st, Kind.ATTACK, 1)
    assert st.bugs[0].stamina == 1
    assert st.log[-1].data["cost"] == 3 and st.log[-1].data["tax"] == 2


def test_tax_resets_at_end_of_turn() -> None:
    assert R.attack_cost(1, 2, 1) == 3
    assert R.attack_cost(2, 0, 1) == 2


def test_attack_dice_might_plus_quality_plus_invested() -> None:
    """Nail, Might 3: invest 2 -> 3 + 1 + 2 = 6 dice, 1 reroll from the nail."""
    st = duel()
    act(st, Kind.ATTACK, 2)
    assert st.roll == (6, 1, 5)


def test_ranged_attack_uses_grace() -> None:
    st = duel(start=(0, 5), seat0={"weapon": "tack", "grace": 4})
    act(st, Kind.ATTACK, 1)
    assert st.roll[0] == 4 + 1 + 1


def test_heavy_weapon_gives_imbalance_each_attack() -> None:
    st = duel(first=1, seat1={"stamina": 7})
    act(st, Kind.ATTACK, 1)
    force(st, 0)
    act(st, Kind.ATTACK, 1)
    force(st, 0)
    assert st.bugs[1].imbalance == 2


# -- Rule 12: defense -----------------------------------------------------------------------------
def test_weapon_parry_two_dice_per_stamina_up_to_quality() -> None:
    """Nailbug parries a great nail: Might 3 + 2 x 1 invested = 5 dice, the nail's reroll; invest <= Quality 1."""
    st = duel(first=1)
    act(st, Kind.ATTACK, 1)
    force(st, 3)
    assert st.current_player() == 0 and st.decision_context() == "defense"
    legal = st.legal_actions()
    assert action_id(Kind.PARRY, 1) in legal and action_id(Kind.PARRY, 2) not in legal
    act(st, Kind.PARRY, 1)
    assert st.bugs[0].stamina == 3 - 2  # 1 not invested + 1 invested
    assert st.roll == (5, 1, 5)


def test_shield_parry_adds_quality_and_one_die_per_stamina() -> None:
    st = duel(first=1, seat0={"shield_quality": 1})
    act(st, Kind.ATTACK, 1)
    force(st, 3)
    act(st, Kind.PARRY, 2)
    assert st.roll == (3 + 1 + 2, 0, 5)


def test_parry_minus_one_die_against_ranged() -> None:
    st = duel(first=1, start=(0, 5), seat1={"weapon": "tack"})
    act(st, Kind.ATTACK, 1)
    force(st, 2)
    act(st, Kind.PARRY, 1)
    assert st.roll[0] == 3 + 2 - 1


@pytest.mark.parametrize(("weapon", "weight"), [("great_nail", 2), ("nail", 1), ("pin", 1)])
def test_dodge_dice_times_attacker_weapon_weight(weapon: str, weight: int) -> None:
    """Dodge invest 2: Grace 3 + 2 x weight (a Light pin counts as 1)."""
    st = duel(first=1, seat1={"weapon": weapon})
    act(st, Kind.ATTACK, 1)
    force(st, 2)
    act(st, Kind.DODGE, 2)
    assert st.roll[0] == 3 + 2 * weight


def test_dodge_move_gains_imbalance_and_defense_cancels_successes() -> None:
    st = duel(first=1)
    act(st, Kind.ATTACK, 1)
    force(st, 2)
    act(st, Kind.DODGE, 0)
    force(st, 2)  # 2 - 2 = 0: dodged
    assert st.bugs[0].heart == 7
    assert st.decision_context() == "dodge_move" and st.current_player() == 0
    act(st, Kind.STEP, 0, 1)  # west
    assert st.bugs[0].pos == (1, 0) and st.bugs[0].imbalance == 1
    assert st.phase == Phase.TURN and st.active == 1


def test_no_defense_decision_without_stamina_or_successes() -> None:
    st = duel(first=1)
    act(st, Kind.ATTACK, 1)
    force(st, 0)
    assert st.phase == Phase.TURN  # nothing to defend against
    st.bugs[0].stamina = 0
    act(st, Kind.ATTACK, 1)
    force(st, 1)
    assert st.phase == Phase.SOAK_ROLL  # a bug without Stamina cannot defend


# -- Rule 13: damage ------------------------------------------------------------------------------
def test_extra_damage_cap_is_max_of_base_and_invested() -> None:
    """Nail (base 3): invest 2, 6 net -> 3 + min(5, max(3, 2)) = 6; invest 5, 9 net -> 3 + min(8, max(3, 5)) = 8."""
    st = duel(seat0={"stamina": 7}, seat1={"heart": 30})
    act(st, Kind.ATTACK, 2)
    force(st, 6)
    act(st, Kind.NO_DEFENSE)
    force(st, 0)  # no soak
    assert st.bugs[1].heart == 30 - 6
    st = duel(seat0={"stamina": 7}, seat1={"heart": 30})
    act(st, Kind.ATTACK, 5)
    assert st.roll[0] == 9
    force(st, 9)
    act(st, Kind.NO_DEFENSE)
    force(st, 0)
    assert st.bugs[1].heart == 30 - 8


def test_extra_damage_values() -> None:
    assert R.potential_damage(6, 3, 1, "max_base_invested") == 6
    assert R.potential_damage(8, 3, 5, "max_base_invested") == 8
    assert R.potential_damage(8, 3, 1, "max_base_invested") == 6
    assert R.potential_damage(1, 3, 1, "max_base_invested") == 3
    assert R.potential_damage(0, 3, 1, "max_base_invested") == 0
    assert R.potential_damage(9, 3, 1, "none") == 11


def test_damage_reduction_never_below_one() -> None:
    assert R.reduce_damage(3, 5) == 1
    assert R.reduce_damage(6, 2) == 4


def test_shell_soak_can_reduce_a_hit_to_zero() -> None:
    """Nail hit with 1 net success: 3 damage; Shell 3 dice all succeed: 3 - 3 = 0 damage."""
    st = duel()
    act(st, Kind.ATTACK, 1)
    force(st, 1)
    act(st, Kind.NO_DEFENSE)
    assert st.roll == (3, 0, 5)  # Shell 3
    force(st, 3)
    assert st.bugs[1].heart == 7
    assert st.log[-1].data["damage"] == 0


# -- Rule 14: Heart 0 -----------------------------------------------------------------------------
def _hit_greatbug_to_heart_zero(dd_used: bool = False):  # type: ignore[no-untyped-def]
    """Nailbug (Stamina 7) hits Greatbug (Heart 3): the dodge (invest 1) leaves Greatbug Stamina 1."""
    st = duel(seat0={"stamina": 7}, seat1={"heart": 3})
    st.bugs[1].dd_used = dd_used
    act(st, Kind.ATTACK, 1)
    force(st, 3)
    act(st, Kind.DODGE, 1)
    force(st, 1)  # net 2 -> 3 + 1 = 4
    force(st, 1)  # soak 1 -> 3 damage: Heart 0
    assert st.bugs[1].heart == 0 and st.bugs[1].stamina == 1
    assert st.current_player() == 1 and st.decision_context() == "heart_zero"
    return st


def test_heart_zero_deaths_door_then_stamina_damage_then_death() -> None:
    st = _hit_greatbug_to_heart_zero()
    act(st, Kind.DEATHS_DOOR)
    assert st.bugs[1].at_dd and st.bugs[1].stamina == 3  # all Stamina restored
    assert st.phase == Phase.DODGE_MOVE
    act(st, Kind.STAY)
    act(st, Kind.ATTACK, 1)  # 1 + tax 1
    force(st, 2)
    act(st, Kind.NO_DEFENSE)
    force(st, 1)  # 3 + 1 = 4 potential, soak 1 -> 3 damage to Stamina
    assert st.current_player() == TERMINAL
    out = st.outcome()
    assert out is not None and out.winner == 0 and out.reason == EndReason.KNOCKOUT


def test_deaths_door_restores_stamina_only_once_per_rest() -> None:
    st = _hit_greatbug_to_heart_zero(dd_used=True)
    act(st, Kind.DEATHS_DOOR)
    assert st.bugs[1].at_dd and st.bugs[1].stamina == 1  # not restored the second time
    assert R.deaths_door_stamina(1, 3, used_before=False, once_per_rest=True) == 3
    assert R.deaths_door_stamina(1, 3, used_before=True, once_per_rest=True) == 1
    assert R.deaths_door_stamina(1, 3, used_before=True, once_per_rest=False) == 3


def test_unconscious_restores_stamina_even_after_deaths_door_and_cannot_defend() -> None:
    st = _hit_greatbug_to_heart_zero(dd_used=True)
    act(st, Kind.UNCONSCIOUS)
    assert st.bugs[1].unconscious and st.bugs[1].stamina == 3
    act(st, Kind.ATTACK, 1)
    force(st, 1)
    assert st.phase == Phase.SOAK_ROLL  # no defense decision for an unconscious bug


def test_deaths_door_stamina_does_not_refill_and_spending_to_zero_kills() -> None:
    st = _hit_greatbug_to_heart_zero()
    act(st, Kind.DEATHS_DOOR)
    act(st, Kind.STAY)
    act(st, Kind.END_TURN)
    assert st.active == 1
    act(st, Kind.ATTACK, 2)
    assert st.bugs[1].stamina == 1
    force(st, 0)
    act(st, Kind.END_TURN)
    act(st, Kind.END_TURN)
    assert st.active == 1 and st.bugs[1].stamina == 1  # no refill at Death's Door
    act(st, Kind.ATTACK, 1)  # spends the last Stamina
    assert st.is_terminal() and st.outcome().winner == 0  # type: ignore[union-attr]


def test_ordinary_bug_dies_at_heart_zero() -> None:
    st = duel(seat1={"heart": 3, "important": False})
    act(st, Kind.ATTACK, 1)
    force(st, 1)
    act(st, Kind.NO_DEFENSE)
    force(st, 0)
    assert st.is_terminal()


# -- Rule 15: movement ----------------------------------------------------------------------------
def test_retreat_two_cells_costs_stamina_speed_and_imbalance() -> None:
    st = duel()
    act(st, Kind.RETREAT, 0, 1)  # west
    b = st.bugs[0]
    assert (b.pos, b.stamina, b.speed_left, b.imbalance) == ((0, 0), 2, 4, 1)


def test_dash_two_cells_for_one_stamina_and_no_speed() -> None:
    st = duel(start=(1, 5))
    act(st, Kind.DASH, 0, 0)  # east
    b = st.bugs[0]
    assert (b.pos, b.stamina, b.speed_left, b.jumped) == ((3, 0), 2, 6, True)


def test_dash_can_leap_over_the_foe_on_a_track() -> None:
    st = duel(start=(2, 3))
    act(st, Kind.DASH, 0, 0)
    assert st.bugs[0].pos == (4, 0)


def test_provoked_attack_on_a_grid() -> None:
    """Maneuverability 2: entering a third cell next to the foe provokes it (once per round)."""
    st = duel(arena={"kind": "grid", "start": [[2, 2], [3, 2]]})
    for d in (2, 0, 0):  # north to (2,1), east to (3,1), east to (4,1): all next to (3,2)
        assert st.phase == Phase.TURN
        act(st, Kind.STEP, 0, d)
    assert st.current_player() == 1 and st.decision_context() == "provoked"
    act(st, Kind.PROVOKED, 1)
    assert st.bugs[1].stamina == 3 - 2
    assert st.roll[0] == 3 + 1 + 1  # great nail: Might + Quality + invested
    force(st, 0)
    assert st.phase == Phase.TURN and st.active == 0


def test_no_provocation_within_maneuverability() -> None:
    assert not R.provokes(2, 2)
    assert R.provokes(3, 2)


# -- Rule 16: grapple -----------------------------------------------------------------------------
def test_grapple_holds_then_penalises_and_escape() -> None:
    st = duel(seat0={"appendages": 3})
    act(st, Kind.GRAPPLE, 1)
    assert st.roll[0] == 3 + 1 + 1 + 2  # Might + unarmed Quality + invested + appendages (max 2)
    force(st, 2)
    act(st, Kind.NO_DEFENSE)
    assert st.bugs[1].grappled_by == 0
    act(st, Kind.END_TURN)
    legal = st.legal_actions()
    assert not any(action_id(Kind.STEP, 0, d) in legal for d in range(2))
    act(st, Kind.ATTACK, 1)
    assert st.roll[0] == 3 + 1 + 1 - 1  # grappled: -1 die
    force(st, 0)
    act(st, Kind.ESCAPE, 0)
    assert st.current_player() == 0 and st.decision_context() == "resist_escape"
    act(st, Kind.RESIST, 0)
    force(st, 2)  # escape: Might 3 dice
    assert st.roll[0] == 3 + 2  # resist: Might + appendage bonus
    force(st, 1)
    assert st.bugs[1].grappled_by == -1


# -- Rules 17-18: delayed damage and status effects ------------------------------------------------
def test_delayed_damage_at_turn_start_then_minus_one() -> None:
    st = duel(seat0={"weapon": "infected_nail"})
    act(st, Kind.ATTACK, 1)
    force(st, 1)
    act(st, Kind.NO_DEFENSE)
    force(st, 3)  # soaked to 0, but the hit applies delayed damage 2
    assert st.bugs[1].delayed == 2
    act(st, Kind.END_TURN)
    assert st.phase == Phase.TURN and st.active == 1  # natural damage: no soak roll
    assert st.bugs[1].heart == 7 - 2 and st.bugs[1].delayed == 1
    act(st, Kind.CLEAR_DELAYED)
    assert st.bugs[1].delayed == 0 and st.bugs[1].stamina == 2
    assert R.add_delayed(2, 3) == 3 and R.add_delayed(3, 2) == 3


def test_status_effect_pool_penalty_and_decay() -> None:
    st = duel(seat0={"weapon": "venom_pin"})
    act(st, Kind.ATTACK, 1)
    force(st, 1)
    act(st, Kind.NO_DEFENSE)
    force(st, 3)
    assert st.bugs[1].status == 2
    act(st, Kind.END_TURN)
    act(st, Kind.ATTACK, 1)
    assert st.roll[0] == 3 + 1 + 1 - 1  # weakened: -1 die
    force(st, 0)
    act(st, Kind.END_TURN)
    assert st.bugs[1].status == 1  # -1 at the end of its turn
    assert R.add_status(9, 4, 10) == 10


def test_fang_target_loses_a_die_on_its_next_roll() -> None:
    st = duel(seat0={"weapon": "fang"}, seat1={"heart": 20})
    act(st, Kind.ATTACK, 1)
    force(st, 1)
    act(st, Kind.NO_DEFENSE)
    force(st, 0)
    act(st, Kind.END_TURN)
    act(st, Kind.ATTACK, 1)
    assert st.roll[0] == 3 + 1 + 1 - 1
    force(st, 0)
    act(st, Kind.ATTACK, 1)
    assert st.roll[0] == 3 + 1 + 1  # only the next roll


# -- Rule 19: cover -------------------------------------------------------------------------------
def test_cover_removes_dice_and_full_cover_blocks() -> None:
    st = duel(arena={"kind": "grid", "start": [[2, 2], [3, 2]], "cover": [[3, 2, 2]]})
    act(st, Kind.ATTACK, 1)
    assert st.roll[0] == 5 - 2
    st2 = duel(arena={"kind": "grid", "start": [[2, 2], [3, 2]], "cover": [[3, 2, 4]]})
    assert action_id(Kind.ATTACK, 1) not in st2.legal_actions()
    assert R.cover_penalty(2, 3, 1) == 1


# -- Rule 20: focus -------------------------------------------------------------------------------
def test_soul_focus_heals_at_next_turn_start() -> None:
    """Focus 3 Soul: 1 automatic success + 2 rolled dice, Insight 3 -> 1 reroll; 1 success heals 2."""
    st = duel(seat0={"heart": 7})
    st.bugs[0].heart = 3
    act(st, Kind.FOCUS, 3)
    assert st.active == 1 and st.bugs[0].soul == 0
    act(st, Kind.END_TURN)
    assert st.current_player() == CHANCE and st.roll == (2, 1, 5)
    force(st, 1)
    assert st.bugs[0].heart == 5


def test_spending_stamina_cancels_focus() -> None:
    st = duel()
    st.bugs[0].heart = 3
    act(st, Kind.FOCUS, 3)
    act(st, Kind.ATTACK, 1)
    force(st, 2)
    act(st, Kind.PARRY, 0)
    assert st.bugs[0].focus_pending == 0 and st.bugs[0].soul == 0


# -- Rule 21: pogo --------------------------------------------------------------------------------
def test_pogo_after_a_jump_bounces_on_hit_and_lands_off_balance_on_miss() -> None:
    """Issue 15: the jump passes over the target (through its cell, which provokes it), see test_movement.py."""
    st = duel(start=(2, 3), seat0={"stamina": 7})
    assert action_id(Kind.POGO, 1) not in st.legal_actions()
    act(st, Kind.DASH, 0, 0)  # over the foe at 3, to x=4
    act(st, Kind.DECLINE)  # the foe lets its provoked attack go
    act(st, Kind.POGO, 1)
    force(st, 1)
    act(st, Kind.NO_DEFENSE)
    force(st, 0)
    assert st.bugs[0].free_move == 2
    act(st, Kind.DASH, 0, 1)  # back over the foe (its provoked attack is used for this round)
    act(st, Kind.POGO, 1)  # 1 + tax 1
    force(st, 0)
    assert st.bugs[0].imbalance == 1


# -- Rule 22: the duel ends -----------------------------------------------------------------------
def test_time_limit() -> None:
    st = duel(duel={"max_rounds": 1})
    act(st, Kind.END_TURN)
    act(st, Kind.END_TURN)
    out = st.outcome()
    assert out is not None and out.reason == EndReason.TIME_LIMIT and out.returns == (0.0, 0.0)


def test_deaths_door_full_sequence_second_time_gives_no_stamina() -> None:
    """Heart 0 -> Death's Door (Stamina 1 -> 3); a focus heals 2 Heart and leaves Death's Door;
    Heart 0 again -> Death's Door gives nothing (Stamina stays 1): once per Rest."""
    st = _hit_greatbug_to_heart_zero()
    act(st, Kind.DEATHS_DOOR)
    great = st.bugs[1]
    assert great.stamina == 3
    act(st, Kind.STAY)
    act(st, Kind.END_TURN)
    act(st, Kind.FOCUS, 3)  # Greatbug focuses at Death's Door
    act(st, Kind.END_TURN)  # Nailbug waits
    force(st, 1)  # focus: 1 rolled success + 1 automatic = 2 Heart
    assert great.heart == 2 and not great.at_dd
    act(st, Kind.END_TURN)
    act(st, Kind.ATTACK, 1)
    force(st, 3)
    act(st, Kind.DODGE, 1)
    assert great.stamina == 1
    force(st, 1)  # net 2: 4 potential
    force(st, 2)  # soak 2: 2 damage -> Heart 0
    assert great.heart == 0 and st.decision_context() == "heart_zero"
    act(st, Kind.DEATHS_DOOR)
    assert great.at_dd and great.stamina == 1


def test_defense_before_the_attack_roll_by_config() -> None:
    st = duel(defense={"after_attack_roll": False})
    act(st, Kind.ATTACK, 1)
    assert st.decision_context() == "defense" and st.current_player() == 1
    act(st, Kind.PARRY, 1)
    assert st.phase == Phase.ATTACK_ROLL
    force(st, 2, 2)
    assert st.bugs[1].heart == 7  # fully parried


def test_modifiers_as_successes_by_config() -> None:
    st = duel(seat0={"weapon": "venom_pin"}, dice={"modifiers_are_dice": False})
    act(st, Kind.ATTACK, 1)
    force(st, 1)
    act(st, Kind.NO_DEFENSE)
    force(st, 3)
    act(st, Kind.END_TURN)
    act(st, Kind.ATTACK, 1)
    assert st.roll[0] == 5  # the dice stay
    force(st, 1)  # 1 success - 1 = 0: a miss
    assert st.phase == Phase.TURN and st.bugs[0].heart == 7


def test_grappled_bug_cannot_dodge_when_configured() -> None:
    st = duel(grapple={"blocks_dodge": True})
    act(st, Kind.GRAPPLE, 1)
    force(st, 2)
    act(st, Kind.NO_DEFENSE)
    act(st, Kind.END_TURN)
    act(st, Kind.END_TURN)
    act(st, Kind.ATTACK, 1)
    force(st, 1)
    legal = st.legal_actions()
    assert action_id(Kind.DODGE, 0) not in legal and action_id(Kind.PARRY, 0) in legal

"""Golden games with forced dice, read against the rules file and the seed's own examples."""

from __future__ import annotations

import pytest

from envs.blackbird.actions import DuelPhase as DPhase
from envs.blackbird.actions import Maneuver, SessionAct, duel_spend, session_spend
from envs.blackbird.actions import SessionPhase as Phase
from envs.blackbird.config import AdvancementRules, CombatRules
from envs.blackbird.duel import DuelState
from envs.blackbird.rules import tag_cost, trait_cost, wound_for_margin
from envs.blackbird.session import SessionState
from envs.core.game import EndReason
from tests.envs.blackbird.conftest import override

BRAWL, LOCKED_DOOR, SNEAK, TALK, REPAIR, HAUL, RESCUE, ESCAPE = range(8)
MERCENARY, ZEN_MONK, SCOUNDREL = (SessionAct.TRAIT_0 + i for i in range(3))


def session_at(cfg, obstacle: int) -> SessionState:  # type: ignore[no-untyped-def]
    s = SessionState(cfg)
    s.apply_chance(obstacle)
    return s


# -- Rule 2: the seed's clarification No. 1 -----------------------------------------------------------
def test_mercenary_punch_is_four_dice_and_zen_monk_three(cfg) -> None:  # type: ignore[no-untyped-def]
    """Mercenary (fist-fighting, strongman) punching: 1 + 1 + 2 = 4 dice; Zen monk (kung fu): 1 + 1 + 1 = 3."""
    s = session_at(cfg, BRAWL)
    assert s.pool_for(MERCENARY - SessionAct.TRAIT_0).total == 4
    assert s.pool_for(ZEN_MONK - SessionAct.TRAIT_0).total == 3
    assert s.pool_for(None).total == 1  # no trait: the base die only
    s.apply_action(MERCENARY)
    s.apply_action(SessionAct.DECLINE_HELP)
    s.apply_action(session_spend(0))
    assert s.breakdown.total == 4 and (s.breakdown.trait, s.breakdown.tags) == (1, 2)


# -- Rule 5/6: pool bookkeeping ------------------------------------------------------------------------
def test_pass_loses_the_pool_dice_used(cfg) -> None:  # type: ignore[no-untyped-def]
    s = session_at(cfg, BRAWL)
    s.apply_action(MERCENARY)
    s.apply_action(SessionAct.DECLINE_HELP)
    s.apply_action(session_spend(3))  # 4 + 3 = 7 dice
    s.force_faces([6, 5, 4, 3, 2, 1, 1])  # 3 successes vs difficulty 3: pass
    assert s.pool == 10 - 3
    assert s.won == 1.0 and s.phase == Phase.DRAW


def test_fail_keeps_the_pool_dice_and_gains_one(cfg) -> None:  # type: ignore[no-untyped-def]
    s = session_at(cfg, BRAWL)
    s.pool = 7
    s.apply_action(MERCENARY)
    s.apply_action(SessionAct.DECLINE_HELP)
    s.apply_action(session_spend(2))
    s.force_faces([6, 4, 3, 2, 1, 1])  # 2 successes vs 3: fail
    assert s.pool == 7 + 1
    assert s.conditions == ("wounded",) and s.phase == Phase.RETRY


def test_fail_at_the_cap_gains_nothing(cfg) -> None:  # type: ignore[no-untyped-def]
    s = session_at(cfg, BRAWL)
    s.apply_action(MERCENARY)
    s.apply_action(SessionAct.DECLINE_HELP)
    s.apply_action(session_spend(0))
    s.force_faces([1, 1, 1, 1])
    assert s.pool == 10


def test_helper_die_returns_on_failure_and_is_lost_on_pass(cfg) -> None:  # type: ignore[no-untyped-def]
    s = session_at(cfg, BRAWL)
    s.apply_action(MERCENARY)
    s.apply_action(SessionAct.ACCEPT_HELP)
    s.apply_action(session_spend(0))
    assert s.breakdown.help == 1 and s.breakdown.total == 5
    s.force_faces([1, 2, 3, 1, 2])  # fail: the helper gets the die back
    assert s.helper_pool == 3
    s.apply_action(SessionAct.RETRY)
    s.apply_action(MERCENARY)
    s.apply_action(SessionAct.ACCEPT_HELP)
    s.apply_action(session_spend(0))
    s.force_faces([6, 6, 6, 6, 6])  # 5 successes vs 3 + 1 (wounded): pass, the die is lost
    assert s.helper_pool == 2


def test_session_end_resets_the_pool_to_seven(cfg) -> None:  # type: ignore[no-untyped-def]
    c = override(cfg, session__obstacles_per_session=1)
    s = session_at(c, LOCKED_DOOR)
    s.apply_action(SCOUNDREL)
    s.apply_action(SessionAct.DECLINE_HELP)
    s.apply_action(session_spend(1))
    s.force_faces([5, 5, 1, 1])  # 2 vs 2: pass, pool 9
    assert s.pool == 7 and s.session_no == 1 and s.conditions == ()


# -- Rule 9: advancement tables ------------------------------------------------------------------------
def test_advancement_cost_tables() -> None:
    adv = AdvancementRules()
    assert [tag_cost(level, adv) for level in (1, 2, 3, 4)] == [1, 2, 4, 8]
    assert [trait_cost(level, adv) for level in (1, 2, 3, 4)] == [5, 10, 20, 40]


# -- Rule 10: the zombie-hunter perk -------------------------------------------------------------------
def test_perk_when_sixes_reach_the_difficulty(cfg) -> None:  # type: ignore[no-untyped-def]
    """Difficulty 3, 5d6 with three sixes: perk-eligible; the perk adds a die to the next similar roll."""
    s = session_at(cfg, BRAWL)
    s.apply_action(MERCENARY)
    s.apply_action(SessionAct.DECLINE_HELP)
    s.apply_action(session_spend(1))  # 5 dice
    s.force_faces([6, 6, 6, 2, 1])
    assert s.char.perks == {"brawl": 1}
    s.apply_chance(BRAWL)
    assert s.pool_for(MERCENARY - SessionAct.TRAIT_0).total == 5


def test_no_perk_with_fewer_sixes(cfg) -> None:  # type: ignore[no-untyped-def]
    s = session_at(cfg, BRAWL)
    s.apply_action(MERCENARY)
    s.apply_action(SessionAct.DECLINE_HELP)
    s.apply_action(session_spend(1))
    s.force_faces([6, 6, 5, 4, 1])  # 4 successes, 2 sixes < 3
    assert s.char.perks == {}


# -- Rule 8: skill from the field ----------------------------------------------------------------------
def test_repairing_the_car_with_pool_dice_earns_mechanic(cfg) -> None:  # type: ignore[no-untyped-def]
    """The seed's example: no mechanic tag, pool dice pass difficulty 3 → the tag "mechanic"."""
    s = session_at(cfg, REPAIR)
    assert s.legal_actions() == [SessionAct.NO_TRAIT]
    s.apply_action(SessionAct.NO_TRAIT)
    s.apply_action(SessionAct.DECLINE_HELP)
    s.apply_action(session_spend(4))
    s.force_faces([5, 5, 4, 1, 1])
    assert s.char.tags[0]["mechanic"] == 1  # joins the first trait (no trait was named)
    s.apply_chance(REPAIR)
    assert s.pool_for(0).total == 3  # Mercenary now applies through "mechanic": base + trait + tag


# -- Rule 11: contested roll and the roll-off --------------------------------------------------------------
def test_tie_goes_to_a_d6_roll_off_until_one_is_higher(cfg) -> None:  # type: ignore[no-untyped-def]
    s = session_at(cfg, SNEAK)
    s.apply_action(SCOUNDREL)
    s.apply_action(SessionAct.DECLINE_HELP)
    s.apply_action(session_spend(0))  # 3 dice
    s.force_faces([5, 4, 1])
    assert s.phase == Phase.OPPOSE
    s.force_faces([6, 4, 2])  # the guard: 2 successes too
    assert s.phase == Phase.ROLL_OFF
    s.force_faces([3, 3])
    assert s.phase == Phase.ROLL_OFF  # tied again
    s.force_faces([5, 2])
    assert s.phase == Phase.DRAW and s.won == 1.0


def test_losing_the_roll_off_is_a_failure(cfg) -> None:  # type: ignore[no-untyped-def]
    s = session_at(cfg, SNEAK)
    s.apply_action(SCOUNDREL)
    s.apply_action(SessionAct.DECLINE_HELP)
    s.apply_action(session_spend(0))
    s.force_faces([5, 1, 1])
    s.force_faces([4, 1, 1])
    s.force_faces([1, 6])
    assert s.won == 0.0 and s.conditions == ("pursued",) and s.pool == 10


# -- Rule 12: joint action ----------------------------------------------------------------------------
def test_joint_action_sums_the_successes(cfg) -> None:  # type: ignore[no-untyped-def]
    s = session_at(cfg, HAUL)
    s.apply_action(MERCENARY)  # no help phase: the helper pulls too
    s.apply_action(session_spend(0))  # 1 + 1 + 1 (strongman) = 3 dice
    s.force_faces([6, 5, 4])
    assert s.phase == Phase.JOINT
    s.force_faces([4, 5])  # helper's two dice: 2 successes → 5 vs difficulty 5
    assert s.won == 1.0


# -- Rule 16: the damage table -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("margin", "name", "hp", "penalty"),
    [(1, "light", 1, 0), (2, "medium", 2, 1), (3, "heavy", 4, 2), (4, "critical", 6, 3), (7, "critical", 6, 3)],
)
def test_damage_table_rows(margin: int, name: str, hp: int, penalty: int) -> None:
    row = wound_for_margin(margin, CombatRules())
    assert row is not None and (row.name, row.hp_loss, row.penalty) == (name, hp, penalty)
    assert wound_for_margin(0, CombatRules()) is None


def engaged(cfg) -> DuelState:  # type: ignore[no-untyped-def]
    return DuelState(override(cfg, duel__start_distance=1))


def test_duel_attack_margin_two_is_a_medium_wound(cfg) -> None:  # type: ignore[no-untyped-def]
    d = engaged(cfg)
    d.apply_action(Maneuver.ATTACK)
    d.apply_action(duel_spend(2))  # Kale: 1 base + 1 trait + 2 tags + 1 flag + 2 pool = 7
    d.apply_action(duel_spend(1))  # Snargle: 1 base + 1 trait + 2 tags + 1 pool = 5
    assert d.ex is not None and d.ex.att_dice.total == 7 and d.ex.def_dice.total == 5
    d.force_faces([6, 5, 4, 2, 1, 1, 3])  # 3 successes
    d.force_faces([4, 1, 1, 2, 3])  # 1 success
    assert d.f[1].hp == 4 and d.penalty(1) == 1
    assert d.f[0].pool == 8  # attacker hit: pool dice used are lost
    assert d.f[1].pool == 10  # defender failed: kept, +1, capped at 10
    assert d.current_player() == 1
    # Snargle strikes back at -1 success
    d.apply_action(Maneuver.ATTACK)
    d.apply_action(duel_spend(0))
    d.apply_action(duel_spend(0))
    d.force_faces([6, 5, 1, 1])  # 2 successes, -1 for the medium wound
    d.force_faces([1, 1, 1])  # Kale defends with 3 dice: 0
    assert d.f[0].hp == 6 - 1  # margin 1: light


def test_called_shot_with_margin_one_is_a_light_wound(cfg) -> None:  # type: ignore[no-untyped-def]
    """Issue 15 item 11: the rules give a called shot only its cost (+1 defender die), not a harder wound."""
    d = engaged(cfg)
    d.apply_action(Maneuver.CALLED_SHOT)
    d.apply_action(duel_spend(0))  # Kale: 1 base + 1 trait + 2 tags + 1 flag = 5 dice
    d.apply_action(duel_spend(0))  # Snargle: 1 base + 1 trait + 2 tags + 1 (called shot) = 5 dice
    assert d.ex is not None and d.ex.att_dice.total == 5 and d.ex.def_dice.total == 5
    d.force_faces([6, 5, 1, 1, 1])  # 2 successes
    d.force_faces([4, 1, 1, 1, 1])  # 1 success: margin 1
    assert d.f[1].hp == 6 - 1 and d.penalty(1) == 0  # light: -1 HP, no penalty
    assert d.log[-1].data["wound"] == "light" and d.log[-1].data["margin"] == 1


def test_critical_from_full_hp_lands_on_zero_without_a_check(cfg) -> None:  # type: ignore[no-untyped-def]
    d = engaged(cfg)
    d.apply_action(Maneuver.ATTACK)
    d.apply_action(duel_spend(0))
    d.apply_action(duel_spend(0))
    d.force_faces([6, 6, 6, 6, 5])
    d.force_faces([1, 1, 1, 1])
    assert d.f[1].hp == 0 and d.phase == DPhase.MANEUVER and not d.is_terminal()


def test_critical_from_full_hp_checks_at_zero_with_the_key(cfg) -> None:  # type: ignore[no-untyped-def]
    """Issue 15 item 13: ``combat.check_at_zero_hp`` reads "at zero" as below zero (off as written: see above)."""
    d = engaged(override(cfg, combat__check_at_zero_hp=True))
    d.apply_action(Maneuver.ATTACK)
    d.apply_action(duel_spend(0))
    d.apply_action(duel_spend(0))
    d.force_faces([6, 6, 6, 6, 5])
    d.force_faces([1, 1, 1, 1])  # margin 5: critical, -6 HP → 0
    assert d.f[1].hp == 0 and d.phase == DPhase.CHECK_SPEND and d.current_player() == 1


def all_out_then_struck(cfg, kale_pool: int):  # type: ignore[no-untyped-def]
    """Kale attacks all-out and misses; Snargle strikes back at a Kale who cannot defend, and hits by 1."""
    d = engaged(cfg)
    d.apply_action(Maneuver.ALL_OUT_ATTACK)
    d.apply_action(duel_spend(0))
    d.apply_action(duel_spend(0))
    d.force_faces([1] * 6)
    d.force_faces([1] * 4)
    d.f[0].pool = kale_pool
    d.apply_action(Maneuver.ATTACK)
    d.apply_action(duel_spend(0))  # no defence decision for Kale
    d.force_faces([4, 1, 1, 1])  # 1 success vs 0
    assert d.f[0].hp == 5
    return d


def test_rule18_a_defender_who_could_not_defend_settles_nothing_as_written(cfg) -> None:  # type: ignore[no-untyped-def]
    assert all_out_then_struck(cfg, 5).f[0].pool == 5  # no roll, no Rule 5


def test_rule18_key_an_undefended_hit_counts_as_a_failed_roll(cfg) -> None:  # type: ignore[no-untyped-def]
    """``combat.undefended_hit_is_failure``: hit without a defence roll = a failed roll, Rule 5 gives +1."""
    assert all_out_then_struck(override(cfg, combat__undefended_hit_is_failure=True), 5).f[0].pool == 6


def test_rule18_key_pool_dice_spent_in_combat_are_lost_either_way(cfg) -> None:  # type: ignore[no-untyped-def]
    """``combat.pool_settlement = "spent"``: no pass/fail in combat, the pool dice used are gone, no bonus."""
    d = engaged(override(cfg, combat__pool_settlement="spent"))
    d.f[0].pool = d.f[1].pool = 6
    d.apply_action(Maneuver.ATTACK)
    d.apply_action(duel_spend(2))
    d.apply_action(duel_spend(1))
    d.force_faces([6, 5, 4, 2, 1, 1, 3])  # 3 successes
    d.force_faces([4, 1, 1, 2, 3])  # 1: a hit by 2
    assert (d.f[0].pool, d.f[1].pool) == (4, 5)  # each side: "each_side" would give (4, 7)
    d = engaged(cfg)
    d.f[0].pool = d.f[1].pool = 6
    d.apply_action(Maneuver.ATTACK)
    d.apply_action(duel_spend(2))
    d.apply_action(duel_spend(1))
    d.force_faces([6, 5, 4, 2, 1, 1, 3])
    d.force_faces([4, 1, 1, 2, 3])
    assert (d.f[0].pool, d.f[1].pool) == (4, 7)  # as written: attacker passed (lost 2), defender failed (+1)


def test_below_zero_check_fails_and_the_fighter_passes_out(cfg) -> None:  # type: ignore[no-untyped-def]
    d = engaged(cfg)
    d.f[1].hp = 1
    d.apply_action(Maneuver.ATTACK)
    d.apply_action(duel_spend(0))
    d.apply_action(duel_spend(0))
    d.force_faces([6, 5, 4, 1, 1])
    d.force_faces([4, 1, 1, 1])  # margin 2: -2 → -1 HP
    assert d.phase == DPhase.CHECK_SPEND and d.current_player() == 1
    d.apply_action(duel_spend(0))  # stay up: 1 base + Ascetic + meditation + flag = 4 dice vs 4
    d.force_faces([6, 5, 4, 1])
    out = d.outcome()
    assert out is not None and out.winner == 0 and out.reason == EndReason.KNOCKOUT
    assert d.returns() == [1.0, -1.0]


def test_minus_four_is_death(cfg) -> None:  # type: ignore[no-untyped-def]
    d = engaged(cfg)
    d.f[1].hp = 0
    d.apply_action(Maneuver.ATTACK)
    d.apply_action(duel_spend(0))
    d.apply_action(duel_spend(0))
    d.force_faces([6, 5, 4, 1, 1])
    d.force_faces([1, 1, 1, 1])  # margin 3: heavy, -4 → -4 HP: dead, no check
    out = d.outcome()
    assert out is not None and out.winner == 0 and "died" in out.detail

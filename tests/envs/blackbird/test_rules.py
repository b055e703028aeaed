"""One or more unit tests per numbered rule of docs/rules/blackbird.md."""

from __future__ import annotations

import pytest

from envs.blackbird import RULESET
from envs.blackbird.actions import DuelPhase as DPhase
from envs.blackbird.actions import Maneuver, SessionAct, duel_spend, session_spend
from envs.blackbird.actions import SessionPhase as Phase
from envs.blackbird.config import AdvancementRules, CombatRules, PoolRules
from envs.blackbird.dice import Roll, read_faces
from envs.blackbird.duel import DuelState
from envs.blackbird.rules import (
    Character,
    Standing,
    add_aim,
    attack_hits,
    award_perk,
    build_pool,
    combat_pass,
    contest_winner,
    effective_difficulty,
    forbidden_tags,
    item_dice,
    joint_successes,
    learn_from_field,
    net_successes,
    passes,
    perk_eligible,
    reset_pool_at_session_end,
    settle_help,
    settle_pool,
    spend_experience,
    standing_after,
    starting_pool,
    wound_penalty,
)
from envs.blackbird.session import SessionState
from envs.core.config import load_config
from envs.core.errors import ConfigError
from tests.envs.blackbird.conftest import override


def merc_monk() -> Character:
    return Character(
        "Test", ["Mercenary", "Zen monk"], [1, 1], [{"fist-fighting": 1, "strongman": 1}, {"kung fu": 1}], ("Loyal",)
    )


PUNCH = (["Mercenary", "Zen monk"], ["fist-fighting", "strongman", "kung fu"])


# Rule 1
def test_rule1_character_limits_are_enforced(cfg, tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "two_traits.toml"
    bad.write_text(
        '[session.character]\nname = "X"\n[[session.character.traits]]\nname = "A"\n'
        'tags = {a = 5}\n[[session.character.traits]]\nname = "B"\ntags = {b = 5}\n'
    )
    with pytest.raises(ConfigError, match="session.character.traits"):
        load_config(RULESET, bad)
    bad.write_text(
        '[session.character]\nname = "X"\n'
        + "".join(
            f'[[session.character.traits]]\nname = "T{i}"\ntags = {{t{i} = 1, u{i} = 1, v{i} = 1}}\n' for i in range(3)
        )
    )
    with pytest.raises(ConfigError, match="exactly 10 points"):
        load_config(RULESET, bad)
    bad.write_text('[[session.obstacles]]\nname = "pit"\ncondition_on_failure = "cursed"\n')
    with pytest.raises(ConfigError, match="unknown condition 'cursed'"):
        load_config(RULESET, bad)


def test_rule1_duel_fighters_are_made_by_the_creation_rules(cfg) -> None:  # type: ignore[no-untyped-def]
    """Issue 15 item 12: the duel's fighters have 10 creation points (tags) and a positive relationship flag."""
    d = DuelState(cfg)
    for fighter, sheet in zip(d.f, cfg.duel.fighters, strict=True):
        assert sum(len(tags) for tags in fighter.char.tags) == 10
        assert 3 <= len(fighter.char.traits) <= 7 and len(fighter.char.flags) <= 3
        assert sheet.relationship and sheet.relationship in fighter.char.flags
    assert cfg.session.character.relationship in cfg.session.character.flags


def test_rule1_duel_fighters_are_validated_like_the_session_sheet(tmp_path) -> None:  # type: ignore[no-untyped-def]
    def fighter(name: str, tags: int, flags: str, relationship: str) -> str:
        per = [tags // 3 + (1 if i < tags % 3 else 0) for i in range(3)]
        traits = "".join(
            f'[[duel.fighters.traits]]\nname = "{name}{i}"\ntags = {{{", ".join(f"t{i}_{j} = 1" for j in range(n))}}}\n'
            for i, n in enumerate(per)
        )
        return f'[[duel.fighters]]\nname = "{name}"\nflags = [{flags}]\nrelationship = "{relationship}"\n' + traits

    ok = fighter("A", 10, '"Loyal to B"', "Loyal to B") + fighter("B", 10, '"Loyal to A", "Brave"', "Loyal to A")
    path = tmp_path / "fighters.toml"
    path.write_text(ok)
    assert len(load_config(RULESET, path).duel.fighters) == 2  # type: ignore[attr-defined]
    path.write_text(fighter("A", 4, '"Loyal to B"', "Loyal to B") + fighter("B", 10, '"Loyal to A"', "Loyal to A"))
    with pytest.raises(ConfigError, match="duel.fighters.*exactly 10 points"):
        load_config(RULESET, path)
    path.write_text(fighter("A", 10, '"Brave"', "") + fighter("B", 10, '"Loyal to A"', "Loyal to A"))
    with pytest.raises(ConfigError, match="duel.fighters.*positive relationship"):
        load_config(RULESET, path)
    path.write_text(fighter("A", 10, '"Brave"', "Loyal to B") + fighter("B", 10, '"Loyal to A"', "Loyal to A"))
    with pytest.raises(ConfigError, match="duel.fighters.*positive relationship"):
        load_config(RULESET, path)


# Rule 2
def test_rule2_only_one_traits_tags_count_and_flag_once(cfg) -> None:  # type: ignore[no-untyped-def]
    ch = merc_monk()
    p = build_pool(cfg, ch, 0, *PUNCH, on_flag=True, kind="punch")
    assert (p.base, p.trait, p.tags, p.flag) == (1, 1, 2, 1)
    ch.flags = ("a", "b", "c")
    assert build_pool(cfg, ch, 0, *PUNCH, on_flag=True, kind="punch").flag == 1
    ch.perks["punch"] = 1
    assert build_pool(cfg, ch, 1, *PUNCH, on_flag=False, kind="punch").total == 1 + 1 + 1 + 1
    assert build_pool(cfg, ch, 0, *PUNCH, False, "punch", forbidden={"strongman"}).tags == 1
    assert (
        build_pool(cfg, ch, 0, *PUNCH, False, "x", pool_dice=3, help_dice=1, maneuver_dice=2, base_die=False).total
        == 0 + 1 + 2 + 3 + 1 + 2
    )


def test_rule2_an_irrelevant_trait_adds_nothing(cfg) -> None:  # type: ignore[no-untyped-def]
    ch = merc_monk()
    assert build_pool(cfg, ch, 1, ["Mercenary"], ["strongman"], False, "lift").total == 1


# Rule 3
def test_rule3_successes_and_wound_penalty() -> None:
    assert read_faces([4, 5, 6, 3, 1], 4) == Roll(3, 1)
    assert read_faces([4, 5, 6, 3, 1], 5) == Roll(2, 1)
    assert net_successes(Roll(3, 1), 2) == 1
    assert net_successes(Roll(1, 0), 3) == 0


# Rule 4 / 7
def test_rule4_difficulty_conditions_and_no_pool_play(cfg) -> None:  # type: ignore[no-untyped-def]
    assert effective_difficulty(cfg, 3, ()) == 3
    assert effective_difficulty(cfg, 3, ("wounded", "tired")) == 5
    assert effective_difficulty(override(cfg, pool__enabled=False), 3, ()) == 2
    assert passes(3, 3) and not passes(2, 3)


def test_rule4_no_pool_play_offers_only_zero_spend(cfg) -> None:  # type: ignore[no-untyped-def]
    s = SessionState(override(cfg, pool__enabled=False))
    s.apply_chance(0)
    s.apply_action(SessionAct.TRAIT_0)  # no help phase: help is a pool die
    assert s.legal_actions() == [session_spend(0)] and s.difficulty() == 2


def test_rule7_failure_condition_raises_later_difficulty_and_forbids_tags(cfg) -> None:  # type: ignore[no-untyped-def]
    s = SessionState(cfg)
    s.apply_chance(5)  # haul the cargo: fail → tired
    s.apply_action(SessionAct.TRAIT_0)
    s.apply_action(session_spend(0))
    s.force_faces([1, 1, 1])
    s.force_faces([1, 1])
    assert s.conditions == ("tired",)
    assert forbidden_tags(cfg.conditions, s.conditions) == {"strongman"}
    assert s.pool_for(0).tags == 0  # strongman is forbidden while tired
    assert s.difficulty() == 6


# Rule 5
def test_rule5_pool_settlement() -> None:
    r = PoolRules()
    assert settle_pool(10, 4, True, r) == 6
    assert settle_pool(6, 4, False, r) == 7
    assert settle_pool(10, 0, False, r) == 10
    r2 = PoolRules(zero_spend_failure_bonus=2)
    assert settle_pool(5, 0, False, r2) == 8
    assert settle_pool(5, 1, False, r2) == 6
    assert starting_pool(PoolRules(cap=8)) == 8 and reset_pool_at_session_end(PoolRules(cap=5)) == 5
    assert starting_pool(PoolRules(enabled=False)) == 0


# Rule 6
def test_rule6_help_settlement() -> None:
    assert settle_help(7, 1, True, True) == 6
    assert settle_help(7, 1, False, True) == 7
    assert settle_help(7, 1, False, False) == 6


# Rule 8
def test_rule8_no_tag_when_trait_dice_were_used(cfg) -> None:  # type: ignore[no-untyped-def]
    ch = merc_monk()
    pool = build_pool(cfg, ch, 0, ["Mercenary"], ["mechanic", "fist-fighting"], False, "fix")
    assert learn_from_field(ch, pool, True, ["Mercenary"], ["mechanic"]) == ""
    bare = build_pool(cfg, ch, None, [], ["mechanic"], False, "fix", pool_dice=3)
    assert learn_from_field(ch, bare, False, [], ["mechanic"]) == ""
    assert learn_from_field(ch, bare, True, [], ["mechanic"]) == "mechanic"


# Rule 9
def test_rule9_level_dice_and_cheapest_first_advancement() -> None:
    adv = AdvancementRules()
    assert item_dice(3, 1, adv) == 3
    assert item_dice(3, 1, AdvancementRules(level_adds_dice=False)) == 1
    ch = merc_monk()
    ch.xp = 5
    bought = spend_experience(ch, adv)
    assert bought == ["fist-fighting 2", "strongman 2"] and ch.xp == 1  # 2 + 2, the next (2) unaffordable


# Rule 10
def test_rule10_perk_eligibility_and_limit(cfg) -> None:  # type: ignore[no-untyped-def]
    assert perk_eligible(Roll(3, 3), 3) and not perk_eligible(Roll(5, 2), 3)
    ch = merc_monk()
    assert award_perk(ch, "zombies", cfg) and not award_perk(ch, "zombies", cfg)
    assert not award_perk(ch, "ghouls", override(cfg, perk__award=False))


# Rule 11 / 12
def test_rule11_rule12_contests_and_joint_actions() -> None:
    assert contest_winner(3, 2) == 0 and contest_winner(1, 2) == 1 and contest_winner(2, 2) is None
    assert joint_successes([2, 1, 3]) == 6


def test_rule11_tie_without_roll_off_fails(cfg) -> None:  # type: ignore[no-untyped-def]
    s = SessionState(override(cfg, contest__rolloff_on_tie=False))
    s.apply_chance(2)
    s.apply_action(SessionAct.TRAIT_0 + 2)
    s.apply_action(SessionAct.DECLINE_HELP)
    s.apply_action(session_spend(0))
    s.force_faces([5, 1, 1])
    s.force_faces([5, 1, 1])
    assert s.phase == Phase.RETRY and s.won == 0


# Rule 13
def test_rule13_tie_misses_and_called_shot(cfg) -> None:  # type: ignore[no-untyped-def]
    assert not attack_hits(2, 2) and attack_hits(3, 2)
    for bonus, hp, penalty in ((0, 4, 1), (1, 2, 2)):  # as written: margin 2 = medium; the key's variant: heavy
        d = DuelState(override(cfg, duel__start_distance=1, combat__called_shot_margin_bonus=bonus))
        d.apply_action(Maneuver.CALLED_SHOT)
        d.apply_action(duel_spend(0))
        d.apply_action(duel_spend(0))
        assert d.ex is not None and d.ex.def_dice.maneuver == 1 and d.ex.def_dice.total == 5
        d.force_faces([6, 5, 4, 1, 1])
        d.force_faces([5, 1, 1, 1, 1])  # margin 2 (+ bonus)
        assert (d.f[1].hp, d.penalty(1)) == (hp, penalty)


# Rule 14
def test_rule14_aim_stores_up_to_three_and_is_spent(cfg) -> None:  # type: ignore[no-untyped-def]
    c = CombatRules()
    assert [add_aim(a, c) for a in (0, 1, 2, 3)] == [1, 2, 3, 3]
    d = DuelState(override(cfg, duel__start_distance=1))
    for _ in range(4):  # Kale aims twice, Snargle aims twice
        d.apply_action(Maneuver.AIM)
    d.apply_action(Maneuver.ATTACK)
    d.apply_action(duel_spend(0))
    assert d.ex is not None and d.ex.att_dice.maneuver == 2 and d.f[0].aim == 0


def test_rule14_all_out_attack_leaves_no_defence(cfg) -> None:  # type: ignore[no-untyped-def]
    d = DuelState(override(cfg, duel__start_distance=1))
    d.apply_action(Maneuver.ALL_OUT_ATTACK)
    d.apply_action(duel_spend(0))
    d.apply_action(duel_spend(0))
    assert d.ex is not None and d.ex.att_dice.maneuver == 1
    d.force_faces([1, 1, 1, 1, 1, 1])
    d.force_faces([1, 1, 1, 1])
    assert d.current_player() == 1
    d.apply_action(Maneuver.ATTACK)
    d.apply_action(duel_spend(0))
    assert d.phase == DPhase.ATTACK_ROLL  # Kale gets no defence decision or roll
    d.force_faces([4, 1, 1, 1])  # 1 success vs 0: a light wound
    assert d.f[0].hp == 5


def test_rule14_all_out_defense_adds_a_die(cfg) -> None:  # type: ignore[no-untyped-def]
    d = DuelState(override(cfg, duel__start_distance=1))
    d.apply_action(Maneuver.ALL_OUT_DEFENSE)
    assert Maneuver.ATTACK in d.legal_actions()  # Snargle's turn
    d.apply_action(Maneuver.ATTACK)
    d.apply_action(duel_spend(0))
    d.apply_action(duel_spend(0))
    assert d.ex is not None and d.ex.def_dice.total == 3 + 1


def test_rule14_move_and_attack_loses_the_base_die_and_ready_strikes_first(cfg) -> None:  # type: ignore[no-untyped-def]
    d = DuelState(cfg)  # 4 m apart
    assert Maneuver.ATTACK not in d.legal_actions() and Maneuver.MOVE_ATTACK in d.legal_actions()
    d.apply_action(Maneuver.READY)
    d.apply_action(Maneuver.MOVE_ATTACK)  # Snargle closes: Kale strikes first
    assert d.ex is not None and d.ex.attacker == 0 and d.ex.ready_attack
    d.apply_action(duel_spend(0))
    d.apply_action(duel_spend(0))
    d.force_faces([1] * 5)
    d.force_faces([1] * 4)
    assert d.ex is not None and d.ex.attacker == 1 and d.ex.maneuver == Maneuver.MOVE_ATTACK
    d.apply_action(duel_spend(0))
    assert d.ex.att_dice.base == 0 and d.ex.att_dice.total == 3


def test_rule14_cover_only_in_a_ranged_fight(cfg) -> None:  # type: ignore[no-untyped-def]
    assert Maneuver.COVER not in DuelState(cfg).legal_actions()
    assert Maneuver.COVER in DuelState(override(cfg, duel__ranged=True)).legal_actions()


# Rule 15 / 16 / 17 / 18
def test_rule15_rule16_rule17_rule18(cfg) -> None:  # type: ignore[no-untyped-def]
    c = CombatRules()
    assert DuelState(cfg).f[0].hp == 6
    assert wound_penalty([1, 2, 0], c) == 2
    assert wound_penalty([1, 2], CombatRules(worst_wound_only=False)) == 3
    assert [standing_after(h, c) for h in (0, -1, -3, -4, -5)] == [
        Standing.UP,
        Standing.BELOW_ZERO,
        Standing.BELOW_ZERO,
        Standing.DEAD,
        Standing.DEAD,
    ]
    assert combat_pass(True, True) and not combat_pass(True, False) and combat_pass(False, False)


def test_rule17_check_again_after_each_hit_below_zero(cfg) -> None:  # type: ignore[no-untyped-def]
    for again in (True, False):
        d = DuelState(override(cfg, duel__start_distance=1, combat__check_after_each_hit=again))
        d.f[1].hp = -1
        d.f[1].below_zero = True
        d.apply_action(Maneuver.ATTACK)
        d.apply_action(duel_spend(0))
        d.apply_action(duel_spend(0))
        d.force_faces([4, 1, 1, 1, 1])
        d.force_faces([1, 1, 1, 1])  # light: -2 HP
        assert (d.phase == DPhase.CHECK_SPEND) is again

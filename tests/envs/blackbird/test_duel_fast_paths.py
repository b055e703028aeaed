"""The duel's fast paths against the plain computation they stand for.

``DuelState`` keeps ``current_player()`` as an attribute set with every change of phase, keeps the node's legal
ids once asked, and writes its observation with the scales read once; the chance path hands out shared
``Roll`` values. Seeded random walks (several configs, clones diverging on their own dice) compare each with a
from-scratch reading of the position at every node.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.blackbird import RULESET
from envs.blackbird.actions import DUEL_DECISIONS, DUEL_SPEND_0, DuelPhase, Maneuver
from envs.blackbird.config import BlackbirdConfig
from envs.blackbird.dice import AT_LEAST, ROLLS, ROLLS_KEPT, SIDES, Roll, read_faces, sample_roll
from envs.blackbird.duel import MANEUVERS, DuelState
from envs.blackbird.observation import (
    D_ATTACK_DICE,
    D_DEFENSE_DICE,
    D_DISTANCE,
    D_FOE,
    D_IN_REACH,
    D_MANEUVER,
    D_ME,
    D_MY_TURN,
    D_PHASE,
    D_TURN,
    DUEL_OBS_SIZE,
    POOL_DICE_SCALE,
    WOUND_PENALTY_SCALE,
)
from envs.blackbird.rules import (
    AttackResult,
    attack_base_die,
    attack_maneuver_dice,
    attack_result,
    available_maneuvers,
    defence_successes,
    defense_maneuver_dice,
    in_reach,
    net_successes,
    settle_combat_pool,
    spendable,
    wound_for_margin,
    wound_margin,
)
from envs.core.config import with_override
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, IllegalActionError

from .conftest import override, walk


def plain_player(d: DuelState) -> int:
    """Who moves, read from the phase (what ``current_player`` derived on every call before)."""
    if d.outcome() is not None:
        return TERMINAL
    return d.decider()


def plain_legal(d: DuelState) -> list[int]:
    """Rule 14's maneuvers or Rule 5's spends, worked out from scratch."""
    cfg = d.cfg
    seat = plain_player(d)
    if seat < 0:
        return []
    if d.phase is DuelPhase.MANEUVER:
        return available_maneuvers(d.distance, cfg.duel.reach, cfg.combat.move_attack_metres, cfg.duel.ranged)
    return list(range(DUEL_SPEND_0, DUEL_SPEND_0 + spendable(d.f[seat].pool, cfg.pool) + 1))


def plain_observation(d: DuelState, seat: int) -> np.ndarray:
    """The duel observation slot by slot with ``min`` / ``max`` and the config read directly."""
    cfg = d.cfg
    o = np.zeros(DUEL_OBS_SIZE, dtype=np.float32)
    for at, s in ((D_ME, seat), (D_FOE, 1 - seat)):
        fi = d.f[s]
        o[at] = max(-1.0, fi.hp / cfg.combat.hit_points)
        o[at + 1] = fi.pool / cfg.pool.cap
        o[at + 2] = fi.aim / cfg.combat.aim_max if cfg.combat.aim_max else 0.0
        o[at + 3 : at + 10] = [
            fi.all_out_attack,
            fi.all_out_defense,
            fi.ready,
            fi.cover,
            min(1.0, fi.penalty / WOUND_PENALTY_SCALE),
            fi.below_zero,
            fi.stunned,
        ]
    span = max(1, cfg.duel.start_distance, cfg.duel.reach)
    o[D_DISTANCE] = min(1.0, d.distance / span)
    o[D_IN_REACH] = in_reach(d.distance, cfg.duel.reach)
    if d.phase in DUEL_DECISIONS:
        o[D_PHASE + DUEL_DECISIONS.index(d.phase)] = 1.0
    o[D_MY_TURN] = d.active == seat
    o[D_TURN] = d.turn / cfg.duel.max_turns
    ex = d.ex
    if ex is not None:
        att = d.attack_pool(ex.attacker, ex.maneuver) if d.phase is DuelPhase.ATTACK_SPEND else ex.att_dice
        o[D_ATTACK_DICE] = min(1.0, att.total / POOL_DICE_SCALE)
        o[D_DEFENSE_DICE] = min(1.0, ex.def_dice.total / POOL_DICE_SCALE)
        o[D_MANEUVER + ex.maneuver] = 1.0
    return o


def plain_pools(d: DuelState, seat: int, spend: int) -> tuple[object, ...]:
    """Every maneuver's attack dice and every defence's dice of a seat, built through ``_roll_pool`` and the rules."""
    k, fi = d.setup, d.f[seat]
    att = [
        d._roll_pool(
            seat,
            k.attack_use,
            "attack",
            spend,
            attack_maneuver_dice(m, fi.aim, k.combat),
            attack_base_die(m, k.combat),
        )
        for m in MANEUVERS
    ]
    dfn = [
        d._roll_pool(
            seat, k.defense_use, "defense", spend, defense_maneuver_dice(fi.all_out_defense, fi.cover, c, k.combat)
        )
        for c in (False, True)
    ]
    return (*att, *dfn)


def check_node(d: DuelState) -> None:
    assert d.current_player() == plain_player(d)
    for seat, spend in itertools.product((0, 1), (0, 2)):  # the pools read by what decides them
        got = [d.attack_pool(seat, m, spend) for m in MANEUVERS] + [d.defense_pool(seat, c, spend) for c in (0, 1)]
        assert tuple(got) == plain_pools(d, seat, spend)
    assert d.legal_actions() == plain_legal(d)
    assert d.legal_actions() == plain_legal(d)  # asked again at the same node: the kept tuple
    for seat in (0, 1):
        assert d.observation(seat).tobytes() == plain_observation(d, seat).tobytes()


def configs() -> list[BlackbirdConfig]:
    cfg: BlackbirdConfig = RULESET.default_config()  # type: ignore[assignment]
    return [
        cfg,
        override(cfg, duel__start_distance=1),
        override(cfg, duel__ranged=True),
        override(cfg, combat__consciousness_pool_dice=False, combat__tie_misses=False),
        with_override(cfg, "pool.enabled", False),  # type: ignore[list-item]
    ]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), which=st.integers(0, 4), cut=st.integers(0, 60))
def test_fast_paths_match_the_plain_computation_including_after_clone(seed: int, which: int, cut: int) -> None:
    d = DuelState(configs()[which])
    rng = Rng(seed)
    walk(d, rng, cut, check_node)
    c = d.clone()
    check_node(c)
    walk(c, Rng(seed + 1), 10_000, check_node)  # the clone diverges on its own dice…
    walk(d, rng, 10_000, check_node)  # …and the original still reads its own position
    assert c.outcome() is not None and d.outcome() is not None


def test_an_illegal_action_raises_at_every_kind_of_node() -> None:
    d = DuelState(configs()[1])
    rng = Rng(3)
    seen = set()
    while d.outcome() is None:
        p = d.current_player()
        seen.add(d.phase)
        if p == CHANCE:
            with pytest.raises(IllegalActionError):
                d.apply_action(DUEL_SPEND_0)
            d.apply_chance(d.sample_chance(rng))
        else:
            la = d.legal_actions()
            bad = next(a for a in range(DUEL_SPEND_0 + d.cfg.pool.cap + 2) if a not in la)
            with pytest.raises(IllegalActionError):
                d.apply_action(bad)
            d.apply_action(la[int(rng.random() * len(la))])
    with pytest.raises(IllegalActionError):
        d.apply_action(d.legal_maneuvers()[0])
    assert DuelPhase.MANEUVER in seen and DuelPhase.ATTACK_ROLL in seen


def test_shared_rolls_are_the_rolls() -> None:
    for s in range(ROLLS_KEPT + 1):
        for six in range(s + 1):
            assert ROLLS[s][six] == Roll(s, six) and type(ROLLS[s][six]) is Roll
    big = sample_roll(Rng(0), 400, 2)  # more successes than the table keeps: built when rolled
    assert type(big) is Roll and big.successes > ROLLS_KEPT


@pytest.mark.parametrize(
    "kv",
    [{}, {"combat__pool_settlement": "spent"}, {"combat__undefended_hit_is_failure": True}, {"pool__failure_bonus": 2}],
)
def test_exchange_pools_memo_is_rule18_for_both_sides(kv: dict[str, object]) -> None:
    cfg = override(RULESET.default_config(), **kv)  # type: ignore[arg-type]
    k = DuelState(cfg).setup
    cap = cfg.pool.cap
    for _ in range(2):  # the second pass reads the memo
        for att_pool, att_spent, def_pool, def_spent in itertools.product(range(cap + 1), repeat=4):
            if att_spent > att_pool or def_spent > def_pool:
                continue
            for could_defend, hit in itertools.product((False, True), repeat=2):
                att = settle_combat_pool(att_pool, att_spent, hit, cfg.pool, cfg.combat)
                dfn = def_pool
                if could_defend or (hit and cfg.combat.undefended_hit_is_failure):
                    dfn = settle_combat_pool(def_pool, def_spent, not hit, cfg.pool, cfg.combat)
                got = k.exchange_pools(att_pool, att_spent, def_pool, def_spent, could_defend, hit)
                assert got == (att, dfn)


@pytest.mark.parametrize(
    "kv",
    [
        {},
        {"combat__tie_misses": False},
        {"combat__all_out_attack_defense": 1},
        {"combat__called_shot_margin_bonus": 2},
    ],
)
def test_exchange_result_memo_is_rule13_and_16(kv: dict[str, object]) -> None:
    cfg = override(RULESET.default_config(), **kv)  # type: ignore[arg-type]
    k = DuelState(cfg).setup
    c = cfg.combat
    for _ in range(2):  # the second pass reads the memo
        for a, b, pa, pb in itertools.product(range(9), range(-1, 9), range(4), range(4)):
            for called in (False, True):
                d_roll = None if b < 0 else Roll(b, 0)
                att = net_successes(Roll(a, 0), pa)
                dfn = defence_successes(d_roll, pb, c)
                result = attack_result(att, dfn, c, cfg.contest)
                margin = wound_margin(att - dfn, called, c) if result is AttackResult.HIT else 0
                row = wound_for_margin(margin, c) if result is AttackResult.HIT else None
                got = k.exchange_result(a, None if b < 0 else b, pa, pb, called)
                assert got == (att, dfn, result, margin, row)
    assert k.wound(1, True) == (wound_margin(1, True, c), wound_for_margin(wound_margin(1, True, c), c))


def test_dice_thresholds_read_the_faces() -> None:
    """``AT_LEAST`` on the draw itself reads the face ``int(u * 6) + 1``, also at the float next to each edge."""
    for face in range(SIDES + 2):
        t = AT_LEAST[face]
        assert t == 0.0 or int(math.nextafter(t, 0.0) * SIDES) + 1 < face
        assert t == 1.0 or int(t * SIDES) + 1 >= face
    for success_on in range(2, SIDES + 1):
        for seed in range(300):
            n = seed % 13
            faces = Rng(seed).roll(n, SIDES)  # the same draws made into faces
            assert sample_roll(Rng(seed), n, success_on) == read_faces(faces, success_on)


def test_a_turn_change_ends_the_effects_and_skips_a_stunned_fighter() -> None:
    """Rule 14 in the one turn-change loop: "until your next turn" effects end; a stunned fighter loses the turn."""
    for cfg in configs():
        rng = Rng(11)
        for _ in range(40):
            d = DuelState(cfg)
            while d.outcome() is None:
                turn = d.turn
                p = d.current_player()
                if p == CHANCE:
                    d.apply_chance(d.sample_chance(rng))
                else:
                    la = d.legal_actions()
                    d.apply_action(la[int(rng.random() * len(la))])
                if d.turn != turn and d.outcome() is None:  # a new turn has started: its fighter is clear
                    fi = d.f[d.active]
                    assert d.phase is DuelPhase.MANEUVER and d.current_player() == d.active
                    assert not (fi.all_out_attack or fi.all_out_defense or fi.ready or fi.cover or fi.stunned)
    d = DuelState(configs()[2])  # ranged: cover is open
    d.f[0].cover = d.f[1].cover = d.f[1].ready = True
    d.f[1].stunned = True
    d.apply_action(int(Maneuver.AIM))  # seat 1 is stunned: it loses turn 1, seat 0 moves again at turn 2
    assert (d.turn, d.active, d.current_player()) == (2, 0, 0)
    assert not (d.f[0].cover or d.f[1].cover or d.f[1].ready or d.f[1].stunned)
    assert [e.kind for e in d.log][-1] == "stun"


def test_roll_pools_built_from_the_kept_trait_dice_are_rule_2() -> None:
    """``_roll_pool`` adds pool and maneuver dice to trait dice kept per (seat, kind, base, perks): as built afresh."""
    from envs.blackbird.rules import Pool, best_trait, build_pool

    for cfg in configs():
        d = DuelState(cfg)
        k = d.setup
        for perks, seat, (use, kind), base, spend, extra in itertools.product(
            (0, 1, 2),
            (0, 1),
            ((k.attack_use, "attack"), (k.defense_use, "defense"), (k.stay_up_use, "stay up")),
            (False, True),
            (0, 3),
            (0, 2),
        ):
            d.f[seat].char = d.f[seat].char.copy()
            d.f[seat].char.perks[kind] = perks
            char = d.f[seat].char
            t = best_trait(cfg, char, use.traits, use.tags)
            p = build_pool(cfg, char, t, use.traits, use.tags, use.flag, kind, (), spend, 0, extra, base)
            for _ in range(2):  # the second read comes from the kept pools
                assert d._roll_pool(seat, use, kind, spend, extra, base) == Pool(
                    p.base, p.trait, p.tags, p.flag, p.perks, spend, 0, extra
                )


def test_fighter_and_exchange_copies_carry_every_field() -> None:
    """``Fighter.copy`` and ``Exchange.copy`` (slots classes, fields passed on by hand) match the original.

    Over the positions of seeded random walks, so every field takes several values; a field added to either class
    but left out of its copy fails here.
    """
    import dataclasses

    from envs.blackbird.duel import Exchange, Fighter

    assert not hasattr(Fighter.__new__(Fighter), "__dict__") and not hasattr(Exchange.__new__(Exchange), "__dict__")
    seen: set[str] = set()

    def check(d: DuelState) -> None:
        objs: list[Fighter | Exchange] = [*d.f] + ([d.ex] if d.ex is not None else [])
        for obj in objs:
            new = obj.copy()
            assert new is not obj and type(new) is type(obj)
            for fl in dataclasses.fields(obj):
                assert getattr(new, fl.name) is getattr(obj, fl.name), fl.name
            if getattr(obj, "below_zero", False) or getattr(obj, "att_roll", None) is not None:
                seen.add(type(obj).__name__)

    for seed in range(40):
        for cfg in configs():
            walk(DuelState(cfg), Rng(seed), 400, check)
    assert seen == {"Fighter", "Exchange"}


def test_the_kept_start_event_is_the_start_line_narrated() -> None:
    """Each duel logs its config's one start event: what ``narrate("start", ...)`` records, built afresh here."""
    from envs.blackbird.rules import create_character, starting_pool
    from envs.core.game import Event

    for cfg in configs():
        a, b = (create_character(s) for s in cfg.duel.fighters)
        text = (
            f"{a.name} faces {b.name}, {cfg.duel.start_distance} m apart; "
            f"{cfg.combat.hit_points} hit points and {starting_pool(cfg.pool)} pool dice each."
        )
        first, second = DuelState(cfg), DuelState(cfg)
        assert first.log == second.log == [Event("start", text, None, {})]
        assert first.log is not second.log

"""The state kept for the hot rule paths against a from-scratch computation (issue 16: no behaviour change).

The episode keeps the entities by id (``ents``), who is in play (``seat_personal``, three counts and bit sets by
entity id, from which the Admin's scene menu and the entity menus of Rules 10-12 are read through tables), a memo of
the own-option menus and Rule 1's value menus, and reads a roll (``_read_roll``) and draws one
(``sample_chance``) without the helper calls; each is checked here at every node of seeded random games of
several configs, clones that play on differently included.
"""

from __future__ import annotations

from itertools import product

import pytest

from envs.core.dice import Rng
from envs.core.game import TERMINAL
from envs.crossroads import episode, rules
from envs.crossroads.actions import Act, Phase, Purpose
from envs.crossroads.dice import face_classes, roll_check_dice
from envs.crossroads.episode import Character, CrossroadsState, _sorted3

from .helpers import config, diverge, step

VARIANTS = [
    {},
    {"episode__players": 2},
    {"episode__players": 5},
    {"crossroads__effect": "gain_minus_c"},
    {"crossroads__effect": "extra_success", "crossroads__triple_twice": True},
    {"crossroads__effect": "goal_box_on_miss"},
    {"spend__double_step": "opposite_sign", "writeoffs__minus_c_names": "automatic"},
    {"confrontation__nobody_opposes": True, "advantage__bonus": 2},
    {"check__assignment": "in_order", "setup__first_player": "roll"},
    {"check__chance_detail": "classes"},
    {"episode__players": 2, "episode__max_characters": 3, "episode__max_factions": 3},  # the limits are reached
]
IDS = [",".join(f"{k}={v}" for k, v in o.items()) or "rules" for o in VARIANTS]


def plain_scenes(st: CrossroadsState, admin: int | None = None) -> list[int]:
    """Rule 8's scene menu from a walk of every entity (for ``admin`` as the Admin: the state's by default)."""
    admin = st.admin if admin is None else admin
    ss = st.settings
    out = []
    if len(st.chars) < ss.max_characters:
        out.append(Act.SCENE_INTRO_CHARACTER)
    if len(st.factions) < ss.max_factions:
        out.append(Act.SCENE_INTRO_FACTION)
    faction_alive = any(f.alive for f in st.factions)
    own = any(c.alive and c.personal and c.owner == admin for c in st.chars)
    target = any(c.alive and c.personal and c.owner != admin for c in st.chars)
    common = any(c.alive and not c.personal for c in st.chars)
    if own and faction_alive:
        out.append(Act.SCENE_DEAL)
    if target and (ss.nobody_opposes or own or common or faction_alive):
        out.append(Act.SCENE_CONFRONT)
    return out or [Act.PASS]


def plain_roster_menu(st: CrossroadsState, phase: Phase, admin: int) -> list[int]:
    """An entity menu of Rules 10-12 from a walk of every entity, for ``admin`` as the Admin."""
    if phase == Phase.ADMIN_SCENE:
        return plain_scenes(st, admin)
    chars = [c for c in st.chars if c.alive]
    factions = [st.faction_target(f.idx) for f in st.factions if f.alive]
    if phase == Phase.ADMIN_TARGET:
        return [Act.TARGET_0 + c.idx for c in chars if c.personal and c.owner != admin]
    if phase == Phase.ADMIN_OPPOSITION:
        own_or_common = [Act.TARGET_0 + c.idx for c in chars if not c.personal or c.owner == admin]
        return own_or_common + factions + ([Act.NO_OPPOSITION] if st.settings.nobody_opposes else [])
    if phase == Phase.DEAL_AGAINST:
        return [Act.TARGET_0 + c.idx for c in chars if not (c.personal and c.owner == admin)]
    if phase == Phase.DEAL_FACTION:
        return factions
    assert phase == Phase.LOWER_INFLUENCE
    return [*factions, Act.PASS]


def plain_build_menu(st: CrossroadsState) -> list[int]:
    """Rule 1's values for the stat being set, from the character's stats so far."""
    ss = st.settings
    c = st.chars[st.chk_eid]
    values = rules.stat_values(
        ss.creation_points - sum(c.stats[: st.build_step]), 2 - st.build_step, ss.stat_min, ss.stat_max
    )
    return [Act.VALUE_1 + v - 1 for v in values]


ROSTER_PHASES = (
    Phase.ADMIN_SCENE,
    Phase.ADMIN_TARGET,
    Phase.ADMIN_OPPOSITION,
    Phase.DEAL_AGAINST,
    Phase.DEAL_FACTION,
    Phase.LOWER_INFLUENCE,
)
"""The phases whose menus list who is in play (Rules 8 and 10-12)."""


def check_kept(st: CrossroadsState) -> None:
    """Every kept value of ``st`` equals its computation from the entities."""
    ids = {c.idx: c for c in st.chars} | {st.faction_base + f.idx: f for f in st.factions}
    assert st.ents.keys() == ids.keys() and all(st.ents[k] is e for k, e in ids.items())
    assert all(e.eid == k for k, e in ids.items())
    for seat in range(st.num_players):
        mine = [c.idx for c in st.chars if c.alive and c.personal and c.owner == seat]
        assert len(mine) <= 1 and st.seat_personal[seat] == (mine[0] if mine else None)
    assert st.personals_alive == sum(c.alive and c.personal for c in st.chars)
    assert st.commons_alive == sum(c.alive and not c.personal for c in st.chars)
    assert st.factions_alive == sum(f.alive for f in st.factions)
    assert st.chars_in_play == sum(1 << c.eid for c in st.chars if c.alive)
    assert st.personals_in_play == sum(1 << c.eid for c in st.chars if c.alive and c.personal)
    assert st.factions_in_play == sum(1 << f.eid for f in st.factions if f.alive)
    for seat in range(st.num_players):
        mine = st.seat_personal[seat]
        assert st.own_bits[seat] == (0 if mine is None else 1 << mine)
    if st.phase == Phase.ADMIN_SCENE:
        assert st.legal_actions() == plain_scenes(st)
    if st.phase == Phase.BUILD:
        assert st.legal_actions() == plain_build_menu(st)
    for admin in range(st.num_players):  # every entity menu, for any Admin, is the walk's
        as_admin = st.clone()
        as_admin.admin = admin
        for phase in ROSTER_PHASES:
            assert list(episode._LEGAL[phase](as_admin)) == plain_roster_menu(st, phase, admin)
    if st.phase in ROSTER_PHASES:
        assert st.legal_actions() == plain_roster_menu(st, Phase(st.phase), st.admin)
    if st.phase == Phase.DEAL_FACTION:  # deal_with reads the counts for "anyone to deal against"
        assert bool(st._deal_against_options()) == (st.personals_alive + st.commons_alive > 1)
    if st.phase == Phase.SPEND:
        e = st.entity(st.chk_eid)
        assert st._own_options(e, None, True) == tuple(st._plain_own_options(e, None, True))
    if st.phase == Phase.BUY_OUTCOME:
        s = st.sides[st.side_i]
        e = st.entity(s.eid)
        assert st._own_options(e, s.flags, False) == tuple(st._plain_own_options(e, s.flags, False))
        if len(st.sides) == 2:  # the other side's menu (memoised per config) against its computation
            o = st.entity(st.sides[1 - st.side_i].eid)
            want = tuple(st._plain_opponent_options(s, o)) if o.alive else ()
            assert tuple(st._opponent_options(s, st.sides[1 - st.side_i])) == want


def plain_read(st: CrossroadsState, e, dice, perm: int, burned: int):
    """A roll's flags and successes as the rules compose them (Rules 3-5, 11.3, 11.4)."""
    flags, n = st.read_check(e, dice, perm)
    advantage = st.use_advantage(e)
    crossroads = st.crossroads(e, dice, perm, flags)
    return flags, rules.check_successes(n, burned, st.settings.burn_bonus, advantage, crossroads)


def check_reads(st: CrossroadsState) -> None:
    """At an assignment, every assignment read by ``_read_roll`` equals the rules' composition, side effects too."""
    if st.phase != Phase.ASSIGN:
        return
    for perm in range(6):
        fast, slow = st.clone(), st.clone()
        confront = st.purpose == Purpose.CONFRONT
        s_fast, s_slow = (fast.sides[fast.side_i], slow.sides[slow.side_i]) if confront else (None, None)
        dice = s_fast.dice if s_fast else fast.dice
        burned = s_fast.burned if s_fast else 0
        got = fast._read_roll(fast.entity(s_fast.eid if s_fast else fast.chk_eid), dice, perm, burned)
        want = plain_read(slow, slow.entity(s_slow.eid if s_slow else slow.chk_eid), dice, perm, burned)
        assert got == want
        assert fast.full_key() == slow.full_key() and fast.obs_changes == slow.obs_changes


def plain_sample(st: CrossroadsState, rng: Rng):
    """A check's roll as drawn before the inlining: roll_check_dice, the dice classes, then sorted when needed."""
    d = roll_check_dice(rng)
    if st.settings.dice_classes:
        rep = face_classes(st._roll_thresholds())
        d = (rep[d[0]], rep[d[1]], rep[d[2]])
    if st.settings.one_each or not st._roller_is_char():
        d = _sorted3(d)
    return d


def check_sample(st: CrossroadsState, k: int) -> None:
    if st.phase != Phase.ROLL:
        return
    a, b = Rng(k), Rng(k)
    assert st.clone().sample_chance(a) == plain_sample(st, b)
    assert a.random() == b.random()  # the same number of draws


@pytest.mark.parametrize("overrides", VARIANTS, ids=IDS)
def test_kept_state_matches_a_plain_computation(overrides):
    rng = Rng(17)
    for seed in range(4):
        st = CrossroadsState(config(**overrides))
        if seed % 2:
            st.narrating = False  # the crossroads are read only when they matter
        play = Rng(seed)
        while st.current_player() != TERMINAL:
            check_kept(st)
            check_reads(st)
            check_sample(st, int(rng.random() * 1000))
            if rng.random() < 0.03:  # a clone plays on differently: both keep their own values
                diverge(st, rng, 30, check_kept)
            step(st, play)
        check_kept(st)


def test_a_character_counts_once_when_written_off_twice():
    """write_off of an entity already out of play changes no count (the counts follow ``alive``)."""
    st = CrossroadsState(config())
    rng = Rng(2)
    while not st.chars or st.phase == Phase.BUILD:
        step(st, rng)
    c = st.chars[0]
    assert isinstance(c, Character)
    st.write_off(c, "test")
    st.write_off(c, "test again")
    check_kept(st)


def test_int_members_are_the_enum_values_as_plain_ints():
    for enum_cls in (Phase, Purpose):
        plain = rules.int_members(enum_cls)
        for member in enum_cls:
            value = getattr(plain, member.name)
            assert type(value) is int and value == member and hash(value) == hash(member)
    st = CrossroadsState(config())
    rng = Rng(4)
    while st.current_player() != TERMINAL:  # the state stores plain ints (the exact-int fast paths)
        assert type(st.phase) is int and type(st.purpose) is int
        step(st, rng)


def test_the_scene_menu_tells_apart_rosters_with_the_same_entities_in_play():
    """Rule 8's memoised menu counts the entities introduced, not only those in play: a character or faction
    introduced and written off leaves the same entities in play but may use up the room for another."""
    st = CrossroadsState(config(**{"episode__players": 2, "episode__max_characters": 3, "episode__max_factions": 3}))
    rng = Rng(1)
    while st.phase != Phase.ADMIN_SCENE:
        step(st, rng)
    for kind in ("character", "faction"):
        room = st.clone()
        while True:
            assert list(room._legal_scenes()) == plain_scenes(room)
            if kind == "character" and len(room.chars) < room.settings.max_characters:
                room.create_character(0, personal=False)
                room.write_off(room.chars[-1], "test")
            elif kind == "faction" and len(room.factions) < room.settings.max_factions:
                room.create_faction(0)
                room.write_off(room.factions[-1], "test")
            else:
                break
            check_kept(room)


FACTION_CHECK_VARIANTS = [
    {},
    {"faction__check_bonus": 2},
    {"faction__check": "none"},
    {"confrontation__faction_gate": "never", "faction__start_influence": 5},
]


def test_memoised_faction_checks_read_like_rule_4():
    """A faction's roll read through each config's memo (by dice and Influence) equals ``rules.faction_check`` with
    that config's check keys, at every roll of random games of configs whose faction checks differ (played in turn
    in one process, so that a memo shared across configs would answer for the wrong one)."""
    rng = Rng(23)
    for seed in range(3):
        for overrides in FACTION_CHECK_VARIANTS:
            st = CrossroadsState(config(**overrides))
            ss = st.settings
            play = Rng(seed)
            while st.current_player() != TERMINAL:
                for f in st.factions:
                    dice = tuple(sorted(1 + int(rng.random() * 10) for _ in range(3)))
                    want = rules.faction_check(
                        dice, f.influence, ss.faction_rolls, ss.faction_bonus, ss.faction_gate_any
                    )
                    assert st.read_check(f, dice, 0) == want
                    assert st.read_check(f, list(dice), 0) == want  # a list: read without the memo
                step(st, play)


def test_goal_box_menus_are_the_boxes_marked_and_unmarked():
    """The aim menus' box tables (Rule 11.1) list the marked boxes to unmark and the unmarked ones to mark."""
    for goals in product((False, True), repeat=3):
        g0, g1, g2 = goals
        assert episode._UNMARKS[g0][g1][g2] == tuple(Act.UNMARK_G + s for s in range(3) if goals[s])
        assert episode._MARKS_LEFT[g0][g1][g2] == tuple(Act.MARK_G + s for s in range(3) if not goals[s])

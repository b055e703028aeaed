"""The state's caches against a from-scratch computation, over seeded random games (issue 16: no behaviour change).

The encoder keeps each seat's entity block and re-packs only the slots of the entities the rules logged as changed
(``obs_changes``), with the confrontation's markers written in until the sides change (``obs_marked``); the checks
below encode every seat's observation from the entities' current values at every decision and chance node, also
after a clone whose copy and original then play on differently.
"""

from __future__ import annotations

import struct
from itertools import product

import numpy as np
import pytest

from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL
from envs.crossroads import episode, observation
from envs.crossroads.actions import NUM_CONTEXTS, Phase, Purpose
from envs.crossroads.episode import CrossroadsState
from envs.crossroads.observation import Encoder

from .helpers import config, diverge, step

VARIANTS = [
    {},
    {"episode__players": 2},
    {"episode__players": 5},
    {"crossroads__effect": "gain_minus_c"},
    {"crossroads__effect": "gain_plus_c"},
    {"crossroads__effect": "goal_box_on_miss", "crossroads__triple_twice": True},
    {"spend__double_step": "opposite_sign", "writeoffs__minus_c_names": "automatic"},
    {"confrontation__nobody_opposes": True, "advantage__bonus": 2},
    {"check__assignment": "in_order", "setup__first_player": "roll"},
]


def _f(*values: float) -> bytes:
    return struct.pack(f"{len(values)}f", *values)


def _count(k: int) -> float:
    """A count scaled by 1/6, clipped at 1."""
    return min(1.0, k / 6) if k else 0.0


def _side(s, seat: int) -> list[float]:
    d = s.dice
    dice = [d[0] / 10, d[1] / 10, d[2] / 10] if d else [0.0, 0.0, 0.0]
    return [float(s.seat == seat), *dice, min(1.0, s.burned / 6), min(1.0, s.succ / 6)]


def plain_globals(st: CrossroadsState, seat: int) -> list[bytes]:
    """The global features from scratch (observation.py's layout: context, Admin, progress, roll, sides, tail)."""
    enc: Encoder = st.encoder
    ss = st.settings
    p = st.phase
    head = [0.0] * 17
    if p < NUM_CONTEXTS:
        head[p] = 1.0
        head[16] = float(st.actor == seat)
    admin = [0.0] * enc.layout.seat_slots
    admin[(st.admin - seat) % st.num_players] = 1.0
    roll = None
    if p in (Phase.ASSIGN, Phase.SPEND, Phase.LOWER_INFLUENCE):
        confront = st.purpose == Purpose.CONFRONT and p == Phase.ASSIGN
        roll = st.sides[st.side_i].dice if confront else st.dice
    dice = [roll[0] / 10, roll[1] / 10, roll[2] / 10] if roll else [0.0, 0.0, 0.0]
    mid = [st.scene_no / ss.max_scenes, min(1.0, st.exits / ss.exits_to_end), *dice]
    mid += [_count(st.succ), _count(st.left), _count(st.degree)]
    sides = st.sides
    if len(sides) == 2 and sides[0].eid is not None:
        rest = _side(sides[0], seat) + _side(sides[1], seat) + [float(x) for x in sides[0].flags + sides[1].flags]
        rest.append(float(st.side_i == 1))
    elif p in (Phase.SPEND, Phase.BUY_OUTCOME, Phase.LOWER_INFLUENCE):
        rest = [0.0] * 12 + [float(x) for x in st.flags] + [0.0] * 4
    else:
        rest = [0.0] * 19
    tail = [st.build_step / 2 if p == Phase.BUILD else 0.0, float(st.purpose == Purpose.GOAL)]
    tail.append(float(st.purpose == Purpose.BEAUTY))
    return [_f(*head), _f(*admin), _f(*mid), _f(*rest), _f(*tail)]


def plain_observation(st: CrossroadsState, seat: int) -> np.ndarray:
    """``seat``'s observation from scratch: every slot packed from the entity's values, no cached bytes."""
    enc: Encoder = st.encoder
    layout = enc.layout
    sides = st.sides
    target = sides[-1].eid if sides else None
    opp = sides[0].eid if len(sides) == 2 else None
    parts = plain_globals(st, seat)
    for c in st.chars:
        parts.append(enc.char_bytes(c, seat, c.idx == target, c.idx == opp))
    parts.append(enc.empty_char * (layout.char_slots - len(st.chars)))
    for f in st.factions:
        eid = st.faction_base + f.idx
        parts.append(enc.faction_bytes(f, seat, eid == opp))
    parts.append(enc.empty_faction * (layout.faction_slots - len(st.factions)))
    return np.frombuffer(b"".join(parts), dtype=np.float32)


def check_node(st: CrossroadsState) -> None:
    """Every cached reading of ``st`` equals its plain computation."""
    for seat in range(st.num_players):
        assert np.array_equal(st.observation(seat), plain_observation(st, seat))


@pytest.mark.parametrize("overrides", VARIANTS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "rules")
def test_cached_observations_match_plain_ones(overrides):
    for seed in range(3):
        st = CrossroadsState(config(**overrides))
        rng = Rng(seed)
        while st.current_player() != TERMINAL:
            check_node(st)
            step(st, rng)
        check_node(st)


def test_clone_then_diverge_keeps_both_caches_right():
    play_clones_and_check(Rng(11), games=20, every_node=True)


@pytest.mark.parametrize(("clone_kept", "encoder_kept"), [(0, 0), (3, 1), (40, 7)])
def test_short_change_logs_keep_every_block_right(monkeypatch, clone_kept, encoder_kept):
    """The encoder empties a long change log (dropping the seats' stale blocks) and a clone of a state with a long
    log starts afresh: with tiny limits both happen all the time, and every observation stays right."""
    monkeypatch.setattr(episode, "_CHANGES_KEPT", clone_kept)
    monkeypatch.setattr(observation, "_CHANGES_KEPT", encoder_kept)
    play_clones_and_check(Rng(5), games=6, every_node=True)
    play_clones_and_check(Rng(6), games=6, every_node=False)


def test_a_clone_of_a_long_unread_log_starts_afresh(monkeypatch):
    monkeypatch.setattr(episode, "_CHANGES_KEPT", 20)
    st = CrossroadsState(config())
    rng = Rng(3)
    check_node(st)
    while len(st.obs_changes) <= episode._CHANGES_KEPT and st.current_player() != TERMINAL:
        step(st, rng)  # nobody encodes: the log grows
    cl = st.clone()
    assert cl.obs_changes == [] and cl.obs_blocks == [None] * st.num_players
    check_node(cl)
    check_node(st)


def play_clones_and_check(rng: Rng, games: int, every_node: bool) -> None:
    """Play seeded games, cloning now and then and playing the clone on differently; check the observations
    of every seat at every node (``every_node``) or at one node in seven (the change log grows unread)."""
    for _ in range(games):
        st = CrossroadsState(config())
        while st.current_player() != TERMINAL:
            if every_node or rng.random() < 1 / 7:
                check_node(st)  # fills the kept blocks, which the clone copies
            if rng.random() < 0.05:
                diverge(st, rng, 40, check_node)
            step(st, rng)


@pytest.mark.parametrize("overrides", VARIANTS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "rules")
def test_sampled_roll_applies_like_a_checked_outcome(overrides):
    """apply_chance trusts the tuple sample_chance just drew; an equal new tuple takes the checked path."""
    for seed in range(3):
        fast = CrossroadsState(config(**overrides))
        rng = Rng(seed)
        while fast.current_player() != TERMINAL:
            if fast.current_player() == CHANCE:
                slow = fast.clone()
                outcome = fast.sample_chance(rng)
                fast.apply_chance(outcome)
                slow.apply_chance(tuple(list(outcome)) if isinstance(outcome, tuple) else outcome)  # an equal new tuple
                assert fast.full_key() == slow.full_key()
                assert fast._sampled is None and slow._sampled is None
            else:
                step(fast, rng)


@pytest.mark.parametrize("overrides", [{}, {"episode__players": 5, "character__max_conditions": 3}])
def test_a_characters_table_row_is_its_packed_slot(overrides):
    """``char_row`` (four table pieces) equals ``char_bytes`` (18 packed floats) up to the markers for every value a
    slot shows: each seat, owner, kind, stat, condition count and flag."""
    st = CrossroadsState(config(**overrides))
    enc: Encoder = st.encoder
    cap = st.settings.max_conditions
    c = episode.Character(0, 0, True, [0, 0, 0])
    for seat, owner, personal, alive in product(
        range(st.num_players), range(st.num_players), (False, True), (False, True)
    ):
        c.owner, c.personal, c.alive = owner, personal, alive
        assert enc.char_row(c, seat) == enc.char_bytes(c, seat, False, False)[:-8]
    for g, kh, m in product(range(11), repeat=3):
        c.stats = [g, kh, m]
        assert enc.char_row(c, 1) == enc.char_bytes(c, 1, False, False)[:-8]
    for plus, minus, wounded, dying, g0, g1, g2, adv in product(range(cap + 1), range(cap + 1), *[(False, True)] * 6):
        c.plus, c.minus, c.wounded, c.dying, c.goals, c.advantage = plus, minus, wounded, dying, [g0, g1, g2], adv
        assert enc.char_row(c, 0) == enc.char_bytes(c, 0, False, False)[:-8]

"""Crossroads observation encoding: what one seat sees of the episode, as a flat vector in [0, 1].

Layout (``OBS_SIZE`` = 304): ``GLOBAL_SIZE`` global features, then ``MAX_CHARACTER_SLOTS`` character
slots of ``CHAR_FEATURES`` and ``MAX_FACTION_SLOTS`` faction slots of ``FACTION_FEATURES``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.crossroads.actions import FACTION_BASE, NUM_CONTEXTS, Phase, Purpose
from envs.crossroads.config import MAX_CHARACTER_SLOTS, MAX_FACTION_SLOTS, MAX_SEATS

if TYPE_CHECKING:
    from envs.crossroads.episode import CrossroadsState

GLOBAL_SIZE = 52
CHAR_FEATURES = 18
FACTION_FEATURES = 9
OBS_SIZE = GLOBAL_SIZE + MAX_CHARACTER_SLOTS * CHAR_FEATURES + MAX_FACTION_SLOTS * FACTION_FEATURES

# global features
_CONTEXT = 0  # one-hot over the NUM_CONTEXTS decision phases
_TO_MOVE = 16  # the seat is the one to move
_ADMIN = 17  # one-hot: the Admin's seat relative to the observer (MAX_SEATS)
_SCENE = 22  # scene number / scene limit
_EXITS = 23  # exits / exits that end the episode
_DICE = 24  # the three dice being assigned or spent
_SUCCESSES = 27
_LEFT = 28  # spends / outcomes / cuts still to make
_DEGREE = 29
_SIDES = 30  # two confrontation sides x (mine, three dice, burns, successes)
_SIDE_FEATURES = 6
_FLAGS = 42  # two x three success flags
_SECOND_SIDE = 48  # the second side is the one acting
_BUILD_STEP = 49
_GOAL_CHECK = 50
_BEAUTY = 51
_SCALE = 6  # counts are scaled by 1/6 and clipped at 1
_DIE = 10  # a d10 face is scaled by 1/10


def encode(st: CrossroadsState, seat: int) -> np.ndarray:
    """The observation of ``seat`` (see the rules card in ``episode.py``)."""
    n = st.num_players
    cfg = st.cfg
    cap = cfg.character.max_conditions
    high = cfg.faction.writeoff_high
    obs = [0.0] * OBS_SIZE
    p = st.phase
    if p < NUM_CONTEXTS:
        obs[_CONTEXT + p] = 1.0
        obs[_TO_MOVE] = 1.0 if st.actor == seat else 0.0
    obs[_ADMIN + (st.admin - seat) % n] = 1.0
    obs[_SCENE] = st.scene_no / cfg.episode.max_scenes
    obs[_EXITS] = min(1.0, st.exits / cfg.episode.exits_to_end)
    roll = None
    if p == Phase.ASSIGN or p == Phase.SPEND or p == Phase.LOWER_INFLUENCE:
        roll = st.sides[st.side_i].dice if st.purpose == Purpose.CONFRONT and p == Phase.ASSIGN else st.dice
    if roll:
        obs[_DICE], obs[_DICE + 1], obs[_DICE + 2] = roll[0] / _DIE, roll[1] / _DIE, roll[2] / _DIE
    obs[_SUCCESSES] = min(1.0, st.succ / _SCALE)
    obs[_LEFT] = min(1.0, st.left / _SCALE)
    obs[_DEGREE] = min(1.0, st.degree / _SCALE)
    if st.sides and len(st.sides) == 2 and st.sides[0].eid is not None:
        for k, s in enumerate(st.sides):
            base = _SIDES + _SIDE_FEATURES * k
            obs[base] = 1.0 if s.seat == seat else 0.0
            if s.dice:
                obs[base + 1], obs[base + 2], obs[base + 3] = s.dice[0] / _DIE, s.dice[1] / _DIE, s.dice[2] / _DIE
            obs[base + 4] = min(1.0, s.burned / _SCALE)
            obs[base + 5] = min(1.0, s.succ / _SCALE)
            f0, f1, f2 = s.flags  # no flags (all false) until the side's dice are assigned
            obs[_FLAGS + 3 * k] = 1.0 if f0 else 0.0
            obs[_FLAGS + 1 + 3 * k] = 1.0 if f1 else 0.0
            obs[_FLAGS + 2 + 3 * k] = 1.0 if f2 else 0.0
        obs[_SECOND_SIDE] = 1.0 if st.side_i == 1 else 0.0
    elif p == Phase.SPEND or p == Phase.BUY_OUTCOME or p == Phase.LOWER_INFLUENCE:
        f0, f1, f2 = st.flags
        obs[_FLAGS], obs[_FLAGS + 1], obs[_FLAGS + 2] = (1.0 if f0 else 0.0), (1.0 if f1 else 0.0), (1.0 if f2 else 0.0)
    obs[_BUILD_STEP] = st.build_step / 2 if p == Phase.BUILD else 0.0
    obs[_GOAL_CHECK] = 1.0 if st.purpose == Purpose.GOAL else 0.0
    obs[_BEAUTY] = 1.0 if st.purpose == Purpose.BEAUTY else 0.0
    base = GLOBAL_SIZE
    target = st.sides[-1].eid if st.sides else None
    opp = st.sides[0].eid if len(st.sides) == 2 else None
    for c in st.chars:
        o = base + c.idx * CHAR_FEATURES
        stats, g = c.stats, c.goals
        obs[o : o + CHAR_FEATURES] = (
            1.0,
            1.0 if c.alive else 0.0,
            1.0 if c.personal and c.owner == seat else 0.0,
            0.0 if c.personal else 1.0,
            ((c.owner - seat) % n) / (MAX_SEATS - 1) if c.personal else 0.0,
            stats[0] / _DIE,
            stats[1] / _DIE,
            stats[2] / _DIE,
            c.plus / cap,
            c.minus / cap,
            1.0 if c.wounded else 0.0,
            1.0 if c.dying else 0.0,
            1.0 if g[0] else 0.0,
            1.0 if g[1] else 0.0,
            1.0 if g[2] else 0.0,
            1.0 if c.advantage else 0.0,
            1.0 if c.idx == target else 0.0,
            1.0 if c.idx == opp else 0.0,
        )
    base += MAX_CHARACTER_SLOTS * CHAR_FEATURES
    for f in st.factions:
        o = base + f.idx * FACTION_FEATURES
        obs[o : o + FACTION_FEATURES] = (
            1.0,
            1.0 if f.alive else 0.0,
            1.0 if f.owner == seat else 0.0,
            ((f.owner - seat) % n) / (MAX_SEATS - 1),
            max(0.0, min(1.0, f.influence / high)),
            f.plus / cap,
            f.minus / cap,
            1.0 if f.advantage else 0.0,
            1.0 if FACTION_BASE + f.idx == opp else 0.0,
        )
    return np.array(obs, dtype=np.float32)

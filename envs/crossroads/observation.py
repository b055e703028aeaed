"""Crossroads observation encoding: what one seat sees of the episode, as a flat vector in [0, 1].

Layout (``OBS_SIZE`` = 304): ``GLOBAL_SIZE`` global features, then ``MAX_CHARACTER_SLOTS`` character
slots of ``CHAR_FEATURES`` and ``MAX_FACTION_SLOTS`` faction slots of ``FACTION_FEATURES``.
"""

from __future__ import annotations

import struct
from functools import lru_cache
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


_TENTHS = tuple(k / _DIE for k in range(_DIE + 1))
"""A d10 face or a stat (0-10) scaled by 1/10 (the same floats as dividing)."""
_SIXTHS = tuple(min(1.0, k / _SCALE) for k in range(_SCALE + 1))
_SEAT_OFFSETS = tuple(k / (MAX_SEATS - 1) for k in range(MAX_SEATS))
_FLAG = (0.0, 1.0)
_PACK = struct.Struct(f"{OBS_SIZE}f").pack
# phases and purposes as module globals (an enum member lookup costs about a microsecond in Python 3.11)
_BUILD, _ASSIGN, _SPEND, _BUY_OUTCOME, _LOWER_INFLUENCE = (
    Phase.BUILD,
    Phase.ASSIGN,
    Phase.SPEND,
    Phase.BUY_OUTCOME,
    Phase.LOWER_INFLUENCE,
)
_CONFRONT, _GOAL, _BEAUTY_CHECK = Purpose.CONFRONT, Purpose.GOAL, Purpose.BEAUTY


@lru_cache(maxsize=64)
def _fractions(cap: int) -> tuple[float, ...]:
    """Condition counts 0..cap scaled by 1/cap (an entity never holds more than cap, Rule 1)."""
    return tuple(k / cap for k in range(cap + 1))


def encode(st: CrossroadsState, seat: int) -> np.ndarray:
    """The observation of ``seat`` (see the rules card in ``episode.py``)."""
    n = st.num_players
    settings = st.settings
    fractions = _fractions(settings.max_conditions)
    high = settings.writeoff_high
    tenths = _TENTHS
    flag = _FLAG
    obs = [0.0] * OBS_SIZE
    p = st.phase
    if p < NUM_CONTEXTS:
        obs[_CONTEXT + p] = 1.0
        obs[_TO_MOVE] = flag[st.actor == seat]
    obs[_ADMIN + (st.admin - seat) % n] = 1.0
    obs[_SCENE] = st.scene_no / settings.max_scenes
    obs[_EXITS] = min(1.0, st.exits / settings.exits_to_end)
    roll = None
    if p in (_ASSIGN, _SPEND, _LOWER_INFLUENCE):
        roll = st.sides[st.side_i].dice if st.purpose == _CONFRONT and p == _ASSIGN else st.dice
    if roll:
        obs[_DICE : _DICE + 3] = tenths[roll[0]], tenths[roll[1]], tenths[roll[2]]
    sixths = _SIXTHS  # counts are never negative; at 6 and above the feature is 1
    obs[_SUCCESSES] = sixths[st.succ] if st.succ <= _SCALE else 1.0
    obs[_LEFT] = sixths[st.left] if st.left <= _SCALE else 1.0
    obs[_DEGREE] = sixths[st.degree] if st.degree <= _SCALE else 1.0
    sides = st.sides
    if len(sides) == 2 and sides[0].eid is not None:
        for k, s in enumerate(sides):
            base = _SIDES + _SIDE_FEATURES * k
            obs[base] = flag[s.seat == seat]
            if s.dice:
                d = s.dice
                obs[base + 1 : base + 4] = tenths[d[0]], tenths[d[1]], tenths[d[2]]
            obs[base + 4] = sixths[s.burned] if s.burned <= _SCALE else 1.0
            obs[base + 5] = sixths[s.succ] if s.succ <= _SCALE else 1.0
            f0, f1, f2 = s.flags  # no flags (all false) until the side's dice are assigned
            obs[_FLAGS + 3 * k : _FLAGS + 3 * k + 3] = flag[f0], flag[f1], flag[f2]
        obs[_SECOND_SIDE] = flag[st.side_i == 1]
    elif p in (_SPEND, _BUY_OUTCOME, _LOWER_INFLUENCE):
        f0, f1, f2 = st.flags
        obs[_FLAGS : _FLAGS + 3] = flag[f0], flag[f1], flag[f2]
    obs[_BUILD_STEP] = st.build_step / 2 if p == _BUILD else 0.0
    purpose = st.purpose
    obs[_GOAL_CHECK] = flag[purpose == _GOAL]
    obs[_BEAUTY] = flag[purpose == _BEAUTY_CHECK]
    target = sides[-1].eid if sides else None
    opp = sides[0].eid if len(sides) == 2 else None
    offsets = _SEAT_OFFSETS
    for c in st.chars:
        o = GLOBAL_SIZE + c.idx * CHAR_FEATURES
        s0, s1, s2 = c.stats
        g0, g1, g2 = c.goals
        idx = c.idx
        if c.personal:
            mine, common, owner = (flag[c.owner == seat], 0.0, offsets[(c.owner - seat) % n])
        else:
            mine, common, owner = 0.0, 1.0, 0.0
        obs[o : o + CHAR_FEATURES] = (
            1.0,
            flag[c.alive],
            mine,
            common,
            owner,
            tenths[s0],
            tenths[s1],
            tenths[s2],
            fractions[c.plus],
            fractions[c.minus],
            flag[c.wounded],
            flag[c.dying],
            flag[g0],
            flag[g1],
            flag[g2],
            flag[c.advantage],
            flag[idx == target],
            flag[idx == opp],
        )
    base = GLOBAL_SIZE + MAX_CHARACTER_SLOTS * CHAR_FEATURES
    for f in st.factions:
        o = base + f.idx * FACTION_FEATURES
        obs[o : o + FACTION_FEATURES] = (
            1.0,
            flag[f.alive],
            flag[f.owner == seat],
            offsets[(f.owner - seat) % n],
            max(0.0, min(1.0, f.influence / high)),
            fractions[f.plus],
            fractions[f.minus],
            flag[f.advantage],
            flag[FACTION_BASE + f.idx == opp],
        )
    # struct packs Python floats to float32 (the same C cast numpy uses) in a fraction of np.array's time
    return np.frombuffer(bytearray(_PACK(*obs)), dtype=np.float32)

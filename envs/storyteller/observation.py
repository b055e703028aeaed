"""Observation encoding of the Storyteller scenarios (the rules cards in ``heist.py`` and ``duel.py`` list the fields).

All values are scaled into 0..1. The encoders read a state and write a fresh float32 vector.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.storyteller.actions import SLOTS, DPhase, Phase

if TYPE_CHECKING:
    from envs.storyteller.duel import DuelState
    from envs.storyteller.heist import HeistState

# -- heist ----------------------------------------------------------------------------------------
PER_TASK = 20
"""Heist: values per task slot."""
HEIST_GLOBALS = 10
"""Heist: values after the task slots (clock, Willpower, phase, plan)."""
HEIST_NEXT_ROLL = 3
"""Heist: the roll a per-roll Willpower decision is about (its action number, pool, difficulty; Rule 8)."""
HEIST_OBS_SIZE = SLOTS * PER_TASK + HEIST_GLOBALS + HEIST_NEXT_ROLL
"""Heist: length of the observation vector."""
POOL_SCALE = 20.0
"""Pools and targets are divided by this."""
DIFFICULTY_SCALE = 10.0
"""Difficulties (and Willpower, defence successes) are divided by this."""
ATTEMPT_SCALE = 5.0
"""Heist: repeated attempts are divided by this."""
PLAN_SCALE = 3.0
"""Heist: actions declared and picked are divided by this."""
AUTO_MARK = 0.5
"""Heist: a planned automatic success (a planned roll is 1)."""


def encode_heist(state: HeistState, seat: int) -> np.ndarray:
    """The heist's observation of ``seat`` (there is only seat 0)."""
    cfg = state.cfg
    obs = np.zeros(HEIST_OBS_SIZE, dtype=np.float32)
    for s, t in enumerate(state.tasks):
        b = s * PER_TASK
        obs[b] = 1.0
        obs[b + 1 + int(t.status)] = 1.0
        obs[b + 5] = min(t.progress / t.spec.target, 1.0)
        obs[b + 6] = min(t.spec.target / POOL_SCALE, 1.0)
        obs[b + 7] = min(t.pools[0] / POOL_SCALE, 1.0)
        obs[b + 8] = t.difficulty(0, cfg) / DIFFICULTY_SCALE
        if len(t.pools) > 1:
            obs[b + 9] = 1.0
            obs[b + 10] = min(t.pools[1] / POOL_SCALE, 1.0)
            obs[b + 11] = t.difficulty(1, cfg) / DIFFICULTY_SCALE
        obs[b + 12] = min((t.attempt - 1) / ATTEMPT_SCALE, 1.0)
        obs[b + 13] = float(t.spec.calm)
        obs[b + 14] = float(t.spec.retryable)
        for k, pick in enumerate(state.plan):
            if pick.slot == s:
                obs[b + 15 + k] = AUTO_MARK if pick.auto else 1.0
        obs[b + 18] = float(state.ally_slot == s)
        obs[b + 19] = float(state.pending_slot == s)
    g = SLOTS * PER_TASK
    limit = max(cfg.heist.turns, 1)
    obs[g] = min(state.turn / limit, 1.0)
    obs[g + 1] = min(max(state.turn_limit - state.turn, 0) / limit, 1.0)
    obs[g + 2] = min(state.willpower / DIFFICULTY_SCALE, 1.0)
    if Phase.RETRY <= state.phase <= Phase.ALLY:
        obs[g + 3 + int(state.phase) - int(Phase.RETRY)] = 1.0
    obs[g + 8] = state.n_actions / PLAN_SCALE
    obs[g + 9] = len(state.plan) / PLAN_SCALE
    if state.phase == Phase.WILLPOWER and state.willpower_per_roll:
        r = state.queue[0]
        obs[g + 10] = (r.index + 1) / PLAN_SCALE
        obs[g + 11] = min(r.pool / POOL_SCALE, 1.0)
        obs[g + 12] = r.difficulty / DIFFICULTY_SCALE
    return obs


# -- duel -----------------------------------------------------------------------------------------
DUEL_BASE = 32
"""Duel: the values that do not depend on the rolls of the turn in progress."""
DUEL_TURN_ROLLS = 8
"""Duel: this turn's rolls so far and the roll a per-roll Willpower decision is about (Rule 8)."""
DUEL_OBS_SIZE = DUEL_BASE + DUEL_TURN_ROLLS
"""Duel: length of the observation vector."""
DUEL_PLAN_SCALE = 2.0
"""Duel: actions declared are divided by this."""


def encode_duel(state: DuelState, seat: int) -> np.ndarray:
    """The duel's observation from ``seat``'s side."""
    o = 1 - seat
    obs = np.zeros(DUEL_OBS_SIZE, dtype=np.float32)
    tgt = float(state.target)
    obs[0] = min(state.progress[seat] / tgt, 1.0)
    obs[1] = min(state.progress[o] / tgt, 1.0)
    obs[2] = min(state.willpower[seat] / DIFFICULTY_SCALE, 1.0)
    obs[3] = min(state.willpower[o] / DIFFICULTY_SCALE, 1.0)
    obs[4] = min(state.turn / state.cfg.duel.turns, 1.0)
    if state.seat == seat and state.phase <= DPhase.WILLPOWER:
        obs[5 + int(state.phase)] = 1.0
        obs[8] = state.n_actions[seat] / DUEL_PLAN_SCALE
        for k, kind in enumerate(state.plans[seat][:2]):
            obs[9 + 3 * k + kind] = 1.0
    for i, side in enumerate((state.sides[seat], state.sides[o])):
        for j in range(3):
            obs[15 + 6 * i + j] = min(side.pools[j] / POOL_SCALE, 1.0)
            obs[18 + 6 * i + j] = side.difficulties[j] / DIFFICULTY_SCALE
    g0, g1, d0, d1 = state.last
    mine, theirs = (g0, g1) if seat == 0 else (g1, g0)
    dm, dt = (d0, d1) if seat == 0 else (d1, d0)
    obs[27] = min(mine / tgt, 1.0)
    obs[28] = min(theirs / tgt, 1.0)
    obs[29] = min(dm / DIFFICULTY_SCALE, 1.0)
    obs[30] = min(dt / DIFFICULTY_SCALE, 1.0)
    obs[31] = float(seat)
    if state.rolling():  # this turn's rolls so far: own attack kept, own defence, the opponent's two
        b = DUEL_BASE
        for i, who in enumerate((seat, o)):
            kept, reset = state.attack_so_far(who)
            obs[b + 2 * i] = min(kept / DIFFICULTY_SCALE, 1.0)
            obs[b + 2 * i + 1] = min(max(state.defence[who] or 0, 0) / DIFFICULTY_SCALE, 1.0)
            if i == 0:
                obs[b + 7] = float(reset)
        if state.phase == DPhase.WILLPOWER and state.seat == seat:
            obs[b + 4 + int(state.queue[0].kind)] = 1.0
    return obs

"""The session's observation against a plain slot-by-slot computation.

``session_observation`` copies the obstacle's kept slots and writes the moving ones through the array's
``memoryview``; here every slot is worked out afresh and written with numpy's own item writes, on seeded random
walks (clones diverging on their own dice included), and the bytes must be the same.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.blackbird import RULESET
from envs.blackbird.actions import SESSION_DECISIONS
from envs.blackbird.config import MAX_TRAITS, BlackbirdConfig
from envs.blackbird.observation import (
    ATTEMPT_SCALE,
    CONDITION_SCALE,
    DICE_SCALE,
    DIFFICULTY_SCALE,
    OPPOSITION_SCALE,
    PERK_SCALE,
    POOL_DICE_SCALE,
    S_ATTEMPT,
    S_CONDITIONS,
    S_CRITICAL,
    S_DIFFICULTY,
    S_FLAG,
    S_HELPED,
    S_HELPER_POOL,
    S_JOINT,
    S_OBSTACLE,
    S_OPPOSITION,
    S_PASS_AT_0,
    S_PASS_AT_ALL,
    S_PERKS,
    S_PHASE,
    S_POOL,
    S_POOL_SIZE,
    S_SESSION,
    S_TRAIT_CHOSEN,
    S_TRAIT_DICE,
    S_WON,
    S_XP,
    SESSION_OBS_SIZE,
    XP_SCALE,
)
from envs.blackbird.session import SPEND, SessionState
from envs.core.dice import Rng

from .conftest import override, walk


def plain_observation(s: SessionState) -> np.ndarray:
    """Every slot from the state's readings, written by numpy item writes into a zeroed array."""
    o = np.zeros(SESSION_OBS_SIZE, dtype=np.float32)
    cfg = s.cfg
    if s.obstacle is not None and s.outcome() is None:
        ob = s.ob
        o[S_DIFFICULTY] = min(1.0, s.difficulty() / DIFFICULTY_SCALE)
        o[S_OPPOSITION] = min(1.0, ob.opposition / OPPOSITION_SCALE)
        o[S_CRITICAL] = float(ob.stake == "critical")
        o[S_FLAG] = float(ob.flag)
        o[S_JOINT] = float(ob.joint)
        for i in range(len(s.char.traits)):
            p = s.pool_for(i)
            o[S_TRAIT_DICE + i] = min(1.0, (p.trait + p.tags) / DICE_SCALE)
        o[S_PERKS] = min(1.0, s.char.perks.get(ob.name, 0) / PERK_SCALE)
        o[S_TRAIT_CHOSEN + (MAX_TRAITS if s.trait is None else s.trait)] = 1.0
        o[S_HELPED] = float(s.help_given > 0)
        o[S_POOL_SIZE] = min(1.0, s.pool_for(s.trait, 0, s.help_given).total / POOL_DICE_SCALE)
        if s.phase is SPEND:
            o[S_PASS_AT_0] = s.pass_chance(0)
            o[S_PASS_AT_ALL] = s.pass_chance(s.spendable())
    o[S_CONDITIONS] = max(-1.0, min(1.0, s.condition_modifier() / CONDITION_SCALE))
    o[S_XP] = min(1.0, s.char.xp / XP_SCALE)
    if s.phase in SESSION_DECISIONS:
        o[S_PHASE + SESSION_DECISIONS.index(s.phase)] = 1.0
    o[S_POOL] = s.pool / cfg.pool.cap
    o[S_HELPER_POOL] = s.helper_pool / max(1, cfg.session.helper_pool)
    o[S_ATTEMPT] = s.attempt / ATTEMPT_SCALE
    o[S_SESSION] = s.session_no / cfg.session.sessions
    o[S_OBSTACLE] = s.obstacle_no / cfg.session.obstacles_per_session
    o[S_WON] = s.won / s.at_stake if s.at_stake else 0.0
    return o


def check_observation(s: SessionState) -> None:
    assert s.observation(0).tobytes() == plain_observation(s).tobytes()


def configs() -> list[BlackbirdConfig]:
    cfg: BlackbirdConfig = RULESET.default_config()  # type: ignore[assignment]
    return [cfg, override(cfg, session__helper_pool=0), override(cfg, session__retries=0)]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), which=st.integers(0, 2), cut=st.integers(0, 80))
def test_session_observation_is_the_plain_one_including_after_clone(seed: int, which: int, cut: int) -> None:
    s = SessionState(configs()[which])
    rng = Rng(seed)
    walk(s, rng, cut, check_observation)
    c = s.clone()
    walk(c, Rng(seed + 1), 10_000, check_observation)
    walk(s, rng, 10_000, check_observation)
    assert c.outcome() is not None and s.outcome() is not None

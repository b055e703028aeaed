"""Blackbird observation encodings: what a seat sees, as a flat float32 vector in [-1, 1].

Each slot below is named; the rules cards of :mod:`envs.blackbird.session` and :mod:`envs.blackbird.duel`
describe the same layout in words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from envs.blackbird.actions import DUEL_DECISIONS, SESSION_DECISIONS, DuelPhase, SessionPhase
from envs.blackbird.config import MAX_TRAITS

if TYPE_CHECKING:
    from envs.blackbird.duel import DuelState, _DuelSetup
    from envs.blackbird.session import SessionState

# scales: a value is divided by these and clipped to 1
DIFFICULTY_SCALE = 10
OPPOSITION_SCALE = 12
DICE_SCALE = 6  # trait + tag dice of one trait
POOL_DICE_SCALE = 20  # dice in a roll
PERK_SCALE = 3
ATTEMPT_SCALE = 4
CONDITION_SCALE = 5
XP_SCALE = 40
WOUND_PENALTY_SCALE = 3

# -- session slots --------------------------------------------------------------------------------------
S_POOL = 0
S_HELPER_POOL = 1
S_PHASE = 2  # one-hot over SESSION_DECISIONS (4 slots)
S_DIFFICULTY = 6
S_OPPOSITION = 7
S_CRITICAL = 8
S_FLAG = 9
S_JOINT = 10
S_TRAIT_DICE = 11  # per trait slot (MAX_TRAITS slots)
S_TRAIT_CHOSEN = 18  # one-hot over the trait slots and "no trait" (MAX_TRAITS + 1 slots)
S_HELPED = 26
S_POOL_SIZE = 27
S_PERKS = 28
S_ATTEMPT = 29
S_CONDITIONS = 30
S_SESSION = 31
S_OBSTACLE = 32
S_WON = 33
S_XP = 34
S_PASS_AT_0 = 35
S_PASS_AT_ALL = 36
SESSION_OBS_SIZE = 37
"""Length of the session's observation."""

# -- duel slots -----------------------------------------------------------------------------------------
FIGHTER_OBS = 10
"""Slots per fighter: hp, pool, aim, all-out attack / defence, ready, cover, wound penalty, below zero, stunned."""
D_ME = 0
D_FOE = FIGHTER_OBS
D_DISTANCE = 20
D_IN_REACH = 21
D_PHASE = 22  # one-hot over DUEL_DECISIONS (4 slots)
D_MY_TURN = 26
D_TURN = 27
D_ATTACK_DICE = 28
D_DEFENSE_DICE = 29
D_MANEUVER = 30  # one-hot over the maneuvers (9 slots)
DUEL_OBS_SIZE = 39
"""Length of the duel's observation."""


def session_observation(state: SessionState) -> np.ndarray:
    """The session character's view: pool, helper, phase, the obstacle, the trait dice and the pass chances.

    The slots the obstacle, the conditions and the sheet fix come as one float32 array the state keeps while
    they hold (:func:`obstacle_slots`); its copy is the fresh array returned, and only the slots that move
    from step to step are written into it, through its ``memoryview`` (as in :func:`duel_observation`).
    """
    k = state.setup
    ph = state.phase
    if state.obstacle is not None and state.outcome() is None:
        out = state.obstacle_view(obstacle_slots).copy()
        o: Any = out.data  # float items (format "f"); typeshed types the items as int
        trait, help_given = state.trait, state.help_given
        o[S_TRAIT_CHOSEN + (MAX_TRAITS if trait is None else trait)] = 1.0
        if help_given > 0:
            o[S_HELPED] = 1.0
        # the dice on the chosen trait with the help taken and no pool dice: the trait's kept base pool plus the help
        # dice (Rule 2 sums a pool's parts, so that is the total of pool_for(trait, 0, help_given), without its key)
        o[S_POOL_SIZE] = min(1.0, (state.pool_for(trait).total + help_given) / POOL_DICE_SCALE)
        if ph is SessionPhase.SPEND:
            o[S_PASS_AT_0] = state.pass_chance(0)
            o[S_PASS_AT_ALL] = state.pass_chance(state.spendable())
    else:
        out = np.zeros(SESSION_OBS_SIZE, dtype=np.float32)
        o = out.data
        o[S_CONDITIONS] = max(-1.0, min(1.0, state.condition_modifier() / CONDITION_SCALE))
        o[S_XP] = min(1.0, state.char.xp / XP_SCALE)
    slot = SESSION_PHASE_SLOT.get(ph)
    if slot is not None:
        o[slot] = 1.0
    if state.pool:
        o[S_POOL] = state.pool / k.cap
    if state.helper_pool:
        o[S_HELPER_POOL] = state.helper_pool / k.helper_scale
    if state.attempt:
        o[S_ATTEMPT] = state.attempt / ATTEMPT_SCALE
    if state.session_no:
        o[S_SESSION] = state.session_no / k.sessions
    if state.obstacle_no:
        o[S_OBSTACLE] = state.obstacle_no / k.per_session
    if state.at_stake:
        o[S_WON] = state.won / state.at_stake
    return out


SESSION_PHASE_SLOT = {ph: S_PHASE + i for i, ph in enumerate(SESSION_DECISIONS)}
"""The ``S_PHASE`` slot of each decision phase (none at a chance node)."""


def obstacle_slots(state: SessionState) -> np.ndarray:
    """The whole observation as far as the obstacle, the conditions and the sheet fix it (the state keeps it).

    The difficulty, opposition, critical stake, flag, joint action, each trait's dice, the perks held for the
    obstacle, the conditions' modifier and the XP; every other slot is 0 here. Read-only: callers copy it.
    """
    ob = state.ob
    o = np.zeros(SESSION_OBS_SIZE, dtype=np.float32)
    o[S_DIFFICULTY] = min(1.0, state.difficulty() / DIFFICULTY_SCALE)
    o[S_OPPOSITION] = min(1.0, ob.opposition / OPPOSITION_SCALE)
    o[S_CRITICAL] = float(ob.stake == "critical")
    o[S_FLAG] = float(ob.flag)
    o[S_JOINT] = float(ob.joint)
    for i in range(len(state.char.traits)):
        p = state.pool_for(i)
        o[S_TRAIT_DICE + i] = min(1.0, (p.trait + p.tags) / DICE_SCALE)
    o[S_PERKS] = min(1.0, state.char.perks.get(ob.name, 0) / PERK_SCALE)
    o[S_CONDITIONS] = max(-1.0, min(1.0, state.condition_modifier() / CONDITION_SCALE))
    o[S_XP] = min(1.0, state.char.xp / XP_SCALE)
    o.flags.writeable = False
    return o


def duel_observation(state: DuelState, seat: int) -> np.ndarray:
    """A fighter's view: both fighters (self first), distance, phase, turn, and the attack in progress.

    Written slot by slot into a fresh zeroed float32 array (most slots are flags, zero most of the time):
    item writes of Python floats cost less than building the vector from a list or from packed bytes, and
    writes through the array's ``memoryview`` (``.data``, format ``f``) cost less than numpy's own item writes
    (~350 machine instructions a write against ~550, cachegrind); both round a float to the nearest float32.
    The fighters' ``FIGHTER_OBS`` slots come from one loop over (self, foe) with the scales read once; the
    clipping to [-1, 1] is written as comparisons, which give what ``min`` / ``max`` give.
    """
    k = state.setup
    phase = state.phase
    # the distance, phase, whose-turn and turn slots come written in a kept read-only array (duel_tail), whose
    # copy is the fresh array returned: one lookup in place of four or five slot writes
    tail_key = (state.distance, phase, state.active == seat, state.turn)
    tail = k.obs_tails.get(tail_key)
    if tail is None:
        tail = duel_tail(k, *tail_key)
    out = tail.copy()
    o: Any = out.data  # the returned array's own memory (format "f"), written through
    f = state.f
    hit_points, cap, aim_max = k.hit_points, k.cap, k.aim_max
    at = D_ME
    for fi in (f[seat], f[1 - seat]):
        hp = fi.hp / hit_points
        o[at] = hp if hp > -1.0 else -1.0
        if fi.pool:
            o[at + 1] = fi.pool / cap
        if fi.aim and aim_max:
            o[at + 2] = fi.aim / aim_max
        if fi.all_out_attack:
            o[at + 3] = 1.0
        if fi.all_out_defense:
            o[at + 4] = 1.0
        if fi.ready:
            o[at + 5] = 1.0
        if fi.cover:
            o[at + 6] = 1.0
        if fi.wounds:
            wp = fi.penalty / WOUND_PENALTY_SCALE  # Rule 16: the fighter's wound penalty
            o[at + 7] = wp if wp < 1.0 else 1.0
        if fi.below_zero:
            o[at + 8] = 1.0
        if fi.stunned:
            o[at + 9] = 1.0
        at = D_FOE
    ex = state.ex
    if ex is not None:
        if phase is not DuelPhase.ATTACK_SPEND:
            x = ex.att_dice.total / POOL_DICE_SCALE
        else:  # the attacker's dice before any pool dice are added
            x = state.attack_pool(ex.attacker, ex.maneuver).total / POOL_DICE_SCALE
        o[D_ATTACK_DICE] = x if x < 1.0 else 1.0
        d = ex.def_dice.total
        if d:  # no defence dice yet at the spends a seat observes (the copied tail holds 0.0 here already)
            x = d / POOL_DICE_SCALE
            o[D_DEFENSE_DICE] = x if x < 1.0 else 1.0
        o[D_MANEUVER + ex.maneuver] = 1.0
    return out


def duel_tail(k: _DuelSetup, distance: int, phase: DuelPhase, my_turn: bool, turn: int) -> np.ndarray:
    """The duel observation's distance, in-reach, phase, whose-turn and turn slots, every other slot 0.

    Kept read-only in the setup's ``obs_tails`` by what decides them: a few
    hundred arrays at most (distances × phases × 2 × turns), cleared at a bound all the same. Written through
    the ``memoryview`` as :func:`duel_observation` writes its other slots (the same float32 rounding).
    """
    out = np.zeros(DUEL_OBS_SIZE, dtype=np.float32)
    o: Any = out.data
    if distance:
        x = distance / k.distance_span
        o[D_DISTANCE] = x if x < 1.0 else 1.0
    if distance <= k.reach:  # Rule 14's in_reach, inlined (the fast-path test compares the slot with it)
        o[D_IN_REACH] = 1.0
    if phase < N_DUEL_DECISIONS:  # the decision phases come first, in DUEL_DECISIONS order
        o[D_PHASE + phase] = 1.0
    if my_turn:
        o[D_MY_TURN] = 1.0
    if turn:
        o[D_TURN] = turn / k.max_turns
    out.flags.writeable = False
    if len(k.obs_tails) >= DUEL_TAILS_LIMIT:
        k.obs_tails.clear()
    k.obs_tails[distance, phase, my_turn, turn] = out
    return out


DUEL_TAILS_LIMIT = 4096
"""The most tail arrays a setup keeps (each ~200 bytes)."""
N_DUEL_DECISIONS = len(DUEL_DECISIONS)
"""The decision phases are the first ``DuelPhase`` values: a phase's ``D_PHASE`` slot is ``D_PHASE + phase``."""
assert tuple(DuelPhase)[:N_DUEL_DECISIONS] == DUEL_DECISIONS, "the duel's decision phases come first, in order"

"""Observation encoding of the Storyteller scenarios (the rules cards in ``heist.py`` and ``duel.py`` list the fields).

All values are scaled into 0..1. The plain encoders (:func:`encode_heist`, :func:`encode_duel`) read a state,
fill a Python list and return it as a fresh float32 vector. The states' ``observation`` goes the fast way:
the vector is cut into blocks that change at different times, each block is packed to float32 bytes once
(cached on the state until what it reads changes, or memoised per config on what it reads), and the blocks
are joined into a fresh writeable vector. The block packers below fill the same values as the plain
encoders, so the bytes are identical (tests/envs/storyteller/test_fast_paths.py checks them state by state).
"""

from __future__ import annotations

import struct
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from envs.storyteller.actions import KINDS, SLOTS, DPhase, Phase

if TYPE_CHECKING:
    from envs.storyteller.duel import DuelState
    from envs.storyteller.heist import HeistState, Task

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
"""Heist: actions declared and picked are divided by this (or by ``multiple_actions.max_actions`` if more)."""
PLAN_PLACES = 3
"""Heist: a task slot marks its place in the turn's plan among the first three (a later place as the third)."""
AUTO_MARK = 0.5
"""Heist: a planned automatic success (a planned roll is 1)."""
# hot-path aliases (a ``Phase.X`` lookup is a descriptor call in Python 3.11)
_RETRY, _ALLY, _WILLPOWER, _D_WILLPOWER = int(Phase.RETRY), int(Phase.ALLY), Phase.WILLPOWER, DPhase.WILLPOWER


@lru_cache(maxsize=16)
def _packer(size: int) -> tuple[struct.Struct, bytearray, np.ndarray]:
    """The float32 packer, a preallocated buffer and its array view for vectors of ``size`` values.

    One per process and size: an encoder packs its list into the buffer and returns a copy of the view at once,
    half the cost of ``np.array(list, float32)`` (``struct`` rounds a double to float32 as numpy does).
    """
    buf = bytearray(4 * size)
    return struct.Struct(f"{size}f"), buf, np.frombuffer(buf, dtype=np.float32)


def _to_array(v: list[float]) -> np.ndarray:
    """``v`` as a fresh float32 vector."""
    pack, buf, view = _packer(len(v))
    pack.pack_into(buf, 0, *v)
    return view.copy()


def heist_task_part(task: Task) -> list[float]:
    """A heist task slot's values that change only with its attempt (the rest is filled per step)."""
    v = [0.0] * PER_TASK
    v[0] = 1.0
    v[6] = min(task.spec.target / POOL_SCALE, 1.0)
    v[7] = min(task.pools[0] / POOL_SCALE, 1.0)
    v[8] = task.current_difficulty[0] / DIFFICULTY_SCALE
    if len(task.pools) > 1:
        v[9] = 1.0
        v[10] = min(task.pools[1] / POOL_SCALE, 1.0)
        v[11] = task.current_difficulty[1] / DIFFICULTY_SCALE
    v[12] = min((task.attempt - 1) / ATTEMPT_SCALE, 1.0)
    v[13] = float(task.spec.calm)
    v[14] = float(task.spec.retryable)
    return v


def encode_heist(state: HeistState, seat: int) -> np.ndarray:
    """The heist's observation of ``seat`` (there is only seat 0), computed afresh (the block packers' reference)."""
    v = [0.0] * HEIST_OBS_SIZE
    for s, t in enumerate(state.tasks):
        b = s * PER_TASK
        v[b : b + PER_TASK] = t.obs_part
        v[b + 1 + int(t.status)] = 1.0
        v[b + 5] = min(t.progress / t.spec.target, 1.0)
    for k, pick in enumerate(state.plan):
        v[pick.slot * PER_TASK + 15 + (k if k < PLAN_PLACES else PLAN_PLACES - 1)] = AUTO_MARK if pick.auto else 1.0
    if state.ally_slot is not None:
        v[state.ally_slot * PER_TASK + 18] = 1.0
    if state.pending_slot is not None:
        v[state.pending_slot * PER_TASK + 19] = 1.0
    g = SLOTS * PER_TASK
    limit = max(state.cfg.heist.turns, 1)
    v[g] = min(state.turn / limit, 1.0)
    v[g + 1] = min(max(state.turn_limit - state.turn, 0) / limit, 1.0)
    v[g + 2] = min(state.willpower / DIFFICULTY_SCALE, 1.0)
    phase = state.phase
    if _RETRY <= phase <= _ALLY:
        v[g + 3 + phase - _RETRY] = 1.0
    scale = state.plan_scale
    v[g + 8] = state.n_actions / scale
    v[g + 9] = len(state.plan) / scale
    if phase is _WILLPOWER and state.willpower_per_roll:
        r = state.queue[0]
        v[g + 10] = (r.index + 1) / scale
        v[g + 11] = min(r.pool / POOL_SCALE, 1.0)
        v[g + 12] = r.difficulty / DIFFICULTY_SCALE
    return _to_array(v)


# -- duel -----------------------------------------------------------------------------------------
DUEL_BASE = 32
"""Duel: the values that do not depend on the rolls of the turn in progress."""
DUEL_TURN_ROLLS = 8
"""Duel: this turn's rolls so far and the roll a per-roll Willpower decision is about (Rule 8)."""
DUEL_OBS_SIZE = DUEL_BASE + DUEL_TURN_ROLLS
"""Duel: length of the observation vector when at most :data:`DUEL_PLAN_PLACES` actions may be declared."""
DUEL_PLAN_SCALE = 2.0
"""Duel: actions declared are divided by this (or by the duel's most actions a turn if more)."""
DUEL_PLAN_PLACES = 2
"""Duel: the places of the declared plan kept in the first 40 values; each later place adds 3 at the end."""


def duel_observation_size(max_actions: int) -> int:
    """Duel: the observation's length for up to ``max_actions`` actions a turn (3 more per place beyond 2)."""
    return DUEL_OBS_SIZE + len(KINDS) * max(0, max_actions - DUEL_PLAN_PLACES)


def duel_fighters_part(state: DuelState, seat: int) -> list[float]:
    """The duel's fixed values from ``seat``'s side: both fighters' pools / 20 and difficulties / 10."""
    part = [0.0] * 12
    for i, side in enumerate((state.sides[seat], state.sides[1 - seat])):
        for j in range(3):
            part[6 * i + j] = min(side.pools[j] / POOL_SCALE, 1.0)
            part[6 * i + 3 + j] = side.difficulties[j] / DIFFICULTY_SCALE
    return part


def encode_duel(state: DuelState, seat: int) -> np.ndarray:
    """The duel's observation from ``seat``'s side, computed afresh (the reference of the block packers)."""
    o = 1 - seat
    v = [0.0] * state.obs_size
    tgt = float(state.target)
    v[0] = min(state.progress[seat] / tgt, 1.0)
    v[1] = min(state.progress[o] / tgt, 1.0)
    v[2] = min(state.willpower[seat] / DIFFICULTY_SCALE, 1.0)
    v[3] = min(state.willpower[o] / DIFFICULTY_SCALE, 1.0)
    v[4] = min(state.turn / state.cfg.duel.turns, 1.0)
    if state.seat == seat and state.phase <= _D_WILLPOWER:
        v[5 + int(state.phase)] = 1.0
        v[8] = state.n_actions[seat] / state.plan_scale
        for k, kind in enumerate(state.plans[seat]):
            v[(9 + 3 * k if k < DUEL_PLAN_PLACES else DUEL_OBS_SIZE + 3 * (k - DUEL_PLAN_PLACES)) + kind] = 1.0
    v[15:27] = state.fighters_part[seat]
    g0, g1, d0, d1 = state.last
    mine, theirs = (g0, g1) if seat == 0 else (g1, g0)
    dm, dt = (d0, d1) if seat == 0 else (d1, d0)
    v[27] = min(mine / tgt, 1.0)
    v[28] = min(theirs / tgt, 1.0)
    v[29] = min(dm / DIFFICULTY_SCALE, 1.0)
    v[30] = min(dt / DIFFICULTY_SCALE, 1.0)
    v[31] = float(seat)
    if state.rolling():  # this turn's rolls so far: own attack kept, own defence, the opponent's two
        b = DUEL_BASE
        for i, who in enumerate((seat, o)):
            kept, reset = state.attack_so_far(who)
            v[b + 2 * i] = min(kept / DIFFICULTY_SCALE, 1.0)
            v[b + 2 * i + 1] = min(max(state.defence[who] or 0, 0) / DIFFICULTY_SCALE, 1.0)
            if i == 0:
                v[b + 7] = float(reset)
        if state.phase is _D_WILLPOWER and state.seat == seat:
            v[b + 4 + int(state.queue[0].kind)] = 1.0
    return _to_array(v)


# the duel's blocks, in vector order: head v[0:5], plan v[5:15], middle v[15:32], rolls v[32:40], extra v[40:]
DUEL_HEAD = 5
"""Duel: progresses, Willpowers and the turn (v[0:5]); they change only when a roll settles or Willpower is spent."""
DUEL_PLAN_END = 15
"""Duel: the end of the own decision block (v[5:15]: phase one-hot, actions declared, the first two picks)."""
_HEAD = struct.Struct(f"{DUEL_HEAD}f")
_MIDDLE = struct.Struct(f"{DUEL_BASE - DUEL_PLAN_END}f")
_ROLLS = struct.Struct(f"{DUEL_TURN_ROLLS}f")
_F32 = np.float32
_frombuffer = np.frombuffer  # a module global: no numpy attribute lookup per observation
DUEL_NO_ROLLS = bytes(4 * DUEL_TURN_ROLLS)
"""Duel: the rolls block outside the turn's rolls (all zero)."""


def duel_turn_blocks(state: DuelState, seat: int) -> tuple[bytes, bytes]:
    """The duel's head (v[0:5]) and middle (v[15:32]) blocks from ``seat``'s side, packed.

    They read the progresses, Willpowers, turn and last turn's results, which change only when Willpower
    is spent or a turn settles (the state drops its cached pair then), and the fixed fighters' values.
    """
    # ``x if x <= 1.0 else 1.0`` is ``min(x, 1.0)`` (the same float) without a builtin call, which parses its
    # arguments as keywords: a tenth of the cost, and these blocks are packed afresh about once a turn.
    o = 1 - seat
    tgt = float(state.target)
    progress, willpower = state.progress, state.willpower
    p, po = progress[seat] / tgt, progress[o] / tgt
    w, wo = willpower[seat] / DIFFICULTY_SCALE, willpower[o] / DIFFICULTY_SCALE
    t = state.turn / state.cfg.duel.turns
    head = _HEAD.pack(
        p if p <= 1.0 else 1.0,
        po if po <= 1.0 else 1.0,
        w if w <= 1.0 else 1.0,
        wo if wo <= 1.0 else 1.0,
        t if t <= 1.0 else 1.0,
    )
    g0, g1, d0, d1 = state.last
    mine, theirs = (g0 / tgt, g1 / tgt) if seat == 0 else (g1 / tgt, g0 / tgt)
    dm, dt = (
        (d0 / DIFFICULTY_SCALE, d1 / DIFFICULTY_SCALE) if seat == 0 else (d1 / DIFFICULTY_SCALE, d0 / DIFFICULTY_SCALE)
    )
    middle = _MIDDLE.pack(
        *state.fighters_part[seat],
        mine if mine <= 1.0 else 1.0,
        theirs if theirs <= 1.0 else 1.0,
        dm if dm <= 1.0 else 1.0,
        dt if dt <= 1.0 else 1.0,
        float(seat),
    )
    return head, middle


def duel_plan_blocks(
    phase: int, n_actions: int, plan: tuple[int, ...], plan_scale: float, extra: int
) -> tuple[bytes, bytes]:
    """The own decision block (v[5:15]) and the later picks' block (``extra`` values after the 40), packed.

    ``phase`` is the seat's own decision phase, ``plan`` the kinds it has picked this turn.
    """
    v = [0.0] * (DUEL_PLAN_END - DUEL_HEAD + extra)
    v[int(phase)] = 1.0
    v[3] = n_actions / plan_scale
    for k, kind in enumerate(plan):
        v[(4 + 3 * k if k < DUEL_PLAN_PLACES else DUEL_PLAN_END - DUEL_HEAD + 3 * (k - DUEL_PLAN_PLACES)) + kind] = 1.0
    cut = DUEL_PLAN_END - DUEL_HEAD
    return struct.pack(f"{cut}f", *v[:cut]), struct.pack(f"{extra}f", *v[cut:])


def duel_rolls_block(
    kept: int, defence: int | None, kept_o: int, defence_o: int | None, reset: bool, kind: int
) -> bytes:
    """The turn's rolls block (v[32:40]): own attack kept and defence, the opponent's two, the Willpower roll's kind.

    ``kind`` is the kind of own roll a Willpower decision is about, or -1 when there is none.
    """
    v = [0.0] * DUEL_TURN_ROLLS
    v[0] = min(kept / DIFFICULTY_SCALE, 1.0)
    v[1] = min(max(defence or 0, 0) / DIFFICULTY_SCALE, 1.0)
    v[2] = min(kept_o / DIFFICULTY_SCALE, 1.0)
    v[3] = min(max(defence_o or 0, 0) / DIFFICULTY_SCALE, 1.0)
    v[7] = float(reset)
    if kind >= 0:
        v[4 + kind] = 1.0
    return _ROLLS.pack(*v)


def join_blocks(blocks: tuple[bytes, ...]) -> np.ndarray:
    """Packed blocks as one fresh, writeable float32 vector."""
    return _frombuffer(bytearray(b"".join(blocks)), _F32)


# the heist's blocks, in vector order: per task slot its head (v[0:15]) and tail (v[15:20]), then the globals
HEIST_SLOT_HEAD = 15
"""Heist: a task slot's values that read only its attempt, status and progress (the rest is its tail)."""
HEIST_SLOT_TAIL = PER_TASK - HEIST_SLOT_HEAD
"""Heist: a task slot's values that read the turn's plan, the ally and the pending retry."""
_SLOT_HEAD = struct.Struct(f"{HEIST_SLOT_HEAD}f")
_SLOT_TAIL = struct.Struct(f"{HEIST_SLOT_TAIL}f")
_HEIST_GLOBALS = struct.Struct(f"{HEIST_GLOBALS + HEIST_NEXT_ROLL}f")
HEIST_NO_TASK = bytes(4 * HEIST_SLOT_HEAD)
"""Heist: the head block of an empty task slot (all zero; its tail is zero too)."""


def heist_slot_head(obs_part: list[float], status: int, progress: int, target: int) -> bytes:
    """A task slot's head block, packed: its fixed part (:func:`heist_task_part`), status one-hot, progress."""
    v = obs_part[:HEIST_SLOT_HEAD]
    v[1 + status] = 1.0
    done = progress / target
    v[5] = done if done <= 1.0 else 1.0  # min(done, 1.0) without the builtin's call (see duel_turn_blocks)
    return _SLOT_HEAD.pack(*v)


def heist_slot_tails(
    plan: tuple[tuple[int, int | None], ...], ally: int | None, pending: int | None
) -> tuple[bytes, ...]:
    """Every task slot's tail block, packed: its places in the plan, the ally's task, the pending retry.

    ``plan`` holds the turn's picks as (slot, approach) pairs (approach ``None``: the automatic success).
    """
    v = [0.0] * (SLOTS * HEIST_SLOT_TAIL)
    for k, (slot, approach) in enumerate(plan):
        v[slot * HEIST_SLOT_TAIL + (k if k < PLAN_PLACES else PLAN_PLACES - 1)] = AUTO_MARK if approach is None else 1.0
    if ally is not None:
        v[ally * HEIST_SLOT_TAIL + 3] = 1.0
    if pending is not None:
        v[pending * HEIST_SLOT_TAIL + 4] = 1.0
    return tuple(_SLOT_TAIL.pack(*v[s * HEIST_SLOT_TAIL : (s + 1) * HEIST_SLOT_TAIL]) for s in range(SLOTS))


def heist_globals(
    clock: tuple[int, int, int, int],
    phase: int,
    counts: tuple[int, int],
    scale: float,
    roll: tuple[int, int, int] | None,
) -> bytes:
    """The heist's globals block, packed.

    ``clock`` is (turn, turn limit, ``heist.turns``, Willpower), ``counts`` the actions declared and picked,
    ``roll`` the (action index, pool, difficulty) of the roll a per-roll Willpower decision is about.
    """
    turn, turn_limit, turns, willpower = clock
    v = [0.0] * (HEIST_GLOBALS + HEIST_NEXT_ROLL)
    # comparisons in place of min()/max() (the same values without the builtins' calls, see duel_turn_blocks)
    limit = turns if turns >= 1 else 1
    turns_left = turn_limit - turn
    elapsed, left, wp = turn / limit, (turns_left if turns_left >= 0 else 0) / limit, willpower / DIFFICULTY_SCALE
    v[0] = elapsed if elapsed <= 1.0 else 1.0
    v[1] = left if left <= 1.0 else 1.0
    v[2] = wp if wp <= 1.0 else 1.0
    if _RETRY <= phase <= _ALLY:
        v[3 + phase - _RETRY] = 1.0
    v[8] = counts[0] / scale
    v[9] = counts[1] / scale
    if roll is not None:
        index, pool, difficulty = roll
        v[10] = (index + 1) / scale
        share = pool / POOL_SCALE
        v[11] = share if share <= 1.0 else 1.0
        v[12] = difficulty / DIFFICULTY_SCALE
    return _HEIST_GLOBALS.pack(*v)

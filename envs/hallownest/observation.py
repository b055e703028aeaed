"""Hallownest observation: the flat, normalised view of the duel from one seat (every entry in [-1, 1]).

30 features of the seat's own bug, 30 of the opponent's, 20 shared. Each raw number is divided by a
scale (the most it usually reaches) and the vector is clipped to [-1, 1].
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from envs.hallownest import rules as R
from envs.hallownest.actions import Phase
from envs.hallownest.rules import AttackKind

if TYPE_CHECKING:
    from envs.hallownest.duel import Bug, DuelState

BUG_FEATURES = 30
SHARED_FEATURES = 20
OBSERVATION_SIZE = 2 * BUG_FEATURES + SHARED_FEATURES
#: the decision contexts, one-hot in the shared features
CONTEXTS = (Phase.TURN, Phase.DEFENSE, Phase.HEART_ZERO, Phase.PROVOKED, Phase.DODGE_MOVE, Phase.RESIST)

# scales: the most each raw number usually reaches
POOL = 7.0  # Rule 5: characteristics and pools are capped at 7
HEART = 20.0
POOL_TEN = 10.0  # Rule 18: status pools stack up to 10 (delayed damage and successes share the scale)
PENALTY = 3.0
WEAPON_DAMAGE = 5.0
WEAPON_WEIGHT = 3.0
REROLLS = 2.0
ATTACKS = 4.0
SPEED = 10.0
FREE_MOVE = 4.0
QUARTERS = 4.0  # Rule 19
ATTACK_DICE = 14.0
PENDING_ATTACK_FEATURES = 9
POGO, GRAPPLE = AttackKind.POGO, AttackKind.GRAPPLE


class StaticFeatures(NamedTuple):
    """The features of a bug that never change in a game (its profile), worked out once per game."""

    heart_span: int
    heart: float
    stamina: float
    profile: tuple[float, ...]  # might, grace, shell, weapon damage, weight, ranged, rerolls (in slot order)


class Statics(NamedTuple):
    """What the encoding of one game never recomputes: each bug's profile features and the scales."""

    bugs: tuple[StaticFeatures, ...]
    x_span: int
    y_span: int
    span: int
    imbalance_span: int
    round_span: int
    pogo_needs_pass_over: bool


def static_features(p: R.Profile) -> StaticFeatures:
    """The profile's part of the observation (Rules 5-8)."""
    w = p.weapon
    profile = (
        p.might / POOL,
        p.grace / POOL,
        p.shell / POOL,
        w.damage / WEAPON_DAMAGE,
        w.weight / WEAPON_WEIGHT,
        float(w.ranged),
        w.rerolls / REROLLS,
    )
    return StaticFeatures(max(1, p.heart), p.heart / HEART, p.stamina / POOL, profile)


def statics(st: DuelState) -> Statics:
    """The fixed part of a game's observation (computed when the game starts, shared by its clones)."""
    return Statics(
        tuple(static_features(b.p) for b in st.bugs),
        max(1, st.width - 1),
        max(1, st.height - 1),
        max(1, st.width - 1, st.height - 1),
        max(1, st.k.imbalance_max),
        max(1, st.k.duel_max_rounds),
        st.k.pogo_needs_pass_over,
    )


CONTEXT_ONE_HOT: dict[Phase, tuple[float, ...]] = {
    phase: tuple(1.0 if phase is c else 0.0 for c in CONTEXTS) for phase in Phase
}
NO_PENDING_ATTACK = (0.0,) * PENDING_ATTACK_FEATURES
_F32 = np.float32
_ONE = _F32(1.0)
RESOURCE_FEATURES = 22  # the first features of a bug's 30 (_bug_resources), then its turn's (_bug_turn)
_PACK_RESOURCES = struct.Struct(f"={RESOURCE_FEATURES}f").pack
_PACK_TURN = struct.Struct(f"={BUG_FEATURES - RESOURCE_FEATURES}f").pack
_PACK_SHARED = struct.Struct(f"={SHARED_FEATURES}f").pack
"""Pack a block's features as float32 (the C cast numpy makes too) into one bytes buffer in a single call."""
BLOCK_CACHE_LIMIT = 1 << 14  # packed blocks kept per cache (~450 bytes each: 4 bug caches ~30 MB at most)


def _bug_resources(b: Bug, f: StaticFeatures, fixed: Statics) -> tuple[float, ...]:
    """The first 22 of bug ``b``'s 30 features: its pools, conditions and grapple (then its fixed profile)."""
    return (
        b.heart / f.heart_span,
        f.heart,
        b.stamina / POOL,
        f.stamina,
        b.imbalance / fixed.imbalance_span,
        b.soul / POOL,
        b.focus_pending / POOL,
        1.0 if b.at_dd else 0.0,
        1.0 if b.unconscious else 0.0,
        1.0 if b.dd_used else 0.0,
        b.delayed / POOL_TEN,
        b.status / POOL_TEN,
        b.next_roll_penalty / PENALTY,
        0.0 if b.grappled_by < 0 else 1.0,  # NOBODY is -1
        0.0 if b.grappling < 0 else 1.0,
        *f.profile,
    )


def _bug_turn(st: DuelState, b: Bug, seat: int, fixed: Statics) -> tuple[float, ...]:
    """The last 8 of bug ``b``'s (of ``seat``) 30 features: this turn's moves and attacks, its cell, who acts first."""
    x, y = b.x, b.y
    return (
        b.attacks_made / ATTACKS,
        b.speed_left / SPEED,
        1.0 if R.pogo_allowed(b.jumped, b.over_target, fixed.pogo_needs_pass_over, b.p.weapon) else 0.0,
        b.free_move / FREE_MOVE,
        x / fixed.x_span,
        y / fixed.y_span,
        (st.cover.get((x, y), 0) / QUARTERS) if st.cover else 0.0,
        1.0 if st.order[0] == seat else 0.0,
    )


def _bug_features(st: DuelState, b: Bug, seat: int, fixed: Statics) -> tuple[float, ...]:
    """The 30 features of bug ``b`` (of ``seat``)."""
    return _bug_resources(b, fixed.bugs[seat], fixed) + _bug_turn(st, b, seat, fixed)


def _shared_features(st: DuelState, seat: int, fixed: Statics) -> tuple[float, ...]:
    """The 20 shared features, seen from ``seat``: relative position, round, context, the pending attack."""
    me, foe = st.bugs[seat], st.bugs[1 - seat]
    span = fixed.span
    dx, dy = foe.x - me.x, foe.y - me.y
    atk = st.atk
    if atk is not None:
        aw = st.bugs[atk.attacker].p.weapon
        kind = atk.kind
        pending: tuple[float, ...] = (
            atk.att_succ / POOL_TEN,
            atk.invested / POOL,
            atk.dice / ATTACK_DICE,
            aw.weight / WEAPON_WEIGHT,
            1.0 if aw.ranged else 0.0,
            1.0 if kind is POGO else 0.0,
            1.0 if kind is GRAPPLE else 0.0,
            1.0 if atk.attacker == seat else 0.0,
            1.0 if atk.att_rolled else 0.0,
        )
    else:
        pending = NO_PENDING_ATTACK
    return (
        dx / span,
        dy / span,
        max(abs(dx), abs(dy)) / span,  # Rule 15: the Chebyshev distance (R.chebyshev)
        st.round / fixed.round_span,
        1.0 if st.active == seat else 0.0,
        *CONTEXT_ONE_HOT[st.phase],
        *pending,
    )


def _packed(features: tuple[float, ...], pack: Callable[..., bytes]) -> bytes:
    """``features`` as float32 bytes clipped to [-1, 1].

    Clipping the float32 values (numpy's two ufuncs) gives the same bytes as clipping the floats first;
    a block already inside the bounds (the common case) is packed without the detour through numpy.
    """
    if max(features) <= 1.0 and min(features) >= -1.0:
        return pack(*features)
    vec = np.minimum(np.frombuffer(pack(*features), _F32), _ONE)
    return np.maximum(vec, -_ONE, out=vec).tobytes()


class Encoder:
    """The encoding of one config's duels: the fixed features and the packed blocks already built.

    An observation is five blocks, each packed once per key and then joined: each bug's resource block (its
    pools, conditions and grapple, then its fixed profile; keyed on its seat and the 13 fields it reads), its
    turn block (attacks, moves, cell; keyed on its seat, who acts first and the 7 fields it reads) — the two
    halves of its 30 features, split because their fields change independently (far fewer keys each than
    the pair's product) — and the shared block, keyed on the seat and every field it reads. The config, the arena, its
    cover and each seat's profile are fixed for the encoder (one per config, shared by every clone).
    The lookups are in :func:`encode_observation` (inlined there, one loop over the bugs); the methods here
    pack a block the first time its key is met.
    """

    def __init__(self, fixed: Statics) -> None:
        self.fixed = fixed
        self.resource_blocks: tuple[dict[tuple[int | bool, ...], bytes], ...] = ({}, {})  # by seat
        # by the seat acting first, then the bug's seat (two tuple indexings: no arithmetic on a bool per lookup)
        self.turn_blocks: tuple[tuple[dict[tuple[int | bool, ...], bytes], ...], ...] = (({}, {}), ({}, {}))
        self.shared_blocks: dict[tuple[object, ...], bytes] = {}

    def new_resource_block(self, st: DuelState, seat: int, key: tuple[int | bool, ...]) -> bytes:
        table = self.resource_blocks[seat]
        if len(table) >= BLOCK_CACHE_LIMIT:
            table.clear()
        block = table[key] = _packed(_bug_resources(st.bugs[seat], self.fixed.bugs[seat], self.fixed), _PACK_RESOURCES)
        return block

    def new_turn_block(self, st: DuelState, seat: int, key: tuple[int | bool, ...]) -> bytes:
        table = self.turn_blocks[st.order[0]][seat]
        if len(table) >= BLOCK_CACHE_LIMIT:
            table.clear()
        block = table[key] = _packed(_bug_turn(st, st.bugs[seat], seat, self.fixed), _PACK_TURN)
        return block

    def new_shared_block(self, st: DuelState, seat: int, key: tuple[object, ...]) -> bytes:
        table = self.shared_blocks
        if len(table) >= BLOCK_CACHE_LIMIT:
            table.clear()
        block = table[key] = _packed(_shared_features(st, seat, self.fixed), _PACK_SHARED)
        return block


_JOIN = bytearray().join
"""Join the five packed blocks into one fresh bytearray (the separator is empty and never changed): one call, no
intermediate ``bytes`` concatenations and no copy of the joined bytes into the array's buffer."""


def encode_observation(st: DuelState, seat: int) -> np.ndarray:
    """The flat, normalised view of ``seat`` (its own bug first); every entry in [-1, 1].

    The five packed blocks (:class:`Encoder`) are joined into a fresh bytearray read as a (writeable)
    float32 array; almost every combination of blocks is new, so the joined vector is not kept. The block
    lookups are inlined here, the two bugs' in one loop (no call per bug or per block): this runs every step.
    """
    enc = st.obs_encoder
    bugs = st.bugs
    foe = 1 - seat
    first = st.order[0]
    me_bug, foe_bug = bugs[seat], bugs[foe]
    atk = st.atk
    dx, dy = foe_bug.x - me_bug.x, foe_bug.y - me_bug.y
    if atk is None:  # every field _shared_features reads
        key: tuple[object, ...] = (seat, dx, dy, st.round, st.active, st.phase)
    else:
        key = (
            seat,
            dx,
            dy,
            st.round,
            st.active,
            st.phase,
            atk.attacker,
            atk.kind,
            atk.att_succ,
            atk.invested,
            atk.dice,
            atk.att_rolled,
        )
    shared = enc.shared_blocks.get(key) or enc.new_shared_block(st, seat, key)
    turn_blocks = enc.turn_blocks[first]
    blocks: list[bytes] = []
    for s in (seat, foe):  # each bug's resource block, then its turn block (a packed block is never empty)
        b = bugs[s]
        rkey = (  # every field _bug_resources reads (plain attribute loads: cheaper than an attrgetter)
            b.heart,
            b.stamina,
            b.imbalance,
            b.soul,
            b.focus_pending,
            b.at_dd,
            b.unconscious,
            b.dd_used,
            b.delayed,
            b.status,
            b.next_roll_penalty,
            b.grappled_by,
            b.grappling,
        )
        tkey = (b.attacks_made, b.speed_left, b.jumped, b.over_target, b.free_move, b.x, b.y)  # what _bug_turn reads
        blocks += (
            enc.resource_blocks[s].get(rkey) or enc.new_resource_block(st, s, rkey),
            turn_blocks[s].get(tkey) or enc.new_turn_block(st, s, tkey),
        )
    blocks.append(shared)
    return np.frombuffer(_JOIN(blocks), _F32)  # positional dtype: cheaper than the keyword

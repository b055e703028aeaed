"""Hallownest observation: the flat, normalised view of the duel from one seat (every entry in [-1, 1]).

30 features of the seat's own bug, 30 of the opponent's, 20 shared. Each raw number is divided by a
scale (the most it usually reaches) and the vector is clipped to [-1, 1].
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

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
BLOCK_CACHE_LIMIT = 1 << 14  # packed pieces kept in an encoder's trees before they start afresh (a few MB at most)


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


Tree = list[Any]
"""A tree of packed pieces: nested lists indexed by the values of the fields a piece reads, one level per field,
the piece at the last level (``None`` where no piece is packed yet)."""
GROW = 0
"""The size of a level that grows to the largest value met: a field that is never negative (every count, pool and
flag the rules keep at 0 or more, every cell coordinate)."""


def _plant(root: Tree, path: tuple[int, ...], sizes: tuple[int, ...], piece: bytes) -> None:
    """Store ``piece`` in ``root`` at ``root[path[0]][path[1]]...`` (where the lookup finds it), adding levels.

    ``sizes[i]`` is the size of level ``i``: ``GROW`` for a field that is never negative (the level grows to hold
    its largest value), or a fixed size for a field that may be negative (a seat or ``NOBODY`` = -1, a cell
    difference): such a level is made at its size once and never grows, so a negative value indexes it from the
    end as the lookup's subscript does, on a slot no other value of the field reads (each such field keeps to
    ``-(size // 2) .. size // 2``).
    """
    node = root
    last = len(path) - 1
    for i, value in enumerate(path):
        if not sizes[i] and value >= len(node):  # a growing level, not grown that far yet
            node.extend([None] * (value + 1 - len(node)))
        if i == last:
            node[value] = piece
            return
        child = node[value]
        if child is None:
            child = node[value] = [None] * sizes[i + 1]  # [] for a growing level
        node = child


def _find(tree: Tree, path: tuple[int, ...]) -> bytes | None:
    """The piece at ``path`` in ``tree`` (the subscripts :func:`encode_observation` makes), or ``None``."""
    node: Any = tree
    try:
        for value in path:
            node = node[value]
    except (IndexError, TypeError):  # a level not grown that far, or not made yet
        return None
    return node


_STRUCTS: dict[int, Callable[..., bytes]] = {}


def _pack(features: tuple[float, ...]) -> bytes:
    """``features`` as float32 bytes clipped to [-1, 1] (:func:`_packed` with a struct of their length)."""
    pack = _STRUCTS.get(len(features))
    if pack is None:
        pack = _STRUCTS[len(features)] = struct.Struct(f"={len(features)}f").pack
    return _packed(features, pack)


POOLS = slice(0, 6)  # of _bug_resources: Heart, Stamina (each with its maximum), Imbalance, Soul
CONDITIONS = slice(6, RESOURCE_FEATURES)  # focus, Death's Door, unconscious, delayed, status, penalty, grapple; profile
MOVES = slice(0, 4)  # of _bug_turn: attacks made, Speed left, pogo open, free move
CELL = slice(4, BUG_FEATURES - RESOURCE_FEATURES)  # the cell, its cover, who acts first
POSITION = slice(0, 3)  # of _shared_features: where the foe stands
CONTEXT = slice(3, 3 + 2 + len(CONTEXTS))  # the round, whose turn, the decision context
PENDING = slice(3 + 2 + len(CONTEXTS), SHARED_FEATURES)  # the pending attack
NO_PENDING_PIECE = _pack(NO_PENDING_ATTACK)
CONDITION_SIZES = (GROW,) * 7 + (3, 3)  # grappled_by and grappling: a seat (0, 1) or NOBODY (-1, the last slot)


class Encoder:
    """The encoding of one config's duels: the fixed features and the packed pieces already built.

    An observation is eleven pieces, each packed once per combination of the fields it reads, then joined. Each
    bug's 30 features are four: its pools (4 fields), its conditions with its fixed profile (9 fields), this
    turn's moves (5 fields) and its cell (2 fields, and who acts first); the 20 shared ones three: the foe's
    relative position, the round with whose turn and the decision context, the pending attack (6 fields). The
    pieces are split by how their fields change, so that each has few combinations (a new combination costs a
    pack; far fewer are met than combinations of whole blocks).

    The pieces are kept in one :data:`Tree` per kind and seat (per who acts first and seat for the cell), so
    finding one is a subscript per field: no key tuple to build, hash and compare (that cost ~2,000 instructions
    for a block of 13 fields). Every field indexing a tree is an int or bool the rules never take below 0
    (Heart, Stamina, Soul, Imbalance, pools, counts, cells, dice, successes), except the grapple seats
    (``NOBODY`` is -1) and the relative position ``dx, dy`` (``-span .. span``), whose levels have a fixed size
    that a negative value indexes from the end (:func:`_plant`). The config, the arena, its cover and each seat's
    profile are fixed for the encoder (one per config, shared by every clone). The lookups are inlined in
    :func:`encode_observation`; :meth:`fill` packs the pieces met for the first time.
    """

    __slots__ = ("fixed", "pools", "conditions", "moves", "cells", "position", "context", "pending", "_sizes", "_held")

    def __init__(self, fixed: Statics) -> None:
        self.fixed = fixed
        self.pools: list[Tree] = [[], []]  # by seat, as every tree but the cells'
        self.conditions: list[Tree] = [[], []]
        self.moves: list[Tree] = [[], []]
        self.cells: list[list[Tree]] = [[[], []], [[], []]]  # by the seat acting first, then the bug's seat
        self.position: list[Tree] = [[None] * (2 * fixed.x_span + 1), [None] * (2 * fixed.x_span + 1)]
        self.context: list[Tree] = [[], []]
        self.pending: list[Tree] = [[], []]
        self._sizes = (2 * fixed.x_span + 1, 2 * fixed.y_span + 1)  # dx and dy keep to -span .. span
        self._held = 0  # pieces packed since the trees started afresh

    def _piece(
        self,
        trees: list[Tree],
        seat: int,
        path: tuple[int, ...],
        sizes: tuple[int, ...],
        features: Callable[..., tuple[float, ...]],
        args: tuple[Any, ...],
        part: slice,
    ) -> bytes:
        """The piece at ``path`` in ``trees[seat]``; if it is new, ``features(*args)[part]`` packed and planted there.

        The features are worked out only for a new piece: a miss of :func:`encode_observation` looks up all eleven
        pieces again here, and most of them are found.
        """
        piece = _find(trees[seat], path)
        if piece is None:
            piece = _pack(features(*args)[part])
            _plant(trees[seat], path, sizes, piece)
            self._held += 1
        return piece

    def fill(self, st: DuelState, seat: int) -> bytearray:
        """The joined pieces of ``seat``'s observation, each looked up again and packed (and kept) if it is new.

        The plain features of a new piece's block are worked out whole and sliced (this runs only when a piece is new).
        Past ``BLOCK_CACHE_LIMIT`` pieces every tree starts afresh (a long sweep of configs meets many).
        """
        if self._held >= BLOCK_CACHE_LIMIT:
            self.__init__(self.fixed)  # type: ignore[misc]
        fixed = self.fixed
        first = st.order[0]
        grow = (GROW,) * 6
        pieces: list[bytes] = []
        for s in (seat, 1 - seat):
            b = st.bugs[s]
            res = (b, fixed.bugs[s], fixed)  # _bug_resources' arguments
            turn = (st, b, s, fixed)  # _bug_turn's
            conditions = (
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
            moves = (b.attacks_made, b.speed_left, b.jumped, b.over_target, b.free_move)
            pieces += (
                self._piece(self.pools, s, (b.heart, b.stamina, b.imbalance, b.soul), grow, _bug_resources, res, POOLS),
                self._piece(self.conditions, s, conditions, CONDITION_SIZES, _bug_resources, res, CONDITIONS),
                self._piece(self.moves, s, moves, grow, _bug_turn, turn, MOVES),
                self._piece(self.cells[first], s, (b.x, b.y), grow, _bug_turn, turn, CELL),
            )
        me, foe = st.bugs[seat], st.bugs[1 - seat]
        shared = (st, seat, fixed)  # _shared_features' arguments
        # the position tree's root is its dx level (a fixed size); the seat picks the tree
        path: tuple[int, ...] = (foe.x - me.x, foe.y - me.y)
        pieces.append(self._piece(self.position, seat, path, self._sizes, _shared_features, shared, POSITION))
        path = (st.round, st.active, st.phase)
        pieces.append(self._piece(self.context, seat, path, grow, _shared_features, shared, CONTEXT))
        atk = st.atk
        if atk is None:
            pieces.append(NO_PENDING_PIECE)
        else:
            path = (atk.attacker, atk.kind, atk.att_succ, atk.invested, atk.dice, atk.att_rolled)
            pieces.append(self._piece(self.pending, seat, path, grow, _shared_features, shared, PENDING))
        return _JOIN(pieces)


_JOIN = bytearray().join
"""Join the packed pieces into one fresh bytearray (the separator is empty and never changed): one call, no
intermediate ``bytes`` concatenations and no copy of the joined bytes into the array's buffer."""
_FROMBUFFER = np.frombuffer
_FLOAT32 = np.dtype(np.float32)  # the dtype itself: no conversion from the scalar type per call


def encode_observation(st: DuelState, seat: int) -> np.ndarray:
    """The flat, normalised view of ``seat`` (its own bug first); every entry in [-1, 1].

    The eleven packed pieces (:class:`Encoder`) are joined into a fresh bytearray read as a (writeable) float32
    array; almost every combination of pieces is new, so the joined vector is not kept. Each piece is found by one
    subscript per field it reads, in the order :meth:`Encoder.fill` plants it in; a piece not packed yet ends the
    lookups in an ``IndexError`` (a level not grown that far) or a ``TypeError`` (a level not made, ``None[...]``,
    or a ``None`` piece in the join), and :meth:`Encoder.fill` packs it. A bug's conditions piece is read from the
    bug itself while it holds one (``Bug.conditions_piece``, dropped by the rules that change a condition) and
    kept there when found. This runs every step: no call per bug or per piece.
    """
    enc = st.obs_encoder
    bugs = st.bugs
    foe = 1 - seat
    me, them = bugs[seat], bugs[foe]
    cells = enc.cells[st.order[0]]
    atk = st.atk
    try:
        # each bug's conditions piece is kept on the bug (Bug.conditions_piece) until one of its nine conditions
        # changes: they rarely do, and three of them are flags and two seats that may be NOBODY (-1), which a list
        # subscript does not specialise for
        mine, theirs = me.conditions_piece, them.conditions_piece
        if mine is None:
            mine = me.conditions_piece = enc.conditions[seat][me.focus_pending][me.at_dd][me.unconscious][me.dd_used][
                me.delayed
            ][me.status][me.next_roll_penalty][me.grappled_by][me.grappling]
        if theirs is None:
            theirs = them.conditions_piece = enc.conditions[foe][them.focus_pending][them.at_dd][them.unconscious][
                them.dd_used
            ][them.delayed][them.status][them.next_roll_penalty][them.grappled_by][them.grappling]
        # one list display of the eleven pieces: no partial tuple, no starred unpacking into it
        joined = _JOIN(
            [
                enc.pools[seat][me.heart][me.stamina][me.imbalance][me.soul],
                mine,
                enc.moves[seat][me.attacks_made][me.speed_left][me.jumped][me.over_target][me.free_move],
                cells[seat][me.x][me.y],
                enc.pools[foe][them.heart][them.stamina][them.imbalance][them.soul],
                theirs,
                enc.moves[foe][them.attacks_made][them.speed_left][them.jumped][them.over_target][them.free_move],
                cells[foe][them.x][them.y],
                enc.position[seat][them.x - me.x][them.y - me.y],
                enc.context[seat][st.round][st.active][st.phase],
                NO_PENDING_PIECE
                if atk is None
                else enc.pending[seat][atk.attacker][atk.kind][atk.att_succ][atk.invested][atk.dice][atk.att_rolled],
            ]
        )
    except (IndexError, TypeError):  # a piece met for the first time
        joined = enc.fill(st, seat)
    return _FROMBUFFER(joined, _FLOAT32)

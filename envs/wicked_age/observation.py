"""In a Wicked Age observation encoding: a flat float32 vector in [0, 1] for one seat.

Layout: one block of ``PARTY_FEATURES`` per party slot (the observing seat first, then the others in seat
order; ``party_slots(n)`` slots, at least ``MIN_PARTY_SLOTS``, absent parties all zeros), then the global
features: round and conflict progress, the decision kind (one-hot), the forms that fit the seat's action,
its first picked form, the standing challenge's roll, the pending offer's kind and the seat's part in a
pending consequence.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from envs.wicked_age.actions import DECISION_CONTEXTS, MIN_PARTY_SLOTS, Ctx, party_slots
from envs.wicked_age.config import MAX_DIE, MAX_PARTIES
from envs.wicked_age.rules import SHEET_SLOTS, Offer, PcForm, advantage_dice
from envs.wicked_age.stages import Stage, Terms

if TYPE_CHECKING:
    from envs.wicked_age.conflict import WickedAgeState

PARTY_FEATURES = 22
"""Per party: present, in chapter, in conflict, NPC, six sheet dice, three rolled dice, advantage dice,
advantage over me / mine over it, owe entries, challenged, moved, opening roll (two), is the challenger."""
GLOBAL_FEATURES = 2 + len(DECISION_CONTEXTS) + len(PcForm) + len(PcForm) + 2 + len(Offer) + 2
DIE_NORM = 12.0
ROLL_NORM = 40.0
ADVANTAGE_NORM = 6.0
OWE_NORM = 5.0
ROLLED_DICE_SHOWN = 3


def observation_size(parties: int) -> int:
    """The length of the observation of a conflict among ``parties`` parties."""
    return party_slots(parties) * PARTY_FEATURES + GLOBAL_FEATURES


OBS_SIZE = observation_size(MIN_PARTY_SLOTS)
"""The observation length of the duel and of a melee of up to four parties (123)."""

_STAGE_BUILD = Stage.BUILD
_STAGE_TURN = Stage.TURN
_TERMS_OFFERED = Terms.OFFERED
_FLOAT32 = np.dtype(np.float32)
_JOIN = bytearray().join
"""``bytearray.join``: a new bytearray of the parts (one copy, where ``bytearray(b"".join(...))`` makes two)."""
_FIRST_CHANCE = int(Ctx.FORMS_DRAW)
"""Contexts below this one are decisions (``Ctx.is_decision`` without a property call per step)."""
_CONTEXTS = len(DECISION_CONTEXTS)
_CONTEXT_INDEX = {int(c): i for i, c in enumerate(DECISION_CONTEXTS)}
_FORMS = len(PcForm)
_OFFERS = len(Offer)
_FLAG = (0.0, 1.0)
_DIE = tuple(d / DIE_NORM for d in range(MAX_DIE + 1))
"""``d / DIE_NORM`` for every die size a config may name (the same doubles the division gives)."""
_ABSENT = (0.0,) * PARTY_FEATURES
_NO_FORMS = (0.0,) * _FORMS
_HIDDEN_SHEET = (0,) * len(SHEET_SLOTS)
"""Another seat's sheet during the build: nothing shown."""


def _one_hot(size: int, index: int | None) -> tuple[float, ...]:
    return tuple(1.0 if i == index else 0.0 for i in range(size))


_CONTEXT_ONE_HOT: tuple[tuple[float, ...], ...] = tuple(
    _one_hot(_CONTEXTS, _CONTEXT_INDEX.get(node) if node < _FIRST_CHANCE else None) for node in range(max(Ctx) + 1)
)
"""The decision-kind features of every node id (a chance node or the end: all zeros), built once."""
_FORM_ONE_HOT: tuple[tuple[float, ...], ...] = tuple(_one_hot(_FORMS, f) for f in range(_FORMS))
"""The first-picked-form features of each form id."""
_OFFER_ONE_HOT: tuple[tuple[float, ...], ...] = tuple(_one_hot(_OFFERS, k) for k in range(_OFFERS))
"""The pending-offer features of each offer kind."""
_NO_OFFER = (0.0,) * _OFFERS
_ROTATIONS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple((seat + k) % n for k in range(n)) for seat in range(n)) for n in range(MAX_PARTIES + 1)
)
"""The party slots' seats as ``seat`` sees a conflict of ``n`` parties (itself first, then the others in seat order),
by ``n`` and ``seat``."""
_ABSENT_BYTES: tuple[bytes, ...] = tuple(
    struct.pack(f"{len(_ABSENT)}f", *_ABSENT) * (party_slots(n) - n) for n in range(MAX_PARTIES + 1)
)
"""The float32 bytes of the absent party slots of a conflict of ``n`` parties, by ``n``."""

# The blocks of an observation as float32 bytes, each cached by the values it is computed from (a game meets the
# same few of each again and again; split this way, each cache stays small where whole rows would not). The
# sheet block is the exception: packed directly (see :func:`public_block`).
_CACHE_LIMIT = 1 << 15
_Key = tuple[Any, ...]
_ROLLED: dict[tuple[int, ...], bytes] = {}
"""A party's rolled dice (the first ``ROLLED_DICE_SHOWN``, zeros after), by its dice tuple."""
_STANDING: dict[_Key, bytes] = {}
"""A party's advantage dice, advantages, owe entries, challenged and moved, by those values."""
_READINGS: dict[_Key, bytes] = {}
"""A party's opening roll (two features) and the is-the-challenger flag, by roll key and flag."""
_PROGRESS: dict[_Key, bytes] = {}
"""Round and conflict progress and the decision kind, by the round, conflict, their limits and the node."""
_FORMS_SEEN: dict[_Key, bytes] = {}
"""The forms that fit the seat's action and its first picked form, by the draw and the form."""
_PENDING: dict[_Key, bytes] = {}
"""The standing challenge's roll, the pending offer's kind and the seat's part in a consequence."""
_CACHES = (_ROLLED, _STANDING, _READINGS, _PROGRESS, _FORMS_SEEN, _PENDING)


def _packed(cache: dict[Any, bytes], key: Any, *v: float) -> bytes:
    """Store and return ``v`` as float32 bytes under ``key``, each feature clipped to at most 1.

    ``struct`` casts a double to float32 as numpy does, and the cast keeps order: clipping the doubles is
    clipping the floats (``np.minimum`` of the packed array, as the encoder did before the block caches).
    """
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    out = cache[key] = struct.pack(f"{len(v)}f", *[x if x < 1.0 else 1.0 for x in v])
    return out


_SHEET_PACK = struct.Struct(f"{4 + len(SHEET_SLOTS)}f").pack
_DIE_CLIPPED = tuple(x if x < 1.0 else 1.0 for x in _DIE)
"""``_DIE`` clipped to 1 as :func:`_packed` clips (a config's dice above d12 read as 1)."""


def _rolled(dice: tuple[int, ...]) -> bytes:
    n = len(dice)
    return _packed(
        _ROLLED,
        dice,
        _DIE[dice[0]] if n else 0.0,
        _DIE[dice[1]] if n > 1 else 0.0,
        _DIE[dice[2]] if n > 2 else 0.0,  # ROLLED_DICE_SHOWN
    )


def _standing(key: _Key) -> bytes:
    adv_dice, held_over_me, mine_over_it, owe_net, challenged, moved = key
    flag = _FLAG
    return _packed(_STANDING, key, adv_dice / ADVANTAGE_NORM, flag[held_over_me], flag[mine_over_it],
                   owe_net / OWE_NORM, flag[challenged], flag[moved])  # fmt: skip


def _reading(key: _Key) -> bytes:
    rkey, challenger = key
    if rkey is None:
        return _packed(_READINGS, key, 0.0, 0.0, _FLAG[challenger])
    return _packed(_READINGS, key, rkey[0] / ROLL_NORM, rkey[1] / ROLL_NORM, _FLAG[challenger])


def _progress(key: _Key) -> bytes:
    round_no, max_rounds, conflict_no, max_conflicts, node = key
    return _packed(_PROGRESS, key, round_no / max_rounds, conflict_no / max_conflicts, *_CONTEXT_ONE_HOT[node])


def _forms_seen(key: _Key) -> bytes:
    available, first = key
    v = [0.0] * _FORMS
    for f in available:
        v[f] = 1.0
    return _packed(_FORMS_SEEN, key, *v, *(_NO_FORMS if first is None else _FORM_ONE_HOT[first]))


def _pending(key: _Key) -> bytes:
    crkey, kind, won, lost = key
    roll = (0.0, 0.0) if crkey is None else (crkey[0] / ROLL_NORM, crkey[1] / ROLL_NORM)
    return _packed(_PENDING, key, *roll, *(_NO_OFFER if kind is None else _OFFER_ONE_HOT[kind]), _FLAG[won],
                   _FLAG[lost])  # fmt: skip


def public_block(state: WickedAgeState, p: int, sheet: Sequence[int] | None = None) -> bytes:
    """Party ``p``'s sheet block and rolled-dice block as every other seat sees them.

    Both read only the party's sheet dice (during the build: a hidden sheet), chapter, conflict and NPC flags
    and its rolled dice, the same for every other observer: the state keeps the result in ``_public`` until one
    of those changes (see :meth:`WickedAgeState._sheet_changed`; the build's end starts a conflict, which resets
    them all): this stores it there. With ``sheet`` (during the build: the seat's own draft) the block shows
    that sheet and is not kept.

    The sheet block (present, in chapter, in conflict and NPC flags, the six dice) is packed directly, not
    cached: sheets are many (builds, consequences) and a block is packed only when it changed; a cache keyed on
    the sheet missed at a third of the steps of a melee's first thousands.
    """
    ch = state.chars[p]
    rd = state.roll_dice[p]
    dice = sheet if sheet is not None else _HIDDEN_SHEET if state.stage == _STAGE_BUILD else ch.dice
    block = _SHEET_PACK(
        1.0,
        _FLAG[state.in_chapter[p]],
        _FLAG[state.in_conflict[p]],
        _FLAG[ch.npc],
        *map(_DIE_CLIPPED.__getitem__, dice),
    ) + (_ROLLED.get(rd) or _rolled(rd))
    if sheet is None:
        state._public[p] = block
    return block


def encode_observation(state: WickedAgeState, seat: int) -> np.ndarray:
    """Flat float32 in [0, 1]: parties (self first), then the round, decision and pending offer.

    The blocks of features are float32 bytes cached by the values they are computed from (see ``_CACHES``;
    the sheet is packed directly): an encoding gathers those values, looks its blocks up and joins them into
    a fresh array, several times cheaper than computing and packing every feature. Outside the build a
    party's sheet and rolled dice are the state's dirty-tracked ``_public`` blocks (:func:`public_block`),
    re-packed only after they change.
    The returned array is the caller's to keep.
    """
    n = state.num_players
    stage = state.stage
    in_turns = stage == _STAGE_TURN
    challenger = state.challenger
    lead = challenger if in_turns else -1  # the party flagged as the challenger (none outside the turns)
    rolls, adv, adv_seat = state.rolls, state.adv, state.adv[seat]
    in_conflict, challenged, moved, owe = state.in_conflict, state.challenged, state.moved, state.owe
    keep, cashed = state._keep_advantage, state.cashed
    building = stage == _STAGE_BUILD
    public = state._public
    standing, readings = _STANDING, _READINGS
    pending = state.pending_cash[seat]
    parts: list[bytes] = []
    for p in _ROTATIONS[n][seat]:
        if building and p == seat:  # during the (simultaneous) build a seat sees its own draft, the others none
            block = public_block(state, p, state.drafts[p])
        else:
            block = public[p] or public_block(state, p)  # a kept block is never empty (None: stale)
        holds = adv[p]
        cash = cashed[p]
        dice = advantage_dice(holds, in_conflict, keep, cash) if cash or True in holds else 0
        owed = owe.count(p) if owe else 0
        if pending and p == seat:  # a seat sees its own undecided cashing only
            dice += pending * state.rules.dice_per_entry
            owed -= pending
        key: _Key = (dice, holds[seat], adv_seat[p], owed, challenged[p], moved[p])
        r = rolls[p]
        rkey = (None if r is None else r.key, lead == p)
        # the party's three blocks in one extend (three appends are three calls)
        parts += block, standing.get(key) or _standing(key), readings.get(rkey) or _reading(rkey)
    key = (state.round_no, state.rules.max_rounds, state.conflict_no, state.max_conflicts, state.node)
    picks = state.picks[seat]
    fkey = (state.available[seat], picks[0] if picks else None)
    cr = rolls[challenger] if in_turns and challenger is not None else None
    conseq = state.conseq
    offer = state.offer
    # the pending offer's kind (:meth:`WickedAgeState.pending_offer_kind`, inlined)
    kind = offer.kind if offer is not None else state.terms_offer if state.terms is _TERMS_OFFERED else None
    pkey = (
        None if cr is None else cr.key,
        kind,
        conseq is not None and conseq.winner == seat,
        conseq is not None and conseq.loser == seat,
    )
    parts += (
        _ABSENT_BYTES[n],
        _PROGRESS.get(key) or _progress(key),
        _FORMS_SEEN.get(fkey) or _forms_seen(fkey),
        _PENDING.get(pkey) or _pending(pkey),
    )
    return np.frombuffer(_JOIN(parts), _FLOAT32)  # joined straight into a fresh, writable bytearray

"""In a Wicked Age observation encoding: a flat float32 vector in [0, 1] for one seat.

Layout: one block of ``PARTY_FEATURES`` per party slot (the observing seat first, then the others in seat
order; ``party_slots(n)`` slots, at least ``MIN_PARTY_SLOTS``, absent parties all zeros), then the global
features: round and conflict progress, the decision kind (one-hot), the forms that fit the seat's action,
its first picked form, the standing challenge's roll, the pending offer's kind and the seat's part in a
pending consequence.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

import numpy as np

from envs.wicked_age.actions import DECISION_CONTEXTS, MIN_PARTY_SLOTS, Ctx, party_slots
from envs.wicked_age.config import MAX_DIE, MAX_PARTIES
from envs.wicked_age.rules import SHEET_SLOTS, Offer, PcForm, advantage_dice

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
_FITTING: dict[tuple[int, ...], tuple[float, ...]] = {}
"""The fitting-forms features of each set of forms met so far (a draw is one of at most 64 sorted tuples)."""
_ROLLED: dict[tuple[int, ...], tuple[float, float, float]] = {}
"""The rolled-dice features (the first ``ROLLED_DICE_SHOWN`` dice, zeros after) of each dice tuple met so far."""


def _fitting(forms: tuple[int, ...]) -> tuple[float, ...]:
    v = [0.0] * _FORMS
    for f in forms:
        v[f] = 1.0
    out = _FITTING[forms] = tuple(v)
    return out


def _rolled(dice: tuple[int, ...]) -> tuple[float, float, float]:
    n = len(dice)
    out = _ROLLED[dice] = (
        _DIE[dice[0]] if n else 0.0,
        _DIE[dice[1]] if n > 1 else 0.0,
        _DIE[dice[2]] if n > 2 else 0.0,  # ROLLED_DICE_SHOWN
    )
    return out


_ROW = struct.Struct(f"{PARTY_FEATURES}f")
_GLOBAL = struct.Struct(f"{GLOBAL_FEATURES}f")
_ABSENT_BYTES: tuple[bytes, ...] = tuple(_ROW.pack(*_ABSENT) * (party_slots(n) - n) for n in range(MAX_PARTIES + 1))
"""The float32 bytes of the absent party slots of a conflict of ``n`` parties, by ``n``."""
_CACHE_LIMIT = 1 << 14
_ROWS: dict[tuple[Any, ...], bytes] = {}
"""The float32 bytes of a party's block, by every value the block is computed from (see ``_row``)."""
_GLOBALS: dict[tuple[Any, ...], bytes] = {}
"""The float32 bytes of the global block, by every value it is computed from (see ``_global``)."""


def _packed(packer: struct.Struct, v: list[float]) -> bytes:
    """``v`` as float32 bytes, each feature clipped to at most 1.

    ``struct`` casts a double to float32 as numpy does, and the cast keeps order: clipping the doubles is
    clipping the floats (``np.minimum`` of the packed array, as the encoder did before the block caches).
    """
    return packer.pack(*[x if x < 1.0 else 1.0 for x in v])


def _row(key: tuple[Any, ...]) -> bytes:
    """A party's block from its cache key (a miss of ``_ROWS``: the features as the rules card lists them)."""
    (s0, s1, s2, s3, s4, s5, rd, rkey, chapter, conflict, npc, adv_dice, held_over_me, mine_over_it, owe_net,
     challenged, moved, challenger) = key  # fmt: skip
    flag, die = _FLAG, _DIE
    v = [1.0, flag[chapter], flag[conflict], flag[npc], die[s0], die[s1], die[s2], die[s3], die[s4], die[s5]]
    v += _ROLLED.get(rd) or _rolled(rd)
    v += (
        adv_dice / ADVANTAGE_NORM,
        flag[held_over_me],
        flag[mine_over_it],
        owe_net / OWE_NORM,
        flag[challenged],
        flag[moved],
        0.0 if rkey is None else rkey[0] / ROLL_NORM,
        0.0 if rkey is None else rkey[1] / ROLL_NORM,
        flag[challenger],
    )
    if len(_ROWS) >= _CACHE_LIMIT:
        _ROWS.clear()
    out = _ROWS[key] = _packed(_ROW, v)
    return out


def _global(key: tuple[Any, ...]) -> bytes:
    """The global block from its cache key (a miss of ``_GLOBALS``)."""
    round_no, max_rounds, conflict_no, max_conflicts, node, available, first, crkey, kind, won, lost = key
    v = [round_no / max_rounds, conflict_no / max_conflicts]
    v += _CONTEXT_ONE_HOT[node]
    v += _FITTING.get(available) or _fitting(available)
    v += _NO_FORMS if first is None else _FORM_ONE_HOT[first]
    v += (0.0, 0.0) if crkey is None else (crkey[0] / ROLL_NORM, crkey[1] / ROLL_NORM)
    v += _NO_OFFER if kind is None else _OFFER_ONE_HOT[kind]
    v += (_FLAG[won], _FLAG[lost])
    if len(_GLOBALS) >= _CACHE_LIMIT:
        _GLOBALS.clear()
    out = _GLOBALS[key] = _packed(_GLOBAL, v)
    return out


def encode_observation(state: WickedAgeState, seat: int) -> np.ndarray:
    """Flat float32 in [0, 1]: parties (self first), then the round, decision and pending offer.

    Each party's block and the global block are float32 bytes cached by the values they are computed from
    (a game meets the same few blocks again and again): an encoding gathers those values, looks its blocks
    up and joins them into a fresh array, several times cheaper than computing and packing every feature.
    Features are clipped to at most 1 as the blocks are packed. The returned array is the caller's to keep.
    """
    n = state.num_players
    in_turns = state.in_turns
    challenger = state.challenger
    rows, row_of = _ROWS, _row
    chars, in_chapter, in_conflict = state.chars, state.in_chapter, state.in_conflict
    roll_dice, rolls, adv, adv_seat = state.roll_dice, state.rolls, state.adv, state.adv[seat]
    challenged, moved, owe = state.challenged, state.moved, state.owe
    keep, cashed = state._keep_advantage, state.cashed
    building = state.drafts if state.in_build else None
    parts: list[bytes] = []
    append = parts.append
    for k in range(n):
        p = seat + k
        if p >= n:
            p -= n
        ch = chars[p]
        # during the (simultaneous) build a seat sees only its own draft
        s0, s1, s2, s3, s4, s5 = (
            ch.dice if building is None else (building[p] if p == seat else _HIDDEN_SHEET)
        )  # SHEET_SLOTS
        r = rolls[p]
        holds = adv[p]
        dice = advantage_dice(holds, in_conflict, keep, cashed[p]) if cashed[p] or True in holds else 0
        owed = owe.count(p) if owe else 0
        if k == 0:  # a seat sees its own undecided cashing only
            pending = state.pending_cash[seat]
            if pending:
                dice += pending * state.rules.dice_per_entry
                owed -= pending
        key = (
            s0,
            s1,
            s2,
            s3,
            s4,
            s5,
            roll_dice[p],
            None if r is None else r.key,
            in_chapter[p],
            in_conflict[p],
            ch.npc,
            dice,
            holds[seat],
            adv_seat[p],
            owed,
            challenged[p],
            moved[p],
            in_turns and challenger == p,
        )
        append(rows.get(key) or row_of(key))
    append(_ABSENT_BYTES[n])
    picks = state.picks[seat]
    cr = rolls[challenger] if in_turns and challenger is not None else None
    conseq = state.conseq
    gkey = (
        state.round_no,
        state.rules.max_rounds,
        state.conflict_no,
        state.max_conflicts,
        state.node,
        state.available[seat],
        picks[0] if picks else None,
        None if cr is None else cr.key,
        state.pending_offer_kind(),
        conseq is not None and conseq.winner == seat,
        conseq is not None and conseq.loser == seat,
    )
    append(_GLOBALS.get(gkey) or _global(gkey))
    return np.frombuffer(bytearray(b"".join(parts)), dtype=np.float32)

"""In a Wicked Age observation encoding: a flat float32 vector in [0, 1] for one seat.

Layout: one block of ``PARTY_FEATURES`` per party slot (the observing seat first, then the others in seat
order; ``party_slots(n)`` slots, at least ``MIN_PARTY_SLOTS``, absent parties all zeros), then the global
features: round and conflict progress, the decision kind (one-hot), the forms that fit the seat's action,
its first picked form, the standing challenge's roll, the pending offer's kind and the seat's part in a
pending consequence.
"""

from __future__ import annotations

import struct
from functools import lru_cache
from typing import TYPE_CHECKING

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
_ONE = np.float32(1.0)
_ABSENT = (0.0,) * PARTY_FEATURES
_NO_FORMS = (0.0,) * _FORMS
_ABSENT_SLOTS: tuple[tuple[float, ...], ...] = tuple(_ABSENT * (party_slots(n) - n) for n in range(MAX_PARTIES + 1))
"""The zeros of the absent party slots of a conflict of ``n`` parties, by ``n``."""
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


@lru_cache(maxsize=16)
def _buffer(size: int) -> tuple[struct.Struct, bytearray, np.ndarray]:
    """The packer, the preallocated byte buffer and its float32 view for observations of ``size`` features.

    One per process and size, shared by every state: an encoding fills it and copies it out at once (threads
    that encode at the same time would each need their own).
    """
    buf = bytearray(4 * size)
    return struct.Struct(f"{size}f"), buf, np.frombuffer(buf, dtype=np.float32)


def encode_observation(state: WickedAgeState, seat: int) -> np.ndarray:
    """Flat float32 in [0, 1]: parties (self first), then the round, decision and pending offer.

    The features are gathered as Python floats, packed to float32 in one call into a preallocated buffer
    (``struct`` casts a double to float32 as numpy does) and clipped into a fresh array, several times
    cheaper than setting array items one by one. The returned array is the caller's to keep.
    """
    n = state.num_players
    in_turns = state.in_turns
    challenger = state.challenger
    flag, die, rolled_of, rolled_get = _FLAG, _DIE, _rolled, _ROLLED.get
    chars, in_chapter, in_conflict = state.chars, state.in_chapter, state.in_conflict
    roll_dice, rolls, adv, adv_seat = state.roll_dice, state.rolls, state.adv, state.adv[seat]
    challenged, moved, owe = state.challenged, state.moved, state.owe
    per_entry, keep, cashed = state.rules.dice_per_entry, state.rules.keep_advantage, state.cashed
    building = state.drafts if state.in_build else None
    own_pending = state.pending_cash[seat]
    v: list[float] = []
    for k in range(n):
        p = seat + k
        if p >= n:
            p -= n
        ch = chars[p]
        # during the (simultaneous) build a seat sees only its own draft
        s0, s1, s2, s3, s4, s5 = (
            ch.dice if building is None else (building[p] if p == seat else _HIDDEN_SHEET)
        )  # SHEET_SLOTS
        rd = roll_dice[p]
        pending = own_pending if k == 0 else 0  # a seat sees its own undecided cashing only (k 0: the seat)
        r = rolls[p]
        if r is None:
            k0 = k1 = 0.0
        else:
            key = r.key
            k0, k1 = key[0] / ROLL_NORM, key[1] / ROLL_NORM
        v += (
            1.0,
            flag[in_chapter[p]],
            flag[in_conflict[p]],
            flag[ch.npc],
            die[s0],
            die[s1],
            die[s2],
            die[s3],
            die[s4],
            die[s5],
        )
        v += rolled_get(rd) or rolled_of(rd)
        holds = adv[p]
        dice = advantage_dice(holds, in_conflict, keep, cashed[p]) if cashed[p] or True in holds else 0
        v += (
            (dice + pending * per_entry) / ADVANTAGE_NORM,
            flag[adv[p][seat]],
            flag[adv_seat[p]],
            ((owe.count(p) if owe else 0) - pending) / OWE_NORM,
            flag[challenged[p]],
            flag[moved[p]],
            k0,
            k1,
            flag[in_turns and challenger == p],
        )
    v += _ABSENT_SLOTS[n]
    v += (state.round_no / state.rules.max_rounds, state.conflict_no / state.max_conflicts)
    v += _CONTEXT_ONE_HOT[state.node]
    available = state.available[seat]
    v += _FITTING.get(available) or _fitting(available)
    picks = state.picks[seat]
    v += _FORM_ONE_HOT[picks[0]] if picks else _NO_FORMS
    cr = rolls[challenger] if in_turns and challenger is not None else None
    if cr is None:
        v += (0.0, 0.0)
    else:
        v += (cr.key[0] / ROLL_NORM, cr.key[1] / ROLL_NORM)
    kind = state.pending_offer_kind()
    v += _NO_OFFER if kind is None else _OFFER_ONE_HOT[kind]
    conseq = state.conseq
    if conseq is None:
        v += (0.0, 0.0)
    else:
        v += (flag[conseq.winner == seat], flag[conseq.loser == seat])
    pack, buf, view = _buffer(len(v))
    pack.pack_into(buf, 0, *v)
    return np.minimum(view, _ONE)

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
from envs.wicked_age.config import MAX_DIE
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
_HIDDEN_SHEET = (0,) * len(SHEET_SLOTS)
"""Another seat's sheet during the build: nothing shown."""


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
    flag, die = _FLAG, _DIE
    chars, in_chapter, in_conflict = state.chars, state.in_chapter, state.in_conflict
    roll_dice, rolls, adv, adv_seat = state.roll_dice, state.rolls, state.adv, state.adv[seat]
    challenged, moved, owe = state.challenged, state.moved, state.owe
    per_entry, keep, cashed = state.rules.dice_per_entry, state.rules.keep_advantage, state.cashed
    building = state.drafts if state.in_build else None
    v: list[float] = []
    for k in range(n):
        p = (seat + k) % n
        # during the (simultaneous) build a seat sees only its own draft
        sheet = chars[p].dice if building is None else (building[p] if p == seat else _HIDDEN_SHEET)
        rd = roll_dice[p]
        nrd = len(rd)
        pending = state.pending_cash[p] if p == seat else 0  # a seat sees its own undecided cashing only
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
            flag[chars[p].npc],
            die[sheet[0]],
            die[sheet[1]],
            die[sheet[2]],
            die[sheet[3]],
            die[sheet[4]],
            die[sheet[5]],
            die[rd[0]] if nrd else 0.0,
            die[rd[1]] if nrd > 1 else 0.0,
            die[rd[2]] if nrd > 2 else 0.0,  # ROLLED_DICE_SHOWN
            (advantage_dice(adv[p], in_conflict, keep, cashed[p]) + pending * per_entry) / ADVANTAGE_NORM,
            flag[adv[p][seat]],
            flag[adv_seat[p]],
            (owe.count(p) - pending) / OWE_NORM,
            flag[challenged[p]],
            flag[moved[p]],
            k0,
            k1,
            flag[in_turns and challenger == p],
        )
    for _ in range(n, party_slots(n)):
        v += _ABSENT
    v += (state.round_no / state.rules.max_rounds, state.conflict_no / state.max_conflicts)
    context = [0.0] * _CONTEXTS
    node = state.node
    if node < _FIRST_CHANCE:
        context[_CONTEXT_INDEX[node]] = 1.0
    v += context
    forms = [0.0] * _FORMS
    for f in state.available[seat]:
        forms[f] = 1.0
    v += forms
    picks = state.picks[seat]
    if picks:
        first = [0.0] * _FORMS
        first[picks[0]] = 1.0
        v += first
    else:
        v += _NO_FORMS
    cr = rolls[challenger] if in_turns and challenger is not None else None
    if cr is None:
        v += (0.0, 0.0)
    else:
        v += (cr.key[0] / ROLL_NORM, cr.key[1] / ROLL_NORM)
    offer = [0.0] * _OFFERS
    kind = state.pending_offer_kind()
    if kind is not None:
        offer[kind] = 1.0
    v += offer
    conseq = state.conseq
    if conseq is None:
        v += (0.0, 0.0)
    else:
        v += (flag[conseq.winner == seat], flag[conseq.loser == seat])
    pack, buf, view = _buffer(len(v))
    pack.pack_into(buf, 0, *v)
    return np.minimum(view, _ONE)

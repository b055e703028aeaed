"""In a Wicked Age observation encoding: a flat float32 vector in [0, 1] for one seat.

Layout: ``MAX_PARTIES`` blocks of ``PARTY_FEATURES`` (the observing seat first, then the others in seat
order), then the global features: round and conflict progress, the decision kind (one-hot), the forms that
fit the seat's action, its first picked form, the standing challenge's roll, the pending offer's kind and the
seat's part in a pending consequence.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

import numpy as np

from envs.wicked_age.actions import DECISION_CONTEXTS, MAX_PARTIES, Ctx
from envs.wicked_age.rules import SHEET_SLOTS, Offer, PcForm

if TYPE_CHECKING:
    from envs.wicked_age.conflict import WickedAgeState

PARTY_FEATURES = 22
"""Per party: present, in chapter, in conflict, NPC, six sheet dice, three rolled dice, advantage dice,
advantage over me / mine over it, owe entries, challenged, moved, opening roll (two), is the challenger."""
GLOBAL_FEATURES = 2 + len(DECISION_CONTEXTS) + len(PcForm) + len(PcForm) + 2 + len(Offer) + 2
OBS_SIZE = MAX_PARTIES * PARTY_FEATURES + GLOBAL_FEATURES
DIE_NORM = 12.0
ROLL_NORM = 40.0
ADVANTAGE_NORM = 6.0
OWE_NORM = 5.0
ROLLED_DICE_SHOWN = 3


_FIRST_CHANCE = int(Ctx.FORMS_DRAW)
"""Contexts below this one are decisions (``Ctx.is_decision`` without a property call per step)."""
_CONTEXT_INDEX = {int(c): i for i, c in enumerate(DECISION_CONTEXTS)}
_FORMS = len(PcForm)
_OFFERS = len(Offer)
_SLOTS = len(SHEET_SLOTS)
_GLOBAL = MAX_PARTIES * PARTY_FEATURES
_FLAG = (0.0, 1.0)
_PACK = struct.Struct(f"{OBS_SIZE}f").pack


def encode_observation(state: WickedAgeState, seat: int) -> np.ndarray:
    """Flat float32 in [0, 1]: parties (self first), then the round, decision and pending offer.

    The features are written into a list of Python floats and packed to float32 in one call (``struct``
    casts a double to float32 as numpy does), which is several times cheaper than setting array items.
    """
    v = [0.0] * OBS_SIZE
    n = state.num_players
    in_turns = state.in_turns
    challenger = state.challenger
    flag = _FLAG
    chars, in_chapter, in_conflict = state.chars, state.in_chapter, state.in_conflict
    roll_dice, rolls, adv, adv_seat = state.roll_dice, state.rolls, state.adv, state.adv[seat]
    challenged, moved, owe = state.challenged, state.moved, state.owe
    per_entry = state.cfg.owe_list.dice_per_entry
    for k in range(n):
        p = (seat + k) % n
        base = k * PARTY_FEATURES
        v[base] = 1.0
        v[base + 1] = flag[in_chapter[p]]
        v[base + 2] = flag[in_conflict[p]]
        v[base + 3] = flag[chars[p].npc]
        sheet = state.sheet_seen_by(p, seat)
        for i in range(_SLOTS):
            v[base + 4 + i] = sheet[i] / DIE_NORM
        for i, d in enumerate(roll_dice[p][:ROLLED_DICE_SHOWN]):
            v[base + 10 + i] = d / DIE_NORM
        pending = state.pending_cash[p] if p == seat else 0  # a seat sees its own undecided cashing only
        v[base + 13] = (state.advantage_dice(p) + pending * per_entry) / ADVANTAGE_NORM
        v[base + 14] = flag[adv[p][seat]]
        v[base + 15] = flag[adv_seat[p]]
        v[base + 16] = (owe.count(p) - pending) / OWE_NORM
        v[base + 17] = flag[challenged[p]]
        v[base + 18] = flag[moved[p]]
        r = rolls[p]
        if r is not None:
            key = r.key
            v[base + 19] = key[0] / ROLL_NORM
            v[base + 20] = key[1] / ROLL_NORM
        v[base + 21] = flag[in_turns and challenger == p]
    g = _GLOBAL
    v[g] = state.round_no / state.cfg.contest.max_rounds
    v[g + 1] = state.conflict_no / state.max_conflicts
    g += 2
    node = state.node
    if node < _FIRST_CHANCE:
        v[g + _CONTEXT_INDEX[node]] = 1.0
    g += len(DECISION_CONTEXTS)
    for f in state.available[seat]:
        v[g + f] = 1.0
    g += _FORMS
    for f in state.picks[seat][:1]:
        v[g + f] = 1.0
    g += _FORMS
    if in_turns and challenger is not None:
        cr = rolls[challenger]
        if cr is not None:
            v[g] = cr.key[0] / ROLL_NORM
            v[g + 1] = cr.key[1] / ROLL_NORM
    g += 2
    kind = state.pending_offer_kind()
    if kind is not None:
        v[g + kind] = 1.0
    g += _OFFERS
    conseq = state.conseq
    if conseq is not None:
        v[g] = flag[conseq.winner == seat]
        v[g + 1] = flag[conseq.loser == seat]
    obs = np.frombuffer(bytearray(_PACK(*v)), dtype=np.float32)
    return np.minimum(obs, np.float32(1.0), out=obs)

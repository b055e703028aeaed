"""In a Wicked Age observation encoding: a flat float32 vector in [0, 1] for one seat.

Layout: ``MAX_PARTIES`` blocks of ``PARTY_FEATURES`` (the observing seat first, then the others in seat
order), then the global features: round and conflict progress, the decision kind (one-hot), the forms that
fit the seat's action, its first picked form, the standing challenge's roll, the pending offer's kind and the
seat's part in a pending consequence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.wicked_age.actions import DECISION_CONTEXTS, MAX_PARTIES
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


def encode_observation(state: WickedAgeState, seat: int) -> np.ndarray:
    """Flat float32 in [0, 1]: parties (self first), then the round, decision and pending offer."""
    v = np.zeros(OBS_SIZE, dtype=np.float32)
    n = state.num_players
    in_turns = state.in_turns
    for k in range(n):
        p = (seat + k) % n
        base = k * PARTY_FEATURES
        ch = state.chars[p]
        v[base] = 1.0
        v[base + 1] = float(state.in_chapter[p])
        v[base + 2] = float(state.in_conflict[p])
        v[base + 3] = float(ch.npc)
        sheet = state.sheet_seen_by(p, seat)
        for i in SHEET_SLOTS:
            v[base + 4 + i] = sheet[i] / DIE_NORM
        for i, d in enumerate(state.roll_dice[p][:ROLLED_DICE_SHOWN]):
            v[base + 10 + i] = d / DIE_NORM
        pending = state.pending_cash[p] if p == seat else 0  # a seat sees its own undecided cashing only
        v[base + 13] = (state.advantage_dice(p) + pending * state.cfg.owe_list.dice_per_entry) / ADVANTAGE_NORM
        v[base + 14] = float(state.adv[p][seat])
        v[base + 15] = float(state.adv[seat][p])
        v[base + 16] = (state.owe.count(p) - pending) / OWE_NORM
        v[base + 17] = float(state.challenged[p])
        v[base + 18] = float(state.moved[p])
        r = state.rolls[p]
        if r is not None:
            v[base + 19] = r.key[0] / ROLL_NORM
            v[base + 20] = r.key[1] / ROLL_NORM
        v[base + 21] = float(in_turns and state.challenger == p)
    g = MAX_PARTIES * PARTY_FEATURES
    v[g] = state.round_no / state.cfg.contest.max_rounds
    v[g + 1] = state.conflict_no / state.max_conflicts
    g += 2
    if state.node.is_decision:
        v[g + DECISION_CONTEXTS.index(state.node)] = 1.0
    g += len(DECISION_CONTEXTS)
    for f in state.available[seat]:
        v[g + f] = 1.0
    g += len(PcForm)
    for f in state.picks[seat][:1]:
        v[g + f] = 1.0
    g += len(PcForm)
    c = state.challenger
    if in_turns and c is not None:
        cr = state.rolls[c]
        if cr is not None:
            v[g] = cr.key[0] / ROLL_NORM
            v[g + 1] = cr.key[1] / ROLL_NORM
    g += 2
    kind = state.pending_offer_kind()
    if kind is not None:
        v[g + kind] = 1.0
    g += len(Offer)
    if state.conseq is not None:
        v[g] = float(state.conseq.winner == seat)
        v[g + 1] = float(state.conseq.loser == seat)
    np.minimum(v, 1.0, out=v)
    return v

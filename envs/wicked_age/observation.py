"""In a Wicked Age observation encoding: a flat float32 vector in [0, 1] for one seat.

Layout: one block of ``PARTY_FEATURES`` per party slot (the observing seat first, then the others in seat
order; ``party_slots(n)`` slots, at least ``MIN_PARTY_SLOTS``, absent parties all zeros), then the global
features: round and conflict progress, the decision kind (one-hot), the forms that fit the seat's action,
its first picked form, the standing challenge's roll, the pending offer's kind and the seat's part in a
pending consequence.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable, Sequence
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
_ARRAY = np.ndarray
"""The array constructor over a buffer: ``np.ndarray(shape, dtype, buffer)`` is the array ``np.frombuffer`` makes of
the whole buffer (writable, sharing it), for ~15% less of its call (no keyword parsing)."""
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
_HIDDEN_SHEET = (0,) * len(SHEET_SLOTS)
"""Another seat's sheet during the build: nothing shown."""


def _one_hot(size: int, index: int | None) -> tuple[float, ...]:
    return tuple(1.0 if i == index else 0.0 for i in range(size))


_CONTEXT_ONE_HOT: tuple[tuple[float, ...], ...] = tuple(
    _one_hot(_CONTEXTS, _CONTEXT_INDEX.get(node) if node < _FIRST_CHANCE else None) for node in range(max(Ctx) + 1)
)
"""The decision-kind features of every node id (a chance node or the end: all zeros), built once."""
_OFFER_ONE_HOT: tuple[tuple[float, ...], ...] = tuple(_one_hot(_OFFERS, k) for k in range(_OFFERS))
"""The pending-offer features of each offer kind."""
_NO_OFFER = (0.0,) * _OFFERS
_ROTATIONS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple((seat + k) % n for k in range(n)) for seat in range(n)) for n in range(MAX_PARTIES + 1)
)
"""The party slots' seats as ``seat`` sees a conflict of ``n`` parties (itself first, then the others in seat order),
by ``n`` and ``seat``."""
_SIZES: tuple[int, ...] = tuple(observation_size(n) for n in range(MAX_PARTIES + 1))
"""The observation's length by party count (an int shape: ``np.ndarray`` reads it for ~200 instructions less than a
tuple)."""
_PROGRESS_PACKS: tuple[Callable[..., bytes], ...] = tuple(
    struct.Struct(f"={4 * PARTY_FEATURES * (party_slots(n) - n)}x2f").pack for n in range(MAX_PARTIES + 1)
)
"""By party count ``n``: the absent party slots' features (pad bytes, ``x``: zeros, the bytes of 0.0 in float32) and
the two progress features, packed in one call (no concatenation); ``=`` as in ``_ROW_PACK``."""

# The blocks of an observation as float32 bytes. Each party's 22 features, as the observing seat sees them, are a row
# kept on the state (``_rows``, see :func:`party_rows`); the global features are the kept progress and forms blocks
# (:func:`progress_block`, :func:`forms_block`), the decision kind's bytes by node and the pending block, cached by its
# values. The machine drops a kept row or block (sets it to None) wherever a value it reads changes, and the next
# observation that needs it packs it again: an encoding joins kept bytes instead of gathering every block's values
# into keys and looking each block up (a melee's observation read ~14 dictionary keys per call that way).
_CACHE_LIMIT = 1 << 15
_Key = tuple[Any, ...]
_ROLLED: dict[tuple[int, ...], bytes] = {}
"""A party's rolled-dice features (the first ``ROLLED_DICE_SHOWN`` dice, zeros after, clipped), packed, by its dice
tuple."""
_ROLL_KEYS: dict[tuple[int, ...], bytes] = {}
"""A roll's two features (its key's first two values over ``ROLL_NORM``, clipped), packed, by the key."""
_PENDING: dict[_Key, bytes] = {}
"""The standing challenge's roll, the pending offer's kind and the seat's part in a consequence, by those values."""
_CACHES = (_ROLLED, _ROLL_KEYS, _PENDING)


def _clip(x: float) -> float:
    """``x`` clipped to at most 1, as the encoder clips every feature.

    ``struct`` casts a double to float32 as numpy does, and the cast keeps order: clipping the doubles is
    clipping the floats (``np.minimum`` of the packed array, as the encoder did before the block caches).
    """
    return x if x < 1.0 else 1.0


def _pack(n: int) -> Callable[..., bytes]:
    return struct.Struct(f"{n}f").pack


_FULL_ROW_PACK = struct.Struct(f"=10f{4 * ROLLED_DICE_SHOWN}s6f8sf").pack
"""A party row: the present, chapter, conflict and NPC flags and the six sheet dice, the rolled dice's features as
packed bytes (``s``: copied as they are, from :data:`_ROLLED`), advantage dice, the two advantages, owe entries, the
challenged and moved flags, the opening roll's features as packed bytes (from :data:`_ROLL_KEYS`) and the challenger
flag. ``=``: native byte order without padding, the bytes of ``_pack``'s native ``f``s (and of numpy's float32)."""
_HEAD_PACK = struct.Struct("=10f").pack
"""A row's head: its first ten features (the present, chapter, conflict and NPC flags and the six sheet dice), as
:data:`_FULL_ROW_PACK` packs them."""
_HEAD_BYTES = struct.calcsize("=10f")
_ROW_PACK = struct.Struct(f"=40s{4 * ROLLED_DICE_SHOWN}s6f8sf").pack
"""A party row from its head's packed bytes (:data:`_HEAD_PACK`) and the rest as :data:`_FULL_ROW_PACK` packs it: the
same bytes."""
_ROLL_PACK = _pack(2)
_ROLLED_PACK = _pack(ROLLED_DICE_SHOWN)
_FORMS_PACK = _pack(2 * _FORMS)
_DIE_CLIPPED = tuple(_clip(x) for x in _DIE)
"""``_DIE`` clipped to 1 (a config's dice above d12 read as 1)."""
_CONTEXT_BYTES: tuple[bytes, ...] = tuple(struct.pack(f"{_CONTEXTS}f", *v) for v in _CONTEXT_ONE_HOT)
"""The decision-kind features of every node id, packed."""
_NOTHING_PENDING = struct.pack(f"{2 + _OFFERS + 2}f", *(0.0,) * (2 + _OFFERS + 2))
"""The pending block when no challenge stands, no offer is pending and no consequence is being settled."""


def _rolled(dice: tuple[int, ...]) -> bytes:
    n = len(dice)
    if len(_ROLLED) >= _CACHE_LIMIT:
        _ROLLED.clear()
    out = _ROLLED[dice] = _ROLLED_PACK(
        _DIE_CLIPPED[dice[0]] if n else 0.0,
        _DIE_CLIPPED[dice[1]] if n > 1 else 0.0,
        _DIE_CLIPPED[dice[2]] if n > 2 else 0.0,  # ROLLED_DICE_SHOWN
    )
    return out


def _roll_key(key: tuple[int, ...]) -> bytes:
    if len(_ROLL_KEYS) >= _CACHE_LIMIT:
        _ROLL_KEYS.clear()
    out = _ROLL_KEYS[key] = _ROLL_PACK(_clip(key[0] / ROLL_NORM), _clip(key[1] / ROLL_NORM))
    return out


_NO_ROLL = _ROLL_PACK(0.0, 0.0)


def party_rows(state: WickedAgeState, rows: list[bytes | None], seat: int) -> None:
    """Each party row ``rows`` (the state's kept ``_rows``) lacks, packed and stored there.

    A row is the party's 22 features as ``seat`` sees them (see ``PARTY_FEATURES``).
    They read the party's sheet dice (during the build: a hidden sheet), chapter, conflict and NPC flags, rolled
    dice, advantage dice (its advantages, the conflict flags unless advantage is kept when an opponent is out, its
    cashed entries), the advantages between it and ``seat``, its owe entries, challenged and moved flags, opening
    roll and whether it is the standing challenger (in the turns). The first ten (flags and sheet, the same for
    every observer) are packed apart and kept in ``_heads`` until one of them changes. The state keeps the row in
    ``_rows`` (for
    ``_rows_seat``) until one of those changes (the machine sets it to None there: see
    :meth:`WickedAgeState._sheet_changed`; the build's end starts a conflict, which drops them all). The seat's own
    view of itself with its own draft or undecided cashing is :func:`own_row` (not kept). Every missing row is packed
    in this one call (a round's or a conflict's start drops them all), the values every row reads read once.
    """
    stage = state.stage
    hidden = stage is _STAGE_BUILD
    challenger = state.challenger if stage is _STAGE_TURN else None  # flagged in the turns only
    adv, cashed, rolls = state.adv, state.cashed, state.rolls
    mine = adv[seat]
    owe = state.owe
    heads = state._heads
    for p, row in enumerate(rows):
        if row is not None:
            continue
        # the head (the flags and the sheet, the same for every observer) is kept apart: most rows are repacked for
        # a roll, a move or a round's start, which leave it as it was (two struct calls instead of one when it
        # changed, ten fewer arguments when it did not)
        head = heads[p]
        if head is None:
            ch = state.chars[p]
            s0, s1, s2, s3, s4, s5 = _HIDDEN_SHEET if hidden else ch.dice
            die = _DIE_CLIPPED
            head = heads[p] = _HEAD_PACK(
                1.0,
                1.0 if state.in_chapter[p] else 0.0, 1.0 if state.in_conflict[p] else 0.0, 1.0 if ch.npc else 0.0,
                die[s0], die[s1], die[s2], die[s3], die[s4], die[s5],
            )  # fmt: skip
        rd = state.roll_dice[p]
        holds, cash = adv[p], cashed[p]
        # the advantage dice and the owe entries clipped where they are computed, and their commonest values (no
        # advantage or cashing, an empty owe list) set without a call, a division or a clip
        if cash or True in holds:
            a = advantage_dice(holds, state.in_conflict, state._keep_advantage, cash) / ADVANTAGE_NORM
            if a > 1.0:  # clipped as :func:`_clip` clips
                a = 1.0
        else:  # no advantage held and nothing cashed: no advantage dice (``advantage_dice``'s 0, uncalled, undivided)
            a = 0.0
        if owe:
            owed = owe.count(p) / OWE_NORM
            if owed > 1.0:
                owed = 1.0
        else:  # an empty owe list (most rows): no entries, uncounted
            owed = 0.0
        r = rolls[p]
        key = _NO_ROLL if r is None else _ROLL_KEYS.get(r.key) or _roll_key(r.key)
        # one pack of every feature, each clip written out and the rolled dice and opening roll as packed pieces: a
        # comprehension costs several times more, and this runs for every party whose row changed. The flags (bools)
        # are passed as the floats ``struct`` would make of them (1.0 and 0.0, the values of ``_FLAG``): a bool costs
        # ``struct`` a float conversion through ``int.__float__`` (a new float object), dearer than the test here
        rows[p] = _ROW_PACK(
            head, _ROLLED.get(rd) or _rolled(rd),
            a, 1.0 if holds[seat] else 0.0, 1.0 if mine[p] else 0.0, owed,
            1.0 if state.challenged[p] else 0.0, 1.0 if state.moved[p] else 0.0, key, 1.0 if challenger == p else 0.0,
        )  # fmt: skip


def own_row(state: WickedAgeState, seat: int, sheet: Sequence[int] | None, pending: int) -> bytes:
    """The seat's own row as it alone sees it (not kept): :func:`party_rows`'s features of ``seat``, but with ``sheet``.

    ``sheet`` is its own draft during the build (None: the sheet as :func:`party_rows` reads it); ``pending`` its
    undecided cashing, counted in its advantage dice and out of its owe entries.
    """
    ch = state.chars[seat]
    s0, s1, s2, s3, s4, s5 = sheet if sheet is not None else _HIDDEN_SHEET if state.stage is _STAGE_BUILD else ch.dice
    rd = state.roll_dice[seat]
    holds, cash = state.adv[seat], state.cashed[seat]
    # nothing held or cashed (the whole build): ``advantage_dice``'s 0, uncalled; an undecided cashing counts
    k = advantage_dice(holds, state.in_conflict, state._keep_advantage, cash) if cash or True in holds else 0
    if pending:
        k += pending * state.rules.dice_per_entry
    a = k / ADVANTAGE_NORM
    owed = (state.owe.count(seat) - pending) / OWE_NORM
    r = state.rolls[seat]
    key = _NO_ROLL if r is None else _ROLL_KEYS.get(r.key) or _roll_key(r.key)
    die = _DIE_CLIPPED
    # each clipped as :func:`_clip` clips (written out: during the build this runs at every observation), the flags
    # as the floats ``struct`` would make of them (as in :func:`party_rows`)
    own = 1.0 if holds[seat] else 0.0
    return _FULL_ROW_PACK(
        1.0, 1.0 if state.in_chapter[seat] else 0.0, 1.0 if state.in_conflict[seat] else 0.0, 1.0 if ch.npc else 0.0,
        die[s0], die[s1], die[s2], die[s3], die[s4], die[s5], _ROLLED.get(rd) or _rolled(rd),
        a if a < 1.0 else 1.0, own, own, owed if owed < 1.0 else 1.0,
        1.0 if state.challenged[seat] else 0.0, 1.0 if state.moved[seat] else 0.0, key,
        1.0 if state.stage is _STAGE_TURN and state.challenger == seat else 0.0,
    )  # fmt: skip


def _progress_bytes(parties: int, round_no: int, max_rounds: int, conflict_no: int, max_conflicts: int) -> bytes:
    """The absent party slots' zeros, then round and conflict progress, packed."""
    r = round_no / max_rounds
    c = conflict_no / max_conflicts
    # each clipped as :func:`_clip` clips
    return _PROGRESS_PACKS[parties](r if r < 1.0 else 1.0, c if c < 1.0 else 1.0)


_PROGRESS_TABLES: dict[tuple[int, int, int], tuple[tuple[bytes, ...], ...]] = {}


def progress_table(parties: int, max_rounds: int, max_conflicts: int) -> tuple[tuple[bytes, ...], ...]:
    """Every progress block of a game, by round (0 to ``max_rounds``) and conflict (0 to ``max_conflicts``).

    Built once per shape; a state keeps its game's (``_progress_table``) for :func:`progress_block`.
    """
    key = (parties, max_rounds, max_conflicts)
    table = _PROGRESS_TABLES.get(key)
    if table is None:
        table = _PROGRESS_TABLES[key] = tuple(
            tuple(_progress_bytes(parties, r, max_rounds, c, max_conflicts) for c in range(max_conflicts + 1))
            for r in range(max_rounds + 1)
        )
    return table


def progress_block(state: WickedAgeState) -> bytes:
    """The absent party slots' zeros, then round and conflict progress; kept in ``_progress`` until either changes.

    Read from the game's table of every block (:func:`progress_table`: no division and no pack per round); a round or
    conflict outside it (none in play) is packed as the table packs it.
    """
    try:
        block = state._progress_table[state.round_no][state.conflict_no]
    except IndexError:
        block = _progress_bytes(
            state.num_players, state.round_no, state.rules.max_rounds, state.conflict_no, state.max_conflicts
        )
    state._progress = block
    return block


def _forms_bytes(available: Sequence[int], first: int | None) -> bytes:
    """The forms block of a forms draw and a first picked form (None: not picked yet), packed."""
    v = [0.0] * (2 * _FORMS)
    for f in available:
        v[f] = 1.0
    if first is not None:
        v[_FORMS + first] = 1.0
    return _FORMS_PACK(*v)


_FORMS_BLOCKS: dict[tuple[int, ...], tuple[bytes, ...]] = {
    draw: tuple(_forms_bytes(draw, first) for first in (*range(_FORMS), None))
    for k in range(_FORMS + 1)
    for draw in itertools.combinations(range(_FORMS), k)
}
"""By sorted forms draw, its forms block for each first pick (by the picked form; the last: none picked yet)."""


def forms_block(state: WickedAgeState, seat: int) -> bytes:
    """The forms that fit ``seat``'s action and its first picked form; kept in ``_forms`` until either changes.

    Read from :data:`_FORMS_BLOCKS` (every sorted draw of the six forms; any other tuple is packed as the table is).
    """
    available, picks = state.available[seat], state.picks[seat]
    blocks = _FORMS_BLOCKS.get(available)
    if blocks is None:
        block = _forms_bytes(available, picks[0] if picks else None)
    else:
        block = blocks[picks[0] if picks else -1]
    state._forms[seat] = block
    return block


def _pending(key: _Key) -> bytes:
    crkey, kind, won, lost = key
    roll = (0.0, 0.0) if crkey is None else (_clip(crkey[0] / ROLL_NORM), _clip(crkey[1] / ROLL_NORM))
    if len(_PENDING) >= _CACHE_LIMIT:
        _PENDING.clear()
    out = _PENDING[key] = struct.pack(
        f"{2 + _OFFERS + 2}f", *roll, *(_NO_OFFER if kind is None else _OFFER_ONE_HOT[kind]), _FLAG[won], _FLAG[lost]
    )
    return out


def encode_observation(state: WickedAgeState, seat: int) -> np.ndarray:
    """Flat float32 in [0, 1]: parties (self first), then the round, decision and pending offer.

    The blocks are float32 bytes (see the comment above ``_CACHES``): each party's kept row, then the kept
    progress and forms blocks, the decision kind and the pending block, joined into a fresh array. The returned
    array is the caller's to keep.
    """
    rows = state._rows
    if state._rows_seat != seat:  # rows kept for another observer: this seat's own from here on
        rows = state._rows = [None] * state.num_players
        state._rows_seat = seat
    if None in rows:
        party_rows(state, rows, seat)
    if seat:  # the seat first, then the others in seat order (its rotation of the rows; a kept row is never empty)
        rows = rows[seat:] + rows[:seat]
    stage = state.stage
    pending = state.pending_cash[seat]
    if pending or stage is _STAGE_BUILD:
        # the seat sees its own draft during the (simultaneous) build, the others none, and its own undecided
        # cashing only: its own row (the first) as it alone sees it, in a copy (``rows`` may be the kept list)
        rows = rows.copy()
        if pending:
            rows[0] = own_row(state, seat, state.drafts[seat] if stage is _STAGE_BUILD else None, pending)
        else:
            # the build without a cashing (there is none before a roll): the seat's kept row (first here) but headed
            # by its own draft, every other feature as :func:`own_row` reads it (the same values without a cashing)
            s0, s1, s2, s3, s4, s5 = state.drafts[seat]
            die = _DIE_CLIPPED
            rows[0] = (
                _HEAD_PACK(
                    1.0,
                    1.0 if state.in_chapter[seat] else 0.0,
                    1.0 if state.in_conflict[seat] else 0.0,
                    1.0 if state.chars[seat].npc else 0.0,
                    die[s0], die[s1], die[s2], die[s3], die[s4], die[s5],
                )
                + rows[0][_HEAD_BYTES:]  # type: ignore[index]  # a kept row: every row was filled above
            )  # fmt: skip
    offer = state.offer
    # outside the turns no challenge stands, and a consequence's terms are offered only while it is pending: without
    # an offer or a consequence there nothing is pending (the commonest case, tested first)
    if offer is None and state.conseq is None and stage is not _STAGE_TURN:
        pend = _NOTHING_PENDING
    else:
        conseq = state.conseq
        challenger = state.challenger
        cr = state.rolls[challenger] if stage is _STAGE_TURN and challenger is not None else None
        # the pending offer's kind (:meth:`WickedAgeState.pending_offer_kind`, inlined)
        kind = offer.kind if offer is not None else state.terms_offer if state.terms is _TERMS_OFFERED else None
        if cr is None and kind is None and conseq is None:
            pend = _NOTHING_PENDING
        else:
            pkey = (
                None if cr is None else cr.key,
                kind,
                conseq is not None and conseq.winner == seat,
                conseq is not None and conseq.loser == seat,
            )
            pend = _PENDING.get(pkey) or _pending(pkey)
    # the rows and the global blocks joined straight into a fresh, writable bytearray (``rows + [...]``: one new list,
    # never the kept one; every row was filled above, no None is left)
    return _ARRAY(
        _SIZES[state.num_players],
        _FLOAT32,
        _JOIN(
            rows  # type: ignore[arg-type]
            + [
                state._progress or progress_block(state),
                _CONTEXT_BYTES[state.node],
                state._forms[seat] or forms_block(state, seat),
                pend,
            ]
        ),
    )

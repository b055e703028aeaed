"""Crossroads observation encoding: what one seat sees of the episode, as a flat vector in [0, 1].

Layout (:class:`Layout`; ``OBS_SIZE`` = 304 for the rules as written): ``global_size`` global features,
then ``char_slots`` character slots of ``CHAR_FEATURES`` and ``faction_slots`` faction slots of
``FACTION_FEATURES``. The slot counts follow the config (:func:`layout_of`): at least ``MAX_SEATS``
seats, ``MAX_CHARACTER_SLOTS`` and ``MAX_FACTION_SLOTS`` slots, more when ``episode.players``,
``episode.max_characters`` or ``episode.max_factions`` ask for more.

Speed: a faction's slot is a function of a handful of small values, so its float32 bytes are memoised by
those values (a bounded table per seat; a character's 14 values rarely repeat: it is packed); the global
features are byte pieces (the one-hots from tables, the rest packed). Each seat's entity block is kept on the
state and only the slots of the entities the rules logged as changed are re-packed (a random step changes about one
entity: patching it costs less than walking every slot); the confrontation's markers (a slot's last bytes) are
written into the block and stay there for the scene. An observation is the pieces joined once into a fresh
bytearray, the writable array's buffer.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from typing import TYPE_CHECKING

import numpy as np

from envs.crossroads.actions import NUM_CONTEXTS, Phase, Purpose
from envs.crossroads.config import MAX_CHARACTER_SLOTS, MAX_FACTION_SLOTS, MAX_SEATS

if TYPE_CHECKING:
    from envs.crossroads.config import Settings
    from envs.crossroads.episode import Character, CrossroadsState, Faction, Side

CHAR_FEATURES = 18
FACTION_FEATURES = 9

# global features: the context one-hot and "to move" first, then the Admin one-hot over the seat slots,
# then the rest (offsets relative to the end of the Admin one-hot)
_CONTEXT = 0  # one-hot over the NUM_CONTEXTS decision phases
_TO_MOVE = 16  # the seat is the one to move
_ADMIN = 17  # one-hot: the Admin's seat relative to the observer (seat_slots)
_SCENE = 0  # scene number / scene limit
_EXITS = 1  # exits / exits that end the episode
_DICE = 2  # the three dice being assigned or spent
_SUCCESSES = 5
_LEFT = 6  # spends / outcomes / cuts still to make
_DEGREE = 7
_SIDES = 8  # two confrontation sides x (mine, three dice, burns, successes)
_SIDE_FEATURES = 6
_FLAGS = 20  # two x three success flags
_SECOND_SIDE = 26  # the second side is the one acting
_BUILD_STEP = 27
_GOAL_CHECK = 28
_BEAUTY = 29
_AFTER_ADMIN = 30
_SCALE = 6  # counts are scaled by 1/6 and clipped at 1
_DIE = 10  # a d10 face is scaled by 1/10

GLOBAL_SIZE = _ADMIN + MAX_SEATS + _AFTER_ADMIN
OBS_SIZE = GLOBAL_SIZE + MAX_CHARACTER_SLOTS * CHAR_FEATURES + MAX_FACTION_SLOTS * FACTION_FEATURES
"""The observation length under the rules as written (and any config within the default slot counts)."""

_TENTHS = tuple(k / _DIE for k in range(_DIE + 1))
"""A d10 face or a stat (0-10) scaled by 1/10 (the same floats as dividing)."""
_SIXTHS = tuple(min(1.0, k / _SCALE) for k in range(_SCALE + 1))
_FLAG = (0.0, 1.0)
_BOOLS = (False, True)
_ROW_CACHE_LIMIT = 1 << 15
_CHANGES_KEPT = 64
"""Entries of a state's change log (``obs_changes``) kept once read: a longer log is emptied by the encoder."""
"""Memoised slots per layout and kind before the table is cleared (bounds the memory)."""
# phases and purposes as module globals (an enum member lookup costs about a microsecond in Python 3.11)
_BUILD, _ASSIGN, _SPEND, _BUY_OUTCOME, _LOWER_INFLUENCE = (
    int(Phase.BUILD),
    int(Phase.ASSIGN),
    int(Phase.SPEND),
    int(Phase.BUY_OUTCOME),
    int(Phase.LOWER_INFLUENCE),
)
_CONFRONT, _GOAL, _BEAUTY_CHECK = int(Purpose.CONFRONT), int(Purpose.GOAL), int(Purpose.BEAUTY)
_ROLL_PHASES = (_ASSIGN, _SPEND, _LOWER_INFLUENCE)
"""The phases whose observation shows the roll being assigned or spent."""
_FLAG_PHASES = (_SPEND, _BUY_OUTCOME, _LOWER_INFLUENCE)
"""The phases whose observation shows a check's success flags (outside a two-sided confrontation)."""
_SHOWS_ROLL = tuple(p in _ROLL_PHASES for p in range(len(Phase)))
_SHOWS_FLAGS = tuple(p in _FLAG_PHASES for p in range(len(Phase)))
"""``_ROLL_PHASES`` and ``_FLAG_PHASES`` as flags indexed by the phase (a subscript, not a tuple scan)."""
_NEW_ARRAY = np.ndarray
"""Makes the observation array over its joined bytes (``np.ndarray(shape, dtype, buffer)``: less than
``np.frombuffer``)."""
_NO_CONFRONTATION = (None, None)
_FLOAT32 = np.dtype(np.float32)


@dataclass(frozen=True, slots=True)
class Layout:
    """The observation's shape under a config: seat, character and faction slots."""

    seat_slots: int
    char_slots: int
    faction_slots: int

    @property
    def global_size(self) -> int:
        return _ADMIN + self.seat_slots + _AFTER_ADMIN

    @property
    def size(self) -> int:
        return self.global_size + self.char_slots * CHAR_FEATURES + self.faction_slots * FACTION_FEATURES


def layout_of(players: int, max_characters: int, max_factions: int) -> Layout:
    """The :class:`Layout` of a config: the default slot counts, or more where the config needs more."""
    return Layout(
        max(MAX_SEATS, players), max(MAX_CHARACTER_SLOTS, max_characters), max(MAX_FACTION_SLOTS, max_factions)
    )


class Encoder:
    """Encodes observations for one config: its layout, seats, condition cap and Influence write-off.

    Faction slot bytes are memoised per observing seat, keyed by the faction's own values (owner as a seat, not
    relative); the confrontation's target and opposition markers are added to at most two slots per call.
    """

    # slots: an instance dict of more than 30 keys is unshared, which makes Python 3.11 read every attribute
    # through a hashed lookup and look every ``self.method()`` up afresh (no specialisation)
    __slots__ = (
        "layout",
        "players",
        "global_size",
        "size",
        "after",
        "heads",
        "no_head",
        "admins",
        "head_admins",
        "seat_heads",
        "pack_progress",
        "progress_pieces",
        "dice_pieces",
        "no_dice",
        "counts",
        "pack_side",
        "side_pairs",
        "no_side",
        "pack_flags",
        "no_flags",
        "own_flags",
        "side_flags",
        "seconds",
        "shape",
        "pack_tail",
        "tails",
        "pack_char",
        "pack_faction",
        "empty_char",
        "empty_faction",
        "markers",
        "spans",
        "offsets",
        "fractions",
        "high",
        "faction_rows",
        "char_slots",
        "char_idents",
        "stat_rows",
        "condition_rows",
        "char_flag_rows",
        "no_rest",
        "own_rests",
    )

    def __init__(self, layout: Layout, players: int, max_conditions: int, writeoff_high: int) -> None:
        self.layout = layout
        self.players = players
        self.global_size = layout.global_size
        self.size = layout.size
        self.after = _ADMIN + layout.seat_slots  # start of the features after the Admin one-hot
        # the global features as byte pieces: context and "to move", the Admin one-hot, the scene, roll and
        # counts, the two sides, the success flags and the second-side flag, the build step and the purpose
        self.heads = [
            [_one_hot(_TO_MOVE + 1, (p,)), _one_hot(_TO_MOVE + 1, (p, _TO_MOVE))] for p in range(NUM_CONTEXTS)
        ]
        self.no_head = bytes(4 * (_TO_MOVE + 1))
        self.admins = [_one_hot(layout.seat_slots, (k,)) for k in range(layout.seat_slots)]
        self.head_admins = tuple(
            tuple(
                tuple((self.heads[p][mover] if p < NUM_CONTEXTS else self.no_head) + admin for admin in self.admins)
                for mover in (False, True)
            )
            for p in range(len(Phase))
        )
        """The context one-hot, "to move" and the Admin one-hot as one piece, by phase, to move, relative Admin."""
        self.seat_heads = tuple(
            tuple(
                tuple(
                    tuple(self.head_admins[p][actor == seat][(admin - seat) % players] for admin in range(players))
                    for actor in range(players)
                )
                for p in range(len(Phase))
            )
            for seat in range(players)
        )
        """``head_admins`` as each seat sees it, by observer, phase, actor, Admin (subscripts, no arithmetic)."""
        self.pack_progress = struct.Struct(f"{_DICE - _SCENE}f").pack
        self.progress_pieces: dict[tuple[int, int], bytes] = {}
        """The scene and exit progress piece by (scene number, exits) (a config has a few hundred)."""
        self.dice_pieces = _DiceBytes(struct.Struct(f"{_SUCCESSES - _DICE}f").pack)
        self.no_dice = bytes(4 * (_SUCCESSES - _DICE))
        pack_counts = struct.Struct(f"{_SIDES - _SUCCESSES}f").pack
        sixths = _SIXTHS
        self.counts = tuple(
            tuple(
                tuple(pack_counts(sixths[s], sixths[k], sixths[d]) for d in range(_SCALE + 1))
                for k in range(_SCALE + 1)
            )
            for s in range(_SCALE + 1)
        )
        """The successes, spends-left and degree piece by the three counts, each read up to 6 (and 1 beyond)."""
        self.pack_side = struct.Struct(f"{_SIDE_FEATURES}f").pack
        self.side_pairs: dict[tuple[tuple[int, ...], int, int], tuple[bytes, bytes]] = {}
        """A confrontation side's piece as another seat's and as the observer's, by (dice, burns, successes)
        (bounded)."""
        self.no_side = bytes(4 * _SIDE_FEATURES)
        self.pack_flags = struct.Struct(f"{_BUILD_STEP - _FLAGS}f").pack
        self.no_flags = bytes(4 * (_BUILD_STEP - _FLAGS))
        self.own_flags = _FlagBytes(self.pack_flags)
        self.side_flags = {
            flags: struct.pack("3f", *[_FLAG[f] for f in flags]) for flags in product(_BOOLS, _BOOLS, _BOOLS)
        }
        """One confrontation side's three success flags, by the flags."""
        self.seconds = tuple(struct.pack("f", _FLAG[side_i == 1]) for side_i in range(3))
        """The "second side acts" feature by the confrontation's ``side_i`` (0, 1, or 2 once both are read)."""
        self.shape = (self.size,)
        self.pack_tail = struct.Struct(f"{_AFTER_ADMIN - _BUILD_STEP}f").pack
        self.tails = tuple(
            self.pack_tail(0.0, _FLAG[purpose == _GOAL], _FLAG[purpose == _BEAUTY_CHECK]) for purpose in Purpose
        )
        """The last piece outside a build, by the check's purpose."""
        self.pack_char = struct.Struct(f"{CHAR_FEATURES}f").pack
        self.pack_faction = struct.Struct(f"{FACTION_FEATURES}f").pack
        self.empty_char = bytes(4 * CHAR_FEATURES)
        self.empty_faction = bytes(4 * FACTION_FEATURES)
        self.markers = _Markers(self)
        """The confrontation's marker splices in an entity block by (target, opposition) entity ids."""
        char_span, faction_span = 4 * CHAR_FEATURES, 4 * FACTION_FEATURES
        factions_at = char_span * layout.char_slots
        self.spans = tuple(
            (char_span * k, char_span * (k + 1) - _CHAR_MARK_BYTES) for k in range(layout.char_slots)
        ) + tuple(
            (factions_at + faction_span * k, factions_at + faction_span * (k + 1) - _FACTION_MARK_BYTES)
            for k in range(layout.faction_slots)
        )
        """The byte span of each entity's row (by entity id) in the entity block: its slot up to the markers, which
        only the confrontation's splices write (see :meth:`entity_block`)."""
        self.offsets = tuple(k / (layout.seat_slots - 1) for k in range(layout.seat_slots))
        self.fractions = tuple(k / max_conditions for k in range(max_conditions + 1))
        """Condition counts 0..cap scaled by 1/cap (an entity never holds more than cap, Rule 1)."""
        self.high = writeoff_high
        self.faction_rows: list[dict[tuple[int, ...], bytearray]] = [{} for _ in range(players)]
        self.char_slots = layout.char_slots
        # a character's unmarked slot as four pieces from complete tables (see char_row)
        pack = struct.pack
        self.char_idents = tuple(
            tuple(pack("5f", 1.0, _FLAG[alive], _FLAG[rel == 0], 0.0, self.offsets[rel]) for rel in range(players))
            + (pack("5f", 1.0, _FLAG[alive], 0.0, 1.0, 0.0),)
            for alive in (False, True)
        )
        """1, alive, mine, common, owner: by alive, then the owner's seat relative to the observer (``players``:
        a common character)."""
        self.stat_rows = tuple(
            tuple(tuple(pack("3f", _TENTHS[g], _TENTHS[kh], _TENTHS[m]) for m in range(11)) for kh in range(11))
            for g in range(11)
        )
        """The three stats (0-10) scaled by 1/10, by G, KH, M."""
        self.condition_rows = tuple(
            tuple(pack("2f", self.fractions[plus], self.fractions[minus]) for minus in range(max_conditions + 1))
            for plus in range(max_conditions + 1)
        )
        """+C and -C over the cap, by +C then -C."""
        self.char_flag_rows = {key: pack("6f", *[_FLAG[k] for k in key]) for key in product((False, True), repeat=6)}
        """Wounded, dying, the three goal boxes and Advantage (a row stops before the markers), by the six flags."""
        self.no_rest = self.no_side + self.no_side + self.no_flags
        """Both sides' pieces and the flags piece outside a confrontation and its success flags."""
        self.own_rests = {
            flags: self.no_side + self.no_side + self.own_flags[flags] for flags in product(_BOOLS, _BOOLS, _BOOLS)
        }
        """Both (empty) sides' pieces and a check's success flags, by the flags."""

    def char_bytes(self, c: Character, seat: int, is_target: bool, is_opp: bool) -> bytes:
        """The float32 bytes of a character's slot as ``seat`` sees it."""
        flag, tenths, fractions = _FLAG, _TENTHS, self.fractions
        if c.personal:
            rel = (c.owner - seat) % self.players
            mine, common, owner = flag[rel == 0], 0.0, self.offsets[rel]
        else:
            mine, common, owner = 0.0, 1.0, 0.0
        s0, s1, s2 = c.stats
        g0, g1, g2 = c.goals
        return self.pack_char(
            1.0,
            flag[c.alive],
            mine,
            common,
            owner,
            tenths[s0],
            tenths[s1],
            tenths[s2],
            fractions[c.plus],
            fractions[c.minus],
            flag[c.wounded],
            flag[c.dying],
            flag[g0],
            flag[g1],
            flag[g2],
            flag[c.advantage],
            flag[is_target],
            flag[is_opp],
        )

    def char_row(self, c: Character, seat: int) -> bytearray:
        """:meth:`char_bytes` up to the markers, joined from four table pieces (packing costs about twice as much).

        A bytearray: written into the kept block by slice assignment, which copies a bytearray's bytes directly but
        first makes a bytearray of any other value (``bytes`` included).
        """
        g0, g1, g2 = c.goals
        s0, s1, s2 = c.stats
        return _JOIN(
            (
                self.char_idents[c.alive][(c.owner - seat) % self.players if c.personal else self.players],
                self.stat_rows[s0][s1][s2],
                self.condition_rows[c.plus][c.minus],
                self.char_flag_rows[c.wounded, c.dying, g0, g1, g2, c.advantage],
            )
        )

    def faction_bytes(self, f: Faction, seat: int, is_opp: bool) -> bytes:
        """The float32 bytes of a faction's slot as ``seat`` sees it."""
        flag, fractions = _FLAG, self.fractions
        rel = (f.owner - seat) % self.players
        return self.pack_faction(
            1.0,
            flag[f.alive],
            flag[rel == 0],
            self.offsets[rel],
            max(0.0, min(1.0, f.influence / self.high)),
            fractions[f.plus],
            fractions[f.minus],
            flag[f.advantage],
            flag[is_opp],
        )

    def faction_row(self, f: Faction, seat: int) -> bytearray:
        """:meth:`faction_bytes` up to the marker, memoised by the faction's values (a bounded table per seat).

        Kept as a bytearray (never written to: only copied into the blocks), like :meth:`char_row`'s rows.
        """
        key = (f.alive, f.owner, f.influence, f.plus, f.minus, f.advantage)
        rows = self.faction_rows[seat]
        row = rows.get(key)
        if row is None:
            if len(rows) >= _ROW_CACHE_LIMIT:
                rows.clear()
            row = rows[key] = bytearray(self.faction_bytes(f, seat, False)[:-_FACTION_MARK_BYTES])
        return row

    def encode(self, st: CrossroadsState, seat: int) -> np.ndarray:
        """The observation of ``seat`` (:func:`observe`; ``st`` is a state of this encoder's config)."""
        return observe(st, seat)

    def entity_block(self, st: CrossroadsState, seat: int, markers: MarkerSplices) -> bytearray:
        """Every entity slot of ``seat``'s observation, with the confrontation's ``markers`` written in.

        Kept per seat on the state (a bytearray only this state writes: a clone copies it) with the length of its
        change log it is up to date with (``obs_marks``) and the markers written in it (``obs_marked``): only the
        rows of the entities changed since are re-packed in place (a character's from its table pieces,
        :meth:`char_row`; a faction's from the value memo), up to the markers, which are rewritten only when the
        sides change (a confrontation's markers stand for its whole scene); the first block of a seat is built
        whole. A log grown past ``_CHANGES_KEPT`` is then emptied (the other seats' blocks that were not up to date
        are dropped).
        """
        blocks, marks, changes = st.obs_blocks, st.obs_marks, st.obs_changes
        block = blocks[seat]
        n = len(changes)
        if block is None:
            block = blocks[seat] = self.whole_block(st, seat)
            old: MarkerSplices = ()  # built unmarked
        else:
            char_slots, spans = self.char_slots, self.spans
            mark = marks[seat]
            # each changed entity once (the slots are disjoint); one change, the most common case, needs no set, and
            # none (only the markers changed) no slice
            for eid in (changes[mark],) if n - mark == 1 else set(changes[mark:]) if n != mark else ():
                start, end = spans[eid]
                if eid < char_slots:  # char_row inlined (the same four table pieces)
                    c = st.chars[eid]
                    g0, g1, g2 = c.goals
                    s0, s1, s2 = c.stats
                    block[start:end] = _JOIN(
                        (
                            self.char_idents[c.alive][(c.owner - seat) % self.players if c.personal else self.players],
                            self.stat_rows[s0][s1][s2],
                            self.condition_rows[c.plus][c.minus],
                            self.char_flag_rows[c.wounded, c.dying, g0, g1, g2, c.advantage],
                        )
                    )
                else:
                    block[start:end] = self.faction_row(st.factions[eid - char_slots], seat)
            old = st.obs_marked[seat]
        if old is not markers:  # another confrontation (or none): the old markers cleared, the new ones written
            for start, end, _, blank in old:
                block[start:end] = blank
            for start, end, marked, _ in markers:
                block[start:end] = marked
            st.obs_marked[seat] = markers
        marks[seat] = n
        if n > _CHANGES_KEPT:
            for s in range(self.players):
                if marks[s] != n:
                    blocks[s] = None
                marks[s] = 0
            st.obs_changes = []
        return block

    def whole_block(self, st: CrossroadsState, seat: int) -> bytearray:
        """:meth:`entity_block` from scratch, unmarked.

        Every entity's row (a faction's from the memo) and blank markers, then the empty slots.
        """
        layout = self.layout
        parts: list[bytes | bytearray] = [p for c in st.chars for p in (self.char_row(c, seat), _CHAR_UNMARKED)]
        parts.append(self.empty_char * (layout.char_slots - len(st.chars)))
        parts += [p for f in st.factions for p in (self.faction_row(f, seat), _FACTION_UNMARKED)]
        parts.append(self.empty_faction * (layout.faction_slots - len(st.factions)))
        return _JOIN(parts)

    def progress_bytes(self, st: CrossroadsState) -> bytes:
        """The scene and exit progress piece of ``st``, memoised by the scene number and the exits.

        Two features; the state keeps the piece until either changes (see :func:`observe`).
        """
        key = (st.scene_no, st.exits)
        pieces = self.progress_pieces
        piece = pieces.get(key)
        if piece is None:
            if len(pieces) >= _ROW_CACHE_LIMIT:
                pieces.clear()
            settings = st.settings
            piece = pieces[key] = self.pack_progress(
                st.scene_no / settings.max_scenes, min(1.0, st.exits / settings.exits_to_end)
            )
        return piece

    def side_bytes(self, s: Side, mine: bool) -> bytes:
        """A confrontation side's piece: it is the observer's, its dice, burns and successes."""
        d3, burned, succ = s.dice, s.burned, s.succ
        tenths, sixths = _TENTHS, _SIXTHS
        return self.pack_side(
            _FLAG[mine],
            tenths[d3[0]] if d3 else 0.0,
            tenths[d3[1]] if d3 else 0.0,
            tenths[d3[2]] if d3 else 0.0,
            sixths[burned] if burned <= _SCALE else 1.0,
            sixths[succ] if succ <= _SCALE else 1.0,
        )

    def side_obs(self, s: Side) -> SidePieces:
        """The pieces a side shows, kept on the side (``Side.obs``) until one of them changes.

        :meth:`side_bytes` as another seat's and as the observer's (memoised by its dice, burns and successes), then its
        success flags.
        """
        key = (s.dice, s.burned, s.succ)
        pairs = self.side_pairs
        pair = pairs.get(key)
        if pair is None:
            if len(pairs) >= _ROW_CACHE_LIMIT:
                pairs.clear()
            pair = pairs[key] = (self.side_bytes(s, False), self.side_bytes(s, True))
        pieces = s.obs = (pair[0], pair[1], self.side_flags[s.flags])
        return pieces


SidePieces = tuple[bytes, bytes, bytes]
"""A confrontation side's observation pieces: its piece as another seat's side, as the observer's own, its flags."""

MarkerSplices = tuple[tuple[int, int, bytearray, bytearray], ...]
"""A confrontation's markers in an entity block: (start, end, marked bytes, unmarked bytes) per marked slot."""


class _Markers(dict[tuple[int | None, int | None], MarkerSplices]):
    """The marker bytes a confrontation writes over its sides' slots in an entity block, by the sides' entity ids.

    The key is (target, opposition); ``(None, None)`` (no confrontation) marks nothing. A character slot's last two
    features are its target and opposition markers, a faction slot's last one its opposition marker; a side not
    chosen yet (``None``) marks nothing. Each key's splices are one shared tuple (``observe`` tells by identity
    whether a block holds them).
    """

    def __init__(self, encoder: Encoder) -> None:
        super().__init__()
        self.encoder = encoder

    def __missing__(self, key: tuple[int | None, int | None]) -> MarkerSplices:
        enc = self.encoder
        char_slots = enc.layout.char_slots
        target, opp = key
        out = []
        for eid in key:
            if eid is None:
                continue
            start = enc.spans[eid][1]  # the markers follow the entity's row
            if eid < char_slots:
                out.append((start, start + _CHAR_MARK_BYTES, _CHAR_MARKS[eid == target][eid == opp], _CHAR_UNMARKED))
            else:
                out.append((start, start + _FACTION_MARK_BYTES, _FACTION_MARKS[eid == opp], _FACTION_UNMARKED))
        value = self[key] = tuple(out)
        return value


def _one_hot(n: int, ones: tuple[int, ...]) -> bytes:
    """The float32 bytes of ``n`` zeros with a 1 at each index of ``ones``."""
    return struct.pack(f"{n}f", *[float(k in ones) for k in range(n)])


class _FlagBytes(dict[tuple[bool, bool, bool], bytes]):
    """The flags piece of a check outside a confrontation (its three success flags, the rest zero), by flags."""

    def __init__(self, pack: Callable[..., bytes]) -> None:
        super().__init__()
        self.pack = pack

    def __missing__(self, flags: tuple[bool, bool, bool]) -> bytes:
        f0, f1, f2 = flags
        value = self[flags] = self.pack(_FLAG[f0], _FLAG[f1], _FLAG[f2], 0.0, 0.0, 0.0, 0.0)
        return value


class _DiceBytes(dict[tuple[int, ...], bytes]):
    """The piece of the three dice being assigned or spent, by the dice (at most 1,000 rolls of 3d10)."""

    def __init__(self, pack: Callable[..., bytes]) -> None:
        super().__init__()
        self.pack = pack

    def __missing__(self, dice: tuple[int, ...]) -> bytes:
        value = self[dice] = self.pack(_TENTHS[dice[0]], _TENTHS[dice[1]], _TENTHS[dice[2]])
        return value


_CHAR_MARKS = tuple(
    tuple(bytearray(struct.pack("2f", float(t), float(o))) for o in (False, True)) for t in (False, True)
)
"""A character slot's last two features (target, opposition marker) by (is target, is opposition)."""
_FACTION_MARKS = tuple(bytearray(struct.pack("f", float(o))) for o in (False, True))
"""A faction slot's last feature (opposition marker)."""
_CHAR_UNMARKED, _FACTION_UNMARKED = _CHAR_MARKS[False][False], _FACTION_MARKS[False]
"""The last bytes of an unmarked character and faction slot (zeros)."""
_CHAR_MARK_BYTES = 8
"""The bytes of a character slot's two markers (target, opposition), its last two float32 features."""
_FACTION_MARK_BYTES = 4
"""The bytes of a faction slot's opposition marker, its last float32 feature."""
_JOIN = bytearray().join
"""Joins the observation's float32 pieces into one fresh bytearray (one copy; the array over it is writable)."""


def observe(st: CrossroadsState, seat: int) -> np.ndarray:
    """The observation of ``seat`` (see the rules card in ``episode.py``), a fresh float32 array.

    The state's ``observation`` itself (no method in between: one call per env step). The global features
    (context, Admin, scene, the roll, the confrontation) as float32 byte pieces, each from a table of the few
    values it shows (see the tables in :class:`Encoder`, packed only the first time), then the entity slots as one
    block with the confrontation's markers written in (the state's ``obs_blocks``, patched by
    :meth:`Encoder.entity_block` only after an entity or the sides changed), joined into a fresh bytearray.
    """
    enc = st.encoder
    p = st.phase
    head = enc.seat_heads[seat][p][st.actor][st.admin]
    progress = st.obs_progress  # kept on the state until the scene number or the exits change
    if progress is None:
        progress = st.obs_progress = enc.progress_bytes(st)
    if _SHOWS_ROLL[p]:
        roll = st.sides[st.side_i].dice if st.purpose == _CONFRONT and p == _ASSIGN else st.dice
        dice = enc.dice_pieces[roll] if roll else enc.no_dice
    else:
        dice = enc.no_dice
    succ, left, degree = st.succ, st.left, st.degree  # a count at 6 or more reads 1 (table index 6)
    counts = enc.counts[succ if succ < _SCALE else _SCALE][left if left < _SCALE else _SCALE][
        degree if degree < _SCALE else _SCALE
    ]
    purpose = st.purpose
    tail = (
        enc.pack_tail(st.build_step / 2, _FLAG[purpose == _GOAL], _FLAG[purpose == _BEAUTY_CHECK])
        if p == _BUILD
        else enc.tails[purpose]
    )
    sides = st.sides
    markers = st.obs_markers  # kept on the state until a side's entity (or the sides) change
    if markers is None:  # the confrontation's target and opposition, the last features of their slots
        key = (sides[-1].eid, sides[0].eid if len(sides) == 2 else None) if sides else _NO_CONFRONTATION
        markers = st.obs_markers = enc.markers[key]
    block = st.obs_blocks[seat]
    if block is None or st.obs_marks[seat] != len(st.obs_changes) or st.obs_marked[seat] is not markers:
        block = enc.entity_block(st, seat, markers)
    # struct packs Python floats to float32 (the same C cast numpy uses); the bytearray makes the array writable
    if len(sides) == 2 and sides[0].eid is not None:  # a confrontation: each side's kept pieces (all false until read)
        s0, s1 = sides
        o0, o1 = s0.obs, s1.obs
        if o0 is None:
            o0 = enc.side_obs(s0)
        if o1 is None:
            o1 = enc.side_obs(s1)
        first, second, acting = o0[s0.seat == seat], o1[s1.seat == seat], enc.seconds[st.side_i]
        joined = _JOIN((head, progress, dice, counts, first, second, o0[2], o1[2], acting, tail, block))
        return _NEW_ARRAY(enc.shape, _FLOAT32, joined)
    rest = enc.own_rests[st.flags] if _SHOWS_FLAGS[p] else enc.no_rest
    return _NEW_ARRAY(enc.shape, _FLOAT32, _JOIN((head, progress, dice, counts, rest, tail, block)))


@lru_cache(maxsize=64)
def encoder_of(settings: Settings) -> Encoder:
    """The :class:`Encoder` of a resolved config (built once per config)."""
    layout = layout_of(settings.players, settings.max_characters, settings.max_factions)
    return Encoder(layout, settings.players, settings.max_conditions, settings.writeoff_high)


def encode(st: CrossroadsState, seat: int) -> np.ndarray:
    """The observation of ``seat`` (see the rules card in ``episode.py``)."""
    return encoder_of(st.settings).encode(st, seat)

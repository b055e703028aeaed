"""The Episode scenario of Crossroads: its state machine, which only sequences the rules of ``rules.py``.

``rulebreaker/CrossroadsEpisode-v0`` — the rules card (rule numbers: ``docs/rules/crossroads.md``):

## Description
A whole GM-less episode. Each player builds a personal character (12 points over G/KH/M, Rule 1) and
presents a faction (Rule 2); then the Admin role rotates left (Rule 8), each Admin framing an
introduction (Rule 9), a deal (Rule 10) or a confrontation (Rule 11), until three exits (write-offs,
Rule 12) or the scene limit (Rule 13).

## Actions
``Discrete(69)`` as written, one table (:class:`envs.crossroads.actions.Act`): stat values 1-9 (build),
six dice permutations (assign), spends/outcomes (+1/+2 stat, +C, -C named or plain, mark, harm, unmark,
kill, Influence), pass, burn, trade, four scene types, no-opposition, and 18 entity targets (10 character,
8 faction slots; ``episode.max_characters`` / ``max_factions`` above 10 / 8 add target ids). The decision
context (``build``, ``assign``, ``spend``, ``admin_scene``, ``admin_target``, ``admin_opposition``,
``admin_aim``, ``target_aim``, ``deal_faction``, ``deal_against``, ``burn_before``, ``burn_after``,
``loser_trade``, ``buy_outcome``, ``loser_mark``, ``lower_influence``) says which are legal.

## Observation
``Box(0, 1, (304,), float32)`` as written (``observation.py``): 52 global features (context one-hot, Admin
seat relative to the agent over 5 seat slots, scene and exit progress, the dice being assigned or spent,
successes / spends left / degree, both confrontation sides' dice, burns, successes and success flags, build
step, check purpose), then 10 character slots x 18 (alive, mine, common, owner, stats, +C, -C, wounded,
dying, goal boxes, Advantage, target / opposition markers) and 8 faction slots x 9 (alive, mine, owner,
Influence, +C, -C, Advantage, opposition marker). More seats, characters or factions than that add slots.

## Rewards
At the end: +1 per personal character of the seat that achieved its goal, -1 per one otherwise written
off (sum clipped to +-1), plus 0.25 x mean over its factions of (Influence - 4) / 4 clipped to +-1.

## Episode end
Three exits (``completed``) or ``episode.max_scenes`` = 40 scenes (``time_limit``, a finding-worthy
reason). ``max_episode_steps`` = 3000 agent decisions is never reached in practice.

## Arguments
``episode.players`` (2-12) and every rules key of ``rules.toml`` via ``rules=`` / ``config=``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, State
from envs.core.slots import slot_copier
from envs.crossroads import rules
from envs.crossroads.actions import (
    ASSIGN_ACTIONS,
    CONTEXT_NAMES,
    MINUS_C_ACTIONS,
    MINUS_C_OF,
    NUM_CONTEXTS,
    Act,
    Phase,
    Purpose,
    Scene,
    character_name,
    faction_name,
    label,
    stat_of,
)
from envs.crossroads.config import CrossroadsConfig, Settings, settings_of
from envs.crossroads.dice import (
    CHANCE_OUTCOMES,
    PERMUTATIONS,
    STATS,
    class_outcomes,
    crossroads_of,
    face_classes,
    optimal_permutations,
)
from envs.crossroads.observation import MarkerSplices, SidePieces, encoder_of, observe
from envs.crossroads.rules import (
    ALL_STATS,
    NO_FLAGS,
    STAT_COUNT,
    EntryKind,
    Flags,
    MinusC,
    SetupStep,
    Stat,
    fast_members,
    int_members,
)

if TYPE_CHECKING:
    from envs.core.dice import Rng

Dice = tuple[int, ...]

_ORDERED_OUTCOMES: list[tuple[Hashable, float]] = [
    ((a, b, c), 0.001) for a in range(1, 11) for b in range(1, 11) for c in range(1, 11)
]
"""Rule 3 with ``check.assignment = "in_order"``: every ordered 3d10 roll."""

_MINUS_C_LABELS = {MinusC.WOUNDED: '-C "wounded"', MinusC.DYING: '-C "dying"', MinusC.PLAIN: "-C"}


def _ints(a: object, b: object, c: object) -> bool:
    """Whether three dice are plain ``int`` faces (not bools, floats or numpy scalars)."""
    return type(a) is int and type(b) is int and type(c) is int


def _sorted3(d: Dice) -> Dice:
    """Three dice in ascending order (the tuple itself when already sorted: no new tuple per roll)."""
    a, b, c = d
    if a <= b <= c:
        return d
    if a > b:
        a, b = b, a
    if b > c:
        b, c = c, b
        if a > b:
            a, b = b, a
    return (a, b, c)


class Character:
    """Rule 1: a character: stats G/KH/M, goal boxes, +C and -C, owner, personal or common."""

    __slots__ = (
        "idx",
        "eid",
        "owner",
        "personal",
        "stats",
        "plus",
        "minus",
        "wounded",
        "dying",
        "goals",
        "alive",
        "exit",
        "advantage",
        "achieved",
    )
    is_char = True

    def __init__(self, idx: int, owner: int, personal: bool, stats: list[int]) -> None:
        self.idx = idx
        self.eid = idx  # its entity id (and observation slot): a character's is its index
        self.owner = owner  # personal: the owning seat; common: the seat that introduced it
        self.personal = personal
        self.stats = stats
        self.plus = 0
        self.minus = 0  # all -C, including "wounded" and "dying"
        self.wounded = False
        self.dying = False
        self.goals = [False, False, False]
        self.alive = True
        self.exit = ""
        self.advantage = False
        self.achieved = False

    @property
    def name(self) -> str:
        return character_name(self.idx)

    def copy(self) -> Character:
        c = Character.__new__(Character)
        c.idx, c.eid, c.owner, c.personal, c.stats = self.idx, self.eid, self.owner, self.personal, list(self.stats)
        c.plus, c.minus, c.wounded, c.dying = self.plus, self.minus, self.wounded, self.dying
        c.goals, c.alive, c.exit = list(self.goals), self.alive, self.exit
        c.advantage, c.achieved = self.advantage, self.achieved
        return c

    def key(self) -> tuple[object, ...]:
        return (
            self.owner,
            self.personal,
            tuple(self.stats),
            self.plus,
            self.minus,
            self.wounded,
            self.dying,
            tuple(self.goals),
            self.alive,
            self.advantage,
            self.achieved,
        )


class Faction:
    """Rule 2: a faction: Influence, +C and -C, owner."""

    __slots__ = ("idx", "eid", "owner", "influence", "plus", "minus", "alive", "exit", "advantage")
    is_char = False

    def __init__(self, idx: int, eid: int, owner: int, influence: int) -> None:
        self.idx = idx
        self.eid = eid  # faction_base + idx: its entity id (and observation slot)
        self.owner = owner
        self.influence = influence
        self.plus = 0
        self.minus = 0
        self.alive = True
        self.exit = ""
        self.advantage = False

    @property
    def name(self) -> str:
        return faction_name(self.idx)

    def copy(self) -> Faction:
        f = Faction.__new__(Faction)
        f.idx, f.eid, f.owner, f.influence = self.idx, self.eid, self.owner, self.influence
        f.plus, f.minus, f.alive, f.exit, f.advantage = self.plus, self.minus, self.alive, self.exit, self.advantage
        return f

    def key(self) -> tuple[object, ...]:
        return (self.owner, self.influence, self.plus, self.minus, self.alive, self.advantage)


Entity = Character | Faction


class Side:
    """Rule 11: one side of a confrontation: its entity (``None`` until chosen), who plays it, its roll."""

    __slots__ = ("eid", "seat", "aim", "burned", "rerolls", "dice", "perm", "flags", "succ", "won", "lost", "obs")

    def __init__(self, eid: int | None, seat: int) -> None:
        self.eid = eid
        self.seat = seat
        self.aim: int | None = None  # the scene goal (an Act)
        self.burned = 0  # +C burnt before the roll
        self.rerolls = 0
        self.dice: Dice = ()
        self.perm = 0
        self.flags: Flags = NO_FLAGS
        self.succ = 0
        self.won = False
        self.lost = False
        self.obs: SidePieces | None = None
        """The side's observation pieces (:meth:`Encoder.side_obs`: its dice, burns and successes as another seat's
        side and as the observer's own, then its success flags), kept until one of them changes: every rule that
        sets ``dice``, ``burned``, ``succ`` or ``flags`` drops it."""

    def copy(self) -> Side:
        s = Side.__new__(Side)
        s.eid, s.seat, s.aim, s.burned, s.rerolls = self.eid, self.seat, self.aim, self.burned, self.rerolls
        s.dice, s.perm, s.flags = self.dice, self.perm, self.flags
        s.succ, s.won, s.lost, s.obs = self.succ, self.won, self.lost, self.obs
        return s

    def key(self) -> tuple[object, ...]:
        return (
            self.eid,
            self.seat,
            self.aim,
            self.burned,
            self.rerolls,
            self.dice,
            self.perm,
            self.flags,
            self.succ,
            self.won,
            self.lost,
        )


class CrossroadsState(State[Hashable]):
    """A Crossroads episode (Rules 1-13): the sequence of setup, scenes and their checks."""

    FIELDS = (
        "settings",
        "encoder",
        "faction_base",
        "faction_target_0",
        "_crossroads_live",
        "_own_menus",
        "num_players",
        "log",
        "_outcome",
        "narrating",
        "cfg",
        "chars",
        "factions",
        "ents",
        "seat_personal",
        "own_bits",
        "chars_in_play",
        "personals_in_play",
        "factions_in_play",
        "personals_alive",
        "commons_alive",
        "factions_alive",
        "phase",
        "actor",
        "first",
        "admin",
        "scene_no",
        "scene",
        "exits",
        "setup_queue",
        "goal_pending",
        "chk_eid",
        "chk_seat",
        "purpose",
        "dice",
        "perm",
        "flags",
        "succ",
        "left",
        "build_step",
        "sides",
        "side_i",
        "degree",
        "deal_faction",
        "initial_rolls",
        "_legal",
        "obs_changes",
        "obs_blocks",
        "obs_marks",
        "obs_marked",
        "_sampled",
        "_next_admins",
        "_build_menus",
        "_scene_menus",
        "_opposition_menus",
        "obs_progress",
        "obs_markers",
        "_stat_room",
        "_opp_menus",
        "_faction_checks",
    )
    """Every attribute of a state (the protocol's ``num_players``, ``log``, ``_outcome`` and ``narrating`` too)."""
    # Slots, not an instance dict: a dict of more than 30 keys is not shared with the class, so Python 3.11 reads
    # each attribute through a hashed lookup and cannot specialise any ``self.method()`` call (a generic method
    # lookup per call); slot reads and cached method loads are the interpreter's fast paths. (The protocol's
    # State has no __slots__, so an instance still has an empty __dict__ nothing writes to.)
    __slots__ = FIELDS

    def __init__(self, cfg: CrossroadsConfig) -> None:
        self.narrating = True  # the protocol's class default, which the slot hides
        tables = _tables_of(cfg)
        self.settings = tables.settings
        self.encoder = tables.encoder  # observation encoding (resolved once per config)
        self.faction_base = tables.faction_base
        """Entity id (and target offset) of faction 0: the character slots come first (10 as written)."""
        self.faction_target_0 = _TARGET_0 + self.faction_base
        self._crossroads_live = tables.crossroads_live
        """Whether a crossroads changes anything beyond the narration (Rule 5: ``crossroads.effect``)."""
        self._own_menus = tables.own_menus
        """The memo of :meth:`_own_options`, shared by the states of a config."""
        self._faction_checks = tables.faction_checks
        """Rule 4's faction checks by (dice, Influence), shared by the states of a config (they read its check keys)."""
        super().__init__(self.settings.players)
        self._next_admins = tables.next_admins
        """Rule 8's rotation as a table: the next Admin by the current one (a subscript at every scene's end)."""
        self._build_menus = tables.build_menus
        self._stat_room = tables.stat_room
        self._opp_menus = tables.opp_menus
        """The memo of :meth:`_opponent_options`, shared by the states of a config."""
        """Rule 6: each stat value's room under the cap (0: +1 and +2 fit, 1: only +1, 2: none), by the value."""
        """Rule 1's value menus of this config by points left x ``_STEP_STRIDE`` + build step (see _legal_build)."""
        self._scene_menus = tables.scene_menus
        self._opposition_menus = tables.opposition_menus
        self.cfg = cfg
        self.chars: list[Character] = []
        self.factions: list[Faction] = []
        self.ents: dict[int | None, Entity] = {}
        """Every character and faction by entity id (the rules read an entity by id at almost every step: a
        subscript instead of :meth:`entity`'s call; keyed ``int | None`` as the ids the sides hold are)."""
        # who is in play, counted as entities are added and written off (the Admin's scene menu, Rule 8, reads
        # these at every scene instead of walking every entity); a seat has at most one personal character in
        # play (Rules 7 and 9)
        self.seat_personal: list[int | None] = [None] * self.num_players
        """Each seat's personal character in play (its index), if any."""
        # who is in play as bit sets by entity id (bit ``eid``): the entity menus of Rules 10-12 are tables by these
        # (see ``_ENTITY_MENUS``), the same menus a walk of every entity lists, in entity id order
        self.own_bits: list[int] = [0] * self.num_players
        """Each seat's personal character in play as a bit set (its bit, or 0)."""
        self.chars_in_play = 0
        self.personals_in_play = 0
        self.factions_in_play = 0
        self.personals_alive = 0
        self.commons_alive = 0
        self.factions_alive = 0
        self.phase = _Phase.FIRST_PLAYER
        self.actor = 0
        self.first = 0
        self.admin = 0
        self.scene_no = 0
        self.scene = _Scene.SETUP
        self.exits = 0
        self.setup_queue: list[SetupStep] = []
        self.goal_pending: list[int] = []  # characters whose goal check is still to be rolled (Rule 12)
        # the current check (Rules 3-6, 12); a confrontation side's roll lives in its Side
        self.chk_eid: int | None = None
        self.chk_seat = 0
        self.purpose = _Purpose.SPEND
        self.dice: Dice = ()
        self.perm = 0
        self.flags: Flags = NO_FLAGS
        self.succ = 0
        self.left = 0  # spends / outcomes / Influence cuts still to make
        self.build_step = 0
        # confrontation (Rule 11)
        self.sides: list[Side] = []
        self.side_i = 0
        self.degree = 0
        self.deal_faction: int | None = None
        self.initial_rolls = False
        self._legal: Sequence[int] | None = None  # legal actions of the current node (cleared by every move)
        self.obs_changes: list[int] = []
        """The entity ids changed so far, in order: every rule that changes a field an observation slot shows, or
        adds an entity, appends the entity's id (repeats allowed). The encoder reads it to patch its kept blocks."""
        self.obs_blocks: list[bytearray | None] = [None] * self.num_players
        """The observation's entity slots (all characters, then all factions, unmarked) per observing seat,
        filled by the encoder; ``obs_marks[seat]`` is the length of ``obs_changes`` the seat's block is
        up to date with (the encoder re-packs only the slots of the entities changed after that mark)."""
        self.obs_marks: list[int] = [0] * self.num_players
        self.obs_marked: list[MarkerSplices] = [()] * self.num_players
        """The confrontation markers written into each seat's block (``observe`` compares them with ``obs_markers``)."""
        self.obs_progress: bytes | None = None
        """The observation's scene and exit progress piece, kept until the scene number or the exits change."""
        self.obs_markers: MarkerSplices | None = None
        """The observation's confrontation marker splices, kept until a side's entity (or the sides) change."""
        self._sampled: Dice | None = None
        """The roll :meth:`sample_chance` last drew at this roll node (cleared by every chance move).

        Applying that very tuple needs none of :meth:`_apply_chance`'s checks: it is a sorted-where-needed 3d10 roll
        of this node, and the node cannot change before a chance move (a roll node has no decisions).
        """
        if cfg.setup.first_player == "seat0":
            self._begin_setup(0)

    # ------------------------------------------------------------------------------------------
    # protocol: who moves, legal actions
    # ------------------------------------------------------------------------------------------
    def current_player(self) -> int:
        p = self.phase
        if p >= _ROLL:
            return TERMINAL if p == _OVER else CHANCE
        return self.actor

    def decision_context(self) -> str:
        p = self.phase
        return CONTEXT_NAMES[p] if p < NUM_CONTEXTS else "chance"

    def entity(self, eid: int | None) -> Entity:
        """The character or faction with entity id ``eid``."""
        assert eid is not None
        return self.ents[eid]

    def checker(self) -> Entity:
        """The entity rolling the current (non-confrontation) check."""
        return self.ents[self.chk_eid]

    def legal_actions(self) -> list[int]:
        cached = self._legal
        if cached is None:
            cached = self._legal = _LEGAL_OF[self.phase](self)
        return [*cached]  # a fresh list (a display, not a call of ``list``)

    def legal_tuple(self) -> tuple[int, ...]:
        cached = self._legal
        if cached is None:
            cached = self._legal = _LEGAL_OF[self.phase](self)
        return cached if type(cached) is tuple else tuple(cached)  # a kept tuple as it is: nobody can change it

    # -- legal actions per decision phase (the rules decide; these only list the ids) --------------
    # (a phase's list may be a shared tuple: legal_actions hands out copies)
    def _legal_none(self) -> Sequence[int]:
        return ()

    def _legal_assign(self) -> Sequence[int]:
        """Rule 3: any of the six assignments."""
        return ASSIGN_ACTIONS

    def _legal_build(self) -> Sequence[int]:
        """Rule 1: the values the stat being set may take (memoised per config by the step and the points left)."""
        step, eid = self.build_step, self.chk_eid  # _checker_id inlined
        assert eid is not None
        key = (self.settings.creation_points - sum(self.chars[eid].stats[:step])) * _STEP_STRIDE + step
        menu = self._build_menus.get(key)
        if menu is None:
            menu = self._build_menus[key] = tuple(self._plain_build_menu(step))
        return menu

    def _plain_build_menu(self, step: int) -> list[int]:
        """:meth:`_legal_build` computed (Rule 1)."""
        st = self.settings
        c = self.chars[self._checker_id()]
        left = st.creation_points - sum(c.stats[:step])
        values = rules.stat_values(left, STAT_COUNT - 1 - step, st.stat_min, st.stat_max)
        return list(range(_VALUE_1 + values.start - 1, _VALUE_1 + values.stop - 1))

    def _legal_spend(self) -> Sequence[int]:
        """Rule 6: a spend on the roller itself (``_own_options(e, None, True)`` inlined: the same key, memo, menu)."""
        e = self.ents[self.chk_eid]
        if e.is_char:
            g, kh, m = e.stats  # type: ignore[union-attr]
            room = self._stat_room
            key: Hashable = (room[g], room[kh], room[m], e.plus, e.minus, None, None)
        else:
            key = (e.plus, e.minus, True)
        out = self._own_menus.get(key)
        if out is None:
            return self._own_options(e, None, True)  # positional: a keyword call is not specialised
        return out

    def _legal_outcome(self) -> Sequence[int]:
        """Rules 11.2/11.7: an outcome on oneself or against the other side."""
        s = self.sides[self.side_i]
        beauty_own = self.purpose == _BEAUTY and not self.settings.beauty_against_other
        opp = None if beauty_own else self.opponent_side(self.side_i)
        return [*self._own_options(self.ents[s.eid], s.flags, False), *self._opponent_options(s, opp)]

    def _legal_burn_before(self) -> Sequence[int]:
        """Rule 11.3: a side with a +C may burn it for a success."""
        return _BURN_OR_PASS if self.ents[self.sides[self.side_i].eid].plus > 0 else _PASS_ONLY

    def _legal_burn_after(self) -> Sequence[int]:
        """Rule 11.3: a side with a +C may burn it to reroll (``rules.may_reroll`` inlined).

        A +C, and a first reroll or ``confrontation.reroll_repeatable``.
        """
        s = self.sides[self.side_i]
        ok = self.ents[s.eid].plus > 0 and (self.settings.reroll_repeatable or s.rerolls == 0)
        return _BURN_OR_PASS if ok else _PASS_ONLY

    # The menus that list entities in play (targets, oppositions, deal partners, factions) are the bit sets of who
    # is in play read through ``_ENTITY_MENUS``, one table for every game (Rules 10-12 ask who is in play, and the
    # roster changes about once per round of Admins: a menu listed per roster would mostly be listed afresh).
    def _legal_target(self) -> Sequence[int]:
        """Rule 11.1: another player's personal character in play (a table by who is in play)."""
        return _ENTITY_MENUS[self.personals_in_play & ~self.own_bits[self.admin]]

    def _legal_admin_aim(self) -> list[int]:
        """Rules 11.1/11.2: a -C for the target, unmarking one of its boxes, or no counteraction."""
        t = self.chars[self._target_id()]
        g0, g1, g2 = t.goals
        return [*self._minus_c_actions(t), *_UNMARKS[g0][g1][g2], _NO_OPPOSITION]

    def _legal_target_aim(self) -> list[int]:
        """Rule 11.1: a +C, a -C for the opposition, or marking one of the target's boxes."""
        t = self.chars[self._target_id()]
        opposition = self.ents[self.sides[0].eid]
        g0, g1, g2 = t.goals
        return [_GAIN_PLUS_C, *self._minus_c_actions(opposition), *_MARKS_LEFT[g0][g1][g2]]

    def _legal_deal_faction(self) -> Sequence[int]:
        """Rule 10: any faction in play (a table by who is in play)."""
        return _ENTITY_MENUS[self.factions_in_play]

    def _legal_loser_trade(self) -> Sequence[int]:
        """Rule 11.6: remove a -C of the winner while it has one and the degree is positive."""
        w = self.entity(self._winner_side().eid)
        return _TRADE_OR_PASS if rules.may_trade(w.minus, self.degree) else _PASS_ONLY

    def _legal_loser_mark(self) -> list[int]:
        """Rule 11.8: a box the loser succeeded on, or pass."""
        s = self.sides[self.side_i]
        c = self.chars[self._side_id(s)]
        return [_MARK_G + b for b in rules.markable_boxes(s.flags, c.goals)] + [_PASS]

    def _legal_lower_influence(self) -> list[int]:
        """Rule 12: the goal check lowers the Influence of a faction in play, or passes."""
        return [*_ENTITY_MENUS[self.factions_in_play], _PASS]

    def _legal_scenes(self) -> Sequence[int]:
        """Rule 8: the scene types that can happen now (none: the Admin passes), memoised per config by who is in play.

        The menu reads the entities introduced so far and who is in play (the Admin's own character included), which
        the key holds; the memo then nearly always hits (a menu listed per Admin and roster mostly would not).
        """
        key = (
            len(self.chars),
            len(self.factions),
            self.chars_in_play,
            self.personals_in_play,
            self.own_bits[self.admin],
            self.factions_in_play,
        )
        menus = self._scene_menus
        menu = menus.get(key)
        if menu is None:
            if len(menus) >= _OWN_MENUS_LIMIT:
                menus.clear()
            menu = menus[key] = tuple(self._plain_scenes())
        return menu

    def _plain_scenes(self) -> Sequence[int]:
        """:meth:`_legal_scenes` computed (Rule 8)."""
        st = self.settings
        out: list[int] = []
        if len(self.chars) < st.max_characters:
            out.append(_SCENE_INTRO_CHARACTER)
        if len(self.factions) < st.max_factions:
            out.append(_SCENE_INTRO_FACTION)
        own = self.seat_personal[self.admin] is not None  # the Admin has a personal character in play
        if own and self.factions_alive:  # Rule 10
            out.append(_SCENE_DEAL)
        if self.personals_alive > own and (st.nobody_opposes or own or self.commons_alive or self.factions_alive):
            out.append(_SCENE_CONFRONT)  # another seat's character to target, and an opposition (Rule 11.1)
        return out or _PASS_ONLY

    def _legal_oppositions(self) -> Sequence[int]:
        """Rule 11.1: the Admin's own character, a common character or any faction in play (a table by who is in play).

        The target is another's; nobody opposes if ``confrontation.nobody_opposes`` (the config's table adds it).
        """
        commons = self.chars_in_play & ~self.personals_in_play
        return self._opposition_menus[commons | self.own_bits[self.admin] | self.factions_in_play]

    def _deal_against_options(self) -> Sequence[int]:
        """Rule 10: the deal is made against any other character in play (a table by who is in play)."""
        return _ENTITY_MENUS[self.chars_in_play & ~self.own_bits[self.admin]]

    def _own_options(self, e: Entity, flags: Flags | None, spend: bool) -> tuple[int, ...]:
        """Rules 6 and 11.7: what a roller may buy for itself, memoised by the values it reads (per config).

        A character's stats are read only against ``character.stat_cap`` (room for +1, for +2, or none), so the memo
        is keyed by each stat's room class (``_stat_room``) rather than the stat: ~1,000 stat triples fall into 27
        classes, and the memo then nearly always hits.
        """
        if e.is_char:
            g, kh, m = e.stats  # type: ignore[union-attr]
            room = self._stat_room
            key: Hashable = (room[g], room[kh], room[m], e.plus, e.minus, flags, None if flags is None else (*e.goals,))  # type: ignore[union-attr]
        else:
            key = (e.plus, e.minus, spend)
        menus = self._own_menus
        out = menus.get(key)
        if out is None:
            if len(menus) >= _OWN_MENUS_LIMIT:
                menus.clear()
            out = menus[key] = tuple(self._plain_own_options(e, flags, spend))
        return out

    def _plain_own_options(self, e: Entity, flags: Flags | None, spend: bool) -> list[int]:
        """:meth:`_own_options` computed (Rules 6 and 11.7)."""
        st = self.settings
        cap = st.max_conditions
        out: list[int] = []
        if isinstance(e, Character):
            stat_cap = st.stat_cap
            g, kh, m = e.stats
            if g < stat_cap:
                out.append(_STAT_UP_G)
            if kh < stat_cap:
                out.append(_STAT_UP_G + 1)
            if m < stat_cap:
                out.append(_STAT_UP_G + 2)
            if rules.double_step_payment(st.double_step, True, e.plus, e.minus) > 0:
                if g + 2 <= stat_cap:
                    out.append(_STAT_UP2_G)
                if kh + 2 <= stat_cap:
                    out.append(_STAT_UP2_G + 1)
                if m + 2 <= stat_cap:
                    out.append(_STAT_UP2_G + 2)
            if rules.may_gain(e.plus, cap):
                out.append(_GAIN_PLUS_C)
            if e.minus > 0:
                out.append(_REMOVE_MINUS_C)
            if flags is not None:
                for s in rules.markable_boxes(flags, e.goals):
                    out.append(_MARK_G + s)
        else:
            if rules.may_gain(e.plus, cap):
                out.append(_GAIN_PLUS_C)
            if e.minus > 0:
                out.append(_REMOVE_MINUS_C)
            if not spend:
                out.append(_INFLUENCE_UP)
        out.append(_PASS)
        return out

    def _opponent_options(self, s: Side, opp: Side | None) -> Sequence[int]:
        """Rule 11.7: what a winner may buy against the other side, memoised by the values it reads (per config)."""
        if opp is None:
            return ()
        o = self.ents[opp.eid]
        if not o.alive:
            return ()
        if o.is_char:
            key: Hashable = (o.plus, o.minus, o.wounded, o.dying, s.flags, (*o.goals,))  # type: ignore[union-attr]
        else:
            key = (o.plus, o.minus)
        menus = self._opp_menus
        out = menus.get(key)
        if out is None:
            if len(menus) >= _OWN_MENUS_LIMIT:
                menus.clear()
            out = menus[key] = tuple(self._plain_opponent_options(s, o))
        return out

    def _plain_opponent_options(self, s: Side, o: Entity) -> list[int]:
        """:meth:`_opponent_options` computed for the other side's entity ``o``, in play (Rule 11.7)."""
        st = self.settings
        cap = st.max_conditions
        out: list[int] = []
        if isinstance(o, Character):
            out += _HARM
            if rules.double_step_payment(st.double_step, False, o.plus, o.minus) > 0:
                out += _HARM2
            if rules.may_gain(o.minus, cap):
                out += self._minus_c_actions(o)
            if o.plus > 0:
                out.append(_REMOVE_PLUS_C)
            for b in rules.unmarkable_boxes(s.flags, o.goals):
                out.append(_UNMARK_G + b)
            if rules.killable(st.kill_outcome, o.wounded, o.dying):
                out.append(_KILL)
        else:
            if rules.may_gain(o.minus, cap):
                out += self._minus_c_actions(o)
            if o.plus > 0:
                out.append(_REMOVE_PLUS_C)
            out += _INFLUENCE_AGAINST
        return out

    # ------------------------------------------------------------------------------------------
    # protocol: chance
    # ------------------------------------------------------------------------------------------
    def chance_outcomes(self) -> list[tuple[Hashable, float]]:
        if self.phase == _Phase.FIRST_PLAYER:
            n = self.num_players
            return [(s, 1.0 / n) for s in range(n)]
        if self.phase == _Phase.ROLL:
            ordered = not self.settings.one_each and self._roller_is_char()
            if self.settings.dice_classes:
                return list(class_outcomes(self._roll_thresholds(), ordered))
            return list(_ORDERED_OUTCOMES) if ordered else list(CHANCE_OUTCOMES)
        raise ValueError("not a chance node")

    def _roll_thresholds(self) -> tuple[int, ...]:
        """Rules 3/4: the targets the roll's dice are read against (the roller's stats, or its Influence)."""
        e = self.ents[self.sides[self.side_i].eid if self.purpose == _Purpose.CONFRONT else self.chk_eid]
        if isinstance(e, Character):
            g, kh, m = e.stats
            return (g, kh, m)
        st = self.settings
        return (e.influence + st.faction_bonus,) if st.faction_rolls else ()

    def sample_chance(self, rng: Rng) -> Hashable:
        if self.phase == _FIRST_PLAYER:
            return rng.integers(0, self.num_players)
        # roll_check_dice inlined (the same three draws of the bound method: the roll `odds crossroads --simulate`
        # samples), the roller's kind read and the dice sorted in place: a roll is drawn at most steps
        u = rng.random
        a, b, c = int(u() * 10) + 1, int(u() * 10) + 1, int(u() * 10) + 1
        st = self.settings
        if st.dice_classes:  # each die as its class's representative (see chance_outcomes)
            rep = face_classes(self._roll_thresholds())
            a, b, c = rep[a], rep[b], rep[c]
        roller = self.sides[self.side_i].eid if self.purpose == _CONFRONT else self.chk_eid
        assert roller is not None
        if st.one_each or roller >= self.faction_base:  # _sorted3 inlined: a sorting network of three
            if a > b:
                a, b = b, a
            if b > c:
                b, c = c, b
                if a > b:
                    a, b = b, a
        d = self._sampled = (a, b, c)
        return d

    def _roller_is_char(self) -> bool:
        eid = self.sides[self.side_i].eid if self.purpose == _Purpose.CONFRONT else self.chk_eid
        assert eid is not None
        return eid < self.faction_base

    def apply_chance(self, outcome: Hashable) -> None:
        self._legal = None  # cleared first: a transition may set the next node's menu (see _rolled)
        if outcome is self._sampled and outcome is not None:  # the roll just drawn here: already valid
            self._sampled = None
            self._rolled(outcome)
        else:
            self._sampled = None
            self._apply_chance(outcome)

    def _apply_chance(self, outcome: Hashable) -> None:
        if self.phase == _FIRST_PLAYER:
            seat = int(outcome)  # type: ignore[call-overload]
            if not 0 <= seat < self.num_players:
                raise ValueError(f"no seat {seat}")
            self._begin_setup(seat)
            return
        if self.phase != _ROLL:
            raise ValueError("not a chance node")
        if type(outcome) is tuple and len(outcome) == STAT_COUNT and _ints(*outcome):
            dice: Dice = outcome  # the common case: the tuple sample_chance / chance_outcomes gave
        else:
            dice = tuple(int(d) for d in outcome)  # type: ignore[attr-defined]
        if len(dice) != STAT_COUNT:
            raise ValueError(f"3d10 outcome expected, got {outcome!r}")
        a, b, c = dice
        if not (1 <= a <= 10 and 1 <= b <= 10 and 1 <= c <= 10):
            raise ValueError(f"3d10 outcome expected, got {outcome!r}")
        if not a <= b <= c and (self.settings.one_each or not self._roller_is_char()):
            dice = _sorted3(dice)
        self._rolled(dice)

    # ------------------------------------------------------------------------------------------
    # Rule 7: setup
    # ------------------------------------------------------------------------------------------
    def _begin_setup(self, first: int) -> None:
        """Rule 7: players in turn from the first, passing left, introduce characters, then factions."""
        self.first = first
        self.setup_queue = list(_setup_order_of(first, self.num_players, self.settings.factions_per_player))
        if self.narrating:
            self.narrate("setup", f"Player {first + 1} goes first.", first)
        self._next_setup()

    def _next_setup(self) -> None:
        if not self.setup_queue:
            self.admin = self.first
            self._start_scene()
            return
        step = self.setup_queue.pop(0)
        if step.kind is _EntryKind.CHARACTER:
            self.create_character(step.seat, personal=True)
        else:
            self.create_faction(step.seat)

    # ------------------------------------------------------------------------------------------
    # Rules 1/2: characters and factions
    # ------------------------------------------------------------------------------------------
    def create_character(self, seat: int, personal: bool) -> None:
        """Rule 1: a new character: the creator spreads the creation points over G, KH, M (two choices)."""
        idx = len(self.chars)
        c = self.ents[idx] = Character(idx, seat, personal, [0, 0, 0])
        self.chars.append(c)
        bit = 1 << idx
        self.chars_in_play |= bit
        if personal:
            self.seat_personal[seat] = idx
            self.own_bits[seat] = bit
            self.personals_in_play |= bit
            self.personals_alive += 1
        else:
            self.commons_alive += 1
        self.obs_changes.append(idx)
        self.chk_eid = idx
        self.build_step = 0
        self.phase = _Phase.BUILD
        self.actor = seat

    def create_faction(self, seat: int) -> None:
        """Rule 2: a new faction at the starting Influence; it is presented with a faction check (Rule 4)."""
        idx = len(self.factions)
        f = Faction(idx, self.faction_base + idx, seat, self.settings.start_influence)
        self.factions.append(f)
        self.ents[f.eid] = f
        self.factions_alive += 1
        self.factions_in_play |= 1 << f.eid
        self.obs_changes.append(f.eid)
        if self.narrating:
            self.narrate("faction", f"Player {seat + 1} presents {f.name} (Influence {f.influence}).", seat)
        self.begin_check(self.faction_base + idx, seat, _Purpose.SPEND)

    def _build(self, value: int) -> None:
        eid = self.chk_eid  # _checker_id inlined
        assert eid is not None
        c = self.chars[eid]
        c.stats[self.build_step] = value
        self.obs_changes.append(c.eid)
        self.build_step += 1
        if self.build_step == _Stat.M:
            c.stats[_Stat.M] = rules.last_stat(self.settings.creation_points, c.stats[: _Stat.M])
            kind = "personal" if c.personal else "common"
            if self.narrating:
                self.narrate(
                    "character",
                    f"Player {self.actor + 1} introduces {c.name} ({kind}): "
                    f"G {c.stats[0]} | KH {c.stats[1]} | M {c.stats[2]}.",
                    self.actor,
                    stats=list(c.stats),
                )
            self.begin_check(c.idx, self.actor, _Purpose.SPEND)

    # ------------------------------------------------------------------------------------------
    # Rules 3-5: checks
    # ------------------------------------------------------------------------------------------
    def begin_check(self, eid: int, seat: int, purpose: Purpose) -> None:
        """Rules 3/4: roll 3d10 for a character (stat check) or a faction (faction check)."""
        self.chk_eid = eid
        self.chk_seat = seat
        self.purpose = purpose
        self.phase = _Phase.ROLL

    def _rolled(self, dice: Dice) -> None:
        if self.purpose == _CONFRONT:
            i = self.side_i
            s = self.sides[i]
            s.dice = dice
            s.obs = None
            if self.narrating:
                e = self.ents[s.eid]
                self.narrate("roll", f"{e.name} rolls 3d10: {', '.join(map(str, dice))}.", s.seat, dice=dice)
            if self.initial_rolls:  # _confront_next_roll inlined (Rule 11.3: all roll, then burns to reroll)
                if i == 0:
                    self.side_i = 1
                    return
                self.initial_rolls = False
                self.side_i = i = 0
                s = self.sides[0]
            self.phase = _Phase.BURN_AFTER
            self.actor = s.seat
            return
        self.dice = dice
        e = self.ents[self.chk_eid]
        if self.narrating:
            self.narrate("roll", f"{e.name} rolls 3d10: {', '.join(map(str, dice))}.", self.chk_seat, dice=dice)
        if e.is_char and self.settings.one_each:
            self.phase = _Phase.ASSIGN
            self.actor = self.chk_seat
            self._legal = ASSIGN_ACTIONS  # _legal_assign's menu, kept at once (no call when it is asked)
        else:
            self._assigned(0)

    def _assigned(self, perm: int) -> None:
        e = self.ents[self.chk_eid]
        self.perm = perm
        self.flags, self.succ = self._read_roll(e, self.dice, perm, 0)
        if self.narrating:
            self.narrate(
                "successes",
                f"{e.name}: {self.succ} success{'es' if self.succ != 1 else ''}.",
                self.chk_seat,
                successes=self.succ,
            )
        if self.purpose == _Purpose.BEAUTY:
            self._beauty_rolled(perm)
            return
        if not e.alive and self.purpose != _Purpose.GOAL:  # written off by the crossroads (Rule 12)
            self._check_done()
            return
        if self.purpose == _Purpose.GOAL:
            self.left = self.succ
            if self.left > 0 and self.factions_alive:
                self.phase = _Phase.LOWER_INFLUENCE
                self.actor = self.chk_seat
                return
            self._check_done()
            return
        self.left = self.succ * self.settings.outcomes_per_success
        self._next_spend()

    def _read_roll(self, e: Entity, dice: Dice, perm: int, burned: int) -> tuple[Flags, int]:
        """Rules 3-5, 11.3 and 11.4: a roll's success flags and successes, with burnt +C, Advantage and crossroads.

        :meth:`read_check`, :meth:`use_advantage`, :meth:`crossroads` and ``rules.check_successes`` in one call
        (each check of a step reads one roll): a stat check is read in place (its memo mostly misses: there are
        ~1,300 distinct rolls against stats in a thousand steps), an Advantage is used
        only when held, and the crossroads are read only when they can change something (an effect, or the
        narration); the same side effects in the same order.
        """
        if e.is_char:  # rules.stat_check inlined (Rule 3: a die at or below its stat succeeds)
            g, kh, m = e.stats  # type: ignore[union-attr]
            p0, p1, p2 = PERMUTATIONS[perm]
            f0, f1, f2 = dice[p0] <= g, dice[p1] <= kh, dice[p2] <= m
            flags: Flags = (f0, f1, f2)
            n = f0 + f1 + f2
        else:
            flags, n = self.read_check(e, dice, perm)
        if burned:
            n += burned * self.settings.burn_bonus
        if e.advantage:
            n += self.use_advantage(e)
        if self.narrating or self._crossroads_live:
            n += self.crossroads(e, dice, perm, flags)
        return flags, n if n > 0 else 0  # never below 0 (rules.check_successes)

    def read_check(self, e: Entity, dice: Dice, perm: int) -> rules.Check:
        """Rules 3 and 4: per-stat success flags and the success count of a roll, memoised.

        A stat check by the dice, assignment and stats; a faction check per config by the dice and Influence.
        """
        if isinstance(e, Character):
            g, kh, m = e.stats
            key = (dice, perm, g, kh, m)
            try:
                return _STAT_CHECKS[key]
            except KeyError:
                if len(_STAT_CHECKS) >= _STAT_CHECKS_LIMIT:
                    _STAT_CHECKS.clear()
                chk = _STAT_CHECKS[key] = rules.stat_check(dice, perm, (g, kh, m))
                return chk
            except TypeError:  # dice given as a list: nothing to memoise
                return rules.stat_check(dice, perm, e.stats)
        by = (dice, e.influence)
        try:
            return self._faction_checks[by]
        except KeyError:
            checks = self._faction_checks
            if len(checks) >= _STAT_CHECKS_LIMIT:
                checks.clear()
            st = self.settings
            faction = rules.faction_check(dice, e.influence, st.faction_rolls, st.faction_bonus, st.faction_gate_any)
            checks[by] = faction
            return faction
        except TypeError:  # dice given as a list: nothing to memoise
            st = self.settings
            return rules.faction_check(dice, e.influence, st.faction_rolls, st.faction_bonus, st.faction_gate_any)

    def use_advantage(self, e: Entity) -> int:
        """Rule 11.4: an Advantage token adds its bonus to the holder's next roll and is spent."""
        if e.advantage:
            e.advantage = False
            self.obs_changes.append(e.eid)
            if self.narrating:
                self.narrate("advantage", f"{e.name} uses its Advantage.", None)
            return self.settings.advantage_bonus
        return 0

    def crossroads(self, e: Entity, dice: Dice, perm: int, flags: Flags) -> int:
        """Rule 5: a double or triple is a crossroads; its effect (``crossroads.effect``) is applied.

        Returns the change in successes.
        """
        if not self.narrating and self.settings.crossroads_effect == "none":
            return 0  # the effect "none" changes nothing: only the narration reads the crossroads
        cr = crossroads_of(dice)
        times = rules.crossroads_times(cr, self.settings.triple_twice)
        if times == 0:
            return 0
        if self.narrating:
            self.narrate(
                "crossroads", f"Crossroads! {e.name} rolled a {cr.name.lower()}.", None, crossroads=cr.name.lower()
            )
        effect = self.settings.crossroads_effect
        delta = 0
        for _ in range(times):
            delta += rules.crossroads_success_change(effect)
            if effect == "gain_plus_c":
                self.gain_plus_c(e)
            elif effect == "gain_minus_c":
                self.add_minus_c(e, _MinusC.PLAIN)  # nobody names it: another condition
            elif effect == "goal_box_on_miss" and isinstance(e, Character):
                for s in rules.missed_matching_stats(dice, perm, flags):
                    if not e.goals[s] and e.alive:
                        self.mark_goal(e, s)
        return delta

    # ------------------------------------------------------------------------------------------
    # Rule 6: spending successes (and the outcomes of Rule 11.7 on oneself)
    # ------------------------------------------------------------------------------------------
    def _next_spend(self) -> None:
        if self.left > 0 and self.ents[self.chk_eid].alive:
            self.phase = _Phase.SPEND
            self.actor = self.chk_seat
            return
        if self.scene == _SETUP:  # _check_done inlined
            self._next_setup()
        else:
            self._end_scene()

    def apply_self_op(self, e: Entity, a: int) -> None:
        """Rules 6 and 11.7: a spend or outcome on the roller itself."""
        if a == _GAIN_PLUS_C:
            self.gain_plus_c(e)
        elif a == _REMOVE_MINUS_C:
            self.remove_minus_c(e)
        elif isinstance(e, Character):
            if _STAT_UP_G <= a < _STAT_UP_G + STAT_COUNT:
                self.raise_stat(e, a - _STAT_UP_G, 1)
            elif _STAT_UP2_G <= a < _STAT_UP2_G + STAT_COUNT:
                self.raise_stat_twice(e, a - _STAT_UP2_G)
            elif _MARK_G <= a < _MARK_G + STAT_COUNT:
                self.mark_goal(e, a - _MARK_G)
        elif a == _INFLUENCE_UP:
            self.change_influence(e, 1)

    def raise_stat(self, c: Character, i: int, by: int) -> None:
        """Rule 6: +1 to a stat (up to ``character.stat_cap``)."""
        c.stats[i] = rules.raised_stat(c.stats[i], by, self.settings.stat_cap)
        self.obs_changes.append(c.eid)
        if self.narrating:
            self.narrate("stat", f"{c.name}: +{by} {STATS[i]} (now {c.stats[i]}).", None)

    def raise_stat_twice(self, c: Character, i: int) -> None:
        """Rules 6/11.7: +2 to a stat while also removing a condition (``spend.double_step``)."""
        if self.settings.double_step == "same_sign":
            c.plus -= 1
            self.obs_changes.append(c.eid)
            if self.narrating:
                self.narrate("condition", f"{c.name} removes a +C to make it +2.", None)
        else:
            self.remove_minus_c(c)
        self.raise_stat(c, i, 2)

    def gain_plus_c(self, e: Entity) -> None:
        """Rule 6: gain a +C (at most ``character.max_conditions``)."""
        if rules.may_gain(e.plus, self.settings.max_conditions):
            e.plus += 1
            self.obs_changes.append(e.eid)
            if self.narrating:
                self.narrate("condition", f"{e.name} gains a +C ({e.plus}).", None)

    def remove_minus_c(self, e: Entity) -> None:
        """Rule 6: remove a -C (a plain one first, then "dying", then "wounded")."""
        if e.minus <= 0:
            return
        if isinstance(e, Character):
            shed = rules.shed_minus_c(e.minus, e.wounded, e.dying)
            if shed is _MinusC.DYING:
                e.dying = False
            elif shed is _MinusC.WOUNDED:
                e.wounded = False
        e.minus -= 1
        self.obs_changes.append(e.eid)
        if self.narrating:
            self.narrate("condition", f"{e.name} sheds a -C ({e.minus} left).", None)

    def _minus_c_actions(self, e: Entity) -> tuple[int, ...]:
        """Rule 12: the "give -C" actions against ``e``: the names a giver may choose (see ``_MINUS_C_ACTS``)."""
        automatic = self.settings.minus_c_automatic
        key = (automatic, True, e.wounded, e.dying) if isinstance(e, Character) else (automatic, False, False, False)
        acts = _MINUS_C_ACTS.get(key)
        if acts is None:
            acts = _MINUS_C_ACTS[key] = tuple(_MINUS_C_OF[k] for k in rules.minus_c_choices(*key))
        return acts

    def add_minus_c(self, e: Entity, named: MinusC) -> None:
        """Rules 11.7/12: a -C, named by its giver ("wounded", "dying" or another; ``writeoffs.minus_c_names``)."""
        if not rules.may_gain(e.minus, self.settings.max_conditions):
            return
        automatic = self.settings.minus_c_automatic
        if isinstance(e, Character):
            kind = rules.minus_c_taken(named, automatic, True, e.wounded, e.dying)
            if kind is None:  # it already holds that one
                return
            if kind is _MinusC.WOUNDED:
                e.wounded = True
            elif kind is _MinusC.DYING:
                e.dying = True
        else:
            kind = _MinusC.PLAIN
        e.minus += 1
        self.obs_changes.append(e.eid)
        if self.narrating:
            self.narrate("condition", f"{e.name} takes a {_MINUS_C_LABELS[kind]}.", None)

    def mark_goal(self, c: Character, i: int) -> None:
        """Rule 11.7: mark a goal box; all three marked achieves the goal (Rule 12)."""
        if c.goals[i]:
            return
        c.goals[i] = True
        self.obs_changes.append(c.eid)
        if self.narrating:
            self.narrate("goal", f"{c.name} marks the {STATS[i]} box of its goal.", None)
        if rules.goal_achieved(c.goals) and c.alive:
            c.achieved = True
            self.write_off(c, "goal achieved")
            if self.settings.goal_check:
                self.goal_pending.append(c.idx)

    def change_influence(self, f: Faction, by: int) -> None:
        """Rules 10/11.7/12: change a faction's Influence; 0 or 8 writes it off."""
        f.influence += by
        self.obs_changes.append(f.eid)
        if self.narrating:
            self.narrate("influence", f"{f.name}: Influence {'+' if by > 0 else ''}{by} (now {f.influence}).", None)
        st = self.settings
        reason = rules.influence_exit(f.influence, st.writeoff_low, st.writeoff_high)
        if f.alive and reason is not None:
            self.write_off(f, reason)

    def lower_stat(self, c: Character, i: int, by: int) -> None:
        """Rules 11.7/12: -1 (or -2) to a stat; a stat at 0 writes the character off."""
        c.stats[i] = rules.lowered_stat(c.stats[i], by)
        self.obs_changes.append(c.eid)
        if self.narrating:
            self.narrate("stat", f"{c.name}: -{by} {STATS[i]} (now {c.stats[i]}).", None)
        if c.stats[i] == 0 and c.alive:
            self.write_off(c, f"{STATS[i]} fell to 0")

    def write_off(self, e: Entity, reason: str) -> None:
        """Rule 12: an exit. Counts towards the end of the episode (Rule 13)."""
        if e.alive:  # out of play: the counts and sets of who is in play
            out = ~(1 << e.eid)
            if not isinstance(e, Character):
                self.factions_alive -= 1
                self.factions_in_play &= out
            else:
                self.chars_in_play &= out
                if e.personal:
                    self.seat_personal[e.owner] = None
                    self.own_bits[e.owner] = 0
                    self.personals_in_play &= out
                    self.personals_alive -= 1
                else:
                    self.commons_alive -= 1
        e.alive = False
        e.exit = reason
        self.obs_changes.append(e.eid)
        self.exits += 1
        self.obs_progress = None
        if self.narrating:
            self.narrate("exit", f"{e.name} is written off: {reason} (exit {self.exits}).", None, reason=reason)

    def _check_done(self) -> None:
        if self.scene == _Scene.SETUP:
            self._next_setup()
        else:
            self._end_scene()

    # ------------------------------------------------------------------------------------------
    # Rule 8: the Admin and the scenes
    # ------------------------------------------------------------------------------------------
    def _start_scene(self) -> None:
        """Rules 8 and 13: the Admin picks a scene, unless three exits happened or the scene limit is hit."""
        ep = self.settings
        # rules.episode_end is None exactly below both limits: the call is made only when the episode may end
        if self.exits >= ep.exits_to_end or self.scene_no >= ep.max_scenes:
            end = rules.episode_end(self.exits, ep.exits_to_end, self.scene_no, ep.max_scenes)
            if end is _EndReason.COMPLETED:
                self._finish(end, f"{self.exits} exits")
                return
            if end is _EndReason.TIME_LIMIT:
                self._finish(end, f"scene limit {ep.max_scenes}")
                return
        self.scene_no += 1
        self.obs_progress = None
        self.phase = _Phase.ADMIN_SCENE
        self.actor = self.admin
        self.sides = []
        self.obs_markers = None

    def _end_scene(self) -> None:
        """Rule 12: a pending goal check is rolled first; then the Admin role passes left (Rule 8)."""
        if self.goal_pending:
            c = self.chars[self.goal_pending.pop(0)]
            seat = c.owner if c.personal else self.admin
            if self.narrating:
                self.narrate("goal_check", f"{c.name} achieved its goal: a check to lower factions' Influence.", seat)
            self.begin_check(c.idx, seat, _Purpose.GOAL)
            return
        self.admin = admin = self._next_admins[self.admin]
        ep = self.settings  # _start_scene inlined (a scene ends about every other step)
        if self.exits >= ep.exits_to_end or self.scene_no >= ep.max_scenes:  # the episode may end (Rule 13)
            self._start_scene()
            return
        self.scene_no += 1
        self.obs_progress = None
        self.phase = _Phase.ADMIN_SCENE
        self.actor = admin
        self.sides = []
        self.obs_markers = None

    def choose_scene(self, a: int) -> None:
        """Rule 8: the Admin chooses introduction, deal or confrontation."""
        admin = self.admin
        if a == _SCENE_INTRO_CHARACTER:
            self.scene = _Scene.INTRO_CHARACTER
            if self.narrating:
                self.narrate("scene", f"Admin (player {admin + 1}): introduction of a new character.", admin)
            self.introduce_character()
        elif a == _SCENE_INTRO_FACTION:
            self.scene = _Scene.INTRO_FACTION
            if self.narrating:
                self.narrate("scene", f"Admin (player {admin + 1}): introduction of a new faction.", admin)
            self.create_faction(admin)
        elif a == _SCENE_DEAL:
            self.scene = _Scene.DEAL
            if self.narrating:
                self.narrate("scene", f"Admin (player {admin + 1}): a deal with a faction.", admin)
            self.phase = _Phase.DEAL_FACTION
        elif a == _SCENE_CONFRONT:
            self.scene = _Scene.CONFRONT
            if self.narrating:
                self.narrate("scene", f"Admin (player {admin + 1}): a confrontation.", admin)
            self.sides = [Side(None, admin), Side(None, admin)]
            self.obs_markers = None
            self.phase = _Phase.ADMIN_TARGET
        else:
            self.scene = _Scene.SKIPPED
            if self.narrating:
                self.narrate("scene", f"Admin (player {admin + 1}) has no scene to frame.", admin)
            self._end_scene()

    def introduce_character(self) -> None:
        """Rule 9: a new character; personal if the Admin has none left in play, else a common one."""
        personal = rules.introduced_is_personal(self._personal_of(self.admin) is not None)
        self.create_character(self.admin, personal=personal)

    # ------------------------------------------------------------------------------------------
    # Rule 10: deal
    # ------------------------------------------------------------------------------------------
    def deal_with(self, faction: int) -> None:
        """Rule 10: the Admin's character makes a job deal with a faction, against another character if any."""
        self.deal_faction = faction
        if self.personals_alive + self.commons_alive > 1:  # a character besides the Admin's own in play
            # (_deal_against_options is not empty: the Admin's character is in play in a deal, Rule 10)
            self.phase = _Phase.DEAL_AGAINST
            return
        self.close_deal(None)

    def close_deal(self, against: int | None) -> None:
        """Rule 10: the deal is recorded against another character; Influence +1; the character checks."""
        assert self.deal_faction is not None
        f = self.factions[self.deal_faction]
        mine = self.seat_personal[self.admin]  # the Admin's own character (_personal_of)
        assert mine is not None
        c = self.chars[mine]
        if self.narrating:
            vs = f" against {self.chars[against].name}" if against is not None else ""
            self.narrate("deal", f"{c.name} strikes a deal with {f.name}{vs}.", self.admin, against=against)
        self.change_influence(f, self.settings.deal_gain)
        self.begin_check(c.idx, self.admin, _Purpose.SPEND)

    # ------------------------------------------------------------------------------------------
    # Rule 11: confrontation
    # ------------------------------------------------------------------------------------------
    def set_opposition(self, a: int) -> None:
        """Rules 11.1/11.2: the Admin opposes the target with its character, a common one, a faction or nobody."""
        if a == _NO_OPPOSITION:
            if self.narrating:  # the target and opposition are looked up for the narration only
                self.narrate("confront", f"Nobody stands against {self.chars[self._target_id()].name}.", self.admin)
            self.sides = [self.sides[1]]
            self.obs_markers = None
            self.begin_beauty()
            return
        self.sides[0].eid = a - _TARGET_0
        self.obs_markers = None
        if self.narrating:
            opp, target = self.ents[self.sides[0].eid], self.chars[self._target_id()]
            self.narrate("confront", f"{opp.name} stands against {target.name}.", self.admin)
        self.phase = _Phase.ADMIN_AIM
        self.actor = self.admin

    def begin_beauty(self) -> None:
        """Rule 11.2: no counteraction, a scene for beauty: no scene goal; every side rolls (for gating)."""
        if len(self.sides) > 1 and self.narrating:
            self.narrate(
                "beauty",
                f"{self.ents[self.sides[0].eid].name} does not counteract: a scene for beauty.",
                self.admin,
            )
        self.side_i = 0
        first = self.sides[0]
        self.begin_check(self._side_id(first), first.seat, _Purpose.BEAUTY)

    def _beauty_rolled(self, perm: int) -> None:
        """Rule 11.2: a side's beauty check is read; when every side has rolled, each buys its outcomes."""
        s = self.sides[self.side_i]
        s.dice, s.perm, s.flags, s.succ = self.dice, perm, self.flags, self.succ
        s.obs = None
        if self.side_i + 1 < len(self.sides):
            self.side_i += 1
            nxt = self.sides[self.side_i]
            self.begin_check(self._side_id(nxt), nxt.seat, _Purpose.BEAUTY)
            return
        self.side_i = 0
        n = self.settings.beauty_outcomes
        if self.narrating:
            self.narrate(
                "beauty", f"A scene for beauty: each side gets {n} outcome{'s' if n != 1 else ''}.", self.admin
            )
        self.left = self._allotment(self.sides[0])
        self._next_outcome()

    def opponent_side(self, i: int) -> Side | None:
        """The side facing side ``i`` (none in a scene for beauty)."""
        if len(self.sides) < 2:
            return None
        return self.sides[1 - i]

    def _winner_side(self) -> Side:
        return self.sides[0] if self.sides[0].won else self.sides[1]

    def _side_id(self, s: Side) -> int:
        assert s.eid is not None
        return s.eid

    def _target_id(self) -> int:
        """The target character of the confrontation (the last side)."""
        eid = self.sides[-1].eid  # _side_id inlined (read at every aim and opposition decision)
        assert eid is not None
        return eid

    def _checker_id(self) -> int:
        assert self.chk_eid is not None
        return self.chk_eid

    def _begin_burns(self) -> None:
        self.side_i = 0
        self.phase = _Phase.BURN_BEFORE
        self.actor = self.sides[0].seat

    def burn_before(self, s: Side) -> None:
        """Rule 11.3: before the roll, remove a +C for +1 success."""
        e = self.ents[s.eid]
        e.plus -= 1
        self.obs_changes.append(e.eid)
        s.burned += 1
        s.obs = None
        if self.narrating:
            self.narrate("burn", f"{e.name} burns a +C for a success before the roll.", s.seat)

    def _next_burn_before(self) -> None:
        if self.side_i == 0:
            self.side_i = 1
            self.actor = self.sides[1].seat
            return
        self.side_i = 0
        self.purpose = _Purpose.CONFRONT
        self.initial_rolls = True
        self.phase = _Phase.ROLL

    def _confront_next_roll(self) -> None:
        """Rule 11.3: all participants roll; then each side in turn may burn +C to reroll."""
        if self.initial_rolls and self.side_i == 0:
            self.side_i = 1
            return
        if self.initial_rolls:
            self.initial_rolls = False
            self.side_i = 0
        self.phase = _Phase.BURN_AFTER
        self.actor = self.sides[self.side_i].seat

    def burn_after(self, s: Side) -> None:
        """Rule 11.3: after the roll, remove a +C to reroll all three dice (``confrontation.reroll_repeatable``)."""
        e = self.ents[s.eid]
        e.plus -= 1
        self.obs_changes.append(e.eid)
        s.rerolls += 1
        if self.narrating:
            self.narrate("burn", f"{e.name} burns a +C to reroll.", s.seat)
        self.phase = _Phase.ROLL

    def _next_burn_after(self) -> None:
        if self.side_i == 0:
            self.side_i = 1
            self.actor = self.sides[1].seat
            return
        self.side_i = 0
        self._next_assign()

    def _next_assign(self) -> None:
        while self.side_i < len(self.sides):
            s = self.sides[self.side_i]
            eid = s.eid  # _side_id inlined
            assert eid is not None
            if eid < self.faction_base and self.settings.one_each:
                self.phase = _Phase.ASSIGN
                self.actor = s.seat
                self._legal = ASSIGN_ACTIONS  # _legal_assign's menu, kept at once (no call when it is asked)
                return
            self._side_assigned(s, 0)
        self.resolve_confrontation()

    def _side_assigned(self, s: Side, perm: int) -> None:
        e = self.ents[s.eid]
        s.perm = perm
        s.flags, s.succ = self._read_roll(e, s.dice, perm, s.burned)
        s.obs = None
        if self.narrating:
            self.narrate(
                "successes", f"{e.name}: {s.succ} success{'es' if s.succ != 1 else ''}.", s.seat, successes=s.succ
            )
        self.side_i += 1

    def resolve_confrontation(self) -> None:
        """Rules 11.4/11.5: winners have the most successes (a tie is a shared win), degree = the gap."""
        st = self.settings
        a, b = self.sides
        res = rules.resolve((a.succ, b.succ), st.tie_degree)
        a.won, b.won = res.won
        a.lost, b.lost = not a.won, not b.won
        self.degree = res.degree
        tie = res.tie
        if self.narrating:
            if tie:
                self.narrate("result", f"A tie: a shared win (degree {self.degree}).", None)
            else:
                w = a if a.won else b
                self.narrate("result", f"{self.ents[w.eid].name} wins with degree {self.degree}.", w.seat)
        for s in (a, b):
            e = self.ents[s.eid]
            personal = isinstance(e, Character) and e.personal
            if rules.earns_advantage(st.advantage, s.won, e.alive, personal):
                e.advantage = True
                self.obs_changes.append(e.eid)
                if self.narrating:
                    self.narrate("advantage", f"{e.name} earns an Advantage.", s.seat)
        if not tie and st.loser_trade:
            loser = b if a.won else a
            self.phase = _Phase.LOSER_TRADE
            self.actor = loser.seat
            return
        self._award_goals()

    def loser_trade(self) -> None:
        """Rule 11.6: the loser removes a -C from the winner to cut the degree by 1."""
        w = self._winner_side()
        self.remove_minus_c(self.ents[w.eid])
        self.degree -= 1
        if self.narrating:
            self.narrate("trade", f"The loser cuts the degree to {self.degree}.", self.actor)

    def _award_goals(self) -> None:
        """Rule 11.7: winners get their scene goal free, then buy outcomes with the degree."""
        if self.settings.free_scene_goal:
            for i, s in enumerate(self.sides):
                if s.won:
                    self.grant_scene_goal(i)
        self.side_i = 0
        self.left = self._allotment(self.sides[0])
        self._next_outcome()

    def grant_scene_goal(self, i: int) -> None:
        """Rule 11.7: a winner's scene goal, free (goal boxes gated by the winner's die on that stat)."""
        s = self.sides[i]
        opp = self.sides[1 - i]
        e, o = self.ents[s.eid], self.ents[opp.eid]
        if not e.alive:
            return
        a = s.aim
        assert a is not None
        if a in MINUS_C_ACTIONS and o.alive:
            self.add_minus_c(o, MINUS_C_ACTIONS[a])
        elif (
            _UNMARK_G <= a < _UNMARK_G + STAT_COUNT and o.alive and s.flags[a - _UNMARK_G] and isinstance(o, Character)
        ):
            self.unmark_goal(o, a - _UNMARK_G)
        elif a == _GAIN_PLUS_C:
            self.gain_plus_c(e)
        elif _MARK_G <= a < _MARK_G + STAT_COUNT and s.flags[a - _MARK_G] and isinstance(e, Character):
            self.mark_goal(e, a - _MARK_G)

    def unmark_goal(self, c: Character, i: int) -> None:
        """Rule 11.7: unmark a goal box of a character."""
        if c.goals[i]:
            c.goals[i] = False
            self.obs_changes.append(c.eid)
            if self.narrating:
                self.narrate("goal", f"{c.name} loses the {STATS[i]} mark of its goal.", None)

    def _next_outcome(self) -> None:
        while self.side_i < len(self.sides):
            s = self.sides[self.side_i]
            if self.left > 0 and self.ents[s.eid].alive:
                self.phase = _Phase.BUY_OUTCOME
                self.actor = s.seat
                return
            self.side_i += 1
            if self.side_i < len(self.sides):
                self.left = self._allotment(self.sides[self.side_i])
        self._begin_loser_marks()

    def _allotment(self, s: Side) -> int:
        """Rules 11.2/11.7: the outcomes a side buys: one per degree for a winner, the beauty outcomes for each."""
        if self.purpose == _Purpose.BEAUTY:
            return self.settings.beauty_outcomes
        return self.degree if s.won else 0

    def apply_opp_op(self, o: Entity, a: int) -> None:
        """Rule 11.7: an outcome against the other side."""
        if isinstance(o, Character):
            if _HARM_G <= a < _HARM_G + STAT_COUNT:
                self.lower_stat(o, a - _HARM_G, 1)
            elif _HARM2_G <= a < _HARM2_G + STAT_COUNT:
                if self.settings.double_step == "same_sign":
                    self.remove_minus_c(o)
                else:
                    o.plus -= 1
                    self.obs_changes.append(o.eid)
                self.lower_stat(o, a - _HARM2_G, 2)
            elif _UNMARK_G <= a < _UNMARK_G + STAT_COUNT:
                self.unmark_goal(o, a - _UNMARK_G)
            elif a == _KILL:
                self.kill(o)
        else:
            if a == _INFLUENCE_DOWN:
                self.change_influence(o, -1)
            elif a == _PUSH_INFLUENCE:
                self.change_influence(o, 1)
        if a in MINUS_C_ACTIONS:
            self.add_minus_c(o, MINUS_C_ACTIONS[a])
        elif a == _REMOVE_PLUS_C:
            o.plus -= 1
            self.obs_changes.append(o.eid)
            if self.narrating:
                self.narrate("condition", f"{o.name} loses a +C ({o.plus}).", None)

    def kill(self, c: Character) -> None:
        """Rule 12: an outcome spent to kill a character that is "wounded" and "dying"."""
        self.write_off(c, "killed")

    def _begin_loser_marks(self) -> None:
        """Rule 11.8: a losing character may burn +C to mark goal boxes it succeeded on."""
        if self.settings.loser_mark and len(self.sides) == 2:
            for i, s in enumerate(self.sides):
                eid = s.eid  # _side_id inlined
                assert eid is not None
                if s.lost and eid < self.faction_base:
                    c = self.chars[eid]
                    if c.alive and c.plus > 0 and rules.markable_boxes(s.flags, c.goals):
                        self.side_i = i
                        self.phase = _Phase.LOSER_MARK
                        self.actor = s.seat
                        return
        self._end_scene()

    # ------------------------------------------------------------------------------------------
    # apply_action: the decision dispatcher
    # ------------------------------------------------------------------------------------------
    def apply_action(self, action: int) -> None:
        a = action if type(action) is int else int(action)
        legal = self._legal
        if legal is None:
            legal = self._legal = _LEGAL_OF[self.phase](self)
        if a not in legal:
            raise IllegalActionError(f"illegal action {a} ({self.action_label(a)}) in {self.decision_context()}")
        self._legal = None  # the next node's legal ids are listed when asked (or kept by the move, see _rolled)
        _APPLY_OF[self.phase](self, a)

    # -- one method per decision phase --------------------------------------------------------------
    def _do_build(self, a: int) -> None:
        self._build(a - _VALUE_1 + 1)

    def _do_assign(self, a: int) -> None:
        perm = a - _ASSIGN_0
        if self.purpose == _CONFRONT:
            self._side_assigned(self.sides[self.side_i], perm)
            self._next_assign()
        else:
            self._assigned(perm)

    def _do_spend(self, a: int) -> None:
        if a == _PASS:
            self.left = 0
        else:
            self.apply_self_op(self.ents[self.chk_eid], a)
            self.left -= 1
            if self.left > 0 and self.ents[self.chk_eid].alive:  # _next_spend inlined: another spend
                self.phase = _Phase.SPEND
                self.actor = self.chk_seat
                return
        if self.scene == _SETUP:  # _check_done inlined
            self._next_setup()
        else:
            self._end_scene()

    def _do_target(self, a: int) -> None:
        self.sides[1].eid = a - _TARGET_0
        self.obs_markers = None
        self.sides[1].seat = self.chars[a - _TARGET_0].owner
        self.phase = _Phase.ADMIN_OPPOSITION

    def _do_admin_aim(self, a: int) -> None:
        if a == _NO_OPPOSITION:
            self.begin_beauty()
            return
        self.sides[0].aim = a
        if self.narrating:
            target = self.chars[self._target_id()]
            self.narrate("aim", f"The Admin's aim: {self.action_label(a)} ({target.name}).", self.actor)
        self.phase = _Phase.TARGET_AIM
        self.actor = self.sides[1].seat

    def _do_target_aim(self, a: int) -> None:
        self.sides[1].aim = a
        if self.narrating:
            self.narrate("aim", f"{self.chars[self._target_id()].name}'s aim: {self.action_label(a)}.", self.actor)
        self._begin_burns()

    def _do_deal_faction(self, a: int) -> None:
        self.deal_with(a - self.faction_target_0)

    def _do_deal_against(self, a: int) -> None:
        self.close_deal(a - _TARGET_0)

    def _do_burn_before(self, a: int) -> None:
        if a == _BURN:
            self.burn_before(self.sides[self.side_i])
        elif self.side_i == 0:  # _next_burn_before inlined: the second side's turn to burn
            self.side_i = 1
            self.actor = self.sides[1].seat
        else:
            self._next_burn_before()

    def _do_burn_after(self, a: int) -> None:
        if a == _BURN:
            self.burn_after(self.sides[self.side_i])
        else:
            self._next_burn_after()

    def _do_loser_trade(self, a: int) -> None:
        if a == _TRADE:
            self.loser_trade()
        else:
            self._award_goals()

    def _do_lower_influence(self, a: int) -> None:
        if a == _PASS:
            self.left = 0
        else:
            self.change_influence(self.factions[a - self.faction_target_0], -1)
            self.left -= 1
        if self.left > 0 and self.factions_alive:
            return
        self._check_done()

    def _buy_outcome(self, a: int) -> None:
        """Rule 11.7: one outcome bought with the degree (on oneself or against the other side), or pass."""
        s = self.sides[self.side_i]
        if a == _PASS:
            self.left = 0
        else:
            if a in _AGAINST_OTHER:
                opp = self.opponent_side(self.side_i)
                assert opp is not None
                self.apply_opp_op(self.ents[opp.eid], a)
            else:
                self.apply_self_op(self.ents[s.eid], a)
            self.left -= 1
        self._next_outcome()

    def _loser_mark(self, a: int) -> None:
        """Rule 11.8: the loser burns a +C to mark a goal box, while it can; or passes."""
        if a == _PASS:
            self._end_scene()
            return
        s = self.sides[self.side_i]
        c = self.chars[self._side_id(s)]
        c.plus -= 1
        self.obs_changes.append(c.eid)
        if self.narrating:
            self.narrate("burn", f"{c.name} burns a +C to mark its goal.", self.actor)
        mark = stat_of(a, _Act.MARK_G)
        assert mark is not None
        self.mark_goal(c, mark)
        if not (c.alive and c.plus > 0 and rules.markable_boxes(s.flags, c.goals)):
            self._end_scene()  # only one side can have lost a two-sided confrontation

    # ------------------------------------------------------------------------------------------
    # the end: returns (Rule 13 and the scenario's reward)
    # ------------------------------------------------------------------------------------------
    def _personal_of(self, seat: int) -> int | None:
        """The personal character ``seat`` has in play (its index), if any."""
        return self.seat_personal[seat]

    def seat_return(self, seat: int) -> float:
        """The scenario's reward of ``seat`` (see ``rules.seat_return``)."""
        st = self.settings
        exits = [c.achieved for c in self.chars if c.personal and c.owner == seat and not c.alive]
        influences = [f.influence for f in self.factions if f.owner == seat]
        return rules.seat_return(
            exits, influences, st.start_influence, st.reward_goal, st.reward_written_off, st.faction_weight
        )

    def _finish(self, reason: EndReason, detail: str) -> None:
        rets = [self.seat_return(s) for s in range(self.num_players)]
        self.phase = _Phase.OVER
        self.finish(rules.winner_of(rets), reason, rets, detail)

    # ------------------------------------------------------------------------------------------
    # analysis hooks
    # ------------------------------------------------------------------------------------------
    def leader(self) -> int:
        """The seat whose personal character is closest to its goal (most boxes, then most stats); -1 if none."""
        best, best_key = -1, (-1, -1)
        for c in self.chars:
            if c.alive and c.personal:
                k = (sum(c.goals), sum(c.stats))
                if k > best_key:
                    best, best_key = c.owner, k
        return best

    def option_of(self, action: int) -> str | None:
        a = int(action)
        p = self.phase
        if p == _ASSIGN_PHASE:
            return "optimal_assignment" if self._assignment_is_optimal(a - _ASSIGN_0) else "suboptimal_assignment"
        if p == _BUILD_PHASE:
            return "build"
        if a == _PASS:
            return "pass"
        read = _OPTION_READERS.get(p)  # restricted play reads the option of every legal action at each decision
        return read(self, a) if read is not None else _PHASE_OPTIONS.get(p)

    # -- the option group of an action, per decision phase (option_of) ------------------------------
    def _spend_option(self, a: int) -> str:
        option = _SPEND_OPTIONS.get(a)
        return option if option is not None else self._outcome_option(a, True)

    def _buy_option(self, a: int) -> str:
        option = _BUY_OPTIONS.get(a)
        return option if option is not None else self._outcome_option(a, False)

    def _scene_option(self, a: int) -> str:
        if a in (_SCENE_INTRO_CHARACTER, _SCENE_INTRO_FACTION):
            return "introduce"
        return "deal" if a == _SCENE_DEAL else "confront"

    def _target_option(self, a: int) -> str:
        return "target_leader" if self.chars[a - _TARGET_0].owner == self.leader() else "target_other"

    def _opposition_option(self, a: int) -> str:
        if a == _NO_OPPOSITION:
            return "no_opposition"
        e = self.ents[a - _TARGET_0]
        if not isinstance(e, Character):
            return "oppose_faction"
        return "oppose_own_character" if e.personal else "oppose_common"

    def _aim_option(self, a: int) -> str:
        if a == _NO_OPPOSITION:
            return "no_opposition"
        if a in MINUS_C_ACTIONS:
            return "aim_minus_c"
        if a == _GAIN_PLUS_C:
            return "aim_plus_c"
        return "aim_goal"

    def _deal_faction_option(self, a: int) -> str:
        owner = self.factions[a - self.faction_target_0].owner
        return "deal_own_faction" if owner == self.actor else "deal_other_faction"

    @staticmethod
    def _outcome_option(a: int, spend: bool) -> str:
        if _Act.STAT_UP_G <= a < _Act.GAIN_PLUS_C:
            return "spend_stat" if spend else "outcome_stat"
        if a == _Act.GAIN_PLUS_C:
            return "spend_plus_c" if spend else "outcome_plus_c"
        if a == _Act.REMOVE_MINUS_C:
            return "spend_remove_minus_c" if spend else "outcome_remove_minus_c"
        if stat_of(a, _Act.MARK_G) is not None:
            return "outcome_goal"
        if _Act.HARM_G <= a < _Act.ADD_MINUS_C:
            return "outcome_harm_stat"
        if a in (_Act.ADD_MINUS_C, _Act.REMOVE_PLUS_C):
            return "outcome_harm_condition"
        if a in MINUS_C_ACTIONS:
            return "outcome_named_minus_c"
        if stat_of(a, _Act.UNMARK_G) is not None:
            return "outcome_unmark"
        if a == _Act.KILL:
            return "outcome_kill"
        return "outcome_influence"

    def current_roll(self) -> tuple[Dice, tuple[int, int, int]] | None:
        """The dice to assign and the roller's stats, at an assign decision."""
        if self.phase != _Phase.ASSIGN:
            return None
        if self.purpose == _Purpose.CONFRONT:
            s = self.sides[self.side_i]
            g, kh, m = self.chars[self._side_id(s)].stats
            return s.dice, (g, kh, m)
        g, kh, m = self.chars[self._checker_id()].stats
        return self.dice, (g, kh, m)

    def _assignment_is_optimal(self, perm: int) -> bool:
        roll = self.current_roll()
        assert roll is not None
        dice, stats = roll
        try:
            optimal = _OPTIMAL[roll]
        except KeyError:
            if len(_OPTIMAL) >= _OPTIMAL_LIMIT:
                _OPTIMAL.clear()
            optimal = _OPTIMAL[roll] = frozenset(optimal_permutations(dice, stats))
        except TypeError:  # dice given as a list: nothing to memoise
            return perm in optimal_permutations(dice, stats)
        return perm in optimal

    def resources(self, seat: int) -> dict[str, float]:
        ci = self._personal_of(seat)
        c = self.chars[ci] if ci is not None else None
        mine = [f for f in self.factions if f.owner == seat and f.alive]
        return {
            "stats_total": float(sum(c.stats)) if c else 0.0,
            "plus_c": float(c.plus) if c else 0.0,
            "minus_c": float(c.minus) if c else 0.0,
            "influence": float(sum(f.influence for f in mine)),
            "goal_boxes": float(sum(c.goals)) if c else 0.0,
        }

    def action_label(self, action: int) -> str:
        a = int(action)
        if a in ASSIGN_ACTIONS:
            roll = self.current_roll()
            return label(a, roll[0] if roll is not None else None, self.faction_base)
        return label(a, faction_base=self.faction_base)

    def faction_target(self, k: int) -> int:
        """The TARGET action naming faction ``k`` under this config (``Act.TARGET_0 + FACTION_BASE + k`` as written)."""
        return self.faction_target_0 + k

    # ------------------------------------------------------------------------------------------
    # observation, key, clone
    # ------------------------------------------------------------------------------------------
    observation = observe  # the encoder's function itself: no method call in between (one call per env step)

    def key(self) -> Hashable:
        """The position as the rules go on to read it (for the exact solver's memo).

        Leftovers of an earlier check, scene or side that no rule reads again are left out, so positions
        that differ only in them are one position: a finished check's dice, assignment, flags and
        successes; spends, degree, build step and deal faction outside the phases that use them; the
        checker and the check's purpose outside a check; the scene type beyond "still in setup" (Rule 7);
        a side's assignment once read. :meth:`full_key` keeps every field (the test of this one's soundness).
        """
        p = self.phase
        checking = p in _CHECK_PHASES
        in_setup = self.scene == _Scene.SETUP
        sides = self.sides
        return (
            p,
            self.actor,
            self.first if in_setup else 0,
            self.admin,
            self.scene_no,
            in_setup,
            self.exits,
            tuple(self.setup_queue),
            tuple(self.goal_pending),
            self.chk_eid if checking else None,
            self.chk_seat if checking else 0,
            self.purpose if p in _PURPOSE_PHASES else None,
            self.dice if p == _ASSIGN_PHASE and self.purpose != _Purpose.CONFRONT else (),
            self.left if p in _LEFT_PHASES else 0,
            self.build_step if p == _BUILD_PHASE else 0,
            (self.side_i, self.initial_rolls) if sides else None,
            self.degree if p in _DEGREE_PHASES else 0,
            self.deal_faction if p == _DEAL_AGAINST_PHASE else None,
            tuple([c.key() for c in self.chars]),
            tuple([f.key() for f in self.factions]),
            self._sides_key(p) if sides else (),
        )

    def _sides_key(self, p: Phase) -> tuple[object, ...]:
        """Rule 11 as :meth:`key` reads it: each side's part of the position.

        A side's dice, burns and rerolls count until its roll is read (Rules 3, 11.3), its successes until
        the result (11.4), its aim until the scene goals are granted (11.7), its flags and result to the
        end of the scene.
        """
        if p in _RESOLVED_PHASES:
            keep_aim = p == _LOSER_TRADE_PHASE
            return tuple([(s.eid, s.seat, s.aim if keep_aim else None, s.flags, s.won, s.lost) for s in self.sides])
        read = self.side_i if p == _ASSIGN_PHASE and self.purpose == _Purpose.CONFRONT else 0
        return tuple(
            [
                (s.eid, s.seat, s.aim, s.flags, s.succ)
                if i < read
                else (s.eid, s.seat, s.aim, s.burned, s.rerolls, s.dice, s.flags, s.succ)
                for i, s in enumerate(self.sides)
            ]
        )

    def full_key(self) -> Hashable:
        """Every field of the position, leftovers included (see :meth:`key`)."""
        return (
            self.phase,
            self.actor,
            self.first,
            self.admin,
            self.scene_no,
            self.scene,
            self.exits,
            tuple(self.setup_queue),
            tuple(self.goal_pending),
            self.chk_eid,
            self.chk_seat,
            self.purpose,
            self.dice,
            self.perm,
            self.flags,
            self.succ,
            self.left,
            self.build_step,
            self.side_i,
            self.degree,
            self.deal_faction,
            self.initial_rolls,
            tuple(c.key() for c in self.chars),
            tuple(f.key() for f in self.factions),
            tuple(s.key() for s in self.sides),
        )

    def clone(self) -> CrossroadsState:
        new = _new_object(CrossroadsState)
        _copy_slots(new, self)  # every slot; the lists and dicts changed in place as copies
        new.chars = [c.copy() for c in self.chars]
        new.factions = [f.copy() for f in self.factions]
        ents: dict[int | None, Entity] = {c.eid: c for c in new.chars}
        for f in new.factions:
            ents[f.eid] = f
        new.ents = ents
        new.sides = [s.copy() for s in self.sides]
        if len(self.obs_changes) <= _CHANGES_KEPT:  # the clone patches the same kept blocks
            new.obs_changes = list(self.obs_changes)
            new.obs_blocks = [None if b is None else bytearray(b) for b in self.obs_blocks]  # patched in place
            new.obs_marks = list(self.obs_marks)
            new.obs_marked = list(self.obs_marked)
        else:  # a long log nobody encoded from (a search's playouts): the clone starts afresh
            new.obs_changes = []
            new.obs_blocks = [None] * self.num_players
            new.obs_marks = [0] * self.num_players
            new.obs_marked = [()] * self.num_players
        return new


_new_object = object.__new__
_copy_slots = slot_copier(
    CrossroadsState.FIELDS, copied=("log", "setup_queue", "goal_pending", "seat_personal", "own_bits")
)
"""Every slot of a state onto a new one (:meth:`CrossroadsState.clone`), the lists it changes in place as copies."""

_PHASE_OPTIONS = {
    Phase.BURN_BEFORE: "burn_before",
    Phase.BURN_AFTER: "burn_after",
    Phase.LOSER_TRADE: "trade",
    Phase.LOSER_MARK: "loser_mark",
    Phase.LOWER_INFLUENCE: "lower_influence",
    Phase.DEAL_AGAINST: "deal_against",
}
"""Decision phases whose every non-pass action is one option group."""

# -- hot-path constants and dispatch tables --------------------------------------------------------
_Phase = int_members(Phase)
_Purpose = int_members(Purpose)
_Scene = int_members(Scene)
_Act = fast_members(Act)
_MinusC = fast_members(MinusC)
_Stat = fast_members(Stat)
_EndReason = fast_members(EndReason)
_EntryKind = fast_members(EntryKind)
# Reading an enum member (``Act.PASS``) costs about a microsecond in Python 3.11, a module global a few
# tens of nanoseconds: the code that runs at every decision reads these plain ints instead.
_VALUE_1 = int(Act.VALUE_1)
_ASSIGN_0 = int(Act.ASSIGN_0)
_STAT_UP_G = int(Act.STAT_UP_G)
_STAT_UP2_G = int(Act.STAT_UP2_G)
_GAIN_PLUS_C = int(Act.GAIN_PLUS_C)
_REMOVE_MINUS_C = int(Act.REMOVE_MINUS_C)
_MARK_G = int(Act.MARK_G)
_UNMARK_G = int(Act.UNMARK_G)
_REMOVE_PLUS_C = int(Act.REMOVE_PLUS_C)
_KILL = int(Act.KILL)
_INFLUENCE_UP = int(Act.INFLUENCE_UP)
_PASS = int(Act.PASS)
_BURN = int(Act.BURN)
_TRADE = int(Act.TRADE)
_SCENE_INTRO_CHARACTER = int(Act.SCENE_INTRO_CHARACTER)
_SCENE_INTRO_FACTION = int(Act.SCENE_INTRO_FACTION)
_SCENE_DEAL = int(Act.SCENE_DEAL)
_SCENE_CONFRONT = int(Act.SCENE_CONFRONT)
_NO_OPPOSITION = int(Act.NO_OPPOSITION)
_TARGET_0 = int(Act.TARGET_0)
_HARM_G = int(Act.HARM_G)
_HARM2_G = int(Act.HARM2_G)
_INFLUENCE_DOWN = int(Act.INFLUENCE_DOWN)
_PUSH_INFLUENCE = int(Act.PUSH_INFLUENCE)
_HARM = [int(Act.HARM_G) + s for s in ALL_STATS]
_HARM2 = [int(Act.HARM2_G) + s for s in ALL_STATS]
_INFLUENCE_AGAINST = [int(Act.INFLUENCE_DOWN), int(Act.PUSH_INFLUENCE)]
_MINUS_C_OF = {kind: int(act) for kind, act in MINUS_C_OF.items()}
_PASS_ONLY = (_PASS,)
_BOOLS = (False, True)
_BURN_OR_PASS = (_BURN, _PASS)
_TRADE_OR_PASS = (_TRADE, _PASS)
_STAT_CHECKS: dict[tuple[Dice, int, int, int, int], rules.Check] = {}
"""Rule 3 memo: the reading of a stat check by (dice, assignment, G, KH, M); bounded by ``_STAT_CHECKS_LIMIT``."""
_STAT_CHECKS_LIMIT = 1 << 16
"""Entries of the stat-check memo (and of each config's faction-check memo) before it is cleared."""
_UNMARKS = tuple(
    tuple(tuple(tuple(_UNMARK_G + s for s in ALL_STATS if (g0, g1, g2)[s]) for g2 in _BOOLS) for g1 in _BOOLS)
    for g0 in _BOOLS
)
"""Rule 11.1: the "unmark a box" ids of a target's marked goal boxes, by the three boxes (``[g0][g1][g2]``)."""
_MARKS_LEFT = tuple(
    tuple(tuple(tuple(_MARK_G + s for s in ALL_STATS if not (g0, g1, g2)[s]) for g2 in _BOOLS) for g1 in _BOOLS)
    for g0 in _BOOLS
)
"""Rule 11.1: the "mark a box" ids of a target's unmarked goal boxes, by the three boxes (``[g0][g1][g2]``)."""
_CHANGES_KEPT = 256
_OWN_MENUS_LIMIT = 1 << 14
"""Memoised own-option menus per config (see ``_own_menus_of``) before the table is cleared."""
"""A clone copies the observation's change log (and kept blocks) up to this length, and starts afresh beyond."""
_MINUS_C_ACTS: dict[tuple[bool, bool, bool, bool], tuple[int, ...]] = {}
"""Rule 12: the "give -C" actions by (names automatic, is a character, holds "wounded", holds "dying")."""
_AGAINST_OTHER = frozenset(range(Act.HARM_G, Act.PUSH_INFLUENCE + 1)) - {_INFLUENCE_UP}
"""Rule 11.7: the outcome ids that act on the other side."""
_STAT_VALUES = 32
"""More than a stat can reach (creation at most 9, raises at most ``character.stat_cap`` 10): ``_stat_room``'s size."""
_STEP_STRIDE = 4
"""More than the build steps (0 and 1, Rule 1): points left x stride + step is a unique key."""
_ENTITY_MENUS_LIMIT = 1 << 16
"""Entity menus kept (``_EntityMenus``) before the table is cleared (bounds the memory)."""


class _EntityMenus(dict[int, tuple[int, ...]]):
    """The target ids of a set of entities given as a bit set by entity id (bit ``eid``), in entity id order.

    Rules 10-12's entity menus (targets, oppositions, deal partners, factions) are the entities in play of some kind:
    the state keeps who is in play as bit sets, and a menu is this table's entry for a set (listed once per set, for
    every game; the same ids a walk of the entities lists, characters by index and then factions).
    """

    def __missing__(self, entities: int) -> tuple[int, ...]:
        if len(self) >= _ENTITY_MENUS_LIMIT:
            self.clear()
        menu = self[entities] = tuple(_TARGET_0 + eid for eid in range(entities.bit_length()) if entities >> eid & 1)
        return menu


class _OppositionMenus(dict[int, tuple[int, ...]]):
    """Rule 11.1's opposition menus of a config by the bit set of the entities that may oppose.

    Their target ids, and nobody (``Act.NO_OPPOSITION``) last if ``confrontation.nobody_opposes``.
    """

    def __init__(self, nobody_opposes: bool) -> None:
        super().__init__()
        self.nobody = (_NO_OPPOSITION,) if nobody_opposes else ()

    def __missing__(self, entities: int) -> tuple[int, ...]:
        if len(self) >= _ENTITY_MENUS_LIMIT:
            self.clear()
        menu = self[entities] = _ENTITY_MENUS[entities] + self.nobody
        return menu


_ENTITY_MENUS = _EntityMenus()
_ROLL = int(Phase.ROLL)
_SPEND = int(Phase.SPEND)
_SETUP = int(Scene.SETUP)
_OVER = int(Phase.OVER)
_FIRST_PLAYER = int(Phase.FIRST_PLAYER)
_CONFRONT = int(Purpose.CONFRONT)
_BEAUTY = int(Purpose.BEAUTY)

_OPTION_READERS: dict[Phase, Callable[[CrossroadsState, int], str]] = {
    Phase.SPEND: CrossroadsState._spend_option,
    Phase.BUY_OUTCOME: CrossroadsState._buy_option,
    Phase.ADMIN_SCENE: CrossroadsState._scene_option,
    Phase.ADMIN_TARGET: CrossroadsState._target_option,
    Phase.ADMIN_OPPOSITION: CrossroadsState._opposition_option,
    Phase.ADMIN_AIM: CrossroadsState._aim_option,
    Phase.TARGET_AIM: CrossroadsState._aim_option,
    Phase.DEAL_FACTION: CrossroadsState._deal_faction_option,
}
"""The option group of a non-pass action in the phases where it depends on the action (option_of)."""
_SPEND_OPTIONS = {a: CrossroadsState._outcome_option(a, True) for a in range(Act.TARGET_0)}
_BUY_OPTIONS = {a: CrossroadsState._outcome_option(a, False) for a in range(Act.TARGET_0)}
"""``_outcome_option`` of every action id below the targets, as a spend and as an outcome (a table lookup)."""
_OPTIMAL: dict[tuple[Dice, tuple[int, int, int]], frozenset[int]] = {}
"""Rule 3 memo: the optimal assignments of (dice, stats) (option_of at an assignment)."""
_OPTIMAL_LIMIT = 1 << 16

_LEGAL: dict[Phase, Callable[[CrossroadsState], Sequence[int]]] = {
    Phase.BUILD: CrossroadsState._legal_build,
    Phase.ASSIGN: CrossroadsState._legal_assign,
    Phase.SPEND: CrossroadsState._legal_spend,
    Phase.ADMIN_SCENE: CrossroadsState._legal_scenes,
    Phase.ADMIN_TARGET: CrossroadsState._legal_target,
    Phase.ADMIN_OPPOSITION: CrossroadsState._legal_oppositions,
    Phase.ADMIN_AIM: CrossroadsState._legal_admin_aim,
    Phase.TARGET_AIM: CrossroadsState._legal_target_aim,
    Phase.DEAL_FACTION: CrossroadsState._legal_deal_faction,
    Phase.DEAL_AGAINST: CrossroadsState._deal_against_options,
    Phase.BURN_BEFORE: CrossroadsState._legal_burn_before,
    Phase.BURN_AFTER: CrossroadsState._legal_burn_after,
    Phase.LOSER_TRADE: CrossroadsState._legal_loser_trade,
    Phase.BUY_OUTCOME: CrossroadsState._legal_outcome,
    Phase.LOSER_MARK: CrossroadsState._legal_loser_mark,
    Phase.LOWER_INFLUENCE: CrossroadsState._legal_lower_influence,
    Phase.ROLL: CrossroadsState._legal_none,
    Phase.FIRST_PLAYER: CrossroadsState._legal_none,
    Phase.OVER: CrossroadsState._legal_none,
}
"""The legal actions of each phase (chance and terminal nodes have none)."""
_LEGAL_OF = tuple(_LEGAL[p] for p in sorted(Phase))
"""``_LEGAL`` indexed by the phase's value (a tuple subscript costs less than a dict lookup)."""

# where the rules read which part of the position (CrossroadsState.key leaves the rest out)
_CHECK_PHASES = (Phase.BUILD, Phase.ROLL, Phase.ASSIGN, Phase.SPEND, Phase.LOWER_INFLUENCE)
"""The checker (chk_eid, chk_seat): the character being built, or the entity rolling, assigning, spending."""
_PURPOSE_PHASES = (
    Phase.ROLL,
    Phase.ASSIGN,
    Phase.SPEND,
    Phase.LOWER_INFLUENCE,
    Phase.BUY_OUTCOME,
    Phase.LOSER_TRADE,
    Phase.BURN_AFTER,
)
"""Why the check is rolled: read by the roll, the assignment and the outcomes' allotment (Rule 11.2)."""
_LEFT_PHASES = (Phase.SPEND, Phase.BUY_OUTCOME, Phase.LOWER_INFLUENCE)
_DEGREE_PHASES = (Phase.LOSER_TRADE, Phase.BUY_OUTCOME)
_ASSIGN_PHASE, _BUILD_PHASE, _DEAL_AGAINST_PHASE = Phase.ASSIGN, Phase.BUILD, Phase.DEAL_AGAINST
_RESOLVED_PHASES = (Phase.LOSER_TRADE, Phase.BUY_OUTCOME, Phase.LOSER_MARK)
"""After every side's roll is read (a confrontation's result, or a scene for beauty's outcomes)."""
_LOSER_TRADE_PHASE = Phase.LOSER_TRADE

_APPLY: dict[Phase, Callable[[CrossroadsState, int], None]] = {
    Phase.BUILD: CrossroadsState._do_build,
    Phase.ASSIGN: CrossroadsState._do_assign,
    Phase.SPEND: CrossroadsState._do_spend,
    Phase.ADMIN_SCENE: CrossroadsState.choose_scene,
    Phase.ADMIN_TARGET: CrossroadsState._do_target,
    Phase.ADMIN_OPPOSITION: CrossroadsState.set_opposition,
    Phase.ADMIN_AIM: CrossroadsState._do_admin_aim,
    Phase.TARGET_AIM: CrossroadsState._do_target_aim,
    Phase.DEAL_FACTION: CrossroadsState._do_deal_faction,
    Phase.DEAL_AGAINST: CrossroadsState._do_deal_against,
    Phase.BURN_BEFORE: CrossroadsState._do_burn_before,
    Phase.BURN_AFTER: CrossroadsState._do_burn_after,
    Phase.LOSER_TRADE: CrossroadsState._do_loser_trade,
    Phase.BUY_OUTCOME: CrossroadsState._buy_outcome,
    Phase.LOSER_MARK: CrossroadsState._loser_mark,
    Phase.LOWER_INFLUENCE: CrossroadsState._do_lower_influence,
}
"""What an action does in each decision phase."""


class _ConfigTables:
    """What a state reads from its config, resolved once per config object (see :func:`_tables_of`)."""

    __slots__ = (
        "cfg",
        "settings",
        "encoder",
        "faction_base",
        "crossroads_live",
        "own_menus",
        "faction_checks",
        "next_admins",
        "build_menus",
        "stat_room",
        "opp_menus",
        "scene_menus",
        "opposition_menus",
    )

    def __init__(self, cfg: CrossroadsConfig) -> None:
        self.cfg = cfg  # held, so that the id keying this entry stays this config's while it is kept
        self.settings = settings = settings_of(cfg)
        self.encoder = encoder_of(settings)
        self.faction_base = self.encoder.layout.char_slots
        self.crossroads_live = settings.crossroads_effect != "none"
        self.own_menus = _own_menus_of(settings)
        self.faction_checks: dict[tuple[Dice, int], rules.Check] = {}
        self.next_admins = _next_admins_of(settings.players)
        self.build_menus: dict[int, tuple[int, ...]] = {}
        self.opp_menus: dict[Hashable, tuple[int, ...]] = {}
        self.scene_menus: dict[tuple[int, ...], Sequence[int]] = {}
        self.opposition_menus = _OppositionMenus(settings.nobody_opposes)
        cap = settings.stat_cap
        self.stat_room = tuple(0 if v + 2 <= cap else 1 if v < cap else 2 for v in range(_STAT_VALUES))


_TABLES: dict[int, _ConfigTables] = {}
"""The resolved tables by the config's ``id`` (each entry holds its config, so the id is not reused meanwhile)."""
_TABLES_LIMIT = 64


def _tables_of(cfg: CrossroadsConfig) -> _ConfigTables:
    """The :class:`_ConfigTables` of ``cfg``, looked up by identity.

    ``settings_of`` and the tables after it are memoised by equality, which hashes the whole pydantic config and the
    41-field settings (about a third of a new game's cost); a new game of the same config object (every reset of an
    env) finds the same tables here by one ``id`` and one identity check. An equal but distinct config resolves to
    equal settings, and through them to the same encoder and menus, as before.
    """
    tables = _TABLES.get(id(cfg))
    if tables is None or tables.cfg is not cfg:
        if len(_TABLES) >= _TABLES_LIMIT:
            _TABLES.clear()
        tables = _TABLES[id(cfg)] = _ConfigTables(cfg)
    return tables


@lru_cache(maxsize=16)
def _next_admins_of(players: int) -> tuple[int, ...]:
    """``rules.next_admin`` of every seat (Rule 8), shared by the states of a table size."""
    return tuple(rules.next_admin(admin, players) for admin in range(players))


@lru_cache(maxsize=256)
def _setup_order_of(first: int, players: int, factions_per_player: int) -> tuple[SetupStep, ...]:
    """``rules.setup_order`` (Rule 7) as a shared tuple per table (its steps are immutable; each game pops a copy)."""
    return tuple(rules.setup_order(first, players, factions_per_player))


@lru_cache(maxsize=64)
def _own_menus_of(settings: Settings) -> dict[Hashable, tuple[int, ...]]:
    """The memo of :meth:`CrossroadsState._own_options` for one config (its caps and ``spend.double_step``)."""
    return {}


def _no_decision(state: CrossroadsState, a: int) -> None:
    raise IllegalActionError(f"no decision in {state.decision_context()}")  # pragma: no cover - nothing is legal


_APPLY_OF = tuple(_APPLY.get(p, _no_decision) for p in sorted(Phase))
"""``_APPLY`` indexed by the phase's value (chance and terminal nodes have no legal action to apply)."""

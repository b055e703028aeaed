"""The Crossroads rules engine: a GM-less episode of personal characters, common characters and factions.

Rule numbers cite ``docs/rules/crossroads.md``. One function (or method) per numbered rule, each
named for what it does. Entities are referred to by an *entity id*: characters ``0..9`` and
factions ``10..17`` (the same offsets as the TARGET actions), so states copy cheaply and hash well.
"""

from __future__ import annotations

import enum
from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np

from envs.core.game import CHANCE, TERMINAL, EndReason, IllegalActionError, State
from envs.crossroads.config import MAX_CHARACTER_SLOTS, MAX_FACTION_SLOTS, MAX_SEATS, CrossroadsConfig
from envs.crossroads.dice import (
    CHANCE_OUTCOMES,
    PERMUTATIONS,
    STATS,
    Crossroads,
    crossroads_of,
    faction_successes,
    success_flags,
)

if TYPE_CHECKING:
    from envs.core.dice import Rng

CHARACTER_NAMES = ("Ash", "Bran", "Cora", "Dov", "Eda", "Fen", "Gil", "Hana", "Ivo", "Juno")
FACTION_NAMES = (
    "the Guild",
    "the Watch",
    "the Syndicate",
    "the Temple",
    "the Docks",
    "the Council",
    "the Cartel",
    "the Circle",
)
FACTION_BASE = MAX_CHARACTER_SLOTS
"""Entity id of faction ``k`` is ``FACTION_BASE + k``."""
NUM_ENTITIES = MAX_CHARACTER_SLOTS + MAX_FACTION_SLOTS


class Act(enum.IntEnum):
    """The fixed action table. The decision context says which subset is legal."""

    VALUE_1 = 0  # build: the value of the stat being set (VALUE_1 + v - 1)
    ASSIGN_0 = 9  # assign: dice permutation k (ASSIGN_0 + k), see dice.PERMUTATIONS
    STAT_UP_G = 15  # +1 to own stat
    STAT_UP2_G = 18  # +2 to own stat, paying a condition (spend.double_step)
    GAIN_PLUS_C = 21  # own +C
    REMOVE_MINUS_C = 22  # remove own -C
    MARK_G = 23  # mark own goal box (gated on this roll's success on the stat)
    HARM_G = 26  # -1 to the opponent's stat
    HARM2_G = 29  # -2 to the opponent's stat, with a condition (spend.double_step)
    ADD_MINUS_C = 32  # opponent gets a -C
    REMOVE_PLUS_C = 33  # opponent loses a +C
    UNMARK_G = 34  # unmark the opponent's goal box (gated)
    KILL = 37  # kill a wounded and dying opponent
    INFLUENCE_UP = 38  # own faction +1 Influence
    INFLUENCE_DOWN = 39  # opposing faction -1 Influence
    PUSH_INFLUENCE = 40  # opposing faction +1 Influence (towards its write-off at 8)
    PASS = 41  # stop / forgo / no more
    BURN = 42  # burn a +C (before the roll: +1 success; after: reroll)
    TRADE = 43  # loser removes a -C from the winner: degree -1
    SCENE_INTRO_CHARACTER = 44
    SCENE_INTRO_FACTION = 45
    SCENE_DEAL = 46
    SCENE_CONFRONT = 47
    NO_OPPOSITION = 48
    TARGET_0 = 49  # entity id e is TARGET_0 + e


NUM_ACTIONS = Act.TARGET_0 + NUM_ENTITIES


class Phase(enum.IntEnum):
    """Where the game is; decision phases double as decision contexts."""

    BUILD = 0
    ASSIGN = 1
    SPEND = 2
    ADMIN_SCENE = 3
    ADMIN_TARGET = 4
    ADMIN_OPPOSITION = 5
    ADMIN_AIM = 6
    TARGET_AIM = 7
    DEAL_FACTION = 8
    DEAL_AGAINST = 9
    BURN_BEFORE = 10
    BURN_AFTER = 11
    LOSER_TRADE = 12
    BUY_OUTCOME = 13
    LOSER_MARK = 14
    LOWER_INFLUENCE = 15
    ROLL = 16  # chance: 3d10
    FIRST_PLAYER = 17  # chance: who starts
    OVER = 18


NUM_CONTEXTS = 16
CONTEXT_NAMES = (
    "build",
    "assign",
    "spend",
    "admin_scene",
    "admin_target",
    "admin_opposition",
    "admin_aim",
    "target_aim",
    "deal_faction",
    "deal_against",
    "burn_before",
    "burn_after",
    "loser_trade",
    "buy_outcome",
    "loser_mark",
    "lower_influence",
)


class Purpose(enum.IntEnum):
    """Why a (non-confrontation) check is rolled."""

    SPEND = 0  # setup, introduction, deal: spend successes (Rule 6)
    GOAL = 1  # goal achieved: successes lower Influence (Rule 12)
    CONFRONT = 2  # a side of a confrontation (Rule 11)
    BEAUTY = 3  # the target of a confrontation without opposition (Rule 11.2)


class Scene(enum.IntEnum):
    SETUP = 0
    INTRO_CHARACTER = 1
    INTRO_FACTION = 2
    DEAL = 3
    CONFRONT = 4
    SKIPPED = 5


class Character:
    """Rule 1: a character: stats G/KH/M, goal boxes, +C and -C, owner, personal or common."""

    __slots__ = (
        "idx",
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
        return CHARACTER_NAMES[self.idx]

    def copy(self) -> Character:
        c = Character.__new__(Character)
        c.idx, c.owner, c.personal, c.stats = self.idx, self.owner, self.personal, list(self.stats)
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

    __slots__ = ("idx", "owner", "influence", "plus", "minus", "alive", "exit", "advantage")
    is_char = False

    def __init__(self, idx: int, owner: int, influence: int) -> None:
        self.idx = idx
        self.owner = owner
        self.influence = influence
        self.plus = 0
        self.minus = 0
        self.alive = True
        self.exit = ""
        self.advantage = False

    @property
    def name(self) -> str:
        return FACTION_NAMES[self.idx]

    def copy(self) -> Faction:
        f = Faction.__new__(Faction)
        f.idx, f.owner, f.influence, f.plus, f.minus = self.idx, self.owner, self.influence, self.plus, self.minus
        f.alive, f.exit, f.advantage = self.alive, self.exit, self.advantage
        return f

    def key(self) -> tuple[object, ...]:
        return (self.owner, self.influence, self.plus, self.minus, self.alive, self.advantage)


class Side:
    """One side of a confrontation (Rule 11): its entity, who plays it, its roll and its result."""

    __slots__ = ("eid", "seat", "aim", "burned", "rerolls", "dice", "perm", "flags", "succ", "won", "lost")

    def __init__(self, eid: int, seat: int) -> None:
        self.eid = eid
        self.seat = seat
        self.aim = -1  # the scene goal (an Act), -1 = none
        self.burned = 0  # +C burnt before the roll
        self.rerolls = 0
        self.dice: tuple[int, ...] = ()
        self.perm = 0
        self.flags: tuple[bool, bool, bool] = (False, False, False)
        self.succ = 0
        self.won = False
        self.lost = False

    def copy(self) -> Side:
        s = Side.__new__(Side)
        s.eid, s.seat, s.aim, s.burned, s.rerolls = self.eid, self.seat, self.aim, self.burned, self.rerolls
        s.dice, s.perm, s.flags = self.dice, self.perm, self.flags
        s.succ, s.won, s.lost = self.succ, self.won, self.lost
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


_ORDERED_OUTCOMES: list[tuple[Hashable, float]] = [
    ((a, b, c), 0.001) for a in range(1, 11) for b in range(1, 11) for c in range(1, 11)
]


class CrossroadsState(State):
    """A Crossroads episode (Rules 1-13)."""

    def __init__(self, cfg: CrossroadsConfig) -> None:
        super().__init__(cfg.episode.players)
        self.cfg = cfg
        self.chars: list[Character] = []
        self.factions: list[Faction] = []
        self.phase = Phase.FIRST_PLAYER
        self.actor = 0
        self.first = 0
        self.admin = 0
        self.scene_no = 0
        self.scene = Scene.SETUP
        self.exits = 0
        self.setup_queue: list[tuple[int, int]] = []  # (0 = character / 1 = faction, seat)
        self.goal_pending: list[int] = []  # characters whose goal check is still to be rolled (Rule 12)
        # the current check (Rules 3-6, 12) or the confrontation side being rolled
        self.chk_eid = -1
        self.chk_seat = 0
        self.purpose = Purpose.SPEND
        self.dice: tuple[int, ...] = ()
        self.perm = 0
        self.flags: tuple[bool, bool, bool] = (False, False, False)
        self.succ = 0
        self.left = 0  # spends / outcomes / Influence cuts still to make
        self.build_step = 0
        # confrontation (Rule 11)
        self.sides: list[Side] = []
        self.side_i = 0
        self.degree = 0
        self.deal_faction = -1
        self.initial_rolls = False
        self._legal: list[int] | None = None  # legal actions of the current node (cleared by every move)
        if cfg.setup.first_player == "seat0":
            self._begin_setup(0)

    # ------------------------------------------------------------------------------------------
    # protocol: who moves, legal actions
    # ------------------------------------------------------------------------------------------
    def current_player(self) -> int:
        p = self.phase
        if p == Phase.OVER:
            return TERMINAL
        if p >= Phase.ROLL:
            return CHANCE
        return self.actor

    def decision_context(self) -> str:
        p = self.phase
        return CONTEXT_NAMES[p] if p < NUM_CONTEXTS else "chance"

    def entity(self, eid: int) -> Character | Faction:
        return self.chars[eid] if eid < FACTION_BASE else self.factions[eid - FACTION_BASE]

    def legal_actions(self) -> list[int]:
        cached = self._legal
        if cached is None:
            cached = self._legal = self._compute_legal()
        return list(cached)

    def _compute_legal(self) -> list[int]:
        p = self.phase
        if p >= Phase.ROLL:
            return []
        if p == Phase.ASSIGN:
            return [9, 10, 11, 12, 13, 14]
        if p == Phase.BUILD:
            return self._legal_build()
        if p == Phase.SPEND:
            return self._legal_self_ops(self.entity(self.chk_eid), None, spend=True)
        if p == Phase.BUY_OUTCOME:
            s = self.sides[self.side_i]
            opp = self._opponent_side(self.side_i)
            return self._legal_self_ops(self.entity(s.eid), s.flags, spend=False) + self._legal_opp_ops(s, opp)
        if p == Phase.BURN_BEFORE:
            return [Act.BURN, Act.PASS] if self.entity(self.sides[self.side_i].eid).plus > 0 else [Act.PASS]
        if p == Phase.BURN_AFTER:
            s = self.sides[self.side_i]
            ok = self.entity(s.eid).plus > 0 and (self.cfg.confrontation.reroll_repeatable or s.rerolls == 0)
            return [Act.BURN, Act.PASS] if ok else [Act.PASS]
        if p == Phase.ADMIN_SCENE:
            return self._legal_scenes()
        if p == Phase.ADMIN_TARGET:
            return [Act.TARGET_0 + c.idx for c in self.chars if c.alive and c.personal and c.owner != self.admin]
        if p == Phase.ADMIN_OPPOSITION:
            return self._legal_oppositions()
        if p == Phase.ADMIN_AIM:
            t = self.chars[self.sides[1].eid]
            return [Act.ADD_MINUS_C] + [Act.UNMARK_G + i for i in range(3) if t.goals[i]]
        if p == Phase.TARGET_AIM:
            t = self.chars[self.sides[1].eid]
            return [Act.GAIN_PLUS_C, Act.ADD_MINUS_C] + [Act.MARK_G + i for i in range(3) if not t.goals[i]]
        if p == Phase.DEAL_FACTION:
            return [Act.TARGET_0 + FACTION_BASE + f.idx for f in self.factions if f.alive]
        if p == Phase.DEAL_AGAINST:
            mine = self._personal_of(self.admin)
            return [Act.TARGET_0 + c.idx for c in self.chars if c.alive and c.idx != mine]
        if p == Phase.LOSER_TRADE:
            w = self.entity(self._winner_side().eid)
            return [Act.TRADE, Act.PASS] if w.minus > 0 and self.degree > 0 else [Act.PASS]
        if p == Phase.LOSER_MARK:
            s = self.sides[self.side_i]
            c = self.chars[s.eid]
            return [Act.MARK_G + i for i in range(3) if s.flags[i] and not c.goals[i]] + [Act.PASS]
        if p == Phase.LOWER_INFLUENCE:
            return [Act.TARGET_0 + FACTION_BASE + f.idx for f in self.factions if f.alive] + [Act.PASS]
        raise AssertionError(p)  # pragma: no cover

    def _legal_build(self) -> list[int]:
        cc = self.cfg.character
        c = self.chars[self.chk_eid]
        left = cc.creation_points - sum(c.stats[: self.build_step])
        rest = 2 - self.build_step  # stats still to fill after this one
        lo = max(cc.stat_min, left - rest * cc.stat_max)
        hi = min(cc.stat_max, left - rest * cc.stat_min)
        return list(range(Act.VALUE_1 + lo - 1, Act.VALUE_1 + hi))

    def _legal_scenes(self) -> list[int]:
        ep = self.cfg.episode
        out: list[int] = []
        if len(self.chars) < ep.max_characters:
            out.append(Act.SCENE_INTRO_CHARACTER)
        if len(self.factions) < ep.max_factions:
            out.append(Act.SCENE_INTRO_FACTION)
        if self._personal_of(self.admin) >= 0 and any(f.alive for f in self.factions):
            out.append(Act.SCENE_DEAL)
        if any(c.alive and c.personal and c.owner != self.admin for c in self.chars):
            out.append(Act.SCENE_CONFRONT)
        return out or [int(Act.PASS)]

    def _legal_oppositions(self) -> list[int]:
        target = self.sides[1].eid
        out = [
            Act.TARGET_0 + c.idx
            for c in self.chars
            if c.alive and c.idx != target and (not c.personal or c.owner == self.admin)
        ]
        out += [Act.TARGET_0 + FACTION_BASE + f.idx for f in self.factions if f.alive]
        out.append(Act.NO_OPPOSITION)
        return out

    def _legal_self_ops(self, e: Character | Faction, flags: tuple[bool, bool, bool] | None, spend: bool) -> list[int]:
        """Rules 6 and 11.7: what a roller may buy for itself."""
        cap = self.cfg.character.max_conditions
        out: list[int] = []
        if e.is_char:
            assert isinstance(e, Character)
            stat_cap = self.cfg.character.stat_cap
            ds = self.cfg.spend.double_step
            pay = e.plus if ds == "same_sign" else (e.minus if ds == "opposite_sign" else 0)
            for i in range(3):
                if e.stats[i] < stat_cap:
                    out.append(Act.STAT_UP_G + i)
            if pay > 0:
                for i in range(3):
                    if e.stats[i] + 2 <= stat_cap:
                        out.append(Act.STAT_UP2_G + i)
            if e.plus < cap:
                out.append(Act.GAIN_PLUS_C)
            if e.minus > 0:
                out.append(Act.REMOVE_MINUS_C)
            if flags is not None:
                for i in range(3):
                    if flags[i] and not e.goals[i]:
                        out.append(Act.MARK_G + i)
        else:
            if e.plus < cap:
                out.append(Act.GAIN_PLUS_C)
            if e.minus > 0:
                out.append(Act.REMOVE_MINUS_C)
            if not spend:
                out.append(Act.INFLUENCE_UP)
        out.append(Act.PASS)
        return out

    def _legal_opp_ops(self, s: Side, opp: Side | None) -> list[int]:
        """Rule 11.7: what a winner may buy against the other side."""
        if opp is None:
            return []
        o = self.entity(opp.eid)
        if not o.alive:
            return []
        cap = self.cfg.character.max_conditions
        out: list[int] = []
        if o.is_char:
            assert isinstance(o, Character)
            ds = self.cfg.spend.double_step
            pay = o.minus if ds == "same_sign" else (o.plus if ds == "opposite_sign" else 0)
            out += [Act.HARM_G, Act.HARM_G + 1, Act.HARM_G + 2]
            if pay > 0:
                out += [Act.HARM2_G, Act.HARM2_G + 1, Act.HARM2_G + 2]
            if o.minus < cap:
                out.append(Act.ADD_MINUS_C)
            if o.plus > 0:
                out.append(Act.REMOVE_PLUS_C)
            for i in range(3):
                if o.goals[i] and s.flags[i]:
                    out.append(Act.UNMARK_G + i)
            if self.cfg.writeoffs.kill_outcome and o.wounded and o.dying:
                out.append(Act.KILL)
        else:
            if o.minus < cap:
                out.append(Act.ADD_MINUS_C)
            if o.plus > 0:
                out.append(Act.REMOVE_PLUS_C)
            out += [Act.INFLUENCE_DOWN, Act.PUSH_INFLUENCE]
        return out

    # ------------------------------------------------------------------------------------------
    # protocol: chance
    # ------------------------------------------------------------------------------------------
    def chance_outcomes(self) -> list[tuple[Hashable, float]]:
        if self.phase == Phase.FIRST_PLAYER:
            n = self.num_players
            return [(s, 1.0 / n) for s in range(n)]
        if self.phase == Phase.ROLL:
            if self.cfg.check.assignment == "in_order" and self._roller_is_char():
                return list(_ORDERED_OUTCOMES)
            return list(CHANCE_OUTCOMES)
        raise ValueError("not a chance node")

    def sample_chance(self, rng: Rng) -> Hashable:
        if self.phase == Phase.FIRST_PLAYER:
            return rng.integers(0, self.num_players)
        d = rng.roll(3, 10)
        if self.cfg.check.assignment == "one_each" or not self._roller_is_char():
            return tuple(sorted(d))
        return d

    def _roller_is_char(self) -> bool:
        eid = self.sides[self.side_i].eid if self.purpose == Purpose.CONFRONT else self.chk_eid
        return eid < FACTION_BASE

    def apply_chance(self, outcome: Hashable) -> None:
        self._legal = None
        self._apply_chance(outcome)
        self._legal = None

    def _apply_chance(self, outcome: Hashable) -> None:
        if self.phase == Phase.FIRST_PLAYER:
            seat = int(outcome)  # type: ignore[call-overload]
            if not 0 <= seat < self.num_players:
                raise ValueError(f"no seat {seat}")
            self._begin_setup(seat)
            return
        if self.phase != Phase.ROLL:
            raise ValueError("not a chance node")
        dice = tuple(int(d) for d in outcome)  # type: ignore[attr-defined]
        if len(dice) != 3 or not all(1 <= d <= 10 for d in dice):
            raise ValueError(f"3d10 outcome expected, got {outcome!r}")
        if self.cfg.check.assignment == "one_each" or not self._roller_is_char():
            dice = tuple(sorted(dice))
        self._rolled(dice)

    # ------------------------------------------------------------------------------------------
    # Rule 7: setup
    # ------------------------------------------------------------------------------------------
    def _begin_setup(self, first: int) -> None:
        """Rule 7: players in turn from the first, passing left, introduce characters, then factions."""
        self.first = first
        n = self.num_players
        order = [(first + k) % n for k in range(n)]
        self.setup_queue = [(0, s) for s in order]
        self.setup_queue += [(1, s) for s in order for _ in range(self.cfg.faction.per_player)]
        self.narrate("setup", f"Player {first + 1} goes first.", first)
        self._next_setup()

    def _next_setup(self) -> None:
        if not self.setup_queue:
            self.admin = self.first
            self._start_scene()
            return
        kind, seat = self.setup_queue.pop(0)
        if kind == 0:
            self.create_character(seat, personal=True)
        else:
            self.create_faction(seat)

    # ------------------------------------------------------------------------------------------
    # Rule 1/2: characters and factions
    # ------------------------------------------------------------------------------------------
    def create_character(self, seat: int, personal: bool) -> None:
        """Rule 1: a new character: the creator spreads the creation points over G, KH, M (two choices)."""
        idx = len(self.chars)
        self.chars.append(Character(idx, seat, personal, [0, 0, 0]))
        self.chk_eid = idx
        self.build_step = 0
        self.phase = Phase.BUILD
        self.actor = seat

    def create_faction(self, seat: int) -> None:
        """Rule 2: a new faction at the starting Influence; it is presented with a faction check (Rule 4)."""
        idx = len(self.factions)
        f = Faction(idx, seat, self.cfg.faction.start_influence)
        self.factions.append(f)
        self.narrate("faction", f"Player {seat + 1} presents {f.name} (Influence {f.influence}).", seat)
        self.begin_check(FACTION_BASE + idx, seat, Purpose.SPEND)

    def _build(self, value: int) -> None:
        c = self.chars[self.chk_eid]
        c.stats[self.build_step] = value
        self.build_step += 1
        if self.build_step == 2:
            c.stats[2] = self.cfg.character.creation_points - c.stats[0] - c.stats[1]
            kind = "personal" if c.personal else "common"
            self.narrate(
                "character",
                f"Player {self.actor + 1} introduces {c.name} ({kind}): "
                f"G {c.stats[0]} | KH {c.stats[1]} | M {c.stats[2]}.",
                self.actor,
                stats=list(c.stats),
            )
            self.begin_check(c.idx, self.actor, Purpose.SPEND)

    # ------------------------------------------------------------------------------------------
    # Rules 3-5: checks
    # ------------------------------------------------------------------------------------------
    def begin_check(self, eid: int, seat: int, purpose: Purpose) -> None:
        """Rules 3/4: roll 3d10 for a character (stat check) or a faction (faction check)."""
        self.chk_eid = eid
        self.chk_seat = seat
        self.purpose = purpose
        self.phase = Phase.ROLL

    def _rolled(self, dice: tuple[int, ...]) -> None:
        if self.purpose == Purpose.CONFRONT:
            s = self.sides[self.side_i]
            s.dice = dice
            e = self.entity(s.eid)
            self.narrate("roll", f"{e.name} rolls 3d10: {', '.join(map(str, dice))}.", s.seat, dice=dice)
            self._confront_next_roll()
            return
        self.dice = dice
        e = self.entity(self.chk_eid)
        self.narrate("roll", f"{e.name} rolls 3d10: {', '.join(map(str, dice))}.", self.chk_seat, dice=dice)
        if e.is_char and self.cfg.check.assignment == "one_each":
            self.phase = Phase.ASSIGN
            self.actor = self.chk_seat
        else:
            self._assigned(0)

    def _assigned(self, perm: int) -> None:
        e = self.entity(self.chk_eid)
        self.perm = perm
        self.flags, self.succ = self.read_check(e, self.dice, perm)
        self.succ = max(0, self.succ + self.use_advantage(e) + self.crossroads(e, self.dice, perm, self.flags))
        self.narrate(
            "successes",
            f"{e.name}: {self.succ} success{'es' if self.succ != 1 else ''}.",
            self.chk_seat,
            successes=self.succ,
        )
        if not e.alive and self.purpose != Purpose.GOAL:  # written off by the crossroads (Rule 12)
            self._check_done()
            return
        if self.purpose == Purpose.GOAL:
            self.left = self.succ
            if self.left > 0 and any(f.alive for f in self.factions):
                self.phase = Phase.LOWER_INFLUENCE
                self.actor = self.chk_seat
                return
            self._check_done()
            return
        if self.purpose == Purpose.BEAUTY:
            s = self.sides[0]
            s.dice, s.perm, s.flags, s.succ = self.dice, perm, self.flags, self.succ
            self.left = self.cfg.confrontation.beauty_outcomes
            self.side_i = 0
            self.narrate("beauty", f"No opposition: a scene for beauty; {e.name} gets {self.left} outcome(s).", s.seat)
            self._next_outcome()
            return
        self.left = self.succ * self.cfg.spend.outcomes_per_success
        self._next_spend()

    def read_check(
        self, e: Character | Faction, dice: tuple[int, ...], perm: int
    ) -> tuple[tuple[bool, bool, bool], int]:
        """Rules 3 and 4: per-stat success flags and the success count of a roll.

        A character's die on a stat succeeds if it is at most the stat; a faction's dice each succeed
        at most its Influence (plus ``faction.check_bonus``). A faction counts as succeeding on every
        stat for goal-box gating if it has any success (``confrontation.faction_gate``).
        """
        if e.is_char:
            flags = success_flags(dice, PERMUTATIONS[perm], e.stats)  # type: ignore[union-attr]
            return flags, flags[0] + flags[1] + flags[2]
        if self.cfg.faction.check == "none":
            return (False, False, False), 0
        n = faction_successes(dice, e.influence + self.cfg.faction.check_bonus)  # type: ignore[union-attr]
        gate = n > 0 and self.cfg.confrontation.faction_gate == "any_success"
        return (gate, gate, gate), n

    def use_advantage(self, e: Character | Faction) -> int:
        """Rule 11.4: an Advantage token adds its bonus to the holder's next roll and is spent."""
        if e.advantage:
            e.advantage = False
            self.narrate("advantage", f"{e.name} uses its Advantage.", None)
            return self.cfg.advantage.bonus
        return 0

    def crossroads(
        self, e: Character | Faction, dice: tuple[int, ...], perm: int, flags: tuple[bool, bool, bool]
    ) -> int:
        """Rule 5: a double or triple is a crossroads; its effect (``crossroads.effect``) is applied.

        Returns the change in successes. ``goal_box_on_miss`` marks the goal box of every unmarked
        stat whose die is one of the matching dice and failed.
        """
        cr = crossroads_of(dice)
        if cr is Crossroads.NONE:
            return 0
        kind = "triple" if cr is Crossroads.TRIPLE else "double"
        self.narrate("crossroads", f"Crossroads! {e.name} rolled a {kind}.", None, crossroads=kind)
        effect = self.cfg.crossroads.effect
        times = 2 if cr is Crossroads.TRIPLE and self.cfg.crossroads.triple_twice else 1
        delta = 0
        for _ in range(times):
            if effect == "extra_success":
                delta += 1
            elif effect == "lose_success":
                delta -= 1
            elif effect == "gain_plus_c":
                self.gain_plus_c(e)
            elif effect == "gain_minus_c":
                self.add_minus_c(e)
            elif effect == "goal_box_on_miss" and e.is_char:
                assert isinstance(e, Character)
                p = PERMUTATIONS[perm]
                counts = [dice.count(dice[p[i]]) for i in range(3)]
                for i in range(3):
                    if counts[i] >= 2 and not flags[i] and not e.goals[i] and e.alive:
                        self.mark_goal(e, i)
        return delta

    # ------------------------------------------------------------------------------------------
    # Rule 6: spending successes
    # ------------------------------------------------------------------------------------------
    def _next_spend(self) -> None:
        e = self.entity(self.chk_eid)
        if self.left > 0 and e.alive:
            self.phase = Phase.SPEND
            self.actor = self.chk_seat
            return
        self._check_done()

    def apply_self_op(self, e: Character | Faction, a: int, flags: tuple[bool, bool, bool] | None) -> None:
        """Rules 6 and 11.7: a spend or outcome on the roller itself."""
        if Act.STAT_UP_G <= a <= Act.STAT_UP_G + 2:
            self.raise_stat(e, a - Act.STAT_UP_G, 1)  # type: ignore[arg-type]
        elif Act.STAT_UP2_G <= a <= Act.STAT_UP2_G + 2:
            self.raise_stat_twice(e, a - Act.STAT_UP2_G)  # type: ignore[arg-type]
        elif a == Act.GAIN_PLUS_C:
            self.gain_plus_c(e)
        elif a == Act.REMOVE_MINUS_C:
            self.remove_minus_c(e)
        elif Act.MARK_G <= a <= Act.MARK_G + 2:
            self.mark_goal(e, a - Act.MARK_G)  # type: ignore[arg-type]
        elif a == Act.INFLUENCE_UP:
            self.change_influence(e, 1)  # type: ignore[arg-type]

    def raise_stat(self, c: Character, i: int, by: int) -> None:
        """Rule 6: +1 to a stat (up to ``character.stat_cap``)."""
        c.stats[i] = min(self.cfg.character.stat_cap, c.stats[i] + by)
        self.narrate("stat", f"{c.name}: +{by} {STATS[i]} (now {c.stats[i]}).", None)

    def raise_stat_twice(self, c: Character, i: int) -> None:
        """Rules 6/11.7: +2 to a stat while also removing a condition (``spend.double_step``)."""
        if self.cfg.spend.double_step == "same_sign":
            c.plus -= 1
            self.narrate("condition", f"{c.name} removes a +C to make it +2.", None)
        else:
            self.remove_minus_c(c)
        self.raise_stat(c, i, 2)

    def gain_plus_c(self, e: Character | Faction) -> None:
        """Rule 6: gain a +C (at most ``character.max_conditions``)."""
        if e.plus < self.cfg.character.max_conditions:
            e.plus += 1
            self.narrate("condition", f"{e.name} gains a +C ({e.plus}).", None)

    def remove_minus_c(self, e: Character | Faction) -> None:
        """Rule 6: remove a -C (a plain one first, then "dying", then "wounded")."""
        if e.minus <= 0:
            return
        if isinstance(e, Character) and e.minus - e.wounded - e.dying <= 0:
            if e.dying:
                e.dying = False
            else:
                e.wounded = False
        e.minus -= 1
        self.narrate("condition", f"{e.name} sheds a -C ({e.minus} left).", None)

    def add_minus_c(self, e: Character | Faction) -> None:
        """Rules 11.7/12: a -C; a character's first two are "wounded" then "dying" [decision]."""
        if e.minus >= self.cfg.character.max_conditions:
            return
        label = "-C"
        if isinstance(e, Character):
            if not e.wounded:
                e.wounded, label = True, '-C "wounded"'
            elif not e.dying:
                e.dying, label = True, '-C "dying"'
        e.minus += 1
        self.narrate("condition", f"{e.name} takes a {label}.", None)

    def mark_goal(self, c: Character, i: int) -> None:
        """Rule 11.7: mark a goal box; all three marked achieves the goal (Rule 12)."""
        if c.goals[i]:
            return
        c.goals[i] = True
        self.narrate("goal", f"{c.name} marks the {STATS[i]} box of its goal.", None)
        if c.goals[0] and c.goals[1] and c.goals[2] and c.alive:
            c.achieved = True
            self.write_off(c, "goal achieved")
            if self.cfg.writeoffs.goal_check:
                self.goal_pending.append(c.idx)

    def change_influence(self, f: Faction, by: int) -> None:
        """Rules 10/11.7/12: change a faction's Influence; 0 or 8 writes it off."""
        f.influence += by
        self.narrate("influence", f"{f.name}: Influence {'+' if by > 0 else ''}{by} (now {f.influence}).", None)
        fr = self.cfg.faction
        if f.alive and f.influence <= fr.writeoff_low:
            self.write_off(f, "Influence fell to 0")
        elif f.alive and f.influence >= fr.writeoff_high:
            self.write_off(f, f"Influence reached {fr.writeoff_high}")

    def lower_stat(self, c: Character, i: int, by: int) -> None:
        """Rule 11.7/12: -1 (or -2) to a stat; a stat at 0 writes the character off."""
        c.stats[i] = max(0, c.stats[i] - by)
        self.narrate("stat", f"{c.name}: -{by} {STATS[i]} (now {c.stats[i]}).", None)
        if c.stats[i] == 0 and c.alive:
            self.write_off(c, f"{STATS[i]} fell to 0")

    def write_off(self, e: Character | Faction, reason: str) -> None:
        """Rule 12: an exit. Counts towards the end of the episode (Rule 13)."""
        e.alive = False
        e.exit = reason
        self.exits += 1
        self.narrate("exit", f"{e.name} is written off: {reason} (exit {self.exits}).", None, reason=reason)

    def _check_done(self) -> None:
        if self.scene == Scene.SETUP:
            self._next_setup()
        else:
            self._end_scene()

    # ------------------------------------------------------------------------------------------
    # Rule 8: the Admin and the scenes
    # ------------------------------------------------------------------------------------------
    def _start_scene(self) -> None:
        """Rules 8 and 13: the Admin picks a scene, unless three exits happened or the scene limit is hit."""
        if self.exits >= self.cfg.episode.exits_to_end:
            self._finish(EndReason.COMPLETED, f"{self.exits} exits")
            return
        if self.scene_no >= self.cfg.episode.max_scenes:
            self._finish(EndReason.TIME_LIMIT, f"scene limit {self.cfg.episode.max_scenes}")
            return
        self.scene_no += 1
        self.phase = Phase.ADMIN_SCENE
        self.actor = self.admin
        self.sides = []

    def _end_scene(self) -> None:
        """Rule 12: pending goal checks are rolled, then the Admin role passes left (Rule 8)."""
        while self.goal_pending:
            c = self.chars[self.goal_pending.pop(0)]
            seat = c.owner if c.personal else self.admin
            self.narrate("goal_check", f"{c.name} achieved its goal: a check to lower factions' Influence.", seat)
            self.begin_check(c.idx, seat, Purpose.GOAL)
            return
        self.admin = (self.admin + 1) % self.num_players
        self._start_scene()

    def choose_scene(self, a: int) -> None:
        """Rule 8: the Admin chooses introduction, deal or confrontation."""
        admin = self.admin
        if a == Act.SCENE_INTRO_CHARACTER:
            self.scene = Scene.INTRO_CHARACTER
            self.narrate("scene", f"Admin (player {admin + 1}): introduction of a new character.", admin)
            self.introduce_character()
        elif a == Act.SCENE_INTRO_FACTION:
            self.scene = Scene.INTRO_FACTION
            self.narrate("scene", f"Admin (player {admin + 1}): introduction of a new faction.", admin)
            self.create_faction(admin)
        elif a == Act.SCENE_DEAL:
            self.scene = Scene.DEAL
            self.narrate("scene", f"Admin (player {admin + 1}): a deal with a faction.", admin)
            self.phase = Phase.DEAL_FACTION
        elif a == Act.SCENE_CONFRONT:
            self.scene = Scene.CONFRONT
            self.narrate("scene", f"Admin (player {admin + 1}): a confrontation.", admin)
            self.sides = [Side(-1, admin), Side(-1, admin)]
            self.phase = Phase.ADMIN_TARGET
        else:
            self.scene = Scene.SKIPPED
            self.narrate("scene", f"Admin (player {admin + 1}) has no scene to frame.", admin)
            self._end_scene()

    def introduce_character(self) -> None:
        """Rule 9: a new character; personal if the Admin has none left in play, else a common one."""
        self.create_character(self.admin, personal=self._personal_of(self.admin) < 0)

    # ------------------------------------------------------------------------------------------
    # Rule 10: deal
    # ------------------------------------------------------------------------------------------
    def deal_with(self, faction: int) -> None:
        """Rule 10: the Admin's character makes a job deal with a faction; the faction gains Influence."""
        self.deal_faction = faction
        if self.legal_actions_for(Phase.DEAL_AGAINST):
            self.phase = Phase.DEAL_AGAINST
            return
        self.close_deal(-1)

    def legal_actions_for(self, phase: Phase) -> list[int]:
        old = self.phase
        self.phase = phase
        try:
            return self._compute_legal()
        finally:
            self.phase = old

    def close_deal(self, against: int) -> None:
        """Rule 10: the deal is recorded against another character; Influence +1; the character checks."""
        f = self.factions[self.deal_faction]
        c = self.chars[self._personal_of(self.admin)]
        vs = f" against {self.chars[against].name}" if against >= 0 else ""
        self.narrate("deal", f"{c.name} strikes a deal with {f.name}{vs}.", self.admin, against=against)
        self.change_influence(f, self.cfg.deal.influence_gain)
        self.begin_check(c.idx, self.admin, Purpose.SPEND)

    # ------------------------------------------------------------------------------------------
    # Rule 11: confrontation
    # ------------------------------------------------------------------------------------------
    def set_opposition(self, a: int) -> None:
        """Rule 11.1/11.2: the Admin opposes the target with its character, a common character, a faction or nobody."""
        target = self.chars[self.sides[1].eid]
        if a == Act.NO_OPPOSITION:
            self.narrate("confront", f"Nobody stands against {target.name}.", self.admin)
            self.sides = [self.sides[1]]
            self.begin_check(target.idx, target.owner, Purpose.BEAUTY)
            return
        self.sides[0].eid = a - Act.TARGET_0
        opp = self.entity(self.sides[0].eid)
        self.narrate("confront", f"{opp.name} stands against {target.name}.", self.admin)
        self.phase = Phase.ADMIN_AIM
        self.actor = self.admin

    def _opponent_side(self, i: int) -> Side | None:
        if len(self.sides) < 2:
            return None
        return self.sides[1 - i]

    def _winner_side(self) -> Side:
        return self.sides[0] if self.sides[0].won else self.sides[1]

    def _begin_burns(self) -> None:
        self.side_i = 0
        self.phase = Phase.BURN_BEFORE
        self.actor = self.sides[0].seat

    def burn_before(self, s: Side) -> None:
        """Rule 11.3: before the roll, remove a +C for +1 success."""
        e = self.entity(s.eid)
        e.plus -= 1
        s.burned += 1
        self.narrate("burn", f"{e.name} burns a +C for a success before the roll.", s.seat)

    def _next_burn_before(self) -> None:
        if self.side_i == 0:
            self.side_i = 1
            self.actor = self.sides[1].seat
            return
        self.side_i = 0
        self.purpose = Purpose.CONFRONT
        self.initial_rolls = True
        self.phase = Phase.ROLL

    def _confront_next_roll(self) -> None:
        """Rule 11.3: all participants roll; then each side in turn may burn +C to reroll."""
        if self.initial_rolls and self.side_i == 0:
            self.side_i = 1
            return
        if self.initial_rolls:
            self.initial_rolls = False
            self.side_i = 0
        self.phase = Phase.BURN_AFTER
        self.actor = self.sides[self.side_i].seat

    def burn_after(self, s: Side) -> None:
        """Rule 11.3: after the roll, remove a +C to reroll all three dice (``confrontation.reroll_repeatable``)."""
        e = self.entity(s.eid)
        e.plus -= 1
        s.rerolls += 1
        self.narrate("burn", f"{e.name} burns a +C to reroll.", s.seat)
        self.phase = Phase.ROLL

    def _next_burn_after(self) -> None:
        if self.side_i == 0:
            self.side_i = 1
            self.actor = self.sides[1].seat
            return
        self.side_i = 0
        self._next_assign()

    def _next_assign(self) -> None:
        while self.side_i < 2:
            s = self.sides[self.side_i]
            if s.eid < FACTION_BASE and self.cfg.check.assignment == "one_each":
                self.phase = Phase.ASSIGN
                self.actor = s.seat
                return
            self._side_assigned(s, 0)
        self.resolve_confrontation()

    def _side_assigned(self, s: Side, perm: int) -> None:
        e = self.entity(s.eid)
        s.perm = perm
        s.flags, n = self.read_check(e, s.dice, perm)
        n += s.burned * self.cfg.confrontation.burn_before_bonus
        n += self.use_advantage(e)
        n += self.crossroads(e, s.dice, perm, s.flags)
        s.succ = max(0, n)
        self.narrate("successes", f"{e.name}: {s.succ} success{'es' if s.succ != 1 else ''}.", s.seat, successes=s.succ)
        self.side_i += 1

    def resolve_confrontation(self) -> None:
        """Rules 11.4/11.5: winners have the most successes (a tie is a shared win), degree = the gap."""
        a, b = self.sides
        hi = max(a.succ, b.succ)
        for s in self.sides:
            s.won = s.succ == hi
            s.lost = not s.won
        if a.won and b.won:
            self.degree = self.cfg.confrontation.tie_degree
            self.narrate("result", f"A tie: a shared win (degree {self.degree}).", None)
        else:
            w, lo = (a, b) if a.won else (b, a)
            self.degree = w.succ - lo.succ
            self.narrate("result", f"{self.entity(w.eid).name} wins with degree {self.degree}.", w.seat)
        if self.cfg.advantage.enabled:
            for s in self.sides:
                e = self.entity(s.eid)
                if s.won and e.alive and (not e.is_char or not e.personal):  # type: ignore[union-attr]
                    e.advantage = True
                    self.narrate("advantage", f"{e.name} earns an Advantage.", s.seat)
        if not (a.won and b.won) and self.cfg.confrontation.loser_trade != "off":
            loser = b if a.won else a
            self.phase = Phase.LOSER_TRADE
            self.actor = loser.seat
            return
        self._award_goals()

    def loser_trade(self) -> None:
        """Rule 11.6: the loser removes a -C from the winner to cut the degree by 1."""
        w = self._winner_side()
        self.remove_minus_c(self.entity(w.eid))
        self.degree -= 1
        self.narrate("trade", f"The loser cuts the degree to {self.degree}.", self.actor)

    def _award_goals(self) -> None:
        """Rule 11.7: winners get their scene goal free, then buy outcomes with the degree."""
        if self.cfg.confrontation.free_scene_goal:
            for i, s in enumerate(self.sides):
                if s.won:
                    self.grant_scene_goal(i)
        self.side_i = 0
        self.left = self.degree if self.sides[0].won else 0
        self._next_outcome()

    def grant_scene_goal(self, i: int) -> None:
        """Rule 11.7: a winner's scene goal, free (goal boxes gated by the winner's die on that stat)."""
        s = self.sides[i]
        opp = self.sides[1 - i]
        e, o = self.entity(s.eid), self.entity(opp.eid)
        if not e.alive:
            return
        a = s.aim
        if a == Act.ADD_MINUS_C and o.alive:
            self.add_minus_c(o)
        elif Act.UNMARK_G <= a <= Act.UNMARK_G + 2 and o.alive and s.flags[a - Act.UNMARK_G]:
            self.unmark_goal(o, a - Act.UNMARK_G)  # type: ignore[arg-type]
        elif a == Act.GAIN_PLUS_C:
            self.gain_plus_c(e)
        elif Act.MARK_G <= a <= Act.MARK_G + 2 and s.flags[a - Act.MARK_G]:
            self.mark_goal(e, a - Act.MARK_G)  # type: ignore[arg-type]

    def unmark_goal(self, c: Character, i: int) -> None:
        """Rule 11.7: unmark a goal box of a character."""
        if c.goals[i]:
            c.goals[i] = False
            self.narrate("goal", f"{c.name} loses the {STATS[i]} mark of its goal.", None)

    def _next_outcome(self) -> None:
        while True:
            if self.side_i < len(self.sides):
                s = self.sides[self.side_i]
                if self.left > 0 and self.entity(s.eid).alive:
                    self.phase = Phase.BUY_OUTCOME
                    self.actor = s.seat
                    return
                self.side_i += 1
                if self.side_i < len(self.sides):
                    self.left = self.degree if self.sides[self.side_i].won else 0
                continue
            break
        self._begin_loser_marks()

    def apply_opp_op(self, o: Character | Faction, a: int) -> None:
        """Rule 11.7: an outcome against the other side."""
        if Act.HARM_G <= a <= Act.HARM_G + 2:
            self.lower_stat(o, a - Act.HARM_G, 1)  # type: ignore[arg-type]
        elif Act.HARM2_G <= a <= Act.HARM2_G + 2:
            if self.cfg.spend.double_step == "same_sign":
                self.remove_minus_c(o)
            else:
                o.plus -= 1
            self.lower_stat(o, a - Act.HARM2_G, 2)  # type: ignore[arg-type]
        elif a == Act.ADD_MINUS_C:
            self.add_minus_c(o)
        elif a == Act.REMOVE_PLUS_C:
            o.plus -= 1
            self.narrate("condition", f"{o.name} loses a +C ({o.plus}).", None)
        elif Act.UNMARK_G <= a <= Act.UNMARK_G + 2:
            self.unmark_goal(o, a - Act.UNMARK_G)  # type: ignore[arg-type]
        elif a == Act.KILL:
            self.kill(o)  # type: ignore[arg-type]
        elif a == Act.INFLUENCE_DOWN:
            self.change_influence(o, -1)  # type: ignore[arg-type]
        elif a == Act.PUSH_INFLUENCE:
            self.change_influence(o, 1)  # type: ignore[arg-type]

    def kill(self, c: Character) -> None:
        """Rule 12: an outcome spent to kill a character that is "wounded" and "dying"."""
        self.write_off(c, "killed")

    def _begin_loser_marks(self) -> None:
        """Rule 11.8: a losing character may burn +C to mark goal boxes it succeeded on."""
        if self.cfg.confrontation.loser_mark and len(self.sides) == 2:
            for i, s in enumerate(self.sides):
                if s.lost and s.eid < FACTION_BASE:
                    c = self.chars[s.eid]
                    if c.alive and c.plus > 0 and any(s.flags[k] and not c.goals[k] for k in range(3)):
                        self.side_i = i
                        self.phase = Phase.LOSER_MARK
                        self.actor = s.seat
                        return
        self._end_scene()

    # ------------------------------------------------------------------------------------------
    # apply_action: the decision dispatcher
    # ------------------------------------------------------------------------------------------
    def apply_action(self, action: int) -> None:
        a = int(action)
        if a not in self.legal_actions():
            raise IllegalActionError(f"illegal action {a} ({self.action_label(a)}) in {self.decision_context()}")
        self._legal = None
        self._apply_action(a)
        self._legal = None

    def _apply_action(self, a: int) -> None:
        p = self.phase
        if p == Phase.BUILD:
            self._build(a - Act.VALUE_1 + 1)
        elif p == Phase.ASSIGN:
            perm = a - Act.ASSIGN_0
            if self.purpose == Purpose.CONFRONT:
                self._side_assigned(self.sides[self.side_i], perm)
                self._next_assign()
            else:
                self._assigned(perm)
        elif p == Phase.SPEND:
            if a == Act.PASS:
                self.left = 0
            else:
                self.apply_self_op(self.entity(self.chk_eid), a, None)
                self.left -= 1
            self._next_spend()
        elif p == Phase.ADMIN_SCENE:
            self.choose_scene(a)
        elif p == Phase.ADMIN_TARGET:
            self.sides[1].eid = a - Act.TARGET_0
            self.sides[1].seat = self.chars[a - Act.TARGET_0].owner
            self.phase = Phase.ADMIN_OPPOSITION
        elif p == Phase.ADMIN_OPPOSITION:
            self.set_opposition(a)
        elif p == Phase.ADMIN_AIM:
            self.sides[0].aim = a
            self.narrate(
                "aim", f"The Admin's aim: {self.action_label(a)} ({self.chars[self.sides[1].eid].name}).", self.actor
            )
            self.phase = Phase.TARGET_AIM
            self.actor = self.sides[1].seat
        elif p == Phase.TARGET_AIM:
            self.sides[1].aim = a
            self.narrate("aim", f"{self.chars[self.sides[1].eid].name}'s aim: {self.action_label(a)}.", self.actor)
            self._begin_burns()
        elif p == Phase.DEAL_FACTION:
            self.deal_with(a - Act.TARGET_0 - FACTION_BASE)
        elif p == Phase.DEAL_AGAINST:
            self.close_deal(a - Act.TARGET_0)
        elif p == Phase.BURN_BEFORE:
            if a == Act.BURN:
                self.burn_before(self.sides[self.side_i])
            else:
                self._next_burn_before()
        elif p == Phase.BURN_AFTER:
            if a == Act.BURN:
                self.burn_after(self.sides[self.side_i])
            else:
                self._next_burn_after()
        elif p == Phase.LOSER_TRADE:
            if a == Act.TRADE:
                self.loser_trade()
            else:
                self._award_goals()
        elif p == Phase.BUY_OUTCOME:
            s = self.sides[self.side_i]
            if a == Act.PASS:
                self.left = 0
            else:
                if Act.HARM_G <= a <= Act.PUSH_INFLUENCE and a != Act.INFLUENCE_UP:
                    opp = self._opponent_side(self.side_i)
                    assert opp is not None
                    self.apply_opp_op(self.entity(opp.eid), a)
                else:
                    self.apply_self_op(self.entity(s.eid), a, s.flags)
                self.left -= 1
            self._next_outcome()
        elif p == Phase.LOSER_MARK:
            if a == Act.PASS:
                self._after_loser_mark(self.side_i)
            else:
                c = self.chars[self.sides[self.side_i].eid]
                c.plus -= 1
                self.narrate("burn", f"{c.name} burns a +C to mark its goal.", self.actor)
                self.mark_goal(c, a - Act.MARK_G)
                if not (c.alive and c.plus > 0 and self._compute_legal() != [Act.PASS]):
                    self._after_loser_mark(self.side_i)
        elif p == Phase.LOWER_INFLUENCE:
            if a == Act.PASS:
                self.left = 0
            else:
                self.change_influence(self.factions[a - Act.TARGET_0 - FACTION_BASE], -1)
                self.left -= 1
            if self.left > 0 and any(f.alive for f in self.factions):
                return
            self._check_done()

    def _after_loser_mark(self, i: int) -> None:
        # only one side can have lost in a two-sided confrontation
        self._end_scene()

    # ------------------------------------------------------------------------------------------
    # the end: returns (Rule 13 and the scenario's reward)
    # ------------------------------------------------------------------------------------------
    def _personal_of(self, seat: int) -> int:
        for c in self.chars:
            if c.alive and c.personal and c.owner == seat:
                return c.idx
        return -1

    def seat_return(self, seat: int) -> float:
        """The scenario's reward: +goal per personal goal achieved, written_off per personal write-off
        (clipped to [-1, 1] x the larger weight), plus faction_weight x mean (Influence - start) / 4."""
        rw = self.cfg.reward
        char = 0.0
        for c in self.chars:
            if c.personal and c.owner == seat and not c.alive:
                char += rw.goal if c.achieved else rw.written_off
        bound = max(rw.goal, -rw.written_off)
        char = max(-bound, min(bound, char))
        mine = [f for f in self.factions if f.owner == seat]
        fac = 0.0
        if mine:
            start = self.cfg.faction.start_influence
            fac = sum(max(-1.0, min(1.0, (f.influence - start) / 4)) for f in mine) / len(mine)
        return char + rw.faction_weight * fac

    def _finish(self, reason: EndReason, detail: str) -> None:
        rets = [self.seat_return(s) for s in range(self.num_players)]
        best = max(rets)
        winner = rets.index(best) if best > 0 and rets.count(best) == 1 else None
        self.phase = Phase.OVER
        self.finish(winner, reason, rets, detail)

    # ------------------------------------------------------------------------------------------
    # analysis hooks
    # ------------------------------------------------------------------------------------------
    def leader(self) -> int:
        """The seat whose personal character is closest to its goal (most boxes, then most stats)."""
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
        if p == Phase.ASSIGN:
            return "optimal_assignment" if self._assignment_is_optimal(a - Act.ASSIGN_0) else "suboptimal_assignment"
        if p == Phase.BUILD:
            return "build"
        if a == Act.PASS:
            return "pass"
        if p == Phase.SPEND or p == Phase.BUY_OUTCOME:
            if Act.STAT_UP_G <= a < Act.GAIN_PLUS_C:
                return "spend_stat" if p == Phase.SPEND else "outcome_stat"
            if a == Act.GAIN_PLUS_C:
                return "spend_plus_c" if p == Phase.SPEND else "outcome_plus_c"
            if a == Act.REMOVE_MINUS_C:
                return "spend_remove_minus_c" if p == Phase.SPEND else "outcome_remove_minus_c"
            if Act.MARK_G <= a <= Act.MARK_G + 2:
                return "outcome_goal"
            if Act.HARM_G <= a < Act.ADD_MINUS_C:
                return "outcome_harm_stat"
            if a in (Act.ADD_MINUS_C, Act.REMOVE_PLUS_C):
                return "outcome_harm_condition"
            if Act.UNMARK_G <= a <= Act.UNMARK_G + 2:
                return "outcome_unmark"
            if a == Act.KILL:
                return "outcome_kill"
            return "outcome_influence"
        if p == Phase.ADMIN_SCENE:
            if a in (Act.SCENE_INTRO_CHARACTER, Act.SCENE_INTRO_FACTION):
                return "introduce"
            return "deal" if a == Act.SCENE_DEAL else "confront"
        if p == Phase.ADMIN_TARGET:
            return "target_leader" if self.chars[a - Act.TARGET_0].owner == self.leader() else "target_other"
        if p == Phase.ADMIN_OPPOSITION:
            if a == Act.NO_OPPOSITION:
                return "no_opposition"
            e = self.entity(a - Act.TARGET_0)
            if not e.is_char:
                return "oppose_faction"
            return "oppose_own_character" if e.personal else "oppose_common"  # type: ignore[union-attr]
        if p == Phase.ADMIN_AIM or p == Phase.TARGET_AIM:
            if a == Act.ADD_MINUS_C:
                return "aim_minus_c"
            if a == Act.GAIN_PLUS_C:
                return "aim_plus_c"
            return "aim_goal"
        if p == Phase.BURN_BEFORE:
            return "burn_before"
        if p == Phase.BURN_AFTER:
            return "burn_after"
        if p == Phase.LOSER_TRADE:
            return "trade"
        if p == Phase.LOSER_MARK:
            return "loser_mark"
        if p == Phase.LOWER_INFLUENCE:
            return "lower_influence"
        if p == Phase.DEAL_FACTION:
            return (
                "deal_own_faction"
                if self.factions[a - Act.TARGET_0 - FACTION_BASE].owner == self.actor
                else "deal_other_faction"
            )
        if p == Phase.DEAL_AGAINST:
            return "deal_against"
        return None

    def current_roll(self) -> tuple[tuple[int, ...], tuple[int, int, int]] | None:
        """The dice to assign and the roller's stats, at an assign decision."""
        if self.phase != Phase.ASSIGN:
            return None
        if self.purpose == Purpose.CONFRONT:
            s = self.sides[self.side_i]
            return s.dice, tuple(self.chars[s.eid].stats)  # type: ignore[return-value]
        return self.dice, tuple(self.chars[self.chk_eid].stats)  # type: ignore[return-value]

    def _assignment_is_optimal(self, perm: int) -> bool:
        roll = self.current_roll()
        assert roll is not None
        dice, stats = roll
        best = max(sum(success_flags(dice, p, stats)) for p in PERMUTATIONS)
        return sum(success_flags(dice, PERMUTATIONS[perm], stats)) == best

    def resources(self, seat: int) -> dict[str, float]:
        ci = self._personal_of(seat)
        c = self.chars[ci] if ci >= 0 else None
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
        if Act.VALUE_1 <= a < Act.ASSIGN_0:
            return f"value {a - Act.VALUE_1 + 1}"
        if Act.ASSIGN_0 <= a < Act.STAT_UP_G:
            p = PERMUTATIONS[a - Act.ASSIGN_0]
            roll = self.current_roll()
            if roll is not None:
                return "assign " + " ".join(f"{STATS[i]}={roll[0][p[i]]}" for i in range(3))
            return f"assign dice {p}"
        if Act.TARGET_0 <= a < NUM_ACTIONS:
            e = a - Act.TARGET_0
            if e < FACTION_BASE:
                return CHARACTER_NAMES[e]
            return FACTION_NAMES[e - FACTION_BASE] if e - FACTION_BASE < len(FACTION_NAMES) else f"faction {e}"
        labels = {
            Act.GAIN_PLUS_C: "gain +C",
            Act.REMOVE_MINUS_C: "remove -C",
            Act.ADD_MINUS_C: "give -C",
            Act.REMOVE_PLUS_C: "strip +C",
            Act.KILL: "kill",
            Act.INFLUENCE_UP: "Influence +1",
            Act.INFLUENCE_DOWN: "their Influence -1",
            Act.PUSH_INFLUENCE: "their Influence +1",
            Act.PASS: "pass",
            Act.BURN: "burn +C",
            Act.TRADE: "remove winner's -C (degree -1)",
            Act.SCENE_INTRO_CHARACTER: "introduce a character",
            Act.SCENE_INTRO_FACTION: "introduce a faction",
            Act.SCENE_DEAL: "deal",
            Act.SCENE_CONFRONT: "confrontation",
            Act.NO_OPPOSITION: "no opposition",
        }
        if a in labels:
            return labels[a]  # type: ignore[index]
        for base, text in (
            (Act.STAT_UP_G, "+1 {}"),
            (Act.STAT_UP2_G, "+2 {}"),
            (Act.MARK_G, "mark {}"),
            (Act.HARM_G, "their {} -1"),
            (Act.HARM2_G, "their {} -2"),
            (Act.UNMARK_G, "unmark their {}"),
        ):
            if base <= a <= base + 2:
                return text.format(STATS[a - base])
        return f"action {a}"

    # ------------------------------------------------------------------------------------------
    # observation, key, clone
    # ------------------------------------------------------------------------------------------
    def observation(self, seat: int) -> np.ndarray:
        n = self.num_players
        cap = self.cfg.character.max_conditions
        high = self.cfg.faction.writeoff_high
        obs = [0.0] * OBS_SIZE
        p = self.phase
        if p < NUM_CONTEXTS:
            obs[p] = 1.0
            obs[16] = 1.0 if self.actor == seat else 0.0
        obs[17 + (self.admin - seat) % n] = 1.0
        obs[22] = self.scene_no / self.cfg.episode.max_scenes
        obs[23] = min(1.0, self.exits / self.cfg.episode.exits_to_end)
        roll = None
        if p == Phase.ASSIGN or p == Phase.SPEND or p == Phase.LOWER_INFLUENCE:
            roll = self.sides[self.side_i].dice if self.purpose == Purpose.CONFRONT and p == Phase.ASSIGN else self.dice
        if roll:
            obs[24], obs[25], obs[26] = roll[0] / 10, roll[1] / 10, roll[2] / 10
        obs[27] = min(1.0, self.succ / 6)
        obs[28] = min(1.0, self.left / 6)
        obs[29] = min(1.0, self.degree / 6)
        if self.sides and len(self.sides) == 2 and self.sides[0].eid >= 0:
            for k, s in enumerate(self.sides):
                base = 30 + 6 * k
                obs[base] = 1.0 if s.seat == seat else 0.0
                if s.dice:
                    obs[base + 1], obs[base + 2], obs[base + 3] = s.dice[0] / 10, s.dice[1] / 10, s.dice[2] / 10
                obs[base + 4] = min(1.0, s.burned / 6)
                obs[base + 5] = min(1.0, s.succ / 6)
                if s.won or s.lost or (p == Phase.ASSIGN and k < self.side_i):
                    f0, f1, f2 = s.flags
                    obs[42 + 3 * k] = 1.0 if f0 else 0.0
                    obs[43 + 3 * k] = 1.0 if f1 else 0.0
                    obs[44 + 3 * k] = 1.0 if f2 else 0.0
            obs[48] = 1.0 if self.side_i == 1 else 0.0
        elif p == Phase.SPEND or p == Phase.BUY_OUTCOME or p == Phase.LOWER_INFLUENCE:
            f0, f1, f2 = self.flags
            obs[42], obs[43], obs[44] = (1.0 if f0 else 0.0), (1.0 if f1 else 0.0), (1.0 if f2 else 0.0)
        obs[49] = self.build_step / 2 if p == Phase.BUILD else 0.0
        obs[50] = 1.0 if self.purpose == Purpose.GOAL else 0.0
        obs[51] = 1.0 if self.purpose == Purpose.BEAUTY else 0.0
        base = GLOBAL_SIZE
        target = self.sides[-1].eid if self.sides else -1
        opp = self.sides[0].eid if len(self.sides) == 2 else -1
        for c in self.chars:
            o = base + c.idx * CHAR_FEATURES
            st, g = c.stats, c.goals
            obs[o : o + CHAR_FEATURES] = (
                1.0,
                1.0 if c.alive else 0.0,
                1.0 if c.personal and c.owner == seat else 0.0,
                0.0 if c.personal else 1.0,
                ((c.owner - seat) % n) / (MAX_SEATS - 1) if c.personal else 0.0,
                st[0] / 10,
                st[1] / 10,
                st[2] / 10,
                c.plus / cap,
                c.minus / cap,
                1.0 if c.wounded else 0.0,
                1.0 if c.dying else 0.0,
                1.0 if g[0] else 0.0,
                1.0 if g[1] else 0.0,
                1.0 if g[2] else 0.0,
                1.0 if c.advantage else 0.0,
                1.0 if c.idx == target else 0.0,
                1.0 if c.idx == opp else 0.0,
            )
        base += MAX_CHARACTER_SLOTS * CHAR_FEATURES
        for f in self.factions:
            o = base + f.idx * FACTION_FEATURES
            obs[o : o + FACTION_FEATURES] = (
                1.0,
                1.0 if f.alive else 0.0,
                1.0 if f.owner == seat else 0.0,
                ((f.owner - seat) % n) / (MAX_SEATS - 1),
                max(0.0, min(1.0, f.influence / high)),
                f.plus / cap,
                f.minus / cap,
                1.0 if f.advantage else 0.0,
                1.0 if FACTION_BASE + f.idx == opp else 0.0,
            )
        return np.array(obs, dtype=np.float32)

    def key(self) -> Hashable:
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
        new = CrossroadsState.__new__(CrossroadsState)
        new.__dict__.update(self.__dict__)
        new.log = list(self.log)
        new.chars = [c.copy() for c in self.chars]
        new.factions = [f.copy() for f in self.factions]
        new.sides = [s.copy() for s in self.sides]
        new.setup_queue = list(self.setup_queue)
        new.goal_pending = list(self.goal_pending)
        return new


GLOBAL_SIZE = 52
CHAR_FEATURES = 18
FACTION_FEATURES = 9
OBS_SIZE = GLOBAL_SIZE + MAX_CHARACTER_SLOTS * CHAR_FEATURES + MAX_FACTION_SLOTS * FACTION_FEATURES
